"""Actors for the service's API tests: users with sessions and tokens in their own workspaces."""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass
from pathlib import Path

from fastapi.testclient import TestClient

PASSWORD = "correct horse battery staple"


def tiny_pcap(payload: bytes = b"") -> bytes:
    """A valid little-endian pcap with one Ethernet/IPv4/TCP packet (the bytes differ per payload,
    so each call with a new payload is a new capture)."""
    ip_len = 20 + 20 + len(payload)
    eth = b"\x00\x11\x22\x33\x44\x55" + b"\x66\x77\x88\x99\xaa\xbb" + b"\x08\x00"
    ip = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, ip_len, 1, 0, 64, 6, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
    )
    tcp = struct.pack("!HHIIBBHHH", 40000, 80, 1, 0, 0x50, 0x02, 65535, 0, 0)
    frame = eth + ip + tcp + payload
    header = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    record = struct.pack("<IIII", 1_700_000_000, 0, len(frame), len(frame))
    return header + record + frame


def repeated_capture(source: Path, times: int, tag: bytes) -> bytes:
    """The packets of a pcap ``times`` over, each copy an hour later (a bigger capture whose
    analysis takes long enough to be interrupted), plus a tag making the bytes unique."""
    data = source.read_bytes()
    header, body = data[:24], data[24:]
    records = []
    pos = 0
    while pos + 16 <= len(body):
        incl = struct.unpack_from("<I", body, pos + 8)[0]
        records.append(body[pos : pos + 16 + incl])
        pos += 16 + incl
    out = [header]
    for copy in range(times):
        for record in records:
            seconds = struct.unpack_from("<I", record, 0)[0] + 3600 * copy
            out.append(struct.pack("<I", seconds) + record[4:])
    out.append(struct.pack("<IIII", 2_000_000_000, 0, len(tag), len(tag)) + tag)
    return b"".join(out)


@dataclass
class Actor:
    email: str
    user_id: uuid.UUID
    workspace_id: uuid.UUID
    csrf: str
    client: TestClient  # carries this actor's session cookie

    def headers(self) -> dict[str, str]:
        return {"X-CSRF-Token": self.csrf}


def sign_up(client: TestClient, email: str | None = None) -> Actor:
    email = email or f"user-{uuid.uuid4().hex[:10]}@example.com"
    credentials = {"email": email, "password": PASSWORD}
    created = client.post("/api/v1/auth/signup", json=credentials)
    assert created.status_code == 202, created.text
    # Sign-up starts no session (its answer is the same for a taken address): sign in.
    response = client.post("/api/v1/auth/login", json=credentials)
    assert response.status_code == 200, response.text
    body = response.json()
    return Actor(
        email=email,
        user_id=uuid.UUID(body["user"]["id"]),
        workspace_id=uuid.UUID(body["workspaces"][0]["id"]),
        csrf=body["csrf_token"],
        client=client,
    )
