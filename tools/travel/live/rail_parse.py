"""12306 left-ticket answers: the JSON envelope (pydantic) and the pipe-separated train rows.

A row is one train, its fields separated by "|": 35 fields in 2017, 47 in 2020, 49 in 2022, 57
in 2024 and 58 since 2025 (new fields are appended, the old positions stay; rows before the fares
field yp_info_new have no fares to show). Everything is a string. Quirks
real answers show (tests/fixtures/providers/12306/):
  - field 1 is the button text: "预订", "12点45分起售" (not on sale yet), "列车停运",
    "列车运行图调整,暂停发售", "23:00-06:00系统维护时间"; a train suspended that day has
    24:00, 24:00 and 99:59 for its times;
  - one train may come twice: from two stations of the city, or to two (G811 to 杭州东 and 杭州南);
  - seat counts are "有" (20 or more), a number, "无" (none), "*" (not on sale yet), "--" or "";
  - arrival is departure + duration (field 10), so overnight trains end the next day;
  - 无座 has no price field of its own: it is a yp_info_new group whose count is 3000 or more;
  - since 2024 a field near the end holds when sales open, as YYYYMMDDHHMM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from pydantic import BaseModel, Field

from tools.errors import ProviderError
from tools.travel.live.telecodes import StationTable
from tools.travel.models import Seat, Train

PROVIDER = "12306"
LABEL = "12306 (China Railway)"
SALE_DAYS = 15  # 12306 sells tickets for today and the next 14 days

# Field positions in a row of data.result (the layout of 12306's queryLeftTicket script).
BUTTON, TRAIN_NO, CODE, FROM, TO, DEPART, ARRIVE, LISHI, CAN_BUY = 1, 2, 3, 6, 7, 8, 9, 10, 11
YP_INFO_NEW = 39
MIN_FIELDS = 34
# seat class -> field with the seats left
LEFT_FIELD = {"优选一等座": 20, "高级软卧": 21, "软卧": 23, "一等卧": 23, "软座": 24, "特等座": 25, "无座": 26,
              "硬卧": 28, "二等卧": 28, "硬座": 29, "二等座": 30, "一等座": 31, "商务座": 32, "动卧": 33}
# seat code in yp_info_new -> seat class
SEAT_CODE = {"9": "商务座", "P": "特等座", "M": "一等座", "D": "优选一等座", "O": "二等座", "6": "高级软卧",
             "4": "软卧", "I": "一等卧", "J": "二等卧", "F": "动卧", "3": "硬卧", "2": "软座", "1": "硬座"}
TYPES = {"G": "高铁", "D": "动车", "C": "城际", "Z": "直达特快", "T": "特快", "K": "快速", "S": "市域", "Y": "旅游"}
PLENTY = 20  # 12306 shows "有" for 20 seats or more
_OPENS = re.compile(r"(\d{1,2})点(?:(\d{1,2})分)?起售")
_STAMP = re.compile(r"^\d{12}$")


class LeftTicketData(BaseModel):
    flag: str = ""
    map: dict[str, str] = Field(default_factory=dict)
    result: list[str] = Field(default_factory=list)


class LeftTicketAnswer(BaseModel):
    httpstatus: int = 200
    status: bool
    messages: str | list[str] = ""
    data: LeftTicketData | None = None
    c_url: str | None = None


@dataclass(frozen=True, slots=True)
class Skipped:
    """A row that is not a train one can take that day (suspended, not running)."""

    number: str
    reason: str


def _left(text: str) -> int:
    text = text.strip()
    if text == "有":
        return PLENTY
    return int(text) if text.isdigit() else 0  # "无", "*", "--", "" and anything new: none known


def seats(fields: list[str]) -> list[Seat]:
    """Prices from yp_info_new (10-character groups: seat code, price x10 in five digits, a count;
    a count of 3000 or more marks the standing-room fare) and seats left from the count fields."""
    info = fields[YP_INFO_NEW] if len(fields) > YP_INFO_NEW else ""
    out: dict[str, Seat] = {}
    for i in range(0, len(info) - 9, 10):
        chunk = info[i : i + 10]
        name = SEAT_CODE.get(chunk[0])
        if name is None or not chunk[1:].isdigit():
            continue
        if int(chunk[6:10]) >= 3000:
            name = "无座"
        if name in out:
            continue
        left = _left(fields[LEFT_FIELD[name]]) if name in LEFT_FIELD and len(fields) > LEFT_FIELD[name] else 0
        out[name] = Seat(seat=name, price=int(chunk[1:6]) / 10, left=left)
    return list(out.values())


def _hhmm(text: str) -> int:
    h, _, m = text.partition(":")
    if not (h.isdigit() and m.isdigit()):
        raise ValueError(text)
    return int(h) * 60 + int(m)


def sale_opens(fields: list[str], day: date) -> str | None:
    """When a train not yet on sale opens: the YYYYMMDDHHMM field of 2024+ rows, else the button
    text's time on the day the window reaches `day`."""
    m = _OPENS.search(fields[BUTTON])
    if m is None:
        return None
    for f in reversed(fields[-4:]):
        if _STAMP.match(f):
            return datetime.strptime(f, "%Y%m%d%H%M").strftime("%Y-%m-%d %H:%M")
    opens = day - timedelta(days=SALE_DAYS - 1)
    return f"{opens.isoformat()} {int(m.group(1)):02d}:{int(m.group(2) or 0):02d}"


def station_name(code: str, names: dict[str, str], table: StationTable) -> tuple[str, bool]:
    """The station's name and whether it is known (12306's own map, then the official table)."""
    if code in names:
        return names[code], True
    known = table.by_code(code)
    return (known.name, True) if known else (code, False)


def parse_row(row: str, day: date, names: dict[str, str], table: StationTable) -> Train | Skipped:
    fields = row.split("|")
    if len(fields) < MIN_FIELDS:
        raise ProviderError(f"{LABEL} answered with a train row in an unknown layout ({len(fields)} fields); "
                            "the live source may have changed, try again later", provider=PROVIDER)
    number, button = fields[CODE], fields[BUTTON].strip()
    if fields[LISHI] == "99:59" or "停运" in button or "暂停发售" in button:
        return Skipped(number, button or "not running")
    try:
        dep_min, lishi = _hhmm(fields[DEPART]), _hhmm(fields[LISHI])
    except ValueError:
        return Skipped(number, f"no times given ({button or 'no reason'})")
    depart = datetime(day.year, day.month, day.day) + timedelta(minutes=dep_min)
    arrive = depart + timedelta(minutes=lishi)
    frm, frm_known = station_name(fields[FROM], names, table)
    to, to_known = station_name(fields[TO], names, table)
    notes = [f"station code {c} is not in 12306's station table; shown by its code"
             for c, known in ((fields[FROM], frm_known), (fields[TO], to_known)) if not known]
    opens = sale_opens(fields, day)
    if opens:
        notes.append(f"not on sale yet: tickets go on sale at {opens} ({button}); fares are listed, seats unknown")
    elif fields[CAN_BUY] == "IS_TIME_NOT_BUY" and button:
        notes.append(f"12306 is not selling it right now ({button}); seat counts are from its last update")
    return Train(
        number=number, type=TYPES.get(number[:1], "普快"), from_station=frm, to_station=to,
        from_city=_city(fields[FROM], table), to_city=_city(fields[TO], table),
        depart=depart.strftime("%Y-%m-%d %H:%M"), arrive=arrive.strftime("%Y-%m-%d %H:%M"),
        duration_min=lishi, distance_km=0, stops=[], seats=seats(fields),
        sale_opens=opens, note="; ".join(notes) or None,
    )


def _city(code: str, table: StationTable) -> str:
    known = table.by_code(code)
    return known.city if known else ""


def codes_of(row: str) -> tuple[str, str]:
    fields = row.split("|")
    return (fields[FROM], fields[TO]) if len(fields) > TO else ("", "")
