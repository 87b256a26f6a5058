"""Numbers in the units a developer reads: KB, ms, Mbit/s.

Sizes use binary kilobytes (1 KB = 1024 bytes) because that is how socket buffers are configured
(``SO_RCVBUF=65536`` is "64 KB"); rates use decimal megabits per second as link speeds are sold.
"""

from __future__ import annotations


def size(n_bytes: float) -> str:
    """``size(65535) == '64 KB'``; ``size(1500) == '1.5 KB'``; ``size(512) == '512 bytes'``."""
    n = float(n_bytes)
    if n < 1024:
        return f"{n:.0f} bytes"
    if n < 1024 * 1024:
        kb = n / 1024
        return f"{kb:.1f} KB" if kb < 10 else f"{kb:.0f} KB"
    mb = n / (1024 * 1024)
    return f"{mb:.1f} MB" if mb < 10 else f"{mb:.0f} MB"


def duration(seconds: float) -> str:
    """``duration(0.0304) == '30 ms'``; ``duration(2.5) == '2.5 s'``; ``duration(0.0012) == '1.2 ms'``;
    ``duration(0.00004) == '40 µs'`` (a LAN round trip is never "0.0 ms")."""
    s = float(seconds)
    if s < 0.0001:
        return f"{s * 1e6:.0f} µs"
    if s < 0.01:
        return f"{s * 1e3:.1f} ms"
    if s < 1.0:
        return f"{s * 1e3:.0f} ms"
    if s < 10.0:
        return f"{s:.1f} s"
    return f"{s:.0f} s"


def rate(bytes_per_second: float) -> str:
    """``rate(1.25e6) == '10 Mbit/s'``; ``rate(30e3) == '240 kbit/s'``."""
    bits = float(bytes_per_second) * 8.0
    if bits < 1e6:
        return f"{bits / 1e3:.0f} kbit/s"
    if bits < 1e9:
        mbit = bits / 1e6
        return f"{mbit:.1f} Mbit/s" if mbit < 10 else f"{mbit:.0f} Mbit/s"
    return f"{bits / 1e9:.1f} Gbit/s"


def a(phrase: str) -> str:
    """The phrase with its indefinite article: ``a('30 ms') == 'a 30 ms'``,
    ``a('80 ms') == 'an 80 ms'`` (numbers read aloud as "eighty", "eleven", "eighteen")."""
    spoken_vowel = phrase.startswith(("8", "11 ", "11.", "18 ", "18."))
    return f"{'an' if spoken_vowel else 'a'} {phrase}"


def times(n: int) -> str:
    """``times(1) == 'once'``, ``times(2) == 'twice'``, ``times(7) == '7 times'``."""
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def share(fraction: float) -> str:
    """``share(0.4567) == '46%'``."""
    return f"{100.0 * float(fraction):.0f}%"


# The rates a window is sized for when the capture does not show the path's capacity.
REFERENCE_RATES_BPS = (10e6, 100e6, 1e9)


def windows_per_rate(rtt_s: float) -> str:
    """The bandwidth-delay product at ``rtt_s`` for each reference rate:
    ``windows_per_rate(0.03) == '37 KB for 10 Mbit/s, 366 KB for 100 Mbit/s, 3.6 MB for 1.0 Gbit/s'``."""
    return ", ".join(f"{size(r / 8 * rtt_s)} for {rate(r / 8)}" for r in REFERENCE_RATES_BPS)
