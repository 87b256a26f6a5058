"""``tcplens analyze CAPTURE --json [--events]``: analyse one capture file and print the result.

Exit codes (DESIGN.md): 0 analysed (warnings allowed), 2 usage error, 3 not a capture we can
read (one line on stderr), 1 internal error (one line on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_UNREADABLE = 3


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser("analyze", help="analyse a capture file and print the result")
    parser.add_argument("capture", help="pcap or pcapng file, optionally gzip- or zstd-compressed")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.add_argument("--events", action="store_true", help="include per-frame TCP events")
    parser.set_defaults(run=run, one_shot=True)


def run(args: argparse.Namespace) -> int:
    if not args.json:
        print("tcplens analyze: --json is required (the only output format)", file=sys.stderr)
        return EXIT_USAGE
    if sys.stdout is None:  # started with its standard output closed (`>&-`): nowhere to write
        if sys.stderr is not None:
            print(
                "tcplens: standard output is closed, nowhere to write the result", file=sys.stderr
            )
        return EXIT_INTERNAL
    from tcplens.capture import read_capture
    from tcplens.capture.errors import CaptureError
    from tcplens.report import analyse_capture, write_report

    try:
        capture = read_capture(args.capture)
    except CaptureError as error:
        print(f"tcplens: {args.capture}: {error}", file=sys.stderr)
        return EXIT_UNREADABLE
    except OSError as error:
        print(f"tcplens: {args.capture}: {error.strerror or error}", file=sys.stderr)
        return EXIT_UNREADABLE
    try:
        analysis, report = analyse_capture(capture, consume_packets=True)
    except Exception as error:  # never a traceback for the user (DESIGN.md exit 1)
        print(f"tcplens: internal error while analysing {args.capture}: {error!r}", file=sys.stderr)
        return EXIT_INTERNAL
    segments = analysis.segments if args.events else None
    try:
        # bytes to the binary stream in a few large writes (the events a chunk at a time):
        # json.dump would stream thousands of small chunks through the text layer
        sys.stdout.flush()
        binary = getattr(sys.stdout, "buffer", None)
        write_report(_text_writer(sys.stdout) if binary is None else binary.write, report, segments)
        sys.stdout.flush()  # the text layer flushes its binary buffer too
    except BrokenPipeError:  # `tcplens analyze ... | head`: the reader left, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_OK


def _text_writer(stream: Any) -> Any:
    """``write`` for a text-only standard output (a caller's replacement without ``buffer``):
    the report's text is ASCII."""
    return lambda chunk: stream.write(bytes(chunk).decode("ascii"))
