"""Scenarios where a buffer or window holds the sender back: the receiver's window, a slow
receiving application, the sender's own buffer.
"""

from __future__ import annotations

from lab.scenario import HEADERS, KB, MB, Scenario


def receiver_window() -> list[Scenario]:
    f, s = "receiver_window", "receiver window too small"
    return [
        Scenario(
            "rwnd_rcvbuf32k_get_30ms",
            s,
            f,
            "HTTP GET of 3 MB; the client set SO_RCVBUF=32768 before connecting (autotuning off)",
            30,
            {"action": "get", "size": 3 * MB, "client_rcvbuf": 32768},
            "server",
            capture_at="client",
            snaplen=HEADERS,
            ci=True,
        ),
        Scenario(
            "rwnd_listen_rcvbuf16k_post_80ms_v6",
            s,
            f,
            "HTTP POST upload of 500 KB over IPv6; the server set SO_RCVBUF=16384 on its "
            "listening socket",
            80,
            {"action": "post", "size": 500 * KB, "server_rcvbuf": 16384},
            "client",
            family=6,
            capture_at="client",
        ),
        Scenario(
            "rwnd_rcvbuf16k_get_5ms",
            s,
            f,
            "HTTP GET of 6 MB; the client set SO_RCVBUF=16384 before connecting",
            5,
            {"action": "get", "size": 6 * MB, "client_rcvbuf": 16384},
            "server",
            capture_at="server",
            snaplen=HEADERS,
        ),
        Scenario(
            "rwnd_rcvbuf128k_get_200ms_v6",
            s,
            f,
            "HTTP GET of 2 MB over IPv6; the client set SO_RCVBUF=131072 before connecting "
            "on a 200 ms path",
            200,
            {"action": "get", "size": 2 * MB, "client_rcvbuf": 131072},
            "server",
            family=6,
            capture_at="server",
            snaplen=HEADERS,
        ),
    ]


def receiver_app() -> list[Scenario]:
    f, s = "receiver_app", "receiving application too slow"
    return [
        Scenario(
            "slow_reader_get_30ms",
            s,
            f,
            "HTTP GET of 400 KB; the client set SO_RCVBUF=16384 and reads 4 KB every 30 ms",
            30,
            {
                "action": "get",
                "size": 400 * KB,
                "client_rcvbuf": 16384,
                "client_read_chunk": 4 * KB,
                "client_read_interval_ms": 30,
            },
            "server",
            capture_at="client",
            snaplen=HEADERS,
            ci=True,
        ),
        Scenario(
            "slow_reader_get_10ms_v6",
            s,
            f,
            "HTTP GET of 600 KB over IPv6; the client set SO_RCVBUF=32768 and reads 16 KB "
            "every 40 ms",
            10,
            {
                "action": "get",
                "size": 600 * KB,
                "client_rcvbuf": 32768,
                "client_read_chunk": 16 * KB,
                "client_read_interval_ms": 40,
            },
            "server",
            family=6,
            capture_at="server",
            snaplen=HEADERS,
        ),
        Scenario(
            "slow_server_reader_post_60ms",
            s,
            f,
            "HTTP POST upload of 300 KB; the server (SO_RCVBUF=16384 on its listening "
            "socket) reads 4 KB every 40 ms",
            60,
            {
                "action": "post",
                "size": 300 * KB,
                "server_rcvbuf": 16384,
                "server_read_chunk": 4 * KB,
                "server_read_interval_ms": 40,
            },
            "client",
            capture_at="client",
        ),
        Scenario(
            "slow_reader_default_buffers_get_20ms",
            s,
            f,
            "HTTP GET of 600 KB with default (autotuned) buffers; the client reads 4 KB "
            "every 25 ms",
            20,
            {
                "action": "get",
                "size": 600 * KB,
                "client_read_chunk": 4 * KB,
                "client_read_interval_ms": 25,
            },
            "server",
            capture_at="server",
            snaplen=HEADERS,
        ),
    ]


def sender_buffer() -> list[Scenario]:
    # Sockets are non-blocking, as in event-loop servers and most clients: on the lab's kernel
    # (6.18) a *blocking* write() into a socket with a small SO_SNDBUF was measured to put the whole
    # write in flight regardless of the buffer, so blocking Python sockets would not show the limit.
    f, s = "sender_buffer", "sender buffer too small"
    return [
        Scenario(
            "sndbuf8k_post_80ms",
            s,
            f,
            "HTTP POST upload of 300 KB; the client set SO_SNDBUF=8192 and writes 8 KB per call",
            80,
            {
                "action": "post",
                "size": 300 * KB,
                "client_sndbuf": 8192,
                "client_write_size": 8 * KB,
            },
            "client",
            capture_at="client",
            ci=True,
        ),
        Scenario(
            "server_sndbuf16k_get_20ms_v6",
            s,
            f,
            "HTTP GET of 1 MB over IPv6; the server set SO_SNDBUF=16384 on its listening "
            "socket and writes 8 KB per call",
            20,
            {"action": "get", "size": 1 * MB, "server_sndbuf": 16384, "server_write_size": 8 * KB},
            "server",
            family=6,
            capture_at="client",
            snaplen=HEADERS,
        ),
        Scenario(
            "server_conn_sndbuf16k_get_40ms",
            s,
            f,
            "HTTP GET of 2 MB; the server set SO_SNDBUF=16384 on each accepted connection "
            "and writes 64 KB per call",
            40,
            {
                "action": "get",
                "size": 2 * MB,
                "server_conn_sndbuf": 16384,
                "server_write_size": 64 * KB,
            },
            "server",
            capture_at="server",
            snaplen=HEADERS,
        ),
        Scenario(
            "sndbuf16k_post_200ms_v6",
            s,
            f,
            "HTTP POST upload of 200 KB over IPv6 on a 200 ms path; the client set "
            "SO_SNDBUF=16384 and writes 8 KB per call",
            200,
            {
                "action": "post",
                "size": 200 * KB,
                "client_sndbuf": 16384,
                "client_write_size": 8 * KB,
            },
            "client",
            family=6,
            capture_at="server",
        ),
    ]
