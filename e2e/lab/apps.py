"""The applications of the lab: real sockets, real kernel TCP, run inside the lab's namespaces.

``python -m lab.apps server|client|dns SPEC_JSON`` (the runner starts them with ``ip netns exec``).
The server speaks a minimal HTTP/1.1 (GET /<bytes>, POST with Content-Length, keep-alive or
``Connection: close``) or the stop-and-wait message protocol; the client does what the scenario's
application does (buffer sizes set before connect/listen, slow reads, two small writes with Nagle on,
a DNS lookup first, one connection per request or one pooled connection).

Each finished connection prints one JSON line with that end's TCP_INFO, read when the connection's
data has all been acknowledged (the server after the client's FIN, the client after the response):
the runner keeps the sending end's as the kernel's ground truth. The server prints ``ready`` once
listening.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from lab import tcp_info

HEADER_END = b"\r\n\r\n"
MAX_HEADER = 16384


_EMIT = threading.Lock()  # connections served in parallel print whole lines


def emit(obj: Any) -> None:
    with _EMIT:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def family_of(spec: dict[str, Any]) -> socket.AddressFamily:
    return socket.AF_INET6 if spec["family"] == 6 else socket.AF_INET


def tcp_socket(spec: dict[str, Any]) -> socket.socket:
    sock = socket.socket(family_of(spec), socket.SOCK_STREAM)
    # Per socket, because a non-initial namespace may not change its default (cubic is not in the
    # host's tcp_allowed_congestion_control); CAP_NET_ADMIN lets a socket pick any loaded one.
    sock.setsockopt(socket.IPPROTO_TCP, tcp_info.TCP_CONGESTION, spec["cc"].encode())
    return sock


class Stream:
    """Buffered reads on a connected socket, optionally as a slow reader (chunk, then sleep)."""

    def __init__(self, sock: socket.socket, chunk: int = 262144, interval_s: float = 0.0) -> None:
        self.sock, self.chunk, self.interval_s = sock, chunk, interval_s
        self.buf = b""

    def _fill(self) -> bool:
        data = self.sock.recv(self.chunk)
        if self.interval_s:
            time.sleep(self.interval_s)
        if not data:
            return False
        self.buf += data
        return True

    def read_until(self, marker: bytes) -> bytes | None:
        while marker not in self.buf:
            if len(self.buf) > MAX_HEADER or not self._fill():
                return None
        head, _, self.buf = self.buf.partition(marker)
        return head

    def read_exact(self, n: int) -> bytes:
        """Consume n bytes (returned only up to 64 KB: bodies are counted, not kept)."""
        kept, need = b"", n
        while need:
            if not self.buf and not self._fill():
                raise ConnectionError(f"peer closed with {need} of {n} bytes unread")
            take = self.buf[:need]
            self.buf = self.buf[len(take) :]
            need -= len(take)
            if len(kept) < 65536:
                kept += take[: 65536 - len(kept)]
        return kept


def headers_of(head: bytes) -> tuple[str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return lines[0], fields


def send_body(sock: socket.socket, size: int, write_size: int, head: bytes = b"") -> None:
    """Write ``head`` and ``size`` body bytes in ``write_size`` calls, the head in the first call
    (as servers and clients writev() headers with the start of the body)."""
    block = b"x" * write_size
    left = size
    while True:
        n = min(left, write_size)
        sock.sendall(head + block[:n])
        head, left = b"", left - n
        if not left:
            return


# ---------------------------------------------------------------------------------------- server


def serve(spec: dict[str, Any]) -> None:
    listener = tcp_socket(spec)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Set on the listening socket before listen(): accepted sockets inherit them, and a fixed
    # SO_RCVBUF also fixes the window scale offered in the SYN-ACK (as nginx's "listen rcvbuf=").
    if spec.get("server_rcvbuf"):
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, spec["server_rcvbuf"])
    if spec.get("server_sndbuf"):
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, spec["server_sndbuf"])
    listener.bind((spec["server_addr"], spec["port"]))
    listener.listen(16)
    emit("ready")
    while True:
        conn, _ = listener.accept()
        if spec.get("parallel"):  # several clients at once: each connection in its own thread
            threading.Thread(target=serve_one, args=(conn, spec), daemon=True).start()
        else:
            serve_one(conn, spec)


def serve_one(conn: socket.socket, spec: dict[str, Any]) -> None:
    if spec.get("server_conn_sndbuf"):
        # Per connection, after accept(): what a server does that sizes buffers per client.
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, spec["server_conn_sndbuf"])
    # Non-blocking with a timeout, as the client's (and as event-loop servers run them).
    conn.settimeout(spec.get("timeout_s", 60))
    with conn:
        peer_port = conn.getpeername()[1]
        record = (
            serve_stop_and_wait(conn, spec) if spec["action"] == "saw" else serve_http(conn, spec)
        )
        emit({**record, "peer_port": peer_port})


def serve_http(conn: socket.socket, spec: dict[str, Any]) -> dict[str, Any]:
    stream = Stream(
        conn, spec.get("server_read_chunk", 262144), spec.get("server_read_interval_ms", 0) / 1000
    )
    sent = received = requests = 0
    while True:
        head = stream.read_until(HEADER_END)
        if head is None:
            break
        request_line, fields = headers_of(head)
        method, path = request_line.split(" ")[:2]
        if method == "GET":
            size = int(path.rsplit("/", 1)[-1])
            head = f"HTTP/1.1 200 OK\r\nContent-Length: {size}\r\n\r\n".encode()
            send_body(conn, size, spec.get("server_write_size", 65536), head)
            sent += size
        else:
            size = int(fields.get("content-length", "0"))
            stream.read_exact(size)
            received += size
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        requests += 1
        if fields.get("connection", "").lower() == "close":
            conn.shutdown(socket.SHUT_WR)
            while stream._fill():  # until the client's FIN: everything sent is acknowledged
                pass
            break
    return {
        "end": "server",
        "requests": requests,
        "bytes_sent": sent,
        "bytes_received": received,
        "tcp_info": tcp_info.read(conn),
    }


def serve_stop_and_wait(conn: socket.socket, spec: dict[str, Any]) -> dict[str, Any]:
    """Custom protocol: 4-byte length + message; answered by a 4-byte application ack."""
    stream = Stream(conn)
    messages = received = 0
    while True:
        head = stream.buf[:4] if len(stream.buf) >= 4 else None
        while head is None:
            if not stream._fill():
                break
            head = stream.buf[:4] if len(stream.buf) >= 4 else None
        if head is None:
            break
        stream.buf = stream.buf[4:]
        (size,) = struct.unpack("!I", head)
        stream.read_exact(size)
        received += size
        messages += 1
        conn.sendall(b"ACK!")
    return {
        "end": "server",
        "requests": messages,
        "bytes_sent": 4 * messages,
        "bytes_received": received,
        "tcp_info": tcp_info.read(conn),
    }


# ---------------------------------------------------------------------------------------- client


def client(spec: dict[str, Any]) -> None:
    started = time.monotonic()
    dns = lookup(spec) if spec.get("dns") else None
    address = dns["address"] if dns else spec["server_addr"]
    connections = []
    if spec.get("parallel"):
        # Several connections at once, each with its own settings over the spec's (e.g. one
        # with a small SO_RCVBUF beside bulk downloads that share the path).
        specs = [{**spec, **own} for own in spec["parallel"]]
        with ThreadPoolExecutor(len(specs)) as pool:
            connections = list(pool.map(lambda s: one_connection(s, address), specs))
    else:
        for _ in range(spec.get("connections", 1)):
            connections.append(one_connection(spec, address))
    emit(
        {
            "end": "client",
            "elapsed_s": time.monotonic() - started,
            "dns": dns,
            "connections": connections,
        }
    )


def one_connection(spec: dict[str, Any], address: str) -> dict[str, Any]:
    sock = tcp_socket(spec)
    # Before connect(): the SYN then carries the window scale the fixed buffer allows, and the
    # kernel turns receive-buffer autotuning off for this socket (SOCK_RCVBUF_LOCK).
    if spec.get("client_rcvbuf"):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, spec["client_rcvbuf"])
    if spec.get("client_sndbuf"):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, spec["client_sndbuf"])
    if spec.get("nodelay"):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(spec.get("timeout_s", 60))
    t0 = time.monotonic()
    with sock:
        sock.connect((address, spec["port"]))
        connect_s = time.monotonic() - t0
        port = sock.getsockname()[1]
        stream = Stream(
            sock,
            spec.get("client_read_chunk", 262144),
            spec.get("client_read_interval_ms", 0) / 1000,
        )
        durations = []
        for _ in range(spec.get("requests", 1)):
            t = time.monotonic()
            exchange(sock, stream, spec)
            durations.append(time.monotonic() - t)
        info = tcp_info.read(sock)
    return {"connect_s": connect_s, "request_s": durations, "tcp_info": info, "port": port}


def exchange(sock: socket.socket, stream: Stream, spec: dict[str, Any]) -> None:
    action, size = spec["action"], spec["size"]
    close = "close" if spec.get("close") else "keep-alive"
    host = f"Host: {spec['server_addr']}\r\nConnection: {close}\r\n"
    if action == "saw":
        for _ in range(spec["messages"]):
            send_body(sock, size, spec.get("client_write_size", size), struct.pack("!I", size))
            if stream.read_exact(4) != b"ACK!":
                raise ConnectionError("bad application ack")
        return
    if action == "get":
        sock.sendall(f"GET /{size} HTTP/1.1\r\n{host}\r\n".encode())
    elif action == "post":
        head = f"POST /upload HTTP/1.1\r\n{host}Content-Length: {size}\r\n\r\n".encode()
        send_body(sock, size, spec.get("client_write_size", 65536), head)
    elif action == "post_two_writes":
        # The header and the small body in two write() calls with Nagle on: the body waits for
        # the ACK of the header, which the server delays (RFC 1122 4.2.3.2, RFC 896).
        sock.sendall(
            f"POST /api HTTP/1.1\r\n{host}Content-Type: application/json\r\n"
            f"Content-Length: {size}\r\n\r\n".encode()
        )
        sock.sendall(b"{" + b"x" * (size - 2) + b"}")
    head = stream.read_until(HEADER_END)
    if head is None:
        raise ConnectionError("no response")
    _, fields = headers_of(head)
    stream.read_exact(int(fields.get("content-length", "0")))


# ------------------------------------------------------------------------------------------- DNS


def dns_name(name: str) -> bytes:
    return b"".join(bytes([len(p)]) + p.encode() for p in name.split(".") if p) + b"\0"


def reverse_name(address: str) -> str:
    if ":" in address:
        nibbles = socket.inet_pton(socket.AF_INET6, address).hex()
        return ".".join(reversed(nibbles)) + ".ip6.arpa"
    return ".".join(reversed(address.split("."))) + ".in-addr.arpa"


QTYPE = {"A": 1, "PTR": 12, "AAAA": 28}


def lookup(spec: dict[str, Any]) -> dict[str, Any]:
    """What a client library does with an IP literal it was given: a reverse (PTR) lookup, then a
    forward lookup of the name, and only then the connection (RFC 1035 messages over UDP)."""
    dns = spec["dns"]
    fam = socket.AF_INET6 if ":" in dns["server"] else socket.AF_INET
    queries = [
        ("PTR", reverse_name(spec["server_addr"])),
        ("AAAA" if spec["family"] == 6 else "A", dns["name"]),
    ]
    timings, address = [], spec["server_addr"]
    with socket.socket(fam, socket.SOCK_DGRAM) as udp:
        udp.settimeout(10)
        for i, (qtype, name) in enumerate(queries):
            query = struct.pack("!HHHHHH", 0x4C00 + i, 0x0100, 1, 0, 0, 0)
            query += dns_name(name) + struct.pack("!HH", QTYPE[qtype], 1)
            t = time.monotonic()
            udp.sendto(query, (dns["server"], 53))
            answer = udp.recv(4096)
            timings.append({"type": qtype, "name": name, "wait_s": time.monotonic() - t})
            if qtype != "PTR":
                rdata = answer[len(query) + 12 :]
                address = socket.inet_ntop(fam_of_qtype(qtype), rdata)
    return {"queries": timings, "address": address, "wait_s": sum(q["wait_s"] for q in timings)}


def fam_of_qtype(qtype: str) -> socket.AddressFamily:
    return socket.AF_INET6 if qtype == "AAAA" else socket.AF_INET


def dns_server(spec: dict[str, Any]) -> None:
    """Answers every query after ``delay_ms``: PTR -> the server's name, A/AAAA -> its address."""
    socks = []
    for addr in spec["listen"]:
        s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((addr, 53))
        socks.append(s)
    emit("ready")
    import select

    while True:
        readable, _, _ = select.select(socks, [], [])
        for s in readable:
            query, peer = s.recvfrom(4096)
            time.sleep(spec["delay_ms"] / 1000)
            emit({"dns_query_from": peer[0], "bytes": len(query)})
            s.sendto(dns_answer(query, spec), peer)


def dns_answer(query: bytes, spec: dict[str, Any]) -> bytes:
    qid, qtype = query[:2], struct.unpack("!H", query[-4:-2])[0]
    if qtype == QTYPE["PTR"]:
        rdata = dns_name(spec["name"])
    elif qtype == QTYPE["AAAA"]:
        rdata = socket.inet_pton(socket.AF_INET6, spec["address_v6"])
    else:
        rdata = socket.inet_pton(socket.AF_INET, spec["address_v4"])
    header = qid + struct.pack("!HHHHH", 0x8180, 1, 1, 0, 0)
    answer = b"\xc0\x0c" + struct.pack("!HHIH", qtype, 1, 300, len(rdata)) + rdata
    return header + query[12:] + answer


def main() -> None:
    role, spec = sys.argv[1], json.loads(sys.argv[2])
    {"server": serve, "client": client, "dns": dns_server}[role](spec)


if __name__ == "__main__":
    main()
