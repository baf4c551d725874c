"""The web plan card in headless Chromium, for any plan: its rows add up to the total it shows,
a team card shows every traveller's legs and what each pays, and an English plan's places
carry their English names (the card draws the rows the server priced: adapters.web.render)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.web.render import costs_out, places_of
from tests.plan_strategies import plans
from tests.test_browser_e2e import CHROMIUM_ARGS, _chromium
from tests.test_plan_costs import the_issue_plan
from tools.plan import TripPlan

pytestmark = pytest.mark.browser

CARD_JS = Path(__file__).resolve().parent.parent / "adapters" / "web" / "static" / "plan_card.js"
DRAW = """([plan, costs, places, lang]) => {
  const card = PlanCard.render(plan, costs, places, lang);
  document.body.replaceChildren(card);
  return {
    rows: [...card.querySelectorAll(".row .price")].map((e) => Number(e.dataset.amount || 0)),
    shown: [...card.querySelectorAll(".row .price")].map((e) => e.textContent),
    total: Number(card.querySelector(".total .price").dataset.amount),
    totalText: card.querySelector(".total .price").textContent,
    people: [...card.querySelectorAll(".person")].map((e) => e.textContent),
    text: card.innerText,
  };
}"""


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    chromium = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page()
            tab.goto("about:blank")
            tab.add_script_tag(path=str(CARD_JS))
            yield tab
        finally:
            browser.close()


def draw(page: Any, plan: TripPlan, lang: str) -> dict[str, Any]:
    args = [plan.model_dump(), costs_out(plan, lang).model_dump(), places_of(plan, lang), lang]
    return dict(page.evaluate(DRAW, args))


def test_the_issue_card_adds_up_in_the_browser(page: Any) -> None:
    plan = the_issue_plan()
    card = draw(page, plan, "en")
    assert round(sum(card["rows"]) * 100) == round(card["total"] * 100) == 423_600
    assert card["totalText"] == "¥4,236"
    assert "¥199 × 2 people = ¥398" in card["text"]  # the ticket row says it counts two
    assert "¥4,236 for 2 people (¥2,118 each)" in card["text"]
    assert "全季酒店(上海外滩店) (JI Hotel, Shanghai Bund)" in card["text"]
    zh = draw(page, plan, "zh")
    assert "(Beijing South)" not in zh["text"] and "北京南 → 上海虹桥" in zh["text"]  # a Chinese plan: Chinese only


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=plans(), lang=st.sampled_from(["en", "zh"]))
def test_for_any_plan_the_card_rows_add_up_to_its_total(page: Any, plan: TripPlan, lang: str) -> None:
    card = draw(page, plan, lang)
    assert round(sum(card["rows"]) * 100) == round(card["total"] * 100) == round(plan.computed_total() * 100)
    assert len(card["rows"]) == len(plan.legs) + len(plan.stays) + len(plan.visits) + sum(len(p.legs) for p in plan.party)
    assert all(p.startswith(f"{person.name} · ") for p, person in zip(card["people"], plan.party, strict=True))
    for person in plan.party:  # every traveller's own legs are on the card
        for leg in person.legs:
            assert f"{leg.number}: " in card["text"]
