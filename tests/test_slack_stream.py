"""Streaming, Stop and assistant threads on Slack, end to end: signed events into the real bot,
the LLM client streaming from the fake OpenAI server, Web API calls into the fake Slack (which
streams as strictly as Slack: a thread, a recipient in channels, appends only to an open stream)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest

from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.slack_api import FakeSlack, SlackMessage
from tests.slack_support import SlackStack, slack_stack
from tests.spine_support import make_tools

ANSWER = "Day 1: **the Bund** at dusk, then a night walk on Nanjing Road. Day 2: Yu Garden early, before the crowds."


def llm(fake: FakeOpenAI) -> LLM:
    return LLM(LLMConfig(model="gpt-4o-mini", api_key="sk-test", base_url=fake.base_url, timeout_s=10, max_retries=0))


def streamed(s: SlackStack, channel: str, thread: str) -> list[SlackMessage]:
    return [m for m in s.fake.bot_posts(channel, thread) if m.stream is not None]


async def test_a_channel_thread_streams_the_answer_for_the_asker_and_the_answer_takes_its_place(tmp_path: Path) -> None:
    async with FakeOpenAI([reply(f"<answer>{ANSWER}</answer>", chunk_chars=6, chunk_gap_ms=10)]) as model, \
            slack_stack(tmp_path, chat_model=llm(model)) as s:
        msg = s.mention(text="two days in Shanghai")
        await s.events.app_mention(msg)
        await s.fake.wait_for(lambda f: any(m.stream == "stopped" and m.edits for m in streamed(s, "C1", msg.ts)))
        [message] = streamed(s, "C1", msg.ts)
        start = s.fake.calls_of("chat.startStream")[0].args
        assert start["thread_ts"] == msg.ts and start["recipient_user_id"] == "U1" and start["recipient_team_id"] == "TFAKE"
        assert "".join(message.appends) == ANSWER  # what streamed is the answer, piece by piece
        assert len(message.appends) >= 2
        assert "*the Bund*" in message.text  # then the answer (mrkdwn) took the streamed message's place
        answers = [m for m in s.fake.bot_posts("C1", msg.ts) if "Yu Garden" in m.text]
        assert answers == [message]  # posted once
        model.assert_complete()


async def test_the_steps_stream_as_task_updates_after_the_text_written_before_them(tmp_path: Path) -> None:
    script = [reply("Checking the weather first.", chunk_chars=6,
                    tool_calls=[call("lookup", {"city": "Shanghai"}, id="call_l1"), call("teleport", {}, id="call_t1")]),
              reply(f"<answer>{ANSWER}</answer>", chunk_chars=6)]
    async with FakeOpenAI(script) as model, slack_stack(tmp_path, chat_model=llm(model), tool_set=make_tools()) as s:
        msg = s.mention(text="two days in Shanghai")
        await s.events.app_mention(msg)
        await s.fake.wait_for(lambda f: any("Yu Garden" in m.text and m.edits for m in f.bot_posts("C1", msg.ts)))
        [step, answer] = streamed(s, "C1", msg.ts)
        assert step.text == "Checking the weather first." and step.stream == "stopped"  # the text, then the tasks
        lookup, teleport = step.tasks["call_l1"], step.tasks["call_t1"]
        assert [u["status"] for u in step.task_updates if u["id"] == "call_l1"] == ["in_progress", "complete"]
        assert lookup["title"] == "lookup · Shanghai" and lookup["output"] == "Shanghai: sunny"
        assert teleport["status"] == "error"  # a tool the agent does not have
        assert not answer.tasks and "Yu Garden" in answer.text  # the answer took its own message's place
        assert all(c.error is None for c in s.fake.calls if c.method.startswith("chat.") and "Stream" in c.method)
        model.assert_complete()


async def test_where_streaming_is_refused_the_text_goes_by_chat_update(tmp_path: Path) -> None:
    fake = FakeSlack(channels={"C1": "channel", "D1": "im"})
    fake.refuse_streams = True
    async with fake, FakeOpenAI([reply(f"<answer>{ANSWER}</answer>", chunk_chars=6, chunk_gap_ms=60)]) as model, \
            slack_stack(tmp_path, fake=fake, chat_model=llm(model)) as s:
        msg = s.mention(text="two days in Shanghai")
        await s.events.app_mention(msg)
        await s.fake.wait_for(lambda f: any("Yu Garden" in m.text for m in f.bot_posts("C1", msg.ts)))
        answers = [m for m in s.fake.bot_posts("C1", msg.ts) if "Yu Garden" in m.text]
        assert len(answers) == 1 and answers[0].edits >= 2  # shown as it was written, then the answer
        assert s.fake.calls_of("chat.startStream")[0].error == "not_allowed_token_type"
        model.assert_complete()


async def test_the_stop_button_stops_the_run_and_a_stop_from_someone_else_is_refused(tmp_path: Path) -> None:
    script = [reply(ANSWER, chunk_chars=3, chunk_gap_ms=120), reply("<answer>Shorter: the Bund.</answer>")]
    async with FakeOpenAI(script) as model, slack_stack(tmp_path, chat_model=llm(model)) as s:
        msg = s.mention(text="two days in Shanghai")
        await s.events.app_mention(msg)
        await s.fake.wait_for(lambda f: any(m.accessory_actions() == ["stop_run"] for m in f.bot_posts("C1", msg.ts)))
        status = next(m for m in s.fake.bot_posts("C1", msg.ts) if m.accessory_actions())
        await s.fake.wait_for(lambda f: bool(streamed(s, "C1", msg.ts)))
        await click_stop(s, status, user="U2")
        await s.fake.wait_for(lambda f: any("Only the person who asked" in m.text for m in f.bot_posts("C1", msg.ts)))
        await click_stop(s, status, user="U1")
        await s.fake.wait_for(lambda f: any("Stopped while the answer" in m.text for m in f.bot_posts("C1", msg.ts)))
        notice = next(m for m in s.fake.bot_posts("C1", msg.ts) if "Stopped while the answer" in m.text)
        [partial] = streamed(s, "C1", msg.ts)
        assert partial.stream == "stopped" and ANSWER.startswith(partial.text) and partial.text
        assert partial.text not in notice.text  # the part written is in the thread once
        await s.fake.wait_for(lambda f: not status.blocks)  # the Stop button went with the run
        follow = s.fake.user_message("C1", "U1", "shorter please", thread_ts=msg.ts)
        await s.events.message(follow)
        await s.fake.wait_for(lambda f: any("Shorter" in m.text for m in f.bot_posts("C1", msg.ts)))
        model.assert_complete()


async def test_a_stop_button_left_from_an_earlier_run_does_not_stop_the_run_working_now(tmp_path: Path) -> None:
    script = [reply("<answer>Short: the Bund.</answer>", latency_ms=300),
              reply(ANSWER, chunk_chars=3, chunk_gap_ms=120)]
    async with FakeOpenAI(script) as model, slack_stack(tmp_path, chat_model=llm(model)) as s:
        msg = s.mention(text="two days in Shanghai")
        await s.events.app_mention(msg)
        await s.fake.wait_for(lambda f: any(m.accessory_actions() == ["stop_run"] for m in f.bot_posts("C1", msg.ts)))
        first = next(m for m in s.fake.bot_posts("C1", msg.ts) if m.accessory_actions())
        [old] = [b["accessory"]["value"] for b in first.blocks if isinstance(b.get("accessory"), dict)]
        assert old.endswith(".1")
        await s.fake.wait_for(lambda f: any("the Bund" in m.text for m in f.bot_posts("C1", msg.ts)))
        await s.events.message(s.fake.user_message("C1", "U1", "a longer one please", thread_ts=msg.ts))
        await s.fake.wait_for(lambda f: any(m.accessory_actions() and m.ts != first.ts for m in f.bot_posts("C1", msg.ts)))
        await s.fake.wait_for(lambda f: bool(streamed(s, "C1", msg.ts)))
        await click_stop(s, first, user="U1", value=old)  # the first run's button, as it was on screen
        await s.fake.wait_for(lambda f: any("already ended" in m.text for m in f.bot_posts("C1", msg.ts)))
        await s.fake.wait_for(lambda f: any("Yu Garden" in m.text for m in f.bot_posts("C1", msg.ts)), within=15)
        assert not any("Stopped while" in m.text for m in s.fake.bot_posts("C1", msg.ts))
        model.assert_complete()


async def test_an_assistant_thread_gets_prompts_in_the_persons_language_and_a_title(tmp_path: Path) -> None:
    """An app still on the Assistant experience (manifest `assistant_view`, no agent sessions)."""
    async with FakeOpenAI([reply(f"<answer>{ANSWER}</answer>")]) as model, slack_stack(tmp_path, chat_model=llm(model)) as s:
        s.fake.agents.agent_app = False
        s.fake.user_locales["U9"] = "zh-CN"
        root = s.fake.user_message("D1", "U9", "hi")  # the thread the panel opened
        event: dict[str, Any] = {"type": "assistant_thread_started", "event_ts": root.ts, "assistant_thread": {
            "user_id": "U9", "context": {}, "channel_id": "D1", "thread_ts": root.ts}}
        assert (await s.events.event(event)).status == 200
        await s.fake.wait_for(lambda f: bool(f.suggested))
        [(channel, thread, prompts)] = s.fake.suggested
        assert (channel, thread) == ("D1", root.ts) and len(prompts) == 3
        assert all(any("\u4e00" <= c <= "\u9fff" for c in p["message"]) for p in prompts)  # Chinese
        ask = s.fake.user_message("D1", "U9", "两天上海行程", thread_ts=root.ts)
        await s.events.message(ask)
        await s.fake.wait_for(lambda f: bool(f.titles and f.statuses) and any("Yu Garden" in m.text
                                                                              for m in f.bot_posts("D1", root.ts)))
        assert s.fake.titles == [("D1", root.ts, "两天上海行程")]
        assert [thread for _, thread, _ in s.fake.statuses] == [root.ts]  # "working…" while it ran
        assert s.fake.calls_of("chat.startStream")[0].args.get("recipient_user_id") is None  # a DM needs none
        await s.fake.wait_for(lambda f: bool(f.calls_of("chat.stopStream")))
        assert not s.fake.calls_of("chat.stopStream")[0].args.get("session_status")  # no session to move
        assert len(s.fake.calls_of("agents.sessions.setStatus")) == 1  # refused once, not asked again
        model.assert_complete()


@pytest.mark.parametrize(("method", "args", "error"), [
    ("chat.startStream", {"channel": "C1", "markdown_text": "x"}, "missing_thread_ts"),
    ("chat.startStream", {"channel": "C1", "thread_ts": "ROOT", "markdown_text": "x"}, "missing_recipient_user_id"),
    ("chat.startStream", {"channel": "C1", "thread_ts": "ROOT", "recipient_user_id": "U1"}, "missing_recipient_team_id"),
    ("chat.appendStream", {"channel": "C1", "ts": "ROOT", "markdown_text": "x"}, "message_not_in_streaming_state"),
    ("chat.stopStream", {"channel": "C1", "ts": "ROOT"}, "message_not_in_streaming_state"),
    *[("chat.startStream", {"channel": "C1", "thread_ts": "ROOT", "recipient_user_id": "U1",
                            "recipient_team_id": "TFAKE", "chunks": chunks}, "invalid_chunks") for chunks in (
        [], "not json", [{"type": "markdown_text"}], [{"type": "markdown_text", "text": "x", "extra": 1}],
        [{"type": "task_update", "id": "t1", "title": "lookup"}],  # no status
        [{"type": "task_update", "id": "t1", "title": "lookup", "status": "done"}],
        [{"type": "task_update", "id": "", "title": "lookup", "status": "complete"}],
        [{"type": "task_update", "id": "t1", "title": "lookup", "status": "complete", "output": 3}],
        [{"type": "task_update", "id": "t1", "title": "x", "status": "pending", "sources": [{"url": "https://a"}]}],
        [{"type": "plan_update"}], [{"type": "thinking", "text": "x"}], [{"type": "blocks", "blocks": [{"type": "nope"}]}],
    )],
    ("chat.startStream", {"channel": "C1", "thread_ts": "ROOT", "recipient_user_id": "U1",
                          "recipient_team_id": "TFAKE", "task_display_mode": "list"}, "invalid_arguments"),
])
async def test_the_fake_streams_only_as_slack_does(method: str, args: dict[str, Any], error: str) -> None:
    async with FakeSlack(channels={"C1": "channel"}) as fake:
        root = fake.user_message("C1", "U1", "hello")
        body = {k: (root.ts if v == "ROOT" else v) for k, v in args.items()}
        async with aiohttp.ClientSession() as http:
            resp = await http.post(f"{fake.base_url}{method}", json=body,
                                   headers={"Authorization": f"Bearer {fake.bot_token}"})
            assert (await resp.json())["error"] == error
            ok = await http.post(f"{fake.base_url}chat.startStream", headers={"Authorization": f"Bearer {fake.bot_token}"},
                                 json={"channel": "C1", "thread_ts": root.ts, "recipient_user_id": "U1",
                                       "recipient_team_id": "TFAKE"})
            ts = (await ok.json())["ts"]
            for step in ("chat.appendStream", "chat.stopStream"):
                r = await http.post(f"{fake.base_url}{step}", headers={"Authorization": f"Bearer {fake.bot_token}"},
                                    json={"channel": "C1", "ts": ts, "markdown_text": "more"})
                assert (await r.json())["ok"] is True
            late = await http.post(f"{fake.base_url}chat.appendStream", headers={"Authorization": f"Bearer {fake.bot_token}"},
                                   json={"channel": "C1", "ts": ts, "markdown_text": "late"})
            assert (await late.json())["error"] == "message_not_in_streaming_state"


async def click_stop(s: SlackStack, status: SlackMessage, *, user: str, value: str | None = None) -> None:
    """A click on the Stop button beside the status message (a block_actions payload, signed),
    carrying the button's value (or `value`: what the button said when it was on screen)."""
    if value is None:
        [value] = [b["accessory"]["value"] for b in status.blocks if isinstance(b.get("accessory"), dict)]
    payload = {
        "type": "block_actions", "user": {"id": user, "team_id": "TFAKE"}, "api_app_id": "AFAKE",
        "container": {"type": "message", "message_ts": status.ts, "channel_id": status.channel, "thread_ts": status.thread_ts},
        "channel": {"id": status.channel}, "message": status.wire(), "team": {"id": "TFAKE"},
        "trigger_id": "1.2", "actions": [{"type": "button", "action_id": "stop_run", "block_id": "b", "value": value,
                                          "action_ts": f"{time.time():.6f}"}],
    }
    delivery = await s.events.post(urlencode({"payload": json.dumps(payload)}).encode(), "application/x-www-form-urlencoded")
    assert delivery.status == 200
