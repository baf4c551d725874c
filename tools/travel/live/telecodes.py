"""12306's official station table: every station's telecode, pinyin and city (about 3,300 stations).

Shipped as package data (tools/travel/data/rail_stations.json), rebuilt from 12306's
station_name.js by scripts/refresh_stations.py. One table is loaded by whoever builds the 12306
provider and passed in; nothing is cached at module level.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True, slots=True)
class RailStation:
    name: str  # 北京丰台
    code: str  # FTP
    pinyin: str  # beijingfengtai
    initials: str  # bjft
    city: str  # 北京 (12306's own grouping: the prefecture-level city the station serves)


class StationTable:
    def __init__(self, stations: Iterable[RailStation]) -> None:
        self._by_code: dict[str, RailStation] = {}
        self._by_name: dict[str, RailStation] = {}
        self._by_city: dict[str, list[RailStation]] = {}
        for s in stations:
            self._by_code[s.code] = s
            self._by_name.setdefault(s.name, s)
            self._by_city.setdefault(s.city, []).append(s)

    @classmethod
    def load(cls) -> StationTable:
        text = resources.files("tools.travel").joinpath("data/rail_stations.json").read_text(encoding="utf-8")
        return cls(RailStation(*row) for row in json.loads(text))

    def __len__(self) -> int:
        return len(self._by_code)

    def by_code(self, code: str) -> RailStation | None:
        return self._by_code.get(code)

    def by_name(self, name: str) -> RailStation | None:
        name = name.strip()
        return self._by_name.get(name) or self._by_name.get(name.removesuffix("站"))

    def code(self, name: str) -> str | None:
        s = self.by_name(name)
        return s.code if s else None

    def in_city(self, city: str) -> list[RailStation]:
        return list(self._by_city.get(city.removesuffix("市"), []))
