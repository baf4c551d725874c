"""Texts of findings in both languages: a `Phrase` is a template key with a Chinese and an English
template; a `Text` is a phrase with its values, rendered in whichever language the reader has.

Values are plain data (names, times, numbers) or other Texts (words that themselves differ by
language, e.g. "train"/"火车"), rendered in the same language; a tuple of values is a list,
joined with the language's separator. Catalogs: wording_facts (re-queried facts) and
wording_plan (timeline, constraints, completeness).
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from types import MappingProxyType
from typing import Union

Value = Union[str, int, float, "Text", tuple["Value", ...]]


@dataclass(frozen=True, slots=True)
class Phrase:
    key: str
    zh: str
    en: str

    def __call__(self, **values: Value) -> Text:
        return Text(self, tuple(sorted(values.items())))

    def template(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en

    def fields(self, lang: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(self.template(lang)) if name}


@dataclass(frozen=True, slots=True)
class Text:
    phrase: Phrase
    values: tuple[tuple[str, Value], ...] = ()

    @property
    def key(self) -> str:
        return self.phrase.key

    def render(self, lang: str) -> str:
        return self.phrase.template(lang).format(**{k: _render(v, lang) for k, v in self.values})

    def __str__(self) -> str:
        return self.render("en")


def _render(value: Value, lang: str) -> str | int | float:
    if isinstance(value, Text):
        return value.render(lang)
    if isinstance(value, tuple):
        return ("；" if lang == "zh" else "; ").join(str(_render(v, lang)) for v in value)
    return value


# Data shown as it is (tool output, names, times): the same in both languages.
RAW = Phrase("raw", "{text}", "{text}")


def raw(text: str) -> Text:
    return RAW(text=text)


KINDS = MappingProxyType({
    "train": Phrase("kind.train", "火车", "train")(),
    "flight": Phrase("kind.flight", "航班", "flight")(),
    "taxi": Phrase("kind.taxi", "出租车", "taxi")(),
    "drive": Phrase("kind.drive", "自驾", "drive")(),
    "transit": Phrase("kind.transit", "公共交通", "transit")(),
    "walk": Phrase("kind.walk", "步行", "walk")(),
})
WEEKDAYS = tuple(
    Phrase(f"weekday.{i}", f"周{zh}", en)()
    for i, (zh, en) in enumerate(zip("一二三四五六日",
                                     ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
                                     strict=True))
)


def kind(name: str) -> Value:
    """A leg kind in the reader's language (unknown kinds as they are)."""
    return KINDS.get(name, name)
