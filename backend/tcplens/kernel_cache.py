"""The analysis core's one cache of compiled kernels: where it is and what it is keyed on.

numba keys a cached kernel on its own source file only, but a kernel inlines kernels of other
modules (``read_u32``, ``take_next``) and freezes the module constants it reads into its machine
code (``capture/table.py``'s flag bits in the TCP kernels, ``tcp/model.py``'s event bits,
``diagnosis/thresholds.py``). So the whole cache lives in one directory (numba's
``NUMBA_CACHE_DIR``) named after a digest of every module of the core (``capture/``, ``tcp/``,
``diagnosis/``, ``report_events.py``), of where they are, and of the Python, numba, llvmlite
and numpy versions: after any change the directory is a new, empty one, and no kernel compiled
from other sources can load. The core is hashed whole rather than a list of modules per package, a list being one
more thing to keep true; hashing it takes a few milliseconds.

The directories live under ``TCPLENS_KERNEL_CACHE`` (default ``$XDG_CACHE_HOME/tcplens/kernels``,
that is ``~/.cache/tcplens/kernels``). ``tcplens kernels`` (``kernel_build.build``) compiles every
kernel into the current one: ``make run`` and ``make test`` run it as an install step and the
Docker image at build time, so no analysis compiles. The analysis fork server runs it in a
process of its own when the directory is not complete (``tcplens.runtime``), so that the
compiler's memory is never kept by the server.

``prune`` removes this checkout's directories of other digests once they are complete and
``PRUNE_AFTER`` old; the kernels step runs it.

``use`` points numba at the directory; ``capture.compiled``, which every kernel module imports
first, calls it before any kernel is defined. That is all importing the core does to numba.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT_ENV = "TCPLENS_KERNEL_CACHE"
# the core's modules, relative to the package: every kernel and every constant a kernel reads
CORE = ("capture", "tcp", "diagnosis", "report_events.py")
# written into a directory once ``kernel_build.build`` compiled every kernel into it
BUILT = "built"
# written beside BUILT: the package whose kernels the directory holds (``prune`` removes only these)
CHECKOUT = "checkout"
# a directory completed this long ago is no longer being written nor about to be loaded by a
# process that started before the sources changed
PRUNE_AFTER = 15 * 60.0
# a cache directory's name, as ``directory`` makes it
_NAME = re.compile(r"py\d+-numba[0-9A-Za-z.+]+-[0-9a-f]{20}")

_PACKAGE = Path(__file__).resolve().parent


def root() -> Path:
    """Where the cache directories live (``TCPLENS_KERNEL_CACHE``, or the user's cache)."""
    configured = os.environ.get(ROOT_ENV)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tcplens" / "kernels"


def package() -> str:
    """The package whose kernels this process compiles (what CHECKOUT holds)."""
    return str(_PACKAGE)


def sources() -> Iterator[Path]:
    """Every source file whose change may change a kernel's machine code, in a fixed order."""
    for name in CORE:
        path = _PACKAGE / name
        yield from sorted(path.rglob("*.py")) if path.is_dir() else [path]


def directory() -> Path:
    """The cache directory of these sources and library versions (imports numba)."""
    import llvmlite
    import numba
    import numpy

    digest = hashlib.sha256()
    versions = (sys.version, numba.__version__, llvmlite.__version__, numpy.__version__)
    # the checkout's own path too: numba files each kernel under its source's path, and the
    # build's stamp must not tell another checkout of the same sources that its kernels are in
    for part in (*versions, platform.machine(), str(_PACKAGE)):
        digest.update(part.encode() + b"\0")
    for path in sources():
        digest.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    python = f"py{sys.version_info.major}{sys.version_info.minor}"
    return root() / f"{python}-numba{numba.__version__}-{digest.hexdigest()[:20]}"


def build_stamp() -> str:
    """What ``kernel_build.build`` writes into the directory it completed: a digest of the
    build's own module, whose captures decide which kernels it compiles (a change there compiles
    only the kernels it adds: the machine code of the others does not depend on it)."""
    return hashlib.sha256((_PACKAGE / "kernel_build.py").read_bytes()).hexdigest()


def is_built(path: Path | None = None) -> bool:
    """Whether ``kernel_build.build`` completed in the current cache directory."""
    try:
        return ((path or directory()) / BUILT).read_text() == build_stamp()
    except OSError:
        return False


def prune(current: Path, now: float | None = None) -> list[Path]:
    """Remove from ``root()`` the directories of digests other than ``current``'s that this checkout's build completed (another
    version of its sources, or of Python or numba): only those named as ``directory`` names
    them, whose CHECKOUT is this package and whose BUILT was written ``PRUNE_AFTER`` ago or
    more. A directory being filled has no BUILT yet; another checkout's (another worktree's)
    and anything else under the root are left alone. Returns the directories removed.

    Two processes may prune at once: each first renames a directory to a name of its own (one
    of them wins), then deletes it."""
    limit = (time.time() if now is None else now) - PRUNE_AFTER
    removed: list[Path] = []
    try:
        entries = sorted(root().iterdir())
    except OSError:
        return removed
    for entry in entries:
        if entry == current or not _NAME.fullmatch(entry.name) or entry.is_symlink():
            continue
        try:
            ours = (entry / CHECKOUT).read_text() == package()
            complete = (entry / BUILT).stat().st_mtime <= limit
            if not (ours and complete):
                continue
            doomed = entry.with_name(f".pruning-{entry.name}-{os.getpid()}")
            entry.rename(doomed)
        except OSError:  # not ours, not complete, or another process took it first
            continue
        shutil.rmtree(doomed, ignore_errors=True)
        removed.append(entry)
    return removed


_used: Path | None = None


def use() -> Path:
    """Point numba's cache at this core's directory (idempotent); returns the directory.

    ``NUMBA_CACHE_DIR`` is set as well as numba's config: numba re-reads its configuration from
    the environment before each compilation. A directory that cannot be created or written
    (a read-only home) is replaced by a fresh temporary one for this process: numba would
    otherwise fall back to ``__pycache__`` beside the sources, keyed on each file alone.
    """
    global _used
    if _used is not None:
        return _used
    import numba

    path = directory()
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()  # numba's own test of the directory
    except OSError:
        path = Path(tempfile.mkdtemp(prefix="tcplens-kernels-"))
    os.environ["NUMBA_CACHE_DIR"] = str(path)
    numba.config.CACHE_DIR = str(path)  # type: ignore[attr-defined]
    _used = path
    return path
