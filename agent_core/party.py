"""The travellers a request names, with their home cities.

A team request names people the way its platform does — Slack mentions (`<@U123>`), Telegram
@usernames — or by plain name, each optionally followed by a home city in brackets or after
"from"/"从": "offsite in Hangzhou for <@U1> (Beijing), @bo (Shanghai) and Chen from Shenzhen".
Reading it is plain text work, shared by the offline planner (who travels from where) and the
bot (who a question is for, who may answer it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# a handle or a capitalised name, then a home city: "(Beijing)", "（北京）", "from Beijing", "从北京"
_WHO = r"(?P<who><@[A-Z0-9]+(?:\|[^>]+)?>|@[A-Za-z0-9_]{2,32}|[A-Z][a-z]+(?: [A-Z][a-z]+)?)"
_CITY = r"(?P<city>[\u4e00-\u9fff]{2,6}|[A-Z][a-z]+(?: [A-Z][a-z]+)?)"
_WITH_CITY = re.compile(
    _WHO + r"\s*(?:[(（]\s*(?:from\s+)?" + _CITY + r"\s*[)）]|\s+from\s+" + _CITY.replace("city", "city2")
    + r"|\s*从" + _CITY.replace("city", "city3") + ")"
)
# a plain name after a traveller with a home city, in the same list: ", Chen", " and Chen", "和Chen"
_LISTED = re.compile(r"\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s*[、和及与，]\s*)(?P<who>[A-Z][a-z]+)\b(?!\s*[(（]|\s+from\b)")
_HANDLE = re.compile(r"<@(?P<slack>[A-Z0-9]+)(?:\|[^>]+)?>|(?<![\w@])@(?P<tg>[A-Za-z0-9_]{3,32})")
# words a capitalised "name (City)" pattern must not take for a person
_NOT_NAMES = frozenset({"Offsite", "Trip", "Team", "Meeting", "Plan", "Hotel", "From", "For", "And", "In", "To"})
# words a plain name listed after the travellers is not ("..., Bo (Shanghai), March 12")
_NOT_LISTED = frozenset({"January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                         "November", "December", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
                         "Sunday", "Today", "Tomorrow", "Next", "This", "Budget", "Please", "Thanks", "By", "On", "With"})


@dataclass(frozen=True, slots=True)
class Traveller:
    label: str  # as the request names them: "<@U1>", "@bo", "Chen"
    home_city: str | None  # as written; None when the request gives none
    user_id: str = ""  # the platform id when the label carries one (a Slack mention)

    @property
    def handle(self) -> str:
        """"@bo" for a Telegram username, "" otherwise."""
        return self.label.lower() if self.label.startswith("@") else ""

    def named_by(self, text: str) -> bool:
        """Does `text` (e.g. ask_human's `to`) name this traveller?"""
        want = text.strip()
        if not want:
            return False
        mention = _HANDLE.fullmatch(want)
        if mention is not None and mention.group("slack"):
            return mention.group("slack") == self.user_id
        if self.user_id and want == self.user_id:
            return True
        return want.lstrip("@").lower() == self.label.lstrip("@").lower()


def read_party(text: str) -> list[Traveller]:
    """The travellers `text` names, in order, once each (the first home city given wins)."""
    found: dict[str, Traveller] = {}
    spans: list[tuple[int, int]] = []
    for m in _WITH_CITY.finditer(text):
        who = m.group("who")
        if who in _NOT_NAMES or who.split()[0] in _NOT_NAMES:
            continue
        city = m.group("city") or m.group("city2") or m.group("city3")
        _add(found, who, city)
        spans.append(m.span("who"))
    for m in _HANDLE.finditer(text):  # mentions without a city: their home city is to be asked
        if not any(a <= m.start() < b for a, b in spans) and not _addresses_the_bot(text, m):
            _add(found, m.group(0), None)
    # "for Ana (Beijing), Bo (Shanghai) and Chen": a plain name in the same list, right after one
    ends = sorted(m.end() for m in _WITH_CITY.finditer(text) if m.group("who") not in _NOT_NAMES)
    while ends:
        listed = _LISTED.match(text, ends.pop(0))
        if listed is None or listed.group("who") in _NOT_NAMES | _NOT_LISTED or any(a <= listed.start("who") < b for a, b in spans):
            continue
        _add(found, listed.group("who"), None)
        ends.insert(0, listed.end())
    return list(found.values())


def _addresses_the_bot(text: str, m: re.Match[str]) -> bool:
    """"@Trip Planner plan ...": a message that opens with a mention of a display name (two
    capitalised words) addresses the bot, as the README's Slack example does."""
    return m.start() == 0 and bool(re.match(r"\s+[A-Z][a-z]+\b(?!\s*[(（])", text[m.end():]))


def duplicate_labels(party: list[Traveller]) -> list[str]:
    """Labels that two travellers share once case is ignored ("Li" and "li"): a question to one
    of them could not say which."""
    seen: dict[str, int] = {}
    for t in party:
        key = t.label.lstrip("@").lower()
        seen[key] = seen.get(key, 0) + 1
    return [t.label for t in party if seen[t.label.lstrip("@").lower()] > 1]


def _add(found: dict[str, Traveller], who: str, city: str | None) -> None:
    """Once per person: the same label again adds nothing, unless it names another home city —
    two people who share a name (caught by duplicate_labels, never merged into one)."""
    slack = _HANDLE.fullmatch(who)
    user_id = slack.group("slack") or "" if slack is not None else ""
    label = f"<@{user_id}>" if user_id else who
    same = [key for key, t in found.items() if t.label.lower() == label.lower()]
    if any(found[key].home_city is None or not city or found[key].home_city == city for key in same):
        for key in same:  # a city given later fills one left open
            if found[key].home_city is None and city:
                found[key] = Traveller(label, city, user_id)
        return
    found[f"{label.lower()}#{len(same)}"] = Traveller(label, city, user_id)
