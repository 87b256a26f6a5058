"""TCP analysis: packet table → flows, per-direction series, events, RTT, bytes in flight. Pure."""
