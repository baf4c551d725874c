"""Money that adds up on every surface: one function prices every item of a plan (tools.plan_costs),
every surface renders those lines, and for any plan the rows a person reads add up to the total
beside them: on Telegram, on Slack, on the web card's data and in the CSV cost sheet (the web
card itself in a browser: tests/test_browser_plan_card.py)."""

from __future__ import annotations

import csv
import io
import re
from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.slack.render import plan_blocks
from adapters.slack.texts import t
from adapters.telegram.render import plan_html
from adapters.telegram.split import html_to_plain
from adapters.web.render import costs_out
from bot.delivery.plan_files import cost_sheet
from tests.plan_strategies import plans
from tools.plan import HotelStay, Leg, TravellerLegs, TripPlan, Visit
from tools.plan_costs import money, plan_costs

MONEY = re.compile(r"¥(\d{1,3}(?:,\d{3})*(?:\.\d{2})?)")
ROW_ICONS = ("🚄", "✈️", "🚕", "🚗", "🚇", "🚶", "🏨", "📍")
langs = st.sampled_from(["en", "zh"])


def fen(text: str) -> int:
    return round(float(text.replace(",", "")) * 100)


def last_amount(line: str) -> int:
    """A row's amount: the last figure on it (after '=' when it is counted out); none is 0."""
    found = MONEY.findall(line)
    return fen(found[-1]) if found else 0


def telegram_rows(plan: TripPlan, lang: str) -> tuple[list[int], int, dict[str, int]]:
    lines = html_to_plain(plan_html(plan, lang)).splitlines()
    rows = [last_amount(line) for line in lines if line.startswith(ROW_ICONS)]
    [total] = [fen(MONEY.findall(line)[0]) for line in lines if line.startswith("💰")]
    shares = {line.split(" · ")[0].removeprefix("👤 "): last_amount(line) for line in lines if line.startswith("👤")}
    return rows, total, shares


def slack_rows(plan: TripPlan, lang: str) -> tuple[list[int], int]:
    rows: list[int] = []
    total = None
    skip = {f"*{t('backups', lang)}*", f"*{t('notes', lang)}*"}
    for block in plan_blocks(plan, lang):
        if block["type"] != "section":
            continue
        head, *lines = str(block["text"]["text"]).split("\n")
        if head.startswith(f"*{t('total', lang)}*"):
            total = fen(MONEY.findall(head)[0])
        elif head not in skip:
            rows += [last_amount(line) for line in lines]
    assert total is not None
    return rows, total


def sheet_rows(plan: TripPlan, lang: str) -> tuple[list[tuple[str, int]], int]:
    rows = list(csv.DictReader(io.StringIO(cost_sheet(plan, lang))))
    items = [(r["person"], fen(r["cost_cny"])) for r in rows if r["kind"] != "total"]
    [total] = [fen(r["cost_cny"]) for r in rows if r["kind"] == "total"]
    return items, total


def the_issue_plan() -> TripPlan:
    """The one-person card of the issue: two travellers, tickets shown per person and counted for
    both (its rows summed to ¥3,817 against a total of ¥4,236)."""
    plan = TripPlan(
        title="北京 → 上海", origin_city="北京", destination_city="上海", start_date="2027-01-15",
        end_date="2027-01-17", travellers=2,
        legs=[Leg(kind="train", number="G1", origin="北京南", destination="上海虹桥", depart="2027-01-15 07:00",
                  arrive="2027-01-15 11:29", seat="二等座", price=1106),
              Leg(kind="train", number="G2", origin="上海虹桥", destination="北京南", depart="2027-01-17 17:00",
                  arrive="2027-01-17 21:29", seat="二等座", price=894)],
        stays=[HotelStay(hotel_id="h1", name="全季酒店(上海外滩店)", city="上海", checkin_date="2027-01-15",
                         checkout_date="2027-01-17", nights=2, price_per_night=699, total=1398)],
        visits=[Visit(poi_id="p1", name="外滩", city="上海", date="2027-01-15", ticket_price=0),
                Visit(poi_id="p2", name="上海博物馆", city="上海", date="2027-01-16", ticket_price=60),
                Visit(poi_id="p3", name="东方明珠", city="上海", date="2027-01-16", ticket_price=199),
                Visit(poi_id="p4", name="上海迪士尼", city="上海", date="2027-01-16", ticket_price=160)],
    )
    plan.total_cost = plan.computed_total()
    return plan


def test_the_issue_card_counts_tickets_for_both_and_adds_up() -> None:
    plan = the_issue_plan()
    assert plan.total_cost == 4236
    for lang in ("en", "zh"):
        rows, total, _ = telegram_rows(plan, lang)
        assert sum(rows) == total == 423_600
    text = html_to_plain(plan_html(plan, "en"))
    assert "¥199 × 2 people = ¥398" in text  # a ticket says it is counted for two
    assert "¥553 × 2 people = ¥1,106" in text  # a shared fare says what one seat costs
    assert "¥699 × 2 nights = ¥1,398" in text
    assert "¥4,236 for 2 people (¥2,118 each)" in text
    zh = html_to_plain(plan_html(plan, "zh"))
    assert "¥199 × 2人 = ¥398" in zh and "¥4,236（2人，人均 ¥2,118）" in zh


def test_a_fare_that_does_not_divide_says_the_amount_and_what_it_covers() -> None:
    plan = TripPlan(title="x", origin_city="北京", destination_city="上海", start_date="2027-01-15",
                    end_date="2027-01-15", travellers=3,
                    legs=[Leg(kind="train", number="G1", origin="北京南", destination="上海虹桥",
                              depart="2027-01-15 07:00", arrive="2027-01-15 11:29", price=100)],
                    stays=[HotelStay(hotel_id="h", name="Inn", city="上海", checkin_date="2027-01-15",
                                     checkout_date="2027-01-16", nights=1, price_per_night=900, total=900, rooms=2)])
    text = html_to_plain(plan_html(plan, "en"))
    assert "¥100 (3 people)" in text  # not ¥33.33 × 3 = ¥100
    assert "¥450 × 2 rooms × 1 night = ¥900" in text
    assert "¥1,000 for 3 people (about ¥333.33 each)" in text


def test_team_shares_add_up_to_the_total_to_the_fen() -> None:
    plan = TripPlan(title="x", origin_city="北京, 上海", destination_city="杭州", start_date="2027-01-15",
                    end_date="2027-01-16", travellers=3,
                    party=[TravellerLegs(name=n, home_city="北京", legs=[]) for n in ("Ana", "Bo", "Chen")],
                    stays=[HotelStay(hotel_id="h", name="Inn", city="杭州", checkin_date="2027-01-15",
                                     checkout_date="2027-01-16", nights=1, price_per_night=100, total=100)],
                    visits=[Visit(poi_id="p", name="West Lake", city="杭州", date="2027-01-15", ticket_price=0.01)])
    costs = plan_costs(plan)
    assert [s.amount for s in costs.shares] == [33.35, 33.34, 33.34]  # 100.03 split, the odd fen to the first
    assert sum(round(s.amount * 100) for s in costs.shares) == round(costs.total * 100) == 10003
    assert plan.cost_of("Bo") == 33.34


def test_money_reads_as_people_write_it() -> None:
    assert money(1106) == "¥1,106" and money(553.5) == "¥553.50" and money(12.3, "EUR") == "12.30 EUR"


@settings(max_examples=150, deadline=None)
@given(plan=plans(), lang=langs)
def test_for_any_plan_every_surface_adds_up_to_its_total(plan: TripPlan, lang: str) -> None:
    costs = plan_costs(plan)
    expected = round(costs.total * 100)
    assert round(plan.computed_total() * 100) == expected

    rows, total, shares = telegram_rows(plan, lang)
    assert sum(rows) == total == expected
    assert sum(shares.values()) == (expected if plan.party else 0)

    rows, total = slack_rows(plan, lang)
    assert sum(rows) == total == expected

    web = costs_out(plan, lang)
    assert round(sum(line.amount for line in web.lines) * 100) == round(web.total * 100) == expected

    items, total = sheet_rows(plan, lang)
    assert sum(cost for _, cost in items) == total == expected  # the CSV agrees with the card
    if plan.party:  # each traveller's rows add up to what the card says they pay
        per_person: dict[str, int] = defaultdict(int)
        for person, cost in items:
            per_person[person] += cost
        assert {p.name: per_person[p.name] for p in plan.party} == {s.who: round(s.amount * 100) for s in costs.shares}
        assert shares == {s.who: round(s.amount * 100) for s in costs.shares}  # Telegram's "pays ¥X" are the same


@settings(max_examples=60, deadline=None)
@given(plan=plans(team=True), lang=langs)
def test_a_team_plan_shows_every_travellers_legs_on_every_surface(plan: TripPlan, lang: str) -> None:
    telegram = html_to_plain(plan_html(plan, lang))
    slack = "\n".join(str(b["text"]["text"]) for b in plan_blocks(plan, lang) if b["type"] == "section")
    for person in plan.party:
        assert f"👤 {person.name} · " in telegram
        for leg in person.legs:
            assert leg.number is not None
            assert leg.number in telegram and leg.number in slack
