"""The language a message is in, as the runtime reads it (bot.texts.detect_lang)."""

from __future__ import annotations

import pytest

from bot.texts import detect_lang


@pytest.mark.parametrize(
    ("text", "default", "lang"),
    [
        ("北京到上海三天", "en", "zh"),
        ("Plan a 3-day trip", "zh", "en"),
        ("thanks", "zh", "en"),
        ("asdf", "zh", "zh"),  # keyboard mash in a Chinese conversation stays Chinese
        ("G1710", "zh", "zh"),
        ("2", "en", "en"),
        ("asdf", "en", "en"),
    ],
)
def test_detect_lang(text: str, default: str, lang: str) -> None:
    assert detect_lang(text, default) == lang
