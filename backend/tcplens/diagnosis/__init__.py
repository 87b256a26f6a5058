"""Diagnosis: flow arrays and metrics → findings, one rule per module. Pure.

>>> from tcplens.diagnosis.engine import diagnose  # diagnose(capture, tcp_analysis) -> Diagnosis

Importing the package imports none of its modules: the API reads the registry
(``diagnosis.factors``) and compares stored reports (``diagnosis.comparison``) without loading
numba and the kernels, which only the processes that analyse need.
"""
