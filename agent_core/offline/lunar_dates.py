"""Days of the Chinese lunar calendar as travellers write them around the Spring Festival:
"腊月二十八走，初六回", "除夕", "大年初一", "正月十五".

Each is the next such day from today, converted to the solar calendar by borax's LunarDate
(a month's 30th that the month lacks is its last day: 腊月 has 29 days in some years, and 除夕 is
the day before 正月初一 either way). A bare 初N ("初六回") is 正月's: around the Spring Festival,
the only month travellers name that way.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Final

from borax.calendars.lunardate import InvalidLunarDateError, LunarDate

_MONTHS: Final = {"正月": 1, "冬月": 11, "腊月": 12}
_DAY = r"初[一二三四五六七八九十]|二十[一二三四五六七八九]?|廿[一二三四五六七八九]|三十|十[一二三四五六七八九]?"
LUNAR: Final = re.compile(rf"(?P<eve>除夕|大年三十|年三十)|(?P<first>大年初一)|(?P<lm>正月|腊月|冬月)\s*(?P<ld>{_DAY})|"
                          r"(?<!月)(?P<chu>初[一二三四五六七八九十])(?![中级])")
_DIGITS: Final = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}


def _day_number(word: str) -> int:
    """初六 6, 十五 15, 二十八 28, 廿八 28, 三十 30."""
    if word.startswith("初"):
        return _DIGITS[word[1]]
    if word.startswith("廿"):
        return 20 + _DIGITS[word[1]]
    if word.startswith("二十"):
        return 20 + (_DIGITS[word[2]] if len(word) > 2 else 0)
    if word == "三十":
        return 30
    return 10 + (_DIGITS[word[1]] if len(word) > 1 else 0)  # 十, 十N


def solar(year: int, month: int, day: int) -> date:
    """A lunar year, month and day on the solar calendar (春节 1/1, 端午 5/5 and 中秋 8/15 of a
    lunar year fall in the same solar year)."""
    try:
        return LunarDate(year, month, day).to_solar_date()
    except InvalidLunarDateError:  # a 30th the month does not have: its last day
        return LunarDate(year, month, day - 1).to_solar_date()


def lunar_day(groups: dict[str, str | None], today: date) -> date | None:
    """The next solar date (from today on) a lunar match names; None when it names none."""
    this_year = LunarDate.from_solar_date(today.year, today.month, today.day).year
    for year in (this_year, this_year + 1):
        if groups.get("eve"):
            day = solar(year + 1, 1, 1) - timedelta(days=1)
        elif groups.get("first"):
            day = solar(year, 1, 1)
        elif groups.get("lm") and groups.get("ld"):
            day = solar(year, _MONTHS[groups["lm"] or ""], _day_number(groups["ld"] or ""))
        elif groups.get("chu"):
            day = solar(year, 1, _day_number(groups["chu"] or ""))
        else:
            return None
        if day >= today:
            return day
    return None
