"""``tcplens.commands.cached_dataclasses``: the methods ``@dataclass`` writes are compiled once and
then come from the cache file, and classes built from it behave exactly as classes built without.

Each case runs in a fresh interpreter: the cache is process-wide (``dataclasses.exec``).
"""

from __future__ import annotations

import importlib.util
import marshal
import subprocess
import sys
import textwrap
from pathlib import Path

SHAPES = """
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Span:
    start_ns: int
    end_ns: int = -1
    tags: list[str] = field(default_factory=list)


@dataclass(order=True)
class Count:
    name: str
    n: int = 0
"""

BUILD = """
import dataclasses
import sys
from pathlib import Path
from tcplens.commands.cached_dataclasses import compile_dataclass_methods_once

methods = compile_dataclass_methods_once(Path(sys.argv[1]))
assert methods is not None
assert compile_dataclass_methods_once(Path(sys.argv[1])) is None  # installed once per process
import shapes

compiled = methods.compiled
methods.save()
print(compiled, len(methods.used))
"""

COMPARE = """
import dataclasses
import importlib.util
import inspect
import sys
from pathlib import Path
from tcplens.commands.cached_dataclasses import compile_dataclass_methods_once

methods = compile_dataclass_methods_once(Path(sys.argv[1]))
import shapes

assert methods.compiled == 0, "every method came from the file"
del dataclasses.exec  # the same module again, compiled by dataclasses itself
spec = importlib.util.spec_from_file_location("shapes_ref", shapes.__file__)
ref = sys.modules["shapes_ref"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)

for name in ("Span", "Count"):
    ours, theirs = getattr(shapes, name), getattr(ref, name)
    for method in ("__init__", "__repr__", "__eq__"):
        a, b = getattr(ours, method), getattr(theirs, method)
        assert inspect.signature(a) == inspect.signature(b), (name, method)
        assert a.__annotations__ == b.__annotations__, (name, method)
        assert a.__qualname__ == b.__qualname__, (name, method)
        assert a.__code__.co_code == b.__code__.co_code, (name, method)
span = shapes.Span(3)
assert repr(span) == "Span(start_ns=3, end_ns=-1, tags=[])"
assert span == shapes.Span(3, -1, []) and span != shapes.Span(4)
try:
    span.start_ns = 5
except dataclasses.FrozenInstanceError:
    pass
else:
    raise AssertionError("a frozen dataclass from the cache accepted an assignment")
assert shapes.Count("a", 2) < shapes.Count("b", 1)
assert shapes.Span(1).tags is not shapes.Span(1).tags  # default_factory called each time
print("same")
"""


def _run(folder: Path, script: str, cache: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), str(cache)],
        cwd=folder, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_methods_compile_once_then_come_from_the_file_unchanged(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES)
    cache = tmp_path / "cache" / "methods.marshal"
    compiled, used = map(int, _run(tmp_path, BUILD, cache).split())
    assert compiled == used >= 7  # Span: init, repr, eq, setattr, delattr, hash; Count: more
    assert cache.is_file()
    assert _run(tmp_path, COMPARE, cache) == "same"
    # a second process that compiled nothing leaves the file as it was
    before = cache.read_bytes()
    assert _run(tmp_path, BUILD, cache).split()[0] == "0"
    assert cache.read_bytes() == before


def test_an_edited_class_is_compiled_again_and_stale_texts_leave_the_file(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES)
    cache = tmp_path / "methods.marshal"
    _, used = map(int, _run(tmp_path, BUILD, cache).split())
    edited = SHAPES.replace("    n: int = 0\n", "    n: int = 0\n    unit: str = 'B'\n")
    (tmp_path / "shapes.py").write_text(edited)
    compiled, used_after = map(int, _run(tmp_path, BUILD, cache).split())
    assert 0 < compiled < used_after == used  # Count's methods changed, Span's did not
    saved = marshal.loads(cache.read_bytes()[len(importlib.util.MAGIC_NUMBER) :])
    assert len(saved) == used_after  # the texts of the old Count are gone
    assert all("unit" in text for text in saved if "def __init__(self,name" in text)


def test_a_damaged_or_foreign_file_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES)
    cache = tmp_path / "methods.marshal"
    for content in (b"", b"not a marshal file", b"\x00" * 64):
        cache.write_bytes(content)
        compiled, used = map(int, _run(tmp_path, BUILD, cache).split())
        assert compiled == used > 0
        assert _run(tmp_path, COMPARE, cache) == "same"  # and it was rewritten whole
