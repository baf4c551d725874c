"""A team trip in a Slack thread: three travellers from three cities, a question to each waiting at
once, answered out of order, one by the wrong person (refused), one never (it expires); the plan
that comes back has everyone's legs meeting in Hangzhou."""

from __future__ import annotations

from pathlib import Path

from adapters.slack.mrkdwn import unescape
from bot.chat import ChatKey
from bot.texts import NO_ANSWER
from tests.fakes.slack_api import SlackMessage
from tests.slack_support import is_plan, slack_stack
from tests.team_support import TeamScript, question_for, team_request
from tools.party_plan import meeting_time, outbound
from tools.plan import TripPlan

LABELS = ("<@U0ANA>", "<@U0BO>", "<@U0CHEN>")


async def test_three_travellers_three_questions_out_of_order_one_refused_one_expired(tmp_path: Path) -> None:
    model = TeamScript(LABELS)
    async with slack_stack(tmp_path, model=model, BOT_HUMAN_TIMEOUT_S=4) as s:  # type: ignore[arg-type]
        msg = s.mention(user="U0LEAD", text=team_request(LABELS))
        await s.events.app_mention(msg)

        def asked(label: str) -> list[SlackMessage]:
            return [m for m in s.fake.bot_posts("C1", msg.ts) if "❓" in m.text and question_for(label) in unescape(m.text)]
        await s.fake.wait_for(lambda f: all(asked(label) for label in LABELS), 10)
        questions = {label: asked(label)[0] for label in LABELS}
        for label, post in questions.items():
            assert post.text.startswith(f"{label} ")  # each question mentions its traveller
        chat = ChatKey("slack", "C1", msg.ts)
        waiting = await s.runtime.store.questions_for_chat(str(chat))
        assert [q.asker_id for q in waiting] == ["U0ANA", "U0BO", "U0CHEN"]  # three wait at once

        # Chen answers first; Dan (not a traveller) tries to answer for Ana and is told it is not his
        await s.events.message(s.fake.user_message("C1", "U0CHEN", "after 9 am please", thread_ts=msg.ts))
        await s.runtime.manager.wait_until_idle(chat, timeout=5)
        assert [q.asker_id for q in await s.runtime.store.questions_for_chat(str(chat))] == ["U0ANA", "U0BO"]
        before = len(s.fake.bot_posts("C1", msg.ts))
        await s.events.message(s.fake.user_message("C1", "U0DAN", "Ana can leave at 6, trust me", thread_ts=msg.ts))
        posts = await s.wait_posts("C1", msg.ts, before + 1)
        assert "That question is for <@U0ANA>" in unescape(posts[-1].text)
        await s.events.message(s.fake.user_message("C1", "U0ANA", "any time after 7", thread_ts=msg.ts))
        # Bo never answers: his question expires, and then the run resumes with all three results
        plan_post = await s.wait_plan("C1", msg.ts, within=20)
        assert model.turns == ["ask", "plan"]
        assert model.answers == {"call_ask_0": "any time after 7",
                                 "call_ask_1": NO_ANSWER.format(hours=round(4 / 3600, 2)),
                                 "call_ask_2": "after 9 am please"}
        assert "West Lake" in unescape(plan_post.text)
        session = await s.runtime.store.get_session(str(chat))
        assert session is not None
        history = await s.runtime.store.load_messages(session.id)
        # Dan's message reached the planner as a message of its own, after the answers
        assert any(m.role.value == "user" and "trust me" in (m.content or "") for m in history)
        plan = TripPlan.model_validate(next(
            json for m in history if m.tool_calls for tc in m.tool_calls if tc.function.name == "submit_plan"
            for json in [tc.parsed_arguments()["plan"]]))
        meet = meeting_time(plan)
        assert meet is not None and all(outbound(p)[-1].arrive <= f"{meet:%Y-%m-%d %H:%M}" for p in plan.party)
        assert sum(is_plan(m) for m in s.fake.bot_posts("C1", msg.ts)) == 1


async def test_a_team_of_thirty_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    model = TeamScript(LABELS)
    async with slack_stack(tmp_path, model=model, BOT_MAX_TRAVELLERS=10) as s:  # type: ignore[arg-type]
        team = ", ".join(f"<@U{i:04d}> (Beijing)" for i in range(30))
        msg = s.mention(user="U0LEAD", text=f"offsite in Hangzhou for {team}")
        await s.events.app_mention(msg)
        [refusal] = await s.wait_posts("C1", msg.ts, 1)
        assert "names 30 travellers, more than the 10" in unescape(refusal.text)
        assert model.turns == []
