"""Compare two analyses of the same transfer, captured before and after a change
(DESIGN.md ``tcplens compare BEFORE AFTER --json``). Pure: two ``analyze --json`` objects in,
one comparison out, so the CLI (two files) and the API (two stored captures) say the same.

- **Transfers** are matched by server (``ip:port``) and size: all flows of a capture to one
  server that carried payload make its transfer, however many connections it took (ten
  connections before, one pooled after), from the first SYN -- or the first DNS query a
  ``dns-delay`` finding counted for it -- to the last payload. Sizes must agree within
  ``SIZE_TOLERANCE``: a different amount of data is not the same transfer.
- **Findings** are matched by cause and server: a finding's key is its ``code`` and the server
  of each flow it names. Only problems worth fixing (severity high or medium: the factor held
  at least a fifth of the transfer's time) are compared; a low finding is a minor effect that
  comes and goes with the run (an autotuned window briefly full while it grows) and an info
  one is no problem at all (the path, the round trips). Resolved: in BEFORE only; remaining: in both; new: in AFTER only (a regression).
- BEFORE's ``if_fixed`` predictions are set next to what AFTER measured for the same transfer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tcplens.diagnosis import wording as w

SIZE_TOLERANCE = 0.25  # bytes may differ by a quarter (headers, a different request count)
COMPARED_SEVERITIES = ("high", "medium")

Report = Mapping[str, Any]


class NothingToCompare(ValueError):
    """The two captures share no transfer: a comparison would be made up."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Transfer:
    server: str
    bytes: int
    start_s: float
    end_s: float
    flows: tuple[int, ...]

    @property
    def duration_s(self) -> float:
        return max(self.end_s - self.start_s, 0.0)

    @property
    def rate_bps(self) -> float:
        return self.bytes * 8.0 / self.duration_s if self.duration_s > 0 else 0.0


def transfers(report: Report) -> dict[str, Transfer]:
    """Each server's transfer in one report (flows with payload, grouped by server)."""
    dns_start: dict[int, float] = {}
    for f in report.get("findings", []):
        ranges = f.get("evidence", {}).get("time_ranges_s") or []
        if f.get("code") == "dns-delay" and ranges:
            for flow in f.get("flows", []):
                dns_start[int(flow)] = min(float(r[0]) for r in ranges)
    grouped: dict[str, list[tuple[int, int, float, float]]] = {}
    for flow in report.get("flows", []):
        payload = int(flow["bytes"]["client_to_server"]) + int(flow["bytes"]["server_to_client"])
        if payload <= 0:
            continue
        timeline = flow.get("timeline") or {}
        start = timeline.get("syn_s")
        start = float(flow["start_s"]) if start is None else float(start)
        start = min(start, dns_start.get(int(flow["id"]), start))
        end = timeline.get("last_data_s")
        end = float(flow["start_s"]) + float(flow["duration_s"]) if end is None else float(end)
        grouped.setdefault(str(flow["server"]), []).append((int(flow["id"]), payload, start, end))
    return {
        server: Transfer(
            server,
            sum(p for _, p, _, _ in rows),
            min(s for _, _, s, _ in rows),
            max(e for _, _, _, e in rows),
            tuple(i for i, _, _, _ in rows),
        )
        for server, rows in grouped.items()
    }


def finding_keys(report: Report) -> dict[tuple[str, str], Mapping[str, Any]]:
    """The compared findings by (code, server), the most important first when two share one."""
    server_of = {int(f["id"]): str(f["server"]) for f in report.get("flows", [])}
    keyed: dict[tuple[str, str], Mapping[str, Any]] = {}
    for finding in report.get("findings", []):
        if finding.get("severity") not in COMPARED_SEVERITIES:
            continue
        servers = {server_of[int(i)] for i in finding.get("flows", []) if int(i) in server_of}
        for server in sorted(servers) or [""]:
            keyed.setdefault((str(finding["code"]), server), finding)
    return keyed


def compare_reports(
    before: Report, after: Report, before_name: str, after_name: str
) -> dict[str, Any]:
    """The comparison object (DESIGN.md), or ``NothingToCompare`` when the captures share no
    server, or no transfer of the same size."""
    tb, ta = transfers(before), transfers(after)
    common = sorted(set(tb) & set(ta))
    if not common:
        raise NothingToCompare(
            "no_common_server",
            f"{before_name} and {after_name} share no server: BEFORE talked to "
            f"{_servers(tb)}, AFTER to {_servers(ta)}. Capture the same transfer twice.",
        )
    matched = [s for s in common if _same_size(tb[s].bytes, ta[s].bytes)]
    if not matched:
        sizes = "; ".join(
            f"{s}: {w.size(tb[s].bytes)} before, {w.size(ta[s].bytes)} after" for s in common
        )
        raise NothingToCompare(
            "different_transfers",
            f"{before_name} and {after_name} share a server but not a transfer of the same "
            f"size ({sizes}). Capture the same transfer twice.",
        )
    kb, ka = finding_keys(before), finding_keys(after)
    rows = []
    for key in [*kb, *(k for k in ka if k not in kb)]:
        status = "remaining" if key in kb and key in ka else "resolved" if key in kb else "new"
        rows.append(
            {
                "code": key[0],
                "server": key[1],
                "status": status,
                "before": _finding_brief(kb.get(key)),
                "after": _finding_brief(ka.get(key)),
            }
        )
    transfer_rows = [_transfer_row(tb[s], ta[s], before) for s in matched]
    total_before = sum(tb[s].duration_s for s in matched)
    total_after = sum(ta[s].duration_s for s in matched)
    speedup = total_before / total_after if total_after > 0 else 0.0
    result: dict[str, Any] = {
        "before": _capture_brief(before, before_name),
        "after": _capture_brief(after, after_name),
        "resolved": _codes(rows, "resolved"),
        "remaining": _codes(rows, "remaining"),
        "new": _codes(rows, "new"),
        "transfers": transfer_rows,
        "speedup": round(speedup, 4),
        "findings": rows,
        "unmatched_servers": {
            "before": sorted(set(tb) - set(matched)),
            "after": sorted(set(ta) - set(matched)),
        },
    }
    result["summary"] = summary(result)
    return result


def summary(result: Mapping[str, Any]) -> str:
    """The comparison in plain words."""
    parts = []
    for t in result["transfers"]:
        parts.append(
            f"{t['server']}: {w.size(t['bytes'])} took {w.duration(t['before_s'])} before and "
            f"{w.duration(t['after_s'])} after ({_how_much(t['speedup'])}"
            + (
                f", in {_connections(t['before_connections'])} before and "
                f"{_connections(t['after_connections'])} after"
                if t["before_connections"] != t["after_connections"]
                else ""
            )
            + ")."
        )
        for p in t["predictions"]:
            parts.append(
                f"Fixing {p['code']} was predicted to take it to {w.duration(p['duration_s'])}; "
                f"AFTER measured {w.duration(t['after_s'])}."
            )
    for status, words in (("resolved", "Resolved"), ("remaining", "Remaining"), ("new", "New")):
        codes = result[status]
        if codes:
            parts.append(f"{words}: {', '.join(codes)}.")
    if not any(result[s] for s in ("resolved", "remaining", "new")):
        parts.append("Neither capture has a finding to fix.")
    return " ".join(parts)


def _connections(n: int) -> str:
    return f"{n} connection{'' if n == 1 else 's'}"


def _how_much(speedup: float) -> str:
    if speedup >= 1.0:
        return f"{speedup:.1f}× faster"
    if speedup > 0:
        return f"{1.0 / speedup:.1f}× slower: a regression"
    return "no time measured"


def _transfer_row(b: Transfer, a: Transfer, before: Report) -> dict[str, Any]:
    predictions = []
    for f in before.get("findings", []):
        fixed = f.get("if_fixed")
        if fixed and set(int(i) for i in f.get("flows", [])) & set(b.flows):
            predictions.append(
                {
                    "code": f["code"],
                    "duration_s": fixed["duration_s"],
                    "rate_bps": fixed["rate_bps"],
                    "basis": fixed["basis"],
                    # predicted / measured: 1 is exact, 2 twice too slow, 0.5 twice too fast
                    "vs_after": round(fixed["duration_s"] / a.duration_s, 4)
                    if a.duration_s > 0
                    else None,
                }
            )
    return {
        "server": b.server,
        "bytes": b.bytes,
        "after_bytes": a.bytes,
        "before_s": round(b.duration_s, 6),
        "after_s": round(a.duration_s, 6),
        "before_rate_bps": round(b.rate_bps, 1),
        "after_rate_bps": round(a.rate_bps, 1),
        "speedup": round(b.duration_s / a.duration_s, 4) if a.duration_s > 0 else 0.0,
        "before_flows": list(b.flows),
        "after_flows": list(a.flows),
        "before_connections": len(b.flows),
        "after_connections": len(a.flows),
        "before_start_s": round(b.start_s, 6),
        "after_start_s": round(a.start_s, 6),
        "predictions": predictions,
    }


def _finding_brief(f: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if f is None:
        return None
    return {
        "severity": f.get("severity"),
        "title": f.get("title"),
        "time_lost_s": f.get("time_lost_s"),
        "flows": list(f.get("flows", [])),
        "if_fixed": f.get("if_fixed"),
    }


def _capture_brief(report: Report, name: str) -> dict[str, Any]:
    return {"capture": name, "duration_s": float(report.get("capture", {}).get("duration_s", 0.0))}


def _codes(rows: Sequence[Mapping[str, Any]], status: str) -> list[str]:
    return list(dict.fromkeys(str(r["code"]) for r in rows if r["status"] == status))


def _same_size(a: int, b: int) -> bool:
    return abs(a - b) <= SIZE_TOLERANCE * max(a, b)


def _servers(ts: Mapping[str, Transfer]) -> str:
    names = sorted(ts)
    if not names:
        return "no server (no TCP payload)"
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
