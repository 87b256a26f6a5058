"""The ``tcplens`` command: a thin dispatcher over the subcommands in ``tcplens.commands``.

To add a subcommand, write ``tcplens/commands/<name>.py`` with ``register(subcommands)`` that adds its
parser and sets ``run=<function(args) -> exit code>``, then list the module in ``SUBCOMMANDS``.
Registration must stay cheap: import heavy modules inside ``run``. A command that does one job
and ends (``analyze``) sets ``one_shot=True`` in its defaults: run as the ``tcplens`` program (not
called from Python with an ``argv``), it then owns the process (see ``_start_one_shot``).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

import tcplens
from tcplens.commands import analyze, db, serve, tokens, upload, users, worker

SUBCOMMANDS = (serve, db, analyze, worker, upload, users, tokens)

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tcplens", description=tcplens.__doc__)
    parser.add_argument("--version", action="version", version=f"tcplens {tcplens.__version__}")
    subcommands = parser.add_subparsers(title="commands", metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.register(subcommands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse exits on --help, --version and usage errors
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    if not hasattr(args, "run"):
        parser.print_usage(sys.stderr)
        return EXIT_USAGE
    one_shot = argv is None and getattr(args, "one_shot", False)
    args.one_shot = one_shot  # the command sees whether it owns the process
    if one_shot:
        _start_one_shot()
    try:
        code: int = args.run(args)
    except KeyboardInterrupt:
        code = 130
    if one_shot:
        _end_one_shot(code)
    return code


def _start_one_shot() -> None:
    """Process-wide settings for a process that does one job and exits.

    - numpy's bundled OpenBLAS starts a pool of threads when numpy is imported, which spin
      waiting for work (3.4% of a 5M-packet analysis's CPU samples in perf); nothing here uses
      BLAS. Read by OpenBLAS when it loads, so set before numpy is imported; the user's own
      setting wins.
    - No cyclic garbage collection: importing numpy and numba and loading the kernels allocate
      ~10^5 objects that live until the end, and the collector traversed them again and again
      (gc_collect_main 14% of the CPU samples of a small capture's analysis). What the analysis
      frees, reference counting frees.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    gc.disable()


def _end_one_shot(code: int) -> NoReturn:
    """Exit once the output is out, without tearing down the interpreter.

    Finalisation would free every object and unmap every array one by one: 0.3 s after the
    JSON of a 5M-packet capture was written. The command has flushed and closed what it writes;
    the flushes here are for anything left in the buffers (a broken pipe was already answered).
    """
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:  # None: the process started with that descriptor closed
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
