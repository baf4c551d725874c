"""Names a reader of English can read: "北京南 (Beijing South)", "故宫博物院 (The Palace Museum)".

The rule: an English plan shows the Chinese name with an English one beside it, a Chinese plan
the Chinese name alone. The English name is the data's where the data has one (cities,
airports and sights in tools/travel/data/*.json; the hotel brands below), composed from those
where a name is built of them (a station is its city and a direction, a sandbox hotel its brand
and its area), and pinyin (pypinyin) for whatever is left.

A name is read greedily from the left: the longest known Chinese word at each place becomes its
English, characters no word covers become one pinyin word ("外滩" -> "Waitan").
"""

from __future__ import annotations

import functools
import re

from pypinyin import lazy_pinyin

from tools.travel.geo import Gazetteer

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LONGEST_WORD = 16
_DIRECTIONS = {"东": "East", "西": "West", "南": "South", "北": "North"}
# Hotel brands of the sandbox (tools/travel/sandbox/hotels.py) and their own English names;
# True: the English name already says what it is (an Inn, a Hotel).
_BRANDS: dict[str, tuple[str, bool]] = {
    "如家": ("Home Inn", True), "汉庭": ("Hanting", False), "7天": ("7 Days Inn", True),
    "锦江之星": ("Jinjiang Inn", True), "全季": ("JI Hotel", True), "亚朵": ("Atour", False),
    "维也纳": ("Vienna", False), "桔子": ("Orange", False), "希尔顿欢朋": ("Hampton by Hilton", True),
    "智选假日": ("Holiday Inn Express", True), "丽枫": ("Lavande", False), "万豪": ("Marriott", False),
    "希尔顿": ("Hilton", False), "洲际": ("InterContinental", False), "香格里拉": ("Shangri-La", False),
    "凯悦": ("Hyatt", False), "喜来登": ("Sheraton", False), "皇冠假日": ("Crowne Plaza", False),
    "开元": ("New Century", False),
}
# Words of many names; "店" (a branch) says nothing in English.
_WORDS = {
    "连锁酒店": "Hotel", "酒店": "Hotel", "宾馆": "Hotel", "饭店": "Hotel", "大酒店": "Hotel", "店": "",
    "市中心": "City Centre", "中心": "Centre", "站": "Station", "火车站": "Railway Station", "机场": "Airport",
    "国际机场": "International Airport", "航站楼": "Terminal",
}


class PlaceNames:
    """Chinese place names to English, from the gazetteer's data (a read-only table)."""

    def __init__(self, gazetteer: Gazetteer) -> None:
        words: dict[str, str] = dict(_WORDS)
        for brand, (english, complete) in _BRANDS.items():
            words[brand] = english
            for suffix in ("连锁酒店", "酒店"):
                words[brand + suffix] = english if complete else f"{english} Hotel"
        cities = {c.name_zh: c.name_en for c in gazetteer.cities}
        words.update(cities)
        for station in gazetteer.stations:
            words[station.name] = _station(station.name, cities)
        for airport in gazetteer.airports:
            words[airport.name_zh] = airport.name_en
        for poi in gazetteer.pois:
            if poi.name_en:
                words[poi.name_zh] = poi.name_en
        self._words = words

    @classmethod
    @functools.cache
    def packaged(cls) -> PlaceNames:
        """The table of the data shipped with the package, built once (it never changes)."""
        return cls(Gazetteer.load())

    def english(self, name: str) -> str:
        """The English (or pinyin) for `name`; a name without Chinese comes back as it is."""
        if not _CJK.search(name):
            return name
        known = self._words.get(name)
        if known:
            return known
        out: list[str] = []
        pending = ""  # Chinese no word covers: one pinyin word
        literal = ""  # anything else, as written
        i = 0
        while i < len(name):
            word = next((name[i:i + n] for n in range(min(_LONGEST_WORD, len(name) - i), 0, -1)
                         if name[i:i + n] in self._words), None)
            if word is not None:
                out += [_pinyin(pending), literal]
                pending = literal = ""
                english = self._words[word]
                # "The Bund" alone, but "Shanghai Bund" inside a longer name
                out.append(english.removeprefix("The ") if any(p.strip() for p in out) else english)
                i += len(word)
                continue
            ch = name[i]
            if _CJK.match(ch):
                out.append(literal)
                literal = ""
                pending += ch
            else:
                out.append(_pinyin(pending))
                pending = ""
                literal += {"（": "(", "）": ")", "，": ",", "·": " "}.get(ch, ch)
            i += 1
        out += [_pinyin(pending), literal]
        return _tidy(" ".join(part for part in out if part.strip()))

    def label(self, name: str, lang: str) -> str:
        """What a plan in `lang` shows: 北京南 (Beijing South) in English, 北京南 in Chinese."""
        if lang == "zh" or not _CJK.search(name):
            return name
        english = self.english(name)
        if not english or english == name:
            return name
        # "全季酒店(上海外滩店) (JI Hotel, Shanghai Bund)": brackets never nest
        flat = re.sub(r"\s*\(([^()]*)\)", r", \1", english).strip(", ")
        return f"{name} ({flat})"


def _station(name: str, cities: dict[str, str]) -> str:
    """北京南 -> Beijing South, 上海虹桥 -> Shanghai Hongqiao, 汉口 -> Hankou."""
    city = max((c for c in cities if name.startswith(c)), key=len, default="")
    if not city:
        return _pinyin(name)
    rest = name[len(city):]
    if not rest:
        return cities[city]
    return f"{cities[city]} {_DIRECTIONS.get(rest) or _pinyin(rest)}"


def _pinyin(text: str) -> str:
    return "".join(lazy_pinyin(text)).capitalize() if text else ""


def _tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\(\s+", "(", text)
    text = re.sub(r"\s+([),])", r"\1", text)
    text = re.sub(r"(\S)\(", r"\1 (", text)
    return text.replace("()", "").strip()
