"""The ``tcplens`` command: a thin dispatcher over the subcommands in ``tcplens.commands``.

To add a subcommand, write ``tcplens/commands/<name>.py`` with ``register(subcommands)`` that adds its
parser and sets ``run=<function(args) -> exit code>``, then list the module in ``SUBCOMMANDS``.
Registration must stay cheap: import heavy modules inside ``run``. A command that does one job
and ends (``analyze``) sets ``one_shot=True`` in its defaults: run as the ``tcplens`` program (not
called from Python with an ``argv``), it then owns the process (``tcplens.runtime.one_shot``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import tcplens
from tcplens import runtime
from tcplens.commands import analyze, compare, db, kernels, serve, tokens, upload, users, worker

SUBCOMMANDS = (serve, db, analyze, compare, worker, upload, users, tokens, kernels)

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
        runtime.one_shot()
    try:
        code: int = args.run(args)
    except KeyboardInterrupt:
        code = 130
    if one_shot:
        runtime.exit_now(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
