"""Load numba's cached kernels with only the work running them needs (``tcplens analyze``).

Much of what numba does when it loads a cached kernel only serves compiling *new* code, which a
run that finds all its kernels in the cache never does: refreshing its whole compiler registry,
parsing each kernel's LLVM bitcode (kept so that a later compilation can inline it) and walking
it for the symbols it defines, importing numba modules for environments only object mode reads,
compiling its own runtime module, scanning installed packages for extensions, importing PyYAML.
Here each waits until a compilation asks for it (or is skipped); the symbols come from the
machine code's own ELF symbol table. A 6-packet capture (19 kernels) went from 0.73 to ~0.28 s
of user CPU with these and the one-shot process settings (tcplens.cli).

The hooks are installed only for the numba versions they were checked against
(``VERIFIED_NUMBA``), and each also checks that numba still has the internals it replaces;
otherwise numba loads kernels its own way. A kernel missing from the cache is compiled as before.
"""

from __future__ import annotations

import struct
import sys
from typing import Any

_ELF64_LSB = b"\x7fELF\x02\x01"
_SHT_SYMTAB = 2
_SHN_UNDEF = 0
_STT_SECTION, _STT_FILE = 3, 4
_SECTION_HEADER = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
_SYMBOL = struct.Struct("<IBBHQQ")  # Elf64_Sym


# numba versions whose internals the hooks were read against and tested with (numba/core/
# caching.py, codegen.py, environment.py, entrypoints.py, runtime/nrt*.py). Any other version
# keeps numba's own loading path: add it here only after checking those files again.
VERIFIED_NUMBA = ((0, 68),)


def load_cached_kernels_quickly(*, one_process: bool = False) -> None:
    """Install the hooks (idempotent, process-wide) when numba is a verified version.

    ``one_process``: the caller is a process that nothing forks and that forks nothing while it
    runs kernels (``tcplens analyze``), not the service's analysis fork server.
    """
    _import_numba_without_yaml()
    if not numba_verified():
        return
    _skip_registry_refresh()
    _check_cache_folders_once()
    _compile_runtime_when_linked()
    _link_lazily()
    _environments_without_imports()
    _skip_extension_entry_points()
    _no_events_around_llvm_calls()
    if one_process:
        _start_threads_without_process_lock()


def numba_verified() -> bool:
    """Whether the installed numba is one the hooks were written for (``VERIFIED_NUMBA``)."""
    try:
        import numba
    except ImportError:
        return False
    try:
        major_minor = tuple(int(part) for part in numba.__version__.split(".")[:2])
    except (AttributeError, ValueError):
        return False
    return major_minor in VERIFIED_NUMBA


def _import_numba_without_yaml() -> None:
    """Import numba without PyYAML, when neither is imported yet.

    numba.core.config imports PyYAML whenever it is installed (the service's dependencies bring
    it), only to read a ``.numba_config.yaml`` in the current directory, which is no business of
    an analysis run from wherever the user stands (``NUMBA_*`` environment variables still
    apply): 10-20 ms of CPU. A ``None`` in ``sys.modules`` makes that import fail as if PyYAML
    were absent (the documented way); the entry is removed again at once.
    """
    if "numba" in sys.modules or "yaml" in sys.modules:
        return
    _import_metadata_when_used()
    sys.modules["yaml"] = None  # type: ignore[assignment]
    try:
        import numba  # noqa: F401
    except ImportError:
        pass
    finally:
        del sys.modules["yaml"]


def _import_metadata_when_used() -> None:
    """Let ``importlib.metadata`` load on its first use rather than when numba imports it.

    numba.core.entrypoints imports it at once, to look for extensions later (which
    ``_skip_extension_entry_points`` skips): with the ``email`` and ``csv`` modules it pulls in,
    12 ms of CPU. The standard library's ``LazyLoader`` runs the module on its first attribute
    access, so whoever uses it still gets the real module.
    """
    name = "importlib.metadata"
    if name in sys.modules:
        return
    import importlib
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        return
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    importlib.metadata = module  # as an import sets it


def _skip_registry_refresh() -> None:
    """Load cached kernels without first refreshing numba's whole compiler registry.

    Before loading a cached kernel numba calls ``target_context.refresh()``, which imports and
    registers every implementation it could ever compile (linalg, random, typed containers,
    jitclass, ~80 modules: 0.1 s of CPU, more than loading the kernels themselves). Loading
    machine code from the cache needs only the runtime (NRT) the kernels call into; a kernel
    that is not in the cache is compiled, and the compiler refreshes the registry itself
    (``CompilerBase.__init__``), so nothing is lost.
    """
    try:
        from numba.core import caching
        from numba.core.runtime.nrt import rtsys
    except ImportError:
        return
    load = getattr(caching.Cache, "_load_overload", None)
    if load is None or not hasattr(caching.Cache, "load_overload"):
        return
    if getattr(caching.Cache.load_overload, "skips_registry_refresh", False):
        return

    def load_overload(self: Any, sig: Any, target_context: Any) -> Any:
        rtsys.initialize(target_context)
        return load(self, sig, target_context)

    load_overload.skips_registry_refresh = True  # type: ignore[attr-defined]
    caching.Cache.load_overload = load_overload  # type: ignore[method-assign]


def _check_cache_folders_once() -> None:
    """Check each cache folder for writing once, not once per kernel defined in it.

    numba checks that a kernel's cache folder is writable when the kernel is defined, by
    creating a temporary file there (``_CacheLocator.ensure_cache_path``): 62 files created and
    deleted in three ``__pycache__`` folders per run, 3-6 ms of CPU and up to 20 ms of wall.
    """
    try:
        from numba.core import caching
    except ImportError:
        return
    locator: Any = getattr(caching, "_CacheLocator", None)
    ensure = getattr(locator, "ensure_cache_path", None)
    if ensure is None or getattr(ensure, "once_per_folder", False):
        return
    checked: set[str] = set()

    def ensure_cache_path(self: Any) -> None:
        path = self.get_cache_path()
        if path not in checked:
            ensure(self)
            checked.add(path)

    ensure_cache_path.once_per_folder = True  # type: ignore[attr-defined]
    locator.ensure_cache_path = ensure_cache_path


def _compile_runtime_when_linked() -> None:
    """Compile numba's own runtime module when new code links it, not when the first kernel loads.

    ``rtsys.initialize`` registers the C runtime's symbols (what cached kernels call) and then
    compiles a small LLVM module of reference counting and atomics (``compile_nrt_functions``,
    numba/core/runtime/nrtdynmod.py; with numba's one-off LLVM self-check: 19 ms of CPU in
    every process). A cached kernel carries its own copy of those functions (linked in when it
    was compiled); only compiling new code links the module (``CPUContext.post_lowering``). So
    the module is compiled on the first use of the library object ``initialize`` keeps.
    """
    try:
        from numba.core.runtime import nrtdynmod
    except ImportError:
        return
    compile_nrt = getattr(nrtdynmod, "compile_nrt_functions", None)
    if compile_nrt is None or getattr(compile_nrt, "when_linked", False):
        return

    def compile_when_linked(ctx: Any) -> _CompiledOnFirstUse:
        return _CompiledOnFirstUse(compile_nrt, ctx)

    compile_when_linked.when_linked = True  # type: ignore[attr-defined]
    nrtdynmod.compile_nrt_functions = compile_when_linked


class _CompiledOnFirstUse:
    """Stands for numba's runtime library (a ``CodeLibrary``) until an attribute is asked for.

    numba uses the library only through its attributes (linking it into new code, looking up
    ``nrt_unresolved_abort``), always under its compiler lock, as ``compile_nrt_functions`` needs.
    """

    def __init__(self, compile_nrt: Any, ctx: Any) -> None:
        self._compile_nrt = compile_nrt
        self._ctx = ctx
        self._library: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._library is None:
            self._library = self._compile_nrt(self._ctx)
        return getattr(self._library, name)


def _link_lazily() -> None:
    """Parse a cached kernel's bitcode only when a compilation links it into new code.

    ``CPUCodeLibrary._unserialize`` (numba/core/codegen.py) hands the machine code to the JIT
    (which maps it; the library's own module is empty), then parses the bitcode into
    ``_shared_module`` and scans it into the JIT's defined-symbol set (which numba checks before
    asking the JIT for an address: an unknown name would abort the process). Here the library
    keeps the bitcode unparsed until ``_get_module_for_linking`` wants it, and the symbol set is
    filled from the machine code. That was half of the loading time of a cached kernel.
    """
    try:
        import llvmlite.binding as ll
        from numba.core import codegen
    except ImportError:
        return
    library = codegen.CPUCodeLibrary
    unserialize = getattr(library, "_unserialize", None)
    module_for_linking = getattr(library, "_get_module_for_linking", None)
    if unserialize is None or module_for_linking is None or hasattr(library, "_lazy_linking"):
        return
    eager = unserialize.__func__

    def lazy_unserialize(cls: Any, cg: Any, state: Any) -> Any:
        name, kind, data = state
        if kind != "object":
            return eager(cls, cg, state)
        object_code, bitcode = data
        symbols = elf_defined_symbols(object_code)
        if symbols is None:
            return eager(cls, cg, state)
        self = cg.create_library(name)
        self.enable_object_caching()
        self._set_compiled_object(object_code)
        self._linking_bitcode = bitcode
        self._finalize_final_module()
        cg._engine._defined_symbols |= symbols
        return self

    def parsed_module_for_linking(self: Any) -> Any:
        bitcode = self.__dict__.pop("_linking_bitcode", None)
        if bitcode is not None:
            self._shared_module = ll.parse_bitcode(bitcode)
        return module_for_linking(self)

    library._unserialize = classmethod(lazy_unserialize)  # type: ignore[method-assign, assignment]
    library._get_module_for_linking = parsed_module_for_linking  # type: ignore[method-assign]
    library._lazy_linking = True  # type: ignore[attr-defined]


def _environments_without_imports() -> None:
    """Rebuild a cached kernel's environments without importing numba modules only for them.

    Every compiled function has an environment: its module's globals and its constants. Loading
    a cached kernel rebuilds the environments of the numba implementations compiled into it
    (``_rebuild_env``, numba/core/environment.py), importing their modules to get the globals
    (numba.np.arrayobj, numba.np.arraymath, numba.cpython.listobj, numba.np.npyimpl: 36 ms of
    CPU). Only object-mode code reads an environment's globals (numba/core/pylowering.py);
    nopython code reads its constants. A module not imported yet gets globals holding only its
    ``__name__`` (what numba pickles an environment by).
    """
    try:
        from numba.core import environment
    except ImportError:
        return
    rebuild = getattr(environment, "_rebuild_env", None)
    if rebuild is None or getattr(rebuild, "imports_nothing", False):
        return
    environment_type = environment.Environment
    lookup: Any = environment.lookup_environment

    def rebuild_env(module_name: str, consts: Any, env_name: str) -> Any:
        if module_name in sys.modules or lookup(env_name) is not None:
            return rebuild(module_name, consts, env_name)
        env = environment_type({"__name__": module_name})
        env.consts[:] = consts
        env.env_name = env_name
        environment_type._memo[env_name] = env
        return env

    rebuild_env.imports_nothing = True  # type: ignore[attr-defined]
    environment._rebuild_env = rebuild_env


def _skip_extension_entry_points() -> None:
    """Do not look for numba extensions before the first kernel loads.

    numba reads the entry points of every installed distribution (importlib.metadata, ~120 in
    the service's environment: 5 ms of CPU) for ``numba_extensions``; our kernels use none.
    """
    try:
        from numba.core import entrypoints
    except ImportError:
        return
    if hasattr(entrypoints, "_already_initialized"):
        entrypoints._already_initialized = True


def _no_events_around_llvm_calls() -> None:
    """Do not announce every llvmlite call as a numba event.

    numba registers callbacks on llvmlite's lock that create and broadcast a
    ``numba:llvm_lock`` start and end event around every call into LLVM (1,700 events while
    loading 16 kernels), only so that a compilation can report its time under the lock in
    ``metadata["timers"]``; nothing here reads that.
    """
    try:
        import llvmlite.binding as ll
        from numba.core import base
    except ImportError:
        return
    lock = getattr(getattr(ll.ffi, "lib", None), "_lock", None)
    callbacks = getattr(lock, "_cblist", None)
    if not isinstance(callbacks, list) or not hasattr(ll.ffi, "unregister_lock_callback"):
        return
    for acquired, released in list(callbacks):
        if getattr(acquired, "__module__", None) == base.__name__:
            ll.ffi.unregister_lock_callback(acquired, released)


def _start_threads_without_process_lock() -> None:
    """Start numba's threads without a lock shared with forked processes.

    Before its first parallel kernel numba takes a lock that processes forked from this one
    would share (``multiprocessing``'s ``RLock``: importing ``multiprocessing`` and creating a
    POSIX semaphore, 6 ms of CPU). A process that forks nothing while it runs kernels needs
    only its thread lock, which numba takes as well.
    """
    try:
        from numba.np.ufunc import parallel
    except ImportError:
        return
    nop = getattr(parallel, "_nop", None)
    if nop is None or not hasattr(parallel, "_backend_init_process_lock"):
        return
    if parallel._backend_init_process_lock is None:
        parallel._backend_init_process_lock = nop()


def elf_defined_symbols(image: bytes) -> set[str] | None:
    """Names of the functions and data an ELF64 little-endian object file defines.

    None when ``image`` is not such a file (then numba's own scan runs). Section and file
    symbols are left out: they name no function or variable.
    """
    if image[: len(_ELF64_LSB)] != _ELF64_LSB:
        return None
    (section_table,) = struct.unpack_from("<Q", image, 0x28)  # e_shoff
    entry_size, count = struct.unpack_from("<HH", image, 0x3A)  # e_shentsize, e_shnum
    if entry_size != _SECTION_HEADER.size:
        return None
    sections = [
        _SECTION_HEADER.unpack_from(image, section_table + i * entry_size) for i in range(count)
    ]
    for _, kind, _, _, offset, size, link, _, _, sym_size in sections:
        if kind != _SHT_SYMTAB or sym_size != _SYMBOL.size or link >= count:
            continue
        strings = sections[link][4]
        names = set()
        for name, info, _, section, _, _ in _SYMBOL.iter_unpack(image[offset : offset + size]):
            if section != _SHN_UNDEF and name and info & 0xF not in (_STT_SECTION, _STT_FILE):
                start = strings + name
                names.add(image[start : image.index(b"\0", start)].decode())
        return names
    return None
