"""Hypothesis strategies for trip plans as the planner and a model write them: shared legs priced
for everyone, a team's own legs per person, stays of one or several rooms, tickets per person,
prices in fen, places in Chinese (from the data, and some no data knows) or in English."""

from __future__ import annotations

from hypothesis import strategies as st

from tools.plan import HotelStay, Leg, TravellerLegs, TripPlan, Visit

PLACES = ("北京南", "上海虹桥", "杭州东", "深圳北", "汉口", "北京首都国际机场", "Pudong Airport", "老王车站")
HOTELS = ("全季酒店(上海外滩店)", "如家连锁酒店(北京南店)", "Bund Riverside Hotel", "西湖边小旅馆", "7天连锁酒店(杭州东店)")
SIGHTS = ("故宫博物院", "外滩", "West Lake", "南锣鼓巷", "无名小巷")
CITIES = ("北京", "上海", "杭州", "Shenzhen", "成都")
PEOPLE = ("Ana", "Bo", "Chen", "<@U0DAN>", "@erin")

fen = st.integers(min_value=0, max_value=900_000).map(lambda f: f / 100)


@st.composite
def legs(draw: st.DrawFn, n: int) -> list[Leg]:
    return [
        Leg(kind=draw(st.sampled_from(["train", "flight", "taxi"])), number=f"G{i + 1}",
            origin=draw(st.sampled_from(PLACES)), destination=draw(st.sampled_from(PLACES)),
            depart="2027-01-15 08:00", arrive="2027-01-15 12:00", seat=draw(st.sampled_from([None, "二等座"])),
            price=draw(fen))
        for i in range(n)
    ]


@st.composite
def stays(draw: st.DrawFn) -> list[HotelStay]:
    out = []
    for i in range(draw(st.integers(0, 2))):
        nights = draw(st.integers(1, 6))
        rate = draw(st.integers(0, 300_000)) / 100
        exact = draw(st.booleans())
        total = round(rate * nights, 2) if exact else round(rate * nights + draw(st.sampled_from([-0.5, 0.01, 0.99])), 2)
        out.append(HotelStay(hotel_id=f"h{i}", name=draw(st.sampled_from(HOTELS)), city=draw(st.sampled_from(CITIES)),
                             checkin_date="2027-01-15", checkout_date=f"2027-01-{15 + nights:02d}", nights=nights,
                             price_per_night=rate, total=max(total, 0.0), breakfast=draw(st.sampled_from([None, True])),
                             rooms=draw(st.sampled_from([None, 1, 2, 3]))))
    return out


@st.composite
def visits(draw: st.DrawFn) -> list[Visit]:
    return [Visit(poi_id=f"p{i}", name=draw(st.sampled_from(SIGHTS)), city=draw(st.sampled_from(CITIES)),
                  date="2027-01-16", start="10:00", duration_min=draw(st.sampled_from([None, 90])),
                  ticket_price=draw(st.sampled_from([0.0, 10.0, 60.0, 35.5, 0.01])))
            for i in range(draw(st.integers(0, 4)))]


@st.composite
def plans(draw: st.DrawFn, team: bool | None = None) -> TripPlan:
    is_team = draw(st.booleans()) if team is None else team
    party: list[TravellerLegs] = []
    if is_team:
        names = draw(st.lists(st.sampled_from(PEOPLE), min_size=2, max_size=4, unique=True))
        party = [TravellerLegs(name=name, home_city=draw(st.sampled_from(CITIES)), legs=draw(legs(draw(st.integers(0, 3)))))
                 for name in names]
    travellers = len(party) if party else draw(st.integers(1, 6))
    plan = TripPlan(title="Trip", origin_city=draw(st.sampled_from(CITIES)), destination_city=draw(st.sampled_from(CITIES)),
                    start_date="2027-01-15", end_date="2027-01-18", travellers=travellers,
                    legs=draw(legs(draw(st.integers(0, 3)))), stays=draw(stays()), visits=draw(visits()), party=party)
    plan.total_cost = plan.computed_total()
    return plan
