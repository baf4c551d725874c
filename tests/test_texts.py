"""The language a message is in, as the runtime reads it (bot.texts.detect_lang); counts in both
languages through one helper (agent_core.lang.plural), on every surface."""

from __future__ import annotations

import re

import pytest

from adapters.slack.render import block_text, plan_blocks
from adapters.telegram.render import plan_html
from adapters.telegram.split import html_to_plain
from adapters.web.render import costs_out
from agent_core.lang import plural
from agent_core.offline import OfflinePlanner
from agent_core.travel_agent import travel_toolset
from bot.delivery.plan_files import plan_files
from bot.texts import detect_lang
from tests.offline.test_offline_planner import drive as offline_drive
from tools.travel import Gazetteer
from tools.travel.factory import build_sandbox_tools


@pytest.mark.parametrize(
    ("text", "default", "lang"),
    [
        ("北京到上海三天", "en", "zh"),
        ("Plan a 3-day trip", "zh", "en"),
        ("thanks", "zh", "en"),
        ("asdf", "zh", "zh"),  # keyboard mash in a Chinese conversation stays Chinese
        ("G1710", "zh", "zh"),
        ("2", "en", "en"),
        ("asdf", "en", "en"),
    ],
)
def test_detect_lang(text: str, default: str, lang: str) -> None:
    assert detect_lang(text, default) == lang


@pytest.mark.parametrize(("n", "unit", "lang", "text"), [
    (1, "night", "en", "1 night"), (2, "night", "en", "2 nights"), (0, "night", "en", "0 nights"),
    (1, "person", "en", "1 person"), (3, "person", "en", "3 people"), (1, "day", "en", "1 day"),
    (2, "room", "en", "2 rooms"), (1, "message", "en", "1 message"), (90, "minute", "en", "90 min"),
    (1, "night", "zh", "1晚"), (2, "night", "zh", "2晚"), (3, "person", "zh", "3人"), (2, "room", "zh", "2间"),
])
def test_plural(n: int, unit: str, lang: str, text: str) -> None:
    assert plural(n, unit, lang) == text


async def test_a_one_night_trip_says_one_night_everywhere() -> None:
    """The title, the calendar, the CSV and every surface's plan: "1 night", never "1 nights"."""
    gazetteer = Gazetteer.load()
    drive = await offline_drive(OfflinePlanner(gazetteer), travel_toolset(build_sandbox_tools(gazetteer)),
                                "Beijing to Shanghai on 2027-01-15 for one night, one person", lang="en")
    plan = drive.plan
    assert plan is not None and plan.travellers == 1 and [s.nights for s in plan.stays] == [1]
    assert plan.title.endswith("2 days / 1 night")
    files = {f.filename: f.content for f in plan_files(plan, "Asia/Shanghai", "en")}
    surfaces = {
        "title": plan.title, "summary": drive.final_text or "", **files,
        "telegram": html_to_plain(plan_html(plan, "en")),
        "slack": "\n".join(block_text(b) for b in plan_blocks(plan, "en")),
        "web": costs_out(plan, "en").model_dump_json(),
    }
    for name, text in surfaces.items():
        assert not re.search(r"\b1 nights\b|\b1 travellers\b|\b1 people\b|\(s\)", text), name
    assert "× 1 night =" in surfaces["telegram"] and "(1 night)" in files["trip-2027-01-15.ics"]
