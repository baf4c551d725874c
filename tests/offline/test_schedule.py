"""The day's schedule never overlaps a ride: no sights while the traveller is still on an overnight
train, none after the ride home leaves; the cheapest ride there still arrives the first day;
a budget hotel is a budget hotel."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from agent_core.offline.compose import Choice, build_plan, pick_hotel, pick_ride
from agent_core.offline.options import Hotel, Ride, Sight

START = date(2026, 12, 11)
SIGHTS = [Sight(f"POI-{k}", f"sight {k}", hours="08:00-22:00", visit_min=90, price=10.0 * k) for k in range(9)]


def ride(number: str, depart: str, arrive: str, price: float, a: str = "北京", b: str = "上海") -> Ride:
    return Ride(kind="train", number=number, origin=a, destination=b, depart=depart, arrive=arrive, price=price,
                seats=(("硬卧", price), ("二等座", price + 100)))


def _at(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M")


def test_no_sight_while_on_the_night_train_there_or_after_the_ride_home() -> None:
    night_out = ride("K8848", "2026-12-11 17:10", "2026-12-12 12:03", 300)
    home = ride("T40", "2026-12-13 17:40", "2026-12-14 08:26", 300, "上海", "北京")
    plan = build_plan(lang="en", origin="Beijing", destination="Shanghai", start=START, nights=2, travellers=1,
                      choice=Choice(out=night_out, back=home, hotel=None), sights=SIGHTS, seat=None, cheapest=True,
                      alternatives=[], notes=[])
    assert plan.visits
    for visit in plan.visits:
        begins = _at(f"{visit.date} {visit.start}")
        ends = begins + timedelta(minutes=visit.duration_min or 0)
        assert begins >= _at(night_out.arrive), f"{visit.name} while on {night_out.number}"
        assert ends <= _at(home.depart), f"{visit.name} after {home.number} left"
    assert all(v.date != "2026-12-11" for v in plan.visits)  # the first day is spent on the train


def test_the_cheapest_ride_there_arrives_the_first_day_when_one_does() -> None:
    night = ride("K8848", "2026-12-11 17:10", "2026-12-12 12:03", 150)
    day = ride("D593", "2026-12-11 07:45", "2026-12-11 14:30", 300)
    assert pick_ride([night, day], after=None, before=None, cheapest=True, arrive_by="2026-12-11 23:00")[0] == day
    assert pick_ride([night], after=None, before=None, cheapest=True, arrive_by="2026-12-11 23:00")[0] == night


def test_a_budget_hotel_is_the_cheapest_of_the_budget_class() -> None:
    hotels = [Hotel("H-1", "亚朵", 560, stars=4, rating=4.8), Hotel("H-2", "如家", 260, stars=2, rating=4.0),
              Hotel("H-3", "汉庭", 240, stars=2, rating=4.1), Hotel("H-4", "全季", 230, stars=3, rating=4.5)]
    assert pick_hotel(hotels, cheapest=False, stars=2, breakfast=None, budget_per_night=None)[0] == hotels[2]
    assert pick_hotel(hotels, cheapest=False, stars=4, breakfast=None, budget_per_night=None)[0] == hotels[0]
