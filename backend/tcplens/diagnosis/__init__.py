"""Diagnosis: flow arrays and metrics → findings, one rule per module. Pure.

>>> from tcplens.diagnosis import diagnose  # diagnose(capture, tcp_analysis) -> Diagnosis
"""

from tcplens.diagnosis.engine import Diagnosis, FlowVerdict, diagnose
from tcplens.diagnosis.finding import FACTORS, Finding

__all__ = ["FACTORS", "Diagnosis", "Finding", "FlowVerdict", "diagnose"]
