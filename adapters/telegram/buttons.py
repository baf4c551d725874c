"""The buttons under what the bot posts: a question's options (or, in a group, the reply field
it opens), 👍 / 👎 under a plan, Yes / No on a suggestion, Approve / Reject on a sign-off
request. Their callback data are written and read in one place, updates.py.
"""

from __future__ import annotations

from telegram import ForceReply, InlineKeyboardButton, InlineKeyboardMarkup

from adapters.telegram import texts
from adapters.telegram.transport import Markup
from adapters.telegram.updates import button_data, feedback_data, signoff_data, suggestion_data
from agent_core.events import AnswerReady, QuestionAsked
from bot.surface import Notice


def question_buttons(question: QuestionAsked, is_group: bool, lang: str) -> Markup:
    markup: Markup = None
    if question.options:
        markup = InlineKeyboardMarkup([[InlineKeyboardButton(option[:64], callback_data=button_data(i))]
                                       for i, option in enumerate(question.options[:20])])
    elif is_group:
        markup = ForceReply(selective=True, input_field_placeholder=texts.text("question_placeholder", lang))
    return markup


def plan_buttons(answer: AnswerReady, run: str) -> Markup:
    up, down = feedback_data("up", run), feedback_data("down", run)
    markup: Markup = None
    if answer.plan is not None and up and down:  # 👍 / 👎 under every plan, naming its run
        markup = InlineKeyboardMarkup([[InlineKeyboardButton("👍", callback_data=up),
                                        InlineKeyboardButton("👎", callback_data=down)]])
    return markup


def notice_buttons(notice: Notice, zh: bool) -> Markup:
    markup: Markup = None
    if notice.suggestion_id:  # a suggestion to confirm: Yes / No name it (only the requester's press counts)
        markup = InlineKeyboardMarkup([[
            InlineKeyboardButton("✅ 是" if zh else "✅ Yes", callback_data=suggestion_data("accept", notice.suggestion_id)),
            InlineKeyboardButton("❌ 否" if zh else "❌ No", callback_data=suggestion_data("decline", notice.suggestion_id)),
        ]])
    if notice.signoff_id:  # a sign-off request: the approvers' buttons name it
        markup = InlineKeyboardMarkup([[
            InlineKeyboardButton("✅ 批准" if zh else "✅ Approve", callback_data=signoff_data("approve", notice.signoff_id)),
            InlineKeyboardButton("❌ 驳回" if zh else "❌ Reject", callback_data=signoff_data("reject", notice.signoff_id)),
        ]])
    return markup
