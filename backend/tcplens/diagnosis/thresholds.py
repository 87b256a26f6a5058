"""The thresholds of the period labelling, and why each has its value.

``timeline.py`` says what each label means (T-RAT, Siekkinen et al.); the kernels that compare
against these numbers are ``labelling.py``, ``nagle.py`` and ``rtt_estimate.py``. A compiled kernel
freezes the globals it reads and numba's cache does not notice when they change here: this file is
one of those the cache guard (``search.py``) watches.
"""

from __future__ import annotations

import numpy as np

# A round trip counts as inflated by queueing when it exceeds the smallest one by a quarter, and by
# at least 2 ms (timer and scheduling noise of the hosts). A 60 ms queue on a 30 ms path is +200%;
# 1% random loss without a queue stays within +15%.
QUEUE_INFLATION = 0.25
QUEUE_INFLATION_FLOOR_S = 0.002
# Drops at a full queue rarer than one per this many round trips are TCP probing a full path.
RARE_LOSS_RTTS = 20.0
# After a loss, a window whose flight was acknowledged at this share of the path's rate or more
# (``labelling.path_rate``, Keshav's packet pair) kept the link full: halfway between what a
# window cut by the loss delivers on a path without a standing queue (CUBIC's beta = 0.7 of the
# rate that filled it, RFC 9438 section 4.6; Reno's 0.5, RFC 5681) and the full rate. BBR does
# not cut its rate on loss (Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM
# Queue 2016). On the lab's tuning part, the rounds after a loss on paths far from full deliver
# at most 0.77 of the path's rate (lossy_half_pct_get_10ms; the seed lossy_download 0.58).
FULL_LINK = 0.85
# A receiver whose application keeps up advertises its whole buffer on every ACK (the window
# only moves by rounding to the window scale); one whose window is below 3/4 of the largest it
# offered holds unread data. slow_reader_get_10ms_v6 (reads every 40 ms) offers 57-64 % of its
# largest window after each read; rcvbuf_locked_download stays at 100 %.
UNREAD_WINDOW = 0.75
# Linux delays an ACK at least 40 ms (TCP_DELACK_MIN), Windows 200 ms, macOS 100 ms: a stall of
# 25 ms beyond the round trip is a delayed ACK and not jitter.
DELAYED_ACK_MIN_S = 0.025
# An application-level acknowledgement ("ACK!", a 4-byte sequence number) is this small; the
# smallest HTTP/1.1 response ("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n") is 38 bytes.
APP_ACK_MAX_BYTES = 32
# The handshake not captured, a window scale inferred from the data is the receiver's only where
# this many of the sender's segments ended exactly at the right edge it advertised (ack + window,
# Wireshark's tcp.analysis.window_full; flow_labels.infer_window_scale). On the lab's tuning part,
# with the handshake's scale hidden: the transfers the window held end there 5 (a slow reader with
# default buffers) to 2195 times, and under the shift inferred, which is the handshake's each time;
# every other transfer at most once, by chance.
EDGE_HITS = 3
BIG = np.iinfo(np.int64).max // 4  # a right edge that is no limit (unknown window)


def pause_after(rtt_s: float) -> float:
    """A gap between two segments longer than this is a pause, not back-to-back sending."""
    return max(0.001, 0.1 * rtt_s)


def idle_after(rtt_s: float) -> float:
    """A pause with nothing outstanding longer than this is idle time, not an application turn."""
    return max(0.5, 4.0 * rtt_s)


def think_after(rtt_s: float) -> float:
    """A sender answering later than this after the request arrived was busy (thinking)."""
    return max(0.02, 0.5 * rtt_s)


def sender_jitter(lag_s: float) -> float:
    """The jitter allowed between the capture point's view and the sender's: the labelling
    places the sender's view ``lag_s`` (capture point -> sender -> capture point) behind the
    capture point's, give or take this much (20 % of the lag, at least 0.5 ms)."""
    return max(0.0005, 0.2 * lag_s)
