"""``tcplens.kernel_cache``: one cache for every kernel of the core, keyed on all of its sources,
filled by ``tcplens kernels`` (the install step and the Docker image's build).

The tests that compile run in fresh interpreters on a temporary cache directory
(``TCPLENS_KERNEL_CACHE``), so they see what a new process sees and leave the user's cache alone.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tcplens import kernel_cache
from tests.capture.shared_captures import LAB, PRACTICAL, SHARED_CAPTURES, require

BACKEND = Path(__file__).resolve().parents[1]
PACKAGE = BACKEND / "tcplens"


def dispatchers() -> list[Any]:
    """Every kernel of the core (numba dispatchers), its modules imported."""
    import importlib
    import pkgutil

    from numba.core.dispatcher import Dispatcher

    names = ["tcplens.report_events"]
    for package in ("capture", "tcp", "diagnosis"):
        module = importlib.import_module(f"tcplens.{package}")
        prefix = f"{module.__name__}."
        names += [info.name for info in pkgutil.walk_packages(module.__path__, prefix)]
    found: dict[int, Any] = {}
    for name in names:
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, Dispatcher) and value.py_func.__module__ == name:
                found[id(value)] = value
    return list(found.values())


def _python(code: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_kernel_of_the_core_is_cached_in_the_core_directory() -> None:
    import tcplens.capture.compiled  # noqa: F401  (points numba at the directory)

    kernels = dispatchers()
    cached = [k for k in kernels if k.stats.cache_path is not None]
    directory = str(kernel_cache.directory())
    outside = [
        k.py_func.__qualname__ for k in cached if not k.stats.cache_path.startswith(directory)
    ]
    assert outside == []
    # numba registers a generator only when it compiles it: the one kernel never cached
    assert {k.py_func.__name__ for k in kernels if k not in cached} == {"in_turn"}
    assert len(cached) > 50  # the reader's, the TCP analysis's, the diagnosis's, the report's


def test_the_directory_is_named_after_every_source_of_the_core() -> None:
    names = {p.relative_to(PACKAGE).as_posix() for p in kernel_cache.sources()}
    assert {"capture/table.py", "tcp/model.py", "diagnosis/thresholds.py"} <= names
    assert {"report_events.py", "capture/compiled.py"} <= names
    assert not any(name.startswith(("api/", "services/", "db/")) for name in names)
    import numba

    assert kernel_cache.directory().name.startswith(
        f"py{sys.version_info.major}{sys.version_info.minor}-numba{numba.__version__}-"
    )


def test_the_kernels_step_removes_only_this_checkouts_complete_old_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``prune`` removes a directory of other sources that this checkout's build completed
    ``PRUNE_AFTER`` ago; it keeps the current one, one still being filled (no BUILT), one
    completed moments ago, another checkout's, and anything else under the root."""
    monkeypatch.setenv(kernel_cache.ROOT_ENV, str(tmp_path))
    current = kernel_cache.directory()
    assert current.parent == tmp_path
    now = 1_000_000_000.0
    old = now - kernel_cache.PRUNE_AFTER - 1

    def cache_dir(digest: str, checkout: str | None, built_at: float | None) -> Path:
        path = tmp_path / current.name.replace(current.name[-20:], digest)
        (path / "capture_0123").mkdir(parents=True)
        (path / "capture_0123" / "kernel.nbi").write_bytes(b"index")
        if checkout is not None:
            (path / kernel_cache.CHECKOUT).write_text(checkout)
        if built_at is not None:
            (path / kernel_cache.BUILT).write_text(kernel_cache.build_stamp())
            os.utime(path / kernel_cache.BUILT, (built_at, built_at))
        return path

    current.mkdir()
    (current / kernel_cache.CHECKOUT).write_text(kernel_cache.package())
    (current / kernel_cache.BUILT).write_text(kernel_cache.build_stamp())
    os.utime(current / kernel_cache.BUILT, (old, old))
    stale = cache_dir("a" * 20, kernel_cache.package(), old)
    filling = cache_dir("b" * 20, kernel_cache.package(), None)
    fresh = cache_dir("c" * 20, kernel_cache.package(), now - 60)
    other = cache_dir("d" * 20, "/elsewhere/backend/tcplens", old)
    unmarked = cache_dir("e" * 20, None, old)  # built before directories were marked
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / kernel_cache.CHECKOUT).write_text(kernel_cache.package())
    (foreign / kernel_cache.BUILT).write_text(kernel_cache.build_stamp())
    os.utime(foreign / kernel_cache.BUILT, (old, old))

    assert kernel_cache.prune(current, now) == [stale]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in (current, filling, fresh, other, unmarked, foreign)
    )
    assert (current / kernel_cache.BUILT).exists()
    assert kernel_cache.prune(current, now) == []  # (twice: nothing left to remove)
    # once the fresh one is old enough, it goes too
    assert kernel_cache.prune(current, now + kernel_cache.PRUNE_AFTER) == [fresh]


PROBE = """
from tcplens.capture.table import SYN
from tcplens.tcp.compiled import kernel

@kernel
def syn_bit():
    return SYN
"""

CALL_PROBE = """
import json
from tcplens.tcp.probe import syn_bit
value = syn_bit()
stats = syn_bit.stats
print(json.dumps([value, sum(stats.cache_hits.values()), sum(stats.cache_misses.values())]))
"""


def test_a_kernel_is_compiled_again_when_a_constant_it_reads_from_another_module_changes(
    tmp_path: Path,
) -> None:
    """A TCP kernel freezes ``capture/table.py``'s SYN bit into its machine code: after an edit
    of that file (not the kernel's), the kernel is compiled again and returns the new value."""
    copy = tmp_path / "src" / "tcplens"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    env = {"PYTHONPATH": str(copy.parent), "TCPLENS_KERNEL_CACHE": str(tmp_path / "cache")}
    # the same sources elsewhere have a directory of their own (numba files kernels by path)
    name = "from tcplens import kernel_cache; print(kernel_cache.directory().name)"
    assert _python(name, env).strip() != kernel_cache.directory().name
    (copy / "tcp" / "probe.py").write_text(textwrap.dedent(PROBE))

    assert json.loads(_python(CALL_PROBE, env)) == [0x02, 0, 1]  # compiled
    assert json.loads(_python(CALL_PROBE, env)) == [0x02, 1, 0]  # loaded from the cache
    table = copy / "capture" / "table.py"
    source = table.read_text()
    assert "\nSYN = 0x02\n" in source
    table.write_text(source.replace("\nSYN = 0x02\n", "\nSYN = 0x42\n"))
    assert json.loads(_python(CALL_PROBE, env)) == [0x42, 0, 1]  # compiled again
    assert json.loads(_python(CALL_PROBE, env)) == [0x42, 1, 0]


ANALYSE = """
from tcplens import runtime
runtime.one_shot()  # as tcplens analyze (and the fork server): before numpy is imported

import io, json, sys, tempfile
from pathlib import Path
from numba.core import event

from tcplens.capture import read_capture
from tcplens.report import analyse_capture, write_report
from tcplens.services.analysis_child import write_series

with event.install_recorder("numba:compile") as compiles:
    for path in sys.argv[1:]:
        capture = read_capture(path)
        # as the worker's analysis child, then as `tcplens analyze --json --events`
        analysis, report = analyse_capture(capture, consume_packets=True)
        with tempfile.TemporaryDirectory() as out:
            write_series(capture, analysis, Path(out), "results")
        write_report(io.BytesIO().write, report, analysis.segments)
from numba.core.dispatcher import Dispatcher
kernels = {
    id(value): value
    for name, module in list(sys.modules.items()) if name.startswith("tcplens.")
    for value in vars(module).values() if isinstance(value, Dispatcher)
}
hits = sum(sum(k.stats.cache_hits.values()) for k in kernels.values())
compiled = sorted({e.data["dispatcher"].py_func.__qualname__ for _, e in compiles.buffer})
print(json.dumps({"hits": hits, "compiled": compiled}))
"""


@pytest.mark.slow
def test_an_analysis_after_the_build_step_does_no_compiler_work(tmp_path: Path) -> None:
    """``tcplens kernels``, as the Dockerfile and the Makefile run it, compiles every kernel an
    analysis of real captures (pcap, pcapng, IPv6, compressed) runs, in the worker's and in the
    command line's way: afterwards numba compiles nothing, it loads every kernel from the cache."""
    require(SHARED_CAPTURES)
    env = {"TCPLENS_KERNEL_CACHE": str(tmp_path / "cache")}
    built = subprocess.run(
        [sys.executable, "-m", "tcplens.cli", "kernels"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=1800,
    )
    assert built.returncode == 0, built.stderr
    assert "tcplens kernels: done" in built.stdout
    again = subprocess.run(
        [sys.executable, "-m", "tcplens.cli", "kernels"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=True,
    )
    assert again.stdout.startswith("tcplens kernels: up to date")

    compressed = tmp_path / "lossy_download.pcap.gz"
    compressed.write_bytes(gzip.compress((LAB / "lossy_download.pcap").read_bytes()))
    captures = [
        LAB / "lossy_download.pcap",
        LAB / "zero_window_slow_reader.pcap",
        PRACTICAL / "http_ip4and6.pcapng",
        PRACTICAL / "tcp_retransmissions.pcapng",
        SHARED_CAPTURES / "corpus" / "real-world" / "ndpi_mining.pcapng",
        compressed,
    ]
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(ANALYSE), *map(str, captures)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["compiled"] == []
    assert result["hits"] > 10  # (kernels called from kernels come with their callers)
