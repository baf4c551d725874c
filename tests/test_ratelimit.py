"""bot.ratelimit: token buckets by key, and the limits every surface (and every process) shares."""

from __future__ import annotations

import asyncio
import time

from bot.ratelimit import Limits, LocalBuckets, RateLimiter, retry_after_header
from bot.settings import Settings
from bot.store.postgres.rate_buckets import PgBuckets
from bot.store.postgres.store import PostgresStore
from bot.surface import ChatKey, IncomingMessage


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def local(per_minute: float, burst: int | None = None, clock: Clock | None = None, **kw: int) -> RateLimiter:
    return RateLimiter(per_minute, burst, buckets=LocalBuckets(clock=clock or time.monotonic, **kw))


async def test_a_burst_then_the_steady_rate() -> None:
    clock = Clock()
    limiter = local(60, burst=3, clock=clock)  # one a second on average
    assert [await limiter.hit("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = await limiter.hit("a")
    assert 0.99 <= wait <= 1.0
    assert await limiter.hit("b") == 0.0  # keys are separate
    clock.now += 1.0
    assert await limiter.hit("a") == 0.0
    assert await limiter.hit("a") > 0
    clock.now += 60
    assert [await limiter.hit("a") for _ in range(3)] == [0.0, 0.0, 0.0]  # refilled, but never above the burst
    assert await limiter.hit("a") > 0


async def test_refused_requests_do_not_dig_the_hole_deeper() -> None:
    clock = Clock()
    limiter = local(60, burst=1, clock=clock)
    assert await limiter.hit("a") == 0.0
    for _ in range(100):
        assert await limiter.hit("a") > 0
    clock.now += 1.0
    assert await limiter.hit("a") == 0.0


async def test_zero_turns_a_limiter_off_and_keys_are_bounded() -> None:
    off = local(0)
    assert all([await off.hit("a") == 0.0 for _ in range(1000)])
    buckets = LocalBuckets(max_keys=10)
    bounded = RateLimiter(60, burst=1, buckets=buckets)
    for i in range(100):
        await bounded.hit(f"k{i}")
    assert len(buckets) == 10


def test_retry_after_is_whole_seconds_and_never_zero() -> None:
    assert retry_after_header(0.01) == "1"
    assert retry_after_header(2.2) == "3"


def _msg(platform: str, user: str) -> IncomingMessage:
    return IncomingMessage(chat=ChatKey(platform, "c1"), user_id=user, text="hi")


async def test_the_message_limit_is_per_platform_and_user() -> None:
    clock = Clock()
    settings = Settings(_env_file=None, BOT_RATE_PER_USER=12)  # type: ignore[call-arg]
    limits = Limits(settings, LocalBuckets(clock=clock))
    assert [await limits.check(_msg("telegram", "u1")) for _ in range(6)] == [0.0] * 6  # a burst of half a minute's
    assert await limits.check(_msg("telegram", "u1")) > 0
    assert await limits.check(_msg("telegram", "u2")) == 0.0
    assert await limits.check(_msg("slack", "u1")) == 0.0
    clock.now += 5  # 12 a minute: one every 5 s
    assert await limits.check(_msg("telegram", "u1")) == 0.0


async def test_users_and_addresses_share_buckets_without_meeting() -> None:
    settings = Settings(_env_file=None, BOT_RATE_PER_USER=6, BOT_RATE_PER_IP=20)  # type: ignore[call-arg]
    limits = Limits(settings, LocalBuckets(clock=Clock()))
    assert [await limits.users.hit("x") for _ in range(3)] == [0.0] * 3
    assert await limits.users.hit("x") > 0
    assert await limits.addresses.hit("x") == 0.0  # the same key in the other limiter is another bucket


async def test_a_bucket_that_has_filled_up_again_is_forgotten() -> None:
    clock = Clock()
    buckets = LocalBuckets(clock=clock)
    limiter = RateLimiter(60, 3, buckets=buckets)  # one a second, bursts of 3
    assert await limiter.hit("a") == 0.0
    clock.now += 1.0  # "a" is full again: nothing to remember about it
    assert await limiter.hit("b") == 0.0
    assert len(buckets) == 1
    assert await limiter.hit("b") == 0.0 and await limiter.hit("b") == 0.0 and await limiter.hit("b") > 0


async def test_three_processes_on_postgresql_allow_a_person_the_limit_once(pg_url: str) -> None:
    """Three stores with pools of their own (three processes' worth of connections), hit at once."""
    settings = Settings(_env_file=None, BOT_RATE_PER_USER=6)  # type: ignore[call-arg]  # bursts of 3
    stores = [PostgresStore(pg_url) for _ in range(3)]
    for store in stores:
        await store.open()
    try:
        processes = [Limits(settings, PgBuckets(store)) for store in stores]
        started = time.monotonic()
        waits = await asyncio.gather(*[p.check(_msg("telegram", "u1")) for p in processes for _ in range(5)])
        elapsed = time.monotonic() - started
        allowed = sum(1 for w in waits if w == 0.0)
        refill = elapsed * 6 / 60  # tokens that came back while the 15 requests ran
        assert 3 <= allowed <= 3 + int(refill) + 1, (allowed, elapsed)
        refused = [w for w in waits if w > 0]
        assert refused and all(0 < w <= 10.0 for w in refused)  # one token every 10 s
        assert await processes[0].check(_msg("telegram", "u2")) == 0.0  # another person is not held back
        assert await processes[1].check(_msg("slack", "u1")) == 0.0
    finally:
        for store in stores:
            await store.close()


async def test_a_failing_bucket_store_lets_the_request_through() -> None:
    class Broken:
        async def take(self, key: str, per_minute: float, burst: float) -> float:
            raise ConnectionError("database gone")

    assert await RateLimiter(6, 1, buckets=Broken()).hit("a") == 0.0
