"""Words in the person's language: every table of Chinese/English texts is read through `pick`."""

from __future__ import annotations

from collections.abc import Mapping


def pick(entry: Mapping[str, str], lang: str, **values: object) -> str:
    """`entry[lang]` (English when the language has no text), with `values` filled in."""
    template = entry.get(lang) or entry["en"]
    return template.format(**values) if values else template


# A count and its noun: English picks singular or plural, Chinese has one form (and a measure word).
_UNITS: dict[str, tuple[str, str, str]] = {
    # unit: (English singular, English plural, Chinese)
    "night": ("night", "nights", "{n}晚"),
    "day": ("day", "days", "{n}天"),
    "person": ("person", "people", "{n}人"),
    "traveller": ("traveller", "travellers", "{n}人"),
    "room": ("room", "rooms", "{n}间"),
    "minute": ("min", "min", "{n}分钟"),
    "hour": ("hour", "hours", "{n}小时"),
    "step": ("step", "steps", "{n}步"),
    "message": ("message", "messages", "{n}条消息"),
    "ticket": ("ticket", "tickets", "{n}张票"),
}


def plural(n: int, unit: str, lang: str) -> str:
    """'1 night', '2 nights', '2晚': every count a person reads goes through here."""
    singular, many, zh = _UNITS[unit]
    if lang == "zh":
        return zh.format(n=n)
    return f"{n} {singular if n == 1 else many}"
