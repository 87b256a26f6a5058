"""``tcplens compare BEFORE AFTER [--json]`` on the lab's before/after pair: the DESIGN.md object,
the text, and the exit codes of the refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.diagnosis.pairs import NO_REUSE, RWND, pair_file


def _compare(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tcplens.cli", "compare", *args],
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_compare_prints_the_design_object() -> None:
    done = _compare(str(pair_file(RWND, "before")), str(pair_file(RWND, "after")), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result) >= {
        "before",
        "after",
        "resolved",
        "remaining",
        "new",
        "transfers",
        "speedup",
    }
    assert result["before"]["capture"].endswith("__before.pcap.gz")
    assert result["resolved"] == ["receiver-window-limited"]
    [t] = result["transfers"]
    assert t["server"] == "192.0.2.2:8080" and t["bytes"] == 2097262
    assert result["speedup"] == round(t["before_s"] / t["after_s"], 4)

    text = _compare(str(pair_file(RWND, "after")), str(pair_file(RWND, "before")))
    assert text.returncode == 0
    assert "slower: a regression" in text.stdout and "New: receiver-window-limited" in text.stdout


def test_compare_refusals(tmp_path: Path) -> None:
    different = _compare(str(pair_file(NO_REUSE, "before")), str(pair_file(RWND, "after")))
    assert different.returncode == 4 and "not a transfer of the same size" in different.stderr
    notes = tmp_path / "notes.txt"
    notes.write_text("not a capture")
    unreadable = _compare(str(pair_file(RWND, "before")), str(notes))
    assert unreadable.returncode == 3 and "notes.txt" in unreadable.stderr
    assert _compare(str(notes)).returncode == 2
