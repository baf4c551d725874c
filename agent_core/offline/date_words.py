"""The words of dates, for the date grammar (agent_core.offline.dates): one regular expression per
kind of date phrase, and the tables they are resolved with.

Each pattern finds one *atom*: a full date ("2027-03-12", "15/01/2027"), a month and a day
("12 March", "3月12日", "12/3"), a day of the month alone ("the 12th", "12号"), a weekday
("下周五", "next Friday"), a day counted from today ("明天", "in 3 days"), a weekend or a
holiday ("下周末", "long weekend", "国庆"), or a bare number that only counts as the first day
of a range ("12" in "12–14 March"). The grammar pairs atoms into ranges and weekday+date pairs.
"""

from __future__ import annotations

import re
from typing import Final

from agent_core.offline.lunar_dates import LUNAR
from agent_core.offline.numbers import EN_NUM, NUM

WEEKDAY_ZH: Final = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6,
                     "1": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6}
WEEKDAY_EN: Final = {"mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6}
WEEKDAY_NAMES: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS_EN: Final = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8,
                    "sep": 9, "oct": 10, "nov": 11, "dec": 12}
REL_ZH: Final = {"今天": 0, "今日": 0, "今晚": 0, "明天": 1, "明日": 1, "后天": 2, "大后天": 3, "昨天": -1, "前天": -2}
REL_EN: Final = {"today": 0, "tonight": 0, "tomorrow": 1, "day after tomorrow": 2, "yesterday": -1}

# Fixed-date holidays: (month, day).
HOLIDAYS: Final = {"national": (10, 1), "labour": (5, 1), "new_year": (1, 1), "christmas": (12, 25)}
# lunar ones by their lunar month and day, for any year (agent_core.offline.lunar_dates)
LUNAR_HOLIDAYS: Final = {"spring": (1, 1), "mid_autumn": (8, 15), "dragon_boat": (5, 5)}
HOLIDAY_WORDS: Final = {
    "national": r"国庆(?:节|假期|长假)?|十一(?:假期|长假|黄金周|期间)|黄金周|national day|golden week",
    "labour": r"五一(?!广场|路|大道|大街)(?:假期|长假)?|劳动节|may day|labou?r day",
    "new_year": r"元旦|new year'?s day",
    "christmas": r"圣诞(?:节)?|christmas(?: day)?",
    "spring": r"春节|过年|spring festival|chinese new year|lunar new year",
    "mid_autumn": r"中秋(?:节)?|mid[\s-]autumn(?: festival)?",
    "dragon_boat": r"端午(?:节)?|dragon boat(?: festival)?",
}

_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
          r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_ORD = r"(?:st|nd|rd|th)"
_YEAR_TAIL = r"(?:,?\s*(?P<y>\d{4})(?!\s*[-/.年]\s*\d))?"
# what a bare number must not be followed by to count as a day of the month
_NOT_A_DAY = r"(?!\s*(?:days?|nights?|weeks?|months?|years?|people|persons?|adults?|pax|guests?|travell?ers|yuan|rmb|cny|"\
             r"hours?|h\b|min|k\b|%|stars?|[-–—]?star|天|日游|晚|夜|人|位|元|块|个|点|时|小时|分|星|号线|号楼|号门|号航站楼|:|：))"

# (kind, pattern), most specific first: an atom found by an earlier pattern is never re-read by a later one
ATOMS: Final[list[tuple[str, re.Pattern[str]]]] = [
    ("ymd", re.compile(r"(?<!\d)(?P<y>\d{4})(?:(?P<s>[-/.])(?P<m>\d{1,2})(?P=s)(?P<d>\d{1,2})(?!\d)|"
                       r"\s*年\s*(?P<m2>\d{1,2})\s*月\s*(?P<d2>\d{1,2})\s*[日号]?)")),
    ("dmy", re.compile(r"(?<![\d/.])(?P<d>\d{1,2})[/.](?P<m>\d{1,2})[/.](?P<y>\d{4}|\d{2})(?![\d/.])")),
    ("lunar", LUNAR),  # 腊月二十八, 初六, 除夕 (agent_core.offline.lunar_dates)
    ("holiday", re.compile(r"(?:(?P<y>\d{4})\s*年?\s*)?(?:" + "|".join(f"(?P<{k}>{w})" for k, w in HOLIDAY_WORDS.items()) + ")", re.I)),
    ("zh_md", re.compile(rf"(?P<m>{NUM})\s*月(?:份)?\s*(?P<d>{NUM})\s*[日号]?")),
    ("en_md", re.compile(rf"\b(?P<mn>{_MONTH})\.?\s+(?:the\s+)?(?P<d>\d{{1,2}}){_ORD}?\b(?!\s*[:.]\d){_YEAR_TAIL}", re.I)),
    ("en_dm", re.compile(rf"\b(?:the\s+)?(?P<d>\d{{1,2}}){_ORD}?\s+(?:of\s+)?(?P<mn>{_MONTH})\b\.?{_YEAR_TAIL}", re.I)),
    ("dm", re.compile(r"(?<![\d/.:])(?P<d>\d{1,2})/(?P<m>\d{1,2})(?![\d/.])")),
    ("weekend", re.compile(r"(?P<pre>下下个?|下个?|这个?|本)?(?:周末|(?P<long>小长假))|"
                           r"\b(?P<pre_en>next|this|coming)?\s*(?P<long_en>long[\s-])?weekend\b", re.I)),
    ("offset_zh", re.compile(rf"(?P<n>{NUM})\s*(?P<unit>天|周|个?星期|个?礼拜)(?:以?后|之后)")),
    ("offset_en", re.compile(rf"\bin\s+(?P<n>{EN_NUM})\s+(?P<unit>days?|weeks?)\b|"
                             rf"\b(?P<n2>{EN_NUM})\s+(?P<unit2>days?|weeks?)\s+(?:from\s+(?:now|today)|later)\b", re.I)),
    ("rel_zh", re.compile(r"大后天|后天|明天|明日|今天|今日|今晚|昨天|前天")),
    ("rel_en", re.compile(r"\b(?:the\s+)?day after tomorrow\b|\btomorrow\b|\btoday\b|\btonight\b|\byesterday\b", re.I)),
    ("wd_zh", re.compile(r"(?P<pre>下下个?|下个?|这个?|本|上个?)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天1-7])")),
    ("wd_en", re.compile(r"\b(?P<pre>next|this|coming)?\s*(?P<wd>mon|tue|wed|thu|fri|sat|sun)(?:day|s|sday|nesday|rs|rsday|urday)?\b\.?", re.I)),
    ("day_zh", re.compile(rf"(?:(?P<pre>下个?月|这个?月|本月)|(?<![月\d]))(?P<d>{NUM})\s*(?:号(?!线|楼|门|院|航站楼|馆)|日(?!游|往返|内|之内))"
                          + _NOT_A_DAY)),
    ("day_en", re.compile(rf"\b(?:on\s+)?the\s+(?P<d>\d{{1,2}}){_ORD}\b|\bon\s+(?P<d2>\d{{1,2}}){_ORD}\b", re.I)),
    ("bare", re.compile(rf"(?<![\d:./])\b(?P<d>\d{{1,2}})(?P<ord>{_ORD})?\b(?![:./]\d)" + _NOT_A_DAY, re.I)),
]

RANGE_SEP: Final = re.compile(r"^\s*(?:-|–|—|~|～|〜|到|至|直到|to|until|till|through|thru|and)\s*(?:the\s+)?$", re.I)
# between a weekday and the date it names: "Saturday, 16 January", "2027-01-16 (Saturday)", "周六（1月16日）"
WEEKDAY_JOIN: Final = re.compile(r"^[\s,，、]*(?:the\s+)?[(（]?\s*$", re.I)
