"""Place names in free text: cities (Chinese, English, pinyin), stations, and names the gazetteer
does not know, read as origin or destination by the words around them (从/去/from/to ...).

The planner's "knowledge of geography" is the sandbox gazetteer, as a language model's would be
its training; facts for the plan itself still come from the tools.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pypinyin import lazy_pinyin

from tools.travel.errors import UnknownCityError
from tools.travel.geo import City, Gazetteer, Poi, haversine_km, normalize

_ORIGIN_BEFORE = re.compile(r"(?:从|由|自|在|\bfrom|\bleaving|\bdeparting(?: from)?|\bi'?m in|\bi am in|\bbased in)\s*$", re.I)
_ORIGIN_AFTER = re.compile(r"^\s*(?:出发|动身|走|启程|\bdeparture)", re.I)
_DEST_BEFORE = re.compile(r"(?:去|到|往|飞|至|抵达|前往|回|游|\bto|\bvisit(?:ing)?|\bin|\bfor|\bfly(?:ing)?(?: to)?)\s*$", re.I)
_DEST_AFTER = re.compile(r"^\s*(?:玩|旅游|旅行|游|度假|出差|看看|逛逛|转转|\d+日游|[一二两三四五六七八九十]日游|\btrip|\bvisit)", re.I)
_NOT_A_CITY_AFTER = re.compile(r"(?:路|街|大街|大道|公园|饭店|烤鸭|大学)")

_RAW_ZH = re.compile(
    r"(?:去|到|前往|飞往?)\s*(?P<x>[\u4e00-\u9fffA-Za-z]{2,10}?)"
    r"(?=玩|旅游|旅行|游|看|出差|度假|过|住|待|呆|，|,|。|！|!|？|\?|\s|$|\d|[一二两三四五六七八九十]+[天日晚])"
)
_RAW_EN = re.compile(r"\b(?:to|visit|visiting)\s+(?P<x>[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*){0,2})")
_RAW_STOP = re.compile(r"玩|旅|哪|那里|这里|那儿|吧|吗|呢|看|一下|一趟|一次|出差|度假|酒店|火车|飞机|高铁|机场|明天|后天|周|星期|下周")
# words no place name starts with: "到也没关系" ("arriving late is fine") names no place
_NOT_A_PLACE_START = "也没不都就还很太可行好再又才吗呢吧了啊呀哦"
_EN_STOP = {"the", "a", "an", "go", "see", "visit", "plan", "book", "find", "make", "me", "my", "our", "travel",
            "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "next", "this",
            "january", "february", "march", "april", "may", "june", "july", "august", "september",
            "october", "november", "december", "dec", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
            "sep", "oct", "nov", "tomorrow", "today", "i", "we", "please", "it", "there", "back"}


@dataclass(frozen=True, slots=True)
class PlaceMention:
    text: str
    start: int
    end: int
    city: City | None  # None: the gazetteer does not know the name
    station: str | None = None
    role: str | None = None  # "origin" | "destination" | None


@dataclass(frozen=True, slots=True)
class Resolution:
    """What a place name means: one city, several candidates, or nothing (with close matches)."""

    name: str
    city: City | None = None
    options: tuple[str, ...] = ()
    ambiguous: bool = False
    poi: Poi | None = None  # the name was a sight, and this is the one
    region: bool = False  # the name is a province or a country: the options are its cities


# the countries the sandbox has cities in, as an English request names them (the data names them in Chinese)
_COUNTRY_EN = {"JP": "Japan", "KR": "Korea", "SG": "Singapore", "TH": "Thailand", "MY": "Malaysia", "ID": "Indonesia",
               "PH": "Philippines", "VN": "Vietnam", "AU": "Australia", "NZ": "New Zealand", "AE": "UAE", "TR": "Turkey",
               "GB": "UK", "FR": "France", "IT": "Italy", "ES": "Spain", "DE": "Germany", "NL": "Netherlands",
               "AT": "Austria", "CZ": "Czechia", "CH": "Switzerland", "RU": "Russia", "US": "USA", "CA": "Canada",
               "EG": "Egypt", "IN": "India"}


class PlaceReader:
    """Finds and resolves place names; built once per planner from the gazetteer."""

    def __init__(self, gazetteer: Gazetteer) -> None:
        self.gazetteer = gazetteer
        zh: dict[str, tuple[City, str | None]] = {}
        en: dict[str, tuple[City, str | None]] = {}
        for c in gazetteer.cities:
            zh[c.name_zh] = (c, None)
            for name in {c.name_en, c.name_en.removesuffix(" City")}:
                en[name.lower()] = (c, None)
            if c.in_mainland:  # pinyin of foreign cities collides with real names (bali = 巴黎)
                en.setdefault(c.pinyin.lower(), (c, None))
        for s in gazetteer.stations:
            if s.name not in zh:
                zh[s.name] = (gazetteer.city(s.city_id), s.name)
        self._names = {**zh, **en}
        # a province or a country names its cities ("去云南": 昆明, 丽江 or 大理; "日本": 东京, 大阪, ...)
        self._regions: dict[str, list[City]] = {}
        for c in sorted(gazetteer.cities, key=lambda c: -c.population):
            if not c.in_mainland and c.country != "中国":
                keys: tuple[str, ...] = (c.country, _COUNTRY_EN.get(c.country_code, ""))
            elif c.province and c.province != c.name_zh:
                keys = (c.province, "".join(lazy_pinyin(c.province)))
            else:
                continue
            for key in filter(None, keys):
                if key.lower() not in self._names:  # 新加坡 is its city
                    self._regions.setdefault(key.lower(), []).append(c)
        region_alt = "|".join(sorted((re.escape(n) for n in self._regions), key=len, reverse=True))
        self._region_pattern = re.compile(rf"(?:{region_alt})(?:省|自治区)?|\b(?:{region_alt})\b", re.I)
        zh_alt = "|".join(sorted((re.escape(n) for n in zh), key=len, reverse=True))
        en_alt = "|".join(sorted((re.escape(n) for n in en), key=len, reverse=True))
        self._pattern = re.compile(rf"(?P<zh>{zh_alt})|\b(?P<en>{en_alt})\b", re.I)

    # -- finding ------------------------------------------------------------------------------
    def mentions(self, text: str) -> list[PlaceMention]:
        """Known and unknown place names in `text`, each with its role when the words say it."""
        found: list[PlaceMention] = []
        for m in self._pattern.finditer(text):
            if _NOT_A_CITY_AFTER.match(text, m.end()):
                continue
            city, station = self._names[m.group(0) if m.group("zh") else m.group(0).lower()]
            found.append(PlaceMention(m.group(0), m.start(), m.end(), city, station))
        for m in self._region_pattern.finditer(text):  # resolved later: which of its cities
            if not any(f.start < m.end() and m.start() < f.end for f in found):
                found.append(PlaceMention(m.group(0), m.start(), m.end(), None))
        for raw in (_RAW_ZH, _RAW_EN):
            for m in raw.finditer(text):
                x = m.group("x").strip()
                if any(f.start < m.end("x") and m.start("x") < f.end for f in found):
                    continue
                if _RAW_STOP.search(x) or x.split()[0].lower() in _EN_STOP or x[0] in _NOT_A_PLACE_START:
                    continue
                found.append(PlaceMention(x, m.start("x"), m.end("x"), None))
        found.sort(key=lambda f: f.start)
        return _with_roles(text, found)

    # -- resolving ----------------------------------------------------------------------------
    def resolve(self, name: str) -> Resolution:
        known = self._names.get(name) or self._names.get(name.lower())
        if known:
            return Resolution(name, city=known[0])
        try:
            return Resolution(name, city=self.gazetteer.resolve_city(name))
        except UnknownCityError as exc:
            if exc.ambiguous:
                return Resolution(name, options=tuple(exc.suggestions), ambiguous=True)
            suggestions = tuple(exc.suggestions)
        region = self._regions.get(re.sub(r"(?:省|自治区|\s+province)$", "", name.strip(), flags=re.I).lower())
        if region:
            if len(region) == 1:
                return Resolution(name, city=region[0])
            return Resolution(name, options=tuple(c.label for c in region), ambiguous=True, region=True)
        pois = self.gazetteer.find_places(None, name, limit=10)
        low = name.lower()
        exact = [p for p in pois if low in (p.name_zh.lower(), p.name_en.lower())
                 or (len(name) >= 2 and p.name_zh.startswith(name) and p.name_zh[len(name)] in "(（")
                 or p.name_en.lower().startswith(low + " (")]
        if exact:
            if len(exact) == 1:
                return Resolution(name, city=self.gazetteer.city(exact[0].city_id), poi=exact[0])
            labels = tuple(self.poi_label(p) for p in exact)
            return Resolution(name, options=labels, ambiguous=True)
        return Resolution(name, options=suggestions)

    def near(self, city: City, count: int = 4, max_km: float = 500) -> list[City]:
        """Cities a short trip from `city` (50-500 km: a trip, not a suburb), the better known
        first (the larger tiers), the nearer first within a tier."""
        away = ((c, haversine_km(city.lat, city.lon, c.lat, c.lon)) for c in self.gazetteer.cities
                if c.id != city.id and c.in_mainland == city.in_mainland)
        around = sorted((c.tier, km, c.name_zh, c) for c, km in away if 50 <= km <= max_km)
        return [c for *_, c in around][:count]

    def sight_in(self, city: City, name: str) -> Poi | None:
        """The sight of `city` a name points at, written whole or in part ("迪士尼" for
        上海迪士尼乐园, "Disneyland" for Shanghai Disneyland); None when it names none or several."""
        q = normalize(name)
        if len(q) < 2:
            return None
        found = [p for p in self.gazetteer.pois_in(city) if q in normalize(p.name_zh) or q in normalize(p.name_en)]
        return found[0] if len(found) == 1 else None

    def poi_label(self, poi: Poi) -> str:
        return f"{poi.name_zh}（{self.gazetteer.city(poi.city_id).name_zh}）"

    def resolve_option(self, label: str) -> Resolution:
        """An answer that repeats one of our own option labels ("上海 (Shanghai)", "万达广场(CBD店)（北京）")."""
        for p in self.gazetteer.pois:
            if self.poi_label(p) == label:
                return Resolution(label, city=self.gazetteer.city(p.city_id), poi=p)
        for c in self.gazetteer.cities:
            if c.label == label:
                return Resolution(label, city=c)
        return self.resolve(label)


def _with_roles(text: str, found: list[PlaceMention]) -> list[PlaceMention]:
    roles: list[str | None] = []
    for f in found:
        before, after = text[max(0, f.start - 12) : f.start], text[f.end : f.end + 8]
        if _ORIGIN_BEFORE.search(before) or _ORIGIN_AFTER.match(after):
            roles.append("origin")
        elif _DEST_BEFORE.search(before) or _DEST_AFTER.match(after):
            roles.append("destination")
        else:
            roles.append(None)
    # "北京到上海", "Beijing - Shanghai": a place without a marker before a destination is the origin
    dest_at = next((i for i, r in enumerate(roles) if r == "destination"), None)
    for i, r in enumerate(roles):
        if r is None:
            if "destination" not in roles:
                roles[i] = "destination" if ("origin" in roles[:i] or (i == len(roles) - 1 and "origin" in roles)) else None
            elif dest_at is not None and i < dest_at and "origin" not in roles:
                roles[i] = "origin"
    unassigned = [i for i, r in enumerate(roles) if r is None]
    if unassigned and "destination" not in roles:
        if len(unassigned) >= 2 and "origin" not in roles:
            roles[unassigned[0]], roles[unassigned[1]] = "origin", "destination"
        else:
            roles[unassigned[-1]] = "destination"
    return [PlaceMention(f.text, f.start, f.end, f.city, f.station, r) for f, r in zip(found, roles, strict=True)]
