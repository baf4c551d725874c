"""The request state: the trip on the table, as data — the first request plus every change the
person asked for since, folded from their words in order.

Only a person's words count (agent_core.offline.transcript drops the bot's own notes). A
message after the first is one of:
- another trip: it names a route of its own, a team with their home cities, or says so
  ("another trip"); nothing of the current trip carries over;
- a change to the trip on the table: cheaper, one more night, a day later, by plane, another
  hotel class, one more person, another destination or origin, a traveller added or dropped,
  new dates, a budget... Everything it does not name is kept (direction, dates, party, budget).
  A change that cannot be made (an unknown place, a date in the past, fewer than no nights) is
  refused: the state stays as it was and says why;
- a remark that changes nothing: thanks, feedback, a question about the plan.
Answers to the planner's questions fill in what they were asked for.

The offline planner plans from this state, the Validator grades against it (reading the same
words itself, never the planner's output), and a real model is shown it (agent_core.prompts).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from enum import StrEnum

from agent_core.lang import plural
from agent_core.offline.changes import (
    ASKS_FOR,
    QUESTION_ABOUT_PLAN,
    Relative,
    Remark,
    kind_of_remark,
    read_relative,
)
from agent_core.offline.dates import weekday_near
from agent_core.offline.places import PlaceMention, PlaceReader
from agent_core.offline.request import TripRequest
from agent_core.offline.request_diff import Change, diff
from agent_core.offline.ride_times import moved
from agent_core.offline.transcript import Transcript, Turn
from agent_core.offline.wishes import detect_lang, read_wishes
from agent_core.party import Traveller, read_party
from tools.plan import TripPlan
from tools.travel.geo import City


class Said(StrEnum):
    """What the person's last message was, for the trip."""

    NOTHING = "nothing"
    REQUEST = "request"  # a trip asked for (the first, or another one)
    CHANGE = "change"  # a change to the trip on the table (`last_changes`; empty: it already was so)
    ANSWER = "answer"  # an answer to one of the planner's questions
    REMARK = "remark"  # thanks, feedback, a question: nothing to change (`remark`)


@dataclass(frozen=True, slots=True)
class Refusal:
    """A change that cannot be made: a text key of agent_core.offline.texts and its values."""

    key: str
    values: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class RequestState:
    request: TripRequest
    lang: str
    first: str | None = None  # the message that asked for this trip (None: before the memory window)
    texts: tuple[str, ...] = ()  # the person's words about this trip, in order
    party: tuple[Traveller, ...] = ()  # a team's travellers with their home cities (empty: one party)
    changes: tuple[Change, ...] = ()  # every change since the first request
    last: Said = Said.NOTHING
    last_changes: tuple[Change, ...] = ()
    last_text: str = ""
    remark: Remark | None = None
    refused: Refusal | None = None
    wanted_pois: tuple[str, ...] = ()  # sights the person named as the place to go
    landmark_choice: str | None = None  # the place picked from the planner's own options
    more_destinations: tuple[City, ...] = ()  # further places named with the first ("then to Hangzhou")

    @property
    def team(self) -> bool:
        return len(self.party) >= 2

    @property
    def travellers(self) -> int:
        return len(self.party) if self.team else (self.request.travellers or 1)


def place_from_answer(turn: Turn, places: PlaceReader) -> str:
    text = turn.text.strip()
    if text in turn.options:
        return text
    known = [m for m in places.mentions(text) if m.city is not None]
    return known[0].text if known else text.strip("。.!！ ")


@dataclass(slots=True)
class _Fold:
    places: PlaceReader
    today: date
    s: RequestState
    sender_default: str = "me"
    plans: tuple[TripPlan, ...] = ()  # every plan given in the conversation, in order

    # -- messages ---------------------------------------------------------------------------
    def message(self, turn: Turn) -> None:
        text = turn.text
        rel = read_relative(text, self.s.party)
        plain = rel.blank(text)
        wishes = replace(read_wishes(plain, self.today), lang=None)
        mentions = self.places.mentions(plain)
        named = read_party(text)
        if (self.s.first is None and self.s.last is Said.NOTHING) or rel.new_trip or self._another_trip(turn, rel, mentions, named):
            # "不要太早的车" in a first request: not early, with no plan's ride to go by
            self.start(text, moved(wishes, None, leave=rel.leave_later, back=rel.back_later), mentions, named)
        else:
            self.change(turn, text, rel, wishes, mentions)

    def _another_trip(self, turn: Turn, rel: Relative, mentions: list[PlaceMention], named: list[Traveller]) -> bool:
        if len(named) >= 2 and not rel.joining:
            return {t.label.lower() for t in named} != {t.label.lower() for t in self.s.party}
        if not (turn.after_plan or turn.answered_before) or rel.instead:
            return False
        roles = {m.role for m in mentions}
        return {"origin", "destination"} <= roles

    def start(self, text: str, wishes: TripRequest, mentions: list[PlaceMention], named: list[Traveller]) -> None:
        party = tuple(named) if len(named) >= 2 else ()
        req = TripRequest().merged(wishes)
        origin, destination, further = self._places(mentions, party)
        req = replace(req, origin=origin, destination=destination)
        if party:
            req = replace(req, travellers=len(party), origin=None)
        self.s = RequestState(request=req, lang=self.s.lang, first=text, texts=(text,), party=party,
                              last=Said.REQUEST, last_text=text, more_destinations=tuple(further))

    def _places(self, mentions: list[PlaceMention], party: tuple[Traveller, ...], *,
                meeting: bool = True) -> tuple[str | None, str | None, list[City]]:
        """(origin, destination, further destinations) named; a traveller's home city is neither."""
        homes = {c.id for t in party if t.home_city and (c := self.places.resolve(t.home_city).city) is not None}
        origin = next((m.text for m in mentions if m.role == "origin" and not (m.city and m.city.id in homes)), None)
        dests = [m for m in mentions if m.role == "destination" and not (m.city and m.city.id in homes)]
        if meeting and party and not dests:  # a team meets in the city that is nobody's home
            dests = [m for m in mentions if m.city is not None and m.city.id not in homes]
        cities: list[City] = []
        for m in dests:
            if m.city is not None and m.city not in cities:
                cities.append(m.city)
        return origin, (dests[0].text if dests else None), cities[1:]

    def change(self, turn: Turn, text: str, rel: Relative, wishes: TripRequest, mentions: list[PlaceMention]) -> None:
        s, old = self.s, self.s.request
        if QUESTION_ABOUT_PLAN.search(text) and rel.empty and not rel.instead and not (wishes.stated() and ASKS_FOR.search(text)):
            self._remark(text, Remark.QUESTION)
            return
        origin, destination, further = self._places(mentions, (*s.party, *read_party(text)), meeting=False)
        wanted = s.wanted_pois
        if destination and (sight := self._sight_of_trip(destination)) is not None:
            # "第二天想去迪士尼": a sight of the city the trip goes to, not another destination
            destination, further = None, []
            wanted = (*wanted, sight) if sight not in wanted else wanted
        new = old.merged(replace(wishes, origin=origin, destination=destination))
        if new.start is not None and (near := weekday_near(wishes.start_text, old.start)) is not None:
            new = new.shifted((near - new.start).days)  # "make it Saturday": the trip's Saturday
        party = s.party
        refusal: Refusal | None = None
        for name in (destination, origin):
            res = self.places.resolve_option(name) if name else None
            if res is not None and res.city is None and not res.ambiguous and not res.options:
                refusal = refusal or Refusal("unknown_place", (("name", name or ""),))
        if rel.shift_days and new.start is not None:
            new = new.shifted(rel.shift_days)
        if rel.nights:
            nights = (new.trip_nights if new.trip_nights is not None else 1) + rel.nights
            if nights < 0:
                refusal = refusal or Refusal("too_short", (("nights", plural(new.trip_nights or 0, "night", self.s.lang)),))
            new = new.with_nights(max(0, nights))
        if rel.hotel_up:
            new = replace(new, stars=min(5, max(new.stars or 3, 3) + 1))
        if rel.leave_later or rel.back_later:  # "能不能晚点出发": later than the plan's ride
            shown = self.plans[turn.plans_before - 1] if 0 < turn.plans_before <= len(self.plans) else None
            new = moved(new, shown, leave=rel.leave_later, back=rel.back_later)
        if rel.joining:
            if not party:
                me = Traveller(turn.sender or self.sender_default, new.origin)
                party = (me,)
            party = (*party, *rel.joining)
        if rel.leaving:
            party = tuple(p for p in party if not any(p.named_by(who) for who in rel.leaving))
        if rel.travellers:
            if s.team and rel.travellers > 0:
                refusal = refusal or Refusal("who_joins")
            count = (len(party) if len(party) >= 2 else (new.travellers or 1)) + rel.travellers
            if count < 1:
                refusal = refusal or Refusal("nobody_left")
            new = replace(new, travellers=max(1, count))
        if len(party) == 1 and len(s.party) >= 2:  # one traveller left: a trip from their home
            new = replace(new, origin=party[0].home_city or new.origin, travellers=1)
            party = ()
        elif len(party) >= 2:
            new = replace(new, travellers=len(party))
        if new.start is not None and new.start != old.start and new.start < self.today:
            refusal = refusal or Refusal("past_date", (("day", new.start.isoformat()),))
        if new.start is not None and new.end is not None and new.end != old.end and new.end < new.start:
            refusal = refusal or Refusal("back_before_start", (("day", new.end.isoformat()), ("start", new.start.isoformat())))
        if refusal is not None:
            self.s = replace(s, last=Said.CHANGE, last_changes=(), last_text=text, remark=None, refused=refusal)
            return
        changes = diff(old, new)
        if party != s.party:
            changes.append(Change("party", tuple(t.label for t in s.party), tuple(t.label for t in party)))
        if wanted != s.wanted_pois:
            changes.append(Change("sights", s.wanted_pois, wanted))
        asked = bool(wishes.stated()) or origin is not None or destination is not None or not rel.empty
        remark = kind_of_remark(text)
        if remark is Remark.FEEDBACK and rel.empty and not rel.instead and {c.name for c in changes} <= {"transport"}:
            asked, changes = False, []  # "the train is too early" speaks of the plan's train; it asks for no train
        if not changes and not asked:
            self._remark(text, remark)
            return
        self.s = replace(s, request=new, party=party, texts=(*s.texts, text), changes=(*s.changes, *changes),
                         last=Said.CHANGE, last_changes=tuple(changes), last_text=text, remark=None, refused=None,
                         more_destinations=tuple(further) if destination else s.more_destinations,
                         wanted_pois=() if destination else wanted,
                         landmark_choice=None if new.landmark != old.landmark else s.landmark_choice)

    def _sight_of_trip(self, name: str) -> str | None:
        """The id of the sight `name` points at in the trip's destination city, when it is no city
        of its own."""
        if self.places.resolve(name).city is not None or not self.s.request.destination:
            return None
        city = self.places.resolve(self.s.request.destination).city
        sight = self.places.sight_in(city, name) if city is not None else None
        return sight.id if sight is not None else None

    def _remark(self, text: str, remark: Remark) -> None:
        self.s = replace(self.s, last=Said.REMARK, remark=remark, last_changes=(), last_text=text, refused=None)

    # -- answers to the planner's questions ------------------------------------------------------
    def answer(self, turn: Turn) -> None:
        s = self.s
        slot = turn.slot or ""
        texts = (*s.texts, turn.text)
        if slot.startswith("home_") and slot[5:].isdigit():
            k = int(slot[5:])
            if k < len(s.party):
                home = place_from_answer(turn, self.places)
                party = tuple(replace(p, home_city=home) if i == k else p for i, p in enumerate(s.party))
                self.s = replace(s, party=party, texts=texts, last=Said.ANSWER, last_text=turn.text)
            return
        update = replace(read_wishes(turn.text, self.today), lang=None)
        landmark_choice = s.landmark_choice
        if slot == "origin":
            update = replace(update, origin=place_from_answer(turn, self.places))
        elif slot == "destination":
            update = replace(update, destination=place_from_answer(turn, self.places))
        elif slot == "landmark":
            landmark_choice = turn.text.strip()
            update = replace(update, landmark=_without_city(landmark_choice))
        self.s = replace(s, request=s.request.merged(update), texts=texts, last=Said.ANSWER, last_text=turn.text,
                         landmark_choice=landmark_choice, refused=None, remark=None)


def _without_city(choice: str) -> str:
    """"万达广场(CBD店)（北京）" -> "万达广场(CBD店)": our option labels end with the city in brackets."""
    cut = choice.rfind("（")
    return choice[:cut] if cut > 0 and choice.endswith("）") else choice


def seed_from(plan: TripPlan) -> TripRequest:
    """The trip a plan is, when the request that asked for it has left the memory window."""
    return TripRequest(origin=None if plan.party else plan.origin_city, destination=plan.destination_city,
                       start=date.fromisoformat(plan.start_date), end=date.fromisoformat(plan.end_date),
                       start_written=True, travellers=plan.travellers)


def read_state(t: Transcript, places: PlaceReader, today: date) -> RequestState:
    """The request state of a conversation read back by agent_core.offline.transcript."""
    lang = t.clock.lang if t.clock and t.clock.lang else None
    first = next((turn for turn in t.turns if turn.slot is None), None)
    fold = _Fold(places, today, RequestState(TripRequest(), lang or (detect_lang(first.text) if first else "zh")),
                 plans=tuple(t.plans))
    if lang == "zh":
        fold.sender_default = "我"
    if first is not None and first.after_plan and t.plans:
        plan = t.plans[max(0, first.plans_before - 1)]
        party = tuple(Traveller(p.name, p.home_city) for p in plan.party)
        fold.s = replace(fold.s, request=seed_from(plan), party=party, last=Said.REQUEST)
    for turn in t.turns:
        if turn.slot is None:
            fold.message(turn)
        else:
            fold.answer(turn)
    return fold.s


__all__ = ["Change", "Refusal", "RequestState", "Said", "read_state"]
