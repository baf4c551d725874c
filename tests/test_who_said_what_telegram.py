"""Who said what in a Telegram group: the model reads who asked and who answered; a bystander's
reply to a traveller's question is not theirs to give and waits as a suggestion with Yes / No
buttons; only the requester decides it; a reply quoting someone else's message counts as its
sender's words; every person the bot names reaches Telegram as a mention (a tg://user link on
their name, or their @username), read back from what the fake Bot API received."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.fakes.telegram_api import FakeTelegram
from tests.team_support import party_plan
from tests.telegram_support import containing, has, telegram_bot
from tests.test_team_slack import until
from tools.ask_human import AskHuman
from tools.collection import ToolCollection
from tools.submit_plan import SubmitPlan
from tools.terminate import Terminate

GROUP = -100950
LABELS = ("@user11", "@user22", "@user33")
REQUEST = "offsite in Hangzhou, 12-14 December, for @user11 (Beijing), @user22 and @user33 (Shenzhen)"
ASK = "@user22, which city are you leaving from?"


async def test_a_bystanders_reply_waits_for_the_requester_and_names_are_mentions(tmp_path: Path) -> None:
    script = [
        reply(tool_calls=[call("ask_human", {"inquire": ASK, "to": "@user22"}, id="call_bo")]),
        reply(tool_calls=[call("submit_plan", {"summary": "Team plan.", "plan": party_plan(LABELS)}, id="call_plan")]),
    ]
    tools = ToolCollection([AskHuman(), SubmitPlan(), Terminate()])
    async with FakeOpenAI(script) as llm, FakeTelegram() as tg, \
            telegram_bot(tmp_path, tg, llm.base_url, tools=tools) as (runtime, _):
        tg.send_text(GROUP, "@trip_test_bot " + REQUEST, user_id=10, first_name="Lea")
        await tg.wait_for(has(ASK, GROUP), within=20)
        [question] = containing(tg, GROUP, ASK)
        assert question.text.startswith("@user22\n❓")  # Bo is named by his @username: Telegram links it

        async def posted() -> int:
            return len([q for q in await runtime.store.questions_for_chat(f"telegram:{GROUP}:") if q.posted_after])
        await until(posted, 1)
        # Dan replies to Bo's question: not his to answer, and not his to change
        tg.send_text(GROUP, "Guangzhou", user_id=44, first_name="Dan", reply_to=question.message_id)
        await tg.wait_for(has("suggests Guangzhou instead of Hangzhou", GROUP), within=20)
        [kept] = containing(tg, GROUP, "suggests Guangzhou")
        assert kept.text == ("That question is for @user22; only their reply answers it. @user44's message is kept as "
                             "a suggestion.\n@user44 suggests Guangzhou instead of Hangzhou. Lea, change it?")
        assert '<a href="tg://user?id=10">Lea</a>, change it?' in kept.raw  # the requester: a mention by id
        buttons = [b["callback_data"] for row in (kept.reply_markup or {})["inline_keyboard"] for b in row]
        assert [b[:4] for b in buttons] == ["g:y:", "g:n:"]
        # a traveller's Yes is refused; the requester's No keeps the trip
        tg.press_button(GROUP, kept.message_id, user_id=11, index=0)
        await tg.wait_for(has("can decide on @user44's suggestion", GROUP), within=20)
        assert containing(tg, GROUP, "can decide on")[0].raw.startswith('Only <a href="tg://user?id=10">Lea</a>')
        tg.press_button(GROUP, kept.message_id, user_id=10, index=1)
        await tg.wait_for(has("declined @user44's suggestion; the trip stays as it is", GROUP), within=20)
        # Bo answers; the model reads who asked, who answered, and nothing of Dan's
        tg.send_text(GROUP, "Shanghai", user_id=22, first_name="Bo", reply_to=question.message_id)
        await tg.wait_for(has("Team plan.", GROUP), within=20)
        first = [m["content"] for m in llm.requests[0].messages if m["role"] == "user"]
        assert first == [f"Lea (@user10): {REQUEST}"]
        assert llm.requests[1].tool_results() == {"call_bo": "Bo (@user22): Shanghai"}
        assert not any("Guangzhou" in str(m["content"]) for m in llm.requests[1].messages)
        # Dan replies to Lea's request, quoting it, and mentions the bot: his words, kept as his suggestion
        request_id = next(m.message_id for m in tg.chats[GROUP].messages.values() if not m.from_bot)
        tg.send_text(GROUP, "@trip_test_bot Xiamen would be nicer", user_id=44, first_name="Dan", reply_to=request_id)
        await tg.wait_for(has("reply quotes someone else's message", GROUP), within=20)
        [quoting] = containing(tg, GROUP, "reply quotes")
        assert quoting.text.startswith("@user44's reply quotes someone else's message: it counts as @user44's own "
                                       "words.\n@user44 is not part of this trip's conversation yet")
        assert "@user44 suggests: “Xiamen would be nicer”. Lea, change the trip with it?" in quoting.text
        assert len(llm.requests) == 2  # nothing more reached the model
        llm.assert_complete()
        assert tg.violations == []
