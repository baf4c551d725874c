"""The fake Slack Web API is as strict as Slack for what the bot calls, driven by the real slack-sdk."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

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


async def test_agent_sessions_as_slack_documents_them(slack: FakeSlack) -> None:
    c = client(slack)
    root = slack.user_message("C1", "U1", "hello")
    made = await c.agents_sessions_setStatus(channel_id="C1", thread_ts=root.ts, status="processing", title="Trip",
                                             initiator_user_id="U1")
    assert (made["status"], made["agent_status"], made["title"]) == ("processing", "processing", "Trip")
    again = await c.agents_sessions_setStatus(channel_id="C1", thread_ts=root.ts, status="suspended", title="ignored")
    assert again["title"] == "Trip"  # a title counts only when the session is created
    assert slack.agents.statuses("C1", root.ts) == ["processing", "suspended"]
    reply = slack.user_message("C1", "U1", "more", thread_ts=root.ts)
    await c.agents_sessions_setStatus(channel_id="C1", thread_ts=reply.ts, status="active")  # a reply's ts: its thread
    assert slack.agents.statuses("C1", root.ts)[-1] == "active"
    assert await error_of(c.agents_sessions_setStatus(channel_id="C1", thread_ts=root.ts, status="working")) == "invalid_arguments"
    assert await error_of(c.agents_sessions_setStatus(channel_id="C404", thread_ts=root.ts, status="active")) == "channel_not_found"
    assert await error_of(c.agents_sessions_setStatus(channel_id="C1", thread_ts="1.000001", status="active")) == "thread_not_found"
    assert await error_of(c.agents_sessions_setStatus(channel_id="C1", status="active")) == "invalid_arguments"
    other = slack.user_message("C1", "U1", "another")
    assert await error_of(c.agents_sessions_setStatus(channel_id="C1", thread_ts=other.ts, status="active",
                                                      title="x" * 201)) == "invalid_arguments"
    assert await error_of(c.agents_sessions_setStatus(channel_id="C1", thread_ts=other.ts, status="active",
                                                      initiator_user_id="U9")) == "user_not_in_channel"
    # rename: 1 to 200 characters, of a session that exists
    assert (await c.agents_sessions_rename(channel_id="C1", thread_ts=root.ts, title="Hangzhou, 12–14 March"))["title"]
    assert slack.agents.session("C1", root.ts).title == "Hangzhou, 12–14 March"  # type: ignore[union-attr]
    assert await error_of(c.agents_sessions_rename(channel_id="C1", thread_ts=root.ts, title=" ")) == "invalid_arguments"
    assert await error_of(c.agents_sessions_rename(channel_id="C1", thread_ts=other.ts, title="x")) == "session_not_found"
    # a workspace refusing a status; an app that is not an agent; one not subscribed to the stop event
    slack.agents.refuse = {"suspended": "not_allowed"}
    assert await error_of(c.agents_sessions_setStatus(channel_id="C1", thread_ts=root.ts, status="suspended")) == "not_allowed"
    slack.agents.refuse = {}
    slack.agents.bot_events = {"app_mention"}
    warned = await c.agents_sessions_setStatus(channel_id="C1", thread_ts=root.ts, status="active")
    assert warned["ok"] is True and warned["warning"] == "missing_agent_session_stopped_event_subscription"
    slack.agents.agent_app = False
    with pytest.raises(SlackApiError) as exc:
        await c.agents_sessions_setStatus(channel_id="C1", thread_ts=root.ts, status="active")
    assert (exc.value.response["error"], exc.value.response["needed"]) == ("missing_scope", "assistant:write")


async def test_stop_stream_moves_the_session_and_the_stop_button_stops_streams(slack: FakeSlack) -> None:
    c = client(slack)
    root = slack.user_message("C1", "U1", "hello")
    with pytest.raises(AssertionError):
        slack.press_stop("C1", root.ts, "U1")  # no session: no button
    await c.agents_sessions_setStatus(channel_id="C1", thread_ts=root.ts, status="processing")
    streams = [await c.chat_startStream(channel="C1", thread_ts=root.ts, recipient_user_id="U1", recipient_team_id="TFAKE",
                                        markdown_text=f"part {i}") for i in range(2)]
    first, second = (str(s["ts"]) for s in streams)
    assert await error_of(c.chat_stopStream(channel="C1", ts=first, session_status="paused")) == "invalid_arguments"
    assert slack.find("C1", first).stream == "open"  # type: ignore[union-attr]  # a refused stop stops nothing
    await c.chat_stopStream(channel="C1", ts=first, session_status="active")
    assert slack.agents.statuses("C1", root.ts) == ["processing", "active"]
    with pytest.raises(AssertionError):
        slack.press_stop("C1", root.ts, "U1")  # the button shows only while processing
    await c.agents_sessions_setStatus(channel_id="C1", thread_ts=root.ts, status="processing")
    event = slack.press_stop("C1", root.ts, "U2")
    assert event == {**event, "type": "agent_session_stopped", "channel": "C1", "thread_ts": root.ts, "user": "U2",
                     "streaming_message_ts": [second]}
    assert slack.find("C1", second).stream == "stopped"  # type: ignore[union-attr]
    assert slack.agents.statuses("C1", root.ts)[-1] == "processing"  # the app moves it on, not Slack
    assert await error_of(c.chat_appendStream(channel="C1", ts=second, markdown_text="x")) == "message_not_in_streaming_state"
    slack.agents.agent_app = False
    third = str((await c.chat_startStream(channel="C1", thread_ts=root.ts, recipient_user_id="U1",
                                          recipient_team_id="TFAKE", markdown_text="x"))["ts"])
    assert await error_of(c.chat_stopStream(channel="C1", ts=third, session_status="active")) == "missing_scope"


async def test_plan_display_ephemeral_messages_and_feedback_blocks(slack: FakeSlack) -> None:
    c = client(slack)
    root = slack.user_message("C1", "U1", "hello")
    task = {"type": "task_update", "id": "t1", "title": "Searching trains", "status": "in_progress"}
    ts = str((await c.chat_startStream(channel="C1", thread_ts=root.ts, recipient_user_id="U1", recipient_team_id="TFAKE",
                                       task_display_mode="plan",
                                       chunks=[{"type": "plan_update", "title": "Planning your trip"}, task]))["ts"])
    shown = slack.find("C1", ts)
    assert shown is not None and (shown.display_mode, shown.plan_title) == ("plan", "Planning your trip")
    slack.refuse_plan_display = True
    start: dict[str, Any] = {"channel": "C1", "thread_ts": root.ts, "recipient_user_id": "U1", "recipient_team_id": "TFAKE"}
    assert await error_of(c.chat_startStream(**start, task_display_mode="plan", markdown_text="x")) == "invalid_arguments"
    assert await error_of(c.chat_appendStream(channel="C1", ts=ts, chunks=[{"type": "plan_update", "title": "P"}])) \
        == "invalid_chunks"
    await c.chat_startStream(**start, task_display_mode="timeline", chunks=[task])

    assert await error_of(c.chat_postEphemeral(channel="C1", user="U9", text="hi")) == "user_not_in_channel"
    await c.chat_postEphemeral(channel="C1", user="U1", text="only you", thread_ts=root.ts)
    assert [(e.user, e.text, e.thread_ts) for e in slack.ephemeral] == [("U1", "only you", root.ts)]
    assert not any(m.text == "only you" for m in slack.messages["C1"])

    def rating(**change: object) -> list[dict[str, object]]:
        button = {"text": {"type": "plain_text", "text": "👍"}, "value": "up:s.1"}
        el = {"type": "feedback_buttons", "action_id": "plan_feedback", "positive_button": button,
              "negative_button": {**button, "value": "down:s.1"}, **change}
        return [{"type": "context_actions", "elements": [el]}]
    assert (await c.chat_postMessage(channel="C1", text="plan", blocks=rating()))["ok"]
    for bad in (rating(action_id=""), rating(extra=1), rating(positive_button={"text": {"type": "plain_text", "text": "x"}}),
                rating(negative_button={"text": {"type": "mrkdwn", "text": "x"}, "value": "v"}),
                rating(positive_button={"text": {"type": "plain_text", "text": "x" * 76}, "value": "v"}),
                [{"type": "context_actions", "elements": [{"type": "button", "text": {"type": "plain_text", "text": "x"}}]}],
                [{"type": "context_actions", "elements": rating()[0]["elements"] * 6}]):  # type: ignore[operator]
        assert await error_of(c.chat_postMessage(channel="C1", text="plan", blocks=bad)) == "invalid_blocks"
    # suggested prompts for a DM's Messages tab as a whole; a channel has none
    await c.assistant_threads_setSuggestedPrompts(channel_id="D1", prompts=[{"title": "a", "message": "b"}])
    assert slack.suggested == [("D1", "", [{"title": "a", "message": "b"}])]
    assert await error_of(c.assistant_threads_setSuggestedPrompts(channel_id="C1", prompts=[{"title": "a", "message": "b"}])) \
        == "not_allowed"
