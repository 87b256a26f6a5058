"""``make eval``: how right the diagnosis is, on every capture set the project has (issue #26).

    cd e2e && ../.venv/bin/python -m lab.evaluate [--lab DIR] [--shared DIR] [--json FILE]

For the lab's own captures (``make lab`` writes them once into ``e2e/lab/out``; this reads them,
it never makes captures), split into the tuning part and the part held out of tuning
(``Scenario.heldout``), and for ``../shared/captures/lab`` (its manifest's
``expected_primary_factor``), it prints:

- the accuracy of the first finding (its factor is the scenario's expected factor) and of each
  flow's ``limiting_factor`` (the scenario's factor; several flows at once: each flow's own, from
  the manifest's ``flows``; a DNS scenario's flows have no factor of their own and are skipped);
- a confusion matrix of the first finding (expected factor by row, diagnosed by column);
- capture-point invariance: the scenarios captured at both ends in one run (``other_end``) get the
  same first factor and the same limiting factor per connection at each end.

For every capture under ``../shared/captures`` and the lab's, it counts the statements no capture
can support (``unsupported``): an RTT or handshake RTT above 10 s, a window of 0 bytes outside a
zero-window event, a round trip of 0.0 ms, more round trips than the flow's active time over its
minimum RTT, time lost above the capture's duration, a rate the capture did not measure (a rate a
finding asks for above the fastest the capture showed in any 100 ms) or a window read without its
scale (the handshake not captured and the scale not inferred).

It is a command, not a test: it prints numbers and exits 0; the thresholds of the diagnosis are
decided on the tuning part only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tcplens.capture import read_capture
from tcplens.errors import TcplensError
from tcplens.report import analyse_capture
from tcplens.tcp.model import TcpAnalysis

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_LAB = Path(__file__).resolve().parent / "out"
DEFAULT_SHARED = ROOT / "../shared/captures"
UNLABELLED = ("corpus/real-world", "corpus/tcpdump-tests", "corpus/practical-packet-analysis")
CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap", ".gz", ".zst", ".pcap.gz", ".dmp", ".trace")
MAX_RTT_S = 10.0
RATE_BIN_S = 0.1  # "measured": the fastest a flow direction moved in any bin this long
RATE_SLACK = 1.25  # a rate within this factor of the measured one is the measured one, rounded

# Words of the findings that state numbers (wording.py's units).
_RATE = re.compile(r"(\d+(?:\.\d+)?) (kbit|Mbit|Gbit)/s")
_RUN_AT = re.compile(r"[Tt]o run at (\d+(?:\.\d+)?) (kbit|Mbit|Gbit)/s")
_ROUND_TRIPS = re.compile(r"(\d+) round trips")
_ZERO_RTT = re.compile(r"round trips? (?:of|takes|took) 0\.0 ms|\b0\.0 ms round trip")
_RTT_TEXT = re.compile(r"(\d+(?:\.\d+)?) (ms|s) round trip|round trips? of (\d+(?:\.\d+)?) (ms|s)")
_ZERO_WINDOW_TEXT = re.compile(r"window (?:of|never exceeded|of up to) 0 bytes")
_WINDOW_TEXT = re.compile(
    r"window (?:never exceeded|of up to|of about|of) (\d+(?:\.\d+)?) (bytes|KB|MB)"
)
_UNIT_BITS = {"kbit": 1e3, "Mbit": 1e6, "Gbit": 1e9}


@dataclass
class Result:
    """What the diagnosis said about one capture, and what the eval checked."""

    name: str
    path: Path
    report: dict[str, Any] | None
    error: str | None = None
    unsupported: list[str] = field(default_factory=list)


def analyse(path: Path) -> tuple[dict[str, Any] | None, TcpAnalysis | None, str | None]:
    try:
        capture = read_capture(path)
        analysis, report = analyse_capture(capture)
    except TcplensError as exc:  # not a capture tcplens reads: rejected, nothing stated
        return None, None, f"rejected: {exc}"
    return report, analysis, None


# ------------------------------------------------------------------------ unsupported statements


def measured_max_rate_bps(analysis: TcpAnalysis) -> float:
    """The fastest any flow direction moved payload over any ``RATE_BIN_S`` bin (bits/s)."""
    seg = analysis.segments
    if seg.time_ns.size == 0:
        return 0.0
    rows = np.repeat(np.arange(seg.offsets.size - 1), np.diff(seg.offsets))
    t0 = int(seg.time_ns.min())
    bins = (seg.time_ns - t0) // int(RATE_BIN_S * 1e9)
    keys = rows.astype(np.int64) * (int(bins.max()) + 1) + bins
    _, inverse = np.unique(keys, return_inverse=True)
    per_bin = np.bincount(inverse.ravel(), weights=seg.payload_len.astype(np.float64))
    return float(per_bin.max()) * 8 / RATE_BIN_S if per_bin.size else 0.0


def unsupported(report: dict[str, Any], analysis: TcpAnalysis) -> list[str]:
    """The statements of one report that the capture cannot support, each as one line."""
    out: list[str] = []
    duration = float(report["capture"]["duration_s"])
    flows = {f["id"]: f for f in report["flows"]}
    # (zero_windows.flow is the 0-based flow row; ids are rows + 1)
    zero_ids = {int(r) + 1 for r in np.unique(analysis.zero_windows.flow)}
    max_rate = None
    for f in report["flows"]:
        for key in ("min", "median", "p95"):
            if f["rtt_ms"] is not None and f["rtt_ms"][key] > MAX_RTT_S * 1e3:
                out.append(f"flow {f['id']}: RTT {key} {f['rtt_ms'][key]} ms > 10 s")
        hs = f["handshake_rtt_ms"]
        if hs is not None and hs > MAX_RTT_S * 1e3:
            out.append(f"flow {f['id']}: handshake RTT {hs} ms > 10 s")
        if hs is not None and hs == 0.0:
            out.append(f"flow {f['id']}: handshake RTT of 0.0 ms")
    for g in report["findings"]:
        text = f"{g['title']} {g['summary']} {g['fix']}"
        code, ids = g["code"], g["flows"]
        ev = g["evidence"]
        if g["time_lost_s"] is not None and g["time_lost_s"] > duration + 1e-6:
            out.append(f"{code}: time lost {g['time_lost_s']:.3f} s > capture {duration:.3f} s")
        rtt_ms = ev.get("rtt_ms")
        if rtt_ms is not None and (rtt_ms > MAX_RTT_S * 1e3 or rtt_ms == 0.0):
            out.append(f"{code}: evidence rtt_ms {rtt_ms}")
        for m in _RTT_TEXT.finditer(text):
            value, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            seconds = float(value) / (1e3 if unit == "ms" else 1.0)
            if seconds > MAX_RTT_S:
                out.append(f"{code}: says a round trip of {value} {unit}")
        if _ZERO_RTT.search(text):
            out.append(f"{code}: says a round trip of 0.0 ms")
        if (_ZERO_WINDOW_TEXT.search(text) or ev.get("advertised_window_bytes") == 0) and not (
            set(ids) & zero_ids
        ):
            out.append(f"{code}: a window of 0 bytes in flows {ids} without a zero-window event")
        # Round trips: at most the flows' active time over their smallest RTT.
        bound = 0.0
        for i in ids:
            fl = flows.get(i)
            if fl and fl["rtt_ms"] and fl["rtt_ms"]["min"] > 0:
                bound += fl["duration_s"] / (fl["rtt_ms"]["min"] / 1e3)
            elif fl and fl["handshake_rtt_ms"]:
                bound += fl["duration_s"] / (fl["handshake_rtt_ms"] / 1e3)
        for m in _ROUND_TRIPS.finditer(text):
            n = int(m.group(1))
            if n > 1.05 * bound + 1:
                out.append(f"{code}: {n} round trips > {bound:.0f} (active time / min RTT)")
        # Rates asked for: the capture must have shown them.
        for m in _RUN_AT.finditer(text):
            bps = float(m.group(1)) * _UNIT_BITS[m.group(2)]
            if max_rate is None:
                max_rate = measured_max_rate_bps(analysis)
            if bps > RATE_SLACK * max_rate:
                out.append(
                    f"{code}: 'to run at {m.group(1)} {m.group(2)}/s' but the capture showed at "
                    f"most {max_rate / 1e6:.1f} Mbit/s"
                )
        # A window in bytes needs the receiver's window scale: from the handshake, or inferred
        # (the window findings' evidence names the receiver's; else any side unknown counts).
        if _WINDOW_TEXT.search(text) and "inferred" not in text:
            if "window_scale" in ev:
                if ev["window_scale"] < 0:
                    out.append(f"{code}: a window in bytes without the receiver's window scale")
                continue
            for i in ids:
                fl = flows.get(i)
                if fl and (
                    fl["window_scale"]["client"] is None or fl["window_scale"]["server"] is None
                ):
                    out.append(f"{code}: a window in bytes for flow {i} without its window scale")
                    break
    return out


# --------------------------------------------------------------------------------- capture sets


@dataclass
class Labelled:
    """A capture with its truth: the first finding's factor, and per client port a flow's."""

    name: str
    path: Path
    expected: str
    part: str  # "tuning", "held out", or the shared set's name
    flow_truth: dict[int, str] | None  # client port -> factor; None: every payload flow
    pair: str | None = None  # the same transfer captured at the other end: its name
    # the kernel's counters did not confirm the scenario's factor (ground_truth.py): its truth
    # is in doubt, so it is listed but not counted
    disputed: list[str] = field(default_factory=list)


def lab_captures(lab: Path) -> list[Labelled]:
    manifest_path = lab / "manifest.json"
    if not manifest_path.exists():
        return []
    out = []
    for name, e in sorted(json.loads(manifest_path.read_text()).items()):
        if not e.get("file") or "error" in e:
            continue
        part = "held out" if e.get("heldout") else "tuning"
        truth = {int(f["client_port"]): f["expected_factor"] for f in e.get("flows") or []}
        factor = e["expected_primary_factor"]
        other = e.get("other_end")
        at = e["capture_at"]
        disputed = [
            f"failed: {c['check']} ({c['source']}: {c['value']})"
            for c in e["ground_truth"]["checks"]
            if not c["passed"]
        ]
        out.append(
            Labelled(
                f"{name}@{at}",
                lab / e["file"],
                factor,
                part,
                truth or None,
                f"{name}@{other['capture_at']}" if other else None,
                disputed,
            )
        )
        if other:
            out.append(
                Labelled(
                    f"{name}@{other['capture_at']}",
                    lab / other["file"],
                    factor,
                    part,
                    truth or None,
                    f"{name}@{at}",
                    disputed,
                )
            )
    return out


def shared_lab(shared: Path) -> list[Labelled]:
    path = shared / "lab" / "manifest.json"
    if not path.exists():
        return []
    return [
        Labelled(name, shared / e["file"], e["expected_primary_factor"], "shared lab", None)
        for name, e in sorted(json.loads(path.read_text()).items())
    ]


def unlabelled(shared: Path) -> Iterator[tuple[str, Path]]:
    for set_name in UNLABELLED:
        folder = shared / set_name
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.is_file() and path.name.lower().endswith(CAPTURE_SUFFIXES):
                yield set_name.split("/")[-1], path


# ------------------------------------------------------------------------------------ the tables


def port_of(endpoint: str) -> int:
    return int(endpoint.rsplit(":", 1)[1])


def flow_verdicts(report: dict[str, Any], lab: Labelled) -> list[tuple[str, str]]:
    """(expected, diagnosed) limiting factor of each flow that has a truth."""
    if lab.expected == "dns" and lab.flow_truth is None:
        return []
    pairs = []
    for f in report["flows"]:
        if not (f["bytes"]["client_to_server"] + f["bytes"]["server_to_client"]):
            continue
        truth = (
            lab.flow_truth.get(port_of(f["client"])) if lab.flow_truth is not None else lab.expected
        )
        if truth is not None:
            pairs.append((truth, f["limiting_factor"] or "none"))
    return pairs


def percent(n: int, d: int) -> str:
    return f"{100 * n / d:5.1f}% ({n}/{d})" if d else "    - (0/0)"


def print_accuracy(rows: list[tuple[Labelled, Result]]) -> dict[str, Any]:
    parts: dict[str, list[tuple[Labelled, Result]]] = defaultdict(list)
    for lab, res in rows:
        if not lab.disputed:
            parts[lab.part].append((lab, res))
    summary: dict[str, Any] = {}
    print("\n== accuracy (first finding's factor; each flow's limiting factor) ==")
    print(f"{'part':12s} {'captures':>8s} {'first finding':>18s} {'flow limiting factor':>22s}")
    for part in ("tuning", "held out", "shared lab"):
        got = parts.get(part, [])
        first_ok = sum(1 for lab, r in got if first_factor(r) == lab.expected)
        named = [(lab.name, p) for lab, r in got if r.report for p in flow_verdicts(r.report, lab)]
        flows = [p for _, p in named]
        flow_ok = sum(1 for e, d in flows if e == d)
        print(
            f"{part:12s} {len(got):8d} {percent(first_ok, len(got)):>18s} "
            f"{percent(flow_ok, len(flows)):>22s}"
        )
        summary[part] = {
            "captures": len(got),
            "first_ok": first_ok,
            "flows": len(flows),
            "flows_ok": flow_ok,
            "wrong": [
                {"capture": lab.name, "expected": lab.expected, "first": first_factor(r)}
                for lab, r in got
                if first_factor(r) != lab.expected
            ],
            "wrong_flows": [
                {"capture": name, "expected": e, "limiting": d} for name, (e, d) in named if e != d
            ],
        }
    disputed = [(lab, r) for lab, r in rows if lab.disputed]
    for lab, r in disputed:
        print(
            f"  not counted (the run does not confirm {lab.expected}: {'; '.join(lab.disputed)}): "
            f"{lab.name}, first {first_factor(r)}"
        )
    summary["disputed"] = [
        {"capture": lab.name, "expected": lab.expected, "first": first_factor(r)}
        for lab, r in disputed
    ]
    for part in ("tuning", "held out", "shared lab"):
        wrong = summary[part]["wrong"]
        for w in wrong:
            print(f"  wrong ({part}): {w['capture']}: expected {w['expected']}, first {w['first']}")
        for w in summary[part]["wrong_flows"]:
            print(
                f"  flow wrong ({part}): {w['capture']}: expected {w['expected']}, "
                f"limiting {w['limiting']}"
            )
    return summary


def first_factor(res: Result) -> str:
    if res.report is None:
        return "error"
    findings = res.report["findings"]
    return str(findings[0]["factor"]) if findings else "none"


def print_confusion(rows: list[tuple[Labelled, Result]]) -> dict[str, dict[str, int]]:
    matrix: dict[str, Counter[str]] = defaultdict(Counter)
    for lab, res in rows:
        if lab.disputed:
            continue
        matrix[lab.expected][first_factor(res)] += 1
    cols = sorted({c for row in matrix.values() for c in row})
    short = {c: c[:8] for c in cols}
    print(
        "\n== confusion matrix: first finding (rows: expected, columns: diagnosed; all labelled) =="
    )
    print(f"{'':18s}" + "".join(f"{short[c]:>9s}" for c in cols) + "   right")
    for exp in sorted(matrix):
        row = matrix[exp]
        total = sum(row.values())
        print(
            f"{exp:18s}"
            + "".join(f"{row.get(c, 0) or '.':>9}" for c in cols)
            + f"   {percent(row.get(exp, 0), total)}"
        )
    return {e: dict(r) for e, r in matrix.items()}


def print_invariance(rows: list[tuple[Labelled, Result]]) -> dict[str, Any]:
    by_name = {lab.name: (lab, res) for lab, res in rows}
    seen: set[str] = set()
    agree, pairs, lines = 0, 0, []
    for lab, res in rows:
        if lab.pair is None or lab.name in seen or lab.pair not in by_name:
            continue
        seen |= {lab.name, lab.pair}
        other_lab, other = by_name[lab.pair]
        pairs += 1
        a, b = first_factor(res), first_factor(other)
        per_a = conn_factors(res)
        per_b = conn_factors(other)
        common = set(per_a) & set(per_b)
        same_flows = all(per_a[p] == per_b[p] for p in common)
        ok = a == b and same_flows
        agree += ok
        if not ok:
            diff = {p: (per_a[p], per_b[p]) for p in common if per_a[p] != per_b[p]}
            lines.append(
                f"  differ: {lab.name} first {a} vs {other_lab.name} first {b}; flows {diff}"
            )
    print("\n== capture-point invariance (same transfer captured at both ends in one run) ==")
    print(
        f"pairs agreeing (first finding and every connection's limiting factor): {percent(agree, pairs)}"
    )
    for line in lines:
        print(line)
    return {"pairs": pairs, "agree": agree, "differ": lines}


def conn_factors(res: Result) -> dict[int, str]:
    if res.report is None:
        return {}
    return {
        port_of(f["client"]): f["limiting_factor"] or "none"
        for f in res.report["flows"]
        if f["bytes"]["client_to_server"] + f["bytes"]["server_to_client"]
    }


def print_unsupported(results: dict[str, list[Result]]) -> dict[str, Any]:
    print("\n== statements no capture can support ==")
    print(
        f"{'capture set':26s} {'captures':>8s} {'rejected':>8s} {'statements':>10s} {'captures with any':>18s}"
    )
    out: dict[str, Any] = {}
    kinds: Counter[str] = Counter()
    for set_name, res in results.items():
        n = sum(len(r.unsupported) for r in res)
        with_any = sum(1 for r in res if r.unsupported)
        rejected = sum(1 for r in res if r.report is None)
        print(f"{set_name:26s} {len(res):8d} {rejected:8d} {n:10d} {with_any:18d}")
        out[set_name] = {
            "captures": len(res),
            "rejected": rejected,
            "statements": n,
            "examples": [f"{r.path.name}: {u}" for r in res for u in r.unsupported],
        }
        for r in res:
            for u in r.unsupported:
                kinds[kind_of(u)] += 1
    for kind, n in kinds.most_common():
        print(f"  {kind}: {n}")
    for set_name, v in out.items():
        for example in v["examples"][:8]:
            print(f"  {set_name}: {example}")
    return out


def kind_of(statement: str) -> str:
    for key, kind in (
        ("> 10 s", "RTT above 10 s"),
        ("of 0.0 ms", "round trip of 0.0 ms"),
        ("rtt_ms 0.0", "round trip of 0.0 ms"),
        ("without a zero-window", "window of 0 bytes outside a zero-window event"),
        ("round trips >", "more round trips than active time / min RTT"),
        ("time lost", "time lost above the capture's duration"),
        ("to run at", "a rate the capture did not measure"),
        ("window scale", "a window the capture did not measure"),
    ):
        if key in statement:
            return kind
    return "other"


def run(lab_dir: Path, shared: Path, sets: set[str] | None = None) -> dict[str, Any]:
    started = time.monotonic()
    labelled = (lab_captures(lab_dir) if not sets or "lab" in sets else []) + (
        shared_lab(shared) if not sets or "shared-lab" in sets else []
    )
    rows: list[tuple[Labelled, Result]] = []
    by_set: dict[str, list[Result]] = defaultdict(list)
    for lab in labelled:
        res = evaluate(lab.name, lab.path)
        rows.append((lab, res))
        by_set[
            "lab (own, tuning)"
            if lab.part == "tuning"
            else "lab (own, held out)"
            if lab.part == "held out"
            else "lab (shared)"
        ].append(res)
    for set_name, path in unlabelled(shared):
        if not sets or set_name in sets:
            by_set[set_name].append(evaluate(path.name, path))
    print(
        f"make eval: {len(rows)} labelled captures ({lab_dir}, {shared / 'lab'}), "
        f"{sum(len(v) for v in by_set.values()) - len(rows)} unlabelled, "
        f"{time.monotonic() - started:.0f} s"
    )
    return {
        "accuracy": print_accuracy(rows),
        "confusion": print_confusion(rows),
        "invariance": print_invariance([(lab, r) for lab, r in rows if lab.pair]),
        "unsupported": print_unsupported(dict(by_set)),
        "first_findings": {
            lab.name: {"expected": lab.expected, "first": first_factor(r), "part": lab.part}
            for lab, r in rows
        },
    }


PROGRESS = False


def evaluate(name: str, path: Path) -> Result:
    if not path.exists():
        return Result(name, path, None, "missing")
    if PROGRESS:
        print(f"  {path}", file=sys.stderr, flush=True)
    report, analysis, error = analyse(path)
    res = Result(name, path, report, error)
    if report is not None and analysis is not None:
        res.unsupported = unsupported(report, analysis)
    return res


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.evaluate", description=__doc__)
    parser.add_argument("--lab", type=Path, default=DEFAULT_LAB, help="a `make lab` output folder")
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument(
        "--sets",
        help="comma-separated: lab, shared-lab, real-world, tcpdump-tests, "
        "practical-packet-analysis (default: all)",
    )
    parser.add_argument("--progress", action="store_true", help="print each capture as it goes")
    args = parser.parse_args()
    global PROGRESS
    PROGRESS = args.progress
    result = run(args.lab, args.shared.resolve(), set(args.sets.split(",")) if args.sets else None)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
