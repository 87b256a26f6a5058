"""``tcplens upload FILE... [--server URL] [--wait] [--json] [--fail-on high|medium]
[--share [--expires 7d|never] [--share-file]]
[--compare-with BEFORE_ID [--fail-on-regression] [--slower-by SHARE]]``

For automated submissions (CI, cron): uploads each capture with the API token in
``TCPLENS_TOKEN``, optionally waits for the analysis (a progress line on a terminal), prints the
top findings and, with ``--share`` only, a share URL: a link that opens the analysis without
signing in, for 7 days unless ``--expires`` says otherwise, and the capture file itself only with
``--share-file``. Standard library HTTP only (http.client, so an early answer such as 401 or 413 is read even
when the server stops reading the upload), so the command has no extra dependencies.

With ``--compare-with``, each analysed capture is compared with the capture BEFORE_ID of the same
workspace (``GET /api/v1/compare``): findings resolved, remaining and new, the matched transfers'
speed-up. ``--fail-on-regression`` then exits 1 when a new finding (high or medium) appears or a
matched transfer got slower by more than ``--slower-by`` (a share, default 0.1: 10 %).

Exit codes: 0 done; 1 a finding at or over ``--fail-on``, or a regression; 2 usage (bad arguments, missing file,
no token); 3 authentication or permission refused; 4 server or network trouble (try again);
5 a capture was refused (not a capture, too large) or its analysis failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.parse
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: http.client and ssl cost every tcplens command ~20 ms
    import http.client

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_AUTH = 3
EXIT_SERVER = 4
EXIT_REJECTED = 5

SEVERITY_RANK = {"info": 0, "low": 1, "medium": 2, "high": 3}
DEFAULT_SLOWER_BY = 0.1
TOP_FINDINGS = 3
DEFAULT_SHARE_EXPIRY_S = 7 * 86_400
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


def expiry_seconds(text: str) -> int | None:
    """``--expires``: ``never`` (None), or a number of seconds with an optional unit s/m/h/d."""
    text = text.strip().lower()
    if text == "never":
        return None
    number, unit = (text[:-1], text[-1]) if text[-1:] in _UNIT_SECONDS else (text, "s")
    if not number.isascii() or not number.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration such as 12h, 7d or never")
    return int(number) * _UNIT_SECONDS[unit]


class ApiError(Exception):
    def __init__(self, exit_code: int, message: str) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "upload",
        help="upload captures to a tcplens server (token from TCPLENS_TOKEN)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument(
        "--server",
        default=os.environ.get("TCPLENS_SERVER", "http://127.0.0.1:8000"),
        help="server URL (default: TCPLENS_SERVER or http://127.0.0.1:8000)",
    )
    parser.add_argument("--wait", action="store_true", help="wait for the analyses to finish")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--fail-on",
        choices=("high", "medium"),
        help="exit 1 when a finding has this severity or worse (implies --wait)",
    )
    parser.add_argument(
        "--compare-with",
        metavar="BEFORE_ID",
        help="compare each analysed capture with this earlier capture (implies --wait)",
    )
    parser.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="with --compare-with: exit 1 when a new finding appears or a matched transfer "
        "got slower by more than --slower-by",
    )
    parser.add_argument(
        "--slower-by",
        type=float,
        default=DEFAULT_SLOWER_BY,
        metavar="SHARE",
        help=f"how much slower a matched transfer may get, as a share ({DEFAULT_SLOWER_BY})",
    )
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to wait (900)")
    parser.add_argument(
        "--share",
        action="store_true",
        help="make a share link to each capture (anyone with it sees the analysis)",
    )
    parser.add_argument(
        "--expires",
        type=expiry_seconds,
        default=DEFAULT_SHARE_EXPIRY_S,
        metavar="DURATION",
        help="with --share: when the link expires, e.g. 30m, 12h, 7d (default), or never",
    )
    parser.add_argument(
        "--share-file",
        action="store_true",
        help="with --share: the link also serves the capture file (packets and payloads)",
    )
    parser.set_defaults(run=run)


class Client:
    def __init__(self, server: str, token: str) -> None:
        parts = urllib.parse.urlsplit(server.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ApiError(EXIT_USAGE, f"--server must be an http(s) URL, not {server!r}")
        self.parts = parts
        self.base = f"{parts.path}/api/v1"
        self.token = token

    def _connection(self) -> http.client.HTTPConnection:
        import http.client

        cls = (
            http.client.HTTPSConnection
            if self.parts.scheme == "https"
            else http.client.HTTPConnection
        )
        return cls(self.parts.hostname or "", self.parts.port, timeout=120)

    def request(
        self, method: str, path: str, *, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        all_headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        all_headers.update(headers or {})
        if isinstance(body, dict):
            body = json.dumps(body).encode()
            all_headers["Content-Type"] = "application/json"
        if isinstance(body, bytes):
            all_headers["Content-Length"] = str(len(body))
        import http.client

        connection = self._connection()
        try:
            connection.putrequest(method, self.base + path, skip_accept_encoding=True)
            for name, value in all_headers.items():
                connection.putheader(name, value)
            connection.endheaders()
            try:
                if isinstance(body, bytes):
                    connection.send(body)
                elif body is not None:
                    while chunk := body.read(1024 * 1024):
                        connection.send(chunk)
            except (BrokenPipeError, ConnectionResetError):
                # The server answered before reading everything (401, 413, ...): its answer
                # is still waiting to be read.
                pass
            response = connection.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException) as error:
            raise ApiError(EXIT_SERVER, f"cannot reach {self.parts.geturl()}: {error}") from error
        finally:
            connection.close()
        if response.status >= 400:
            _raise_for(response.status, raw, response.getheader("Retry-After"))
        return response.status, json.loads(raw) if raw else None


def _raise_for(status: int, raw: bytes, retry_after: str | None) -> None:
    try:
        problem = json.loads(raw or b"{}")
    except ValueError:
        problem = {}
    detail = problem.get("detail") if isinstance(problem, dict) else None
    detail = detail or HTTPStatus(status).phrase
    if status in (401, 403):
        raise ApiError(EXIT_AUTH, f"refused ({status}): {detail}")
    if status in (413, 415, 422):
        raise ApiError(EXIT_REJECTED, f"refused ({status}): {detail}")
    if status == 429:
        raise ApiError(EXIT_SERVER, f"rate limited; retry after {retry_after or '?'} s")
    raise ApiError(EXIT_SERVER, f"server answered {status}: {detail}")


def _progress_line(name: str, capture: dict[str, Any]) -> str:
    progress = capture.get("progress") or {}
    total = progress.get("bytes_total") or 0
    done = progress.get("bytes_done") or 0
    share = done / total if total else 0.0
    bar = "#" * int(share * 20)
    stage = progress.get("stage") or capture["status"]
    return f"\r{name}: [{bar:<20}] {stage:<10}"


def _upload_one(client: Client, path: Path, args: argparse.Namespace) -> dict[str, Any]:
    size = path.stat().st_size
    query = urllib.parse.urlencode({"filename": path.name})
    with path.open("rb") as body:
        _, answer = client.request(
            "POST",
            f"/captures?{query}",
            body=body,
            headers={"Content-Type": "application/octet-stream", "Content-Length": str(size)},
        )
    capture = answer["capture"]
    result: dict[str, Any] = {"file": str(path), "capture": capture}
    if args.share:
        _, share = client.request(
            "POST",
            f"/captures/{capture['id']}/shares",
            body={"expires_in_s": args.expires, "allow_download": args.share_file},
        )
        result["share_url"] = share["url"]
        result["share_expires_at"] = share["expires_at"]
    if not (args.wait or args.fail_on or args.compare_with):
        return result
    tty = sys.stderr.isatty() and not args.json
    deadline = time.monotonic() + args.timeout
    while capture["status"] in ("queued", "running"):
        if time.monotonic() > deadline:
            raise ApiError(EXIT_SERVER, f"{path.name}: not analysed within {args.timeout:g} s")
        if tty:
            print(_progress_line(path.name, capture), end="", file=sys.stderr, flush=True)
        time.sleep(0.5)
        _, capture = client.request("GET", f"/captures/{capture['id']}")
    if tty:
        print(_progress_line(path.name, capture), file=sys.stderr)
    result["capture"] = capture
    if capture["status"] == "done":
        _, result["findings"] = client.request("GET", f"/captures/{capture['id']}/findings")
        if args.compare_with:
            query = urllib.parse.urlencode({"before": args.compare_with, "after": capture["id"]})
            _, result["comparison"] = client.request("GET", f"/compare?{query}")
    return result


def regressions(comparison: dict[str, Any], slower_by: float) -> list[str]:
    """What got worse: each new finding, each matched transfer slower by more than
    ``slower_by`` (a share of its BEFORE duration)."""
    found = [f"new finding: {code}" for code in comparison.get("new", [])]
    for t in comparison.get("transfers", []):
        if t["after_s"] > t["before_s"] * (1.0 + slower_by):
            found.append(
                f"{t['server']}: {t['before_s']:.3f} s -> {t['after_s']:.3f} s "
                f"(slower by more than {slower_by:.0%})"
            )
    return found


def _print_human(result: dict[str, Any]) -> None:
    capture = result["capture"]
    print(f"{result['file']}: {capture['status']} (capture {capture['id']})")
    if capture.get("error"):
        print(f"  error: {capture['error']['message']}")
    facts = capture.get("facts") or {}
    if capture["status"] == "done":
        print(f"  {facts.get('packets', 0)} packets, {facts.get('flows', 0)} TCP flows")
    findings = result.get("findings") or []
    for finding in findings[:TOP_FINDINGS]:
        print(f"  [{finding['severity']}] {finding['title']}")
        print(f"      {finding['summary']}")
        if finding.get("fix"):
            print(f"      fix: {finding['fix']}")
    if capture["status"] == "done" and not findings:
        print("  no findings")
    if result.get("share_url"):
        until = result.get("share_expires_at") or "revoked"
        print(f"  share: {result['share_url']} (until {until})")
    if result.get("comparison"):
        print(f"  compared with {result['comparison']['before']['capture']}:")
        print(f"      {result['comparison']['summary']}")


def run(args: argparse.Namespace) -> int:
    token = os.environ.get("TCPLENS_TOKEN", "").strip()
    if not token:
        print("tcplens upload: set TCPLENS_TOKEN to an API token", file=sys.stderr)
        return EXIT_USAGE
    if args.fail_on_regression and not args.compare_with:
        print("tcplens upload: --fail-on-regression needs --compare-with", file=sys.stderr)
        return EXIT_USAGE
    if not 0 <= args.slower_by < 100:
        print("tcplens upload: --slower-by is a share (0.1 = 10 %)", file=sys.stderr)
        return EXIT_USAGE
    paths = [Path(f) for f in args.files]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        print(f"tcplens upload: no such file: {', '.join(missing)}", file=sys.stderr)
        return EXIT_USAGE
    try:
        client = Client(args.server, token)
    except ApiError as error:
        print(f"tcplens upload: {error}", file=sys.stderr)
        return error.exit_code
    results: list[dict[str, Any]] = []
    exit_code = EXIT_OK
    for path in paths:
        try:
            result = _upload_one(client, path, args)
        except ApiError as error:
            print(f"tcplens upload: {path}: {error}", file=sys.stderr)
            if error.exit_code in (EXIT_AUTH, EXIT_SERVER):
                return error.exit_code  # the same would happen to every other file
            results.append({"file": str(path), "error": str(error)})
            exit_code = max(exit_code, EXIT_REJECTED)
            continue
        results.append(result)
        if result["capture"]["status"] == "failed":
            exit_code = max(exit_code, EXIT_REJECTED)
        if not args.json:
            _print_human(result)
    if args.json:
        json.dump({"uploads": results}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    if exit_code == EXIT_OK and args.fail_on_regression:
        worse = [
            line
            for r in results
            if r.get("comparison")
            for line in regressions(r["comparison"], args.slower_by)
        ]
        for line in worse:
            print(f"tcplens upload: regression: {line}", file=sys.stderr)
        if worse:
            return EXIT_FINDINGS
    if exit_code == EXIT_OK and args.fail_on:
        threshold = SEVERITY_RANK[args.fail_on]
        worst = max(
            (SEVERITY_RANK.get(f["severity"], 0) for r in results for f in r.get("findings", [])),
            default=-1,
        )
        if worst >= threshold:
            return EXIT_FINDINGS
    return exit_code
