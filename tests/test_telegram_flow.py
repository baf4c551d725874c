"""A trip planned in Telegram, end to end: the real python-telegram-bot polling the fake Bot API,
the real runtime, the real LLM client talking to the fake OpenAI server."""

from __future__ import annotations

import asyncio

import pytest

from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.telegram_support import containing, has, telegram_bot, texts

CHAT = 4242


async def test_a_trip_with_a_question_and_a_reply(tmp_path):
    script = [
        reply(tool_calls=[call("lookup", {"city": "Shanghai"}, id="call_look")], latency_ms=1300),
        reply(tool_calls=[call("ask_human", {"inquire": "Which day do you leave? <Fri> or <Sat>"}, id="call_ask")]),
        reply("<answer>Leave **Friday**; Shanghai is sunny & warm.</answer>"),
    ]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url):
        tg.send_text(CHAT, "Plan a weekend in Shanghai")
        await tg.wait_for(has("Which day do you leave? <Fri> or <Sat>", CHAT), within=10)

        # the question seals the progress message: an edit in place takes its Stop button away
        await tg.wait_for(lambda t: "sunny" in t.bot_messages(CHAT)[0].text and t.bot_messages(CHAT)[0].edits, within=5)
        progress = tg.bot_messages(CHAT)[0]
        assert not progress.reply_markup
        assert "lookup" in progress.text and "Shanghai" in progress.text, progress.text
        assert "Step" in progress.text and "sunny" in progress.text  # step n/max and the result line
        assert tg.chat_actions(CHAT), "the typing indicator was never shown"

        tg.send_text(CHAT, "Friday")
        await tg.wait_for(has("Leave Friday; Shanghai is sunny & warm.", CHAT), within=10)
        llm.assert_complete()
        assert llm.requests[2].tool_results()["call_ask"] == "Friday"

        answer = containing(tg, CHAT, "Leave Friday")[0]
        assert answer.parse_mode == "HTML" and "<b>Friday</b>" in answer.raw
        assert len(containing(tg, CHAT, "Which day do you leave?")) == 1
        assert "ignored_retry_after" not in {v.kind for v in tg.violations}
        assert tg.violations == []
        assert {c["command"] for c in tg.commands[""]} == {"start", "help", "new", "cancel", "stop", "status"}
        assert "zh" in tg.commands


@pytest.mark.real_pace  # Telegram's seconds as they are: the bot and the fake at BOT_PLATFORM_TIME_SCALE=1
async def test_the_final_answer_survives_a_flood_wait_in_the_middle_of_a_run(tmp_path):
    script = [
        reply(tool_calls=[call("lookup", {"city": "Hangzhou"})], latency_ms=1200),
        reply(tool_calls=[call("lookup", {"city": "Suzhou"})], latency_ms=600),
        reply("Both cities are sunny."),
    ]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url):
        tg.send_text(CHAT, "weather in Hangzhou and Suzhou?")
        await tg.wait_for(lambda t: len(t.bot_messages(CHAT)) >= 1, within=10)  # the progress message
        assert tg.time_scale == 1.0
        tg.flood(CHAT, 3)
        flooded_at = asyncio.get_running_loop().time()
        await tg.wait_for(has("Both cities are sunny.", CHAT), within=15)
        assert asyncio.get_running_loop().time() - flooded_at >= 2.5  # it really waited
        refused = [r for r in tg.requests if r.error and "Too Many Requests" in r.error]
        assert len(refused) == 1, "a retry came before retry_after ran out"
        assert [v for v in tg.violations] == []


async def test_twenty_chats_at_once_each_get_their_own_answer(tmp_path):
    scripts = {f"c{i}": [reply(tool_calls=[call("lookup", {"city": f"City{i}"})], latency_ms=100),
                         reply(f"Answer for chat {i}")] for i in range(20)}
    async with FakeOpenAI(scripts=scripts) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url):
        for i in range(20):
            tg.send_text(1000 + i, f"[conv:c{i}] weather please")
        await tg.wait_for(lambda t: all(has(f"Answer for chat {i}", 1000 + i)(t) for i in range(20)), within=20)
        for i in range(20):
            assert [x for x in texts(tg, 1000 + i) if "Answer for chat" in x] == [f"Answer for chat {i}"]
        llm.assert_complete()
        assert tg.violations == []


async def test_a_group_with_two_people(tmp_path):
    group = -100777
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": "How many travellers?"}, id="call_n")]),
        reply("Booked for 3."),
    ]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url):
        tg.send_text(group, "hi all, lunch?", user_id=11)  # not for the bot: ignored quietly
        tg.send_text(group, "@trip_test_bot plan Xi'an for us", user_id=11, first_name="Ann")
        await tg.wait_for(has("How many travellers?", group), within=10)
        question = containing(tg, group, "How many travellers?")[0]
        assert question.force_reply and question.reply_markup and question.reply_markup.get("selective") is True
        assert any(e.url == "tg://user?id=11" for e in question.entities)  # the asker is mentioned

        tg.send_text(group, "I think 5", user_id=22, first_name="Bob")  # another person: not the answer
        tg.send_text(group, "3", user_id=11)  # the asker's next message answers
        await tg.wait_for(has("Booked for 3.", group), within=10)
        # in a group the model reads who said what, and who answered
        assert llm.requests[0].messages[-1]["content"] == "Ann (@user11): plan Xi'an for us"
        assert llm.requests[1].tool_results()["call_n"] == "Ann (@user11): 3"
        assert not any("lunch" in str(r.messages) for r in llm.requests)
        assert tg.violations == []


async def test_a_button_answers_the_question(tmp_path):
    options = ["北京南 Beijing South", "北京西 Beijing West"]
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": "哪个车站？", "options": options}, id="call_st")]),
        reply("好的，从北京西出发。"),
    ]
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, telegram_bot(tmp_path, tg, llm.base_url):
        tg.send_text(CHAT, "从北京去西安", lang="zh")
        await tg.wait_for(has("哪个车站？", CHAT), within=10)
        question = containing(tg, CHAT, "哪个车站？")[0]
        assert question.buttons == options
        assert all(len(b["callback_data"].encode()) <= 64 for row in question.reply_markup["inline_keyboard"] for b in row)

        tg.press_button(CHAT, question.message_id, data="nonsense-from-an-old-bot")
        tg.press_button(CHAT, question.message_id, index=1, lang="zh")
        await tg.wait_for(has("好的，从北京西出发。", CHAT), within=10)
        assert llm.requests[1].tool_results()["call_st"] == options[1]
        answers = {a["text"] for a in tg.callback_answers.values()}
        assert answers == {"已选择：北京西 Beijing West", "This button no longer works; please reply in words."}

        tg.press_button(CHAT, question.message_id, index=0, lang="zh")  # already answered
        await tg.wait_for(lambda t: len(t.callback_answers) == 3)
        assert "这个问题已经回答过了。" in [a["text"] for a in tg.callback_answers.values()]
        assert len(llm.requests) == 2
