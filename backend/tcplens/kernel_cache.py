"""Keep numba's on-disk kernel cache consistent across kernel modules.

numba keys a cached kernel (``cache=True``) on its own source file only. A kernel that calls
or inlines kernels of other modules would load stale machine code after one of those changes.
Tagging a package's cache with a digest of all its kernel sources, and dropping the cache when
the digest differs, closes that hole; the first run after a change recompiles.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable
from pathlib import Path


def drop_stale_kernel_cache(package: Path, modules: Iterable[str]) -> None:
    """Delete ``package``'s cached kernels unless they were compiled from the current sources
    of ``modules`` (file stems in ``package``)."""
    digest = hashlib.sha256()
    for name in modules:
        digest.update((package / f"{name}.py").read_bytes())
    cache = package / "__pycache__"
    tag = cache / "kernels.sha256"
    try:
        if tag.read_text() == digest.hexdigest():
            return
    except OSError:
        pass
    with contextlib.suppress(OSError):
        cache.mkdir(exist_ok=True)
        for stale in [*cache.glob("*.nbi"), *cache.glob("*.nbc")]:
            stale.unlink(missing_ok=True)
        tag.write_text(digest.hexdigest())
