"""Compile the methods ``@dataclass`` writes once, not in every ``tcplens analyze`` process.

``@dataclass`` writes the source text of each class's ``__init__``, ``__repr__``, ``__eq__``
(and ``__setattr__``, ``__hash__`` ... when frozen) and compiles it while the class is defined:
the ~36 dataclasses the analysis imports cost 33 ms of CPU, 23 ms of it compiling ~200 small
functions, in every process. A code object depends on nothing but its source text and the
Python version, so the compiled code is kept in a file beside the package's ``.pyc`` files,
keyed by the text itself: a text never seen before (an edited class, another Python) is
compiled as before and added; an entry no class asks for any more is dropped when the file is
next written.

``dataclasses`` compiles its texts with the builtin ``exec`` (CPython 3.11-3.13: one call per
method or per class); a module-level ``exec`` in ``dataclasses`` takes precedence over the
builtin, so that is where the cache goes. Nothing is installed if ``dataclasses`` already has
one. Like numba's kernel cache (and unlike ``.pyc`` files) the file is written whatever
``PYTHONDONTWRITEBYTECODE`` says; a folder that cannot be written only costs the compilation.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any

CACHE_FILE = (
    Path(__file__).resolve().parent.parent
    / "__pycache__"
    / f"dataclass-methods.{sys.implementation.cache_tag}.marshal"
)


class CompiledMethods:
    """The compiled texts of one process, loaded from and saved to ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known = _load(path)
        self.used: dict[str, CodeType] = {}
        self.compiled = 0  # texts this process compiled (not found in the file)

    def exec(self, source: Any, globals: Any = None, locals: Any = None) -> None:
        """``exec`` as ``dataclasses`` calls it, with the text's code from the cache."""
        if globals is None:  # the builtin would use the caller's globals: dataclasses' own
            globals = vars(dataclasses)
        if not isinstance(source, str):
            exec(source, globals, locals)
            return
        code = self.known.get(source)
        if code is None:
            # dont_inherit: compiled as dataclasses' exec would, without this module's
            # ``from __future__ import annotations``
            code = compile(source, "<string>", "exec", dont_inherit=True)
            self.compiled += 1
        self.used[source] = code
        exec(code, globals, locals)

    def save(self) -> None:
        """Write the texts this process used, when it had to compile any of them."""
        if not self.compiled:
            return
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(exist_ok=True)
            temporary.write_bytes(importlib.util.MAGIC_NUMBER + marshal.dumps(self.used))
            os.replace(temporary, self.path)  # readers see the old file or the new one
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink()
            return
        self.compiled = 0


def compile_dataclass_methods_once(path: Path = CACHE_FILE) -> CompiledMethods | None:
    """Serve ``dataclasses``' compilations from ``path`` (process-wide); None if not installed.

    Call before the modules defining the dataclasses are imported, and ``save()`` the result
    once they are (the first run, and a run after an edit, write the file).
    """
    if "exec" in vars(dataclasses):
        return None
    methods = CompiledMethods(path)
    dataclasses.exec = methods.exec  # type: ignore[attr-defined]
    return methods


def _load(path: Path) -> dict[str, CodeType]:
    """The cached code by source text; empty if the file is absent, foreign or damaged."""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    magic = importlib.util.MAGIC_NUMBER
    if not data.startswith(magic):
        return {}
    try:
        known = marshal.loads(data[len(magic) :])
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(known, dict):
        return {}
    return {
        text: code
        for text, code in known.items()
        if isinstance(text, str) and isinstance(code, CodeType)
    }
