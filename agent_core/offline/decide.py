"""The offline planner's decision for one turn, from the request state: answer a remark, say why
a change cannot be made, ask what is missing (where to, from where, which day), search, or
submit the plan."""

from __future__ import annotations

from datetime import date, timedelta

from agent_core.offline.date_words import WEEKDAY_NAMES
from agent_core.offline.dates import WeekdayClash
from agent_core.offline.finish import Finishing
from agent_core.offline.options import Ride
from agent_core.offline.places import Resolution
from agent_core.offline.plan_text import summary_text
from agent_core.offline.replies import refusal_text, remark_text
from agent_core.offline.state import Said
from agent_core.offline.team import plan_team, team_summary
from agent_core.offline.texts import TRANSPORT_NAMES, say
from agent_core.offline.transcript import ToolOutcome
from agent_core.offline.turns import Call, Turn
from agent_core.offline.wishes import read_wishes
from tools.plan import TripPlan
from tools.travel.geo import City

DATE_CHOICES = {"zh": ("明天", "本周六", "下周五", "下周六"),
                "en": ("tomorrow", "this Saturday", "next Friday", "next Saturday")}
_WEEKDAYS_ZH = "一二三四五六日"


class Decider(Finishing):
    def decide(self) -> Turn:
        s, t = self.s, self.t
        if t.plan_in_phase and t.last_plan is not None:
            return Turn(text=summary_of(t.last_plan, self.lang))
        refused = self.outcome("plan")
        if refused is not None and not refused.ok:
            return self.say("plan_refused", reason=(refused.output or "")[7:200])
        if s.refused is not None:
            return Turn(text=refusal_text(s.refused, self.lang, t.last_plan is not None))
        if s.last is Said.REMARK and s.remark is not None and t.last_plan is not None and not t.reviews:
            return Turn(text=remark_text(s.remark, s.last_text, t.last_plan, self.lang))
        if s.last is Said.CHANGE and not s.last_changes and t.last_plan is not None and not t.reviews:
            return self.say("nothing_changed")

        dest = self.resolve_slot("destination")
        if isinstance(dest, Turn):
            return dest
        if self.req.clash is not None:
            return self.ask_clash(self.req.clash)
        start = self.req.start
        if start is not None and start < self.today:
            suggest = self.today + timedelta(days=1)
            return self.say("past_date", day=start.isoformat(), today=self.today.isoformat(), suggest=suggest.isoformat())
        if s.team:
            if start is None:
                return self.ask_date()
            nights = self.req.trip_nights if self.req.trip_nights is not None else 1
            return plan_team(self, list(s.party), dest, start, nights)
        origin = self.resolve_slot("origin")
        if isinstance(origin, Turn):
            return origin
        if origin.id == dest.id:
            return self.say("same_city", city=self.city_name(dest))
        skipped = [c for c in s.more_destinations if c.id not in (origin.id, dest.id)]
        if skipped:
            names = ("、" if self.lang == "zh" else ", ").join(self.city_name(c) for c in skipped)
            self.notes.append(say("one_destination", self.lang, city=self.city_name(dest), skipped=names,
                                  next=self.city_name(skipped[0])))
        if start is None:
            return self.ask_date()
        length = self.req.trip_nights
        if length is None:
            length = 1
            self.notes.append(say("length_default", self.lang, days=2, nights=1))
        return self.search_or_plan(origin, dest, start, start + timedelta(days=length), length)

    # -- questions ---------------------------------------------------------------------------
    def ask_date(self) -> Turn:
        """Which day, asked again while the answers bring something: an answer that says
        something else about the trip ("by plane", "next month", "breakfast please") is kept
        (agent_core.offline.state) and the day asked for once more; two answers that say nothing
        the planner can read end the asking."""
        answers = self.answers_to("date")
        brought = [self.brings_something(a.text) for a in answers]
        if brought.count(False) >= 2:
            return self.say("no_date")
        last = answers[-1] if answers else None
        month = self.req.month
        if last is not None and not brought[-1]:
            question = say("ask_date_again", self.lang)
        else:
            question = say("ask_date_in_month" if month else "ask_date", self.lang,
                           month=self.month_name(month) if month else "")
            if last is not None:  # the answer is quoted: the person sees it was heard
                question = say("ask_date_noted", self.lang, noted=_quoted(last.text), question=_lower_first(question))
        return self.ask("date", question, self.date_options())

    def brings_something(self, text: str) -> bool:
        """An answer that says something about the trip other than the day asked for."""
        wishes = read_wishes(text, self.today)
        return bool(wishes.stated()) or any(m.city is not None for m in self.p.places.mentions(text))

    def month_name(self, month: date) -> str:
        return f"{month.month}月" if self.lang == "zh" else f"{month:%B}"

    def date_options(self) -> list[str]:
        """A few likely departure days, each labelled with its date first (what an answer is read by)."""
        out: dict[date, str] = {}
        if self.req.month is not None:  # the Fridays and Saturdays of the month asked for
            first = max(self.req.month, self.today + timedelta(days=1))
            days = [first + timedelta(days=k) for k in range(31)]
            for day in [d for d in days if d.month == self.req.month.month and d.weekday() in (4, 5)][:4]:
                out[day] = self.day_label(day)
            return list(out.values())
        for phrase in DATE_CHOICES["zh" if self.lang == "zh" else "en"]:
            said = read_wishes(phrase, self.today).start
            if said is not None and said > self.today and said not in out:
                out[said] = f"{said.isoformat()}（{phrase}）" if self.lang == "zh" else f"{said.isoformat()} ({phrase})"
        return [out[day] for day in sorted(out)]  # in calendar order

    def day_label(self, day: date) -> str:
        if self.lang == "zh":
            return f"{day.isoformat()}（周{_WEEKDAYS_ZH[day.weekday()]}）"
        return f"{day.isoformat()} ({WEEKDAY_NAMES[day.weekday()]})"

    def ask_clash(self, clash: WeekdayClash) -> Turn:
        """The date written wins, but a weekday that is not that date's is asked about."""
        if self.asked("date") >= 1:
            return self.say("no_date")
        near = min((clash.day + timedelta(days=k) for k in range(-6, 7) if k and (clash.day + timedelta(days=k)).weekday() == clash.said),
                   key=lambda d: abs((d - clash.day).days))
        said = f"周{_WEEKDAYS_ZH[clash.said]}" if self.lang == "zh" else WEEKDAY_NAMES[clash.said]
        actual = f"周{_WEEKDAYS_ZH[clash.day.weekday()]}" if self.lang == "zh" else WEEKDAY_NAMES[clash.day.weekday()]
        question = say("ask_weekday", self.lang, day=clash.day.isoformat(), actual=actual, said=said)
        return self.ask("date", question, [self.day_label(clash.day), self.day_label(near)])

    def resolve_slot(self, slot: str) -> City | Turn:
        name = self.req.destination if slot == "destination" else self.req.origin
        if name is None and slot == "origin":
            return self.origin_from_location()
        if name is None:
            if self.asked("destination") >= 2:
                return self.say("no_destination")
            return self.ask("destination", say("ask_destination_again" if self.asked("destination") else "ask_destination", self.lang),
                            self.destinations_near())
        res: Resolution = self.p.places.resolve_option(name)
        if res.city is not None:
            if res.poi is not None and slot == "destination" and res.poi.id not in self.wanted_pois:
                self.wanted_pois.append(res.poi.id)
            return res.city
        if (self.asked(slot) >= 1 and not res.ambiguous) or self.asked(slot) >= 2:
            return self.say("unknown_place", name=name)
        if res.ambiguous:
            key = "ask_city_in_region" if res.region else "ask_ambiguous_place"
            return self.ask(slot, say(key, self.lang, name=name), res.options)
        if res.options:
            return self.ask(slot, say("ask_unknown_place", self.lang, name=name), res.options)
        return self.say("unknown_place", name=name)

    def destinations_near(self) -> list[str]:
        """A few cities a short trip from where the person leaves, offered with "where to?"."""
        home = self.p.places.resolve(self.req.origin).city if self.req.origin else None
        return [c.label for c in self.p.places.near(home)] if home is not None else []

    def origin_from_location(self) -> City | Turn:
        where = self.outcome("where")
        if where is None:
            return Turn(calls=[Call("current_location", {}, "where")])
        city = self.city_in_location(where)
        if city is None:
            if self.asked("origin") >= 2:
                return self.say("no_destination")
            return self.ask("origin", say("ask_origin", self.lang))
        self.notes.append(say("origin_default", self.lang, city=self.city_name(city)))
        return city

    def city_in_location(self, where: ToolOutcome) -> City | None:
        data = where.json()
        candidates: list[str] = []
        if isinstance(data, dict):
            candidates += [data[key] for key in ("city", "city_name", "name_zh", "name") if isinstance(data.get(key), str)]
        elif where.output:
            candidates.append(where.output)
        for text in candidates:
            res = self.p.places.resolve(text)
            if res.city is not None:
                return res.city
            for m in self.p.places.mentions(text):
                if m.city is not None:
                    return m.city
        return None

    # -- the rides, then the rest ----------------------------------------------------------------
    def search_or_plan(self, origin: City, dest: City, start: date, end: date, nights: int) -> Turn:
        preferred = self.mode(origin, dest)
        other = "flight" if preferred == "train" else "train"
        calls: list[Call] = []
        chosen: dict[str, tuple[str, list[Ride]]] = {}
        legs: list[tuple[str, City, City, date, str | None]] = [("out", origin, dest, start, self.req.depart_after)]
        if not self.req.one_way:
            legs.append(("back", dest, origin, end, self.return_after(nights)))
        for leg, a, b, day, after in legs:
            found = self.rides(f"{leg}_{preferred}", day)
            if found is None:
                calls.append(self.ride_call(preferred, a, b, day, f"{leg}_{preferred}", after))
                continue
            if found:
                chosen[leg] = (preferred, found)
                continue
            fallback = self.rides(f"{leg}_{other}", day)
            if fallback is None:
                calls.append(self.ride_call(other, a, b, day, f"{leg}_{other}", after))
            elif fallback:
                chosen[leg] = (other, fallback)
                if self.req.transport:
                    self.notes.append(say("transport_switched", self.lang, wanted=TRANSPORT_NAMES[preferred][self.lang],
                                          used=TRANSPORT_NAMES[other][self.lang]))
            else:
                return self.say("no_transport", day=day.isoformat(), origin=self.city_name(a), destination=self.city_name(b))
        rest = self.searches(dest, start, end, nights)
        if isinstance(rest, Turn):
            return rest
        calls += rest
        if calls:
            return Turn(calls=calls)
        return self.finish(origin, dest, start, nights, chosen)


def _quoted(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _lower_first(question: str) -> str:
    """'Which day ...' inside a sentence: 'which day ...' (Chinese has no case)."""
    return question[:1].lower() + question[1:] if question[:1].isascii() else question


def summary_of(plan: TripPlan, lang: str) -> str:
    return team_summary(plan, lang) if plan.party else summary_text(plan, lang)
