"""Counting page faults: whether memory was resident before a test wrote to it."""

from __future__ import annotations

import mmap
import resource

import numpy as np


def faults_writing(array: np.ndarray) -> int:
    """Minor page faults taken while writing one byte of each page of ``array``."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    array.view(np.uint8)[:: mmap.PAGESIZE] = 1
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
