"""What a message would change in a trip, read from its words (Chinese or English).

bot.chat.rights asks this of a message from a traveller of a team trip: a traveller may change
their own legs — home city, seat class, the time they leave or arrive — and nothing of the whole
trip. The reading is deliberately cautious: a message counts as "own legs only" when it speaks of
those and of nothing that belongs to the whole trip (a date, a budget, a destination, a hotel, a
length, the people going); everything else reaches the trip. Misreading "own" as "trip" costs a
Yes from the requester; the other way round would change the trip silently.

`change_of` says, for the suggestion the requester is asked to confirm, what the message would
change when that can be put in a few words ("Guangzhou instead of Hangzhou").
"""

from __future__ import annotations

import re
from enum import StrEnum


class Reach(StrEnum):
    NOTHING = "nothing"  # thanks, ok, an emoji: it changes nothing
    OWN = "own"  # the sender's own legs only: home city, seat class, when they leave or arrive
    TRIP = "trip"  # the destination, dates, budget, hotel, length, party — or words we cannot place


_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
           "jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec")
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|wed|thu|fri|sat|sun"
_TRIP = re.compile(
    "|".join((
        rf"\b(?:{_MONTHS})\b", rf"\b(?:{_WEEKDAYS})\b", r"\b(?:tomorrow|today|tonight|weekend|week|month)\b",
        r"\b\d{1,2}(?:st|nd|rd|th)\b(?!\s+class)", r"\b\d{4}-\d{1,2}-\d{1,2}\b", r"\b\d{1,2}\s*[/–~-]\s*\d{1,2}\b",
        r"\d+\s*[月日号]", r"[明后今]天|下周|本周|周末|星期|礼拜|周[一二三四五六日天]", r"国庆|春节|五一|端午|中秋",
        r"\bbudget\b|¥|￥|\$|\byuan\b|\brmb\b|\bcny\b|\bcheap\w*|\bexpensive\b|\bcosts?\b|\bprices?\b|\bdear\b",
        r"预算|元|块钱|便宜|贵|省钱|花费|费用",
        r"\binstead\b|\brather\b|\bdestination\b|\b(?:go|going|trip|travel|head)\s+to\b|\bhow about\b|\bwhat about\b",
        r"\blet'?s\s+(?:go|do)\b|改去|改到|换到|换成|改成|目的地|去|别去|不去",
        r"\bhotels?\b|\bstay\w*\b|\bnights?\b|\bdays?\b|\brooms?\b|\bbreakfast\b|\bstars?\b",
        r"酒店|宾馆|住|晚|[几两三四五六七八九十\d]\s*天|房间|早餐|星级",
        r"\b(?:add|remove|drop|without|join\w*|people|person|travell?ers?|everyone|team)\b|加上|加一|多一|少一|人",
        r"\bcancel\b|\bcall (?:it|the trip) off\b|取消",
    )),
    re.IGNORECASE,
)
_OWN = re.compile(
    "|".join((
        r"\bseats?\b|\bwindow\b|\baisle\b|\beconomy\b|\bbusiness(?: class)?\b|\b(?:first|second|1st|2nd) class\b",
        r"\bsleeper\b|\bberth\b|\bbunk\b",
        r"[一二]等座|商务座|特等座|硬卧|软卧|硬座|软座|无座|卧铺|靠窗|过道|经济舱|头等舱|公务舱|商务舱",
        r"\barriv\w*\b|\bland(?:s|ing)?\b|\bget there\b|\bleav\w*\b|\bdepart\w*\b|\bset off\b",
        r"\b(?:after|before|by|around|until|from)\s+\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm|h)?\b",
        r"\b\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)\b|\b\d{1,2}:\d{2}\b|\b(?:morning|afternoon|evening|noon|lunch)\b",
        r"\d{1,2}\s*[点:：]|上午|下午|早上|晚上|中午|出发|到达|抵达|之前到|之后走",
        r"\b(?:i'?m|i am|i'?ll|i will|i)\s+(?:be\s+)?(?:com\w*|leav\w*|travel\w*|fly\w*|start\w*|based|living)\b",
        r"\bmy (?:home|city|train|flight|leg|journey|way)\b|我从|我在|我住|从.{1,8}出发",
    )),
    re.IGNORECASE,
)
_NOTHING = re.compile(
    r"^(?:thanks?(?: you)?(?: so much| a lot)?|thx|ty|ok(?:ay)?|great|cool|nice|perfect|awesome|good|got it|"
    r"sounds good|lgtm|yay|haha|lol|谢谢(?:你|您|啦)?|多谢|感谢|好的?|行|可以|太好了|不错|收到|明白了?|辛苦了|哈哈+)"
    r"[\s!.。！~,，]*$",
    re.IGNORECASE,
)
# a message of emoji and punctuation only (Slack's :thumbsup: codes too)
_SYMBOLS = re.compile(r"^(?:[\s\W_]|:[a-z0-9_+-]+:)*$", re.IGNORECASE)
# where the sender comes from, which names a city but is theirs ("from Nanjing instead")
_HOME = re.compile(r"\bfrom\s+[A-Z][a-z]+(?:\s[A-Z][a-z]+)?(?:\s+instead)?|[从由][\u4e00-\u9fff]{2,6}?(?=出发|走|过来)")
# somebody else's legs: a mention, a @handle, a third person, or a name doing something
_SOMEONE_ELSE = re.compile(
    r"<@[A-Z0-9]+(?:\|[^>]*)?>|(?<![\w@])@[A-Za-z0-9_]{3,32}|\b(?:he|she|they|him|her|them|his|hers|their)\b"
    r"|他|她|他们|她们|^\s*(?!I\b)[A-Z][a-z]+\s+(?:can|could|will|would|should|is|isn't|needs?|wants?|has|"
    r"leaves?|arrives?|comes?|flies|'s)\b",
    re.IGNORECASE,
)


def reach_of(text: str) -> Reach:
    """What the message would change: nothing, the sender's own legs only, or the trip."""
    words = text.strip()
    if not words or _NOTHING.match(words) or _SYMBOLS.match(words):
        return Reach.NOTHING
    if _OWN.search(words) and not _SOMEONE_ELSE.search(words) and not _TRIP.search(_HOME.sub(" ", words)):
        return Reach.OWN
    return Reach.TRIP


# a place: a capitalised name of one or two words, or two to six Chinese characters
_EN_PLACE = r"[A-Z][a-z]+(?:\s[A-Z][a-z]+)?"
_DEST_EN = re.compile(rf"\b(?:to|in|visit(?:ing)?|about|try|do|pick|choose|prefer)\s+(?P<x>{_EN_PLACE})")
_DEST_ZH = re.compile(r"(?:改去|改到|换到|换成|改成|去|到|在)(?P<x>[\u4e00-\u9fff]{2,6}?)(?=[玩旅游吧呢吗，,。！!？?\s]|$)")
_BARE = re.compile(rf"^\s*(?P<x>{_EN_PLACE}|[\u4e00-\u9fff]{{2,6}})\s*(?:instead|please|then|吧|呢)?[\s!?.。！？]*$")
_NOT_PLACES = frozenset({"Let", "Lets", "The", "This", "That", "What", "How", "Yes", "No", "Ok", "Okay", "Thanks",
                         "Please", "Maybe", "Sure", "Team", "Trip", "Offsite", "March", "April", "May", "June",
                         "July", "August", "September", "October", "November", "December", "January",
                         "February", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"})


def destination_in(text: str) -> str | None:
    """The place a message names as where to go ("offsite in Hangzhou", "去广州", "Guangzhou instead")."""
    for pattern in (_DEST_EN, _DEST_ZH, _BARE):
        m = pattern.search(text)
        if m is not None and m.group("x").split()[0] not in _NOT_PLACES and not _OWN.search(m.group("x")):
            return m.group("x")
    return None


def change_of(text: str, request: str) -> tuple[str, str] | None:
    """(the destination a suggestion names, the request's) when they differ — said to the requester
    as "Guangzhou instead of Hangzhou"; None when the change cannot be put that shortly."""
    own = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(">"))  # not a quote
    wanted, current = destination_in(own), destination_in(request)
    if wanted is None or current is None or wanted.lower() == current.lower():
        return None
    return wanted, current
