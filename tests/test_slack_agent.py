"""Slack's Agent messaging experience end to end: the manifest we ship, agent sessions that follow
the chat's state machine, Slack's own stop button, steps as a plan inside the stream. Signed
events into the real bot, Web API calls into the fake Slack (tests.fakes.slack_agents: as strict
as Slack's reference for agents.sessions.* and chat.stopStream's session_status)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from adapters.slack.mrkdwn import unescape
from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig
from bot.surface import ChatKey
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.slack_api import FakeSlack
from tests.pg_support import fresh_database
from tests.scripted_trip import DAYS
from tests.slack_support import SlackStack, slack_model, slack_stack
from tests.spine_support import make_tools

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "adapters" / "slack" / "manifest.yaml"
ANSWER = "Day 1: **the Bund** at dusk. Day 2: Yu Garden early, before the crowds."


def collapsed(statuses: list[str]) -> list[str]:
    """The statuses a session went through (setting one twice in a row changes nothing)."""
    return [x for i, x in enumerate(statuses) if i == 0 or statuses[i - 1] != x]


def llm(fake: FakeOpenAI) -> LLM:
    return LLM(LLMConfig(model="gpt-4o-mini", api_key="sk-test", base_url=fake.base_url, timeout_s=10, max_retries=0))


async def ends_with(s: SlackStack, channel: str, thread: str, status: str, within: float = 10.0) -> None:
    await s.fake.wait_for(lambda f: f.agents.statuses(channel, thread)[-1:] == [status], within)


def shipped() -> dict[str, Any]:
    return yaml.safe_load(MANIFEST.read_text())


def test_the_manifest_we_ship_is_the_agent_experience_and_subscribes_to_what_the_bot_listens_for() -> None:
    manifest = shipped()
    features = manifest["features"]
    assert "assistant_view" not in features and features["agent_view"]["agent_description"].strip()
    assert features["app_home"]["messages_tab_enabled"] is True  # the Agent experience lives in the Messages tab
    assert all(p["title"] and p["message"] for p in features["agent_view"]["suggested_prompts"])
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    assert {"app_mention", "message.channels", "message.groups", "message.im", "app_home_opened",
            "agent_session_stopped"} <= events
    assert not {"assistant_thread_started", "assistant_thread_context_changed"} & events  # replaced by app_home_opened
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    assert {"chat:write", "assistant:write", "app_mentions:read", "reactions:write", "users:read", "files:write",
            "channels:read", "im:history"} <= scopes
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    # the docs show the same manifest
    docs = (ROOT / "docs" / "surfaces" / "slack.md").read_text()
    assert f"```yaml\n{MANIFEST.read_text()}```" in docs


async def test_the_session_follows_the_chat_is_named_after_the_trip_and_closes_on_new(tmp_path: Path) -> None:
    fake = FakeSlack(channels={"C1": "channel"})
    fake.agents.bot_events = set(shipped()["settings"]["event_subscriptions"]["bot_events"])
    async with fake, slack_stack(tmp_path, fake=fake) as s:
        msg = s.mention(text="plan a trip from Beijing to Shanghai")
        await s.events.app_mention(msg)
        await s.wait_question("C1", msg.ts)
        await ends_with(s, "C1", msg.ts, "suspended")
        session = s.fake.agents.session("C1", msg.ts)
        assert session is not None and session.initiator == "U1"
        assert session.title == "plan a trip from Beijing to Shanghai"  # the request, until there is a plan
        await s.events.message(s.fake.user_message("C1", "U1", DAYS[1], thread_ts=msg.ts))
        await s.wait_plan("C1", msg.ts)
        await s.fake.wait_for(lambda f: session.title == "Beijing → Shanghai, 2–3 May")  # named after the trip
        await ends_with(s, "C1", msg.ts, "active")
        assert collapsed(s.fake.agents.statuses("C1", msg.ts)) == ["processing", "suspended", "processing", "active"]
        # what it costs: one call per change (setStatus, or the stream's stop carries it), one rename
        carried = [c for c in s.fake.calls_of("chat.stopStream") if c.args.get("session_status")]
        assert len(s.fake.calls_of("agents.sessions.setStatus")) + len(carried) == 4
        assert len(s.fake.calls_of("agents.sessions.rename")) == 1
        await s.events.message(s.fake.user_message("C1", "U1", "new", thread_ts=msg.ts))
        await ends_with(s, "C1", msg.ts, "closed")
        # the shipped manifest subscribes to the stop event: Slack never warned; nothing was refused
        assert not s.adapter.sessions.refusals
        assert all(c.error is None for c in s.fake.calls if c.method.startswith("agents."))


async def test_a_streamed_answer_ends_its_stream_with_the_session_status(tmp_path: Path) -> None:
    async with FakeOpenAI([reply(f"<answer>{ANSWER}</answer>", chunk_chars=6, chunk_gap_ms=10)]) as model, \
            slack_stack(tmp_path, chat_model=llm(model)) as s:
        msg = s.mention(text="two days in Shanghai")
        await s.events.app_mention(msg)
        await s.fake.wait_for(lambda f: any(c.args.get("session_status") for c in f.calls_of("chat.stopStream")))
        await ends_with(s, "C1", msg.ts, "active")
        [stop] = [c for c in s.fake.calls_of("chat.stopStream") if c.args.get("session_status")]
        assert stop.args["session_status"] == "active" and stop.error is None
        # the stream carried it: no setStatus said it again
        assert [c.args["status"] for c in s.fake.calls_of("agents.sessions.setStatus")] == ["processing"]
        model.assert_complete()


async def test_steps_show_as_a_plan_inside_the_stream(tmp_path: Path) -> None:
    script = [reply("Checking the weather first.", chunk_chars=6, tool_calls=[call("lookup", {"city": "Shanghai"}, id="call_l1")]),
              reply(f"<answer>{ANSWER}</answer>", chunk_chars=6)]
    async with FakeOpenAI(script) as model, slack_stack(tmp_path, chat_model=llm(model), tool_set=make_tools()) as s:
        msg = s.mention(text="two days in Shanghai")
        await s.events.app_mention(msg)
        await s.fake.wait_for(lambda f: any("Yu Garden" in m.text and m.stream == "stopped" for m in f.bot_posts("C1", msg.ts)))
        step = next(m for m in s.fake.bot_posts("C1", msg.ts) if m.tasks)
        assert step.display_mode == "plan" and step.plan_title == "Planning your trip"
        assert [(u["title"], u["status"]) for u in step.task_updates] == [("lookup · Shanghai", "in_progress"),
                                                                         ("lookup · Shanghai", "complete")]
        assert step.tasks["call_l1"]["output"] == "Shanghai: sunny"
        model.assert_complete()


async def test_where_the_workspace_refuses_the_plan_the_steps_are_a_timeline(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeSlack(channels={"C1": "channel"})
    fake.refuse_plan_display = True
    script = [reply("Checking.", chunk_chars=6, tool_calls=[call("lookup", {"city": "Shanghai"}, id="call_l1")]),
              reply("And again.", chunk_chars=6, tool_calls=[call("lookup", {"city": "Hangzhou"}, id="call_l2")]),
              reply(f"<answer>{ANSWER}</answer>", chunk_chars=6)]
    async with fake, FakeOpenAI(script) as model, \
            slack_stack(tmp_path, fake=fake, chat_model=llm(model), tool_set=make_tools()) as s:
        msg = s.mention(text="two days in Shanghai")
        await s.events.app_mention(msg)
        await s.fake.wait_for(lambda f: any("Yu Garden" in m.text and m.stream == "stopped" for m in f.bot_posts("C1", msg.ts)))
        steps = [m for m in s.fake.bot_posts("C1", msg.ts) if m.tasks]
        # today's rendering: task cards in the stream's default (timeline) display
        assert len(steps) == 2 and all(m.display_mode in (None, "timeline") and m.plan_title is None for m in steps)
        assert [m.tasks[i]["status"] for m, i in zip(steps, ("call_l1", "call_l2"), strict=True)] == ["complete"] * 2
        refused = [c for c in s.fake.calls_of("chat.startStream") if c.error]
        assert len(refused) == 1  # asked once; the workspace's answer is remembered
        assert caplog.text.count("refuses steps as a plan") == 1
        model.assert_complete()


async def test_slacks_stop_button_stops_the_run_and_the_session_is_active_again(tmp_path: Path) -> None:
    gate = asyncio.Event()
    model = slack_model(gate=gate)
    async with slack_stack(tmp_path, model=model) as s:
        msg = s.mention(text="plan a trip from Beijing to Shanghai")
        await s.events.app_mention(msg)
        await asyncio.wait_for(model.held.wait(), 10)
        await ends_with(s, "C1", msg.ts, "processing")
        assert (await s.events.event(s.fake.press_stop("C1", msg.ts, "U1"))).status == 200
        await s.fake.wait_for(lambda f: any("Stopped" in m.text for m in f.bot_posts("C1", msg.ts)))
        await ends_with(s, "C1", msg.ts, "active")  # Slack leaves it processing: the bot moved it on
        gate.set()
        await s.runtime.manager.wait_until_idle(ChatKey("slack", "C1", msg.ts), timeout=5)
        assert model.calls == 1 and not any(m.button_values() for m in s.fake.bot_posts("C1", msg.ts))
        info = await s.runtime.manager.session_info(ChatKey("slack", "C1", msg.ts))
        assert info is not None and info.state == "idle"


async def test_slacks_stop_button_reaches_the_run_through_another_process(tmp_path: Path) -> None:
    """The event may reach any process behind the balancer: it is stored in the chat's inbox there,
    and the process that holds the chat stops its run (PostgreSQL: leases and NOTIFY)."""
    gate = asyncio.Event()
    model = slack_model(gate=gate)
    fake = FakeSlack(channels={"C1": "channel"})
    async with fake, fresh_database() as url, \
            slack_stack(tmp_path / "a", model=model, fake=fake, BOT_DB_URL=url) as a, \
            slack_stack(tmp_path / "b", model=model, fake=fake, BOT_DB_URL=url) as b:
        msg = a.mention(text="plan a trip from Beijing to Shanghai")
        await a.events.app_mention(msg)
        await asyncio.wait_for(model.held.wait(), 10)
        await ends_with(a, "C1", msg.ts, "processing")
        chat = ChatKey("slack", "C1", msg.ts)
        assert a.runtime.manager.holds(chat) and not b.runtime.manager.holds(chat)
        assert (await b.events.event(fake.press_stop("C1", msg.ts, "U1"))).status == 200
        await b.adapter.wait_inbound(lambda c: c["accepted"] == 1, within=5)  # stored there ...
        await fake.wait_for(lambda f: any("Stopped while" in m.text for m in f.bot_posts("C1", msg.ts)))
        await ends_with(a, "C1", msg.ts, "active")  # ... and acted on here
        gate.set()
        await a.runtime.manager.wait_until_idle(chat, timeout=5)
        assert model.calls == 1 and not any(m.button_values() for m in fake.bot_posts("C1", msg.ts))


async def test_slacks_stop_button_from_someone_else_is_refused_and_the_run_goes_on(tmp_path: Path) -> None:
    gate = asyncio.Event()
    model = slack_model(gate=gate)
    async with slack_stack(tmp_path, model=model) as s:
        msg = s.mention(text="plan a trip from Beijing to Shanghai")
        await s.events.app_mention(msg)
        await asyncio.wait_for(model.held.wait(), 10)
        await ends_with(s, "C1", msg.ts, "processing")
        await s.events.event(s.fake.press_stop("C1", msg.ts, "U2"))  # not the person who asked
        await s.fake.wait_for(lambda f: any("Only the person who asked" in m.text for m in f.bot_posts("C1", msg.ts)))
        assert s.fake.agents.statuses("C1", msg.ts)[-1] == "processing"
        gate.set()
        await s.wait_question("C1", msg.ts)  # the run went on to its question
        await ends_with(s, "C1", msg.ts, "suspended")
        assert not any("Stopped" in m.text for m in s.fake.bot_posts("C1", msg.ts))


async def test_a_stop_for_a_run_that_ended_and_one_in_an_unknown_thread_change_nothing(tmp_path: Path) -> None:
    async with slack_stack(tmp_path) as s:
        msg = s.mention(text="plan a trip from Beijing to Shanghai")
        await s.events.app_mention(msg)
        question = await s.wait_question("C1", msg.ts)
        await s.events.block_action(question, user="U1", value=DAYS[0])
        await s.wait_plan("C1", msg.ts)
        await ends_with(s, "C1", msg.ts, "active")
        calls, posts = s.model.calls, len(s.fake.bot_posts("C1", msg.ts))
        late = {"type": "agent_session_stopped", "channel": "C1", "thread_ts": msg.ts, "user": "U1",
                "event_ts": "1783536983.783769", "streaming_message_ts": []}  # pressed before the run ended
        assert (await s.events.event(late)).status == 200
        said = await s.wait_posts("C1", msg.ts, posts + 1)
        assert "nothing to stop" in unescape(said[-1].text)
        unknown = s.fake.user_message("C1", "U3", "lunch?")
        stray = {**late, "thread_ts": unknown.ts, "event_ts": "1783536984.000001"}
        assert (await s.events.event(stray)).status == 200
        await s.adapter.wait_inbound(lambda c: c["unknown"] == 1, within=5)
        assert s.fake.bot_posts("C1", unknown.ts) == [] and s.fake.agents.session("C1", unknown.ts) is None
        assert s.model.calls == calls and s.fake.agents.statuses("C1", msg.ts)[-1] == "active"


async def test_a_status_the_workspace_refuses_is_logged_once_and_the_conversation_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeSlack(channels={"C1": "channel"})
    fake.agents.refuse = {"suspended": "invalid_arguments"}
    async with fake, slack_stack(tmp_path, fake=fake) as s:
        for text in ("plan a trip from Beijing to Shanghai", "and one to Hangzhou"):
            msg = s.mention(text=text)
            await s.events.app_mention(msg)
            question = await s.wait_question("C1", msg.ts)
            await s.events.block_action(question, user="U1", value=DAYS[0])
            await s.wait_plan("C1", msg.ts)
            await ends_with(s, "C1", msg.ts, "active")
            assert "suspended" not in s.fake.agents.statuses("C1", msg.ts)
        assert s.adapter.sessions.refusals["invalid_arguments"] == 2  # counted each time
        assert caplog.text.count("refused suspended") == 1  # logged once
        assert s.adapter.sessions.available is True  # the other statuses still go to Slack


async def test_an_app_not_subscribed_to_the_stop_event_is_told_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeSlack(channels={"C1": "channel"})
    fake.agents.bot_events = set(shipped()["settings"]["event_subscriptions"]["bot_events"]) - {"agent_session_stopped"}
    async with fake, slack_stack(tmp_path, fake=fake) as s:
        msg = s.mention(text="plan a trip from Beijing to Shanghai")
        await s.events.app_mention(msg)
        await s.wait_question("C1", msg.ts)
        await ends_with(s, "C1", msg.ts, "suspended")
        assert caplog.text.count("missing_agent_session_stopped_event_subscription") == 1


async def test_an_app_on_the_assistant_experience_goes_on_without_sessions(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeSlack(channels={"C1": "channel", "D1": "im"})
    fake.agents.agent_app = False  # created from the old manifest (assistant_view)
    async with fake, slack_stack(tmp_path, fake=fake) as s:
        for channel in ("C1", "D1"):
            msg = s.fake.user_message(channel, "U1", "<@UBOT> plan a trip from Beijing to Shanghai")
            await (s.events.app_mention(msg) if channel == "C1" else s.events.message(msg))
            question = await s.wait_question(channel, msg.ts)
            await s.events.block_action(question, user="U1", value=DAYS[0])
            await s.wait_plan(channel, msg.ts)
        await s.fake.wait_for(lambda f: any(t == "Beijing → Shanghai, 1–2 May" for _, _, t in f.titles))
        assert {ch for ch, _, _ in s.fake.statuses} == {"D1"}  # the assistant thread's status line, in the DM
        assert len(s.fake.calls_of("agents.sessions.setStatus")) == 1  # refused once, then not asked again
        assert s.adapter.sessions.available is False and caplog.text.count("no agent sessions") == 1


async def test_the_messages_tab_offers_prompts_in_the_persons_language(tmp_path: Path) -> None:
    async with slack_stack(tmp_path) as s:
        s.fake.user_locales["U9"] = "zh-CN"
        assert (await s.events.app_home_opened("U9", "D1", tab="messages")).status == 200
        await s.fake.wait_for(lambda f: bool(f.suggested))
        [(channel, thread, prompts)] = s.fake.suggested
        assert (channel, thread) == ("D1", "") and len(prompts) == 3  # the whole Messages tab, no thread
        assert all(any("\u4e00" <= c <= "\u9fff" for c in p["message"]) for p in prompts)
        await s.events.app_home_opened("U9", "D1", tab="home")  # the Home tab: nothing to offer
        await s.events.app_home_opened("U1", "D1", tab="messages")
        await s.fake.wait_for(lambda f: len(f.suggested) == 2)
        assert all(not any("\u4e00" <= c <= "\u9fff" for c in p["message"]) for p in s.fake.suggested[1][2])
