"""manifest.json: written after every capture (a crash keeps what was made), read back as captures.

For checks over a full ``make lab`` run without regenerating it, e.g. in a diagnosis script::

    for capture in load_captures(Path("e2e/lab/out")):
        print(capture.scenario.name, capture.path, capture.expected_primary_factor)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lab.catalogue import by_name
from lab.runner import LabCapture

NAME = "manifest.json"


def write(out_dir: Path, manifest: dict[str, Any]) -> None:
    tmp = out_dir / f".{NAME}.tmp"
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    tmp.replace(out_dir / NAME)


def load_captures(out_dir: Path) -> list[LabCapture]:
    """The captures of a lab run that exist and whose scenario is still in the catalogue."""
    manifest = json.loads((out_dir / NAME).read_text())
    captures = []
    for name, entry in sorted(manifest.items()):
        if entry.get("file") and (out_dir / entry["file"]).exists():
            try:
                scenario = by_name(name)
            except KeyError:
                continue
            captures.append(LabCapture(out_dir / entry["file"], entry, scenario))
    return captures
