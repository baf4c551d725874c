"""One message read into a TripRequest, in Chinese or English (everything but place names):
dates (agent_core.offline.dates), length, budget, party size, transport, seat, hotel wishes."""

from __future__ import annotations

import re
from datetime import date, timedelta

from agent_core.offline.date_words import HOLIDAY_WORDS
from agent_core.offline.dates import read_when
from agent_core.offline.numbers import CN_NUM, EN_NUM, NUM, to_int, to_number
from agent_core.offline.request import BUDGET_STARS, TripRequest
from agent_core.offline.times import arrival, window
from agent_core.offline.way_back import back_spans, blank, inside

_CJK = re.compile(r"[\u4e00-\u9fff]")

# "第二天" is a day of the trip, not its length
_DAYS_NIGHTS_ZH = re.compile(rf"(?<!第)(?P<d>{NUM})\s*[天日](?:\s*(?P<n>{NUM})\s*[晚夜])?(?!\s*(?:以?后|之后|前))")
_NIGHTS_ZH = re.compile(rf"(?:住|待|呆)?\s*(?P<n>{NUM})\s*(?:个)?[晚夜宿](?!上|饭|餐|点)")
_WEEK_ZH = re.compile(rf"(?P<n>{NUM})?\s*(?:个)?(?:星期|周)(?![一二三四五六日天末1-7])")
# "3 days from now" is a date, "4 days from March 5" a length
_DAYS_EN = re.compile(rf"\b(?P<n>{EN_NUM})[\s-]+days?\b(?!\s+(?:from\s+(?:now|today)\b|later|ago|earlier))", re.I)
_NIGHTS_EN = re.compile(rf"\b(?P<n>{EN_NUM})[\s-]+nights?\b", re.I)
_WEEK_EN = re.compile(rf"\b(?P<n>{EN_NUM})[\s-]+weeks?\b(?!\s+(?:from|later|ago))", re.I)
_DAY_TRIP = re.compile(r"当天往返|一日游|当日往返|当天回(?:来|去|家)?|当日回(?:来|去)?|(?<![\w-])(?:a\s+)?day[\s-]trip|"
                       r"\bsame[\s-]day (?:return|back|trip)\b|\b(?:back|return|home) the same day\b|\bthere and back in a day\b", re.I)

# A sum in Chinese numerals stands before a unit, a money word or the end of a clause: "预算一共
# 8000" reads 8000, not the 一 of 一共 ("in total").
_CN_SUM = rf"{CN_NUM}(?=\s*(?:[kK千万w元块]|rmb|RMB|CNY|左右|以内|之内|以下|够|$|[\s，。、,.!?！？]))"
_BUDGET = [
    re.compile(rf"预算\D{{0,6}}?(?P<v>\d+(?:\.\d+)?|{_CN_SUM})\s*(?P<u>[kK千万w])?"),
    re.compile(rf"(?:人均|每人)(?:预算)?\D{{0,3}}?(?P<v>\d+(?:\.\d+)?|{_CN_SUM})\s*(?P<u>[kK千万w])?"),
    re.compile(rf"(?P<v>\d+(?:\.\d+)?|{NUM})\s*(?P<u>[kK千万w])?\s*(?:元|块|rmb|RMB|CNY)?\s*(?:以内|之内|以下|左右)"),
    re.compile(r"budget\D{0,12}?(?P<v>\d[\d,]*(?:\.\d+)?)\s*(?P<u>k)?", re.I),
    re.compile(r"(?:under|below|within|less than|max(?:imum)?|at most|no more than)\s*[¥￥]?\s*(?P<v>\d[\d,]*(?:\.\d+)?)\s*(?P<u>k)?", re.I),
    re.compile(r"[¥￥]\s*(?P<v>\d[\d,]*(?:\.\d+)?)\s*(?P<u>k)?"),
]
_HOLIDAY = re.compile("|".join(HOLIDAY_WORDS.values()), re.I)
MIN_BUDGET = 50  # CNY: a number under it is not what anyone means by a trip's budget
_PER_PERSON = re.compile(r"人均|每人|一个人|per person|each|pp\b", re.I)
_UNITS = {"k": 1000, "K": 1000, "千": 1000, "万": 10000, "w": 10000}

_TRAVELLERS = [
    re.compile(rf"(?P<n>{NUM})\s*(?:个人|人|位|口人|个大人|大人)(?!均)"),
    re.compile(rf"我们\s*(?P<n>{NUM})\s*个"),
    re.compile(rf"\b(?P<n>{EN_NUM})\s+(?:people|persons|adults|travell?ers|guests|of us)\b", re.I),
    # "for 2" is a party; "for 3 days", "for 4 or 5 days", "for 2-3 nights" are a length
    re.compile(r"\bfor\s+(?P<n>\d+)\b(?!\s*(?:(?:or|to|-|–)\s*\d+\s*)?(?:days?|nights?|weeks?|yuan|rmb|cny|k\b))",
               re.I),
]
# a party counted in parts: grown-ups and children ("两个大人一个小孩", "2大1小", "2 adults and
# 2 kids"), a family ("一家三口"), the writer and others ("me and 3 friends", "我和两个同事")
_ADULTS = re.compile(rf"(?P<n>{NUM})\s*(?:个)?(?:大人|成人|大(?=\s*{NUM}\s*小))|\b(?P<e>{EN_NUM})\s+(?:adults?|grown-?ups)\b", re.I)
_CHILDREN = re.compile(rf"(?P<n>{NUM})\s*(?:个)?(?:小孩|孩子|儿童|宝宝|小朋友|小(?![时学朋]))|"
                       rf"\b(?P<e>{EN_NUM})\s+(?:kids?|children|child|toddlers?|babies|baby)\b", re.I)
_FAMILY = re.compile(rf"一家(?P<n>{NUM})口|\bfamily of (?P<e>{EN_NUM})\b", re.I)
_ME_AND = re.compile(rf"我(?:和|跟|带|带着)(?P<n>{NUM})\s*(?:个|位)|"
                     rf"\b(?:me|myself|i)\s+(?:and|with|plus)\s+(?:my\s+)?(?P<e>{EN_NUM})\s+(?!(?:days?|nights?|weeks?)\b)[a-z]+", re.I)
_COUPLE = re.compile(r"我们俩|我们两|两口子|我和(?:老婆|老公|妻子|丈夫|女朋友|男朋友|爱人|朋友|妈妈|爸爸)|(?:带|陪)(?:着)?(?:我)?(?:老婆|老公|妻子|丈夫|女朋友|男朋友|爱人|媳妇|妈妈|爸爸|老妈|老爸|妈|爸)|(?:my|with my)\s+(?:wife|husband|partner|girlfriend|boyfriend|friend)\b", re.I)
# a spouse and a child ("带老婆孩子", "with my wife and kids"): the writer, the spouse and a child
_SPOUSE_AND_CHILD = re.compile(r"(?:带|和|陪)(?:着)?(?:我)?(?:老婆|老公|妻子|丈夫|爱人|媳妇)(?:和|跟|还有)?(?:孩子|娃|小孩|儿子|女儿|宝宝)|"
                               r"\bwith my (?:wife|husband|partner) and (?:the |our |my )?(?:kids?|child(?:ren)?|sons?|daughters?|baby)\b", re.I)
_WITH_CHILD = re.compile(r"带(?:着)?(?:孩子|娃|小孩|儿子|女儿|宝宝)|\bwith (?:my|our|the) (?:kid|child|son|daughter|baby)\b", re.I)
_PARENTS = re.compile(r"(?:带|和|陪)(?:着)?(?:我)?(?:父母|爸妈)|\b(?:with|taking|take|bringing|bring) my parents\b", re.I)

_NO_FLIGHT = re.compile(r"(?:不|别|不要|不想|不坐|不乘)\s*(?:坐|乘)?\s*飞机|不飞|no flights?|don'?t (?:want to )?fly|not fly|avoid flying|hate flying", re.I)
_NO_TRAIN = re.compile(r"(?:不|别|不要|不想)\s*(?:坐|乘)?\s*(?:高铁|火车|动车)|no trains?\b|not by train", re.I)
_FLIGHT = re.compile(r"飞机|航班|机票|坐飞|飞过去|飞去|改飞|\bfl(?:y|ight|ights|ying)\b|\bplane\b|\bby air\b", re.I)
_TRAIN = re.compile(r"高铁|动车|火车|坐车|铁路|\btrains?\b|\brail\b|high[\s-]speed", re.I)
_SEATS = [
    (re.compile(r"商务座|business class", re.I), "商务座"),
    (re.compile(r"一等座|first class", re.I), "一等座"),
    (re.compile(r"二等座|second class", re.I), "二等座"),
    (re.compile(r"软卧|soft sleeper", re.I), "软卧"),
    (re.compile(r"硬卧|hard sleeper|sleeper", re.I), "硬卧"),
]

_NO_OVERNIGHT = re.compile(r"\b(?:no|avoid|skip|without) (?:overnight|night|red-?eye) (?:trains?|rides?|flights?)\b|"
                           r"\bno (?:overnight|night|red-?eye)s?\b|\bnot overnight\b|"
                           r"(?:不要|不坐|不想坐|别坐|不乘)\s*(?:夜车|过夜的?车|红眼航班|夜班车)", re.I)
# going home, or staying with family: nowhere to book for the nights ("春节回老家", "visiting my parents")
_HOME_STAY = re.compile(r"回老家|回家过年|回娘家|回家乡|回家(?:看|探亲)|(?:春节|过年|中秋节?|国庆节?|端午节?|元旦|五一)\s*回家|住(?:在)?(?:家里|父母家|亲戚家|朋友家)|"
                        r"\b(?:go|going|head|heading) home for\b|\bvisit(?:ing)? (?:my )?(?:family|parents|folks|relatives)\b|"
                        r"\bstay(?:ing)? (?:with|at) (?:my )?(?:family|parents|folks|relatives|friends)\b|\bhometown\b", re.I)
_NO_HARD_SEAT = re.compile(r"\bno hard seats?\b|\bnot (?:a |the )?hard seats?\b|(?:不要|不坐|不想坐|别坐)\s*硬座", re.I)
_BREAKFAST = re.compile(r"含早|带早|早餐|breakfast", re.I)
_NO_BREAKFAST = re.compile(r"不(?:要|用|需要)?(?:含)?早餐|不含早|no breakfast|without breakfast", re.I)
_STARS = re.compile(r"(?P<n>[二两三四五2345])\s*星|(?P<e>[2345])[\s-]*stars?", re.I)
_LUXURY = re.compile(r"豪华|高档|奢华|luxury|upscale", re.I)
_CHEAP_HOTEL = re.compile(r"经济型|快捷酒店|便宜(?:一?点|些)?的(?:酒店|住处)|酒店(?:便宜|住便宜)|budget hotels?|cheap(?:er)? hotels?|cheap(?:er)? (?:place to stay|accommodation)|hostel", re.I)
_NEAR_ZH = re.compile(r"(?:住在?|靠近|离|挨着)?\s*(?P<x>[\u4e00-\u9fffA-Za-z0-9]{2,12}?)\s*(?:附近|旁边|周边|边上|近一点|近的)")
_NEAR_EN = re.compile(r"\b(?:near|close to|next to)\s+(?:the\s+)?(?P<x>[A-Za-z][\w' -]{1,40}?)(?=[,.;!?]|\s+(?:and|with|for|on|in|please)\b|$)", re.I)

_CHEAPER = re.compile(r"便宜|省钱|划算|实惠|预算(?:不够|有限|紧)|太贵|贵了|cheaper|less expensive|cheapest|too expensive|save money|lower (?:the )?cost", re.I)
_ONE_WAY = re.compile(r"单程|不用返程|不回来|one[\s-]way|no return", re.I)


def detect_lang(text: str) -> str:
    return "zh" if _CJK.search(text) else "en"


def _amount(m: re.Match[str]) -> float | None:
    value = to_number(m.group("v"))
    if value is None:
        return None
    unit = m.groupdict().get("u")
    return value * _UNITS.get(unit or "", 1)


def _length(undated: str) -> tuple[int | None, int | None]:
    """(days, nights) stated in the text, with its dates blanked out. An explicit length wins
    over a kind of trip: "a 3-day trip" is three days, not a day trip."""
    days = nights = None
    m = _DAYS_NIGHTS_ZH.search(undated)
    if m:
        days = to_int(m.group("d"))
        if m.group("n"):
            nights = to_int(m.group("n"))
    if nights is None and (m2 := _NIGHTS_ZH.search(undated)):
        nights = to_int(m2.group("n"))
    if days is None and (m3 := _DAYS_EN.search(undated)):
        days = to_int(m3.group("n"))
    if nights is None and (m4 := _NIGHTS_EN.search(undated)):
        nights = to_int(m4.group("n"))
    if days is not None or nights is not None:
        return days, nights
    if _DAY_TRIP.search(undated):
        return 1, 0
    week = _WEEK_ZH.search(undated) or _WEEK_EN.search(undated)
    if week and (week.group("n") or re.search(r"一周|a week|one week", undated, re.I)):
        return 7 * (to_int(week.group("n") or "1") or 1), None
    return None, None


def _count(m: re.Match[str] | None) -> int | None:
    if m is None:
        return None
    return to_int(m.group("n") or m.group("e"))


def _travellers(undated: str, text: str) -> int | None:
    adults, children = _count(_ADULTS.search(undated)), _count(_CHILDREN.search(undated))
    if adults and children:
        return adults + children
    if family := _count(_FAMILY.search(undated)):
        return family
    if others := _count(_ME_AND.search(undated)):
        return others + 1
    for pattern in _TRAVELLERS:
        if (m := pattern.search(undated)) and (n := to_int(m.group("n"))):
            return n
    if _PARENTS.search(text) or _SPOUSE_AND_CHILD.search(text):
        return 3
    if _WITH_CHILD.search(text):  # "带孩子": the writer and the child, when no one is counted
        return 2
    if _COUPLE.search(text):
        return 2
    return None


def read_wishes(text: str, today: date) -> TripRequest:
    """Everything in `text` except places: dates, length, budget, party, transport, hotel."""
    when = read_when(text, today)
    undated = "".join(" " if any(s <= i < e for s, e in when.spans) else ch for i, ch in enumerate(text))
    days, nights = _length(undated)
    if days is None and nights is None and when.days and when.end is None:
        days = when.days  # "a long weekend": three days, unless the person says how long
    travellers = _travellers(undated, text)

    budget = None
    for pattern in _BUDGET:
        for said in pattern.finditer(undated):
            # a trip's budget is a sum: "the kids are under 6" says no budget
            if (value := _amount(said)) and value >= MIN_BUDGET:
                budget = value
                break
        if budget is not None:
            break
    if budget is not None and _PER_PERSON.search(text):
        budget *= travellers or 1

    transport = None
    refusals = [m.span() for pattern in (_NO_OVERNIGHT, _NO_HARD_SEAT) for m in pattern.finditer(text)]
    text_for_transport = blank(text, refusals, keep=False)  # "no overnight trains" asks for no train
    if _NO_FLIGHT.search(text):
        transport = "train"
    elif _NO_TRAIN.search(text) or _FLIGHT.search(text_for_transport):
        transport = "flight"
    elif _TRAIN.search(text_for_transport):
        transport = "train"
    seat = next((name for pattern, name in _SEATS if pattern.search(text)), None)

    stars = None
    cheap_hotel = _CHEAP_HOTEL.search(text)
    if m := _STARS.search(text):
        stars = to_int(m.group("n") or m.group("e"))
    elif _LUXURY.search(text):
        stars = 5
    elif cheap_hotel:
        stars = BUDGET_STARS
    breakfast = False if _NO_BREAKFAST.search(text) else (True if _BREAKFAST.search(text) else None)
    landmark = None
    if m := (_NEAR_ZH.search(text) or _NEAR_EN.search(text)):
        landmark = m.group("x").strip()

    # the way back's words say when to come back, and their day is the day home
    back = back_spans(text)
    arrive_before, arriving = arrival(blank(undated, back, keep=False))
    leaving = back + ([arriving] if arriving else [])  # "下午两点前到": the afternoon is the arrival's
    depart_after, depart_before = window(blank(text, leaving, keep=False), blank(undated, leaving, keep=False))
    return_after, return_before = window(blank(text, back, keep=True), blank(undated, back, keep=True), back=True)
    start, end, end_written = when.start, when.end, None
    said_back = [m for m in when.mentions if inside(back, m.start, m.end)]
    if start is not None and end is None and said_back and not _HOLIDAY.fullmatch(when.start_text or ""):
        # (a festival is what one goes home for: "中秋回家" leaves then)
        if said_back[0] is when.mentions[0]:  # "come back Sunday": the trip ends then, it does not start then
            start, end, end_written = None, start, when.written
        else:  # "下周五出发，周日回": the Sunday after that Friday
            end, end_written = said_back[0].day, said_back[0].written
            while not end_written and end <= start:
                end += timedelta(days=7)

    cheaper = _CHEAPER.search((cheap_hotel and text.replace(cheap_hotel.group(0), " ")) or text)
    return TripRequest(
        start=start,
        end=end,
        end_written=end_written,
        start_text=when.start_text if start else None,
        start_written=when.written if start else None,
        days=days,
        nights=nights,
        budget=budget,
        travellers=travellers,
        transport=transport,
        seat=seat,
        breakfast=breakfast,
        stars=stars,
        landmark=landmark,
        depart_after=depart_after,
        depart_before=depart_before,
        return_after=return_after,
        return_before=return_before,
        arrive_before=arrive_before,
        one_way=True if _ONE_WAY.search(text) else None,
        overnight=False if _NO_OVERNIGHT.search(text) else None,
        home_stay=True if _HOME_STAY.search(text) else None,
        hard_seat=False if _NO_HARD_SEAT.search(text) else None,
        cheaper=1 if cheaper and budget is None else None,
        month=when.month,
        clash=when.clash,
        lang=detect_lang(text),
    )
