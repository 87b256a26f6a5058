"""``tcplens kernels``: compile the analysis kernels into their cache, once per source change.

An install step (``make run``, ``make test``, the Docker image's build): afterwards no analysis
compiles, it loads machine code (:mod:`tcplens.kernel_cache`). Up to date, it only says so.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "kernels",
        help="compile the analysis kernels into their cache (once per source change)",
        description="Compile every analysis kernel into the kernel cache (TCPLENS_KERNEL_CACHE, "
        "default ~/.cache/tcplens/kernels) unless it is up to date for these sources.",
    )
    parser.add_argument("--quiet", action="store_true", help="print nothing unless it fails")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tcplens import kernel_build, kernel_cache

    path = kernel_cache.use()
    if kernel_cache.is_built(path):
        if not args.quiet:
            print(f"tcplens kernels: up to date ({path})")
        _prune(path, args.quiet)
        return 0
    started = time.monotonic()
    interactive = not args.quiet and sys.stdout.isatty()
    last = [0.0]

    def progress(compiled: int) -> None:
        elapsed = time.monotonic() - started
        line = f"tcplens kernels: compiling, {compiled} kernels compiled ({elapsed:.0f} s)"
        if interactive:
            print(f"\r{line}", end="", flush=True)
        elif not args.quiet and elapsed - last[0] >= 10:  # a log: a line every 10 s
            last[0] = elapsed
            print(line, flush=True)

    if not args.quiet:
        print(f"tcplens kernels: compiling into {path} (about 2 minutes of one core, once)")
    kernel_build.build(progress)
    if interactive:
        print()
    if not args.quiet:
        print(f"tcplens kernels: done in {time.monotonic() - started:.0f} s")
    _prune(path, args.quiet)
    return 0


def _prune(path: Path, quiet: bool) -> None:
    """Remove this checkout's cache directories of other sources (``kernel_cache.prune``)."""
    from tcplens import kernel_cache

    for old in kernel_cache.prune(path):
        if not quiet:
            print(f"tcplens kernels: removed {old} (other sources)")
