"""Names a reader can read: an English plan shows English (the data's, or composed from it) or
pinyin beside each Chinese name; a Chinese plan shows Chinese only; on every surface."""

from __future__ import annotations

import pytest

from adapters.slack.render import block_text, plan_blocks
from adapters.telegram.render import plan_html
from adapters.telegram.split import html_to_plain
from bot.delivery.plan_files import calendar_text, cost_sheet
from tests.test_plan_costs import the_issue_plan
from tools.travel.geo import Gazetteer
from tools.travel.names import PlaceNames


@pytest.fixture(scope="module")
def names() -> PlaceNames:
    return PlaceNames(Gazetteer.load())


@pytest.mark.parametrize(("zh", "en"), [
    ("北京", "Beijing"),  # a city: the data's English
    ("故宫博物院", "The Palace Museum"),  # a sight: the data's English
    ("北京首都国际机场", "Beijing Capital International Airport"),  # an airport: the data's
    ("北京南", "Beijing South"),  # a station: its city and its direction
    ("上海虹桥", "Shanghai Hongqiao"),  # its city and pinyin
    ("汉口", "Hankou"),  # a station named after no city: pinyin
    ("北京南站", "Beijing South Station"),
    ("全季酒店(上海外滩店)", "JI Hotel (Shanghai Bund)"),  # a sandbox hotel: its brand's name and its area
    ("7天连锁酒店(杭州东店)", "7 Days Inn (Hangzhou East)"),
    ("希尔顿酒店(北京故宫博物院店)", "Hilton Hotel (Beijing Palace Museum)"),
    ("老王烧烤（南京路店）", "Laowangshaokao (Nanjing Lu)"),  # nothing known but a city: pinyin
    ("Bund Riverside Hotel", "Bund Riverside Hotel"),  # already English
])
def test_english_names(names: PlaceNames, zh: str, en: str) -> None:
    assert names.english(zh) == en


def test_a_label_puts_the_english_beside_the_chinese_in_english_only(names: PlaceNames) -> None:
    assert names.label("北京南", "en") == "北京南 (Beijing South)"
    assert names.label("全季酒店(上海外滩店)", "en") == "全季酒店(上海外滩店) (JI Hotel, Shanghai Bund)"  # no nesting
    assert names.label("北京南", "zh") == "北京南"
    assert names.label("West Lake", "en") == "West Lake"


def test_every_surface_names_places_for_its_reader() -> None:
    plan = the_issue_plan()
    english = {
        "telegram": html_to_plain(plan_html(plan, "en")),
        "slack": "\n".join(block_text(b) for b in plan_blocks(plan, "en")),
        "csv": cost_sheet(plan, "en"),
        "ics": calendar_text(plan, "Asia/Shanghai", "en").replace("\r\n ", ""),
    }
    for surface, text in english.items():
        assert "北京南 (Beijing South)" in text, surface
        assert "外滩 (The Bund)" in text, surface
    for surface in ("telegram", "slack", "csv"):
        assert "全季酒店(上海外滩店) (JI Hotel, Shanghai Bund)" in english[surface], surface
    chinese = html_to_plain(plan_html(plan, "zh")) + cost_sheet(plan, "zh")
    assert "北京南" in chinese and "Beijing" not in chinese and "Bund" not in chinese
