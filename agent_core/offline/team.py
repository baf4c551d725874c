"""A team trip on the offline planner: several travellers from several cities meet in one place.

Each traveller gets their own ride there and back from their home city (searched like a one-
person trip's), the party shares the hotel and the sights, and the shared days start only once
the last of them has arrived and end before the first of them must leave — so the plan meets by
construction and submit_plan's party checks hold. A traveller whose home city the request does
not give is asked, by name, all of them at once (ask_human's `to`).
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any

from agent_core.offline.compose import (
    Choice,
    build_plan,
    leg_of,
    pick_hotel,
    pick_ride,
    seat_for,
)
from agent_core.offline.options import Ride
from agent_core.offline.plan_text import length_words, summary_text
from agent_core.offline.texts import TRANSPORT_NAMES, say
from agent_core.offline.turns import Call, Turn
from agent_core.party import Traveller, duplicate_labels
from agent_core.plan_words import arrival
from tools.plan import TravellerLegs, TripPlan
from tools.travel.geo import City

if TYPE_CHECKING:
    from agent_core.offline.decide import Decider as _Decider

MAX_PARTY = 8  # rides searched per traveller; a bigger team is beyond an offline demo


def plan_team(d: _Decider, party: list[Traveller], dest: City, start: date, nights: int) -> Turn:
    twins = duplicate_labels(party)
    if twins:  # a question or a ticket for "Li Wei" could be either of them
        return d.say("team_same_name", name=twins[0])
    homes: list[City] = []
    asks: list[Call] = []
    for k, person in enumerate(party[:MAX_PARTY]):
        slot = f"home_{k}"
        said = person.home_city  # as the request gave it, or as the traveller answered (agent_core.offline.state)
        city = d.p.places.resolve(said).city if said else None
        if city is None:
            if d.asked(slot) >= 2:
                return d.say("unknown_place", name=said or person.label)
            asks.append(Call("ask_human", {"inquire": say("ask_home", d.lang, who=person.label), "to": person.label}, slot))
            continue
        homes.append(city)
    if asks:  # everyone without a home city is asked at once, each by name
        return Turn(calls=asks)
    end = start.fromordinal(start.toordinal() + nights)
    calls: list[Call] = []
    chosen: dict[int, tuple[list[Ride], list[Ride]]] = {}
    for k, home in enumerate(homes):
        if home.id == dest.id:
            chosen[k] = ([], [])
            continue
        mode = d.mode(home, dest)
        other = "flight" if mode == "train" else "train"
        found: list[list[Ride] | None] = []
        for leg, a, b, day, after in (("out", home, dest, start, d.req.depart_after),
                                      ("back", dest, home, end, d.return_after(nights))):
            rides = d.rides(f"p{k}_{leg}_{mode}", day)
            if rides == []:  # none that way (a flight between neighbours): this traveller goes the other way
                rides = d.rides(f"p{k}_{leg}_{other}", day)
                if rides is None:
                    calls.append(d.ride_call(other, a, b, day, f"p{k}_{leg}_{other}", after))
                elif not rides:
                    return d.say("no_transport", day=day.isoformat(), origin=d.city_name(a), destination=d.city_name(b))
                elif d.req.transport and leg == "out":
                    d.notes.append(say("transport_switched_for", d.lang, who=party[k].label, origin=d.city_name(a),
                                       wanted=TRANSPORT_NAMES[mode][d.lang], used=TRANSPORT_NAMES[other][d.lang]))
            elif rides is None:
                calls.append(d.ride_call(mode, a, b, day, f"p{k}_{leg}_{mode}", after))
            found.append(rides)
        if all(r is not None for r in found):
            chosen[k] = (found[0] or [], found[1] or [])
    rest = d.searches(dest, start, end, nights)
    if isinstance(rest, Turn):
        return rest
    calls += rest
    if calls:
        return Turn(calls=calls)
    return _finish(d, party, homes, dest, start, nights, chosen)


def _finish(d: _Decider, party: list[Traveller], homes: list[City], dest: City, start: date, nights: int,
            chosen: dict[int, tuple[list[Ride], list[Ride]]]) -> Turn:
    cheapest = bool(d.req.cheaper)
    size = len(homes)
    picks: list[tuple[Ride | None, Ride | None]] = []
    backups: list[str] = []
    for k in range(size):
        outs, backs = chosen[k]
        out, out_backup = pick_ride(outs, after=d.req.depart_after, before=d.req.depart_before, cheapest=cheapest,
                                    seat=d.req.seat, arrive_by=d.arrive_by(start, nights), avoid_seats=d.req.avoid_seats,
                                    overnight=d.req.overnight is not False) if outs else (None, None)
        back, back_backup = pick_ride(backs, after=d.return_after(nights), before=d.req.return_before, cheapest=cheapest,
                                      seat=d.req.seat, avoid_seats=d.req.avoid_seats,
                                      overnight=d.req.overnight is not False) if backs else (None, None)
        picks.append((out, back))
        backups += [f"{party[k].label}: {line}" for line in d.alternatives(out_backup, back_backup, None)]
    arrivals = [p[0] for p in picks if p[0] is not None]
    departures = [p[1] for p in picks if p[1] is not None]
    if not arrivals:
        return d.say("same_city", city=d.city_name(dest))
    # the shared days fit between the last arrival and the first departure
    last_in = max(arrivals, key=lambda r: r.arrive)
    first_out = min(departures, key=lambda r: r.depart) if departures else None
    hotel, hotel_backup = pick_hotel(d.hotels_found(["hotel", "hotel_any"]), cheapest=cheapest, stars=d.req.stars,
                                     breakfast=d.req.breakfast, budget_per_night=None) if nights >= 1 else (None, None)
    backups += d.alternatives(None, None, hotel_backup)
    names = [d.city_name(h) for h in homes]
    shared = build_plan(lang=d.lang, origin=names[0], destination=d.city_name(dest), start=start, nights=nights,
                        travellers=size, choice=Choice(out=last_in, back=first_out, hotel=hotel),
                        sights=d.wanted_first(d.sights()), seat=d.req.seat, cheapest=cheapest, alternatives=backups,
                        notes=list(d.notes), sources=d.sources(), avoid_seats=d.req.avoid_seats)
    members = []
    for person, home, (out, back) in zip(party, homes, picks, strict=True):
        legs = []
        for ride, a, b in ((out, home, dest), (back, dest, home)):
            if ride is not None:
                seat, fare = seat_for(ride, d.req.seat, cheapest, d.req.avoid_seats)
                legs.append(leg_of(ride, seat, fare, 1, d.city_name(a), d.city_name(b)))
        members.append(TravellerLegs(name=person.label, home_city=d.city_name(home), legs=legs))
    together = "、" if d.lang == "zh" else ", "
    title = (f"{together.join(dict.fromkeys(names))} → {d.city_name(dest)} 团队出行 {length_words(nights, d.lang)}" if d.lang == "zh"
             else f"Team trip {together.join(dict.fromkeys(names))} → {d.city_name(dest)}, {length_words(nights, d.lang)}")
    plan: TripPlan = replace_plan(shared, title=title, origin_city=together.join(dict.fromkeys(names)), legs=[],
                                  party=members, timezone=dest.tz)
    plan.total_cost = plan.computed_total()
    return d.submit(plan, team_summary(plan, d.lang))


def replace_plan(plan: TripPlan, **changes: Any) -> TripPlan:
    return plan.model_copy(update=changes)


def team_summary(plan: TripPlan, lang: str) -> str:
    """The one-person summary with each traveller's rides and share in place of the party's legs."""
    zh = lang == "zh"
    lines = summary_text(plan, lang).split("\n")
    at = lines.index("交通：" if zh else "Getting there and back:")
    people: list[str] = []
    for person in plan.party:
        share = f"{plan.cost_of(person.name):g}"
        people.append(f"- {person.name}（{person.home_city}，人均约 {share} 元）" if zh
                      else f"- {person.name} ({person.home_city}, about {share} CNY each)")
        for leg in person.legs:
            people.append(f"  {leg.depart} {leg.origin} → {arrival(leg.depart, leg.arrive, lang)} {leg.destination}  {leg.number}  "
                          + (f"{leg.price:g}元" if zh else f"{leg.price:g} CNY"))
    return "\n".join([*lines[:at + 1], *people, *lines[at + 1:]])


__all__ = ["plan_team"]
