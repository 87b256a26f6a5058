"""Hand-written hostile requests the schema fuzzer reaches badly: values at the edges of what
the database and floats represent, tampered cursors and share tokens, file names full of control
characters, and bodies whose framing lies. Each names the exact status and problem code."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, MutableMapping
from typing import Any
from urllib.parse import quote

import anyio
import pytest

from tcplens.api.body_limit import MAX_BODY_BYTES
from tests.api.service_fixtures import PASSWORD, tiny_pcap
from tests.api.tenants import ANALYSIS_WAIT_S, Tenants, tenants

__all__ = ["tenants"]  # the fixture, imported for pytest

UPLOAD_LIMIT = 4 * 1024 * 1024  # tenants' max_upload_bytes


def problem_of(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert body["code"] == code, body
    assert body["status"] == status
    return body


def series_url(world: Tenants) -> str:
    home = world.home
    return f"/api/v1/captures/{home.capture_id}/flows/{home.flow_ids[0]}/series"


# --- series windows -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "location"),
    [
        ("from=nan", "from"),
        ("from=NaN&to=1", "from"),
        ("to=inf", "to"),
        ("from=-inf", "from"),
        ("from=-Infinity", "from"),
        ("from=1e999", "from"),  # overflows to infinity
        ("to=", "to"),
        ("from=1s", "from"),
        ("max_points=1", "max_points"),
        ("max_points=0", "max_points"),
        ("max_points=-4000", "max_points"),
        ("max_points=100001", "max_points"),
        ("max_points=99999999999999999999999999", "max_points"),
        ("max_points=2.5", "max_points"),
        ("max_points=nan", "max_points"),
        ("direction=sideways", "direction"),
    ],
)
def test_series_parameters_outside_their_domain_are_422(
    tenants: Tenants, query: str, location: str
) -> None:
    response = tenants.client.get(f"{series_url(tenants)}?{query}", headers=tenants.home.bearer)
    body = problem_of(response, 422, "invalid_input")
    assert ["query", location] in [e["location"] for e in body["errors"]]


def test_series_window_ending_before_it_starts_is_422(tenants: Tenants) -> None:
    response = tenants.client.get(f"{series_url(tenants)}?from=5&to=1", headers=tenants.home.bearer)
    assert problem_of(response, 422, "invalid_input")["field"] == "to"


def test_series_windows_at_the_extremes_of_time(tenants: Tenants) -> None:
    def series(query: str) -> dict[str, Any]:
        response = tenants.client.get(f"{series_url(tenants)}?{query}", headers=tenants.home.bearer)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    everything = series("max_points=100000")
    total = everything["points_in_range"]
    assert total > 2 and everything["returned_points"] == total
    assert series("from=-1e300&to=1e300&max_points=100000")["points_in_range"] == total
    assert series("from=-5&to=-1")["points_in_range"] == 0  # before the capture
    assert series("from=1e300")["points_in_range"] == 0  # after it
    assert series("from=0&to=0")["points_in_range"] <= total
    least = series("max_points=2")
    assert least["reduced"] is True and least["points_in_range"] == total


# --- ids beyond what the database holds -----------------------------------------------------


@pytest.mark.parametrize(
    "flow_id",
    ["2147483648", "9223372036854775808", "18446744073709551616", "-1", "1e3", "0x10", "9" * 40],
)
def test_flow_ids_outside_the_database_integer_are_422(tenants: Tenants, flow_id: str) -> None:
    home = tenants.home
    for url, headers in (
        (f"/api/v1/captures/{home.capture_id}/flows/{flow_id}", home.bearer),
        (f"/api/v1/captures/{home.capture_id}/flows/{flow_id}/series", home.bearer),
        (f"/api/v1/shared/{home.share_token}/flows/{flow_id}", {}),
        (f"/api/v1/shared/{home.share_token}/flows/{flow_id}/series", {}),
    ):
        body = problem_of(tenants.client.get(url, headers=headers), 422, "invalid_input")
        assert body["errors"][0]["location"] == ["path", "flow_id"], url


def test_the_largest_flow_id_is_simply_missing(tenants: Tenants) -> None:
    home = tenants.home
    url = f"/api/v1/captures/{home.capture_id}/flows/2147483647"
    problem_of(tenants.client.get(url, headers=home.bearer), 404, "flow_not_found")


@pytest.mark.parametrize("offset", ["2147483648", "9223372036854775808", "-1"])
def test_flow_offsets_outside_the_database_integer_are_422(tenants: Tenants, offset: str) -> None:
    home = tenants.home
    for url, headers in (
        (f"/api/v1/captures/{home.capture_id}/flows?offset={offset}", home.bearer),
        (f"/api/v1/shared/{home.share_token}/flows?offset={offset}", {}),
    ):
        problem_of(tenants.client.get(url, headers=headers), 422, "invalid_input")
    far = tenants.client.get(
        f"/api/v1/captures/{home.capture_id}/flows?offset=2147483647", headers=home.bearer
    )
    assert far.status_code == 200 and far.json()["items"] == []


@pytest.mark.parametrize(
    ("capture_id", "status", "code"),
    [
        ("1", 422, "invalid_input"),
        ("9" * 40, 422, "invalid_input"),
        ("00000000-0000-0000-0000-000000000000", 404, "capture_not_found"),
        (str(uuid.UUID(int=2**128 - 1)), 404, "capture_not_found"),
    ],
)
def test_capture_ids_that_name_nothing(
    tenants: Tenants, capture_id: str, status: int, code: str
) -> None:
    response = tenants.client.get(f"/api/v1/captures/{capture_id}", headers=tenants.home.bearer)
    problem_of(response, status, code)


# --- the captures list's parameters ---------------------------------------------------------


def _listing(world: Tenants, query: str = "") -> Any:
    return world.client.get(f"/api/v1/captures{query}", headers=world.home.bearer)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("?sort=sha256", "sort"),
        ("?sort=", "sort"),
        ("?order=up", "order"),
        ("?limit=0", "limit"),
        ("?limit=201", "limit"),
        ("?limit=9223372036854775808", "limit"),
        ("?offset=-1", "offset"),
        ("?offset=1000001", "offset"),
        ("?offset=1e3", "offset"),
        ("?q=" + "x" * 201, "q"),
        ("?finding=" + "x" * 201, "finding"),
    ],
    ids=lambda v: v[:24],
)
def test_list_parameters_outside_their_domain_are_422(
    tenants: Tenants, query: str, field: str
) -> None:
    body = problem_of(_listing(tenants, query), 422, "invalid_input")
    assert body["errors"][0]["location"] == ["query", field]


def _wait_listing_analysed(world: Tenants) -> None:
    """The fixture waits for its tenants' first captures; home's second one may still run."""
    deadline = time.monotonic() + ANALYSIS_WAIT_S
    while {c["status"] for c in _listing(world).json()["items"]} != {"done"}:
        assert time.monotonic() < deadline, "home's captures are still being analysed"
        time.sleep(0.2)


def test_finding_search_matches_any_finding_by_code_or_title(tenants: Tenants) -> None:
    """home: nagle_delack.pcap (nagle-delayed-ack) and second.pcap, the lab's dns_delay_upload
    (dns-delay first, slow-start-bound after it): the search reaches past the top finding."""
    home = tenants.home
    _wait_listing_analysed(tenants)

    def names(query: str) -> list[str]:
        response = _listing(tenants, query)
        assert response.status_code == 200, response.text
        return [c["filename"] for c in response.json()["items"]]

    assert names("?finding=nagle-delayed-ack") == [home.filename]
    assert names("?finding=NAGLE-delayed-ack") == [home.filename]  # codes in any case
    assert names("?finding=slow-start-bound") == ["second.pcap"]  # not its top finding
    assert names("?finding=dns%20delay") == ["second.pcap"]  # words of the title
    assert names("?finding=nagle") == [home.filename]
    # "DNS delay" and "Nagle + delayed ACK": newest first
    assert names("?finding=delay") == ["second.pcap", home.filename]
    assert names("?finding=packet-loss") == []
    assert names("?finding=dns&q=home") == []  # both searches hold at once


def test_captures_sort_by_top_finding_severity_then_newest(tenants: Tenants) -> None:
    _wait_listing_analysed(tenants)
    items = _listing(tenants, "?sort=top_finding&order=asc").json()["items"]
    assert [(c["filename"], c["top_finding"]["severity"]) for c in items] == [
        ("second.pcap", "high"),  # both high: the newer first
        (tenants.home.filename, "high"),
    ]
    status = _listing(tenants, "?sort=status&order=desc").json()["items"]
    assert {c["status"] for c in status} == {"done"}


@pytest.mark.parametrize("param", ["q", "finding"])
def test_a_nul_in_a_search_is_422_not_a_database_error(tenants: Tenants, param: str) -> None:
    # PostgreSQL text cannot hold NUL: asked as is, the driver would raise (a 500).
    body = problem_of(_listing(tenants, f"?{param}=ab%00cd"), 422, "invalid_input")
    assert body["field"] == param


@pytest.mark.parametrize("pattern", ["%", "_", "\\", "%25%25", "*", ".*"])
def test_search_wildcards_are_taken_literally(tenants: Tenants, pattern: str) -> None:
    # No file name holds these: a LIKE wildcard that leaked through would match every capture.
    response = _listing(tenants, f"?q={quote(pattern)}")
    assert response.status_code == 200, response.text
    assert response.json() == {"items": [], "total": 0, "offset": 0, "limit": 50}


def test_a_search_never_reaches_another_workspace(tenants: Tenants) -> None:
    for query in (
        f"?q={tenants.foreign.filename}",
        "?finding=stop-and-wait",
        "?offset=0&limit=200",
    ):
        response = _listing(tenants, query)
        assert response.status_code == 200, response.text
        assert tenants.foreign.capture_id not in response.text
        assert tenants.foreign.filename not in response.text


# --- share tokens -------------------------------------------------------------------------


def _token_variants(world: Tenants) -> Iterator[str]:
    token = world.home.share_token
    yield from ("abc", "x" * 15, "x" * 101, "x" * 5000, "ü" * 32, "%00" * 20, "%20" * 24)
    yield from (token + "x", token[:-1], token[::-1], quote(token + "\n"))


SHARED_SUFFIXES = ("", "/flows", "/findings", "/file", "/flows/1/series", "/flows/1/packets")


def test_share_tokens_that_open_nothing_are_404(tenants: Tenants) -> None:
    for token in _token_variants(tenants):
        for suffix in SHARED_SUFFIXES:
            response = tenants.client.get(f"/api/v1/shared/{token}{suffix}")
            problem_of(response, 404, "share_link_not_found")


def test_revoked_and_expired_share_links_say_so(tenants: Tenants) -> None:
    for token, code in (
        (tenants.revoked_share_token, "share_revoked"),
        (tenants.expired_share_token, "share_expired"),
    ):
        for suffix in SHARED_SUFFIXES:
            problem_of(tenants.client.get(f"/api/v1/shared/{token}{suffix}"), 410, code)


def test_a_share_token_is_not_an_api_token(tenants: Tenants) -> None:
    url = f"/api/v1/captures/{tenants.home.capture_id}"
    for authorization in (
        f"Bearer {tenants.home.share_token}",
        "Bearer " + "x" * 100_000,
        "Basic Zm9vOmJhcg==",
        "Bearer",
        "tcpl_" + "a" * 40,
    ):
        response = tenants.client.get(url, headers={"Authorization": authorization})
        problem_of(response, 401, "not_authenticated")


# --- file names ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "stored"),
    [
        ("a" * 1024, "a" * 255),
        ("../../etc/passwd", "passwd"),
        ("C:\\Users\\me\\trace.pcap", "trace.pcap"),
        ("a\x00b\r\nc\x1b[31m\u202e\u200b.pcap", "abc[31m.pcap"),
        ("\x00\x01\x02\t", "capture"),
        ("   ", "capture"),
        ("日本語 🚀.pcap", "日本語 🚀.pcap"),
        ('"quoted"; x=1.pcap', '"quoted"; x=1.pcap'),
    ],
)
def test_file_names_are_cleaned_and_come_back_safely(
    tenants: Tenants, filename: str, stored: str
) -> None:
    home = tenants.home
    response = tenants.client.post(
        "/api/v1/captures",
        params={"filename": filename},
        content=tiny_pcap(uuid.uuid4().bytes),
        headers=home.bearer,
    )
    assert response.status_code == 202, response.text
    capture = response.json()["capture"]
    assert capture["filename"] == stored
    download = tenants.client.get(f"/api/v1/captures/{capture['id']}/file", headers=home.bearer)
    assert download.status_code == 200
    disposition = download.headers["content-disposition"]
    assert disposition.isascii() and "\r" not in disposition and "\n" not in disposition
    assert disposition.endswith("filename*=UTF-8''" + quote(stored, safe=""))


def test_file_name_longer_than_1024_is_422(tenants: Tenants) -> None:
    response = tenants.client.post(
        "/api/v1/captures",
        params={"filename": "a" * 1025},
        content=tiny_pcap(uuid.uuid4().bytes),
        headers=tenants.home.bearer,
    )
    body = problem_of(response, 422, "invalid_input")
    assert body["errors"][0]["location"] == ["query", "filename"]


def test_file_name_in_broken_percent_encoding(tenants: Tenants) -> None:
    response = tenants.client.post(
        "/api/v1/captures?filename=%ff%fe%00.pcap",
        content=tiny_pcap(uuid.uuid4().bytes),
        headers=tenants.home.bearer,
    )
    assert response.status_code == 202, response.text
    assert response.json()["capture"]["filename"] == "\ufffd\ufffd.pcap"


# --- bodies whose framing lies ------------------------------------------------------------


def asgi_post(
    world: Tenants, path: str, headers: dict[str, str], chunks: list[bytes]
) -> tuple[int, dict[str, str], bytes]:
    """POST straight into the ASGI app, with exactly these headers and body chunks: a test
    client would fix a lying Content-Length, a real server's framing is what is tested here."""

    async def exchange() -> tuple[int, dict[str, str], bytes]:
        pending = list(chunks)
        status = 0
        answer_headers: dict[str, str] = {}
        body = bytearray()

        async def receive() -> dict[str, Any]:
            if pending:
                chunk = pending.pop(0)
                return {"type": "http.request", "body": chunk, "more_body": bool(pending)}
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

        async def send(message: MutableMapping[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                answer_headers.update(
                    (k.decode("latin-1"), v.decode("latin-1")) for k, v in message["headers"]
                )
            elif message["type"] == "http.response.body":
                body.extend(message.get("body", b""))

        path_only, _, query = path.partition("?")
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "https",
            "path": path_only,
            "raw_path": path_only.encode(),
            "root_path": "",
            "query_string": query.encode(),
            # latin-1: the octets a server hands over for a header value
            "headers": [(k.lower().encode(), v.encode("latin-1")) for k, v in headers.items()],
            "client": ("127.0.0.1", 50000),
            "server": ("testserver", 443),
        }
        with anyio.fail_after(60):
            await world.app(scope, receive, send)
        return status, answer_headers, bytes(body)

    return anyio.run(exchange)


def _problem_code(answer: tuple[int, dict[str, str], bytes]) -> tuple[int, str]:
    status, headers, body = answer
    assert headers["content-type"] == "application/problem+json", (status, body[:300])
    return status, json.loads(body)["code"]


def _oversized(extra: int) -> list[bytes]:
    block = b"\x00" * (64 * 1024)
    head = tiny_pcap(uuid.uuid4().bytes)
    return [head] + [block] * ((UPLOAD_LIMIT + extra) // len(block) + 1)


def test_a_huge_declared_length_is_refused_before_reading(tenants: Tenants) -> None:
    headers = {**tenants.home.bearer, "content-length": "9" * 30}
    answer = asgi_post(tenants, "/api/v1/captures", headers, [tiny_pcap(uuid.uuid4().bytes)])
    assert _problem_code(answer) == (413, "upload_too_large")


def test_a_body_longer_than_its_declared_length_is_counted(tenants: Tenants) -> None:
    headers = {**tenants.home.bearer, "content-length": "100"}
    answer = asgi_post(tenants, "/api/v1/captures", headers, _oversized(1))
    assert _problem_code(answer) == (413, "upload_too_large")


def test_a_chunked_body_over_the_limit_is_413(tenants: Tenants) -> None:
    headers = {**tenants.home.bearer, "transfer-encoding": "chunked"}
    answer = asgi_post(tenants, "/api/v1/captures", headers, _oversized(1))
    assert _problem_code(answer) == (413, "upload_too_large")


@pytest.mark.parametrize("declared", ["-1", "abc", "1e9", "", "\u00b2", "\u00b9\u00b2\u00b3"])
def test_a_meaningless_declared_length_is_ignored(tenants: Tenants, declared: str) -> None:
    headers = {**tenants.home.bearer, "content-length": declared}
    status, _, body = asgi_post(
        tenants, "/api/v1/captures?filename=x.pcap", headers, [tiny_pcap(uuid.uuid4().bytes)]
    )
    assert status == 202, body[:300]


def _multipart(boundary: str, *parts: bytes) -> list[bytes]:
    return [*parts, f"--{boundary}--\r\n".encode()]


def _file_part(boundary: str, data: bytes, extra_header: bytes = b"") -> bytes:
    return (
        f"--{boundary}\r\n".encode()
        + b'Content-Disposition: form-data; name="file"; filename="m.pcap"\r\n'
        + extra_header
        + b"Content-Type: application/octet-stream\r\n\r\n"
        + data
        + b"\r\n"
    )


@pytest.mark.parametrize(
    ("content_type", "chunks", "expected"),
    [
        # the body's boundary is not the one announced: no part, so no file
        (
            "multipart/form-data; boundary=AAAA",
            _multipart("BBBB", _file_part("BBBB", tiny_pcap(b"wrong boundary"))),
            (422, "malformed_upload"),
        ),
        (
            "multipart/form-data; boundary=" + "b" * 201,
            _multipart("b" * 201, _file_part("b" * 201, tiny_pcap(b"long boundary"))),
            (422, "malformed_upload"),
        ),
        (
            'multipart/form-data; boundary=""',
            [_file_part("", tiny_pcap(b"empty boundary"))],
            (422, "malformed_upload"),
        ),
        # one endless part header: refused, never collected in memory
        (
            "multipart/form-data; boundary=CCCC",
            _multipart(
                "CCCC",
                _file_part(
                    "CCCC", tiny_pcap(b"long header"), b"X-Pad: " + b"p" * 1_000_000 + b"\r\n"
                ),
            ),
            (422, "malformed_upload"),
        ),
        # a field before the file larger than any upload: the whole body counts
        (
            "multipart/form-data; boundary=DDDD",
            _multipart(
                "DDDD",
                b'--DDDD\r\nContent-Disposition: form-data; name="pad"\r\n\r\n',
                *_oversized(128 * 1024),
                b"\r\n",
                _file_part("DDDD", tiny_pcap(b"after the pad")),
            ),
            (413, "upload_too_large"),
        ),
    ],
    ids=["wrong-boundary", "boundary-201", "empty-boundary", "endless-part-header", "huge-field"],
)
def test_multipart_bodies_that_lie(
    tenants: Tenants, content_type: str, chunks: list[bytes], expected: tuple[int, str]
) -> None:
    headers = {**tenants.home.bearer, "content-type": content_type}
    assert _problem_code(asgi_post(tenants, "/api/v1/captures", headers, chunks)) == expected


# --- bodies of the other routes -------------------------------------------------------------


def test_bodies_other_than_uploads_are_bounded(tenants: Tenants) -> None:
    json_type = {"content-type": "application/json"}
    email = f"pad-{uuid.uuid4().hex[:8]}@example.com"
    signup = json.dumps({"email": email, "password": PASSWORD}).encode()
    for path, headers, chunks in (
        # declared: refused before a byte is read
        ("/api/v1/auth/signup", {"content-length": str(10**12)}, [signup]),
        # chunked, no length: refused once the bytes pass the bound
        ("/api/v1/auth/login", {}, [signup] + [b" " * 65536] * 17),
        (
            f"/api/v1/workspaces/{tenants.home.actor.workspace_id}/members",
            tenants.home.bearer,
            [b'{"email": "' + b"a" * (MAX_BODY_BYTES + 1) + b'"}'],
        ),
    ):
        answer = asgi_post(tenants, path, {**json_type, **headers}, chunks)
        assert _problem_code(answer) == (413, "request_too_large"), path
        assert answer[1]["x-content-type-options"] == "nosniff"
    # exactly at the bound is read (whitespace is valid JSON padding)
    at_bound = signup + b" " * (MAX_BODY_BYTES - len(signup))
    status, _, body = asgi_post(tenants, "/api/v1/auth/signup", json_type, [at_bound])
    assert status == 202, body[:300]
    # the upload counts its own bytes against its own, larger limit
    upload = [tiny_pcap(uuid.uuid4().bytes) + b"\x00" * (2 * MAX_BODY_BYTES)]
    status, _, body = asgi_post(tenants, "/api/v1/captures", tenants.home.bearer, upload)
    assert status == 202, body[:300]


# --- text PostgreSQL cannot store, names that disguise themselves ---------------------------


def test_control_characters_in_addresses_and_names_are_refused(tenants: Tenants) -> None:
    actor = tenants.home.actor
    session = actor.client  # workspaces are created from a browser session
    members = f"/api/v1/workspaces/{actor.workspace_id}/members"
    for response, status, code in (
        (
            tenants.client.post(
                "/api/v1/auth/signup", json={"email": "a\x00b@example.com", "password": PASSWORD}
            ),
            422,
            "invalid_input",
        ),
        (
            tenants.client.post(
                "/api/v1/auth/login", json={"email": "a\x00b@example.com", "password": PASSWORD}
            ),
            401,
            "bad_credentials",
        ),
        (
            session.post(members, json={"email": "x\x00@example.com"}, headers=actor.headers()),
            422,
            "invalid_input",
        ),
        (
            session.post("/api/v1/workspaces", json={"name": "team\x00"}, headers=actor.headers()),
            422,
            "invalid_input",
        ),
        (
            session.post(
                "/api/v1/workspaces", json={"name": "\u202etxt.exe"}, headers=actor.headers()
            ),
            422,
            "invalid_input",
        ),
        (
            session.post("/api/v1/tokens", json={"name": "ci\x00"}, headers=actor.headers()),
            422,
            "invalid_input",
        ),
    ):
        assert problem_of(response, status, code)["detail"], response.request.url
    # printable names in any script are fine
    named = session.post(
        "/api/v1/workspaces", json={"name": " Équipe 東京 "}, headers=actor.headers()
    )
    assert named.status_code == 201 and named.json()["name"] == "Équipe 東京"
