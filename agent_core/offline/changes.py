"""What a follow-up asks of the trip on the table, beyond what `read_wishes` reads on its own.

`read_relative` finds the changes that only mean something against the current trip — a day
later, one more night, one more person, a nicer hotel, someone joining or dropping out, "X
instead" — and the text with those words blanked, so the absolute reading of the same message
(read_wishes) does not take "晚一天" for a one-day trip or "one more person" for a party of one.
`kind_of_remark` sorts a message that changes nothing: thanks, feedback, a question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from agent_core.offline.numbers import EN_NUM, NUM, to_int
from agent_core.party import Traveller, read_party


def _n(k: int) -> str:
    """A Chinese count, optional ("晚一天", "晚两天"); group names differ within a pattern."""
    return rf"(?P<zh{k}>{NUM})?\s*(?:个)?"


_SHIFT_LATER = re.compile(
    rf"(?:晚|推迟|延后|延迟|往后推|推后|顺延)\s*{_n(1)}天|"
    rf"\b(?P<en>{EN_NUM})\s+days?\s+later\b|\b(?:push|move)\s+(?:it|the trip|everything)?\s*(?:back|later)\s+(?:by\s+)?(?P<en2>{EN_NUM})\s+days?\b|"
    rf"\b(?:delay|postpone)\s+(?:it|the trip)?\s*(?:by\s+)?(?P<en3>{EN_NUM})\s+days?\b", re.I)
_SHIFT_EARLIER = re.compile(
    rf"(?:提前|早)\s*{_n(2)}天|\b(?P<en>{EN_NUM})\s+days?\s+(?:earlier|sooner)\b|"
    rf"\b(?:bring|move)\s+(?:it|the trip|everything)?\s*(?:forward|earlier)\s+(?:by\s+)?(?P<en2>{EN_NUM})\s+days?\b", re.I)
_WEEKS_LATER = re.compile(
    rf"(?:晚|推迟|延后|延迟|往后推|推后|顺延)\s*{_n(11)}(?:个)?(?:周|星期|礼拜)|\b(?P<en>{EN_NUM})\s+weeks?\s+later\b|"
    rf"\b(?:push|move)\s+(?:it|the trip|everything)?\s*(?:back|later)?\s*(?:by\s+)?(?P<en2>{EN_NUM})\s+weeks?(?:\s+later)?\b|"
    rf"\b(?:delay|postpone)\s+(?:it|the trip)?\s*(?:by\s+)?(?P<en3>{EN_NUM})\s+weeks?\b", re.I)
_WEEKS_EARLIER = re.compile(
    rf"(?:提前|早)\s*{_n(12)}(?:个)?(?:周|星期|礼拜)|\b(?P<en>{EN_NUM})\s+weeks?\s+(?:earlier|sooner)\b|"
    rf"\b(?:bring|move)\s+(?:it|the trip|everything)?\s*(?:forward|earlier)?\s*(?:by\s+)?(?P<en2>{EN_NUM})\s+weeks?\s+(?:earlier|forward|sooner)\b", re.I)
_MORE_NIGHTS = re.compile(
    rf"(?:多|再)(?:住|玩|待|呆|留)\s*{_n(3)}[晚天夜]|延长\s*{_n(4)}[晚天夜]|(?:加|再加|增加)(?:住|玩|待|呆)?\s*{_n(9)}[晚天夜]|"
    rf"\b(?P<en>{EN_NUM})\s+(?:more|extra)\s+(?:nights?|days?)\b|\badd\s+(?P<en2>{EN_NUM})\s+(?:more\s+)?(?:nights?|days?)\b|"
    rf"\b(?:stay|extend(?:\s+it)?)\s+(?:by\s+)?(?P<en3>{EN_NUM})\s+(?:more\s+)?(?:nights?|days?)\s*(?:longer|more)?\b|"
    rf"\b(?P<en4>{EN_NUM})\s+(?:nights?|days?)\s+longer\b", re.I)
_FEWER_NIGHTS = re.compile(
    rf"(?:少|减)(?:住|玩|待|呆)?\s*{_n(5)}[晚天夜]|缩短\s*{_n(6)}[晚天夜]|"
    rf"\b(?P<en>{EN_NUM})\s+(?:nights?|days?)\s+(?:less|fewer|shorter)\b|\b(?P<en2>{EN_NUM})\s+(?:fewer|less)\s+(?:nights?|days?)\b|"
    r"\b(?:drop|cut|skip|remove|lose)\s+(?:the\s+(?:second|third|last|final|extra)\s+|a\s+|one\s+)night\b", re.I)
_KIN_EN = ("brother|sister|mom|mum|mother|dad|father|son|daughter|friend|wife|husband|partner|colleague|boss|"
           "cousin|uncle|aunt|grandma|grandmother|grandpa|grandfather|girlfriend|boyfriend|roommate")
_KIN_ZH = "弟弟|哥哥|姐姐|妹妹|妈妈|妈|爸爸|爸|朋友|同事|老婆|老公|儿子|女儿|男朋友|女朋友|爱人|表哥|表姐|表弟|表妹|奶奶|爷爷|室友"
_MORE_PEOPLE = re.compile(
    rf"(?:多|加|再加|增加|多加|又多了?)\s*{_n(7)}(?:人|位)|"
    rf"\b(?P<en>{EN_NUM})\s+more\s+(?:person|people|travell?ers?|guests?|adults?)\b|"
    rf"\b(?:add|bring)\s+(?P<en2>{EN_NUM})\s+(?:more\s+)?(?:person|people|travell?ers?|guests?)\b|\banother (?:person|traveller|traveler)\b|\bplus one\b|"
    # someone of the person's own joining, unnamed: one more ("my brother is joining us", "我妈也去")
    rf"\bmy (?:{_KIN_EN})\s+(?:is|will be|wants to be|would like to be)?\s*(?:joining|coming)\b|"
    rf"我(?:的)?(?:{_KIN_ZH})也(?:要)?(?:去|来|一起)", re.I)
_FEWER_PEOPLE = re.compile(
    rf"我(?:的)?(?:{_KIN_ZH})(?:不去了|不来了|去不了|来不了)|"
    rf"\bmy (?:{_KIN_EN})\s+(?:can'?t|cannot|won'?t|isn'?t|is not)\s+(?:come|coming|join|make it)\b|"
    rf"(?:少|减|减少)\s*{_n(8)}(?:人|位)|\b(?P<en>{EN_NUM})\s+(?:less|fewer)\s+(?:person|people|travell?ers?)\b|"
    rf"\b(?P<en2>{EN_NUM})\s+(?:person|people)\s+(?:less|fewer)\b", re.I)
_HOTEL_UP = re.compile(r"(?:好|高档|舒服)(?:一?点|些)的?(?:酒店|住处)|酒店(?:好|升级|高档)(?:一?点|些)?|升级酒店|住好(?:一?点|些)|"
                       r"\b(?:nicer|better|more comfortable|fancier|upgraded?)\s+(?:hotel|place to stay|accommodation)\b|\bupgrade the hotel\b", re.I)
_JOIN = re.compile(r"\b(?:add|adding|plus|also|too|as well|joins?|joining|coming)\b|加上|加入|再加|也来|也去|还有|一起", re.I)
_LEAVE = re.compile(r"(?:\bwithout\s+|\b(?:remove|drop|minus)\s+|去掉|不带)(?P<who><@[A-Z0-9]+>|@?[A-Za-z][A-Za-z_]*|[\u4e00-\u9fff]{1,4})|"
                    r"(?P<who2><@[A-Z0-9]+>|@?[A-Z][A-Za-z_]*|@[A-Za-z_]+)\s*(?:can'?t|cannot|won'?t|is not|isn'?t)\s+(?:come|coming|join|make it)|"
                    r"(?P<who3>@?[A-Za-z][A-Za-z_]*|[\u4e00-\u9fff]{1,4})\s*不(?:去|来)了", re.I)
# a ride earlier or later in the day than the plan's ("能不能晚点出发", "come back earlier")
_LEAVE_LATER = re.compile(r"晚(?:一)?点(?:儿)?(?:再)?(?:出发|走|动身)|出发(?:晚|迟)(?:一)?点|"
                          r"\bleave (?:a bit |a little )?later\b|\blater (?:start|departure)\b|\bless early\b", re.I)
# not early at all: from mid-morning, however early the plan's ride was
_NOT_EARLY = re.compile(r"不想早起|起不来|不喜欢早起|不能太早|不要(?:那么|太)早(?:出发|走|的车)?|别那么早(?:出发|走)?|睡个懒觉|"
                        r"\bnot so early\b|\bsleep in\b|\bnot (?:great|good|keen|fans?) (?:with|on|of) early(?: mornings?| starts?| trains?| flights?)?\b|"
                        r"\b(?:no|hate|avoid|don'?t like|not) early(?: mornings?| starts?| trains?| flights?| departures?)\b", re.I)
_LEAVE_EARLIER = re.compile(r"早(?:一)?点(?:儿)?(?:出发|走|动身)|出发(?:早)(?:一)?点|"
                            r"\bleave (?:a bit |a little )?earlier\b|\bearlier (?:start|departure)\b", re.I)
_BACK_EARLIER = re.compile(r"早(?:一)?点(?:儿)?回(?:来|去|家)?|回(?:来|程)早(?:一)?点|"
                           r"\b(?:come|head|get|go) back (?:a bit |a little )?earlier\b|\breturn (?:a bit |a little )?earlier\b|\bearlier return\b", re.I)
_BACK_LATER = re.compile(r"晚(?:一)?点(?:儿)?回(?:来|去|家)?|回(?:来|程)晚(?:一)?点|"
                         r"\b(?:come|head|get|go) back (?:a bit |a little )?later\b|\breturn (?:a bit |a little )?later\b|\blater return\b", re.I)
INSTEAD = re.compile(r"\binstead\b|\brather\b|\bswitch(?:ed)? to\b|\bchange (?:it |the \w+ )?to\b|\bwhat about\b|\bhow about\b|"
                     r"\bmake it\b|改成?|换成?|改为|换到|改到|改去|换去|不去\S{0,6}了", re.I)
_NEW_TRIP = re.compile(r"\b(?:another|a new|a different|new) (?:trip|journey|plan)\b|\bplan (?:another|a new)\b|"
                       r"另(?:一个|外一个)(?:行程|旅行)|新的?行程|再(?:帮我)?(?:规划|安排|计划)一个", re.I)


@dataclass(frozen=True, slots=True)
class Relative:
    """The changes a follow-up states relative to the trip; zero / empty: none."""

    shift_days: int = 0  # the whole trip later (+) or earlier (-)
    nights: int = 0  # more (+) or fewer (-) nights
    travellers: int = 0  # more (+) or fewer (-) people, unnamed
    hotel_up: bool = False  # a nicer hotel than the plan has
    joining: tuple[Traveller, ...] = ()  # named people joining a (team) trip
    leaving: tuple[str, ...] = ()  # named people dropping out
    instead: bool = False  # "X instead", "改去X": the places named replace the trip's
    new_trip: bool = False  # "another trip": nothing of the current one carries over
    leave_later: int = 0  # the way there later (+1; +2: not early at all) or earlier (-1) in the day than the plan's
    back_later: int = 0  # the way back later (+) or earlier (-) in the day
    spans: tuple[tuple[int, int], ...] = field(default=())

    @property
    def empty(self) -> bool:
        return not (self.shift_days or self.nights or self.travellers or self.hotel_up or self.joining or self.leaving
                    or self.leave_later or self.back_later)

    def blank(self, text: str) -> str:
        """`text` with the words of these changes replaced by spaces."""
        return "".join(" " if any(s <= i < e for s, e in self.spans) else ch for i, ch in enumerate(text))


def _count(m: re.Match[str]) -> int:
    raw = next((v for k, v in m.groupdict().items() if k.startswith(("zh", "en")) and v), None)
    return (to_int(raw) or 1) if raw else 1


def _signed(text: str, up: re.Pattern[str], down: re.Pattern[str], spans: list[tuple[int, int]]) -> int:
    for pattern, sign in ((up, 1), (down, -1)):
        if m := pattern.search(text):
            spans.append(m.span())
            return sign * _count(m)
    return 0


def read_relative(text: str, party: tuple[Traveller, ...] = ()) -> Relative:
    spans: list[tuple[int, int]] = []
    shift = 7 * _signed(text, _WEEKS_LATER, _WEEKS_EARLIER, spans) or _signed(text, _SHIFT_LATER, _SHIFT_EARLIER, spans)
    nights = _signed(text, _MORE_NIGHTS, _FEWER_NIGHTS, spans)
    people = _signed(text, _MORE_PEOPLE, _FEWER_PEOPLE, spans)
    back_later = _signed(text, _BACK_LATER, _BACK_EARLIER, spans)
    if not_early := _NOT_EARLY.search(text):  # not early at all: more than "a bit later"
        spans.append(not_early.span())
    leave_later = 2 if not_early else _signed(text, _LEAVE_LATER, _LEAVE_EARLIER, spans)
    hotel_up = bool(m := _HOTEL_UP.search(text))
    if m:
        spans.append(m.span())
    joining: tuple[Traveller, ...] = ()
    if _JOIN.search(text):
        named = [t for t in read_party(text) if not any(p.label.lower() == t.label.lower() for p in party)]
        joining = tuple(named)
        if joining:
            people = 0  # "add Dan (Wuhan), one more person": Dan is the one
    leaving = tuple(who for m in _LEAVE.finditer(text) if (who := (m.group("who") or m.group("who2") or m.group("who3") or "").strip())
                    and any(p.named_by(who) for p in party))
    return Relative(shift_days=shift, nights=nights, travellers=people, hotel_up=hotel_up, joining=joining,
                    leaving=leaving, instead=bool(INSTEAD.search(text)), new_trip=bool(_NEW_TRIP.search(text)),
                    leave_later=max(-1, min(2, leave_later)), back_later=int(back_later > 0) - int(back_later < 0),
                    spans=tuple(spans))


class Remark(StrEnum):
    """A message after a plan that changes nothing."""

    THANKS = "thanks"
    FEEDBACK = "feedback"  # "the total does not add up", "the train is too early"
    QUESTION = "question"  # "why this train?"
    UNCLEAR = "unclear"


_THANKS = re.compile(r"\bthanks?\b|\bthank you\b|\bthx\b|\bty\b|\bcheers\b|谢谢|多谢|感谢|辛苦|^\s*(?:ok(?:ay)?|great|cool|nice|perfect|awesome|"
                     r"good|got it|sounds good|looks good|love it|好的?|行|可以|太好了|不错|收到|明白了?|完美|很好|太棒了?|棒)[\s!.。！~,，]*$|"
                     r"looks (?:great|good|perfect)|\blove it\b|完美|太棒", re.I)
_FEEDBACK = re.compile(r"does(?:n'?t| not) add up|don'?t add up|not add(?:ing)? up|\bwrong\b|\bmistake|\bincorrect\b|\berror\b|"
                       r"does(?:n'?t| not) make sense|not right|\bbug\b|\bbroken\b|too (?:early|late|long|short|tight|rushed|much)|"
                       r"\bdon'?t like\b|\bnot happy\b|\bbad\b|\bweird\b|\bodd\b|不对|错了|算错|有误|有问题|对不上|不合理|加起来|不一致|太早|太晚|太赶|"
                       r"太累|不喜欢|不满意|奇怪|总价|合计不", re.I)
_QUESTION = re.compile(r"[?？]\s*$|^\s*(?:why|how|what|which|when|where|who|is|are|can|could|does|do|did|will|would|should|"
                       r"为什么|为啥|怎么|什么|哪|多少|几|是否|能否|可不可以|能不能)|[吗呢么]\s*[?？]?\s*$", re.I)


def kind_of_remark(text: str) -> Remark:
    """What a message that changes nothing is; feedback before thanks ("thanks, but it is wrong")."""
    if _FEEDBACK.search(text):
        return Remark.FEEDBACK
    if _QUESTION.search(text):
        return Remark.QUESTION
    if _THANKS.search(text):
        return Remark.THANKS
    return Remark.UNCLEAR


# a request put as a question ("can we get first class on the train?"): a change when it names one
ASKS_FOR = re.compile(r"\b(?:can|could) (?:we|i|you)\b|\bplease\b|\b(?:i|we)'?d (?:like|prefer)\b|能不能|可不可以|可以|想要|要不要", re.I)
QUESTION_ABOUT_PLAN = re.compile(r"^\s*(?:why|为什么|为啥|怎么(?:选|会|是)|how come)|\b(?:this|that|the)\s+(?:train|flight|hotel|sight|plan)\b.*[?？]|"
                                 r"这(?:趟|班|个|家)(?:车|火车|高铁|航班|飞机|酒店)|\bhow much\b|多少钱|几点|what time", re.I)
