"""Sandbox places: the curated POIs, stations and airports, plus stable eateries around each POI."""

from __future__ import annotations

import math

from tools.travel.geo import City, Gazetteer, Place, Poi, haversine_km, normalize
from tools.travel.models import Found, PlaceHit
from tools.travel.sandbox.stable import between, pick, unit

NOTE = "sandbox data: well-known places with typical hours and prices; eateries are simulated"
_FOOD = ["面馆", "火锅店", "川菜馆", "咖啡馆", "小吃店", "茶餐厅", "本帮菜馆", "烤肉店", "饺子馆", "甜品店"]
_FOOD_WORDS = {"餐厅", "美食", "吃饭", "饭店", "餐馆", "restaurant", "food", "cafe", "咖啡", "小吃"}


class SandboxPlaces:
    def __init__(self, gazetteer: Gazetteer) -> None:
        self._gaz = gazetteer

    def _hit(self, p: Poi, distance_m: float | None = None) -> PlaceHit:
        return PlaceHit(
            poi_id=p.id, name=p.name_zh, name_en=p.name_en, city=self._gaz.city(p.city_id).name_zh,
            category=p.category, lat=p.lat, lon=p.lon, opening_hours=p.hours, visit_min=p.visit_min,
            ticket_price=p.price, currency="CNY", distance_m=None if distance_m is None else round(distance_m),
        )

    def eateries(self, parent: Poi) -> list[Poi]:
        out = []
        for k in range(1, 4):
            r_m, angle = between(80, 600, "food-r", parent.id, k), 2 * math.pi * unit("food-a", parent.id, k)
            kind = pick(_FOOD, "food", parent.id, k)
            out.append(Poi(
                id=f"{parent.id}-F{k}", city_id=parent.city_id, name_zh=f"{parent.name_zh.split('(')[0]}{kind}",
                name_en="", category="美食", lat=round(parent.lat + r_m * math.cos(angle) / 111_000, 5),
                lon=round(parent.lon + r_m * math.sin(angle) / (111_000 * math.cos(math.radians(parent.lat))), 5),
                hours="10:00-22:00", visit_min=60, price=float(round(between(40, 160, "food-p", parent.id, k))),
            ))
        return out

    def search(self, query: str, city: City | None, limit: int) -> list[PlaceHit]:
        hits = [self._hit(p) for p in self._gaz.find_places(city, query, limit=limit)]
        key = normalize(query)
        for s in self._gaz.stations:
            if (city is None or s.city_id == city.id) and key and (key in normalize(s.name + "站") or normalize(s.name) == key):
                hits.append(PlaceHit(poi_id=s.id, name=s.name + "站", city=self._gaz.city(s.city_id).name_zh,
                                     category="火车站", lat=s.lat, lon=s.lon, opening_hours="05:00-24:00"))
        for a in self._gaz.airports:
            if (city is None or a.city_id == city.id) and key and (key in normalize(a.name_zh) or key == a.iata.lower()):
                hits.append(PlaceHit(poi_id=f"APT-{a.iata}", name=a.name_zh, name_en=a.name_en,
                                     city=self._gaz.city(a.city_id).name_zh, category="机场", lat=a.lat, lon=a.lon))
        return hits[:limit]

    async def places(self, query: str, city: City | None, limit: int) -> Found[PlaceHit]:
        return Found(self.search(query, city, limit), "sandbox", NOTE)

    def nearby(self, center: Place, radius_m: int, keyword: str | None, limit: int) -> list[PlaceHit]:
        pool: list[Poi] = []
        for p, _ in self._gaz.pois_near(center.lat, center.lon, radius_m + 600):
            pool.append(p)
            pool += self.eateries(p)
        key = normalize(keyword or "")
        food = key in _FOOD_WORDS or any(w in key for w in _FOOD_WORDS)
        out = []
        for p in pool:
            d = haversine_km(center.lat, center.lon, p.lat, p.lon) * 1000
            if d > radius_m or p.id == center.id:
                continue
            if key and not (food and p.category == "美食") and key not in normalize(p.name_zh + p.category + p.name_en):
                continue
            out.append((d, p))
        out.sort(key=lambda dp: (dp[0], dp[1].id))
        return [self._hit(p, d) for d, p in out[:limit]]

    async def around(self, center: Place, radius_m: int, keyword: str | None, limit: int) -> Found[PlaceHit]:
        return Found(self.nearby(center, radius_m, keyword, limit), "sandbox", NOTE)

    def get_poi(self, poi_id: str) -> PlaceHit | None:
        """Re-query one place by id (for the Validator): curated POIs, their eateries, stations."""
        pid = poi_id.strip()
        if (p := self._gaz.poi(pid)) is not None:
            return self._hit(p)
        if "-F" in pid and (parent := self._gaz.poi(pid.rsplit("-F", 1)[0])) is not None:
            return next((self._hit(e) for e in self.eateries(parent) if e.id == pid), None)
        if pid.startswith("STA-") and (s := self._gaz.station(pid[4:])) is not None:
            return PlaceHit(poi_id=s.id, name=s.name + "站", city=self._gaz.city(s.city_id).name_zh,
                            category="火车站", lat=s.lat, lon=s.lon, opening_hours="05:00-24:00")
        return None
