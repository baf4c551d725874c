"""What a change changed: the trip before and after a follow-up, compared by what the trip is
(its length in nights, not how it was worded: days, an end day), field by field."""

from __future__ import annotations

from dataclasses import dataclass

from agent_core.offline.request import TripRequest

_UNSAID = ("lang", "start_text", "clash", "month", "start_written")


@dataclass(frozen=True, slots=True)
class Change:
    name: str  # a TripRequest field, or "party"
    before: object
    after: object


def diff(old: TripRequest, new: TripRequest) -> list[Change]:
    """What changed, by what the trip is: its length in nights, not how it was worded (days, an end day)."""
    a, b = _facts(old), _facts(new)
    return [Change(k, a.get(k), b.get(k)) for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]


def _facts(r: TripRequest) -> dict[str, object]:
    facts = {k: v for k, v in r.stated().items() if k not in _UNSAID and k not in ("days", "nights", "end")}
    if r.trip_nights is not None:
        facts["nights"] = r.trip_nights
    return facts
