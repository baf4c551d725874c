"""12306 left-ticket answers: the JSON envelope (pydantic) and the pipe-separated train rows."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from pydantic import BaseModel, Field

from tools.errors import ProviderError
from tools.travel.models import Seat, Train

PROVIDER = "12306"
LABEL = "12306 (China Railway)"

# Field positions in a row of data.result (the layout of 12306's queryLeftTicket script).
TRAIN_NO, CODE, FROM, TO, DEPART, ARRIVE, LISHI, CAN_BUY = 2, 3, 6, 7, 8, 9, 10, 11
YP_INFO_NEW = 39
MIN_FIELDS = 36
# seat class -> field with the seats left ("有", "无", "", "*" or a number)
LEFT_FIELD = {"高级软卧": 21, "软卧": 23, "软座": 24, "特等座": 25, "无座": 26, "硬卧": 28, "硬座": 29,
              "二等座": 30, "一等座": 31, "商务座": 32, "动卧": 33}
# seat code in yp_info_new -> seat class
SEAT_CODE = {"9": "商务座", "P": "特等座", "M": "一等座", "O": "二等座", "6": "高级软卧", "4": "软卧",
             "F": "动卧", "3": "硬卧", "2": "软座", "1": "硬座"}
TYPES = {"G": "高铁", "D": "动车", "C": "城际", "Z": "直达特快", "T": "特快", "K": "快速"}
PLENTY = 20  # 12306 shows "有" for 20 seats or more


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


def _left(text: str) -> int:
    text = text.strip()
    if text == "有":
        return PLENTY
    return int(text) if text.isdigit() else 0


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
        left = _left(fields[LEFT_FIELD[name]]) if name in LEFT_FIELD else 0
        out[name] = Seat(seat=name, price=int(chunk[1:6]) / 10, left=left)
    return list(out.values())


def _hhmm(text: str) -> int:
    h, _, m = text.partition(":")
    if not (h.isdigit() and m.isdigit()):
        raise ValueError(text)
    return int(h) * 60 + int(m)


def parse_row(row: str, day: date, names: dict[str, str], city_of: dict[str, str]) -> Train | None:
    """One train; None for rows that are not on sale as a through journey (no times)."""
    fields = row.split("|")
    if len(fields) < MIN_FIELDS:
        raise ProviderError(f"{LABEL} answered with a train row in an unknown layout ({len(fields)} fields); "
                            "the live source may have changed, try again later", provider=PROVIDER)
    number = fields[CODE]
    if fields[LISHI] == "99:59" or fields[CAN_BUY] == "IS_TIME_NOT_BUY":
        return None  # suspended or not running that day
    try:
        dep_min, lishi = _hhmm(fields[DEPART]), _hhmm(fields[LISHI])
    except ValueError:
        return None
    depart = datetime(day.year, day.month, day.day) + timedelta(minutes=dep_min)
    arrive = depart + timedelta(minutes=lishi)
    frm = names.get(fields[FROM], fields[FROM])
    to = names.get(fields[TO], fields[TO])
    return Train(
        number=number, type=TYPES.get(number[:1], "普快"), from_station=frm, to_station=to,
        from_city=city_of.get(frm, ""), to_city=city_of.get(to, ""),
        depart=depart.strftime("%Y-%m-%d %H:%M"), arrive=arrive.strftime("%Y-%m-%d %H:%M"),
        duration_min=lishi, distance_km=0, stops=[], seats=seats(fields),
    )


def codes_of(row: str) -> tuple[str, str]:
    fields = row.split("|")
    return (fields[FROM], fields[TO]) if len(fields) > TO else ("", "")
