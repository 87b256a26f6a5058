"""Rate limits for login and upload: in-process token buckets.

In-process on purpose (no extra server): each API process enforces its own buckets, so N
processes allow up to N times the rate. That bounds password guessing and upload floods per
process, which is what a single-machine deployment needs; a cluster would put this in its proxy.

A client is the peer's address. Behind a reverse proxy that is the proxy's, unless the proxy is
listed in ``TCPLENS_TRUSTED_PROXIES``: then uvicorn's ProxyHeadersMiddleware (``main.py``) takes
the client from the right-most X-Forwarded-For address not a trusted proxy. Nobody else's
X-Forwarded-For counts, so a client cannot pick a fresh address for each attempt.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict

from starlette.requests import Request

from tcplens.errors import TooManyRequests

_MAX_KEYS = 100_000  # oldest buckets are forgotten first, so memory stays bounded


class TokenBucket:
    """``rate_per_minute`` requests per minute per key, with bursts up to ``burst``."""

    def __init__(self, rate_per_minute: float, burst: float | None = None) -> None:
        self.rate = rate_per_minute / 60.0
        self.burst = burst if burst is not None else max(1.0, rate_per_minute)
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: str, what: str) -> None:
        """Spend one token for ``key`` or raise TooManyRequests with the wait in seconds."""
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.pop(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens < 1.0:
                self._buckets[key] = (tokens, now)
                wait = math.ceil((1.0 - tokens) / self.rate)
                raise TooManyRequests(f"too many {what}; try again in {wait} s", retry_after_s=wait)
            self._buckets[key] = (tokens - 1.0, now)
            while len(self._buckets) > _MAX_KEYS:
                self._buckets.popitem(last=False)


def bucket_of(
    request: Request, name: str, rate_per_minute: float, burst: float | None = None
) -> TokenBucket:
    """The app's bucket called ``name``, made on first use (one per app, kept on its state)."""
    bucket: TokenBucket | None = getattr(request.app.state, name, None)
    if bucket is None:
        bucket = TokenBucket(rate_per_minute, burst)
        setattr(request.app.state, name, bucket)
    return bucket


def client_of(request: Request) -> str:
    """The client's address (see the module's docstring for proxies)."""
    return request.client.host if request.client else "unknown"
