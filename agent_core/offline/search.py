"""The offline planner's searches: the rides there and back, the sights, the hotel near them.

Each search is a tool call whose id carries its purpose ("out_train", "hotel", "sights_museum");
the next decision finds its answer by that purpose (Context.outcome), so a search is made once
per phase and a resumed run does not repeat it.
"""

from __future__ import annotations

import statistics
from datetime import date
from typing import Any

from agent_core.offline.context import Context
from agent_core.offline.options import (
    Ride,
    Sight,
    read_flights,
    read_hotels,
    read_sights,
    read_trains,
    worth_a_visit,
)
from agent_core.offline.request import LEVEL_NAMES
from agent_core.offline.texts import say
from agent_core.offline.turns import Call, Turn
from tools.travel.geo import City, haversine_km

TRAIN_MAX_KM = 1200  # beyond this, a flight is the sensible default
HOTEL_NEAR_M = 3000  # how far from the sights a hotel may be, before searching the whole city
SIGHTS_PER_DAY = 3
# poi_search queries for sights, by kind; the first is always searched, the rest when it finds too few
SIGHT_KINDS = (("sights", "景点"), ("sights_landmark", "地标"), ("sights_museum", "博物馆"),
               ("sights_park", "公园"), ("sights_street", "街区"), ("sights_temple", "寺庙"))


class Searches(Context):
    def return_after(self, nights: int) -> str:
        """When the person said to come back; else leave the last afternoon for sights (a day
        trip goes home in the evening)."""
        return self.req.return_after or ("17:00" if nights == 0 else "15:00")

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
        """The rides a search found (less those a review found wrong); None while not searched.
        Errors count as nothing found."""
        o = self.outcome(purpose)
        if o is None:
            return None
        data = o.json()
        found = read_trains(data) if purpose.endswith("train") else read_flights(data)
        return [r for r in found if r.number not in self.avoid_rides] or found

    def sight_calls(self, dest: City, nights: int) -> list[Call]:
        """Sights by kind, in the city: first "景点"; when that finds too few for the days, the other kinds."""
        first, *more = SIGHT_KINDS
        if self.outcome(first[0]) is None:
            return [Call("poi_search", {"query": first[1], "city": dest.name_zh}, first[0])]
        if len(self.sights()) >= SIGHTS_PER_DAY * (nights + 1):
            return []
        return [Call("poi_search", {"query": kind, "city": dest.name_zh}, purpose)
                for purpose, kind in more if self.outcome(purpose) is None]

    def wanted_calls(self, dest: City) -> list[Call]:
        """A search for each sight the person named as the place to go."""
        calls = []
        for poi_id in self.wanted_pois:
            poi = self.p.gazetteer.poi(poi_id)
            if poi is not None and self.outcome("wanted") is None:
                calls.append(Call("poi_search", {"query": poi.name_zh, "city": dest.name_zh}, "wanted"))
        return calls

    def sights(self) -> list[Sight]:
        """Every sight the searches found, each once, taking the kinds in turn (a landmark, a museum, a park, ...)."""
        lists = [worth_a_visit(read_sights(o.json())) for purpose, _ in SIGHT_KINDS if (o := self.outcome(purpose))]
        seen: set[str] = set(self.avoid_pois)
        out: list[Sight] = []
        for rank in range(max((len(x) for x in lists), default=0)):
            for found in lists:
                if rank < len(found) and found[rank].poi_id not in seen:
                    seen.add(found[rank].poi_id)
                    out.append(found[rank])
        return out

    def wanted_first(self, sights: list[Sight]) -> list[Sight]:
        """The sights the person named (as the tool returned them) before the rest."""
        named = self.outcome("wanted")
        found = read_sights(named.json()) if named else []
        wanted = [s for s in found + sights if s.poi_id in self.wanted_pois][:1]
        return wanted + [s for s in sights if s.poi_id not in self.wanted_pois]

    def hotel_calls(self, args: dict[str, Any]) -> list[Call]:
        """The hotel search: near the sights (or the place asked for); anywhere in the city if that finds none."""
        near = self.outcome("hotel")
        if near is None:
            if "landmark" not in args and (centre := self.centre_sight()) is not None:
                args = {**args, "landmark": centre.name, "distance_range": HOTEL_NEAR_M}
            return [Call("hotel_search", args, "hotel")]
        if self.hotels_found(["hotel"]) or "landmark" not in near.arguments or self.outcome("hotel_any") is not None:
            return []
        return [Call("hotel_search", {k: v for k, v in near.arguments.items() if k not in ("landmark", "distance_range")},
                     "hotel_any")]

    def hotels_found(self, purposes: list[str]) -> list[Any]:
        found = [h for purpose in purposes if (o := self.outcome(purpose)) for h in read_hotels(o.json())]
        return [h for h in found if h.hotel_id not in self.avoid_hotels] or found

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
        landmark the person wants to stay near. A hotel class asked for is searched as such."""
        if (end - start).days < 1 or self.req.home_stay:  # a day trip, or a bed at home
            return None
        args: dict[str, Any] = {"city_name": dest.name_zh, "checkin_date": start.isoformat(), "checkout_date": end.isoformat()}
        if self.req.breakfast is not None:
            args["has_breakfast"] = 1 if self.req.breakfast else 0
        if self.req.stars in LEVEL_NAMES:
            args["level_name"] = LEVEL_NAMES[self.req.stars]
        landmark = self.req.landmark
        if landmark:
            found = self.outcome("landmark")
            if found is None:
                return Turn(calls=[Call("poi_search", {"query": landmark, "city": dest.name_zh}, "landmark")])
            sights = [s for s in read_sights(found.json()) if landmark.lower() in s.name.lower()]
            choice = self.s.landmark_choice
            if len(sights) > 1 and not choice and self.asked("landmark") == 0:
                options = [s.name for s in sights]
                return self.ask("landmark", say("ask_landmark", self.lang, city=self.city_name(dest), name=landmark), options)
            if sights:
                args["landmark"] = next((s.name for s in sights if s.name == (choice or "")), sights[0].name)
                args["distance_range"] = HOTEL_NEAR_M
        return args

    def searches(self, dest: City, start: date, end: date, nights: int) -> list[Call] | Turn:
        """What is left to search at the destination: sights first (the hotel is searched near
        them), then the hotel; a turn when the landmark to stay near must be found or asked."""
        hotel_args = self.hotel_args(dest, start, end)
        if isinstance(hotel_args, Turn):
            return hotel_args
        calls = ([] if self.req.home_stay else self.sight_calls(dest, nights)) + self.wanted_calls(dest)
        if hotel_args is not None and not calls:
            calls += self.hotel_calls(hotel_args)
        return calls
