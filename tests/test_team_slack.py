"""A team trip in a Slack thread: three travellers from three cities, a question to each waiting at
once, answered out of order, one by the wrong person (refused), one never (it expires); the plan
that comes back has everyone's legs meeting in Hangzhou."""

from __future__ import annotations

import asyncio
import copy
import csv
import io
from collections.abc import Awaitable, Callable
from pathlib import Path

from icalendar import Calendar

from adapters.slack.mrkdwn import unescape
from bot.surface import ChatKey
from bot.texts import NO_ANSWER
from tests.fakes.slack_api import FakeSlack, SlackMessage, UploadedFile
from tests.slack_support import SlackStack, is_plan, slack_stack
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
        # three wait at once; each can be answered once its posting is recorded (the inbox watermark)
        await until(lambda: waiting_for(s, chat), ["U0ANA", "U0BO", "U0CHEN"])

        # Chen answers first; Dan (not a traveller) tries to answer for Ana and is told it is not his
        await s.events.message(s.fake.user_message("C1", "U0CHEN", "after 9 am please", thread_ts=msg.ts))
        await until(lambda: waiting_for(s, chat), ["U0ANA", "U0BO"])
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
        # Dan's message never reached the planner: it waits as a suggestion for the requester's Yes
        assert not any("trust me" in (m.content or "") for m in history)
        kept = [m for m in s.fake.bot_posts("C1", msg.ts) if any(str(b.get("block_id", "")).startswith("suggestion:")
                                                                 for b in m.blocks)]
        assert len(kept) == 1 and "<@U0DAN>" in kept[0].text and "<@U0LEAD>, change the trip with it?" in kept[0].text
        plan = TripPlan.model_validate(next(
            json for m in history if m.tool_calls for tc in m.tool_calls if tc.function.name == "submit_plan"
            for json in [tc.parsed_arguments()["plan"]]))
        meet = meeting_time(plan)
        assert meet is not None and all(outbound(p)[-1].arrive <= f"{meet:%Y-%m-%d %H:%M}" for p in plan.party)
        assert sum(is_plan(m) for m in s.fake.bot_posts("C1", msg.ts)) == 1
        # the calendar and the cost sheet are attached to the thread (files_upload_v2)
        files = await shared_files(s, msg.ts)
        check_exports(files["team-trip-2026-12-12.ics"].content, files["team-trip-2026-12-12-costs.csv"].content,
                      plan)


async def shared_files(s: SlackStack, thread_ts: str) -> dict[str, UploadedFile]:
    def files(f: FakeSlack) -> dict[str, UploadedFile]:
        return {u.filename: u for m in f.bot_posts("C1", thread_ts) for u in m.files}
    await s.fake.wait_for(lambda f: len(files(f)) == 2, 10)
    shared = files(s.fake)
    assert set(shared) == {"team-trip-2026-12-12.ics", "team-trip-2026-12-12-costs.csv"}
    return shared


def check_exports(ics: bytes | None, sheet: bytes | None, plan: TripPlan) -> None:
    """The .ics parses with a calendar library: one event per leg, stay and visit, each traveller's
    legs named after them, in the destination's zone; the CSV adds up to the plan's total."""
    assert ics is not None and sheet is not None
    calendar = Calendar.from_ical(ics)
    events = calendar.walk("VEVENT")
    legs = sum(len(p.legs) for p in plan.party) + len(plan.legs)
    assert len(events) == legs + len(plan.stays) + len(plan.visits)
    for person in plan.party:
        mine = [e for e in events if str(e["SUMMARY"]).startswith(f"{person.name}: ")]
        assert [e.decoded("DTSTART").strftime("%Y-%m-%d %H:%M") for e in mine] == [leg.depart for leg in person.legs]
        assert all(str(e.decoded("DTSTART").tzinfo) == "Asia/Shanghai" for e in mine)
    rows = list(csv.DictReader(io.StringIO(sheet.decode())))
    items = [float(r["cost_cny"]) for r in rows if r["kind"] != "total"]
    [total] = [float(r["cost_cny"]) for r in rows if r["kind"] == "total"]
    assert round(sum(items), 2) == total == round(plan.total_cost, 2)
    assert {r["person"] for r in rows if r["kind"] != "total"} == {p.name for p in plan.party}


async def test_a_team_of_thirty_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    model = TeamScript(LABELS)
    async with slack_stack(tmp_path, model=model, BOT_MAX_TRAVELLERS=10) as s:  # type: ignore[arg-type]
        team = ", ".join(f"<@U{i:04d}> (Beijing)" for i in range(30))
        msg = s.mention(user="U0LEAD", text=f"offsite in Hangzhou for {team}")
        await s.events.app_mention(msg)
        [refusal] = await s.wait_posts("C1", msg.ts, 1)
        assert "names 30 travellers, more than the 10" in unescape(refusal.text)
        zh = s.mention(user="U0LEAD", text=f"杭州团建：{team}")  # said in the person's language
        await s.events.app_mention(zh)
        [refusal] = await s.wait_posts("C1", zh.ts, 1)
        assert "有 30 位出行人，超过了每次最多 10 人的上限" in unescape(refusal.text)
        assert model.turns == []


async def waiting_for(s: SlackStack, chat: ChatKey) -> list[str]:
    """Who the chat's posted questions wait for."""
    return [q.asker_id for q in await s.runtime.store.questions_for_chat(str(chat)) if q.posted_after is not None]


async def until(read: Callable[[], Awaitable[object]], expected: object, within: float = 10.0) -> None:
    async with asyncio.timeout(within):
        while (value := await read()) != expected:
            await asyncio.sleep(0.02)
    assert value == expected


def signoff_posts(s: SlackStack, thread_ts: str) -> list[SlackMessage]:
    """The sign-off requests (a reminder carries the buttons too, but is not a request)."""
    return [m for m in s.fake.bot_posts("C1", thread_ts) if not m.text.startswith("Reminder")
            and any(str(b.get("block_id", "")).startswith("signoff:") for b in m.blocks)]


def signoff_id(post: SlackMessage) -> str:
    return next(str(b["block_id"]).split(":", 1)[1] for b in post.blocks if str(b.get("block_id", "")).startswith("signoff:"))


async def answer_all(s: SlackStack, thread_ts: str) -> None:
    await until(lambda: waiting_for(s, ChatKey("slack", "C1", thread_ts)), ["U0ANA", "U0BO", "U0CHEN"])
    for label in reversed(LABELS):
        await s.events.message(s.fake.user_message("C1", label.strip("<@>"), "after 8", thread_ts=thread_ts))


async def said_since(s: SlackStack, thread_ts: str, before: int, count: int) -> list[SlackMessage]:
    """The bot's posts after the first `before`, reminders left out: a sign-off's reminder is
    timed, so it may come between any two steps of a test."""
    def posts() -> list[SlackMessage]:
        return [m for m in s.fake.bot_posts("C1", thread_ts)[before:] if not m.text.startswith("Reminder")]
    await s.fake.wait_for(lambda f: len(posts()) >= count, 10)
    return posts()


async def test_sign_off_reject_with_reason_replan_refused_press_restart_and_approval(tmp_path: Path) -> None:
    model = TeamScript(LABELS)
    settings = {"BOT_APPROVERS": "U0BOSS", "BOT_SIGNOFF_REMIND_S": 2}
    async with FakeSlack(channels={"C1": "channel"}) as fake:
        fake.members["C1"] = ["UBOT", "U0LEAD", "U0BOSS", *(label.strip("<@>") for label in LABELS)]
        async with slack_stack(tmp_path, model=model, fake=fake, **settings) as s:  # type: ignore[arg-type]
            msg = s.mention(user="U0LEAD", text=team_request(LABELS))
            await s.events.app_mention(msg)
            await answer_all(s, msg.ts)
            await s.fake.wait_for(lambda f: len(signoff_posts(s, msg.ts)) == 1, 10)
            [first] = signoff_posts(s, msg.ts)
            assert "<@U0BOSS>" in first.text and sum(is_plan(m) for m in s.fake.bot_posts("C1", msg.ts)) == 1
            chat = ChatKey("slack", "C1", msg.ts)

            before = len(s.fake.bot_posts("C1", msg.ts))
            first_as_shown = copy.deepcopy(first)  # the card as the channel's clients still show it
            await s.events.block_action(first, user="U0ANA", value=f"approve:{signoff_id(first)}")
            posts = await said_since(s, msg.ts, before, 1)
            assert "Only the approvers (<@U0BOSS>)" in posts[-1].text  # a traveller is not an approver
            await s.events.block_action(first, user="U0BOSS", value=f"reject:{signoff_id(first)}")
            posts = await said_since(s, msg.ts, before, 2)
            assert "<@U0BOSS> rejected this plan. Please reply with the reason" in posts[-1].text
            # the card closed: no buttons, who decided and when
            assert first.text.startswith("❌ Rejected by <@U0BOSS> at ") and not first.button_values()
            await s.events.message(s.fake.user_message("C1", "U0BOSS", "too dear: take cheaper trains", thread_ts=msg.ts))
            await s.fake.wait_for(lambda f: [signoff_id(m) for m in signoff_posts(s, msg.ts)] not in ([], [signoff_id(first_as_shown)]), 10)
            assert model.turns == ["ask", "plan", "plan"]  # planned again, with the reason
            status = await s.runtime.store.signoff_for_chat(str(chat))
            assert status is not None and status.status == "waiting"
            history = await s.runtime.store.load_messages(status.session_id)
            assert any("rejected by <@U0BOSS>" in (m.content or "") and "cheaper trains" in (m.content or "")
                       for m in history)
        # killed while the second sign-off waits; a new process picks it up, reminder and all
        async with slack_stack(tmp_path, model=model, fake=fake, **settings) as s:  # type: ignore[arg-type]
            second = signoff_posts(s, msg.ts)[-1]
            await s.fake.wait_for(lambda f: any(m.text.startswith("Reminder") and signoff_id(m) == signoff_id(second)
                                                for m in f.bot_posts("C1", msg.ts)), 10)
            before = len(s.fake.bot_posts("C1", msg.ts))
            await s.events.message(s.fake.user_message("C1", "U0LEAD", "status", thread_ts=msg.ts))
            posts = await said_since(s, msg.ts, before, 1)
            assert "waiting for sign-off by <@U0BOSS>" in posts[-1].text
            second_id = signoff_id(second)
            before = len(s.fake.bot_posts("C1", msg.ts))
            # the old request, pressed where a client still shows it: answered to the presser alone
            await s.events.block_action(first_as_shown, user="U0BOSS", value=f"approve:{signoff_id(first_as_shown)}")
            await s.fake.wait_for(lambda f: any(e.user == "U0BOSS" and "out of date" in e.text for e in f.ephemeral), 10)
            [old] = [e for e in s.fake.ephemeral if "out of date" in e.text]
            assert "A newer plan is waiting for sign-off" in old.text and old.thread_ts == msg.ts
            await s.events.block_action(second, user="U0BOSS", value=f"approve:{second_id}")
            await s.fake.wait_for(lambda f: second.text.startswith("✅ Approved by <@U0BOSS> at "), 10)
            assert not second.button_values()  # the card closed, and says it all: no other message says it
            decided = await s.runtime.store.signoff_for_chat(str(chat))
            assert decided is not None and (decided.status, decided.decided_by) == ("approved", "U0BOSS")
            assert not any("already been answered" in m.text or "Plan approved" in m.text
                           for m in s.fake.bot_posts("C1", msg.ts)[before:])
            files = await shared_files(s, msg.ts)  # the approved plan's files, and only its
            assert all(f.shared for f in files.values()) and len(s.fake.files) == 2
            before = len(s.fake.bot_posts("C1", msg.ts))
            await s.events.message(s.fake.user_message("C1", "U0LEAD", "status", thread_ts=msg.ts))
            posts = await said_since(s, msg.ts, before, 1)
            assert "Last sign-off: approved by <@U0BOSS>" in posts[-1].text
            reminded = [signoff_id(m) for m in s.fake.bot_posts("C1", msg.ts) if m.text.startswith("Reminder")]
            assert len(reminded) == len(set(reminded)) and second_id in reminded  # once per request
            assert model.turns == ["ask", "plan", "plan"]


async def test_an_approver_who_left_the_channel_is_not_waited_for(tmp_path: Path) -> None:
    model = TeamScript(LABELS)
    async with FakeSlack(channels={"C1": "channel"}) as fake:
        # U0GONE left; the channel's other members fill more than one page of conversations.members
        fake.members["C1"] = ["UBOT", "U0LEAD", "U0BOSS", *(label.strip("<@>") for label in LABELS),
                              *(f"U{i:05d}" for i in range(300))]
        async with slack_stack(tmp_path, model=model, fake=fake, BOT_APPROVERS="U0GONE,U0BOSS") as s:  # type: ignore[arg-type]
            msg = s.mention(user="U0LEAD", text=team_request(LABELS))
            await s.events.app_mention(msg)
            await answer_all(s, msg.ts)
            await s.fake.wait_for(lambda f: len(signoff_posts(s, msg.ts)) == 1, 10)
            [request] = signoff_posts(s, msg.ts)
            assert "<@U0BOSS>" in request.text and "U0GONE" not in request.text
            assert any("<@U0GONE> is no longer in this channel" in m.text for m in s.fake.bot_posts("C1", msg.ts))
            signoff = await s.runtime.store.signoff_for_chat(str(ChatKey("slack", "C1", msg.ts)))
            assert signoff is not None and signoff.approvers == ("U0BOSS",)
            pages = [c for c in s.fake.calls_of("conversations.members") if c.status == 200]
            # read twice (are the request's travellers here? are the approvers?), 306 members at 200 a page
            assert len(pages) == 4
