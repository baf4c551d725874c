"""The fake Slack Web API is as strict as Slack for what the bot calls, driven by the real slack-sdk."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.rate_limits import rate_limit_retries
from tests.fakes.slack_api import FakeSlack


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack(channels={"C1": "channel", "D1": "im"}, post_burst=3) as fake:
        yield fake


def client(fake: FakeSlack, token: str | None = None, **kw: object) -> AsyncWebClient:
    return AsyncWebClient(token=token or fake.bot_token, base_url=fake.base_url, **kw)  # type: ignore[arg-type]


async def error_of(coro: object) -> str:
    with pytest.raises(SlackApiError) as exc:
        await coro  # type: ignore[misc]
    return str(exc.value.response["error"])


async def test_auth(slack: FakeSlack) -> None:
    auth = await client(slack).auth_test()
    assert auth["user_id"] == slack.bot_user_id and auth["bot_id"] == slack.bot_id
    assert await error_of(client(slack, "xoxb-wrong").auth_test()) == "invalid_auth"
    async with httpx.AsyncClient() as http:
        resp = await http.post(slack.base_url + "auth.test")
        assert resp.status_code == 200 and resp.json() == {"ok": False, "error": "not_authed"}
        # the token of a JSON body is not read: Slack wants the header then
        resp = await http.post(slack.base_url + "chat.postMessage",
                               json={"token": slack.bot_token, "channel": "C1", "text": "hi"})
        assert resp.json()["error"] == "not_authed"
        # a form body may carry it
        resp = await http.post(slack.base_url + "chat.postMessage",
                               data={"token": slack.bot_token, "channel": "C1", "text": "hi",
                                     "blocks": json.dumps([{"type": "divider"}])})
        assert resp.json()["ok"] is True
        resp = await http.post(slack.base_url + "chat.postMessage",
                               data={"token": slack.bot_token, "channel": "C1", "blocks": "[not json"})
        assert resp.json()["error"] == "invalid_blocks_format"


async def test_post_validation(slack: FakeSlack) -> None:
    c = client(slack)
    assert await error_of(c.chat_postMessage(channel="C404", text="x")) == "channel_not_found"
    with pytest.warns(UserWarning):  # the SDK warns too: every message should carry text
        assert await error_of(c.chat_postMessage(channel="C1", text="")) == "no_text"
    assert await error_of(c.chat_postMessage(channel="C1", text="x" * 40_001)) == "msg_too_long"
    ok = await c.chat_postMessage(channel="C1", text="x" * 40_000)
    assert ok["ok"]
    too_many = [{"type": "divider"}] * 51
    assert await error_of(c.chat_postMessage(channel="C1", text="x", blocks=too_many)) == "invalid_blocks"
    long_section = [{"type": "section", "text": {"type": "mrkdwn", "text": "y" * 3001}}]
    assert await error_of(c.chat_postMessage(channel="C1", text="x", blocks=long_section)) == "invalid_blocks"
    long_header = [{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}]
    assert await error_of(c.chat_postMessage(channel="C1", text="x", blocks=long_header)) == "invalid_blocks"
    mrkdwn_header = [{"type": "header", "text": {"type": "mrkdwn", "text": "h"}}]
    assert await error_of(c.chat_postMessage(channel="C1", text="x", blocks=mrkdwn_header)) == "invalid_blocks"
    long_button = [{"type": "actions", "elements": [
        {"type": "button", "action_id": "a", "text": {"type": "plain_text", "text": "b" * 76}, "value": "v"}]}]
    assert await error_of(c.chat_postMessage(channel="C1", text="x", blocks=long_button)) == "invalid_blocks"
    heavy = [{"type": "section", "text": {"type": "mrkdwn", "text": "z" * 2900}}] * 5
    assert await error_of(c.chat_postMessage(channel="C1", text="x", blocks=heavy)) == "msg_blocks_too_long"
    assert await error_of(c.chat_postMessage(channel="C1", text="x", thread_ts="123.456")) == "thread_not_found"


async def test_threads_updates_reactions_and_status(slack: FakeSlack) -> None:
    c = client(slack)
    parent = slack.user_message("C1", "U1", "hello")
    reply = await c.chat_postMessage(channel="C1", thread_ts=parent.ts, text="first")
    # a reply's ts names its thread, as on Slack
    nested = await c.chat_postMessage(channel="C1", thread_ts=reply["ts"], text="second")
    assert [m.text for m in slack.thread("C1", parent.ts)] == ["hello", "first", "second"]
    await c.chat_update(channel="C1", ts=nested["ts"], text="second, edited")
    assert slack.find("C1", nested["ts"]).text == "second, edited"  # type: ignore[union-attr]
    assert await error_of(c.chat_update(channel="C1", ts="1.000001", text="x")) == "message_not_found"
    assert await error_of(c.chat_update(channel="C1", ts=parent.ts, text="x")) == "cant_update_message"
    await c.reactions_add(channel="C1", timestamp=parent.ts, name="eyes")
    assert await error_of(c.reactions_add(channel="C1", timestamp=parent.ts, name="eyes")) == "already_reacted"
    assert await error_of(c.assistant_threads_setStatus(channel_id="C1", thread_ts=parent.ts,
                                                        status="working")) == "not_allowed"
    dm = slack.user_message("D1", "U1", "hi")
    await c.assistant_threads_setStatus(channel_id="D1", thread_ts=dm.ts, status="working")
    assert slack.statuses == [("D1", dm.ts, "working")]


async def test_rate_limits(slack: FakeSlack) -> None:
    c = client(slack)
    slack.ratelimit("chat.update", count=1, retry_after=7)
    mine = await c.chat_postMessage(channel="C1", text="a")
    with pytest.raises(SlackApiError) as exc:
        await c.chat_update(channel="C1", ts=mine["ts"], text="b")
    assert exc.value.response.status_code == 429
    assert exc.value.response.headers.get("Retry-After") in ("7", ["7"])
    # sustained posting into one channel: the burst passes, then 429 until the bucket refills
    for _ in range(2):
        await c.chat_postMessage(channel="C1", text="burst")
    with pytest.raises(SlackApiError) as exc:
        await c.chat_postMessage(channel="C1", text="one too many")
    assert exc.value.response.status_code == 429 and exc.value.response["error"] == "ratelimited"
    # the bot's retry handler (the SDK's, on the fake's clock) waits for Retry-After and gets through
    patient = client(slack, retry_handlers=[rate_limit_retries(3, slack.time_scale)])
    started = time.monotonic()
    resp = await patient.chat_postMessage(channel="C1", text="after the wait")
    assert resp["ok"] and time.monotonic() - started >= 1.0 * slack.time_scale
