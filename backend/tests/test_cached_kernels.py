"""``tcplens.commands.cached_kernels``: kernels loaded from numba's cache without their bitcode
run, and code compiled later in the same process still links them (the bitcode is parsed then).

Each case runs in a fresh interpreter: the hooks are process-wide, and numba's cache is only read
by a process that did not compile the kernel itself.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

KERNELS = """
import numba
import numpy as np

@numba.njit(cache=True)
def weighted_sum(values, weight):
    scaled = np.empty(values.size, np.int64)
    for i in range(values.size):
        scaled[i] = values[i] * weight
    return scaled.sum()

@numba.njit(cache=True)
def zeros(n):
    out = np.empty(n, np.int64)
    out[:] = 0
    return out

@numba.njit(cache=True, parallel=True)
def squares(n):
    out = np.empty(n, np.int64)
    for i in numba.prange(n):
        out[i] = i * i
    return out
"""

COMPILE_AND_COMPARE_SYMBOLS = """
import llvmlite.binding as ll
import numpy as np
from kernels import weighted_sum, zeros
from tcplens.commands.cached_kernels import elf_defined_symbols

assert weighted_sum(np.arange(5), 3) == 30
assert zeros(3).tolist() == [0, 0, 0]
(library,) = [o.library for o in weighted_sum.overloads.values()]
name, kind, (object_code, bitcode) = library.serialize_using_object_code()
module = ll.parse_bitcode(bitcode)
from_bitcode = {
    g.name for group in (module.functions, module.global_variables) for g in group
    if not g.is_declaration
}
from_elf = elf_defined_symbols(object_code)
assert from_elf == from_bitcode, (from_elf ^ from_bitcode)
assert any(n.startswith("_ZN") and "weighted_sum" in n for n in from_elf)
print("compiled")
"""

LOAD_LAZILY_THEN_LINK = """
import sys
from tcplens.commands.cached_kernels import load_cached_kernels_quickly
load_cached_kernels_quickly(one_process=True)
load_cached_kernels_quickly(one_process=True)  # idempotent
assert "yaml" not in sys.modules  # numba imported without it
import yaml  # and it still imports afterwards
from numba.core import caching
assert caching._CacheLocator.ensure_cache_path.once_per_folder
import llvmlite.binding as ll
assert ll.ffi.lib._lock._cblist == []  # no numba event around each LLVM call
import numba
import numpy as np
from kernels import squares, weighted_sum, zeros

assert weighted_sum(np.arange(5), 3) == 30
assert zeros(3).tolist() == [0, 0, 0]
try:  # raised by numba's np.empty, whose environment holds no imported module
    zeros(-1)
except ValueError as error:
    assert "negative dimensions" in str(error)
else:
    raise AssertionError("np.empty(-1) did not raise")
(library,) = [o.library for o in weighted_sum.overloads.values()]
assert "_linking_bitcode" in vars(library), "loaded from the cache, bitcode not parsed yet"
# np.empty's implementation lives there; its environment was rebuilt without importing it
assert "numba.np.arrayobj" not in sys.modules
from numba.core.runtime.nrt import rtsys
assert rtsys._library._library is None, "numba's runtime module compiled before anything links it"

@numba.njit
def twice(values, weight):  # compiled now: links the cached kernel's library into new code
    doubled = np.empty(1, np.int64)
    doubled[0] = weighted_sum(values, weight) * 2
    return doubled[0]

assert twice(np.arange(4), 2) == 24
assert len(weighted_sum.overloads) == 1  # the cached one, not compiled again
assert "_linking_bitcode" not in vars(library) and library._shared_module is not None
assert rtsys._library._library is not None
# numba imported importlib.metadata without running it; its first use runs it
assert type(sys.modules["importlib.metadata"]).__name__ == "_LazyModule"
import importlib.metadata
assert importlib.metadata.version("numpy") == np.__version__
assert squares(4).tolist() == [0, 1, 4, 9]  # numba's threads started without a process lock
assert "multiprocessing" not in sys.modules
print("loaded")
"""


UNVERIFIED_NUMBA_KEEPS_ITS_OWN_PATH = """
import numba
import numpy as np
numba.__version__ = "0.99.0"  # a version the hooks were not checked against
from numba.core import caching, codegen, environment
from tcplens.commands.cached_kernels import load_cached_kernels_quickly, numba_verified
load_cached_kernels_quickly(one_process=True)
assert not numba_verified()
assert not hasattr(codegen.CPUCodeLibrary, "_lazy_linking")
assert not getattr(environment._rebuild_env, "imports_nothing", False)
assert not getattr(caching.Cache.load_overload, "skips_registry_refresh", False)
assert not getattr(caching._CacheLocator.ensure_cache_path, "once_per_folder", False)
from kernels import squares, weighted_sum, zeros

assert weighted_sum(np.arange(5), 3) == 30  # loaded from the cache by numba itself
assert zeros(3).tolist() == [0, 0, 0]
assert squares(4).tolist() == [0, 1, 4, 9]
import llvmlite.binding as ll
assert ll.ffi.lib._lock._cblist  # numba's event callbacks stay

(library,) = [o.library for o in weighted_sum.overloads.values()]
assert "_linking_bitcode" not in vars(library) and library._shared_module is not None
print("own path")
"""


def _run(folder: Path, script: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=folder, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_elf_symbols_match_the_bitcode_and_cached_kernels_load_lazily(tmp_path: Path) -> None:
    (tmp_path / "kernels.py").write_text(KERNELS)
    assert _run(tmp_path, COMPILE_AND_COMPARE_SYMBOLS).strip() == "compiled"
    assert list((tmp_path / "__pycache__").glob("kernels.weighted_sum-*.nbc"))
    assert _run(tmp_path, LOAD_LAZILY_THEN_LINK).strip() == "loaded"
    assert _run(tmp_path, UNVERIFIED_NUMBA_KEEPS_ITS_OWN_PATH).strip() == "own path"


def test_the_installed_numba_is_one_the_hooks_were_checked_against() -> None:
    # Fails after a numba upgrade on purpose: tcplens analyze would silently load kernels the
    # slow way. Read the internals cached_kernels.py replaces in the new version, then add it
    # to VERIFIED_NUMBA.
    import numba

    from tcplens.commands.cached_kernels import numba_verified

    assert numba_verified(), f"numba {numba.__version__}: check cached_kernels.py against it"


def test_not_an_elf_object_leaves_numba_to_scan_the_bitcode() -> None:
    from tcplens.commands.cached_kernels import elf_defined_symbols

    assert elf_defined_symbols(b"\xcf\xfa\xed\xfe" + bytes(60)) is None  # Mach-O
    assert elf_defined_symbols(b"") is None
