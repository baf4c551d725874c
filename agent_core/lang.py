"""Words in the person's language: every table of Chinese/English texts is read through `pick`."""

from __future__ import annotations

from collections.abc import Mapping


def pick(entry: Mapping[str, str], lang: str, **values: object) -> str:
    """`entry[lang]` (English when the language has no text), with `values` filled in."""
    template = entry.get(lang) or entry["en"]
    return template.format(**values) if values else template
