"""Sandbox flights: airlines by route, daily timetables by distance, fares that move with the date."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from tools.travel.geo import Airport, City, Gazetteer, haversine_km
from tools.travel.models import Flight, FlightTransfer, Found, Seat
from tools.travel.provider import FlightQuery
from tools.travel.sandbox.stable import pick, stable_int, unit

NOTE = "sandbox data: a realistic simulated schedule and fares, not a real booking system"
# code -> (short name, base in country or "*" for the big three)
AIRLINES: dict[str, str] = {
    "CA": "中国国航", "MU": "东方航空", "CZ": "南方航空", "HU": "海南航空", "MF": "厦门航空", "3U": "四川航空",
    "ZH": "深圳航空", "SC": "山东航空", "9C": "春秋航空", "HO": "吉祥航空", "FM": "上海航空", "CX": "国泰航空",
    "NH": "全日空", "JL": "日本航空", "KE": "大韩航空", "SQ": "新加坡航空", "TG": "泰国航空", "EK": "阿联酋航空",
    "LH": "汉莎航空", "BA": "英国航空", "AF": "法国航空", "UA": "美国联合航空", "QF": "澳洲航空", "TK": "土耳其航空",
    "BR": "长荣航空", "NX": "澳门航空", "MH": "马来西亚航空", "VN": "越南航空", "PR": "菲律宾航空", "GA": "印尼鹰航",
    "SU": "俄罗斯航空", "AC": "加拿大航空", "NZ": "新西兰航空", "KL": "荷兰皇家航空", "AZ": "意大利航空",
    "IB": "西班牙国家航空", "LX": "瑞士国际航空", "OS": "奥地利航空", "OK": "捷克航空", "MS": "埃及航空", "AI": "印度航空",
}
_HUB_AIRLINES: dict[str, list[str]] = {
    "beijing": ["CA", "HU"], "shanghai": ["MU", "FM", "HO", "9C"], "guangzhou": ["CZ"], "shenzhen": ["ZH", "CZ"],
    "chengdu": ["3U", "CA"], "chongqing": ["CA", "3U"], "xiamen": ["MF"], "fuzhou": ["MF"], "jinan": ["SC"],
    "qingdao": ["SC"], "kunming": ["MU"], "xian": ["MU", "HU"], "haikou": ["HU"], "wulumuqi": ["CZ"],
    "hangzhou": ["CA", "MU"], "wuhan": ["MU", "CZ"], "changsha": ["CZ"], "xianggang": ["CX"], "aomen": ["NX"],
    "taibei": ["BR"],
}
_COUNTRY_AIRLINES: dict[str, list[str]] = {
    "JP": ["NH", "JL"], "KR": ["KE"], "SG": ["SQ"], "TH": ["TG"], "AE": ["EK"], "DE": ["LH"], "GB": ["BA"],
    "FR": ["AF"], "US": ["UA"], "AU": ["QF"], "TR": ["TK"], "MY": ["MH"], "VN": ["VN"], "PH": ["PR"], "ID": ["GA"],
    "RU": ["SU"], "CA": ["AC"], "NZ": ["NZ"], "NL": ["KL"], "IT": ["AZ"], "ES": ["IB"], "CH": ["LX"], "AT": ["OS"],
    "CZ": ["OK"], "EG": ["MS"], "IN": ["AI"], "HK": ["CX"], "MO": ["NX"], "TW": ["BR"],
}
_AIRCRAFT_SHORT = ["空客A320", "波音737", "空客A321", "空客A319", "C919"]
_AIRCRAFT_LONG = ["波音787", "空客A330", "空客A350", "波音777"]


def _local(dt_utc: datetime, tz: str) -> str:
    return dt_utc.astimezone(ZoneInfo(tz)).strftime("%Y-%m-%d %H:%M")


class SandboxFlights:
    def __init__(self, gazetteer: Gazetteer) -> None:
        self._gaz = gazetteer
        self._by_number: dict[str, tuple[str, str]] | None = None  # built on first lookup
        self._schedules: dict[tuple[str, str], list[tuple[str, str, int, int, str]]] = {}

    def _airlines(self, a: City, b: City) -> list[str]:
        domestic = a.country_code == b.country_code == "CN"
        pool: list[str] = []
        for c in (a, b):
            pool += _HUB_AIRLINES.get(c.id, []) if c.country_code in ("CN", "HK", "MO", "TW") else []
            pool += _COUNTRY_AIRLINES.get(c.country_code, [])
        pool += ["CA", "MU", "CZ"] if domestic or "CN" in (a.country_code, b.country_code) else []
        if domestic:
            pool += [pick(["HU", "MF", "3U", "ZH", "SC", "9C", "HO"], "extra", a.id, b.id)]
        return sorted(set(pool))

    def schedule(self, dep: Airport, arr: Airport) -> list[tuple[str, str, int, int, str]]:
        """(number, airline code, local departure minute, block minutes, aircraft); date-free."""
        key = (dep.iata, arr.iata)
        if key not in self._schedules:
            self._schedules[key] = self._make_schedule(dep, arr)
        return self._schedules[key]

    def _make_schedule(self, dep: Airport, arr: Airport) -> list[tuple[str, str, int, int, str]]:
        ca, cb = self._gaz.city(dep.city_id), self._gaz.city(arr.city_id)
        km = haversine_km(dep.lat, dep.lon, arr.lat, arr.lon)
        if km < 250 or ca.id == cb.id:
            return []
        domestic = ca.country_code == cb.country_code
        weight = (4 - ca.tier) + (4 - cb.tier)
        main = dep.iata == ca.airports[0] and arr.iata == cb.airports[0]
        per_day = weight * (2.2 if domestic else 0.5) * (1.0 if main else 0.45) * (0.6 + 0.8 * unit("freq", dep.iata, arr.iata))
        if km > 6000:
            per_day = min(per_day, 2.0)
        count = int(per_day)
        block = round((35 + km * 1.08 / 820 * 60) / 5) * 5
        airlines = self._airlines(ca, cb)
        out = []
        for i in range(count):
            code = pick(airlines, "airline", dep.iata, arr.iata, i)
            number = f"{code}{stable_int('fno', code, dep.iata, arr.iata, i) % 8900 + 1000}"
            minute = 6 * 60 + 30 + int(unit("dep", dep.iata, arr.iata, i) * 193) * 5  # 06:30-22:35
            craft = pick(_AIRCRAFT_LONG if km > 3000 else _AIRCRAFT_SHORT, "craft", number)
            out.append((number, code, minute, block, craft))
        out.sort(key=lambda f: (f[2], f[0]))
        return out

    def _flight(self, dep: Airport, arr: Airport, row: tuple[str, str, int, int, str], day: date) -> Flight:
        number, code, minute, block, craft = row
        start = datetime(day.year, day.month, day.day, tzinfo=ZoneInfo(dep.tz)) + timedelta(minutes=minute)
        end = start + timedelta(minutes=block)
        km = haversine_km(dep.lat, dep.lon, arr.lat, arr.lon)
        domestic = self._gaz.city(dep.city_id).country_code == self._gaz.city(arr.city_id).country_code
        full = (150 + km * 0.75) if domestic else (900 + km * 0.85)
        weekend = 1.15 if day.weekday() in (4, 6) else 1.0
        discount = 0.35 + 0.65 * unit("fare", number, day.isoformat())
        economy = round(full * discount * weekend / 10) * 10
        cabins = [Seat(seat="经济舱", price=float(economy), left=self._left(number, day, "Y"))]
        cabins.append(Seat(seat="公务舱", price=float(round(full * 2.2 * weekend / 10) * 10), left=self._left(number, day, "C")))
        if km > 3000 and unit("first", number) < 0.3:
            cabins.append(Seat(seat="头等舱", price=float(round(full * 4.0 / 10) * 10), left=self._left(number, day, "F")))
        return Flight(
            number=number, airline=AIRLINES[code], from_airport=dep.name_zh, from_airport_code=dep.iata,
            to_airport=arr.name_zh, to_airport_code=arr.iata, from_city=self._gaz.city(dep.city_id).name_zh,
            to_city=self._gaz.city(arr.city_id).name_zh, depart=_local(start, dep.tz), arrive=_local(end, arr.tz),
            duration_min=block, aircraft=craft, price=float(economy), cabins=cabins,
        )

    @staticmethod
    def _left(number: str, day: date, cabin: str) -> int:
        r = unit("seats", number, day.isoformat(), cabin)
        return 0 if r < 0.08 else int(1 + (r - 0.08) / 0.92 * 9)  # airlines show at most 9

    def direct(self, from_airports: tuple[str, ...], to_airports: tuple[str, ...], day: date) -> list[Flight]:
        out = []
        for fa in from_airports:
            for ta in to_airports:
                dep, arr = self._gaz.airport(fa), self._gaz.airport(ta)
                if dep is None or arr is None:
                    continue
                out += [self._flight(dep, arr, row, day) for row in self.schedule(dep, arr)]
        out.sort(key=lambda f: (f.depart, f.number))
        return out

    async def flights(self, q: FlightQuery) -> Found[Flight]:
        return Found(self.direct(q.from_airports, q.to_airports, q.day), "sandbox", NOTE)

    async def flight_transfers(self, q: FlightQuery, limit: int) -> Found[FlightTransfer]:
        return Found(self.transfers(q, limit), "sandbox", NOTE)

    def _raw(self, froms: tuple[str, ...], tos: tuple[str, ...], day: date) -> list[tuple[datetime, datetime, Airport, Airport, tuple[str, str, int, int, str], date]]:
        out = []
        for fa in froms:
            for ta in tos:
                dep, arr = self._gaz.airport(fa), self._gaz.airport(ta)
                if dep is None or arr is None:
                    continue
                midnight = datetime(day.year, day.month, day.day, tzinfo=ZoneInfo(dep.tz))
                for row in self.schedule(dep, arr):
                    start = midnight + timedelta(minutes=row[2])
                    out.append((start, start + timedelta(minutes=row[3]), dep, arr, row, day))
        return out

    def transfers(self, q: FlightQuery, limit: int = 10) -> list[FlightTransfer]:
        # Pair raw schedule rows in UTC and build models only for the winners (keeps it fast).
        o, d = q.origin, q.destination
        direct = haversine_km(o.lat, o.lon, d.lat, d.lon)
        hubs = sorted(
            (c for c in self._gaz.cities if c.tier == 1 and c.airports and c.id not in (o.id, d.id)),
            key=lambda c: (haversine_km(o.lat, o.lon, c.lat, c.lon) + haversine_km(c.lat, c.lon, d.lat, d.lon), c.id),
        )[:4]
        combos = []
        for hub in hubs:
            via = haversine_km(o.lat, o.lon, hub.lat, hub.lon) + haversine_km(hub.lat, hub.lon, d.lat, d.lon)
            if via > direct * 1.4 + 300:
                continue
            first = self._raw(q.from_airports, hub.airports, q.day)
            if not first:
                continue
            second = self._raw(hub.airports, q.to_airports, q.day) + self._raw(hub.airports, q.to_airports, q.day + timedelta(days=1))
            second.sort(key=lambda r: r[0])
            for r1 in first:
                for r2 in second:
                    need = 60 if r2[2].iata == r1[3].iata else 180
                    wait = int((r2[0] - r1[1]).total_seconds() // 60)
                    if need <= wait <= 8 * 60:
                        combos.append((int((r2[1] - r1[0]).total_seconds() // 60), r1[0], r1, r2, wait))
                        break
        combos.sort(key=lambda c: (c[0], c[1], c[2][4][0]))
        out = []
        for total, _s, r1, r2, wait in combos[:limit]:
            f1 = self._flight(r1[2], r1[3], r1[4], r1[5])
            f2 = self._flight(r2[2], r2[3], r2[4], r2[5])
            via_name = f1.to_airport if f1.to_airport_code == f2.from_airport_code else f"{f1.to_airport}->{f2.from_airport}"
            out.append(FlightTransfer(id=f"{f1.number}+{f2.number}", via_airport=via_name, layover_min=wait,
                                      total_min=total, price=f1.price + f2.price, legs=[f1, f2]))
        out.sort(key=lambda t: (t.total_min, t.price, t.id))
        return out

    def get_flight(self, number: str, day: date, from_airport: str | None = None, to_airport: str | None = None) -> Flight | None:
        """Re-query one flight by number (for the Validator). With the airports it is instant;
        without them the first call indexes every route (about half a second, once)."""
        number = number.strip().upper()
        if from_airport and to_airport:
            dep, arr = self._gaz.airport(from_airport), self._gaz.airport(to_airport)
            if dep is None or arr is None:
                return None
            row = next((r for r in self.schedule(dep, arr) if r[0] == number), None)
            return self._flight(dep, arr, row, day) if row else None
        if self._by_number is None:
            index: dict[str, tuple[str, str]] = {}
            for dep in self._gaz.airports:
                for arr in self._gaz.airports:
                    for row in self.schedule(dep, arr):
                        index.setdefault(row[0], (dep.iata, arr.iata))
            self._by_number = index
        hit = self._by_number.get(number)
        return self.get_flight(number, day, hit[0], hit[1]) if hit else None
