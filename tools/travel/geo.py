"""The gazetteer: cities, stations, airports and POIs of the sandbox, loaded from data/*.json.

One `Gazetteer` is built by bot.py (Gazetteer.load()) and passed to the providers and tools;
nothing here is cached at module level. Names resolve in Chinese (北京, 北京市), English
(Beijing), pinyin (beijing), station names (北京南 -> 北京) and IATA codes (PEK -> 北京).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from pypinyin import lazy_pinyin
from rapidfuzz import fuzz, process

from tools.travel.errors import UnknownCityError, UnknownPlaceError
from tools.travel.geo_records import Airport, City, Place, Poi, Station

_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATLON = re.compile(r"^\s*(-?\d{1,2}(?:\.\d+)?)\s*,\s*(-?\d{1,3}(?:\.\d+)?)\s*$")
_ZH_SUFFIXES = ("特别行政区", "火车站", "高铁站", "站", "市")
_EN_SUFFIXES = (" city", " shi")


__all__ = ["Airport", "City", "Gazetteer", "Place", "Poi", "Station", "haversine_km", "normalize"]


_SIGHTSEEING = frozenset({
    "景点", "景区", "旅游景点", "必去景点", "好玩的地方", "玩", "旅游", "观光", "名胜",
    "sights", "sightseeing", "attractions", "things to do", "tourist attractions", "places to visit",
})
_SIGHT_CATEGORIES = frozenset({"景点", "地标", "街区", "博物馆", "公园", "寺庙", "主题乐园", "夜景", "海滩"})


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 6371.0 * 2 * math.asin(min(1.0, math.sqrt(a)))


def normalize(text: str) -> str:
    t = unicodedata.normalize("NFKC", text).strip().lower()
    if not _CJK.search(t):
        t = unicodedata.normalize("NFKD", t).encode("ascii", "ignore").decode()
    return re.sub(r"[\s\-'’·.()（）]+", "", t)


def _strip_suffix(key: str) -> str:
    for suf in _ZH_SUFFIXES:
        if key.endswith(suf) and len(key) > len(suf) + 1:
            return key[: -len(suf)]
    return key


def _pinyin_key(text: str) -> str:
    return "".join(lazy_pinyin(text)).lower()


_SIGHTSEEING_KEYS = frozenset(normalize(w) for w in _SIGHTSEEING)


class Gazetteer:
    def __init__(
        self,
        cities: Iterable[City],
        stations: Iterable[Station],
        airports: Iterable[Airport],
        pois: Iterable[Poi],
    ) -> None:
        self.cities = tuple(cities)
        self.stations = tuple(stations)
        self.airports = tuple(airports)
        self.pois = tuple(pois)
        self._city = {c.id: c for c in self.cities}
        self._station = {s.name: s for s in self.stations}
        self._airport = {a.iata: a for a in self.airports}
        self._poi = {p.id: p for p in self.pois}
        self._pois_by_city: dict[str, list[Poi]] = {}
        for p in self.pois:
            self._pois_by_city.setdefault(p.city_id, []).append(p)
        # name key -> city ids; several ids mean the key is ambiguous
        self._keys: dict[str, set[str]] = {}
        for c in self.cities:
            for key in (c.name_zh, c.name_en, c.pinyin, c.id, c.name_en.removesuffix(" City")):
                self._add_key(key, c.id)
        self._city_keys = set(self._keys)
        for s in self.stations:
            self._station_key(s)
        for a in self.airports:
            self._add_key(a.iata, a.city_id)
            self._add_key(a.name_zh, a.city_id)
            self._add_key(a.name_en, a.city_id)
        self._pinyin_choices = {c.id: c.pinyin for c in self.cities}
        self._zh_choices = {c.id: c.name_zh for c in self.cities}
        self._en_choices = {c.id: normalize(c.name_en) for c in self.cities}

    def _add_key(self, text: str, city_id: str) -> None:
        key = normalize(text)
        if key:
            self._keys.setdefault(key, set()).add(city_id)

    def _station_key(self, s: Station) -> None:
        key = normalize(s.name)
        if key not in self._city_keys:  # the city 北京 wins over the station 北京
            self._keys.setdefault(key, set()).add(s.city_id)

    @classmethod
    def load(cls, data_dir: Path | None = None) -> Gazetteer:
        base = data_dir or Path(str(resources.files("tools.travel") / "data"))

        def read(name: str) -> list[dict[str, Any]]:
            return json.loads((base / name).read_text(encoding="utf-8"))

        cities = [
            City(
                id=str(r["id"]), name_zh=str(r["name_zh"]), name_en=str(r["name_en"]), pinyin=str(r["pinyin"]),
                province=str(r["province"]), country=str(r["country"]), country_code=str(r["country_code"]),
                lat=float(r["lat"]), lon=float(r["lon"]), tz=str(r["tz"]),
                population=int(r["population"]), tier=int(r["tier"]),
                stations=tuple(r["stations"]), airports=tuple(r["airports"]),
            )
            for r in read("cities.json")
        ]
        stations = [
            Station(
                id=f"STA-{r['name']}", name=str(r["name"]), city_id=str(r["city_id"]),
                lat=float(r["lat"]), lon=float(r["lon"]), lines=tuple(r["lines"]),
            )
            for r in read("stations.json")
        ]
        airports = [
            Airport(
                iata=str(r["iata"]), name_zh=str(r["name_zh"]), name_en=str(r["name_en"]), city_id=str(r["city_id"]),
                lat=float(r["lat"]), lon=float(r["lon"]), tz=str(r["tz"]),
            )
            for r in read("airports.json")
        ]
        pois = [
            Poi(
                id=str(r["id"]), city_id=str(r["city_id"]), name_zh=str(r["name_zh"]), name_en=str(r["name_en"]),
                category=str(r["category"]), lat=float(r["lat"]), lon=float(r["lon"]),
                hours=str(r["hours"]), visit_min=int(r["visit_min"]), price=float(r["price"]),
            )
            for r in read("pois.json")
        ]
        return cls(cities, stations, airports, pois)

    # -- lookups by id -------------------------------------------------------------------------
    def city(self, city_id: str) -> City:
        return self._city[city_id]

    def station(self, name: str) -> Station | None:
        return self._station.get(name) or self._station.get(_strip_suffix(name.strip()))

    def airport(self, iata: str) -> Airport | None:
        return self._airport.get(iata.strip().upper())

    def poi(self, poi_id: str) -> Poi | None:
        return self._poi.get(poi_id.strip())

    # -- name resolution ------------------------------------------------------------------------
    def resolve_city(self, name: str, *, field: str | None = None) -> City:
        """A city from any of its names; UnknownCityError (with close matches) otherwise."""
        raw = normalize(name)
        if not raw:
            raise UnknownCityError(name, [], field=field)
        for key in (raw, _strip_suffix(raw), raw.removesuffix("city"), raw.removesuffix("shi")):
            ids = self._keys.get(key)
            if ids:
                if len(ids) > 1:
                    raise UnknownCityError(name, sorted(self._city[i].label for i in ids), field=field, ambiguous=True)
                return self._city[next(iter(ids))]
        raise UnknownCityError(name, self.suggest_cities(name), field=field)

    def suggest_cities(self, name: str, limit: int = 5) -> list[str]:
        raw = normalize(name)
        found: list[str] = []
        if _CJK.search(raw):
            py = _pinyin_key(_strip_suffix(raw))
            found += [cid for cid, p in self._pinyin_choices.items() if p == py]
            found += [m[2] for m in process.extract(py, self._pinyin_choices, scorer=fuzz.ratio, limit=limit, score_cutoff=75)]
            found += [m[2] for m in process.extract(raw, self._zh_choices, scorer=fuzz.WRatio, limit=limit, score_cutoff=60)]
        else:
            found += [m[2] for m in process.extract(raw, self._pinyin_choices, scorer=fuzz.ratio, limit=limit, score_cutoff=70)]
            found += [m[2] for m in process.extract(raw, self._en_choices, scorer=fuzz.ratio, limit=limit, score_cutoff=70)]
        seen: list[str] = []
        for cid in found:
            if cid not in seen:
                seen.append(cid)
        return [self._city[cid].label for cid in seen[:limit]]

    def resolve_station(self, name: str) -> Station | None:
        """A station named exactly (北京南, 北京南站); None when `name` is a city or unknown."""
        key = normalize(name)
        if key in self._city_keys or (_strip_suffix(key) in self._city_keys and not key.endswith("站")):
            return None
        return self.station(name.strip())

    def find_stations(self, city: City | str) -> list[Station]:
        c = city if isinstance(city, City) else self.resolve_city(city)
        return [self._station[n] for n in c.stations]

    def find_airports(self, city: City | str) -> list[Airport]:
        c = city if isinstance(city, City) else self.resolve_city(city)
        return [self._airport[a] for a in c.airports]

    def pois_in(self, city: City | str) -> list[Poi]:
        c = city if isinstance(city, City) else self.resolve_city(city)
        return list(self._pois_by_city.get(c.id, []))

    def find_places(self, city: City | str | None, query: str, limit: int = 10) -> list[Poi]:
        """POIs matching `query` (name, English name or category), best first.

        "上海 景点" is read as the city plus what to find; a generic word for sightseeing
        ("景点", "sights", "things to do") returns the city's best-known sights in curated order.
        """
        if city is None:
            city, query = self._city_in_query(query)
        pool = self.pois_in(city) if city is not None else list(self.pois)
        q = normalize(query)
        if not q:
            return pool[:limit]
        if q in _SIGHTSEEING_KEYS and city is not None:
            return [p for p in pool if p.category in _SIGHT_CATEGORIES][:limit]
        scored: list[tuple[float, Poi]] = []
        for p in pool:
            zh, en = normalize(p.name_zh), normalize(p.name_en)
            if q in (zh, en):
                score = 200.0
            elif q in zh or q in en or (len(zh) >= 2 and zh in q):
                score = 150.0 - abs(len(zh) - len(q))
            elif q == normalize(p.category):
                score = 120.0
            else:
                score = max(fuzz.partial_ratio(q, zh), fuzz.ratio(q, en)) if len(q) > 1 else 0.0
            if score >= 75:
                scored.append((score, p))
        scored.sort(key=lambda sp: (-sp[0], sp[1].id))
        return [p for _, p in scored[:limit]]

    def _city_in_query(self, query: str) -> tuple[City | None, str]:
        """A leading or trailing city name in a place query ("上海 景点", "sights in Xi'an")."""
        words = query.replace("，", " ").replace(",", " ").split()
        candidates = [(words[0], " ".join(words[1:])), (words[-1], " ".join(words[:-1]))] if len(words) > 1 else []
        for name, rest in candidates:
            key = _strip_suffix(normalize(name))
            ids = self._keys.get(key) if key in self._city_keys else None
            if ids and len(ids) == 1:
                rest = re.sub(r"^(in|at|of)\s+|\s+(in|at|of)$", "", rest.strip(), flags=re.IGNORECASE)
                return self._city[next(iter(ids))], rest
        return None, query

    def resolve_place(self, text: str, city: City | None = None, *, field: str | None = None) -> Place:
        """A point from "lat,lon", a POI id or name, a station, an airport or a city name."""
        m = _LATLON.match(text)
        if m:
            lat, lon = float(m.group(1)), float(m.group(2))
            near, _ = self.nearest_city(lat, lon)
            return Place(text.strip(), lat, lon, "point", near.id)
        if (p := self.poi(text)) is not None:
            return Place(p.name_zh, p.lat, p.lon, "poi", p.city_id, p.id)
        if (s := self.station(text.strip())) is not None and (city is None or s.city_id == city.id):
            return Place(s.name + "站", s.lat, s.lon, "station", s.city_id, s.id)
        key = normalize(text)
        for a in self.airports:
            if key in (a.iata.lower(), normalize(a.name_zh), normalize(a.name_en)) and (city is None or a.city_id == city.id):
                return Place(a.name_zh, a.lat, a.lon, "airport", a.city_id, a.iata)
        hits = self.find_places(city, text, limit=1)
        if hits:
            p = hits[0]
            return Place(p.name_zh, p.lat, p.lon, "poi", p.city_id, p.id)
        ids = self._keys.get(key) or self._keys.get(_strip_suffix(key))
        if ids and len(ids) == 1:
            c = self._city[next(iter(ids))]
            if city is None or c.id == city.id:
                return Place(f"{c.name_zh}市中心", c.lat, c.lon, "city", c.id)
        pool = self.pois_in(city) if city is not None else list(self.pois)
        close = process.extract(text, {p.id: p.name_zh for p in pool}, scorer=fuzz.WRatio, limit=3, score_cutoff=50)
        raise UnknownPlaceError(text, [m[0] for m in close], city_id=city.id if city else None, field=field)

    # -- geometry ------------------------------------------------------------------------------
    def nearest_city(self, lat: float, lon: float) -> tuple[City, float]:
        best = min(self.cities, key=lambda c: haversine_km(lat, lon, c.lat, c.lon))
        return best, haversine_km(lat, lon, best.lat, best.lon)

    def pois_near(self, lat: float, lon: float, radius_m: float) -> list[tuple[Poi, float]]:
        out = []
        for p in self.pois:
            d = haversine_km(lat, lon, p.lat, p.lon) * 1000
            if d <= radius_m:
                out.append((p, d))
        out.sort(key=lambda pd: pd[1])
        return out
