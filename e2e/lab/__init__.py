"""tcplens scenario lab: real Linux TCP captures of every situation tcplens must diagnose.

Two network namespaces joined by a userspace link (TAP devices and a forwarder that applies delay,
a bottleneck rate with a tail-drop queue, and loss), real kernel TCP on both ends, tcpdump at one
end, and the sending socket's TCP_INFO as ground truth. ``python -m lab`` (``make lab``) regenerates
every capture and ``manifest.json`` into ``e2e/lab/out/``; it must run as root.
"""
