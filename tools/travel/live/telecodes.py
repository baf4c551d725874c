"""12306's official station table: every station's telecode, pinyin and city (about 3,300 stations).

Shipped as package data (tools/travel/data/rail_stations.json), rebuilt from 12306's
station_name.js by scripts/refresh_stations.py. One table is loaded by whoever builds the 12306
provider and passed in; nothing is cached at module level.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources

# English words for the direction a station is named by, and their pinyin: "Baoding East" is 保定东.
_DIRECTIONS = {"east": "dong", "west": "xi", "south": "nan", "north": "bei"}
_STATION_WORDS = re.compile(r"(railway|train)?(station|stn)$")


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
        self._by_pinyin: dict[str, list[RailStation]] = {}
        for s in stations:
            self._by_code[s.code] = s
            self._by_name.setdefault(s.name, s)
            self._by_city.setdefault(s.city, []).append(s)
            self._by_pinyin.setdefault(s.pinyin, []).append(s)

    @classmethod
    def load(cls) -> StationTable:
        text = resources.files("tools.travel").joinpath("data/rail_stations.json").read_text(encoding="utf-8")
        return cls(RailStation(*row) for row in json.loads(text))

    def __len__(self) -> int:
        return len(self._by_code)

    def __iter__(self) -> Iterator[RailStation]:
        return iter(self._by_code.values())

    def by_code(self, code: str) -> RailStation | None:
        return self._by_code.get(code)

    def by_name(self, name: str) -> RailStation | None:
        name = name.strip()
        return self._by_name.get(name) or self._by_name.get(name.removesuffix("站"))

    def find(self, text: str) -> RailStation | None:
        """A station as a traveller or a model may write it: 北京丰台, 北京丰台站, beijingfengtai,
        "Beijing Fengtai", "Baoding East (station)". A pinyin two stations share is no answer."""
        found = self.by_name(text)
        if found is not None:
            return found
        key = _latin_key(text)
        if not key:
            return None
        for candidate in (key, _with_direction(key)):
            same = self._by_pinyin.get(candidate, [])
            if len(same) == 1:
                return same[0]
        return None

    def code(self, name: str) -> str | None:
        s = self.by_name(name)
        return s.code if s else None

    def in_city(self, city: str) -> list[RailStation]:
        return list(self._by_city.get(city.removesuffix("市"), []))


def _latin_key(text: str) -> str:
    """"Beijing Fengtai Railway Station" -> "beijingfengtai"; "" for text that is not Latin."""
    t = unicodedata.normalize("NFKD", text.strip().lower()).encode("ascii", "ignore").decode()
    if not t or len(t) < len(text.strip()) // 2:
        return ""
    t = re.sub(r"[^a-z]", "", t)
    return _STATION_WORDS.sub("", t)


def _with_direction(key: str) -> str:
    for word, pinyin in _DIRECTIONS.items():
        if key.endswith(word):
            return key[: -len(word)] + pinyin
    return key
