"""A plan written only as text, read back into what can be checked: the rides (train and flight
numbers) with the date of their line and the times and prices next to them, and the hotels with
their prices.

Reading rules, so a correct text is not misread:
- a ride number is a train (G/D/C/Z/T/K and digits) or a flight (two-character airline code and
  3-4 digits); "T3航站楼", "2号线", "B出口" and the like are not rides;
- a line is cut into sentences at 。；; and a sentence into one segment per item mentioned: the
  text before the first item and up to the next item belongs to it (so "08:10 杭州东 → 13:05
  北京南 G7648 590.5元" gives G7648 both times and the fare);
- a ride's date is the first date written on its line (2027-03-10, 03-10, 3月10日); none, and
  the ride is matched on any day;
- a hotel is a name ending in 酒店/宾馆/饭店/… (with its branch in brackets), or English "… Hotel";
  words in front such as 入住/推荐 are cut off, and generic words (经济型酒店, 附近的酒店) are
  not names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

_TRAIN = r"[GDCZTK]\d{1,5}"
_FLIGHT = r"(?:[A-Z]{2}|[A-Z]\d|\d[A-Z])\d{3,4}"
_RIDE = re.compile(rf"(?<![A-Za-z0-9\-_/.])(?P<num>{_FLIGHT}|{_TRAIN})(?![A-Za-z0-9\-_])")
_NOT_A_RIDE_AFTER = re.compile(r"\s?(?:号?航站楼|terminal|出口|入口|口|号线|线|座|楼|层|区|号|门|栋|室|km|公里|分钟|min)", re.I)
_NOT_A_RIDE_BEFORE = re.compile(r"(?:terminal|航站楼|gate|登机口)\s?$", re.I)
_IS_TRAIN = re.compile(rf"^{_TRAIN}$")

_TIME = re.compile(r"(?<![\d:])(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?![\d:])")
_ISO_DATE = re.compile(r"(?<!\d)(?P<y>\d{4})-(?P<mo>\d{1,2})-(?P<d>\d{1,2})(?!\d)")
_SHORT_DATE = re.compile(r"(?<![\d\-:])(?P<mo>0?[1-9]|1[0-2])-(?P<d>[0-3]?\d)(?![\d\-:])")
_ZH_DATE = re.compile(r"(?:(?P<y>\d{4})年)?(?P<mo>\d{1,2})月(?P<d>\d{1,2})[日号]")
_PRICE = re.compile(
    r"(?:[¥￥]|RMB\s?|CNY\s?)(?P<a>\d+(?:,\d{3})*(?:\.\d+)?)|(?P<b>\d+(?:,\d{3})*(?:\.\d+)?)\s?(?:元|CNY|RMB|块|yuan)",
    re.I,
)
_SENTENCE = re.compile(r"[。；;\n]")
_SEAT = re.compile(r"商务座|一等座|二等座|硬座|软座|硬卧|软卧|经济舱|公务舱|头等舱")

_HOTEL_ZH = re.compile(
    r"(?P<name>[\u4e00-\u9fffA-Za-z0-9·&]{2,24}?(?:大酒店|酒店|宾馆|饭店|旅馆|客栈|民宿|度假村|公寓)(?:[(（][^()（）\n\d¥￥]{1,24}[)）])?)"
)
_HOTEL_EN = re.compile(r"(?P<name>(?:[A-Z][\w'&.-]*\s){1,5}(?:Hotel|Inn|Hostel|Resort|Suites)\b(?:\s?\([^()\n\d¥￥$]{1,30}\))?)")
_LEAD = re.compile(r"^.*(?:入住|住在|下榻|推荐|选择|选|预订|预定|备选|改住|换成|换到|可住|酒店：|住宿：|住：)")
_SUFFIX = re.compile(r"(?:大酒店|酒店|宾馆|饭店|旅馆|客栈|民宿|度假村|公寓|Hotel|Inn|Hostel|Resort|Suites)(?:\s?[(（][^()（）]*[)）])?$")
_GENERIC = frozenset({
    "经济型", "舒适型", "高档型", "豪华型", "快捷", "连锁", "附近", "周边", "当地", "市中心", "星级", "五星级", "四星级",
    "三星级", "商务", "精品", "青年", "特色", "主题", "度假", "这家", "该", "一家", "其他", "其它", "同一", "国际", "大", "小",
    "the", "a", "stay", "check", "day", "your", "our", "this", "that", "any", "same", "budget", "nearby", "local", "city",
})


@dataclass(frozen=True, slots=True)
class TextRide:
    kind: str  # "train" | "flight"
    number: str
    day: date | None
    times: tuple[str, ...]  # "HH:MM" written in its segment
    prices: tuple[float, ...]
    quote: str
    seat: str | None = None  # the seat or cabin class named in its segment


@dataclass(frozen=True, slots=True)
class TextHotel:
    name: str
    prices: tuple[float, ...]
    quote: str


@dataclass(frozen=True, slots=True)
class TextPlan:
    rides: tuple[TextRide, ...]
    hotels: tuple[TextHotel, ...]

    @property
    def empty(self) -> bool:
        return not self.rides and not self.hotels


def read_text_plan(text: str, today: date, known_hotels: tuple[str, ...] = ()) -> TextPlan:
    """The rides and hotels of `text`; `known_hotels`: names the run's tools returned, found in the
    text as they are even when the name pattern would not catch them."""
    year = _year(text, today)
    rides: list[TextRide] = []
    hotels: list[TextHotel] = []
    for line in text.splitlines():
        line_day = _first_date(line, year, today)
        for sentence in _SENTENCE.split(line):
            marks = _items(sentence, known_hotels)
            for n, (start, _end, what, name) in enumerate(marks):
                seg_start = 0 if n == 0 else start
                seg_end = marks[n + 1][0] if n + 1 < len(marks) else len(sentence)
                segment = sentence[seg_start:seg_end]
                quote = sentence.strip()[:160]
                prices = tuple(_prices(segment))
                if what == "hotel":
                    hotels.append(TextHotel(name, prices, quote))
                    continue
                # dates are not times: "03-10 08:20" keeps 08:20 only
                times = tuple(f"{int(m.group('h')):02d}:{m.group('m')}" for m in _TIME.finditer(segment))
                seat = _SEAT.search(segment)
                rides.append(TextRide("train" if _IS_TRAIN.match(name) else "flight", name, line_day, times, prices, quote,
                                      seat.group(0) if seat else None))
    return TextPlan(tuple(rides), tuple(hotels))


def _items(sentence: str, known_hotels: tuple[str, ...]) -> list[tuple[int, int, str, str]]:
    found: list[tuple[int, int, str, str]] = []
    for m in _RIDE.finditer(sentence):
        if _NOT_A_RIDE_AFTER.match(sentence, m.end()) or _NOT_A_RIDE_BEFORE.search(sentence[: m.start()]):
            continue
        found.append((m.start(), m.end(), "ride", m.group("num")))
    taken: list[tuple[int, int]] = []
    for name in sorted(known_hotels, key=len, reverse=True):
        at = sentence.find(name) if name else -1
        if at >= 0 and not any(a <= at < b for a, b in taken):
            found.append((at, at + len(name), "hotel", name))
            taken.append((at, at + len(name)))
    for pattern in (_HOTEL_ZH, _HOTEL_EN):
        for m in pattern.finditer(sentence):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            hotel = hotel_name(m.group("name"))
            if hotel is not None:
                found.append((m.start(), m.end(), "hotel", hotel))
                taken.append((m.start(), m.end()))
    found.sort()
    return found


def hotel_name(raw: str) -> str | None:
    """The hotel's own name from a match, or None when it is only a description."""
    name = _LEAD.sub("", raw.strip()).strip(" ：:,，、（(")
    core = _SUFFIX.sub("", name).strip()
    words = core.lower().split()
    if len(core) < 2 or core in _GENERIC or core.endswith(("的", "型", "级", "家")) or (words and all(w in _GENERIC for w in words)):
        return None
    return name


def _prices(segment: str) -> list[float]:
    out = []
    for m in _PRICE.finditer(segment):
        value = (m.group("a") or m.group("b") or "").replace(",", "")
        if value:
            out.append(float(value))
    return out


def _year(text: str, today: date) -> int:
    m = _ISO_DATE.search(text) or _ZH_DATE.search(text)
    return int(m.group("y")) if m and m.group("y") else today.year


def _first_date(line: str, year: int, today: date) -> date | None:
    for pattern in (_ISO_DATE, _ZH_DATE, _SHORT_DATE):
        m = pattern.search(line)
        if m is None:
            continue
        y = int(m.groupdict().get("y") or year)
        try:
            return date(y, int(m.group("mo")), int(m.group("d")))
        except ValueError:
            continue
    return None
