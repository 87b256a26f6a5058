"""The rules, one per module (``RULES``: every module here). Their order decides nothing: a
rule that needs another's detection step reads it (``no_connection_reuse.claimed_flows``,
``stop_and_wait.held_flows``), computed once per context.

Each rule module has ``CODE`` (stable, kebab-case, what the JSON ``code`` says), ``FACTOR`` and
``detect(ctx) -> list[Finding]``, and a docstring saying what it detects, why it matters and what
to do, like ruff's rules.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

# Every module of this package, in name order: a new rule is its module and nothing else.
RULES: tuple[ModuleType, ...] = tuple(
    importlib.import_module(f"{__name__}.{info.name}")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name)
)
