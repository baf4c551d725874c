"""The person's hard limits and wishes: the request state of the conversation (the first request
plus every change since, agent_core.offline.state, read by the Validator itself from the
person's words, never from the planner's output) and what to avoid, read here from the same
words, because a planner may prefer what a checker must not require.

Relative dates ("下周五") are left out: they depend on the run's clock, which a review may not
share, so only dates the person wrote out in full (or moved by a day or two) are enforced.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from agent_core.notes import origin_of
from agent_core.offline.dates import find_dates
from agent_core.offline.places import PlaceReader
from agent_core.offline.request import TripRequest
from agent_core.offline.state import RequestState, read_state
from agent_core.offline.transcript import Turn, read_transcript
from agent_core.offline.wishes import read_wishes
from agent_core.party import Traveller
from agent_core.schema import Message, Origin, Role

_ABSOLUTE = re.compile(r"月|\d{4}|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec", re.I)
_NO_FLIGHT = re.compile(r"(?:不|别|不要|不想|不坐|不乘|避免)\s*(?:坐|乘|搭)?\s*(?:飞机|航班)|不飞|no flights?|don'?t (?:want to )?fly|not fly|avoid flying|hate flying|no planes?", re.I)
_NO_TRAIN = re.compile(r"(?:不|别|不要|不想|避免)\s*(?:坐|乘|搭)?\s*(?:高铁|火车|动车)|no trains?\b|not by train|avoid trains?", re.I)
_ONLY_TRAIN = re.compile(r"只(?:坐|乘|搭)?(?:高铁|火车|动车)|only (?:by )?trains?|train only", re.I)
_ONLY_FLIGHT = re.compile(r"只(?:坐|乘|搭)?飞机|only (?:by )?(?:air|plane|flights?)|fly only", re.I)
_AVOID_ZH = re.compile(r"(?:不坐|不要|不想坐|不乘|别订|别坐|避开|不选|不考虑|拒绝)\s*(?P<x>[\u4e00-\u9fff]{2,8}?)(?:航空公司|航空|的航班|航班|的飞机)")
_AIRLINE_SHORT = re.compile(r"(?:不坐|不要|不想坐|不乘|别订|别坐|避开|不选|不考虑)\s*(?P<x>国航|东航|南航|海航|川航|厦航|深航|山航|吉祥|春秋)")
_AVOID_EN = re.compile(r"\b(?:avoid|no|not|never|don'?t (?:want|book|fly))\s+(?:with\s+|on\s+)?(?P<x>[A-Z][A-Za-z]+(?:\s+[A-Z][A-Za-z]+){0,2})\s+(?:airlines?|flights?)", re.I)
_AVOID_PLACE_ZH = re.compile(r"(?:不去|不想去|别去|避开|不要去|不逛)\s*(?P<x>[\u4e00-\u9fffA-Za-z0-9]{2,12}?)(?=[，,。.；;！!\s]|$|了|吧|啊)")
_AVOID_PLACE_EN = re.compile(r"\b(?:skip|avoid|not (?:go|going) to|don'?t (?:want to )?(?:go to|visit))\s+(?:the\s+)?(?P<x>[A-Z][\w' -]{1,40}?)(?=[,.;!?]|$|\s+(?:and|please)\b)", re.I)
_CABINS = [
    (re.compile(r"头等舱|first[\s-]class (?:cabin|seat|flight)", re.I), "头等舱"),
    (re.compile(r"公务舱|商务舱|business[\s-]class", re.I), "公务舱"),
    (re.compile(r"经济舱|economy", re.I), "经济舱"),
]
_AIRLINE_ALIASES = {
    "国航": ("国航", "中国国航", "Air China"), "东航": ("东航", "东方航空", "China Eastern"),
    "南航": ("南航", "南方航空", "China Southern"), "海航": ("海航", "海南航空", "Hainan"),
    "川航": ("川航", "四川航空", "Sichuan"), "厦航": ("厦航", "厦门航空", "Xiamen"),
    "深航": ("深航", "深圳航空", "Shenzhen"), "山航": ("山航", "山东航空", "Shandong"),
    "吉祥": ("吉祥", "吉祥航空", "Juneyao"), "春秋": ("春秋", "春秋航空", "Spring"),
}


@dataclass(frozen=True, slots=True)
class Constraints:
    request: TripRequest  # the merged wishes (dates, length, budget, party, seat, one-way)
    fixed_start: date | None = None  # written out in full by the person
    fixed_end: date | None = None
    forbidden_transport: frozenset[str] = frozenset()  # "train" | "flight"
    avoid_airlines: tuple[tuple[str, ...], ...] = ()  # each: the spellings of one airline
    avoid_places: tuple[str, ...] = ()
    cabin: str | None = None  # flight cabin the person asked for
    party: tuple[Traveller, ...] = ()  # a team's travellers, as the request state has them
    destination: str | None = None  # where the person asked to go, as they wrote it

    @property
    def travellers(self) -> int | None:
        return len(self.party) if len(self.party) >= 2 else self.request.travellers


def person_texts(request: str, messages: Sequence[Message]) -> list[str]:
    """What the person wrote, in order: the request, later messages, and answers to questions."""
    asked = {tc.id for m in messages if m.role is Role.ASSISTANT for tc in m.tool_calls or [] if tc.function.name == "ask_human"}
    texts = [request] if request else []
    for m in messages:
        text = (m.content or "").strip()
        if not text:
            continue
        said = origin_of(m) is Origin.PERSON and text != request
        answered = m.role is Role.TOOL and m.tool_call_id in asked and not text.startswith("Error:")
        if said or answered:
            texts.append(text)
    return texts


def request_state(request: str, messages: Sequence[Message], today: date, places: PlaceReader) -> RequestState:
    """The trip the person asked for, after every change: read from their words in `messages`
    (the request that started the run first, when the messages do not hold it)."""
    t = read_transcript(messages)
    if request.strip() and not any(turn.slot is None and turn.text == request.strip() for turn in t.turns):
        t.turns.insert(0, Turn(request.strip()))
    return read_state(t, places, today)


def _absolute_dates(text: str, today: date) -> list[date]:
    return [d.day for d in find_dates(text, today) if _ABSOLUTE.search(text[d.start : d.end])]


def _airlines(text: str) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for m in [*_AIRLINE_SHORT.finditer(text), *_AVOID_ZH.finditer(text), *_AVOID_EN.finditer(text)]:
        x = m.group("x").strip()
        alias = next((v for k, v in _AIRLINE_ALIASES.items() if x in v or x.lower() in (s.lower() for s in v)), None)
        out.append(alias or (x,))
    return out


def _limits(texts: Iterable[str]) -> tuple[frozenset[str], tuple[tuple[str, ...], ...], tuple[str, ...], str | None]:
    """(forbidden transport, airlines to avoid, places to avoid, cabin) from the person's words."""
    forbidden: set[str] = set()
    airlines: list[tuple[str, ...]] = []
    places: list[str] = []
    cabin = None
    for text in texts:
        if _NO_FLIGHT.search(text) or _ONLY_TRAIN.search(text):
            forbidden = {"flight"}
        elif _NO_TRAIN.search(text) or _ONLY_FLIGHT.search(text):
            forbidden = {"train"}
        airlines += _airlines(text)
        airline_words = {w for a in airlines for w in a}
        for m in [*_AVOID_PLACE_ZH.finditer(text), *_AVOID_PLACE_EN.finditer(text)]:
            x = m.group("x").strip()
            if x not in airline_words and not any(x.startswith(w) for w in airline_words):
                places.append(x)
        cabin = next((name for pattern, name in _CABINS if pattern.search(text)), cabin)
    return frozenset(forbidden), tuple(airlines), tuple(places), cabin


def read_constraints(texts: Iterable[str], today: date) -> Constraints:
    """Constraints from texts alone (no conversation): each text's wishes laid over the last's."""
    texts = list(texts)
    req = TripRequest()
    start = end = None
    for text in texts:
        req = req.merged(read_wishes(text, today))
        fixed = _absolute_dates(text, today)
        if fixed:
            start = fixed[0]
            end = fixed[1] if len(fixed) > 1 and fixed[1] > fixed[0] else None
    forbidden, airlines, places, cabin = _limits(texts)
    return Constraints(request=req, fixed_start=start, fixed_end=end, forbidden_transport=forbidden,
                       avoid_airlines=airlines, avoid_places=places, cabin=cabin, destination=req.destination)


def constraints_of(state: RequestState) -> Constraints:
    """Constraints from the request state: its merged request, its written dates, its party."""
    req = state.request
    written = bool(req.start_written) and req.start is not None
    forbidden, airlines, places, cabin = _limits(state.texts)
    if req.transport in forbidden:  # a later change of mind ("fly instead" after "no flights") wins
        forbidden = frozenset()
    return Constraints(request=req, fixed_start=req.start if written else None, fixed_end=req.end if written else None,
                       forbidden_transport=forbidden, avoid_airlines=airlines, avoid_places=places, cabin=cabin,
                       party=state.party, destination=req.destination)

