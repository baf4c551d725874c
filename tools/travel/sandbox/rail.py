"""The sandbox railway: a station graph from data/railways.json and a daily timetable on it.

Services run between terminal stations along the shortest path of their network (G/D on
"hsr" lines, Z/T/K on "conv" lines) and stop at a stable subset of the stations they pass.
A query between two stations finds every service that calls at both, in order.
"""

from __future__ import annotations

import heapq
import itertools
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from tools.travel.geo import Gazetteer, haversine_km
from tools.travel.sandbox.stable import stable_int, unit

_DETOUR = {"hsr": 1.10, "conv": 1.22}  # rail km per great-circle km
_CRUISE_KMH = {"G": 290.0, "D": 220.0, "Z": 125.0, "T": 105.0, "K": 85.0}
_TIER_WEIGHT = {1: 3.0, 2: 2.0, 3: 1.0}
_DAY = 1440


@dataclass(frozen=True, slots=True)
class Call:
    station: str
    arrive: int  # minutes after midnight of the first day; may exceed 1440
    depart: int
    km: float  # from the origin terminal


@dataclass(frozen=True, slots=True)
class Service:
    number: str
    kind: str  # G D Z T K
    calls: tuple[Call, ...]

    @property
    def origin(self) -> str:
        return self.calls[0].station

    @property
    def terminus(self) -> str:
        return self.calls[-1].station


class RailNetwork:
    def __init__(self, gazetteer: Gazetteer, lines: list[tuple[str, str, list[str]]]) -> None:
        self._gaz = gazetteer
        self._adj: dict[str, dict[str, dict[str, float]]] = {"hsr": {}, "conv": {}}
        ends: dict[str, set[str]] = {"hsr": set(), "conv": set()}
        for _name, kind, stations in lines:
            ends[kind].update((stations[0], stations[-1]))
            for a, b in itertools.pairwise(stations):
                sa, sb = gazetteer.station(a), gazetteer.station(b)
                assert sa is not None and sb is not None, (a, b)
                km = haversine_km(sa.lat, sa.lon, sb.lat, sb.lon) * _DETOUR[kind]
                self._adj[kind].setdefault(a, {})[b] = km
                self._adj[kind].setdefault(b, {})[a] = km
        self.services: dict[str, Service] = {}
        self._calls_at: dict[str, list[tuple[str, int]]] = {}
        taken: set[str] = set()
        for kind in ("hsr", "conv"):
            terminals = sorted(
                s for s in self._adj[kind]
                if s in ends[kind] or self._major(self._station_city(s))
            )
            for a in terminals:
                dist, prev = self._dijkstra(kind, a)
                for b in terminals:
                    if b != a and b in dist and self._station_city(a) != self._station_city(b):
                        path = [b]
                        while path[-1] != a:
                            path.append(prev[path[-1]])
                        self._add_services(kind, path[::-1], dist, taken)
        for number, svc in self.services.items():
            for i, call in enumerate(svc.calls):
                self._calls_at.setdefault(call.station, []).append((number, i))

    @classmethod
    def load(cls, gazetteer: Gazetteer, data_dir: Path | None = None) -> RailNetwork:
        base = data_dir or Path(str(resources.files("tools.travel") / "data"))
        rows = json.loads((base / "railways.json").read_text(encoding="utf-8"))
        return cls(gazetteer, [(r["name"], r["kind"], list(r["stations"])) for r in rows])

    def _major(self, city_id: str) -> bool:
        c = self._gaz.city(city_id)
        return c.tier <= 2 or c.population >= 2_500_000

    def _station_city(self, name: str) -> str:
        st = self._gaz.station(name)
        assert st is not None
        return st.city_id

    def _dijkstra(self, kind: str, source: str) -> tuple[dict[str, float], dict[str, str]]:
        adj = self._adj[kind]
        dist, prev = {source: 0.0}, {}
        heap = [(0.0, source)]
        while heap:
            d, node = heapq.heappop(heap)
            if d > dist[node]:
                continue
            for nxt, km in sorted(adj[node].items()):
                nd = d + km
                if nd < dist.get(nxt, float("inf")):
                    dist[nxt], prev[nxt] = nd, node
                    heapq.heappush(heap, (nd, nxt))
        return dist, prev

    def _add_services(self, kind: str, path: list[str], dist: dict[str, float], taken: set[str]) -> None:
        a, b = path[0], path[-1]
        total = dist[b]
        ca, cb = self._gaz.city(self._station_city(a)), self._gaz.city(self._station_city(b))
        weight = _TIER_WEIGHT[ca.tier] + _TIER_WEIGHT[cb.tier]
        sa, sb = self._gaz.station(a), self._gaz.station(b)
        assert sa is not None and sb is not None
        if total > (1.2 if kind == "hsr" else 1.5) * _DETOUR[kind] * haversine_km(sa.lat, sa.lon, sb.lat, sb.lon):
            return  # nobody runs a train the long way round
        if kind == "hsr":
            if not 100 <= total <= 3000:
                return
            factor = 1.8 if total < 800 else 1.4 if total < 1500 else 0.6
        else:
            if not 250 <= total <= 4800:
                return
            factor = 0.45
        count = int(weight * factor * (0.6 + 0.8 * unit("count", kind, a, b)))
        for i in range(count):
            if kind == "hsr":
                letter = "G" if total > 350 and unit("type", a, b, i) < 0.85 else "D"
            else:
                r = unit("type", a, b, i)
                letter = "Z" if total > 1000 and r < 0.3 else "T" if r < 0.6 else "K"
            svc = self._timetable(letter, path, dist, a, b, i, express=(i == 0 and weight >= 4))
            if svc is None:
                continue
            number = self._number(letter, a, b, i, taken)
            self.services[number] = Service(number, letter, svc)

    def _timetable(
        self, letter: str, path: list[str], dist: dict[str, float], a: str, b: str, i: int, express: bool
    ) -> tuple[Call, ...] | None:
        stops = [path[0]]
        for s in path[1:-1]:
            tier = self._gaz.city(self._station_city(s)).tier
            p = (0.9 if tier <= 2 else 0.55) * (0.35 if express else 1.0)
            if unit("stop", letter, a, b, i, s) < p:
                stops.append(s)
        stops.append(path[-1])
        speed = _CRUISE_KMH[letter]
        run: list[tuple[str, float, int]] = []  # station, km, minutes since departure (arrival)
        t = 0.0
        for k, s in enumerate(stops):
            if k:
                seg = dist[s] - dist[stops[k - 1]]
                t += seg / speed * 60 + (6 if letter in "GD" else 10)
            run.append((s, dist[s] - dist[stops[0]], round(t)))
            if 0 < k < len(stops) - 1:
                t += 2 if letter in "GD" else 6
        duration = run[-1][2]
        if letter in "GD":
            latest = 23 * 60 + 30 - duration
            if latest < 6 * 60 + 30:
                return None
            start = 6 * 60 + 30 + int(unit("dep", letter, a, b, i) * (latest - 390) / 5) * 5
        elif duration > 8 * 60:
            start = 17 * 60 + int(unit("dep", letter, a, b, i) * 66) * 5
        else:
            start = 6 * 60 + int(unit("dep", letter, a, b, i) * 180) * 5
        calls = []
        for k, (s, km, at) in enumerate(run):
            dwell = 0 if k in (0, len(run) - 1) else (2 if letter in "GD" else 6)
            calls.append(Call(s, start + at, start + at + dwell, round(km, 1)))
        return tuple(calls)

    def _number(self, letter: str, a: str, b: str, i: int, taken: set[str]) -> str:
        span = {"G": 8999, "D": 7999, "Z": 999, "T": 999, "K": 8999}[letter]
        n = stable_int("number", letter, a, b, i) % span + 1
        while f"{letter}{n}" in taken:
            n = n % span + 1
        taken.add(f"{letter}{n}")
        return f"{letter}{n}"

    def calls_at(self, stations: set[str] | tuple[str, ...], *, last: bool = False) -> dict[str, int]:
        """service number -> index of its first (or last) call at any of `stations`."""
        out: dict[str, int] = {}
        for st in stations:
            for number, idx in self._calls_at.get(st, ()):
                j = out.get(number)
                if j is None or (idx > j if last else idx < j):
                    out[number] = idx
        return out

    def between(
        self,
        origins: set[str] | tuple[str, ...],
        destinations: set[str] | tuple[str, ...],
        *,
        from_calls: dict[str, int] | None = None,
        to_calls: dict[str, int] | None = None,
    ) -> list[tuple[Service, Call, Call]]:
        """Every service calling at one of `origins` and later at one of `destinations`.
        Callers that ask many questions about one end pass its calls_at() map to save time."""
        first = from_calls if from_calls is not None else self.calls_at(origins)
        final = to_calls if to_calls is not None else self.calls_at(destinations, last=True)
        small, big = (first, final) if len(first) <= len(final) else (final, first)
        out = []
        for number in small:
            if number in big:
                i, j = first[number], final[number]
                if i < j:
                    svc = self.services[number]
                    out.append((svc, svc.calls[i], svc.calls[j]))
        out.sort(key=lambda sc: (sc[1].depart, sc[0].number))
        return out

    def serves(self, station: str) -> bool:
        return station in self._calls_at


DAY_MINUTES = _DAY
