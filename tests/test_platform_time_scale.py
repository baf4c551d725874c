"""BOT_PLATFORM_TIME_SCALE: one of the platforms' seconds on the bot's clock (docs/notes/fast-tests.md).

The bot scales its pacing by it and the fakes scale their limits by it, so a test at 0.05 is as
strict as one at 1.0; the flows that use it end to end are the Telegram and Slack tests (three
of them at the real pace)."""

from __future__ import annotations

import asyncio
import functools
import time

import pytest
from pydantic import ValidationError
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from telegram import Bot
from telegram.error import RetryAfter

from adapters.slack.rate_limits import ScaledRateLimitRetryHandler, rate_limit_retries
from adapters.telegram.lane import retry_seconds
from adapters.telegram.pacing import Outbox
from adapters.telegram.transport import Transport
from bot.settings import Settings
from tests.fakes import pace
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram


def _settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.mark.parametrize("value", ["0", "-1", "nope"])
def test_the_scale_must_be_a_number_above_zero(value: str) -> None:
    with pytest.raises(ValidationError, match="BOT_PLATFORM_TIME_SCALE"):
        _settings(BOT_PLATFORM_TIME_SCALE=value)
    with pytest.raises(ValueError, match="above 0"):
        pace.time_scale(float(value) if value != "nope" else 0)


def test_below_one_is_refused_with_a_real_platform_and_allowed_with_a_fake() -> None:
    real = _settings(BOT_PLATFORM_TIME_SCALE="0.05", TELEGRAM_BOT_TOKEN="1:a")
    assert [name for name, _ in real.problems()] == ["BOT_PLATFORM_TIME_SCALE"]
    assert "Telegram" in real.problems()[0][1]
    slack = _settings(BOT_PLATFORM_TIME_SCALE="0.5", SLACK_BOT_TOKEN="xoxb-1", SLACK_SIGNING_SECRET="s")
    assert [name for name, _ in slack.problems()] == ["BOT_PLATFORM_TIME_SCALE"]
    fake = _settings(BOT_PLATFORM_TIME_SCALE="0.05", TELEGRAM_BOT_TOKEN="1:a",
                     TELEGRAM_API_BASE_URL="http://127.0.0.1:9/bot")
    assert fake.problems() == []
    assert _settings(BOT_PLATFORM_TIME_SCALE="1", TELEGRAM_BOT_TOKEN="1:a").problems() == []  # the real pace
    assert _settings(BOT_PLATFORM_TIME_SCALE="0.05").problems() == []  # no platform configured


def test_the_outbox_keeps_telegrams_figures_on_the_scaled_clock() -> None:
    outbox = Outbox(time_scale=0.1)
    assert (outbox.private_interval, outbox.group_interval, outbox.draft_interval) == pytest.approx((0.1, 0.3, 0.05))
    assert outbox.pacer.window == pytest.approx(0.1) and outbox.pacer.limit == 29
    assert outbox.lane(-5).interval == pytest.approx(0.3) and outbox.lane(5).time_scale == 0.1
    assert retry_seconds(RetryAfter(3), 0.1) == pytest.approx(0.3) and retry_seconds(RetryAfter(3)) == 3
    with pytest.raises(ValueError):
        Outbox(time_scale=0)


async def test_a_scaled_lane_waits_out_retry_after_on_the_scaled_clock_and_the_fake_counts_no_violation() -> None:
    async with FakeTelegram(time_scale=0.1, flood_control=True) as tg, Bot(tg.token, base_url=tg.base_url) as bot:
        transport = Transport(bot)
        tg.send_text(1, "hi")
        tg.flood(1, 3)  # three of Telegram's seconds: 0.3 of ours
        outbox = Outbox(time_scale=tg.time_scale)
        try:
            started = time.monotonic()
            await outbox.send(1, "answer", functools.partial(transport.send_html, 1, "after the wait"))
            waited = time.monotonic() - started
            await asyncio.gather(*(outbox.send(1, "answer", functools.partial(transport.send_html, 1, f"m{i}"))
                                   for i in range(3)))
        finally:
            await outbox.close()
    refused = [r for r in tg.requests if r.error and "retry after 3" in r.error]
    assert len(refused) == 1  # retry_after stays whole platform seconds on the wire
    assert 0.29 <= waited < 2.0  # waited 3 x 0.1 s, not 3 s
    assert tg.violations == []  # four messages, each a scaled second apart: within the limit
    sent = tg.bot_messages(1)
    assert sent[-1].sent_at - sent[1].sent_at >= 2 * 0.1


async def test_the_fake_refuses_what_is_too_fast_for_its_scaled_clock() -> None:
    async with FakeTelegram(time_scale=0.1, flood_control=True) as tg, Bot(tg.token, base_url=tg.base_url) as bot:
        tg.send_text(1, "hi")
        await Transport(bot).send_html(1, "one")
        with pytest.raises(RetryAfter) as refused:
            await Transport(bot).send_html(1, "two, 0.1 s too soon")
        assert retry_seconds(refused.value) == 1  # Telegram's second, as the wire says
        await asyncio.sleep(0.1)  # one of its seconds later
        await Transport(bot).send_html(1, "three")
    assert [v.kind for v in tg.violations] == ["chat"]


async def test_slacks_retry_handler_is_the_sdks_at_one_and_scaled_below() -> None:
    assert type(rate_limit_retries(3, 1.0)) is AsyncRateLimitErrorRetryHandler
    assert isinstance(rate_limit_retries(3, 0.05), ScaledRateLimitRetryHandler)
    async with FakeSlack(channels={"C1": "channel"}, time_scale=0.05) as slack:
        slack.ratelimit("chat.postMessage", count=1, retry_after=4)
        patient = AsyncWebClient(token=slack.bot_token, base_url=slack.base_url,
                                 retry_handlers=[rate_limit_retries(2, slack.time_scale)])
        started = time.monotonic()
        assert (await patient.chat_postMessage(channel="C1", text="after the wait"))["ok"]
        waited = time.monotonic() - started
        impatient = AsyncWebClient(token=slack.bot_token, base_url=slack.base_url)
        slack.ratelimit("chat.postMessage", count=1, retry_after=4)
        with pytest.raises(SlackApiError) as refused:
            await impatient.chat_postMessage(channel="C1", text="no retry")
    assert 4 * 0.05 <= waited < 2.0  # (4 + jitter under 1) x 0.05
    assert refused.value.response.headers.get("Retry-After") in ("4", ["4"])
