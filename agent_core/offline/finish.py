"""The one-person (or one-party) plan, once every search has answered: the rides, the hotel, the
sights, the budget's note, and submit_plan — or, when the new plan does not do what the change
asked (cheaper but not cheaper), a word that the plan stays as it was."""

from __future__ import annotations

from datetime import date
from typing import Any

from agent_core.offline.compose import (
    Choice,
    build_plan,
    pick_hotel,
    pick_ride,
)
from agent_core.offline.options import Hotel, Ride, source_of
from agent_core.offline.plan_text import ride_line, summary_text
from agent_core.offline.search import Searches
from agent_core.offline.state import Said
from agent_core.offline.texts import TRANSPORT_NAMES, say
from agent_core.offline.times import busy_until
from agent_core.offline.turns import Call, Turn
from tools.plan import TripPlan
from tools.travel.geo import City

NIGHT_ARRIVAL = "23:00"  # the first night's hotel is paid for: arrive that day, by then
DAY_TRIP_ARRIVAL = "13:00"  # a day trip arrives in time to see something


class Finishing(Searches):
    def arrive_by(self, start: date, nights: int) -> str:
        """By when the first ride must arrive: when the person must be there, or in time to see
        something on a day trip, or before the first night's hotel."""
        said = self.req.arrive_before
        return f"{start.isoformat()} {said or (DAY_TRIP_ARRIVAL if nights == 0 else NIGHT_ARRIVAL)}"

    def finish(self, origin: City, dest: City, start: date, nights: int, chosen: dict[str, tuple[str, list[Ride]]]) -> Turn:
        cheapest = bool(self.req.cheaper)
        travellers = self.req.travellers or 1
        out, out_backup = pick_ride(chosen["out"][1], after=self.req.depart_after, before=self.req.depart_before,
                                    cheapest=cheapest, seat=self.req.seat, arrive_by=self.arrive_by(start, nights),
                                    avoid_seats=self.req.avoid_seats, overnight=self.req.overnight is not False)
        back = back_backup = None
        if "back" in chosen:
            back, back_backup = pick_ride(chosen["back"][1], after=self.return_after(nights), before=self.req.return_before,
                                          cheapest=cheapest, seat=self.req.seat, avoid_seats=self.req.avoid_seats,
                                          overnight=self.req.overnight is not False)
        if out is None:
            return self.say("no_transport", day=start.isoformat(), origin=self.city_name(origin), destination=self.city_name(dest))
        if self.req.arrive_before and out.arrive > self.arrive_by(start, nights):
            self.notes.append(say("late_arrival", self.lang, by=self.req.arrive_before, at=out.arrive[11:16]))
        hotel = hotel_backup = None
        budget_night = None
        if self.req.budget and nights:
            budget_night = self.req.budget * 0.4 / nights / max(1, (travellers + 1) // 2)
        if nights >= 1 and not self.req.home_stay:
            hotel, hotel_backup = pick_hotel(self.hotels_found(["hotel", "hotel_any"]), cheapest=cheapest, stars=self.req.stars,
                                             breakfast=self.req.breakfast, budget_per_night=budget_night)
        notes = list(self.notes)
        if self.req.home_stay:
            notes.append(say("home_stay", self.lang))
        elif nights >= 1 and hotel is None:
            notes.append("沙盒里没有找到符合条件的酒店。" if self.lang == "zh" else "No hotel matched in the sandbox.")
        plan = build_plan(lang=self.lang, origin=self.city_name(origin), destination=self.city_name(dest), start=start,
                          nights=nights, travellers=travellers, choice=Choice(out=out, back=back, hotel=hotel),
                          sights=self.wanted_first(self.sights()), seat=self.req.seat, cheapest=cheapest,
                          alternatives=self.alternatives(out_backup, back_backup, hotel_backup), notes=notes,
                          sources=self.sources(),
                          busy_until=busy_until(self.req.arrive_before) if self.req.arrive_before else None,
                          avoid_seats=self.req.avoid_seats)
        if self.req.budget:
            key = "over_budget" if plan.total_cost > self.req.budget else "within_budget"
            plan.notes.insert(0, say(key, self.lang, total=f"{plan.total_cost:g}", budget=f"{self.req.budget:g}"))
        return self.submit(plan, summary_text(plan, self.lang))

    def submit(self, plan: TripPlan, summary: str) -> Turn:
        """submit_plan, unless the change just asked for gives nothing new: then say so and keep
        the plan on the table (a review's re-plan always submits: the runtime compares)."""
        kept = self.kept_because(plan)
        if kept is not None:
            return kept
        return Turn(calls=[Call("submit_plan", {"summary": summary, "plan": plan.model_dump()}, "plan")])

    def kept_because(self, plan: TripPlan) -> Turn | None:
        last = self.t.last_plan
        if last is None or self.t.reviews or self.s.last is not Said.CHANGE:
            return None
        asked = {c.name for c in self.s.last_changes}
        if "cheaper" in asked and plan.total_cost >= last.total_cost:
            return self.say("already_cheapest", total=f"{last.total_cost:g}")
        legs = [*plan.legs, *(leg for p in plan.party for leg in p.legs)]
        wanted = self.req.transport
        if "transport" in asked and wanted and legs and all(leg.kind != wanted for leg in legs):
            used = legs[0].kind
            gap = "" if self.lang == "zh" else " "
            return Turn(text=say("transport_switched", self.lang, wanted=TRANSPORT_NAMES[wanted][self.lang],
                                 used=TRANSPORT_NAMES.get(used, {}).get(self.lang, used)) + gap + say("plan_kept", self.lang))
        if same_trip(plan, last):
            if "budget" in asked and self.req.budget is not None:  # the plan on the table already fits
                key = "budget_kept" if last.total_cost <= self.req.budget else "over_budget_kept"
                return self.say(key, total=f"{last.total_cost:g}", budget=f"{self.req.budget:g}")
            return self.say("nothing_changed")
        return None

    def sources(self) -> frozenset[str]:
        """Where the answers this plan is built on came from (each tool answer names its source)."""
        return frozenset(src for o in self.t.phase if o.name != "current_location" and (src := source_of(o.json())))

    def alternatives(self, out_backup: Ride | None, back_backup: Ride | None, hotel_backup: Hotel | None) -> list[str]:
        zh = self.lang == "zh"
        alts = []
        if out_backup:
            alts.append(("去程备选：" if zh else "Outbound backup: ") + ride_line(out_backup, self.lang))
        if back_backup:
            alts.append(("返程备选：" if zh else "Return backup: ") + ride_line(back_backup, self.lang))
        if hotel_backup:
            alts.append(f"酒店备选：{hotel_backup.name}（{hotel_backup.price:g}元/晚）" if zh
                        else f"Hotel backup: {hotel_backup.name} ({hotel_backup.price:g} CNY/night)")
        return alts


def same_trip(a: TripPlan, b: TripPlan) -> bool:
    """The same rides, stays, sights, dates and party (titles and notes aside)."""
    def key(p: TripPlan) -> Any:
        return (p.start_date, p.end_date, p.travellers, [x.model_dump() for x in p.legs], [x.model_dump() for x in p.stays],
                [x.model_dump() for x in p.visits], [x.model_dump() for x in p.party])
    return bool(key(a) == key(b))
