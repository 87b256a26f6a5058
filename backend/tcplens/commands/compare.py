"""``tcplens compare BEFORE AFTER [--json]``: the same transfer captured before and after a change.

Prints what changed in the cause (findings resolved, remaining, new), the transfers matched by
server and size with their durations and rates and the speed-up, and BEFORE's prediction of
what the fix buys next to what AFTER measured (DESIGN.md ``tcplens compare``).

Exit codes: 0 compared; 2 usage error; 3 a file is not a capture we can read (one line on
stderr); 4 the captures share no transfer to compare (no common server, or none of the same
size: one line on stderr saying which servers each has); 1 internal error.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_UNREADABLE = 3
EXIT_NOTHING_TO_COMPARE = 4


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "compare", help="compare two captures of the same transfer (before and after a change)"
    )
    parser.add_argument("before", help="capture before the change (pcap/pcapng, gzip/zstd)")
    parser.add_argument("after", help="capture after the change")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tcplens.capture import read_capture
    from tcplens.capture.errors import CaptureError
    from tcplens.diagnosis.comparison import NothingToCompare, compare_reports
    from tcplens.report import analyse_capture

    reports = []
    for path in (args.before, args.after):
        try:
            capture = read_capture(path)
        except CaptureError as error:
            print(f"tcplens: {path}: {error}", file=sys.stderr)
            return EXIT_UNREADABLE
        except OSError as error:
            print(f"tcplens: {path}: {error.strerror or error}", file=sys.stderr)
            return EXIT_UNREADABLE
        try:
            reports.append(analyse_capture(capture)[1])
        except Exception as error:  # never a traceback for the user
            print(f"tcplens: internal error while analysing {path}: {error!r}", file=sys.stderr)
            return EXIT_INTERNAL
    try:
        result = compare_reports(reports[0], reports[1], args.before, args.after)
    except NothingToCompare as error:
        print(f"tcplens: nothing to compare: {error}", file=sys.stderr)
        return EXIT_NOTHING_TO_COMPARE
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(text(result))
    return EXIT_OK


def text(result: dict[str, Any]) -> str:
    """The comparison for a terminal: the summary, then one line per transfer and finding."""
    lines = [result["summary"], ""]
    for t in result["transfers"]:
        lines.append(
            f"  {t['server']:<28} {t['bytes']:>12} bytes  "
            f"{t['before_s']:.3f} s -> {t['after_s']:.3f} s  x{t['speedup']:.2f}  "
            f"({t['before_connections']} -> {t['after_connections']} connections)"
        )
        for p in t["predictions"]:
            lines.append(f"    predicted by {p['code']}: {p['duration_s']:.3f} s ({p['basis']})")
    for f in result["findings"]:
        lines.append(f"  {f['status']:<9} {f['code']:<26} {f['server']}")
    return "\n".join(lines)
