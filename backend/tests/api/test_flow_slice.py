"""A flow's packets as a capture file of their own (issue 28 part 5): what the browser's Wireshark
opens for one flow instead of the whole capture.

Checked against tshark, not against tcplens: the slice's frames are tshark's frames of the
flow's TCP stream (the shared oracle), and tshark reads the slice with every frame equal to the
original's (time, lengths, addresses, sequence numbers) — for a pcap, a pcapng and a gzip'd pcap.
The slice follows the capture file's rule: members and read tokens get it, a token without
``captures:read`` does not, and a share link only when it serves the file.
"""

from __future__ import annotations

import gzip
import json
import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tcplens.main import create_app
from tcplens.settings import Settings
from tests.api.service_fixtures import Actor, sign_up
from tests.capture.shared_captures import SHARED_CAPTURES, TSHARK_FIELDS, Tshark, require

BASE_URL = "https://testserver"
PROBLEM_JSON = "application/problem+json"
REAL_WORLD = SHARED_CAPTURES / "corpus" / "real-world"
ORACLE = SHARED_CAPTURES / "oracle" / "real-world"
ANALYSIS_WAIT_S = 600.0  # the first analysis after a change compiles the kernels
CAPTURES = (
    "chrissanders_http_espn.pcapng",
    "zeek_smb_smb_many_open_files_500.pcap.gz",
    "pcapplusplus_650HttpResponses.pcap",
)


@dataclass
class Uploaded:
    path: Path
    capture_id: str


@dataclass
class World:
    owner: Actor
    client: TestClient
    captures: dict[str, Uploaded]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, engine: Engine) -> Iterator[World]:
    for name in CAPTURES:
        require(REAL_WORLD / name)
    data = tmp_path_factory.mktemp("slice")
    settings = Settings(
        data_dir=data / "data",
        spa_dir=data / "spa",
        in_process_worker=True,  # the real worker analyses the uploads
        uploads_per_minute=1000.0,
    )
    with TestClient(create_app(settings, engine), base_url=BASE_URL) as client:
        owner = sign_up(TestClient(client.app, base_url=BASE_URL))
        uploaded = {}
        for name in CAPTURES:
            answer = owner.client.post(
                f"/api/v1/captures?filename={name}",
                content=(REAL_WORLD / name).read_bytes(),
                headers=owner.headers(),
            )
            assert answer.status_code == 202, answer.text
            uploaded[name] = Uploaded(REAL_WORLD / name, answer.json()["capture"]["id"])
        for capture in uploaded.values():
            deadline = time.monotonic() + ANALYSIS_WAIT_S
            while (
                status := owner.client.get(f"/api/v1/captures/{capture.capture_id}").json()[
                    "status"
                ]
            ) not in ("done", "failed"):
                assert time.monotonic() < deadline, f"analysis still {status}"
                time.sleep(0.2)
            assert status == "done"
        yield World(owner, client, uploaded)


def _streams(capture: Path) -> dict[str, Any]:
    streams: dict[str, Any] = json.loads((ORACLE / f"{capture.name}.streams.json").read_text())[
        "streams"
    ]
    return streams


def _stream_frames(capture: Path) -> dict[frozenset[str], list[list[int]]]:
    """tshark's frames of each TCP stream, by its two endpoints as tcplens writes them
    (``10.0.0.1:80``, ``[::1]:80``); a pair of endpoints may have carried several streams."""
    streams = _streams(capture)
    frames = json.loads((ORACLE / f"{capture.name}.wireshark.json").read_text())["tcp_frames"]
    by_stream: dict[int, list[int]] = {}
    for number, fields in frames.items():
        by_stream.setdefault(int(fields["stream"]), []).append(int(number))
    out: dict[frozenset[str], list[list[int]]] = {}
    for stream, facts in streams.items():
        ends = frozenset((_endpoint(facts["a"]), _endpoint(facts["b"])))
        out.setdefault(ends, []).append(sorted(by_stream.get(int(stream), [])))
    return out


def _endpoint(oracle: str) -> str:
    address, port = oracle.split("|")
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def _busiest_flow(world: World, capture: Uploaded) -> dict[str, Any]:
    """The capture's flow with the most packets whose endpoints carried one stream only."""
    streams = _stream_frames(capture.path)
    flows = world.owner.client.get(
        f"/api/v1/captures/{capture.capture_id}/flows?sort=bytes&order=desc&limit=50"
    ).json()["items"]
    for flow in flows:
        if len(streams.get(frozenset((flow["client"], flow["server"])), [])) == 1:
            return dict(flow)
    raise AssertionError("no flow with a single stream")


def _frame_rows(path: Path, tshark: Tshark) -> list[dict[str, str]]:
    rows = tshark.frames(path)
    return [{k: v for k, v in row.items() if k != "frame.number"} for row in rows]


def _records(data: bytes) -> list[bytes]:
    """The packets' bytes of a pcap or pcapng file, in frame order (a minimal reader)."""
    if data[:4] == b"\x0a\x0d\x0d\x0a":
        packets, pos, order = [], 0, "<"
        while pos + 12 <= len(data):
            if data[pos : pos + 4] == b"\x0a\x0d\x0d\x0a":
                order = ">" if data[pos + 8 : pos + 12] == b"\x1a\x2b\x3c\x4d" else "<"
            kind, length = struct.unpack_from(order + "II", data, pos)
            if kind == 6:  # Enhanced Packet Block: captured length at 20, data at 28
                (caplen,) = struct.unpack_from(order + "I", data, pos + 20)
                packets.append(data[pos + 28 : pos + 28 + caplen])
            pos += length
        return packets
    order = ">" if data[:4] in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d") else "<"
    packets, pos = [], 24
    while pos + 16 <= len(data):
        (caplen,) = struct.unpack_from(order + "I", data, pos + 8)
        packets.append(data[pos + 16 : pos + 16 + caplen])
        pos += 16 + caplen
    return packets


@pytest.mark.parametrize("name", CAPTURES)
def test_the_slice_holds_exactly_the_flows_frames_as_tshark_reads_them(
    world: World, name: str, tmp_path: Path
) -> None:
    capture = world.captures[name]
    flow = _busiest_flow(world, capture)
    expected = _stream_frames(capture.path)[frozenset((flow["client"], flow["server"]))][0]
    base = f"/api/v1/captures/{capture.capture_id}/flows/{flow['id']}"

    listed = world.owner.client.get(f"{base}/frames")
    assert listed.status_code == 200, listed.text
    frames = listed.json()
    assert frames["frames"] == expected and frames["total"] == len(expected) == flow["packets"]
    # the first frame's time from the capture's start: tshark's frame.time_relative of it
    (t0,) = [
        s["t0"]
        for s in _streams(capture.path).values()
        if frozenset((_endpoint(s["a"]), _endpoint(s["b"])))
        == frozenset((flow["client"], flow["server"]))
    ]
    assert frames["start_s"] == pytest.approx(t0, abs=1e-6)

    sliced = world.owner.client.get(f"{base}/packets")
    assert sliced.status_code == 200, sliced.text
    assert sliced.headers["x-tcplens-slice-frames"] == str(len(expected))
    assert sliced.headers["x-tcplens-flow-frames"] == str(len(expected))
    assert int(sliced.headers["content-length"]) == len(sliced.content)
    original = capture.path.read_bytes()
    if name.endswith(".gz"):
        original = gzip.decompress(original)
    # the original's format and file header (link type, timestamp resolution, byte order)
    assert sliced.content[:4] == original[:4]
    if not name.endswith("pcapng"):
        assert sliced.content[:24] == original[:24]

    # every packet byte for byte, the first one included
    packets, originals = _records(sliced.content), _records(original)
    assert len(packets) == len(expected)
    assert packets[0] == originals[expected[0] - 1]
    assert packets == [originals[f - 1] for f in expected]
    assert len(sliced.content) < len(original)

    # tshark reads the slice, and sees each frame as it saw it in the whole capture
    tshark = Tshark()
    whole = tmp_path / f"whole-{name.removesuffix('.gz')}"
    whole.write_bytes(original)
    piece = tmp_path / f"slice-{name.removesuffix('.gz')}"
    piece.write_bytes(sliced.content)
    seen = _frame_rows(piece, tshark)
    everything = _frame_rows(whole, tshark)
    assert len(seen) == len(expected)
    assert seen == [everything[f - 1] for f in expected]
    assert "frame.len" in TSHARK_FIELDS and sum(int(r["frame.len"]) for r in seen) > 0


def test_the_slice_follows_the_capture_files_rule(world: World) -> None:
    capture = world.captures[CAPTURES[2]]
    flow = _busiest_flow(world, capture)
    path = f"/captures/{capture.capture_id}/flows/{flow['id']}/packets"
    owner = world.owner
    anonymous = TestClient(world.client.app, base_url=BASE_URL)

    def problem(response: object, status: int, code: str) -> None:
        assert response.status_code == status, response.text  # type: ignore[attr-defined]
        assert response.headers["content-type"] == PROBLEM_JSON  # type: ignore[attr-defined]
        assert response.json()["code"] == code  # type: ignore[attr-defined]

    # another tenant does not learn the capture exists; no credentials, no bytes
    stranger = sign_up(TestClient(world.client.app, base_url=BASE_URL))
    problem(stranger.client.get(f"/api/v1{path}"), 404, "capture_not_found")
    problem(
        stranger.client.get(f"/api/v1/captures/{capture.capture_id}/flows/{flow['id']}/frames"),
        404,
        "capture_not_found",
    )
    assert anonymous.get(f"/api/v1{path}").status_code == 401

    # an API token: with captures:read it reads the slice, without it it does not
    def token(scopes: list[str]) -> dict[str, str]:
        issued = owner.client.post(
            "/api/v1/tokens", json={"name": "slice", "scopes": scopes}, headers=owner.headers()
        )
        assert issued.status_code == 201, issued.text
        return {"Authorization": f"Bearer {issued.json()['token']}"}

    whole = anonymous.get(f"/api/v1{path}", headers=token(["captures:read"]))
    assert whole.status_code == 200 and whole.content == owner.client.get(f"/api/v1{path}").content
    problem(
        anonymous.get(f"/api/v1{path}", headers=token(["captures:write"])),
        403,
        "insufficient_scope",
    )

    # a share link: the payloads only when the link serves the file; the frame numbers always
    def share(allow_download: bool) -> str:
        made = owner.client.post(
            f"/api/v1/captures/{capture.capture_id}/shares",
            json={"allow_download": allow_download},
            headers=owner.headers(),
        )
        assert made.status_code == 201, made.text
        return str(made.json()["token"])

    shared_path = f"/flows/{flow['id']}"
    analysis_only = f"/api/v1/shared/{share(False)}{shared_path}"
    problem(anonymous.get(f"{analysis_only}/packets"), 403, "share_download_not_allowed")
    assert anonymous.get(f"{analysis_only}/frames").json()["total"] == flow["packets"]
    with_file = anonymous.get(f"/api/v1/shared/{share(True)}{shared_path}/packets")
    assert with_file.status_code == 200 and with_file.content == whole.content

    # a flow the capture does not have
    problem(
        owner.client.get(f"/api/v1/captures/{capture.capture_id}/flows/999999/packets"),
        404,
        "flow_not_found",
    )
