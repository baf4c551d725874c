"""Amap (高德) Web Service v3: POI text and around search, driving, transit and walking routes."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

import httpx

from tools.errors import ProviderError
from tools.travel.geo import City, Gazetteer, Place, haversine_km
from tools.travel.live import amap_models as m
from tools.travel.live.coords import amap_location, from_gcj
from tools.travel.live.http import (
    AMAP_BASE_URL,
    body,
    join,
    parse,
    refuse_redirect,
    send,
    server_error,
)
from tools.travel.models import Found, PlaceHit, Route, RouteMode
from tools.travel.provider import PlaceProvider, RouteProvider

E = TypeVar("E", bound=m.Envelope)

PROVIDER = "amap"
LABEL = "Amap (高德地图)"
NOTE = "live data from Amap (高德地图); opening hours and prices as listed there"
COVERED = ("CN", "HK", "MO")


def _num(text: str, default: float = 0.0) -> float:
    try:
        return float(text)
    except ValueError:
        return default


def _price(text: str) -> float | None:
    """A fare Amap gave, or None for none ("", [] read as "", "--", garbage)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value >= 0 else None


class AmapProvider:
    """Places and routes from Amap; cities outside China go to `outside` (the sandbox) when given."""

    def __init__(self, client: httpx.AsyncClient, key: str, gazetteer: Gazetteer, *, base_url: str = AMAP_BASE_URL,
                 outside_places: PlaceProvider | None = None, outside_routes: RouteProvider | None = None) -> None:
        self._http = client
        self._key = key
        self._gaz = gazetteer
        self._base = base_url
        self._outside_places = outside_places
        self._outside_routes = outside_routes

    async def _get(self, path: str, params: dict[str, str], model: type[E]) -> E:
        reply = await send(self._http, "GET", join(self._base, path), provider=PROVIDER, label=LABEL,
                           params={"key": self._key, "output": "JSON", **params})
        refuse_redirect(reply, provider=PROVIDER, label=LABEL)
        if reply.status >= 500:
            raise server_error(reply, provider=PROVIDER, label=LABEL)
        if reply.status != 200:
            raise ProviderError(f"{LABEL} refused the request (HTTP {reply.status})", provider=PROVIDER,
                                status_code=reply.status)
        data = body(reply, provider=PROVIDER, label=LABEL)
        env = parse(m.Envelope, data, provider=PROVIDER, label=LABEL)
        if env.status != "1":
            meaning, retryable = m.ERRORS.get(env.infocode, (f"Amap said {env.info or 'error'} ({env.infocode})", False))
            raise ProviderError(f"{LABEL}: {meaning}", provider=PROVIDER, status_code=reply.status, retryable=retryable)
        return parse(model, data, provider=PROVIDER, label=LABEL)

    def _covered(self, city_id: str | None) -> bool:
        return city_id is None or self._gaz.city(city_id).country_code in COVERED

    def _hit(self, p: m.Poi, city: City | None) -> PlaceHit:
        lon_s, _, lat_s = p.location.partition(",")
        lat, lon = from_gcj(_num(lat_s), _num(lon_s))
        biz = p.biz_ext if isinstance(p.biz_ext, m.BizExt) else m.BizExt()
        sight = p.typecode.startswith("11")  # 风景名胜: the listed cost is the ticket
        main_type = p.type.split("|")[0]  # a place of several types lists them joined by "|", its own first
        return PlaceHit(
            poi_id=p.id, name=p.name, city=p.cityname or (city.name_zh if city else ""),
            category=[t for t in main_type.split(";") if t][-1] if main_type else "",
            lat=lat, lon=lon, opening_hours=biz.opentime2 or biz.open_time,
            ticket_price=_price(biz.cost) if sight else None,
            currency="CNY" if sight and _price(biz.cost) is not None else None,
            address=f"{p.adname}{p.address}" if p.adname and not p.address.startswith(p.adname) else p.address,
            distance_m=int(_num(p.distance)) if p.distance else None,
        )

    async def places(self, query: str, city: City | None, limit: int) -> Found[PlaceHit]:
        if city is not None and not self._covered(city.id) and self._outside_places is not None:
            return await self._outside_places.places(query, city, limit)
        params = {"keywords": query, "offset": str(min(max(limit, 1), 25)), "page": "1", "extensions": "all"}
        if city is not None:
            params |= {"city": city.name_zh, "citylimit": "true"}
        answer = await self._get("/v3/place/text", params, m.PlaceAnswer)
        return Found([self._hit(p, city) for p in answer.pois[:limit]], PROVIDER, NOTE)

    async def around(self, center: Place, radius_m: int, keyword: str | None, limit: int) -> Found[PlaceHit]:
        if not self._covered(center.city_id) and self._outside_places is not None:
            return await self._outside_places.around(center, radius_m, keyword, limit)
        params = {"location": amap_location(center.lat, center.lon), "radius": str(radius_m), "sortrule": "distance",
                  "offset": str(min(max(limit, 1), 25)), "page": "1", "extensions": "all"}
        if keyword:
            params["keywords"] = keyword
        answer = await self._get("/v3/place/around", params, m.PlaceAnswer)
        city = self._gaz.city(center.city_id) if center.city_id else None
        hits = [h for h in (self._hit(p, city) for p in answer.pois) if h.poi_id != center.id]
        return Found(hits[:limit], PROVIDER, NOTE)

    async def route(self, origin: Place, destination: Place, city: City) -> Found[Route]:
        if city.country_code not in COVERED and self._outside_routes is not None:
            return await self._outside_routes.route(origin, destination, city)
        ends = {"origin": amap_location(origin.lat, origin.lon),
                "destination": amap_location(destination.lat, destination.lon)}
        straight = haversine_km(origin.lat, origin.lon, destination.lat, destination.lon)
        calls: list[Any] = [
            # the taxi fare (route.taxi_cost) is only in the full answer: extensions=all
            self._get("/v3/direction/driving", {**ends, "extensions": "all", "strategy": "0"}, m.DriveAnswer),
            self._get("/v3/direction/transit/integrated", {**ends, "city": city.name_zh, "cityd": city.name_zh,
                                                           "extensions": "base", "strategy": "0"}, m.TransitAnswer),
        ]
        if straight <= 3:
            calls.append(self._get("/v3/direction/walking", ends, m.WalkAnswer))
        drive, *others = await asyncio.gather(*calls, return_exceptions=True)
        if isinstance(drive, BaseException):
            raise drive
        modes = self._drive_modes(drive)
        notes, caveats = [NOTE], []
        if not any(m.mode == "taxi" for m in modes):
            caveats.append("Amap gave no taxi fare for this route; the taxi cost is unknown")
        for label, answer in zip(("transit", "walking"), others, strict=False):
            if isinstance(answer, ProviderError):
                notes.append(f"{label} route unavailable: {answer.message}")
                caveats.append(f"no {label} route from Amap: {answer.message}")
            elif isinstance(answer, BaseException):
                raise answer
            elif isinstance(answer, m.TransitAnswer):
                transit = self._transit_modes(answer)
                modes += transit
                caveats += [f"Amap gave no fare for the transit route ({t.note})" for t in transit if "no fare" in t.note]
            elif isinstance(answer, m.WalkAnswer) and isinstance(answer.route, m.WalkRoute) and answer.route.paths:
                w = answer.route.paths[0]
                modes.append(RouteMode(mode="walk", distance_km=round(_num(w.distance) / 1000, 1),
                                       duration_min=max(1, round(_num(w.duration) / 60)), cost=0.0))
        route = Route(origin=origin.name, destination=destination.name, city=city.name_zh,
                      straight_km=round(straight, 2), modes=modes)
        return Found([route], PROVIDER, "; ".join(notes), caveats=caveats)

    @staticmethod
    def _drive_modes(answer: m.DriveAnswer) -> list[RouteMode]:
        if not isinstance(answer.route, m.DriveRoute) or not answer.route.paths:
            return []
        path = answer.route.paths[0]
        km, minutes = round(_num(path.distance) / 1000, 1), max(1, round(_num(path.duration) / 60))
        modes = []
        taxi = _price(answer.route.taxi_cost)
        if taxi is not None:  # real answers carry it as a string, sometimes "39.76049999999999"
            modes.append(RouteMode(mode="taxi", distance_km=km, duration_min=minutes, cost=round(taxi),
                                   note="Amap's taxi fare estimate at current traffic"))
        modes.append(RouteMode(mode="drive", distance_km=km, duration_min=minutes, cost=_num(path.tolls),
                               note="cost is road tolls; fuel and parking extra"))
        return modes

    @staticmethod
    def _transit_modes(answer: m.TransitAnswer) -> list[RouteMode]:
        if not isinstance(answer.route, m.TransitRoute) or not answer.route.transits:
            return []
        t = answer.route.transits[0]
        lines = [s.bus.buslines[0].name for s in t.segments if isinstance(s.bus, m.Bus) and s.bus.buslines]
        # a transit's own distance when given, else its rides plus its walking (route.distance is the walk
        # between the two ends, not the trip)
        rides = sum(_num(b.distance) for s in t.segments if isinstance(s.bus, m.Bus) for b in s.bus.buslines[:1])
        km = _num(t.distance) or (rides + _num(t.walking_distance) if rides else _num(answer.route.distance))
        fare = _price(t.cost)
        note = " -> ".join(lines) + f"; walking {round(_num(t.walking_distance))} m" + ("" if fare is not None else "; no fare given")
        return [RouteMode(mode="transit", distance_km=round(km / 1000, 1), duration_min=max(1, round(_num(t.duration) / 60)),
                          cost=fare or 0.0, note=note)]
