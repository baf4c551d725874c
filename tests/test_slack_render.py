"""Slack rendering: what the bot posts passes Slack's Block Kit rules (the fake's validator) and reads well."""

from __future__ import annotations

import pytest

from adapters.slack import render
from adapters.slack.mrkdwn import split_text, to_mrkdwn, unescape
from adapters.slack.titles import task_title, trip_title
from agent_core.events import AnswerReady, QuestionAsked, Verdict
from bot.store.base import SignoffRow
from bot.surface import Notice
from tests.fakes.slack_blocks import BlockError, validate_blocks
from tests.scripted_trip import trip_plan
from tools.plan import TripPlan


def valid(post: render.SlackPost) -> None:
    validate_blocks(post.blocks)
    assert 0 < len(post.text) <= 40_000


def test_question_mentions_the_person_and_offers_buttons() -> None:
    q = QuestionAsked("call_1", "Which <station> & when?", ("北京南", "北京西", "x" * 90))
    post = render.question(q, "U42", "en")
    valid(post)
    assert post.text.startswith("<@U42> ")
    assert "Which <station> & when?" in unescape(post.text)  # verbatim once Slack shows it
    actions = [b for b in post.blocks if b["type"] == "actions"]
    assert len(actions) == 1 and actions[0]["block_id"] == "ask:call_1"
    assert [e["value"] for e in actions[0]["elements"]] == list(q.options)  # full value, clipped label
    assert len(actions[0]["elements"][2]["text"]["text"]) == 75


def test_question_without_options_has_no_buttons() -> None:
    post = render.question(QuestionAsked("c", "何时出发？"), "", "zh")
    valid(post)
    assert all(b["type"] == "section" for b in post.blocks)
    assert post.text.startswith("❓")


def test_plan_blocks_have_every_part_and_the_verdict() -> None:
    plan = TripPlan.model_validate(trip_plan("2025-05-01"))
    verdict = Verdict("非常满意", "Very satisfied", ("timeline is consistent",))
    posts = render.answer(AnswerReady("## Plan\n**Day 1**: G1 <fast>", plan), verdict, "en")
    assert len(posts) == 1
    valid(posts[0])
    blocks = posts[0].blocks
    assert blocks[0] == {"type": "header", "text": {"type": "plain_text", "text": "Beijing → Shanghai"}}
    text = str(blocks)
    for part in ("Getting there", "G1", "北京南", "Hotel", "Bund Riverside Hotel", "Sights", "The Bund",
                 "Total", "¥1,033", "Sandbox", "Very satisfied", "timeline is consistent", "*Day 1*", "&lt;fast&gt;"):
        assert part in text, part
    assert "G1" in posts[0].text


def test_zh_plan_uses_chinese_headings() -> None:
    plan = TripPlan.model_validate(trip_plan("2025-05-01"))
    posts = render.answer(AnswerReady("行程如下", plan), Verdict("非常满意", "Very satisfied"), "zh")
    text = str(posts[0].blocks)
    assert "交通" in text and "住宿" in text and "景点" in text and "评审：非常满意" in text


@pytest.mark.parametrize("size", [3_500, 45_000, 130_000])
def test_long_answers_are_split_into_valid_messages(size: int) -> None:
    words = " ".join(f"w{i:06d}" for i in range(size // 8))
    posts = render.answer(AnswerReady(words), None, "en")
    for post in posts:
        valid(post)
    assert len(posts) >= max(1, size // render.TEXT_PER_MESSAGE)
    joined = " ".join(b["text"]["text"] for p in posts for b in p.blocks)
    assert joined.split() == words.split()  # nothing lost, nothing doubled


def test_split_text_never_exceeds_the_limit_and_keeps_escapes_whole() -> None:
    text = "&amp;" * 1000
    pieces = split_text(text, 2900)
    assert all(len(p) <= 2900 for p in pieces)
    assert all(p.endswith(";") for p in pieces)
    assert "".join(pieces) == text


def test_markdown_to_mrkdwn() -> None:
    assert to_mrkdwn("# Title\n- **a** [site](https://x.test/a?b=1&c=2)") == (
        "*Title*\n• *a* <https://x.test/a?b=1&amp;c=2|site>")
    assert to_mrkdwn("<answer>1 < 2</answer>") == "1 &lt; 2"


def test_notices_are_plain_escaped_text() -> None:
    posts = render.notice(Notice("error", "model <down> & out"))
    assert posts == [render.SlackPost(text="model &lt;down&gt; &amp; out")]


def test_the_validator_itself_refuses_what_slack_refuses() -> None:
    with pytest.raises(BlockError):
        validate_blocks([{"type": "section"}])
    with pytest.raises(BlockError):
        validate_blocks([{"type": "divider", "block_id": "a"}, {"type": "divider", "block_id": "a"}])


def test_a_plan_of_a_known_run_ends_with_feedback_buttons_naming_it() -> None:
    answer = AnswerReady(text="Your trip", plan=TripPlan.model_validate(trip_plan("2025-05-01")))
    run = "0123456789abcdef0123456789abcdef.3"
    [post] = render.answer(answer, None, "zh", run)
    valid(post)
    feedback = post.blocks[-1]
    assert feedback["type"] == "context_actions" and feedback["block_id"] == f"feedback:{run}"
    [el] = feedback["elements"]
    assert el["action_id"] == render.FEEDBACK_ACTION
    assert (el["positive_button"]["value"], el["negative_button"]["value"]) == (f"up:{run}", f"down:{run}")
    assert el["positive_button"]["accessibility_label"] == "这份行程有帮助"
    # no run named, or no plan: nothing to rate
    assert all(b["type"] != "context_actions" for p in render.answer(answer, None, "en") for b in p.blocks)
    assert all(b["type"] != "context_actions" for p in render.answer(AnswerReady(text="hi"), None, "en", run)
               for b in p.blocks)


def test_task_titles_say_what_the_agent_does_in_the_persons_language() -> None:
    args = {"depart_station": "北京", "arrive_station": "杭州", "depart_date": "2025-03-12"}
    assert task_title("train_search", args, "en") == "Searching trains 北京 → 杭州"
    assert task_title("train_search", args, "zh") == "查询火车 北京 → 杭州"
    assert task_title("hotel_search", {"city_name": "杭州"}, "en") == "Looking for hotels in 杭州"
    assert task_title("current_location", {}, "zh") == "确定你的位置"
    assert task_title("train_search", {"depart_station": "北京"}, "en") == "train_search · 北京"  # what it names is missing
    assert task_title("lookup", {"city": "Shanghai", "n": 3}, "en") == "lookup · Shanghai · 3"


@pytest.mark.parametrize(("start", "end", "en", "zh"), [
    ("2026-03-12", "2026-03-14", "12–14 March", "3月12–14日"),
    ("2026-03-30", "2026-04-02", "30 March – 2 April", "3月30日–4月2日"),
    ("2026-12-30", "2027-01-02", "30 December 2026 – 2 January 2027", "2026年12月30日–2027年1月2日"),
    ("2026-03-12", "2026-03-12", "12 March", "3月12日"),
    ("next week", "", "next week", "next week"),
])
def test_the_session_is_titled_after_the_trip(start: str, end: str, en: str, zh: str) -> None:
    plan = TripPlan.model_validate({**trip_plan("2025-05-01"), "title": "Hangzhou offsite", "start_date": start,
                                    "end_date": end})
    assert trip_title(plan, "en") == f"Hangzhou offsite, {en}"
    assert trip_title(plan, "zh") == f"Hangzhou offsite，{zh}"
    long = TripPlan.model_validate({**trip_plan("2025-05-01"), "title": "x" * 300})
    assert len(trip_title(long, "en")) == 200


def test_a_closed_sign_off_card_says_who_decided_and_when() -> None:
    decided = SignoffRow("s1", "sess", "slack:C1:1.2", "approved", ("U0BOSS",), 0.0, 0.0, 100.0,
                         decided_by="U0BOSS", decided_at=1_773_300_000.0)
    line = render.decided_line(decided, "en", "Asia/Shanghai")
    assert line == "✅ Approved by <@U0BOSS> at 2026-03-12 15:20"
    card = render.closed_card(line)
    validate_blocks(card.blocks)
    assert "<@U0BOSS>" in card.text and all(b["type"] == "section" for b in card.blocks)  # no buttons
    rejected = SignoffRow("s1", "sess", "k", "rejecting", ("U0BOSS",), 0.0, 0.0, 100.0, decided_by="U0BOSS",
                          decided_at=1_773_300_000.0)
    assert render.decided_line(rejected, "zh", "Asia/Shanghai") == "❌ 已由 <@U0BOSS> 于 2026-03-12 15:20 驳回"
    expired = SignoffRow("s1", "sess", "k", "expired", ("U0BOSS",), 0.0, 0.0, 1_773_300_000.0)
    assert render.decided_line(expired, "en", "Asia/Shanghai") == "⌛ Nobody decided by 2026-03-12 15:20"
    assert render.decided_line(None, "en", "Asia/Shanghai") == "This sign-off is closed"
