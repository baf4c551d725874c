"""Which Slack events start or continue a session, and how requests are verified."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
from slack_bolt.request.async_request import AsyncBoltRequest

from adapters.slack import render
from adapters.slack.inbound import (
    command_or_text,
    route_button,
    route_event,
    route_feedback,
    route_session_stop,
    route_stop,
)
from adapters.slack.signing import SignedRequests
from bot.surface import ChatKey, MessageKind, run_ref
from tests.fakes.slack_events import sign

BOT = "UBOT"


def ev(text: str, *, kind: str = "message", ts: str = "1700000000.000100", **extra: Any) -> dict[str, Any]:
    return {"type": kind, "channel": "C1", "user": "U1", "text": text, "ts": ts, "channel_type": "channel", **extra}


def test_a_mention_starts_a_session_keyed_by_its_ts() -> None:
    got = route_event(ev(f"<@{BOT}> plan a trip &amp; more", kind="app_mention"), BOT)
    assert got is not None and not got.needs_session
    assert got.message.chat == ChatKey("slack", "C1", "1700000000.000100")
    assert got.message.text == "plan a trip & more"
    assert got.message.dedup_id == "C1:1700000000.000100"


def test_app_mention_and_message_of_one_mention_share_the_dedup_id() -> None:
    a = route_event(ev(f"<@{BOT}> hi", kind="app_mention"), BOT)
    b = route_event(ev(f"<@{BOT}|travelbot> hi"), BOT)
    assert a is not None and b is not None
    assert a.message.dedup_id == b.message.dedup_id and a.message.chat == b.message.chat


def test_thread_replies_continue_only_existing_sessions() -> None:
    got = route_event(ev("2025-05-01", ts="1700000001.000200", thread_ts="1700000000.000100"), BOT)
    assert got is not None and got.needs_session
    assert got.message.chat.thread_id == "1700000000.000100"
    assert route_event(ev("lunch anyone?"), BOT) is None  # top level, no mention


def test_dm_starts_without_a_mention() -> None:
    got = route_event(ev("plan a trip", channel="D1", channel_type="im"), BOT)
    assert got is not None and not got.needs_session and got.message.chat.chat_id == "D1"


def test_bots_edits_and_the_bot_itself_are_ignored() -> None:
    assert route_event(ev(f"<@{BOT}> hi", bot_id="B2"), BOT) is None
    assert route_event(ev(f"<@{BOT}> hi", subtype="bot_message"), BOT) is None
    assert route_event(ev(f"<@{BOT}> hi", subtype="message_changed"), BOT) is None
    assert route_event(ev("hi", user=BOT, thread_ts="1"), BOT) is None
    assert route_event({"type": "message", "channel": "C1"}, BOT) is None  # malformed
    assert route_event(ev(f"<@{BOT}> hi", subtype="thread_broadcast"), BOT) is not None


def test_thread_words_become_commands() -> None:
    assert command_or_text("Cancel") == "/cancel"
    assert command_or_text(" new ") == "/new"
    assert command_or_text("status!") == "/status"
    assert command_or_text("help") == "/help"
    assert command_or_text("取消") == "/cancel"
    assert command_or_text("cancel my hotel") == "cancel my hotel"
    got = route_event(ev(f"<@{BOT}> cancel", thread_ts="1699999999.000001"), BOT)
    assert got is not None and got.message.text == "/cancel"
    bare = route_event(ev(f"<@{BOT}>"), BOT)
    assert bare is not None and bare.message.text == "/help"


def test_a_button_press_answers_with_the_option() -> None:
    payload = {
        "type": "block_actions", "user": {"id": "U7"},
        "container": {"type": "message", "message_ts": "1700000002.000300", "channel_id": "C1",
                      "thread_ts": "1700000000.000100"},
        "message": {"ts": "1700000002.000300", "thread_ts": "1700000000.000100"},
        "actions": [{"action_id": "ask_option_1", "block_id": "ask:call_1", "value": "北京西"}],
    }
    press = route_button(payload)
    assert press is not None
    assert press.message.kind is MessageKind.BUTTON and press.message.text == "北京西"
    assert press.message.chat == ChatKey("slack", "C1", "1700000000.000100")
    assert press.message.reply_to == press.question_ts == "1700000002.000300"
    assert route_button({"type": "block_actions"}) is None


async def test_signature_checks_are_bolts_and_never_log_the_body(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    now = time.time()
    signed = SignedRequests("secret")
    body = b'{"type":"event_callback","marker":"SECRET-BODY-MARKER"}'
    ts = str(int(now))

    def request(ts: str, sig: str, payload: bytes = body) -> AsyncBoltRequest:
        headers = {"x-slack-request-timestamp": ts, "x-slack-signature": sig} if ts or sig else {}
        return AsyncBoltRequest(body=payload.decode(), headers=headers)

    assert await signed.refusal(request(ts, sign("secret", ts, body))) is None
    assert await signed.refusal(request(ts, sign("other", ts, body))) == "forged"
    assert await signed.refusal(request(ts, sign("secret", ts, body), body + b" ")) == "forged"
    old = str(int(now) - 301)
    assert await signed.refusal(request(old, sign("secret", old, body))) == "stale"
    future = str(int(now) + 301)
    assert await signed.refusal(request(future, sign("secret", future, body))) == "stale"
    assert await signed.refusal(request("", "")) == "unsigned"
    assert await signed.refusal(request("abc", "v0=1")) == "forged"
    assert "SECRET-BODY-MARKER" not in caplog.text and "Invalid request signature" in caplog.text


def test_a_stop_click_names_the_run_its_button_was_for():
    def click(value: str | None) -> dict[str, Any]:
        action: dict[str, Any] = {"type": "button", "action_id": "stop_run", "action_ts": "1700000003.1"}
        if value is not None:
            action["value"] = value
        return {"type": "block_actions", "user": {"id": "U1"}, "channel": {"id": "C1"},
                "message": {"ts": "1700000002.000100", "thread_ts": "1700000000.000100"}, "actions": [action]}

    ref = run_ref("0123456789abcdef0123456789abcdef", 3)
    [(block,)] = [tuple(render.status("Step 1", "Stop", "stop_run", ref))]
    assert block["accessory"]["value"] == ref
    named = route_stop(click(ref))
    assert named is not None and named.text == "/stop" and named.run == ref and named.is_group
    assert named.chat == ChatKey("slack", "C1", "1700000000.000100")
    bare = route_stop(click("stop"))  # a button posted before runs were named: the run there is
    assert bare is not None and bare.run is None
    assert route_stop(click("drop table")) is None


def test_slacks_stop_button_is_the_threads_stop_from_whoever_pressed_it() -> None:
    event = {"type": "agent_session_stopped", "channel": "C1", "thread_ts": "1700000000.000100", "user": "U2",
             "event_ts": "1700000009.000001", "streaming_message_ts": ["1700000001.000200"]}
    stop = route_session_stop(event)
    assert stop is not None
    assert (stop.chat, stop.user_id, stop.text, stop.run, stop.is_group) == (
        ChatKey("slack", "C1", "1700000000.000100"), "U2", "/stop", None, True)  # names no run: whatever runs now
    assert stop.dedup_id == "C1:1700000000.000100:session_stop:1700000009.000001"
    dm = route_session_stop({**event, "channel": "D1"})
    assert dm is not None and not dm.is_group  # in a DM anyone (the one person) may stop
    for junk in ({**event, "user": ""}, {**event, "type": "app_mention"}, {k: v for k, v in event.items() if k != "thread_ts"},
                 {**event, "streaming_message_ts": "not a list"}):
        assert route_session_stop(junk) is None


def test_a_feedback_press_names_its_rating_and_run() -> None:
    run = run_ref("0123456789abcdef0123456789abcdef", 2)

    def press(value: str) -> dict[str, Any]:
        return {"type": "block_actions", "user": {"id": "U1"},
                "container": {"type": "message", "message_ts": "1700000002.000100", "channel_id": "C1",
                              "thread_ts": "1700000000.000100"},
                "actions": [{"type": "feedback_buttons", "action_id": render.FEEDBACK_ACTION, "value": value}]}
    up = route_feedback(press(f"up:{run}"))
    assert up is not None and (up.chat, up.user_id, up.run, up.rating) == (
        ChatKey("slack", "C1", "1700000000.000100"), "U1", run, "up")
    assert route_feedback(press(f"down:{run}")) is not None
    for junk in ("sideways:" + run, "up:", "up:not a run", "up", ""):
        assert route_feedback(press(junk)) is None
