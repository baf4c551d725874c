"""What a person asked for, as data: one message's wishes, or a whole trip's once merged.

`read_wishes` (agent_core.offline.wishes) reads one message into a `TripRequest` whose fields
are None where the message says nothing; `merged` lays a newer one over an older one, so the
request of a conversation is its first message with every later one laid over it in order
(agent_core.offline.state does the folding and the changes that are relative to the trip).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from datetime import date, timedelta

from agent_core.offline.dates import WeekdayClash

TRANSPORTS = ("train", "flight")
BUDGET_STARS = 2  # the hotel class of "a budget hotel", "经济型": the sandbox's 经济型 brands are 2-star
LEVEL_NAMES = {2: "经济型", 3: "舒适型", 4: "高档型", 5: "豪华型"}  # hotel_search's level_name by class


@dataclass(frozen=True, slots=True)
class TripRequest:
    """Every field is None when the person has not said it (so a later message can override)."""

    origin: str | None = None  # place text as the person wrote it, or a city name
    destination: str | None = None
    start: date | None = None
    end: date | None = None
    end_written: bool | None = None  # said alone for the way back, as a calendar date (not "Sunday")
    start_text: str | None = None  # the words that gave the start date
    start_written: bool | None = None  # the start is a calendar date the person wrote (or moved from one)
    days: int | None = None
    nights: int | None = None
    budget: float | None = None  # CNY for the whole party
    travellers: int | None = None
    transport: str | None = None  # "train" | "flight"
    seat: str | None = None
    breakfast: bool | None = None
    stars: int | None = None  # hotel class: 2 budget (经济型), 3 comfort, 4 upscale, 5 luxury
    landmark: str | None = None  # "near X" for the hotel
    depart_after: str | None = None  # "HH:MM"
    depart_before: str | None = None
    return_after: str | None = None  # "HH:MM": when to come back (the last day)
    return_before: str | None = None
    arrive_before: str | None = None  # "HH:MM": be there by then on the first day (an appointment)
    one_way: bool | None = None
    overnight: bool | None = None  # False: no ride that arrives the next day ("不要夜车")
    hard_seat: bool | None = None  # False: never a hard seat, even when cheapest ("不要硬座")
    home_stay: bool | None = None  # True: going home, staying with family ("春节回老家"): no hotel, no sights
    cheaper: int | None = None  # how many times the person asked for cheaper
    month: date | None = None  # only a month was named ("in May"): its first day
    clash: WeekdayClash | None = None  # a weekday that disagrees with the date written with it
    lang: str | None = None

    def merged(self, newer: TripRequest) -> TripRequest:
        """This request updated with everything `newer` states; `cheaper` counts up. A new start
        moves the whole trip and keeps its length; a new length counts from the start."""
        changes = {f.name: getattr(newer, f.name) for f in fields(self) if getattr(newer, f.name) is not None}
        if newer.cheaper:
            changes["cheaper"] = (self.cheaper or 0) + newer.cheaper
        if newer.start is not None:
            changes.setdefault("clash", None)  # a date that settles the day settles the question about it
            changes.setdefault("month", None)
        if (newer.days is not None or newer.nights is not None) and newer.end is None:
            changes["end"] = None
            changes.setdefault("days", None)
            changes.setdefault("nights", None)
        elif newer.start is not None and newer.end is None:
            changes["end"] = None
            if self.start and self.end and self.days is None and self.nights is None:
                changes["nights"] = (self.end - self.start).days
        elif newer.end is not None:
            changes.setdefault("days", None)
            changes.setdefault("nights", None)
            if newer.start is None and self.start is not None and newer.end < self.start and not newer.end_written:
                # "come back Monday" on a trip that starts Saturday: the Monday after it
                weeks = (self.start - newer.end).days // 7 + 1
                changes["end"] = newer.end + timedelta(days=7 * weeks)
        changes.pop("end_written", None)
        return replace(self, **changes)

    @property
    def avoid_seats(self) -> frozenset[str]:
        """Seat classes never to buy: a hard seat (and standing) once the person said no."""
        return frozenset({"硬座", "无座"}) if self.hard_seat is False else frozenset()

    @property
    def trip_nights(self) -> int | None:
        if self.start and self.end:
            return max(0, (self.end - self.start).days)
        if self.nights is not None:
            return self.nights
        if self.days is not None:
            return max(0, self.days - 1)
        return None

    def with_nights(self, nights: int) -> TripRequest:
        """The same trip, `nights` long from its start."""
        return replace(self, end=None, days=None, nights=nights)

    def shifted(self, days: int) -> TripRequest:
        """The whole trip `days` later (earlier when negative), its length kept."""
        if self.start is None:
            return self
        end = self.end + timedelta(days=days) if self.end else None
        return replace(self, start=self.start + timedelta(days=days), end=end, start_text=None, clash=None)

    def stated(self) -> dict[str, object]:
        """The fields the person has stated (for comparing what a change changed)."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) is not None and f.name not in ("lang", "start_text", "end_written")}
