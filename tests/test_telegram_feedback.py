"""👍 / 👎 under a plan on Telegram: an inline keyboard on the plan's message, each press stored
with its run and answered with a toast; a press naming a run the chat does not have keeps nothing."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.scripted_trip import trip_plan
from tests.telegram_support import containing, has, telegram_bot
from tools.ask_human import AskHuman
from tools.collection import ToolCollection
from tools.submit_plan import SubmitPlan
from tools.terminate import Terminate

CHAT = 5151


async def test_the_plan_has_a_thumbs_pair_and_a_press_is_kept_with_its_run(tmp_path: Path) -> None:
    plan = call("submit_plan", {"summary": "Here is your trip: G1 to Shanghai.", "plan": trip_plan("2025-05-01")})
    tools = ToolCollection([AskHuman(), SubmitPlan(), Terminate()])
    async with FakeOpenAI([reply(tool_calls=[plan])]) as llm, FakeTelegram() as tg, \
            telegram_bot(tmp_path, tg, llm.base_url, tools=tools) as (runtime, _):
        tg.send_text(CHAT, "Plan a trip from Beijing to Shanghai")
        await tg.wait_for(has("G1 to Shanghai", CHAT), within=10)
        [answer] = containing(tg, CHAT, "G1 to Shanghai")
        assert answer.buttons == ["👍", "👎"]
        data = [b["callback_data"] for row in answer.reply_markup["inline_keyboard"] for b in row]
        assert all(len(d.encode()) <= 64 for d in data)

        tg.press_button(CHAT, answer.message_id, index=0)  # 👍
        await tg.wait_for(lambda t: len(t.callback_answers) == 1)
        tg.press_button(CHAT, answer.message_id, index=1, lang="zh")  # 👎: they changed their mind
        await tg.wait_for(lambda t: len(t.callback_answers) == 2)
        kept = await runtime.store.recent_feedback()
        assert [(f.user_id, f.rating, f.run_no, f.chat_key) for f in kept] == [(str(CHAT), "down", 1, f"telegram:{CHAT}:")]
        assert [a["text"] for a in tg.callback_answers.values()] == ["Thanks for the feedback!", "谢谢你的反馈！"]

        session_id = kept[0].session_id
        tg.press_button(CHAT, answer.message_id, data=f"f:u:{session_id}.7")  # a run this chat never had
        await tg.wait_for(lambda t: len(t.callback_answers) == 3)
        assert "no longer on record" in list(tg.callback_answers.values())[-1]["text"]
        assert len(await runtime.store.recent_feedback()) == 1
        assert tg.violations == []
