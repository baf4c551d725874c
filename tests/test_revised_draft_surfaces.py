"""A draft the agent revises is not shown twice, on every surface (tests.revised_draft's run: a
plan streamed as text, withdrawn when the agent asks for submit_plan, and the revision streamed):
Telegram keeps one draft (same id) that turns into the "Thinking…" placeholder and then shows the
revision; the web's deltas after its `text_reset` join into exactly the answer; Slack stops the
first stream and its message becomes the answer. Each against the real runtime, the LLM client
streaming from the fake OpenAI server, and the platform's fake."""

from __future__ import annotations

from pathlib import Path

import httpx

from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram
from tests.revised_draft import DRAFT, FINAL, after_last_reset, revised_script, revising_tools
from tests.slack_support import slack_stack
from tests.telegram_support import has, telegram_bot
from tests.web_runtime import web_stack
from tests.web_sse import SseReader

CHAT = 4242


def llm(fake: FakeOpenAI) -> LLM:
    return LLM(LLMConfig(model="gpt-4o-mini", api_key="sk-test", base_url=fake.base_url, timeout_s=10, max_retries=0))


async def test_telegram_keeps_one_draft_that_the_revision_replaces(tmp_path: Path) -> None:
    script = revised_script(pause_ms=1500, chunk_gap_ms=60)  # the draft is seen, and its place stays empty a while
    async with FakeOpenAI(script) as model, FakeTelegram() as tg, \
            telegram_bot(tmp_path, tg, model.base_url, tools=revising_tools()):
        tg.send_text(CHAT, "Hangzhou to Beijing, one night")
        await tg.wait_for(has("Revised:", CHAT), within=15)
        calls = [c for c in tg.draft_calls if c.chat_id == CHAT]
        assert len({c.draft_id for c in calls}) == 1  # one draft, never a second one beside it
        texts = [c.text for c in calls]
        cleared = texts.index("")  # the withdrawn text became the placeholder...
        assert texts[:cleared] and all(DRAFT.startswith(t) for t in texts[:cleared])
        assert all(FINAL.startswith(t) for t in texts[cleared:])  # ...and only the revision followed it
        assert all(c.can_stop and not c.keep_on_stop for c in calls)  # each with its stop button
        answers = [m for m in tg.bot_messages(CHAT) if "Revised:" in m.text or "Day 1: take" in m.text]
        assert [m.text for m in answers] == [FINAL]  # the message holds exactly the answer, once
        model.assert_complete()
        assert tg.violations == []


async def test_the_webs_deltas_after_the_reset_are_exactly_the_answer(tmp_path: Path) -> None:
    async with FakeOpenAI(revised_script()) as model, \
            web_stack(tmp_path / "bot.sqlite3", model=llm(model), tools=revising_tools()) as stack, \
            httpx.AsyncClient(base_url=stack.base_url, timeout=10) as client:
        sid = (await client.post("/api/chat", json={"message": "Hangzhou to Beijing, one night"})).json()["session_id"]
        async with client.stream("GET", f"/api/sessions/{sid}/events") as events:
            reader = SseReader(events)
            answer = await reader.until("answer", within=15)
        seen = [(e.event, e.json().get("text", "")) for e in reader.seen if e.event in ("delta", "text_reset")]
        resets = [e.json() for e in reader.seen if e.event == "text_reset"]
        assert len(resets) == 1 and "".join(t for k, t in seen[:seen.index(("text_reset", ""))]) == DRAFT
        deltas_of = {e.json()["step"] for e in reader.seen if e.event == "delta" and DRAFT.startswith(e.json()["text"])}
        assert resets[0]["step"] in deltas_of  # it names the step whose text it withdraws
        assert after_last_reset(seen) == answer.json()["text"] == FINAL
        model.assert_complete()


async def test_a_web_reload_after_the_reset_shows_the_steps_and_none_of_the_withdrawn_text(tmp_path: Path) -> None:
    script = revised_script()
    script[2].gate = "revise"  # the revision is held: the page reloads while nothing replaces the draft yet
    async with FakeOpenAI(script) as model, \
            web_stack(tmp_path / "bot.sqlite3", model=llm(model), tools=revising_tools()) as stack, \
            httpx.AsyncClient(base_url=stack.base_url, timeout=10) as client:
        sid = (await client.post("/api/chat", json={"message": "Hangzhou to Beijing, one night"})).json()["session_id"]
        async with client.stream("GET", f"/api/sessions/{sid}/events") as events:
            reader = SseReader(events)
            await reader.until("text_reset", within=15)
            await model.wait_for_requests(3)
            view = (await client.get(f"/api/sessions/{sid}")).json()
            assert [p["data"]["step"] for p in view["progress"] if p["event"] == "step"] == [1, 2, 3]  # the steps stay
            assert not any(p["event"] == "delta" for p in view["progress"])  # the withdrawn text does not
            model.gate("revise").set()
            answer = await reader.until("answer", within=15)
        assert answer.json()["text"] == FINAL
        model.assert_complete()


async def test_slack_stops_the_first_stream_and_its_message_becomes_the_answer(tmp_path: Path) -> None:
    async with FakeOpenAI(revised_script()) as model, \
            slack_stack(tmp_path, chat_model=llm(model), tool_set=revising_tools()) as s:
        msg = s.mention(text="Hangzhou to Beijing, one night")
        await s.events.app_mention(msg)
        await s.fake.wait_for(lambda f: any("Revised" in m.text for m in f.bot_posts("C1", msg.ts)), within=15)
        await s.fake.wait_for(lambda f: all(m.stream != "open" for m in f.bot_posts("C1", msg.ts)), within=15)
        posts = s.fake.bot_posts("C1", msg.ts)
        [drafted] = [m for m in posts if "".join(m.appends) == DRAFT]  # the stream the draft went into
        assert drafted.stream == "stopped"  # ...was stopped
        assert "Revised" in drafted.text and "Day 1: take" not in drafted.text  # and now holds the answer
        assert [m for m in posts if "Revised" in m.text] == [drafted]  # in one place only
        assert not any("Day 1: take" in m.text for m in posts)  # the withdrawn text is shown nowhere
        model.assert_complete()
