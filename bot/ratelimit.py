"""Rate limits: token buckets by key, and the per-user message limit every surface shares.

    RateLimiter(per_minute, burst)   hit(key) -> 0.0 when allowed (and counted), otherwise the
                                     seconds until the key may try again (for Retry-After)
    MessageLimiter(settings)         the per-user limit on messages (BOT_RATE_PER_USER a
                                     minute), keyed by platform and user id, so one person
                                     cannot run up the model bill from any surface

A bucket holds `burst` tokens and refills at `per_minute / 60` a second; a request takes one.
Keys are kept least-recently-used first out, at most `max_keys` (a key pushed out starts again
with a full bucket, which only ever errs towards letting a request through). `per_minute=0`
turns a limiter off. Nothing here raises.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable

from bot.settings import Settings
from bot.surface import IncomingMessage


class RateLimiter:
    def __init__(self, per_minute: float, burst: int | None = None, *, clock: Callable[[], float] = time.monotonic,
                 max_keys: int = 100_000) -> None:
        self.per_minute = per_minute
        self.burst = float(burst if burst is not None else max(1, math.ceil(per_minute / 4)))
        self._rate = per_minute / 60.0
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (tokens, at)

    @property
    def enabled(self) -> bool:
        return self.per_minute > 0

    def _tokens(self, key: str, now: float) -> float:
        tokens, at = self._buckets.get(key, (self.burst, now))
        return min(self.burst, tokens + (now - at) * self._rate)

    def hit(self, key: str) -> float:
        """Count one request for `key`: 0.0 when it may go ahead, else seconds to wait."""
        if not self.enabled:
            return 0.0
        now = self._clock()
        tokens = self._tokens(key, now)
        if tokens >= 1.0:
            self._store(key, tokens - 1.0, now)
            return 0.0
        self._store(key, tokens, now)
        return (1.0 - tokens) / self._rate

    def _store(self, key: str, tokens: float, now: float) -> None:
        self._buckets[key] = (tokens, now)
        self._buckets.move_to_end(key)
        while len(self._buckets) > self._max_keys:
            self._buckets.popitem(last=False)
        # a bucket that has filled up again says nothing a new one would not: drop the oldest
        # such, so the limiter holds only the people who wrote within the refill time
        oldest = next(iter(self._buckets))
        if oldest != key and self._tokens(oldest, now) >= self.burst:
            del self._buckets[oldest]

    def __len__(self) -> int:
        return len(self._buckets)


def retry_after_header(wait_s: float) -> str:
    """Retry-After takes whole seconds; never 0 for a refused request."""
    return str(max(1, math.ceil(wait_s)))


class MessageLimiter:
    """The same per-user limit on every surface: BOT_RATE_PER_USER messages a minute (bursts of
    half that, at least 3), keyed by platform and user id."""

    def __init__(self, settings: Settings, *, clock: Callable[[], float] = time.monotonic) -> None:
        per_minute = settings.rate_per_user
        self.users = RateLimiter(per_minute, max(3, math.ceil(per_minute / 2)), clock=clock)

    def check(self, msg: IncomingMessage) -> float:
        """0.0 when `msg` may go ahead (it is counted), else seconds until its sender may write again."""
        return self.users.hit(f"{msg.chat.platform}:{msg.user_id}")

    def check_user(self, platform: str, user_id: str) -> float:
        return self.users.hit(f"{platform}:{user_id}")
