"""Telegram HTML for questions, final answers, trip plans and verdicts.

Every line is complete HTML on its own (tags close on the line they open), so the splitter
can cut between any two lines. Everything that came from a model or a person is escaped; a
person the runtime names as `<@ID|Name>` (bot.surface.mention) becomes a mention: a tg://user
link on their name (Telegram links a @username by itself).
"""

from __future__ import annotations

import re
from html import escape

from agent_core.events import AnswerReady, QuestionAsked, Verdict
from agent_core.lang import plural
from agent_core.plan_words import place, priced, share_text, total_text
from bot.surface import MENTION
from tools.plan import HotelStay, Leg, TripPlan, Visit
from tools.plan_costs import CostLine, plan_costs

_LEG_ICON = {"train": "🚄", "flight": "✈️", "taxi": "🚕", "drive": "🚗", "transit": "🚇", "walk": "🚶"}
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_CODE = re.compile(r"`([^`\n]+)`")
_ANSWER_TAG = re.compile(r"</?answer>", re.IGNORECASE)

_WORDS = {
    "zh": {
        "transport": "交通", "stay": "住宿", "visits": "行程", "total": "总计", "breakfast": "含早", "no_breakfast": "不含早",
        "backups": "备选方案", "notes": "备注", "check": "校验结果",
        "pick": "点按下面的选项，或直接回复文字。", "reply": "请直接回复这条消息。",
        "rubric_skipped": "（部分检查未完成）", "not_graded": "未评分（没有可核对的内容）",
    },
    "en": {
        "transport": "Transport", "stay": "Stay", "visits": "Plan", "total": "Total", "breakfast": "breakfast",
        "no_breakfast": "no breakfast", "backups": "Backups", "notes": "Notes", "check": "Check", "pick": "Tap an option below or reply in words.",
        "reply": "Just reply to this message.", "rubric_skipped": " (some checks were skipped)",
        "not_graded": "not graded (nothing could be checked)",
    },
}


def words(lang: str) -> dict[str, str]:
    return _WORDS.get(lang, _WORDS["en"])


def markdownish(text: str) -> str:
    """Escape model text and keep its light formatting (headings, **bold**, `code`) per line."""
    lines = []
    for raw in _ANSWER_TAG.sub("", text).strip().splitlines():
        heading = _HEADING.match(raw)
        if heading:
            lines.append(f"<b>{escape(heading.group(1).replace('**', ''), quote=False)}</b>")
            continue
        # bold is applied between code spans only, so the two never overlap
        segments = _CODE.split(escape(raw, quote=False))
        lines.append("".join(
            f"<code>{seg}</code>" if i % 2 else _BOLD.sub(lambda m: f"<b>{m.group(1)}</b>", seg)
            for i, seg in enumerate(segments)
        ))
    return "\n".join(lines)


def with_mentions(text: str) -> str:
    """`text` escaped, each `<@ID|Name>` a tg://user link (numeric ids only; other ids stay text)."""
    out, at = [], 0
    for m in MENTION.finditer(text):
        out.append(escape(text[at:m.start()], quote=False))
        who, name = m.group("id"), m.group("name") or m.group("id")
        out.append(f'<a href="tg://user?id={who}">{escape(name, quote=False)}</a>' if who.isdigit()
                   else escape(m.group(0), quote=False))
        at = m.end()
    out.append(escape(text[at:], quote=False))
    return "".join(out)


def question_html(question: QuestionAsked, lang: str, mention: tuple[str, str] | None = None) -> str:
    """The model's question verbatim (escaped), with a hint; in groups the asker is mentioned
    so that ForceReply(selective=True) pops up for that person only."""
    head = ""
    if mention is not None:
        user_id, name = mention
        if user_id:
            head = f'<a href="tg://user?id={escape(user_id)}">{escape(name or user_id, quote=False)}</a>\n'
        else:  # a traveller known by @username only: Telegram links the name itself
            head = f"{escape(name, quote=False)}\n"
    hint = words(lang)["pick"] if question.options else words(lang)["reply"]
    return f"{head}❓ {with_mentions(question.question)}\n<i>{escape(hint, quote=False)}</i>"


def answer_html(answer: AnswerReady, verdict: Verdict | None, lang: str) -> str:
    blocks = []
    if answer.text.strip():
        blocks.append(markdownish(answer.text))
    if answer.plan is not None:
        blocks.append(plan_html(answer.plan, lang))
    if verdict is not None:
        blocks.append(verdict_html(verdict, lang))
    return "\n\n".join(blocks) or "…"


def verdict_html(verdict: Verdict, lang: str) -> str:
    w = words(lang)
    if not verdict.graded:  # no label is claimed: say so, and why
        line = f"🧪 <b>{w['check']}</b>: {escape(w['not_graded'], quote=False)}"
        return "\n".join([line, *(f"<i>{escape(r, quote=False)}</i>" for r in verdict.reasons[:1] if r.strip())])
    label = verdict.label if lang == "zh" else f"{verdict.label_en} ({verdict.label})"
    line = f"🧪 <b>{w['check']}</b>: {escape(label, quote=False)}"
    if verdict.rubric_skipped:
        line += escape(w["rubric_skipped"], quote=False)
    reasons = [f"<i>{escape(r, quote=False)}</i>" for r in verdict.reasons[:2] if r.strip()]
    return "\n".join([line, *reasons])


def _leg(leg: Leg, line: CostLine, lang: str) -> str:
    what = " ".join(x for x in (leg.number, leg.airline if leg.kind == "flight" else None) if x)
    route = f"{place(leg.origin, lang)} → {place(leg.destination, lang)}"
    bits = [f"{_LEG_ICON.get(leg.kind, '•')} <b>{escape(what, quote=False)}</b> {escape(route, quote=False)}" if what
            else f"{_LEG_ICON.get(leg.kind, '•')} {escape(route, quote=False)}",
            escape(f"{leg.depart} → {leg.arrive}", quote=False)]
    if leg.seat:
        bits.append(escape(leg.seat, quote=False))
    if price := priced(line, lang):
        bits.append(escape(price, quote=False))
    return " · ".join(bits)


def _stay(stay: HotelStay, line: CostLine, lang: str) -> str:
    w = words(lang)
    bits = [f"🏨 <b>{escape(place(stay.name, lang), quote=False)}</b>", escape(place(stay.city, lang), quote=False),
            escape(f"{stay.checkin_date} → {stay.checkout_date}", quote=False),
            escape(priced(line, lang), quote=False)]
    if stay.breakfast is not None:
        bits.append(w["breakfast"] if stay.breakfast else w["no_breakfast"])
    return " · ".join(b for b in bits if b)


def _visit(visit: Visit, line: CostLine, lang: str) -> str:
    when = " ".join(x for x in (visit.date, visit.start) if x)
    bits = [f"📍 {escape(when, quote=False)} <b>{escape(place(visit.name, lang), quote=False)}</b>",
            escape(place(visit.city, lang), quote=False)]
    if visit.duration_min:
        bits.append(escape(plural(visit.duration_min, "minute", lang), quote=False))
    bits.append(escape(priced(line, lang), quote=False))
    return " · ".join(bits)


def plan_html(plan: TripPlan, lang: str) -> str:
    """The plan, every priced row counted out (tools.plan_costs): the rows add up to the total."""
    w = words(lang)
    costs = plan_costs(plan)
    cur = plan.currency
    lines = [
        f"🗺 <b>{escape(plan.title, quote=False)}</b>",
        escape(f"{place(plan.origin_city, lang)} → {place(plan.destination_city, lang)} · "
               f"{plan.start_date} – {plan.end_date} · {plural(plan.travellers, 'traveller', lang)}", quote=False),
    ]
    for person in plan.party:  # a team trip: each traveller's own way there and back, and what they pay
        head = (f"👤 <b>{escape(person.name, quote=False)}</b> · {escape(place(person.home_city, lang), quote=False)}"
                f" · {escape(share_text(costs, person.name, lang, cur), quote=False)}")
        mine = costs.of(person.name)
        lines += ["", head, *(_leg(leg, mine[i], lang) for i, leg in enumerate(person.legs))]
    shared = [c for c in costs.lines if not c.who]
    if plan.legs:
        legs = [c for c in shared if c.kind == "leg"]
        lines += ["", f"<b>{w['transport']}</b>", *(_leg(leg, legs[i], lang) for i, leg in enumerate(plan.legs))]
    if plan.stays:
        stays = [c for c in shared if c.kind == "stay"]
        lines += ["", f"<b>{w['stay']}</b>", *(_stay(s, stays[i], lang) for i, s in enumerate(plan.stays))]
    if plan.visits:
        tickets = [c for c in shared if c.kind == "ticket"]
        lines += ["", f"<b>{w['visits']}</b>", *(_visit(v, tickets[i], lang) for i, v in enumerate(plan.visits))]
    lines += ["", f"💰 <b>{w['total']}</b>: {escape(total_text(costs, lang, cur), quote=False)}"]
    if plan.alternatives:
        lines += ["", f"<b>{w['backups']}</b>", *(f"• {escape(a, quote=False)}" for a in plan.alternatives)]
    if plan.all_notes:
        lines += ["", f"<b>{w['notes']}</b>", *(f"• {escape(n, quote=False)}" for n in plan.all_notes)]
    return "\n".join(lines)


def notice_html(text: str) -> str:
    return with_mentions(text)
