"""scripts/run-checks, the summary behind `make test`: it must keep going after a failed check, show
every check's status, end with the plain "N passed, N failed" line, and exit non-zero on any failure."""

from __future__ import annotations

import subprocess
from pathlib import Path

RUN_CHECKS = Path(__file__).resolve().parents[3] / "scripts" / "run-checks"

MAKEFILE = """\
check-first:
\t@echo first ran
check-broken:
\t@echo broken ran; exit 3
check-last:
\t@echo last ran
"""


def run_checks(tmp_path: Path, *names: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "Makefile").write_text(MAKEFILE)
    return subprocess.run(
        [str(RUN_CHECKS), *names],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "MAKE": "make"},
    )


def test_failure_is_reported_after_running_every_check(tmp_path: Path) -> None:
    result = run_checks(tmp_path, "first", "broken", "last")
    assert result.returncode == 1
    assert "last ran" in result.stdout
    table = result.stdout[result.stdout.index("check ") :]
    assert "broken           FAILED (exit 2)" in table  # make reports the recipe's failure as 2
    assert "first            ok" in table
    assert result.stdout.rstrip().splitlines()[-1] == "checks: 2 passed, 1 failed"


def test_all_passing_exits_zero(tmp_path: Path) -> None:
    result = run_checks(tmp_path, "first", "last")
    assert result.returncode == 0
    assert result.stdout.rstrip().splitlines()[-1] == "checks: 2 passed, 0 failed"
