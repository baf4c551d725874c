"""Rate limits: token buckets by key, and the limits every surface shares.

    Buckets                          where the buckets live: LocalBuckets (this process; SQLite)
                                     or bot.store.postgres.rate_buckets.PgBuckets (one table
                                     every process shares, so N processes allow the limit once,
                                     not N times)
    RateLimiter(per_minute, burst)   await hit(key) -> 0.0 when allowed (and counted), otherwise
                                     the seconds until the key may try again (for Retry-After)
    Limits(settings, buckets)        .users: BOT_RATE_PER_USER messages a minute, keyed by platform
                                     and user id, so one person cannot run up the model bill from
                                     any surface; .addresses: BOT_RATE_PER_IP web API writes a
                                     minute per client address

A bucket holds `burst` tokens and refills at `per_minute / 60` a second; a request takes one,
and a refused request takes nothing (a client that keeps knocking does not dig the hole deeper).
`per_minute=0` turns a limiter off. Nothing here raises for a refused request; a bucket store
that fails lets the request through (logged): a limit is a guard, not a reason to drop a message.
"""

from __future__ import annotations

import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

from bot.settings import Settings
from bot.surface import IncomingMessage

log = logging.getLogger(__name__)


class Buckets(Protocol):
    async def take(self, key: str, per_minute: float, burst: float) -> float:
        """Take one token from `key`'s bucket: 0.0 when there was one, else seconds until there is."""
        ...


def refill(tokens: float, elapsed_s: float, per_minute: float, burst: float) -> float:
    return min(burst, tokens + max(0.0, elapsed_s) * per_minute / 60.0)


class LocalBuckets:
    """The buckets of this process, least recently used first out (at most `max_keys`; a key pushed
    out starts again with a full bucket, which only ever errs towards letting a request through)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, max_keys: int = 100_000) -> None:
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: OrderedDict[str, tuple[float, float, float, float]] = OrderedDict()  # tokens, at, rate, burst

    async def take(self, key: str, per_minute: float, burst: float) -> float:
        return self.take_now(key, per_minute, burst)

    def take_now(self, key: str, per_minute: float, burst: float) -> float:
        now = self._clock()
        tokens, at, _, _ = self._buckets.get(key, (burst, now, per_minute, burst))
        tokens = refill(tokens, now - at, per_minute, burst)
        wait = 0.0 if tokens >= 1.0 else (1.0 - tokens) * 60.0 / per_minute
        self._keep(key, tokens - 1.0 if wait == 0.0 else tokens, now, per_minute, burst)
        return wait

    def _keep(self, key: str, tokens: float, now: float, per_minute: float, burst: float) -> None:
        self._buckets[key] = (tokens, now, per_minute, burst)
        self._buckets.move_to_end(key)
        while len(self._buckets) > self._max_keys:
            self._buckets.popitem(last=False)
        # a bucket that has filled up again says nothing a new one would not: drop the oldest
        # such, so the limiter holds only the people who wrote within the refill time
        oldest = next(iter(self._buckets))
        o_tokens, o_at, o_rate, o_burst = self._buckets[oldest]
        if oldest != key and refill(o_tokens, now - o_at, o_rate, o_burst) >= o_burst:
            del self._buckets[oldest]

    def __len__(self) -> int:
        return len(self._buckets)


class RateLimiter:
    def __init__(self, per_minute: float, burst: int | None = None, *, buckets: Buckets | None = None,
                 name: str = "") -> None:
        self.per_minute = per_minute
        self.burst = float(burst if burst is not None else max(1, math.ceil(per_minute / 4)))
        self.buckets: Buckets = buckets if buckets is not None else LocalBuckets()
        self.name = name  # keys of limiters sharing one Buckets never meet

    @property
    def enabled(self) -> bool:
        return self.per_minute > 0

    async def hit(self, key: str) -> float:
        """Count one request for `key`: 0.0 when it may go ahead, else seconds to wait."""
        if not self.enabled:
            return 0.0
        try:
            return await self.buckets.take(f"{self.name}:{key}", self.per_minute, self.burst)
        except Exception:
            log.exception("rate limit %s could not be checked; letting the request through", self.name)
            return 0.0


def retry_after_header(wait_s: float) -> str:
    """Retry-After takes whole seconds; never 0 for a refused request."""
    return str(max(1, math.ceil(wait_s)))


class Limits:
    """The limits every surface shares: BOT_RATE_PER_USER messages a minute per person (bursts of
    half that, at least 3), keyed by platform and user id; BOT_RATE_PER_IP web API writes a minute
    per address (bursts of a quarter, at least 5)."""

    def __init__(self, settings: Settings, buckets: Buckets | None = None) -> None:
        buckets = buckets if buckets is not None else LocalBuckets()
        per_user, per_ip = settings.rate_per_user, settings.rate_per_ip
        self.users = RateLimiter(per_user, max(3, math.ceil(per_user / 2)), buckets=buckets, name="user")
        self.addresses = RateLimiter(per_ip, max(5, per_ip // 4), buckets=buckets, name="ip")

    async def check(self, msg: IncomingMessage) -> float:
        """0.0 when `msg` may go ahead (it is counted), else seconds until its sender may write again."""
        return await self.users.hit(f"{msg.chat.platform}:{msg.user_id}")
