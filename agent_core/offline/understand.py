"""Fold a conversation into one trip request: the first message, answers, follow-ups, in order."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date

from agent_core.offline.numbers import EN_NUM, NUM, to_int
from agent_core.offline.places import PlaceReader
from agent_core.offline.request import TripRequest, detect_lang, read_wishes
from agent_core.offline.transcript import Transcript, Turn
from tools.travel.geo import City

_OPTION_CITY = re.compile(r"[（(][^（()）]*[)）]$")
# thanks and acknowledgements after a plan: nothing to change
_THANKS = re.compile(
    r"^(?:thanks?(?: you)?(?: so much| a lot)?|thx|ty|ok(?:ay)?|great|cool|nice|perfect|awesome|good|got it|"
    r"谢谢(?:你|您|啦)?|多谢|感谢|好的?|行|可以|太好了|不错|收到|明白了?|辛苦了)[\s!.。！~,，]*$",
    re.I,
)


# a change of length relative to the plan: "one more night", "多住一晚", "少住一晚"
_MORE_NIGHTS = re.compile(rf"多(?:住|玩|待|呆)\s*(?P<zh>{NUM})?\s*(?:个)?[晚天夜]|\b(?P<en>{EN_NUM})\s+(?:more|extra)\s+(?:night|day)s?\b", re.I)
_FEWER_NIGHTS = re.compile(rf"少(?:住|玩|待|呆)\s*(?P<zh>{NUM})?\s*(?:个)?[晚天夜]|\b(?P<en>{EN_NUM})\s+(?:night|day)s?\s+(?:less|fewer|shorter)\b|\bone\s+(?:night|day)\s+less\b", re.I)


def _length_change(text: str) -> int:
    for pattern, sign in ((_MORE_NIGHTS, 1), (_FEWER_NIGHTS, -1)):
        if m := pattern.search(text):
            return sign * (to_int(m.group("zh") or m.group("en") or "1") or 1)
    return 0


def is_thanks(text: str) -> bool:
    return bool(_THANKS.match(text.strip()))


@dataclass(slots=True)
class Understanding:
    request: TripRequest
    lang: str
    wanted_pois: list[str] = field(default_factory=list)  # sights the person named
    thanks: bool = False  # the person's last message only thanks or acknowledges
    landmark_choice: str | None = None  # the place picked from our own options
    new_info: bool = True  # whether the person's last message said anything we can use
    # further destinations named with the first ("先去上海，再去杭州"): planned one at a time
    more_destinations: list[City] = field(default_factory=list)


def _place_from_answer(turn: Turn, reader: PlaceReader) -> str:
    text = turn.text.strip()
    if text in turn.options:
        return text
    mentions = reader.mentions(text)
    known = [m for m in mentions if m.city is not None]
    if known:
        return known[0].text
    return text.strip("。.!！ ")


def understand(t: Transcript, reader: PlaceReader, today: date) -> Understanding:
    req = TripRequest()
    if t.last_plan is not None:
        # The first message may have left the memory window; the last plan still says what the trip is.
        p = t.last_plan
        req = TripRequest(origin=p.origin_city, destination=p.destination_city,
                          start=date.fromisoformat(p.start_date), end=date.fromisoformat(p.end_date),
                          travellers=p.travellers)
    lang = t.clock.lang if t.clock and t.clock.lang else None
    u = Understanding(request=req, lang=lang or "zh")
    first_text = next((turn.text for turn in t.turns if turn.slot is None), None)
    if lang is None and first_text:
        u.lang = detect_lang(first_text)
    for turn in t.turns:
        if turn.slot is not None and turn.slot.startswith("home_"):
            continue  # a team traveller's home city: the team planner reads it (agent_core.offline.team)
        update = read_wishes(turn.text, today)
        if turn.slot is None and (change := _length_change(turn.text)) and u.request.trip_nights is not None:
            update = replace(update, nights=max(0, u.request.trip_nights + change), days=None)
        places: dict[str, str] = {}
        if turn.slot in ("origin", "destination"):
            places[turn.slot] = _place_from_answer(turn, reader)
        elif turn.slot == "landmark":
            choice = turn.text.strip()
            u.landmark_choice = choice
            update = replace(update, landmark=_OPTION_CITY.sub("", choice) or choice)
        else:
            destinations: list[City] = []
            for m in reader.mentions(turn.text):
                if m.role in ("origin", "destination") and m.role not in places:
                    places[m.role] = m.text
                if m.role == "destination" and m.city is not None and m.city not in destinations:
                    destinations.append(m.city)
            if destinations:  # a message naming where to go replaces what earlier ones named
                u.more_destinations = destinations[1:]
                if turn.after_plan and _another_trip(destinations[0], u.request, reader):
                    # A new destination after a plan is another trip: nothing of the last one
                    # (its date above all) carries over unasked.
                    u.request = TripRequest()
                    u.landmark_choice = None
                    u.wanted_pois = []
        if turn.slot != "landmark" and update.landmark and u.request.landmark != update.landmark:
            u.landmark_choice = None  # a new "near X" wish: the earlier pick no longer applies
        update = replace(update, lang=None, **places)  # type: ignore[arg-type]
        u.request = u.request.merged(update)
        if turn.slot is None:
            u.new_info = update != TripRequest()
            u.thanks = is_thanks(turn.text)
    return u


def _another_trip(destination: City, current: TripRequest, reader: PlaceReader) -> bool:
    if not current.destination:
        return False
    known = [m.city for m in reader.mentions(current.destination) if m.city is not None]
    return bool(known) and known[0].id != destination.id
