"""Sandbox trains: timetables from the rail network, fares by distance, seats left by date."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from tools.travel.geo import City, Gazetteer, haversine_km
from tools.travel.models import Found, Seat, Train, TrainTransfer
from tools.travel.provider import TrainQuery
from tools.travel.sandbox.rail import Call, RailNetwork, Service
from tools.travel.sandbox.stable import unit

NOTE = "sandbox data: a realistic simulated timetable, not a real booking system"
_TYPE = {"G": "高铁", "D": "动车", "Z": "直达特快", "T": "特快", "K": "快速"}
# CNY per km and a fixed part, roughly the published fare levels
_FARES: dict[str, list[tuple[str, float, float]]] = {
    "G": [("二等座", 0.46, 0), ("一等座", 0.74, 0), ("商务座", 1.46, 0)],
    "D": [("二等座", 0.31, 0), ("一等座", 0.50, 0)],
    "Z": [("硬座", 0.10, 0), ("硬卧", 0.18, 20), ("软卧", 0.28, 30)],
    "T": [("硬座", 0.10, 0), ("硬卧", 0.18, 20), ("软卧", 0.28, 30)],
    "K": [("硬座", 0.10, 0), ("软座", 0.16, 0), ("硬卧", 0.18, 20), ("软卧", 0.28, 30)],
}


def fmt(day: date, minutes: int) -> str:
    return (datetime(day.year, day.month, day.day) + timedelta(minutes=minutes)).strftime("%Y-%m-%d %H:%M")


class SandboxTrains:
    def __init__(self, gazetteer: Gazetteer, network: RailNetwork) -> None:
        self._gaz = gazetteer
        self._net = network

    def _seats(self, svc: Service, a: Call, b: Call, day: date) -> list[Seat]:
        km = b.km - a.km
        seats = []
        for name, rate, base in _FARES[svc.kind]:
            if name == "商务座" and km < 300:
                continue
            if name == "软座" and (km > 600 or unit("softseat", svc.number) < 0.5):
                continue
            if name in ("硬卧", "软卧") and b.arrive - a.depart < 6 * 60:
                continue  # sleepers are sold on overnight legs only
            price = max(5.0, round((base + rate * km) * 2) / 2)
            r = unit("left", svc.number, day.isoformat(), a.station, b.station, name)
            left = 0 if r < 0.12 else int(1 + (r - 0.12) / 0.88 * 99)
            seats.append(Seat(seat=name, price=price, left=left))
        return seats

    def _train(self, svc: Service, a: Call, b: Call, day: date) -> Train:
        shift = (a.depart // 1440) * 1440  # the train left its origin that many days earlier
        idx_a, idx_b = svc.calls.index(a), svc.calls.index(b)
        sa, sb = self._gaz.station(a.station), self._gaz.station(b.station)
        assert sa is not None and sb is not None
        return Train(
            number=svc.number,
            type=_TYPE[svc.kind],
            from_station=a.station,
            to_station=b.station,
            from_city=self._gaz.city(sa.city_id).name_zh,
            to_city=self._gaz.city(sb.city_id).name_zh,
            depart=fmt(day, a.depart - shift),
            arrive=fmt(day, b.arrive - shift),
            duration_min=b.arrive - a.depart,
            distance_km=round(b.km - a.km),
            stops=[c.station for c in svc.calls[idx_a + 1 : idx_b]],
            seats=self._seats(svc, a, b, day),
        )

    def direct(self, from_stations: tuple[str, ...], to_stations: tuple[str, ...], day: date) -> list[Train]:
        return [self._train(s, a, b, day) for s, a, b in self._net.between(set(from_stations), set(to_stations))]

    async def trains(self, q: TrainQuery) -> Found[Train]:
        return Found(self.direct(q.from_stations, q.to_stations, q.day), "sandbox", NOTE)

    async def train_transfers(self, q: TrainQuery, middle: City | None, limit: int) -> Found[TrainTransfer]:
        return Found(self.transfers(q, middle, limit), "sandbox", NOTE)

    def _hubs(self, q: TrainQuery) -> list[City]:
        o, d = q.origin, q.destination
        direct = haversine_km(o.lat, o.lon, d.lat, d.lon)
        cands = []
        for c in self._gaz.cities:
            if c.id in (o.id, d.id) or not c.stations or not (c.tier <= 2 or c.population >= 2_500_000):
                continue
            via = haversine_km(o.lat, o.lon, c.lat, c.lon) + haversine_km(c.lat, c.lon, d.lat, d.lon)
            if via <= direct * 1.35 + 150:
                cands.append((via, c.id, c))
        cands.sort(key=lambda t: (t[0], t[1]))
        return [c for _, _, c in cands[:6]]

    def transfers(self, q: TrainQuery, middle: City | None, limit: int = 10) -> list[TrainTransfer]:
        # Work on raw calls (minutes from midnight of the query day) and build models only for
        # the winners: this keeps a transfer search within a few milliseconds.
        hubs = [middle] if middle is not None else self._hubs(q)
        combos: list[tuple[int, int, str, Service, Call, Call, Service, Call, Call, int]] = []
        from_calls = self._net.calls_at(q.from_stations)
        to_calls = self._net.calls_at(q.to_stations, last=True)
        for hub in hubs:
            first = self._net.between(q.from_stations, hub.stations, from_calls=from_calls)
            second = self._net.between(hub.stations, q.to_stations, to_calls=to_calls) if first else []
            for s1, a1, b1 in first:
                shift1 = (a1.depart // 1440) * 1440
                arrive = b1.arrive - shift1
                best: tuple[int, Service, Call, Call, int] | None = None
                for s2, a2, b2 in second:
                    if s2.number == s1.number:
                        continue
                    need = 20 if a2.station == b1.station else 70  # crossing town takes time
                    daily = a2.depart % 1440
                    days = -(-(arrive + need - daily) // 1440)
                    dep = daily + 1440 * days
                    wait = dep - arrive
                    if wait <= 6 * 60 and (best is None or wait < best[0]):
                        best = (wait, s2, a2, b2, days)
                if best is not None:
                    wait, s2, a2, b2, days = best
                    total = arrive + wait + (b2.arrive - a2.depart) - (a1.depart - shift1)
                    combos.append((total, a1.depart - shift1, s1.number, s1, a1, b1, s2, a2, b2, days))
        combos.sort(key=lambda c: (c[0], c[1], c[2]))
        out: list[TrainTransfer] = []
        used: set[str] = set()
        for total, _dep, _n, s1, a1, b1, s2, a2, b2, days in combos:
            if s1.number in used or len(out) >= limit:
                continue
            used.add(s1.number)
            t1 = self._train(s1, a1, b1, q.day)
            t2 = self._train(s2, a2, b2, q.day + timedelta(days=days))
            station = b1.station if b1.station == a2.station else f"{b1.station}->{a2.station}"
            wait = int((datetime.strptime(t2.depart, "%Y-%m-%d %H:%M") - datetime.strptime(t1.arrive, "%Y-%m-%d %H:%M")).total_seconds() // 60)
            out.append(TrainTransfer(id=f"{t1.number}+{t2.number}", middle_station=station,
                                     wait_min=wait, total_min=total, legs=[t1, t2]))
        return out

    def get_train(self, number: str, day: date, from_station: str | None = None, to_station: str | None = None) -> Train | None:
        """Re-query one train by number (for the Validator); whole run unless stations are given."""
        svc = self._net.services.get(number.strip().upper())
        if svc is None:
            return None
        calls = {c.station: c for c in svc.calls}
        a = calls.get(from_station) if from_station else svc.calls[0]
        b = calls.get(to_station) if to_station else svc.calls[-1]
        if a is None or b is None or svc.calls.index(a) >= svc.calls.index(b):
            return None
        return self._train(svc, a, b, day)
