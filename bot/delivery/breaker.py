"""PlatformBreaker: one platform's outage pauses that platform's delivery lanes.

When Telegram or Slack is down (no connection, 5xx), every chat's lane would otherwise retry on
its own schedule, each burning its attempts on the same outage. The breaker counts outage
failures per platform across all lanes:

    closed      lanes send as usual
      │  `trip_after` outage failures in a row (no success between)
      ▼
    open        lanes wait in `admit()`; after a pause (doubling, with jitter, capped)
      │         one lane is let through to probe
      ▼
    probing     the probe's outcome decides: any answer from the platform (sent, refused,
                flood-wait) closes the breaker and releases every lane at once; another outage
                failure opens it again for a longer pause

A lane that waits longer than its row's deadline gets False from `admit()` and gives the row up.
One breaker per process: processes learn of an outage each on their own, which costs each a
probe, never a message.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class _Platform:
    failures: int = 0  # outage failures in a row
    open_until: float | None = None  # monotonic time of the next probe; None: closed
    pause_s: float = 0.0
    probing: bool = False
    opened_at: float | None = None  # wall time the outage was first seen (for /admin)
    waiting: int = 0  # lanes held in admit()
    changed: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class PlatformBreaker:
    trip_after: int = 3
    first_pause_s: float = 1.0
    max_pause_s: float = 60.0
    clock: Callable[[], float] = time.monotonic
    _platforms: dict[str, _Platform] = field(default_factory=dict)

    def _p(self, platform: str) -> _Platform:
        return self._platforms.setdefault(platform, _Platform())

    def is_open(self, platform: str) -> bool:
        return self._p(platform).open_until is not None

    def waiting(self) -> dict[str, tuple[int, float | None]]:
        """Per platform with an open breaker: lanes held, and since when (wall time)."""
        return {name: (p.waiting, p.opened_at) for name, p in self._platforms.items() if p.open_until is not None}

    async def admit(self, platform: str, deadline_s: float) -> bool:
        """Wait until a lane may send to `platform`; False when `deadline_s` (monotonic) comes first."""
        p = self._p(platform)
        p.waiting += 1
        try:
            while p.open_until is not None:
                now = self.clock()
                if now >= deadline_s:
                    return False
                if not p.probing and now >= p.open_until:
                    p.probing = True  # this lane probes; the others wait for its outcome
                    return True
                wake_at = deadline_s if p.probing else min(p.open_until, deadline_s)
                p.changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(p.changed.wait(), max(0.0, wake_at - now))
            return True
        finally:
            p.waiting -= 1

    def answered(self, platform: str) -> None:
        """The platform answered (delivered, or refused this one message): it is up."""
        p = self._p(platform)
        p.failures = 0
        if p.open_until is not None or p.probing:
            p.open_until = None
            p.probing = False
            p.pause_s = 0.0
            p.opened_at = None
            p.changed.set()

    def abandoned(self, platform: str) -> None:
        """A lane let through left without an outcome (its lease was lost, the process stops): the
        next waiting lane may probe instead."""
        p = self._p(platform)
        if p.probing:
            p.probing = False
            p.changed.set()

    def unreachable(self, platform: str) -> None:
        """An outage failure: no connection, or a 5xx."""
        p = self._p(platform)
        p.failures += 1
        if p.probing or (p.open_until is None and p.failures >= self.trip_after):
            p.pause_s = min(self.max_pause_s, max(self.first_pause_s, p.pause_s * 2))
            p.open_until = self.clock() + p.pause_s * (0.5 + random.random() / 2)
            p.probing = False
            if p.opened_at is None:
                p.opened_at = time.time()
            p.changed.set()
