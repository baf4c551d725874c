"""Numbers as people type them: digits, Chinese numerals (两千五, 十二), English words, 3k."""

from __future__ import annotations

import re

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5,
              "六": 6, "七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_EN_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2, "a couple of": 2,
}

CN_NUM = "[零〇一二两俩三四五六七八九十百千万]+"
EN_NUM = r"(?:\d+|a couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
NUM = rf"(?:\d+|{CN_NUM})"

_DIGITS_RE = re.compile(r"^\d+(?:\.\d+)?$")


def cn_to_int(text: str) -> int | None:
    """Chinese numerals to an int: 十二 -> 12, 两千五 -> 2500, 一万二 -> 12000; None if not one."""
    if not text or any(ch not in _CN_DIGITS and ch not in _CN_UNITS for ch in text):
        return None
    total = 0
    section = 0  # the part below 万
    digit: int | None = None
    last_unit = 0
    for ch in text:
        if ch in _CN_DIGITS:
            digit = _CN_DIGITS[ch]
            if digit == 0:
                last_unit = 10  # 一百零五: after 零 a trailing digit is a plain unit
            continue
        unit = _CN_UNITS[ch]
        if unit == 10000:
            section += digit or 0
            total += (section or 1) * 10000
            section, digit, last_unit = 0, None, 10000
            continue
        section += (1 if digit is None else digit) * unit
        digit, last_unit = None, unit
    if digit is not None:
        # "两千五" means 2500: a trailing digit counts in the unit below the last one.
        section += digit * (last_unit // 10 if last_unit >= 100 else 1)
    return total + section


def to_number(text: str) -> float | None:
    """Digits, Chinese numerals or English number words; None when `text` is none of these."""
    t = text.strip().lower().replace(",", "")
    if _DIGITS_RE.match(t):
        return float(t)
    if t in _EN_WORDS:
        return float(_EN_WORDS[t])
    value = cn_to_int(t)
    return float(value) if value is not None else None


def to_int(text: str) -> int | None:
    value = to_number(text)
    return int(value) if value is not None else None
