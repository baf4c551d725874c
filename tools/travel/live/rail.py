"""Trains from 12306's public left-ticket query (余票查询), direct and with one change."""

from __future__ import annotations

import asyncio
from datetime import date, datetime

import httpx

from tools.errors import ProviderError
from tools.travel.geo import City, Gazetteer, haversine_km
from tools.travel.live.http import RAIL12306_BASE_URL, body, join, parse, send, server_error
from tools.travel.live.rail_parse import LABEL, PROVIDER, LeftTicketAnswer, codes_of, parse_row
from tools.travel.live.telecodes import TELECODES
from tools.travel.models import Found, Train, TrainTransfer
from tools.travel.provider import TrainProvider, TrainQuery

NOTE = ("live data from 12306's left-ticket query; seats left 20 means 有 (20 or more); this query gives no "
        "intermediate stops or distance (stops empty, distance_km 0)")
_HEADERS = {"X-Requested-With": "XMLHttpRequest", "Accept": "application/json, text/javascript, */*; q=0.01"}


class Rail12306:
    """`outside` (the sandbox) answers for stations 12306 has no telecode for in our table."""

    def __init__(self, client: httpx.AsyncClient, gazetteer: Gazetteer, *, base_url: str = RAIL12306_BASE_URL,
                 outside: TrainProvider | None = None, query_path: str = "leftTicket/query") -> None:
        self._http = client
        self._gaz = gazetteer
        self._base = base_url
        self._outside = outside
        self._path = query_path
        self._session = False  # the init page has set its cookies

    async def _start(self) -> None:
        if self._session:
            return
        reply = await send(self._http, "GET", join(self._base, "/otn/leftTicket/init"), provider=PROVIDER, label=LABEL)
        if reply.status >= 500:
            raise server_error(reply, provider=PROVIDER, label=LABEL)
        self._session = True

    async def query(self, day: date, from_code: str, to_code: str) -> tuple[list[str], dict[str, str]]:
        """Rows of data.result and the telecode -> station name map."""
        await self._start()
        path = self._path
        for _ in range(2):  # 12306 may name another query path in c_url; follow it once
            reply = await send(
                self._http, "GET", join(self._base, f"/otn/{path}"), provider=PROVIDER, label=LABEL,
                headers={**_HEADERS, "Referer": join(self._base, "/otn/leftTicket/init")},
                params={"leftTicketDTO.train_date": day.isoformat(), "leftTicketDTO.from_station": from_code,
                        "leftTicketDTO.to_station": to_code, "purpose_codes": "ADULT"},
            )
            if reply.status >= 500:
                raise server_error(reply, provider=PROVIDER, label=LABEL)
            if reply.status in (302, 403, 429) or reply.text.lstrip().startswith("<"):
                self._session = False
                raise ProviderError(f"{LABEL} turned the query away (HTTP {reply.status}, a web page instead of data); "
                                    "it limits automated queries, try again in a few minutes or use flight_search",
                                    provider=PROVIDER, status_code=reply.status, retryable=True)
            answer = parse(LeftTicketAnswer, body(reply, provider=PROVIDER, label=LABEL), provider=PROVIDER, label=LABEL)
            if answer.c_url and not answer.status:
                path = answer.c_url.removeprefix("/otn/").lstrip("/")
                continue
            if not answer.status or answer.data is None:
                said = "; ".join(answer.messages) if isinstance(answer.messages, list) else answer.messages
                raise ProviderError(f"{LABEL} refused the query: {said or 'no reason given'}; check the date "
                                    "(tickets sell up to 15 days ahead) and the stations", provider=PROVIDER,
                                    status_code=reply.status)
            return answer.data.result, answer.data.map
        raise ProviderError(f"{LABEL} kept redirecting the query; try again later", provider=PROVIDER, retryable=True)

    def _city_names(self, names: dict[str, str]) -> dict[str, str]:
        out = {}
        for name in names.values():
            station = self._gaz.station(name)
            if station is not None:
                out[name] = self._gaz.city(station.city_id).name_zh
        return out

    async def _direct(self, day: date, froms: list[str], tos: list[str], ask: tuple[str, str]) -> list[Train]:
        """One query (12306 answers for every station of the two cities) filtered to the stations asked."""
        rows, names = await self.query(day, *ask)
        city_of = self._city_names(names)
        wanted_from, wanted_to = set(froms), set(tos)
        trains = []
        for row in rows:
            a, b = codes_of(row)
            if a in wanted_from and b in wanted_to and (t := parse_row(row, day, names, city_of)) is not None:
                trains.append(t)
        trains.sort(key=lambda t: (t.depart, t.number))
        return trains

    @staticmethod
    def _codes(stations: tuple[str, ...]) -> list[str]:
        return [TELECODES[s] for s in stations if s in TELECODES]

    async def trains(self, q: TrainQuery) -> Found[Train]:
        froms, tos = self._codes(q.from_stations), self._codes(q.to_stations)
        if not froms or not tos:
            return await self._not_covered(q)
        return Found(await self._direct(q.day, froms, tos, self._ask(q.origin, q.destination)), PROVIDER, NOTE)

    def _ask(self, a: City, b: City) -> tuple[str, str]:
        """The telecodes a query names: each city's main station (the first one that has a code)."""
        return self._codes(a.stations)[0], self._codes(b.stations)[0]

    async def _not_covered(self, q: TrainQuery) -> Found[Train]:
        if self._outside is None:
            raise ProviderError(f"{LABEL} cannot be asked about {q.origin.name_zh}->{q.destination.name_zh}: a station "
                                "has no 12306 code in this bot's table; try another station", provider=PROVIDER)
        return await self._outside.trains(q)

    def _hubs(self, q: TrainQuery, count: int = 3) -> list[City]:
        o, d = q.origin, q.destination
        direct = haversine_km(o.lat, o.lon, d.lat, d.lon)
        cands = []
        for c in self._gaz.cities:
            if c.id in (o.id, d.id) or c.tier > 2 or not self._codes(c.stations):
                continue
            via = haversine_km(o.lat, o.lon, c.lat, c.lon) + haversine_km(c.lat, c.lon, d.lat, d.lon)
            if via <= direct * 1.3 + 100:
                cands.append((via, c.id, c))
        cands.sort(key=lambda t: (t[0], t[1]))
        return [c for _, _, c in cands[:count]]

    async def train_transfers(self, q: TrainQuery, middle: City | None, limit: int) -> Found[TrainTransfer]:
        froms, tos = self._codes(q.from_stations), self._codes(q.to_stations)
        hubs = [middle] if middle is not None else self._hubs(q)
        hubs = [h for h in hubs if self._codes(h.stations)]
        if not froms or not tos or not hubs:
            if self._outside is None:
                raise ProviderError(f"{LABEL}: no 12306 station code for one of the stations; try another station",
                                    provider=PROVIDER)
            return await self._outside.train_transfers(q, middle, limit)

        async def via(hub: City) -> list[TrainTransfer]:
            codes = self._codes(hub.stations)
            first, second = await asyncio.gather(self._direct(q.day, froms, codes, self._ask(q.origin, hub)),
                                                 self._direct(q.day, codes, tos, self._ask(hub, q.destination)))
            return pair(first, second)

        found = await asyncio.gather(*(via(h) for h in hubs))
        options = sorted((t for group in found for t in group), key=lambda t: (t.total_min, t.legs[0].depart, t.id))
        out: list[TrainTransfer] = []
        used: set[str] = set()
        for t in options:
            if t.legs[0].number not in used and len(out) < limit:
                used.add(t.legs[0].number)
                out.append(t)
        return Found(out, PROVIDER, NOTE + "; transfers pair same-day trains with 20 min (same station) or 70 min "
                     "(across town) to change")


def pair(first: list[Train], second: list[Train]) -> list[TrainTransfer]:
    """For each first leg, the earliest onward train that leaves it time to change (at most 6 h wait)."""
    out = []
    for a in first:
        arrive = datetime.strptime(a.arrive, "%Y-%m-%d %H:%M")
        best: tuple[int, Train] | None = None
        for b in second:
            if b.number == a.number:
                continue
            wait = int((datetime.strptime(b.depart, "%Y-%m-%d %H:%M") - arrive).total_seconds() // 60)
            need = 20 if b.from_station == a.to_station else 70
            if need <= wait <= 360 and (best is None or wait < best[0]):
                best = (wait, b)
        if best is not None:
            wait, b = best
            start = datetime.strptime(a.depart, "%Y-%m-%d %H:%M")
            total = int((datetime.strptime(b.arrive, "%Y-%m-%d %H:%M") - start).total_seconds() // 60)
            station = a.to_station if a.to_station == b.from_station else f"{a.to_station}->{b.from_station}"
            out.append(TrainTransfer(id=f"{a.number}+{b.number}", middle_station=station, wait_min=wait,
                                     total_min=total, legs=[a, b]))
    return out
