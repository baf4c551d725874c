"""One rule for stopping in groups, and a new trip that closes the old one's questions.

Stopping: the Stop button, /stop, /cancel and the word ("stop") are one rule in the chat machine:
in a group only the person the run works for may stop it; anyone else is told so and nothing
changes. A new trip (/new, the web page's "New trip"): the question that waited is closed on the
server (its tool result says a new trip started), so it leaves the operator's page and an answer
to it changes nothing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from adapters.slack.mrkdwn import unescape
from bot import texts
from bot.surface import ChatKey
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.slack_support import slack_stack
from tests.telegram_support import has, telegram_bot
from tests.web_runtime import web_stack

REFUSED_EN = texts.text("stop_refused", "en")


async def _question_closed(store, chat: ChatKey) -> None:
    assert await store.waiting_questions() == []
    session = await store.get_session(str(chat))
    assert session is None or session.closed  # the conversation is closed, nothing waits in it


async def test_in_a_slack_thread_only_the_requester_stops_by_word(tmp_path: Path) -> None:
    async with slack_stack(tmp_path) as s:
        msg = s.mention(text="plan a trip from Beijing to Shanghai")
        await s.events.app_mention(msg)
        await s.wait_question("C1", msg.ts)

        bystander = s.fake.user_message("C1", "U2", "stop", thread_ts=msg.ts)
        await s.events.message(bystander)
        await s.fake.wait_for(lambda f: any(REFUSED_EN in unescape(m.text) for m in f.bot_posts("C1", msg.ts)), 10)
        assert len(await s.runtime.store.waiting_questions()) == 1  # still asking

        mine = s.fake.user_message("C1", "U1", "stop", thread_ts=msg.ts)
        await s.events.message(mine)
        async def stopped() -> bool:
            return await s.runtime.store.waiting_questions() == []
        await s.fake.wait_for(lambda f: any("stopped" in unescape(m.text).lower() or "cancel" in unescape(m.text).lower()
                                             for m in f.bot_posts("C1", msg.ts)[-1:]), 10)
        assert await stopped()


async def test_slash_new_in_slack_closes_the_waiting_question(tmp_path: Path) -> None:
    async with slack_stack(tmp_path) as s:
        msg = s.mention(text="plan a trip from Beijing to Shanghai")
        await s.events.app_mention(msg)
        await s.wait_question("C1", msg.ts)
        await s.events.message(s.fake.user_message("C1", "U1", "new", thread_ts=msg.ts))
        chat = ChatKey("slack", "C1", msg.ts)
        await s.runtime.manager.wait_until_idle(chat, 10)
        await _question_closed(s.runtime.store, chat)
        session = await s.runtime.store.get_session(str(chat))
        assert session is None  # a closed conversation is no longer the chat's session


async def test_slash_new_in_telegram_closes_the_waiting_question(tmp_path: Path) -> None:
    script = [reply(tool_calls=[call("ask_human", {"inquire": "Which day do you leave?"}, id="call_day")])]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url) as (rt, _):
        tg.send_text(4343, "Plan a trip to Shanghai")
        await tg.wait_for(has("Which day do you leave?", 4343), within=10)
        tg.send_text(4343, "/new")
        chat = ChatKey("telegram", "4343")
        await tg.wait_for(has(texts.text("new", "en"), 4343), within=10)
        await rt.manager.wait_until_idle(chat, 10)
        await _question_closed(rt.store, chat)


async def test_the_web_pages_new_trip_closes_the_old_question(tmp_path: Path) -> None:
    """What the page's "New trip" button sends (adapters/web/static/app.js): /new to the old session."""
    async with web_stack(tmp_path / "bot.sqlite3") as stack, httpx.AsyncClient(
            base_url=stack.base_url, timeout=10) as http:
        started = await http.post("/api/chat", json={"message": "Plan a trip from Beijing to Shanghai"})
        sid = started.json()["session_id"]
        chat = ChatKey("web", sid)

        async def asked() -> None:
            while not await stack.store.waiting_questions():
                await asyncio.sleep(0.02)
        await asyncio.wait_for(asked(), 10)
        [question] = await stack.store.waiting_questions()
        closed = await http.post("/api/chat", json={"message": "/new", "session_id": sid})
        assert closed.status_code == 200
        await stack.manager.wait_until_idle(chat, 10)
        await _question_closed(stack.store, chat)
        answer = await http.post("/api/human_response", json={
            "session_id": sid, "response": "Friday", "tool_call_id": question.tool_call_id})
        assert answer.status_code in (404, 409), answer.text  # nothing waits: the answer changes nothing
        history = await stack.store.load_messages(question.session_id)
        results = [m.content for m in history if m.tool_call_id == question.tool_call_id]
        assert results == [texts.NEW_TRIP_CALL]
