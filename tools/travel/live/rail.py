"""Trains from 12306's public left-ticket query (余票查询), direct and with one change.

What 12306 does that this provider handles (each tested on a captured answer):
  - it sells 15 days ahead; a later date is answered here, before asking, as "not on sale until";
  - it renames its query path (leftTicket/query -> queryG, queryZ, ...) and says so with a JSON
    `c_url`, sometimes inside an HTTP redirect; the new path is followed and kept by this
    provider instance for the rest of the process, so later searches cost one request;
  - a redirect to its error page, an HTML page, 403/429: it is turning automated queries away;
  - one query answers for every station of the two cities; all of them are shown, a station
    missing from the station table by its code, with a caveat;
  - trains not on sale yet are shown with the time their sale opens.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import date, datetime, timedelta
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import httpx

from tools.errors import ProviderError
from tools.travel.geo import City, Gazetteer, haversine_km
from tools.travel.live.http import RAIL12306_BASE_URL, Reply, body, join, parse, send, server_error
from tools.travel.live.rail_parse import (
    LABEL,
    PROVIDER,
    SALE_DAYS,
    LeftTicketAnswer,
    Skipped,
    codes_of,
    parse_row,
)
from tools.travel.live.telecodes import StationTable
from tools.travel.models import Found, Train, TrainTransfer
from tools.travel.provider import TrainProvider, TrainQuery

NOTE = ("live data from 12306's left-ticket query; seats left 20 means 有 (20 or more); this query gives no "
        "intermediate stops or distance (stops empty, distance_km 0)")
SHANGHAI = ZoneInfo("Asia/Shanghai")
MAX_HOPS = 4  # query path changes followed per search before calling it a loop
_HEADERS = {"X-Requested-With": "XMLHttpRequest", "Accept": "application/json, text/javascript, */*; q=0.01"}
_REDIRECTS = (301, 302, 303, 307, 308)


class Rail12306:
    """`outside` (the sandbox) answers for cities 12306 has no station for."""

    def __init__(self, client: httpx.AsyncClient, gazetteer: Gazetteer, *, stations: StationTable | None = None,
                 base_url: str = RAIL12306_BASE_URL, outside: TrainProvider | None = None,
                 query_path: str = "leftTicket/query", clock: Callable[[], datetime] | None = None) -> None:
        self._http = client
        self._gaz = gazetteer
        self._stations = stations or StationTable.load()
        self._base = base_url
        self._outside = outside
        self._path = query_path  # learned from c_url and redirects; kept for this provider's life
        self._clock = clock or (lambda: datetime.now(SHANGHAI))
        self._session = False  # the init page has set its cookies

    @property
    def query_path(self) -> str:
        return self._path

    def sale_window(self) -> tuple[date, date]:
        """Today and the last day 12306 sells tickets for (China time)."""
        today = self._clock().astimezone(SHANGHAI).date()
        return today, today + timedelta(days=SALE_DAYS - 1)

    async def _start(self) -> None:
        if self._session:
            return
        reply = await send(self._http, "GET", join(self._base, "/otn/leftTicket/init"), provider=PROVIDER, label=LABEL)
        if reply.status >= 500:
            raise server_error(reply, provider=PROVIDER, label=LABEL)
        self._session = True

    @staticmethod
    def _next_path(reply: Reply) -> str | None:
        """The query path 12306 points to: a JSON c_url (on any status) or a redirect to another query path."""
        try:
            data = reply.json()
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("c_url"), str) and data["c_url"].strip():
            return data["c_url"].strip().lstrip("/").removeprefix("otn/")
        location = urlsplit(reply.headers.get("location", "")).path
        if reply.status in _REDIRECTS and "/otn/leftTicket/query" in location:
            return location.split("/otn/", 1)[1]
        return None

    async def query(self, day: date, from_code: str, to_code: str) -> tuple[list[str], dict[str, str]]:
        """Rows of data.result and the telecode -> station name map."""
        await self._start()
        path, tried = self._path, []
        for _ in range(MAX_HOPS):
            tried.append(path)
            reply = await send(
                self._http, "GET", join(self._base, f"/otn/{path}"), provider=PROVIDER, label=LABEL,
                headers={**_HEADERS, "Referer": join(self._base, "/otn/leftTicket/init")},
                params={"leftTicketDTO.train_date": day.isoformat(), "leftTicketDTO.from_station": from_code,
                        "leftTicketDTO.to_station": to_code, "purpose_codes": "ADULT"},
            )
            if reply.status >= 500:
                raise server_error(reply, provider=PROVIDER, label=LABEL)
            nxt = self._next_path(reply)
            if nxt is not None:
                if nxt in tried:
                    raise ProviderError(f"{LABEL} kept sending the query around in a loop ({' -> '.join([*tried, nxt])}); "
                                        "it is not answering train queries properly now; use flight_search or try "
                                        "train_search later", provider=PROVIDER, status_code=reply.status)
                path = nxt
                continue
            if reply.status in (*_REDIRECTS, 403, 429) or reply.text.lstrip().startswith("<"):
                self._session = False
                where = urlsplit(reply.headers.get("location", "")).path
                raise ProviderError(f"{LABEL} turned the query away (HTTP {reply.status}"
                                    f"{', a redirect to ' + where if where else ', a web page instead of data'}); "
                                    f"{day} is inside its sale window, so it is limiting automated queries: try again "
                                    "in a few minutes or use flight_search", provider=PROVIDER,
                                    status_code=reply.status, retryable=True)
            answer = parse(LeftTicketAnswer, body(reply, provider=PROVIDER, label=LABEL), provider=PROVIDER, label=LABEL)
            if not answer.status or answer.data is None:
                said = "; ".join(answer.messages) if isinstance(answer.messages, list) else answer.messages
                hint = (f"; tickets for {day} go on sale on {day - timedelta(days=SALE_DAYS - 1)}" if "预售" in said
                        else "; check the stations and the date, or use flight_search")
                raise ProviderError(f"{LABEL} refused the query: {said or 'no reason given'}{hint}", provider=PROVIDER,
                                    status_code=reply.status)
            self._path = path
            return answer.data.result, answer.data.map
        raise ProviderError(f"{LABEL} changed its query path {MAX_HOPS} times in one search ({' -> '.join(tried)}); "
                            "try again later", provider=PROVIDER, retryable=True)

    async def _direct(self, day: date, ask: tuple[str, str], want_from: set[str] | None,
                      want_to: set[str] | None) -> tuple[list[Train], list[str]]:
        """One query; 12306 answers for every station of the two cities. All of them are kept unless
        a station was named exactly (want_*)."""
        rows, names = await self.query(day, *ask)
        trains: list[Train] = []
        skipped: list[Skipped] = []
        for row in rows:
            a, b = codes_of(row)
            if (want_from and a not in want_from) or (want_to and b not in want_to):
                continue
            got = parse_row(row, day, names, self._stations)
            if isinstance(got, Skipped):
                skipped.append(got)
            else:
                trains.append(got)
        trains.sort(key=lambda t: (t.depart, t.number))
        unknown = {c for row in rows for c in codes_of(row) if c not in names and self._stations.by_code(c) is None}
        return trains, self._caveats(day, trains, skipped, unknown)

    @staticmethod
    def _caveats(day: date, trains: list[Train], skipped: list[Skipped], unknown: set[str]) -> list[str]:
        out = []
        waiting = [t for t in trains if t.sale_opens]
        if waiting:
            first = min(t.sale_opens or "" for t in waiting)
            out.append(f"{len(waiting)} of {len(trains)} trains on {day} are not on sale yet (sales open from "
                       f"{first}); their fares are listed but seats are unknown until then")
        if unknown:
            out.append(f"12306 station codes not in the station table: {', '.join(sorted(unknown))}; those trains are shown "
                       "with the code as the station name")
        if skipped:
            shown = ", ".join(f"{s.number} ({s.reason})" for s in skipped[:5])
            out.append(f"{len(skipped)} trains do not run on {day}: {shown}")
        return out

    def _city_code(self, city: City) -> str | None:
        """The telecode a query names for a city: the station named like the city (as 12306's own page
        asks), else its first station 12306 knows."""
        for name in (city.name_zh, *city.stations):
            code = self._stations.code(name)
            if code:
                return code
        return None

    def _exact(self, names: tuple[str, ...]) -> set[str] | None:
        codes = {c for c in (self._stations.code(n) for n in names) if c}
        return codes or None

    def _not_on_sale_yet(self, day: date) -> Found[Train]:
        today, last = self.sale_window()
        opens = day - timedelta(days=SALE_DAYS - 1)
        note = (f"{LABEL} does not sell tickets for {day} yet: it sells {SALE_DAYS} days ahead (today {today} to "
                f"{last}), so tickets for {day} go on sale on {opens}. This is not an error: do not retry before "
                f"{opens}; plan with a date up to {last}, with flight_search, or say the train is still to be booked")
        return Found([], PROVIDER, note, extra={"not_on_sale_until": opens.isoformat()},
                     caveats=[f"trains on {day} are not on sale until {opens} (12306 sells {SALE_DAYS} days ahead); "
                              "no live train times or seats for that date"])

    async def trains(self, q: TrainQuery) -> Found[Train]:
        if q.day > self.sale_window()[1]:
            return self._not_on_sale_yet(q.day)
        ask = self._city_code(q.origin), self._city_code(q.destination)
        if ask[0] is None or ask[1] is None:
            return await self._not_covered(q)
        trains, caveats = await self._direct(q.day, (ask[0], ask[1]), self._exact(q.from_stations) if q.exact_from else None,
                                             self._exact(q.to_stations) if q.exact_to else None)
        return Found(trains, PROVIDER, NOTE, caveats=caveats)

    async def _not_covered(self, q: TrainQuery) -> Found[Train]:
        if self._outside is None:
            raise ProviderError(f"{LABEL} has no station for {q.origin.name_zh} or {q.destination.name_zh}; "
                                "try a nearby city or flight_search", provider=PROVIDER)
        return await self._outside.trains(q)

    def _hubs(self, q: TrainQuery, count: int = 3) -> list[City]:
        o, d = q.origin, q.destination
        direct = haversine_km(o.lat, o.lon, d.lat, d.lon)
        cands = []
        for c in self._gaz.cities:
            if c.id in (o.id, d.id) or c.tier > 2 or not c.in_mainland or self._city_code(c) is None:
                continue
            via = haversine_km(o.lat, o.lon, c.lat, c.lon) + haversine_km(c.lat, c.lon, d.lat, d.lon)
            if via <= direct * 1.3 + 100:
                cands.append((via, c.id, c))
        cands.sort(key=lambda t: (t[0], t[1]))
        return [c for _, _, c in cands[:count]]

    async def train_transfers(self, q: TrainQuery, middle: City | None, limit: int) -> Found[TrainTransfer]:
        if q.day > self.sale_window()[1]:
            ahead = self._not_on_sale_yet(q.day)
            return Found([], PROVIDER, ahead.note, extra=ahead.extra, caveats=ahead.caveats)
        start, end = self._city_code(q.origin), self._city_code(q.destination)
        hubs = [h for h in ([middle] if middle is not None else self._hubs(q)) if self._city_code(h)]
        if start is None or end is None or not hubs:
            if self._outside is None:
                raise ProviderError(f"{LABEL}: no 12306 station for one of the cities; try another station",
                                    provider=PROVIDER)
            return await self._outside.train_transfers(q, middle, limit)
        want_from = self._exact(q.from_stations) if q.exact_from else None
        want_to = self._exact(q.to_stations) if q.exact_to else None

        async def via(hub: City) -> tuple[list[TrainTransfer], list[str]]:
            code = self._city_code(hub) or ""
            (first, c1), (second, c2) = await asyncio.gather(self._direct(q.day, (start, code), want_from, None),
                                                             self._direct(q.day, (code, end), None, want_to))
            return pair(first, second), c1 + c2

        found = await asyncio.gather(*(via(h) for h in hubs))
        options = sorted((t for group, _ in found for t in group), key=lambda t: (t.total_min, t.legs[0].depart, t.id))
        out: list[TrainTransfer] = []
        used: set[str] = set()
        for t in options:
            if t.legs[0].number not in used and len(out) < limit:
                used.add(t.legs[0].number)
                out.append(t)
        caveats = list(dict.fromkeys(c for _, cs in found for c in cs))
        return Found(out, PROVIDER, NOTE + "; transfers pair same-day trains with 20 min (same station) or 70 min "
                     "(across town) to change", caveats=caveats)


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
