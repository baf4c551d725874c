"""Block Kit messages for questions, plans and notices, cut to fit Slack's limits.

Limits we stay under (Slack refuses the message otherwise): 50 blocks a message, 3000
characters of section text, 150 of header text, 75 of button text, 40,000 of message text,
and roughly 13,000 characters of text across all the blocks of one message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from adapters.slack.mrkdwn import escape, live, split_text, to_mrkdwn
from adapters.slack.texts import leg_kind, t
from agent_core.events import AnswerReady, QuestionAsked, Verdict
from agent_core.lang import plural
from agent_core.plan_words import place, priced, share_text, total_text
from bot.store.base import SignoffRow
from bot.surface import Notice
from bot.team.cards import card_line
from tools.plan import Leg, TripPlan
from tools.plan_costs import CostLine, plan_costs

Block = dict[str, Any]

SECTION_LIMIT = 2900
HEADER_LIMIT = 150
BUTTON_LIMIT = 75
VALUE_LIMIT = 2000
BLOCKS_PER_MESSAGE = 45
TEXT_PER_MESSAGE = 10_000
OPTION_ACTION_PREFIX = "ask_option_"
QUESTION_BLOCK_PREFIX = "ask:"


@dataclass(frozen=True, slots=True)
class SlackPost:
    text: str  # the fallback: notifications, screen readers, clients without blocks
    blocks: list[Block] = field(default_factory=list)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def section(mrkdwn: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}


def sections(mrkdwn: str) -> list[Block]:
    return [section(piece) for piece in split_text(mrkdwn, SECTION_LIMIT)]


def header(plain: str) -> Block:
    return {"type": "header", "text": {"type": "plain_text", "text": _clip(plain.strip() or "…", HEADER_LIMIT)}}


def context(mrkdwn: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": _clip(mrkdwn, SECTION_LIMIT)}]}


def block_text(block: Block) -> str:
    if block["type"] in ("section", "header"):
        return str(block["text"]["text"])
    if block["type"] == "context":
        return "\n".join(str(e["text"]) for e in block["elements"])
    if block["type"] == "actions":
        return "\n".join(f"• {e['text']['text']}" for e in block["elements"])
    return ""


def pack(blocks: list[Block]) -> list[SlackPost]:
    """Group blocks into messages that Slack accepts, each with its own text fallback."""
    posts: list[SlackPost] = []
    current: list[Block] = []
    size = 0
    for block in blocks:
        n = len(block_text(block))
        if current and (len(current) >= BLOCKS_PER_MESSAGE or size + n > TEXT_PER_MESSAGE):
            posts.append(_post(current))
            current, size = [], 0
        current.append(block)
        size += n
    if current:
        posts.append(_post(current))
    return posts


def _post(blocks: list[Block]) -> SlackPost:
    text = "\n".join(s for s in (block_text(b) for b in blocks) if s)
    return SlackPost(text=text or " ", blocks=blocks)


STOP_ACTION = "stop_run"  # the Stop button on a status message
STOP_VALUE = "stop"  # a Stop button's value naming no run (buttons posted before runs were named)


def status(text: str, stop_label: str, action_id: str, run: str = "") -> list[Block]:
    """A status message of a working run: its lines, and a Stop button beside them whose value
    names the run (bot.surface.run_ref), so a press stops that run only."""
    return [{**section(_clip(text, 3000)), "accessory": {
        "type": "button", "action_id": action_id, "style": "danger", "value": run or STOP_VALUE,
        "text": {"type": "plain_text", "text": stop_label}}}]


def question(q: QuestionAsked, user_id: str, lang: str) -> SlackPost:
    mention = f"<@{user_id}> " if user_id else ""
    blocks = sections(f"{mention}❓ {live(q.question)}")
    if q.options:
        buttons = [
            {
                "type": "button",
                "action_id": f"{OPTION_ACTION_PREFIX}{i}",
                "text": {"type": "plain_text", "text": _clip(option, BUTTON_LIMIT)},
                "value": option[:VALUE_LIMIT],
            }
            for i, option in enumerate(q.options[:25])
        ]
        blocks.append({"type": "actions", "block_id": (QUESTION_BLOCK_PREFIX + q.tool_call_id)[:255],
                       "elements": buttons})
        blocks.append(context(t("options_hint", lang)))
    fallback = f"{mention}❓ {live(q.question)}"
    if q.options:
        fallback += "\n" + "\n".join(f"• {escape(o)}" for o in q.options)
    return SlackPost(text=fallback[:39_000], blocks=blocks)


def chosen(q_blocks: list[Block], user_id: str, option: str, lang: str) -> list[Block]:
    """The question's blocks once answered by a click: the buttons give way to the choice."""
    kept = [b for b in q_blocks if b.get("type") == "section"]
    return [*kept, context(t("chose", lang, user=user_id, option=escape(option)))]


def _leg_line(leg: Leg, line: CostLine, lang: str) -> str:
    head = " ".join(p for p in (leg_kind(leg.kind, lang), leg.number or "") if p)
    extras = " · ".join(p for p in (leg.seat or "", leg.airline or "", priced(line, lang)) if p)
    route = f"{head}  {place(leg.origin, lang)} {leg.depart} → {place(leg.destination, lang)} {leg.arrive}"
    return escape(route + (f" · {extras}" if extras else ""))


def plan_blocks(plan: TripPlan, lang: str) -> list[Block]:
    """The plan, every priced row counted out (tools.plan_costs): the rows add up to the total."""
    cur = plan.currency
    costs = plan_costs(plan)
    shared = [c for c in costs.lines if not c.who]
    blocks: list[Block] = [header(plan.title)]
    blocks.append(context(escape(
        f"{place(plan.origin_city, lang)} → {place(plan.destination_city, lang)} · {plan.start_date} – {plan.end_date}"
        f" · {plural(plan.travellers, 'traveller', lang)}")))
    for person in plan.party:  # a team trip: each traveller's own way there and back, and what they pay
        mine = costs.of(person.name)
        lines = [_leg_line(leg, mine[i], lang) for i, leg in enumerate(person.legs)]
        # the name stays a live mention (<@U..>): only the city and share are the person's text
        head = (f"*{live(person.name)}* · {escape(place(person.home_city, lang))}"
                f" · {escape(share_text(costs, person.name, lang, cur))}")
        blocks += sections(head + "\n" + "\n".join(lines))
    if plan.legs:
        legs = [c for c in shared if c.kind == "leg"]
        lines = [_leg_line(leg, legs[i], lang) for i, leg in enumerate(plan.legs)]
        blocks += sections(f"*{t('legs', lang)}*\n" + "\n".join(lines))
    if plan.stays:
        stays = [c for c in shared if c.kind == "stay"]
        lines = []
        for i, s in enumerate(plan.stays):
            parts = [place(s.name, lang), place(s.city, lang), f"{s.checkin_date} → {s.checkout_date}", priced(stays[i], lang)]
            if s.breakfast:
                parts.append(t("breakfast", lang))
            lines.append(escape(" · ".join(p for p in parts if p)))
        blocks += sections(f"*{t('hotel', lang)}*\n" + "\n".join(lines))
    if plan.visits:
        tickets = [c for c in shared if c.kind == "ticket"]
        lines = []
        for i, v in enumerate(plan.visits):
            when = " ".join(p for p in (v.date, v.start or "") if p)
            lines.append(escape(f"{when}  {place(v.name, lang)} · {priced(tickets[i], lang)}"))
        blocks += sections(f"*{t('sights', lang)}*\n" + "\n".join(lines))
    blocks.append(section(f"*{t('total', lang)}*: {escape(total_text(costs, lang, cur))}"))
    if plan.alternatives:
        blocks += sections(f"*{t('backups', lang)}*\n" + "\n".join(f"• {escape(a)}" for a in plan.alternatives))
    if plan.all_notes:
        blocks += sections(f"*{t('notes', lang)}*\n" + "\n".join(f"• {escape(n)}" for n in plan.all_notes))
    if plan.data_source in ("sandbox", "mixed"):
        blocks.append(context(t(plan.data_source, lang)))
    return blocks


def verdict_block(verdict: Verdict, lang: str) -> Block:
    if not verdict.graded:  # no label is claimed: say so, and why
        return context("\n".join([t("not_graded", lang), *(f"• {escape(r)}" for r in verdict.reasons[:3])]))
    label = verdict.label if lang == "zh" else f"{verdict.label_en} ({verdict.label})"
    lines = [t("verdict", lang, label=escape(label))]
    lines += [f"• {escape(r)}" for r in verdict.reasons[:3]]
    return context("\n".join(lines))


FEEDBACK_ACTION = "plan_feedback"
FEEDBACK_RATINGS = ("up", "down")


def feedback(run: str, lang: str) -> Block:
    """👍 / 👎 under a plan (Slack's feedback_buttons); each value names the rating and the run."""
    def button(rating: str, face: str) -> Block:
        return {"text": {"type": "plain_text", "text": face}, "value": f"{rating}:{run}",
                "accessibility_label": t(f"feedback_{rating}", lang)}

    return {"type": "context_actions", "block_id": f"feedback:{run}"[:255], "elements": [{
        "type": "feedback_buttons", "action_id": FEEDBACK_ACTION,
        "positive_button": button("up", "👍"), "negative_button": button("down", "👎")}]}


def answer(a: AnswerReady, verdict: Verdict | None, lang: str, run: str = "") -> list[SlackPost]:
    """The answer's messages; a plan of a known run ends with the feedback buttons."""
    blocks: list[Block] = []
    if a.plan is not None:
        blocks += plan_blocks(a.plan, lang)
        if a.text.strip():
            blocks.append({"type": "divider"})
    if a.text.strip():
        blocks += sections(to_mrkdwn(a.text))
    if verdict is not None:
        blocks.append(verdict_block(verdict, lang))
    if not blocks:
        blocks.append(section("…"))
    if a.plan is not None and run:
        blocks.append(feedback(run, lang))
    return pack(blocks)


SIGNOFF_ACTION_PREFIX = "signoff_"


SUGGESTION_ACTION_PREFIX = "suggestion_"


def notice(n: Notice) -> list[SlackPost]:
    zh = any("\u4e00" <= ch <= "\u9fff" for ch in n.text)
    if n.suggestion_id:  # a suggestion to confirm: Yes / No name it (only the requester's press counts)
        text = live(n.text)
        buttons = [
            {"type": "button", "action_id": f"{SUGGESTION_ACTION_PREFIX}{choice}", "style": style,
             "text": {"type": "plain_text", "text": label_zh if zh else label_en}, "value": f"{choice}:{n.suggestion_id}"}
            for choice, style, label_en, label_zh in (("accept", "primary", "Yes", "是"), ("decline", "danger", "No", "否"))
        ]
        blocks = [*sections(text), {"type": "actions", "block_id": f"suggestion:{n.suggestion_id}", "elements": buttons}]
        return [SlackPost(text=text[:39_000], blocks=blocks)]
    if n.signoff_id:  # a sign-off request: the approvers' mentions stay live, and two buttons name it
        text = live(n.text)
        buttons = [
            {"type": "button", "action_id": f"{SIGNOFF_ACTION_PREFIX}{decision}", "style": style,
             "text": {"type": "plain_text", "text": label_zh if zh else label_en}, "value": f"{decision}:{n.signoff_id}"}
            for decision, style, label_en, label_zh in (("approve", "primary", "Approve", "批准"),
                                                         ("reject", "danger", "Reject", "驳回"))
        ]
        blocks = [section(text), {"type": "actions", "block_id": f"signoff:{n.signoff_id}", "elements": buttons}]
        return [SlackPost(text=text, blocks=blocks)]
    return [SlackPost(text=piece) for piece in split_text(live(n.text), 39_000)]


def decided_line(signoff: SignoffRow | None, lang: str, timezone: str) -> str:
    """What a closed card says (bot.team.cards.card_line) in Slack's words: the approver is a
    mention its text makes of their id."""
    return card_line(signoff, timezone, lambda key, **values: t(key, lang, **values), lambda user_id: user_id)


def closed_card(line: str) -> SlackPost:
    """A sign-off request once decided (or out of date): no buttons, who decided and when."""
    text = live(line)
    return SlackPost(text=text, blocks=[section(text)])
