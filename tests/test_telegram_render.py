"""Telegram HTML: escaping, splitting under 4096 on line boundaries, plans, verdicts, progress."""

from __future__ import annotations

import pytest

from adapters.telegram.progress import key_args
from adapters.telegram.render import answer_html, markdownish, question_html
from adapters.telegram.split import html_to_plain, split_html, units
from agent_core.events import AnswerReady, QuestionAsked, Verdict
from tests.fakes.telegram_html import EntityParseError, parse_html
from tools.plan import HotelStay, Leg, TripPlan, Visit


def plan() -> TripPlan:
    return TripPlan(
        title="上海 3 日 <周末> & 美食", origin_city="北京", destination_city="上海",
        start_date="2025-05-01", end_date="2025-05-03", travellers=2,
        legs=[Leg(kind="train", number="G1", origin="北京南", destination="上海虹桥",
                  depart="2025-05-01 07:00", arrive="2025-05-01 11:29", seat="二等座", price=1106)],
        stays=[HotelStay(hotel_id="h1", name="Bund <Inn>", city="上海", checkin_date="2025-05-01",
                         checkout_date="2025-05-03", nights=2, price_per_night=450, total=900, breakfast=True)],
        visits=[Visit(poi_id="p1", name="外滩", city="上海", date="2025-05-01", start="19:00", duration_min=90)],
        total_cost=2006, notes=["Sandbox data: prices and timetables are examples, not live."],
    )


def test_model_text_is_escaped_and_light_markdown_kept():
    html = markdownish("## Day 1\nUse **G1** if price < 600 & `seat` > none\n<answer>x</answer>")
    text, entities = parse_html(html)
    assert "Day 1" in text and "price < 600 & seat > none" in text
    assert {e.type for e in entities} == {"bold", "code"}
    assert "<answer>" not in text


def test_bold_and_code_never_overlap():
    html = markdownish("**a `b** c`")
    parse_html(html)  # must not raise


def test_question_is_verbatim_and_mentions_the_asker_in_groups():
    q = QuestionAsked("call_1", "Which station: 北京南 or 北京西? <pick one> & tell me")
    html = question_html(q, "en", mention=("77", "Bob <admin>"))
    text, entities = parse_html(html)
    assert q.question in text
    link = next(e for e in entities if e.type == "text_link")
    assert link.url == "tg://user?id=77"


def test_plan_and_verdict_render_as_valid_html_in_both_languages():
    verdict = Verdict(label="非常满意", label_en="Very satisfied", reasons=("All <legs> check out",))
    for lang in ("zh", "en"):
        html = answer_html(AnswerReady("Here is your plan & more", plan()), verdict, lang)
        text, _ = parse_html(html)
        assert "G1" in text and "Bund <Inn>" in text and "外滩" in text
        assert "Sandbox data" in text and "非常满意" in text
        assert "¥2,006" in text
    assert "Very satisfied" in parse_html(answer_html(AnswerReady("x", plan()), verdict, "en"))[0]


def test_split_keeps_every_part_under_the_limit_and_cuts_on_lines():
    lines = [f"<b>line {i}</b> " + "x" * 90 for i in range(200)]
    html = "\n".join(lines)
    parts = split_html(html)
    assert len(parts) > 1
    for part in parts:
        assert units(part) <= 4096
        parse_html(part)
    assert "\n".join(parts) == html  # nothing lost, nothing reordered


def test_a_single_huge_line_is_cut_without_breaking_tags_or_entities():
    html = "<b>" + "&amp;五" * 3000 + "</b>"
    parts = split_html(html)
    assert len(parts) >= 2
    total = ""
    for part in parts:
        assert units(part) <= 4096
        text, entities = parse_html(part)
        assert entities and entities[0].type == "bold"
        total += text
    assert total == "&五" * 3000


def test_emoji_count_as_two_units():
    html = "😀" * 3000  # 6000 UTF-16 units
    parts = split_html(html)
    assert all(units(p) <= 4096 for p in parts) and "".join(parts) == html


def test_plain_fallback_strips_tags_and_unescapes():
    assert html_to_plain("<b>a &lt;b&gt; &amp; c</b>") == "a <b> & c"


def test_fake_parser_rejects_what_telegram_rejects():
    for bad in ("<b>open", "a < b", "<div>x</div>", "</i>", "<b><i>x</b></i>"):
        with pytest.raises(EntityParseError):
            parse_html(bad)


def test_key_args_pick_the_route_and_dates():
    line = key_args({"departure_city_name": "北京市", "arrival_city_name": "上海市", "depart_date": "2025-05-01",
                     "is_transfer": 0, "max_sale_price": 800})
    assert line == "北京市 → 上海市 · 2025-05-01 · transfer=0"
