"""OfflinePlanner: a rule-based model behind the same interface as the LLM (ChatModel).

Each call reads the whole conversation and returns the next assistant turn: questions through
ask_human, searches through the travel tools, and finally submit_plan. Nothing is kept between
calls: what a call id is for is written into the id itself ("call_off_<n>_<purpose>"), so a run
resumed from the store after a restart continues exactly where it stopped.
"""

from __future__ import annotations

import asyncio
import json
import statistics
from collections.abc import AsyncIterator, Sequence
from datetime import date, timedelta
from typing import Any

from agent_core.model import TokenUsage, ToolChoice
from agent_core.offline.compose import (
    SIGHTS_PER_DAY,
    Choice,
    build_plan,
    pick_hotel,
    pick_ride,
    ride_line,
    summary_text,
)
from agent_core.offline.options import (
    Ride,
    Sight,
    read_flights,
    read_hotels,
    read_sights,
    read_trains,
    source_of,
    worth_a_visit,
)
from agent_core.offline.places import PlaceReader, Resolution
from agent_core.offline.request import read_wishes
from agent_core.offline.team import plan_team
from agent_core.offline.texts import TRANSPORT_NAMES, say
from agent_core.offline.transcript import (
    CALL_ID_PREFIX,
    ToolOutcome,
    Transcript,
    read_transcript,
    slot_of,
)
from agent_core.offline.turns import Call, Turn
from agent_core.offline.understand import Understanding, understand
from agent_core.party import Traveller, read_party
from agent_core.schema import Function, Message, ToolCall
from agent_core.text_tool_calls import strip_answer_tags
from tools.travel.geo import City, Gazetteer, haversine_km

TRAIN_MAX_KM = 1200  # beyond this, a flight is the sensible default
DATE_CHOICES = {"zh": ("明天", "本周六", "下周五", "下周六"),
                "en": ("tomorrow", "this Saturday", "next Friday", "next Saturday")}
STREAM_PIECES = 4  # the offline planner's text arrives in about this many pieces
HOTEL_NEAR_M = 3000  # how far from the sights a hotel may be, before searching the whole city
# poi_search queries for sights, by kind; the first is always searched, the rest when it finds too few
SIGHT_KINDS = (("sights", "景点"), ("sights_landmark", "地标"), ("sights_museum", "博物馆"),
               ("sights_park", "公园"), ("sights_street", "街区"), ("sights_temple", "寺庙"))


class OfflinePlanner:
    name = "offline-planner"

    def __init__(self, gazetteer: Gazetteer) -> None:
        self.gazetteer = gazetteer
        self.places = PlaceReader(gazetteer)

    async def ask_tool(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: ToolChoice = "auto",
        usage: TokenUsage | None = None,
    ) -> Message:
        reply = self.next_message(messages)
        if usage is not None:
            usage.add(0, 0)  # no tokens: count the call only
        return reply

    async def stream_tool(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: ToolChoice = "auto",
        usage: TokenUsage | None = None,
    ) -> AsyncIterator[str | Message]:
        """`ask_tool`, streamed like a model would (agent_core.model.StreamingChatModel): the
        turn's visible text in a few pieces, then the turn, so the demo shows an answer being
        written."""
        reply = await self.ask_tool(messages, tools=tools, tool_choice=tool_choice, usage=usage)
        for piece in stream_pieces(strip_answer_tags(reply.content or "")):
            yield piece
            await asyncio.sleep(0)  # each piece reaches the surfaces on its own
        yield reply

    def next_message(self, messages: Sequence[Message]) -> Message:
        """The next assistant turn for `messages` (synchronous: pure CPU)."""
        t = read_transcript(messages)
        today = t.clock.today if t.clock else date.today()  # only prompts without the clock line
        u = understand(t, self.places, today)
        turn = _Decider(self, t, u, today).decide()
        text = turn.text
        if not t.intro_given:
            text = f"{say('intro', u.lang)}\n\n{text}" if text else say("intro", u.lang)
        if not turn.calls:
            return Message.assistant(f"<answer>{text}</answer>")
        calls = [
            ToolCall(id=f"{CALL_ID_PREFIX}{t.calls_so_far + i + 1}_{c.purpose}",
                     function=Function(name=c.name, arguments=json.dumps(c.arguments, ensure_ascii=False)))
            for i, c in enumerate(turn.calls)
        ]
        return Message.assistant(text, calls)


def stream_pieces(text: str, pieces: int = STREAM_PIECES) -> list[str]:
    """`text` cut into about `pieces` parts at line ends where it has them (joined, they are `text`)."""
    if not text:
        return []
    size = max(1, -(-len(text) // pieces))
    out: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        newline = text.rfind("\n", start + 1, end)
        if end < len(text) and newline > start:
            end = newline + 1
        out.append(text[start:end])
        start = end
    return out


class _Decider:
    """One decision over one transcript (a fresh object per call, dropped afterwards)."""

    def __init__(self, planner: OfflinePlanner, t: Transcript, u: Understanding, today: date) -> None:
        self.p = planner
        self.t = t
        self.u = u
        self.req = u.request
        self.lang = u.lang
        self.today = today
        self.notes: list[str] = []

    # -- helpers -----------------------------------------------------------------------------
    def ask(self, slot: str, question: str, options: Sequence[str] = ()) -> Turn:
        args: dict[str, Any] = {"inquire": question}
        if options:
            args["options"] = list(options)[:10]
        return Turn(calls=[Call("ask_human", args, slot)])

    def say(self, key: str, **values: object) -> Turn:
        return Turn(text=say(key, self.lang, **values))

    def outcome(self, purpose: str) -> ToolOutcome | None:
        found = [o for o in self.t.phase if slot_of(o.call_id) == purpose]
        return found[-1] if found else None

    def asked(self, slot: str) -> int:
        return self.t.asks_in_phase.get(slot, 0)

    def city_name(self, city: City) -> str:
        return city.name_zh if self.lang == "zh" else city.name_en

    # -- the decision ------------------------------------------------------------------------
    def decide(self) -> Turn:
        if self.t.plan_in_phase and self.t.last_plan is not None:
            return Turn(text=summary_text(self.t.last_plan, self.lang))
        refused = self.outcome("plan")
        if refused is not None and not refused.ok:
            return self.say("plan_refused", reason=(refused.output or "")[7:200])
        if self.t.last_plan is not None and not self.u.new_info and not self.t.phase:
            return self.say("nothing_new" if self.u.thanks else "not_understood")

        dest = self.resolve_slot("destination")
        if isinstance(dest, Turn):
            return dest
        start = self.req.start
        if start is not None and start < self.today:
            suggest = self.today + timedelta(days=1)
            return self.say("past_date", day=start.isoformat(), today=self.today.isoformat(), suggest=suggest.isoformat())
        request = next((turn.text for turn in self.t.turns if turn.slot is None), "")
        party = read_party(request)
        if len(party) >= 2:  # a team trip: several travellers, each from their own city
            if start is None:
                return self.ask_date()
            team_nights = self.req.trip_nights if self.req.trip_nights is not None else 1
            return plan_team(self, party, self.team_destination(request, party, dest), start, team_nights)
        origin = self.resolve_slot("origin")
        if isinstance(origin, Turn):
            return origin
        if origin.id == dest.id:
            return self.say("same_city", city=self.city_name(dest))
        skipped = [c for c in self.u.more_destinations if c.id not in (origin.id, dest.id)]
        if skipped:
            names = ("、" if self.lang == "zh" else ", ").join(self.city_name(c) for c in skipped)
            self.notes.append(say("one_destination", self.lang, city=self.city_name(dest), skipped=names,
                                  next=self.city_name(skipped[0])))
        if start is None:
            return self.ask_date()
        nights = self.req.trip_nights
        if nights is None:
            nights = 1
            self.notes.append(say("length_default", self.lang, days=2, nights=1))
        end = start + timedelta(days=nights)
        return self.search_or_plan(origin, dest, start, end, nights)

    def team_destination(self, request: str, party: list[Traveller], read: City) -> City:
        """Where a team meets: the city the request names that is nobody's home (the rules that
        read a one-person request may take a home city in brackets for the destination)."""
        homes = {c.id for t in party if t.home_city and (c := self.p.places.resolve(t.home_city).city) is not None}
        if read.id not in homes:
            return read
        others = [m.city for m in self.p.places.mentions(request) if m.city is not None and m.city.id not in homes]
        return others[0] if others else read

    def ask_date(self) -> Turn:
        if self.asked("date") >= 2:
            return self.say("no_date")
        return self.ask("date", say("ask_date_again" if self.asked("date") else "ask_date", self.lang), self.date_options())

    def date_options(self) -> list[str]:
        """A few likely departure days, each labelled with its date first (what an answer is read by)."""
        out: dict[date, str] = {}
        for phrase in DATE_CHOICES["zh" if self.lang == "zh" else "en"]:
            day = read_wishes(phrase, self.today).start
            if day is not None and day > self.today and day not in out:
                out[day] = f"{day.isoformat()}（{phrase}）" if self.lang == "zh" else f"{day.isoformat()} ({phrase})"
        return list(out.values())

    def resolve_slot(self, slot: str) -> City | Turn:
        name = self.req.destination if slot == "destination" else self.req.origin
        if name is None and slot == "origin":
            return self.origin_from_location()
        if name is None:
            if self.asked("destination") >= 2:
                return self.say("no_destination")
            return self.ask("destination", say("ask_destination_again" if self.asked("destination") else "ask_destination", self.lang))
        res: Resolution = self.p.places.resolve_option(name)
        if res.city is not None:
            if res.poi is not None and slot == "destination":
                self.u.wanted_pois.append(res.poi.id)
            return res.city
        if (self.asked(slot) >= 1 and not res.ambiguous) or self.asked(slot) >= 2:
            return self.say("unknown_place", name=name)
        if res.ambiguous:
            return self.ask(slot, say("ask_ambiguous_place", self.lang, name=name), res.options)
        if res.options:
            return self.ask(slot, say("ask_unknown_place", self.lang, name=name), res.options)
        return self.say("unknown_place", name=name)

    def origin_from_location(self) -> City | Turn:
        where = self.outcome("where")
        if where is None:
            return Turn(calls=[Call("current_location", {}, "where")])
        city = self.city_in_location(where)
        if city is None:
            if self.asked("origin") >= 2:
                return self.say("no_destination")
            return self.ask("origin", say("ask_origin", self.lang))
        self.notes.append(say("origin_default", self.lang, city=self.city_name(city)))
        return city

    def city_in_location(self, where: ToolOutcome) -> City | None:
        data = where.json()
        candidates: list[str] = []
        if isinstance(data, dict):
            for key in ("city", "city_name", "name_zh", "name"):
                if isinstance(data.get(key), str):
                    candidates.append(data[key])
        elif where.output:
            candidates.append(where.output)
        for text in candidates:
            res = self.p.places.resolve(text)
            if res.city is not None:
                return res.city
            for m in self.p.places.mentions(text):
                if m.city is not None:
                    return m.city
        return None

    # -- searching ---------------------------------------------------------------------------
    @staticmethod
    def return_after(nights: int) -> str:
        """Leave the last afternoon for sights; a day trip goes home in the evening."""
        return "17:00" if nights == 0 else "15:00"

    def mode(self, origin: City, dest: City) -> str:
        if self.req.transport:
            return self.req.transport
        far = haversine_km(origin.lat, origin.lon, dest.lat, dest.lon) > TRAIN_MAX_KM
        abroad = not (origin.in_mainland and dest.in_mainland)
        return "flight" if far or abroad else "train"

    def ride_call(self, mode: str, a: City, b: City, day: date, purpose: str, after: str | None) -> Call:
        if mode == "train":
            args: dict[str, Any] = {"depart_station": a.name_zh, "arrive_station": b.name_zh,
                                    "depart_date": day.isoformat(), "is_transfer": 0}
            if after:
                args["depart_time_earliest"] = f"{day.isoformat()} {after}"
            return Call("train_search", args, purpose)
        args = {"departure_city_name": a.name_zh, "arrival_city_name": b.name_zh,
                "depart_date": day.isoformat(), "is_transfer": 0}
        if after:
            args["depart_time_earliest"] = after
        return Call("flight_search", args, purpose)

    def rides(self, purpose: str, day: date) -> list[Ride] | None:
        """The rides a search found; None while not searched. Errors count as nothing found."""
        o = self.outcome(purpose)
        if o is None:
            return None
        data = o.json()
        return read_trains(data) if purpose.endswith("train") else read_flights(data)

    def search_or_plan(self, origin: City, dest: City, start: date, end: date, nights: int) -> Turn:
        preferred = self.mode(origin, dest)
        other = "flight" if preferred == "train" else "train"
        one_way = bool(self.req.one_way)
        calls: list[Call] = []
        chosen: dict[str, tuple[str, list[Ride]]] = {}
        legs = [("out", origin, dest, start, self.req.depart_after)]
        if not one_way:
            legs.append(("back", dest, origin, end, self.return_after(nights)))
        for leg, a, b, day, after in legs:
            found = self.rides(f"{leg}_{preferred}", day)
            if found is None:
                calls.append(self.ride_call(preferred, a, b, day, f"{leg}_{preferred}", after))
                continue
            if found:
                chosen[leg] = (preferred, found)
                continue
            fallback = self.rides(f"{leg}_{other}", day)
            if fallback is None:
                calls.append(self.ride_call(other, a, b, day, f"{leg}_{other}", after))
            elif fallback:
                chosen[leg] = (other, fallback)
                if self.req.transport:
                    self.notes.append(say("transport_switched", self.lang,
                                          wanted=TRANSPORT_NAMES[preferred][self.lang], used=TRANSPORT_NAMES[other][self.lang]))
            else:
                return self.say("no_transport", day=day.isoformat(), origin=self.city_name(a), destination=self.city_name(b))

        hotel_args = self.hotel_args(dest, start, end)
        if isinstance(hotel_args, Turn):
            return hotel_args
        sight_calls = self.sight_calls(dest, nights)
        for poi_id in self.u.wanted_pois:
            poi = self.p.gazetteer.poi(poi_id)
            if poi is not None and self.outcome("wanted") is None:
                sight_calls.append(Call("poi_search", {"query": poi.name_zh, "city": dest.name_zh}, "wanted"))
        calls += sight_calls
        if hotel_args is not None and not sight_calls:
            calls += self.hotel_calls(hotel_args)
        if calls:
            return Turn(calls=calls)
        return self.finish(origin, dest, start, nights, chosen)

    def sight_calls(self, dest: City, nights: int) -> list[Call]:
        """Sights by kind, in the city: first "景点"; when that finds too few for the days, the other kinds."""
        first, *more = SIGHT_KINDS
        if self.outcome(first[0]) is None:
            return [Call("poi_search", {"query": first[1], "city": dest.name_zh}, first[0])]
        if len(self.sights()) >= SIGHTS_PER_DAY * (nights + 1):
            return []
        return [Call("poi_search", {"query": kind, "city": dest.name_zh}, purpose)
                for purpose, kind in more if self.outcome(purpose) is None]

    def sights(self) -> list[Sight]:
        """Every sight the searches found, each once, taking the kinds in turn (a landmark, a museum, a park, ...)."""
        lists = [worth_a_visit(read_sights(o.json())) for purpose, _ in SIGHT_KINDS if (o := self.outcome(purpose))]
        seen: set[str] = set()
        out: list[Sight] = []
        for rank in range(max((len(x) for x in lists), default=0)):
            for found in lists:
                if rank < len(found) and found[rank].poi_id not in seen:
                    seen.add(found[rank].poi_id)
                    out.append(found[rank])
        return out

    def hotel_calls(self, args: dict[str, Any]) -> list[Call]:
        """The hotel search: near the sights (or the place asked for); anywhere in the city if that finds none."""
        near = self.outcome("hotel")
        if near is None:
            if "landmark" not in args and (centre := self.centre_sight()) is not None:
                args = {**args, "landmark": centre.name, "distance_range": HOTEL_NEAR_M}
            return [Call("hotel_search", args, "hotel")]
        if read_hotels(near.json()) or "landmark" not in near.arguments or self.outcome("hotel_any") is not None:
            return []
        return [Call("hotel_search", {k: v for k, v in near.arguments.items() if k not in ("landmark", "distance_range")},
                     "hotel_any")]

    def centre_sight(self) -> Sight | None:
        """The sight nearest the middle of the sights found (a far-out one does not pull the hotel away)."""
        placed = [s for s in self.wanted_first(self.sights()) if s.lat is not None and s.lon is not None]
        if not placed:
            return None
        lat = statistics.median(s.lat for s in placed if s.lat is not None)
        lon = statistics.median(s.lon for s in placed if s.lon is not None)
        return min(placed, key=lambda s: haversine_km(lat, lon, s.lat or lat, s.lon or lon))

    def hotel_args(self, dest: City, start: date, end: date) -> dict[str, Any] | Turn | None:
        """The hotel search's arguments (None for a day trip), or the turn that first finds the
        landmark the person wants to stay near."""
        if (end - start).days < 1:
            return None
        args: dict[str, Any] = {"city_name": dest.name_zh, "checkin_date": start.isoformat(), "checkout_date": end.isoformat()}
        if self.req.breakfast is not None:
            args["has_breakfast"] = 1 if self.req.breakfast else 0
        landmark = self.req.landmark
        if landmark:
            found = self.outcome("landmark")
            if found is None:
                return Turn(calls=[Call("poi_search", {"query": landmark, "city": dest.name_zh}, "landmark")])
            sights = [s for s in read_sights(found.json()) if landmark.lower() in s.name.lower()]
            if len(sights) > 1 and not self.u.landmark_choice and self.asked("landmark") == 0:
                options = [s.name for s in sights]
                return self.ask("landmark", say("ask_landmark", self.lang, city=self.city_name(dest), name=landmark), options)
            if sights:
                args["landmark"] = next((s.name for s in sights if s.name == (self.u.landmark_choice or "")), sights[0].name)
                args["distance_range"] = 3000
        return args

    # -- the plan ----------------------------------------------------------------------------
    def finish(self, origin: City, dest: City, start: date, nights: int, chosen: dict[str, tuple[str, list[Ride]]]) -> Turn:
        cheapest = bool(self.req.cheaper) or False
        travellers = self.req.travellers or 1
        out_rides = chosen["out"][1]
        out, out_backup = pick_ride(out_rides, after=self.req.depart_after, before=self.req.depart_before,
                                    cheapest=cheapest, seat=self.req.seat)
        back = back_backup = None
        if "back" in chosen:
            back, back_backup = pick_ride(chosen["back"][1], after=self.return_after(nights), before=None,
                                          cheapest=cheapest, seat=self.req.seat)
        if out is None:
            return self.say("no_transport", day=start.isoformat(), origin=self.city_name(origin), destination=self.city_name(dest))
        hotel = hotel_backup = None
        hotels = [h for purpose in ("hotel", "hotel_any") if (o := self.outcome(purpose)) for h in read_hotels(o.json())]
        budget_night = None
        if self.req.budget and nights:
            budget_night = self.req.budget * 0.4 / nights / max(1, (travellers + 1) // 2)
        if nights >= 1:
            hotel, hotel_backup = pick_hotel(hotels, cheapest=cheapest, stars=self.req.stars,
                                             breakfast=self.req.breakfast, budget_per_night=budget_night)
        sights = self.wanted_first(self.sights())
        choice = Choice(out=out, back=back, hotel=hotel)
        alternatives = self.alternatives(out_backup, back_backup, hotel_backup)
        notes = list(self.notes)
        if nights >= 1 and hotel is None:
            notes.append("沙盒里没有找到符合条件的酒店。" if self.lang == "zh" else "No hotel matched in the sandbox.")
        name_a, name_b = self.city_name(origin), self.city_name(dest)
        plan = build_plan(lang=self.lang, origin=name_a, destination=name_b, start=start, nights=nights,
                          travellers=travellers, choice=choice, sights=sights, seat=self.req.seat,
                          cheapest=cheapest, alternatives=alternatives, notes=notes, sources=self.sources())
        if self.req.budget:
            key = "over_budget" if plan.total_cost > self.req.budget else "within_budget"
            plan.notes.insert(0, say(key, self.lang, total=f"{plan.total_cost:g}", budget=f"{self.req.budget:g}"))
        summary = summary_text(plan, self.lang)
        return Turn(calls=[Call("submit_plan", {"summary": summary, "plan": plan.model_dump()}, "plan")])

    def sources(self) -> frozenset[str]:
        """Where the answers this plan is built on came from (each tool answer names its source)."""
        return frozenset(src for o in self.t.phase if o.name != "current_location" and (src := source_of(o.json())))

    def wanted_first(self, sights: list[Sight]) -> list[Sight]:
        """The sights the person named (as the tool returned them) before the rest."""
        named = self.outcome("wanted")
        found = read_sights(named.json()) if named else []
        wanted = [s for s in found + sights if s.poi_id in self.u.wanted_pois][:1]
        return wanted + [s for s in sights if s.poi_id not in self.u.wanted_pois]

    def alternatives(self, out_backup: Ride | None, back_backup: Ride | None, hotel_backup: Any) -> list[str]:
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


