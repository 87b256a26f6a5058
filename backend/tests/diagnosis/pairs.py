"""Before/after pairs made by the scenario lab (``e2e/lab/catalogue/pairs.py``), kept small
(headers only, gzip) in ``tests/data/pairs`` so that the comparison is tested without root:
10 GETs of 100 KB on 10 connections then on one (40 ms RTT), and a GET of 2 MB with the client's
SO_RCVBUF fixed at 32 KB then autotuned (30 ms RTT); both on a 100 Mbit/s path, captured at the
client."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from tcplens.capture import read_capture
from tcplens.report import analyse_capture

PAIRS = Path(__file__).resolve().parents[1] / "data" / "pairs"
NO_REUSE = "pair_no_reuse_10_gets_40ms"
RWND = "pair_rwnd_rcvbuf32k_get_30ms"


def pair_file(pair: str, side: str) -> Path:
    return PAIRS / f"{pair}__{side}.pcap.gz"


@cache
def report(pair: str, side: str) -> dict[str, Any]:
    return analyse_capture(read_capture(pair_file(pair, side)))[1]
