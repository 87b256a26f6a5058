"""The analysis fork server's preload (``services.analysis``): importing it sets the fork server
up (``tcplens.runtime.fork_server``: settings, kernels loaded, collector frozen) before the
analysis child's modules, which every analysis forked from it then finds imported."""

from __future__ import annotations

from tcplens import runtime

runtime.fork_server()

import tcplens.services.analysis_child  # noqa: E402, F401  (after the settings it reads)
