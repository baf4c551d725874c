"""Slack rendering: what the bot posts passes Slack's Block Kit rules (the fake's validator) and reads well."""

from __future__ import annotations

import pytest

from adapters.slack import render
from adapters.slack.mrkdwn import split_text, to_mrkdwn, unescape
from agent_core.events import AnswerReady, QuestionAsked, Verdict
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
