"""Fold a conversation into one trip request: the first message, answers, follow-ups, in order."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date

from agent_core.offline.places import PlaceReader
from agent_core.offline.request import TripRequest, detect_lang, read_wishes
from agent_core.offline.transcript import Transcript, Turn
from tools.travel.geo import City

_OPTION_CITY = re.compile(r"[（(][^（()）]*[)）]$")


@dataclass(slots=True)
class Understanding:
    request: TripRequest
    lang: str
    wanted_pois: list[str] = field(default_factory=list)  # sights the person named
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
        update = read_wishes(turn.text, today)
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
        if turn.slot != "landmark" and update.landmark and u.request.landmark != update.landmark:
            u.landmark_choice = None  # a new "near X" wish: the earlier pick no longer applies
        update = replace(update, lang=None, **places)  # type: ignore[arg-type]
        u.request = u.request.merged(update)
        if turn.slot is None:
            u.new_info = update != TripRequest()
    return u
