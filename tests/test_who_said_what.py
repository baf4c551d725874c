"""Who said what, piece by piece: what a message would change (bot.chat.reach), who may change
what (bot.chat.rights), the machine's rules for it (bot.chat.machine), and how a mention is
rendered on each surface. The whole flow on Slack and Telegram is in test_who_said_what_slack.py
and test_who_said_what_telegram.py."""

from __future__ import annotations

import itertools

import pytest

from adapters.slack import render as slack_render
from adapters.slack.mrkdwn import live, to_mrkdwn
from adapters.telegram.render import notice_html, question_html
from agent_core.events import QuestionAsked
from agent_core.schema import Message, Role, Sender
from bot.chat.addressing import bound_question, refused
from bot.chat.machine import TRANSITIONS, Action, ChatState, Facts, Trigger, decide
from bot.chat.reach import Reach, change_of, reach_of
from bot.chat.rights import Standing, may_decide, rights_of
from bot.store.base import InboxRow, QuestionRow, SessionRow, SignoffRow
from bot.surface import ChatKey, IncomingMessage, Notice, mention, quoted
from tools.plan import TripPlan

REQUEST = "offsite in Hangzhou, 12-14 December, for <@U0ANA> (Beijing), <@U0BO> (Shanghai) and <@U0CHEN>"
CHAT = ChatKey("slack", "C1", "1.0")
SESSION = SessionRow("s1", str(CHAT), "idle", "en", "U0LEAD", "Lea", 1, 0, REQUEST, None, 0.0, 0.0, 0.0)


def said(user: str, text: str, *, group: bool = True, handle: str = "", adopted_by: str = "",
         reply_to: str | None = None) -> IncomingMessage:
    return IncomingMessage(CHAT, user, text, is_group=group, handle=handle, adopted_by=adopted_by, reply_to=reply_to)


@pytest.mark.parametrize(("text", "reach"), [
    ("Guangzhou", Reach.TRIP), ("let's go to Guangzhou instead", Reach.TRIP), ("去广州吧", Reach.TRIP),
    ("15-17 December", Reach.TRIP), ("下周五出发", Reach.TRIP), ("budget 3000 yuan", Reach.TRIP),
    ("预算三千", Reach.TRIP), ("a cheaper hotel", Reach.TRIP), ("one more night", Reach.TRIP),
    ("add @user44 (Nanjing)", Reach.TRIP), ("Ana can leave at 6, trust me", Reach.TRIP),
    ("he arrives at 10", Reach.TRIP), ("what time is the train?", Reach.TRIP),
    ("after 9 am please", Reach.OWN), ("I'll come from Nanjing instead", Reach.OWN), ("我从南京出发", Reach.OWN),
    ("window seat please", Reach.OWN), ("二等座就行", Reach.OWN), ("2nd class please", Reach.OWN),
    ("I land at 10:30", Reach.OWN), ("上午十点前到达", Reach.OWN),
    ("thanks!", Reach.NOTHING), ("好的", Reach.NOTHING), ("👍", Reach.NOTHING), (":thumbsup:", Reach.NOTHING),
])
def test_what_a_message_would_change(text: str, reach: Reach) -> None:
    assert reach_of(text) is reach


def test_a_suggested_destination_is_said_against_the_requests() -> None:
    assert change_of("Guangzhou", REQUEST) == ("Guangzhou", "Hangzhou")
    assert change_of("how about Xiamen?", REQUEST) == ("Xiamen", "Hangzhou")
    assert change_of("去广州吧", "杭州团建，去杭州玩两天") == ("广州", "杭州")
    assert change_of("Hangzhou is fine", REQUEST) is None  # the same place: no change to name
    assert change_of("a cheaper hotel", REQUEST) is None  # said in the person's own words instead


def test_who_may_change_what() -> None:
    rejected = SignoffRow("g1", "s1", str(CHAT), "rejected", ("U0BOSS",), 0.0, 0.0, 0.0, decided_by="U0BOSS")
    waiting = SignoffRow("g2", "s1", str(CHAT), "waiting", ("U0BOSS",), 0.0, 0.0, 0.0)
    dan_spoke = [Message.user("hello", sender=Sender(user_id="U0DAN"))]
    cases = [
        (said("U0DAN", "Guangzhou", group=False), None, [], Standing.ALONE, True),  # a private chat: theirs
        (said("U0LEAD", "Guangzhou"), None, [], Standing.REQUESTER, True),
        (said("U0BOSS", "Guangzhou"), rejected, [], Standing.APPROVER, True),  # after a Reject
        (said("U0BOSS", "Guangzhou"), waiting, [], Standing.NEWCOMER, False),  # before: Approve or Reject
        (said("U0BO", "after 9 am please"), None, [], Standing.TRAVELLER, True),  # their own legs
        (said("U0BO", "Guangzhou"), None, [], Standing.TRAVELLER, False),  # the whole trip
        (said("U0DAN", "after 9 am please"), None, dan_spoke, Standing.BYSTANDER, False),
        (said("U0DAN", "Guangzhou"), None, [], Standing.NEWCOMER, False),
        (said("U0DAN", "thanks!"), None, [], Standing.NEWCOMER, True),  # changes nothing
        (said("U0DAN", "Guangzhou", adopted_by="U0LEAD"), None, [], Standing.ADOPTED, True),
    ]
    for msg, signoff, history, standing, entitled in cases:
        rights = rights_of(msg, SESSION, signoff, history)
        assert (rights.standing, rights.entitled) == (standing, entitled), msg
    # a Telegram traveller is known by @username; a later turn that names nobody keeps the party
    follow_up = SessionRow("s1", "telegram:-1:", "idle", "en", "10", "Lea", 2, 0, "make it cheaper", None, 0, 0, 0)
    first = [Message.user("offsite in Hangzhou for @user22 (Shanghai)", sender=Sender(user_id="10"))]
    bo = IncomingMessage(ChatKey("telegram", "-1", ""), "22", "from 9 am", is_group=True, handle="@User22")
    assert rights_of(bo, follow_up, None, first).standing is Standing.TRAVELLER
    # a suggestion is decided by the requester, or an approver after a Reject; nobody else
    assert may_decide(said("U0LEAD", "accept"), SESSION, None)
    assert may_decide(said("U0BOSS", "accept"), SESSION, rejected)
    assert not may_decide(said("U0BO", "accept"), SESSION, rejected)
    assert not may_decide(said("U0BOSS", "accept"), SESSION, waiting)


def test_the_machine_never_applies_a_message_its_sender_may_not_make() -> None:
    # whatever else holds, a message from someone not entitled changes no state and starts no run
    for state, values in itertools.product((ChatState.IDLE, ChatState.WORKING, ChatState.ASKING, ChatState.SIGNOFF),
                                           itertools.product([False, True], repeat=4)):
        answers, current, last, reason = values
        if answers or reason:  # an answer to one's own question, a rejection's reason: their own rules
            continue
        t = decide(state, Trigger.MESSAGE, Facts(answers=False, current=current, last=last, entitled=False))
        assert (t.action, t.target) == (Action.SUGGEST, None), (state, values)
    assert decide(ChatState.IDLE, Trigger.MESSAGE, Facts(entitled=True)).target is ChatState.WORKING
    assert decide(ChatState.CLOSED, Trigger.MESSAGE, Facts(entitled=False)).action is Action.START_RUN  # a new conversation
    for state in ChatState:  # Yes / No: only the one who may decide, only on a suggestion still waiting
        assert decide(state, Trigger.ACCEPT, Facts(current=True, entitled=True)).action is Action.ADOPT
        assert decide(state, Trigger.DECLINE, Facts(current=True, entitled=True)).action is Action.DECLINE
        assert decide(state, Trigger.ACCEPT, Facts(current=True, entitled=False)).action is Action.REFUSE_CHOICE
        assert decide(state, Trigger.DECLINE, Facts(current=False, entitled=True)).action is Action.STALE
    assert all(t.target is None for t in TRANSITIONS if t.trigger in (Trigger.ACCEPT, Trigger.DECLINE))


def test_in_a_group_only_the_requester_answers_their_question() -> None:
    question = QuestionRow("s1", "q1", "Which dates?", (), "U0LEAD", 0.0, 1.0, "m1", "waiting", 10)
    row = InboxRow(11, "slack", "x", str(CHAT), "{}", 0.0)
    assert bound_question(row, said("U0LEAD", "15 December"), [question], SESSION) is question
    assert bound_question(row, said("U0DAN", "15 December", reply_to="m1"), [question], SESSION) is None
    assert refused(said("U0DAN", "15 December", reply_to="m1"), [question]) is question  # told it is not theirs
    assert bound_question(row, said("U0DAN", "15 December", group=False), [question], SESSION) is question
    assert bound_question(row, said("U0LEAD", "15 December", adopted_by="U0LEAD"), [question], SESSION) is None


def test_the_model_reads_who_said_each_message_and_who_answered() -> None:
    bo = Sender(user_id="U0BO", name="Bo", handle="bo")
    assert Message.user("Guangzhou", sender=bo).to_openai()["content"] == "Bo (@bo): Guangzhou"
    answer = Message(role=Role.TOOL, content="Shanghai", tool_call_id="c1", name="ask_human", sender=bo)
    assert answer.to_openai()["content"] == "Bo (@bo): Shanghai"
    assert Message.user("Guangzhou").to_openai()["content"] == "Guangzhou"  # a private chat: as it is
    assert said("U0BO", "x").sender == Sender(user_id="U0BO")
    assert said("U0BO", "x", group=False).sender is None


def test_a_mention_renders_as_one_and_a_persons_words_as_typed_on_slack() -> None:
    asked = slack_render.question(QuestionAsked("c1", "<@U4>, which city are you leaving from? <!channel> a<b"), "U4", "en")
    assert asked.text == "<@U4> ❓ <@U4>, which city are you leaving from? &lt;!channel&gt; a&lt;b"
    assert to_mrkdwn("**Plan**: <@U4> arrives at 13:00 & <@U5|bo> at 14:00") == \
        "*Plan*: <@U4> arrives at 13:00 &amp; <@U5> at 14:00"
    [post] = slack_render.notice(Notice("suggestion", f"<@U0DAN> suggests: “{quoted('ask <@U4> & <@U5>')}”.",
                                        suggestion_id="s" * 32))
    assert post.text.startswith("<@U0DAN> suggests: “ask &lt;\u2060@U4&gt; &amp; &lt;\u2060@U5&gt;”")
    values = [e["value"] for b in post.blocks if b["type"] == "actions" for e in b["elements"]]
    assert values == [f"accept:{'s' * 32}", f"decline:{'s' * 32}"]
    plan = TripPlan.model_validate({
        "title": "T", "origin_city": "Beijing", "destination_city": "Hangzhou", "start_date": "2026-12-12",
        "end_date": "2026-12-14", "travellers": 1, "total_cost": 10,
        "party": [{"name": "<@U0ANA>", "home_city": "Beijing <b>", "legs": []}]})
    person = next(b["text"]["text"] for b in slack_render.plan_blocks(plan, "en") if "U0ANA" in str(b))
    assert person.startswith("*<@U0ANA>* · Beijing &lt;b&gt; · ")
    assert live("&lt;@U4&gt; <@U4> <@here>") == "&amp;lt;@U4&amp;gt; <@U4> &lt;@here&gt;"


def test_a_mention_renders_as_one_on_telegram() -> None:
    assert mention("telegram", "99", "Bo <the boss>") == "<@99|Bo the boss>"
    assert mention("telegram", "99", handle="@bo") == "@bo"
    assert mention("slack", "U9", "Bo") == "<@U9>"
    assert mention("web", "s1", "Bo") == "Bo"
    html = notice_html(f"<@99|Bo & co> accepted <@12>'s suggestion: “{quoted('<@77|x> a<b')}”")
    assert html == ('<a href="tg://user?id=99">Bo &amp; co</a> accepted <a href="tg://user?id=12">12</a>\'s '
                    "suggestion: “&lt;\u2060@77|x&gt; a&lt;b”")
    assert question_html(QuestionAsked("c1", "<@99|Bo>, which city?"), "en").startswith(
        '❓ <a href="tg://user?id=99">Bo</a>, which city?')
