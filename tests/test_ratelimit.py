"""bot.ratelimit: token buckets by key, and the one per-user message limit every surface shares."""

from __future__ import annotations

from bot.ratelimit import MessageLimiter, RateLimiter, retry_after_header
from bot.settings import Settings
from bot.surface import ChatKey, IncomingMessage


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_steady_rate() -> None:
    clock = Clock()
    limiter = RateLimiter(60, burst=3, clock=clock)  # one a second on average
    assert [limiter.hit("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = limiter.hit("a")
    assert 0.99 <= wait <= 1.0
    assert limiter.hit("b") == 0.0  # keys are separate
    clock.now += 1.0
    assert limiter.hit("a") == 0.0
    assert limiter.hit("a") > 0
    clock.now += 60
    assert [limiter.hit("a") for _ in range(3)] == [0.0, 0.0, 0.0]  # refilled, but never above the burst
    assert limiter.hit("a") > 0


def test_refused_requests_do_not_dig_the_hole_deeper() -> None:
    clock = Clock()
    limiter = RateLimiter(60, burst=1, clock=clock)
    assert limiter.hit("a") == 0.0
    for _ in range(100):
        assert limiter.hit("a") > 0
    clock.now += 1.0
    assert limiter.hit("a") == 0.0


def test_zero_turns_a_limiter_off_and_keys_are_bounded() -> None:
    off = RateLimiter(0)
    assert all(off.hit("a") == 0.0 for _ in range(1000))
    bounded = RateLimiter(60, burst=1, max_keys=10)
    for i in range(100):
        bounded.hit(f"k{i}")
    assert len(bounded) == 10


def test_retry_after_is_whole_seconds_and_never_zero() -> None:
    assert retry_after_header(0.01) == "1"
    assert retry_after_header(2.2) == "3"


def test_the_message_limit_is_per_platform_and_user() -> None:
    clock = Clock()
    limits = MessageLimiter(Settings(_env_file=None, BOT_RATE_PER_USER=12), clock=clock)  # type: ignore[call-arg]

    def msg(platform: str, user: str) -> IncomingMessage:
        return IncomingMessage(chat=ChatKey(platform, "c1"), user_id=user, text="hi")

    assert [limits.check(msg("telegram", "u1")) for _ in range(6)] == [0.0] * 6  # a burst of half a minute's
    assert limits.check(msg("telegram", "u1")) > 0
    assert limits.check(msg("telegram", "u2")) == 0.0
    assert limits.check(msg("slack", "u1")) == 0.0
    clock.now += 5  # 12 a minute: one every 5 s
    assert limits.check(msg("telegram", "u1")) == 0.0


def test_a_bucket_that_has_filled_up_again_is_forgotten():
    now = [0.0]
    limiter = RateLimiter(60, 3, clock=lambda: now[0])  # one a second, bursts of 3
    assert limiter.hit("a") == 0.0
    now[0] += 1.0  # "a" is full again: nothing to remember about it
    assert limiter.hit("b") == 0.0
    assert len(limiter) == 1
    assert limiter.hit("b") == 0.0 and limiter.hit("b") == 0.0 and limiter.hit("b") > 0  # "b" still counted
