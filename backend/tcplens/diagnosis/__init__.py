"""Diagnosis: flow arrays and metrics → findings, one rule per module. Pure."""
