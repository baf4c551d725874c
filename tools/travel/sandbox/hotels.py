"""Sandbox hotels: a stable roster per city (brands, levels, places) with prices by date."""

from __future__ import annotations

import math
from datetime import date, timedelta

from tools.travel.geo import City, Gazetteer
from tools.travel.models import Found, Hotel
from tools.travel.sandbox.stable import between, pick, unit

NOTE = "sandbox data: simulated hotels and prices, not a real booking system"
# brand -> (level_name, stars, base CNY per night in a tier-1 city)
BRANDS: dict[str, tuple[str, int, int]] = {
    "如家": ("经济型", 2, 260), "汉庭": ("经济型", 2, 280), "7天": ("经济型", 2, 220), "锦江之星": ("经济型", 2, 270),
    "全季": ("舒适型", 3, 420), "亚朵": ("高档型", 4, 560), "维也纳": ("舒适型", 3, 380), "桔子": ("舒适型", 3, 450),
    "希尔顿欢朋": ("高档型", 4, 520), "智选假日": ("高档型", 4, 500), "丽枫": ("舒适型", 3, 400),
    "万豪": ("豪华型", 5, 1300), "希尔顿": ("豪华型", 5, 1200), "洲际": ("豪华型", 5, 1400), "香格里拉": ("豪华型", 5, 1350),
    "凯悦": ("豪华型", 5, 1250), "喜来登": ("豪华型", 5, 1000), "皇冠假日": ("豪华型", 5, 850), "开元": ("高档型", 4, 600),
}
_TIER_PRICE = {1: 1.0, 2: 0.8, 3: 0.65}
_AREA_WORDS = ["站前", "市中心", "步行街", "会展中心", "大学城", "开发区", "老城", "江景", "机场"]


class SandboxHotels:
    def __init__(self, gazetteer: Gazetteer) -> None:
        self._gaz = gazetteer

    def roster(self, city: City) -> list[tuple[str, str, str, float, float]]:
        """(hotel_id, brand, area, lat, lon) for every hotel of the city; date-free."""
        anchors: list[tuple[str, float, float]] = [(p.name_zh, p.lat, p.lon) for p in self._gaz.pois_in(city)]
        anchors += [(s.name + "站", s.lat, s.lon) for s in self._gaz.find_stations(city)]
        anchors += [(city.name_zh + "市中心", city.lat, city.lon)]
        count = 16 + (4 - city.tier) * 8
        out = []
        for i in range(1, count + 1):
            brand = pick(sorted(BRANDS), "brand", city.id, i)
            area, lat, lon = pick(anchors, "anchor", city.id, i)
            # within ~2.5 km of its anchor, spread evenly in all directions
            r_km, angle = 2.5 * math.sqrt(unit("r", city.id, i)), 2 * math.pi * unit("a", city.id, i)
            lat += r_km * math.cos(angle) / 111.0
            lon += r_km * math.sin(angle) / (111.0 * max(0.2, math.cos(math.radians(lat))))
            out.append((f"H-{city.id}-{i:03d}", brand, area, round(lat, 5), round(lon, 5)))
        return out

    def _hotel(self, city: City, row: tuple[str, str, str, float, float], checkin: date, checkout: date) -> Hotel:
        hotel_id, brand, area, lat, lon = row
        level, stars, base = BRANDS[brand]
        nights = (checkout - checkin).days
        foreign = 1.0 if city.country_code in ("CN", "HK", "MO", "TW") else 1.6
        quality = between(0.85, 1.25, "quality", hotel_id)
        total = 0.0
        for k in range(nights):
            d = checkin + timedelta(days=k)
            weekend = 1.2 if d.weekday() in (4, 5) else 1.0
            total += round(base * _TIER_PRICE[city.tier] * foreign * quality * weekend * between(0.9, 1.15, "night", hotel_id, d.isoformat()))
        short = area.removeprefix(city.name_zh).removesuffix("站").removesuffix("市中心") or "中心"
        suffix = "酒店" if brand not in ("7天", "如家") else "连锁酒店"
        return Hotel(
            hotel_id=hotel_id, name=f"{brand}{suffix}({city.name_zh}{short}店)", brand=brand, city=city.name_zh,
            level_name=level, stars=stars, address=f"{city.name_zh}{pick(_AREA_WORDS, 'addr', hotel_id)}片区,近{area}",
            lat=lat, lon=lon, price=round(total / nights, 0), nights=nights, total=round(total, 0),
            has_breakfast=stars >= 4 or unit("breakfast", hotel_id) < 0.4,
            rating=round(between(3.9 if stars < 4 else 4.3, 4.9, "rating", hotel_id), 1),
            rooms_left=int(unit("rooms", hotel_id, checkin.isoformat()) * 12),
        )

    def list(self, city: City, checkin: date, checkout: date) -> list[Hotel]:
        return [self._hotel(city, row, checkin, checkout) for row in self.roster(city)]

    async def hotels(self, city: City, checkin: date, checkout: date) -> Found[Hotel]:
        return Found(self.list(city, checkin, checkout), "sandbox", NOTE)

    def get_hotel(self, hotel_id: str, checkin: date, checkout: date) -> Hotel | None:
        """Re-query one hotel by id (for the Validator); the id names its city."""
        parts = hotel_id.strip().split("-")
        if len(parts) != 3 or parts[0] != "H":
            return None
        try:
            city = self._gaz.city(parts[1])
        except KeyError:
            return None
        row = next((r for r in self.roster(city) if r[0] == hotel_id.strip()), None)
        return self._hotel(city, row, checkin, checkout) if row else None
