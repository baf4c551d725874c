"""What only the Telegram surface says (button notes, the command menu), in Chinese and English."""

from __future__ import annotations

from telegram import BotCommand

from agent_core.lang import pick

_TEXTS: dict[str, dict[str, str]] = {
    "button_stale": {"zh": "这个问题已经回答过了。", "en": "That question has already been answered."},
    "button_junk": {"zh": "这个按钮已失效，请直接发文字。", "en": "This button no longer works; please reply in words."},
    "button_chosen": {"zh": "已选择：{option}", "en": "Chosen: {option}"},
    "question_placeholder": {"zh": "回复这个问题", "en": "Your answer"},
    "stop_button": {"zh": "⏹ 停止", "en": "⏹ Stop"},
    "stop_pressed": {"zh": "正在停止…", "en": "Stopping…"},
    "feedback_thanks": {"zh": "谢谢你的反馈！", "en": "Thanks for the feedback!"},
    "feedback_unknown": {"zh": "找不到这份行程的记录，反馈没有保存。", "en": "That plan is no longer on record; the feedback was not kept."},
    "signoff_approved": {"zh": "✅ 行程已由 {who} 于 {at} 批准", "en": "✅ Plan approved by {who} at {at}"},
    "signoff_rejected": {"zh": "❌ 行程已由 {who} 于 {at} 驳回", "en": "❌ Plan rejected by {who} at {at}"},
    "signoff_expired": {"zh": "⌛ 截止 {at} 前无人审批", "en": "⌛ Nobody decided by {at}"},
    "signoff_closed": {"zh": "这次审批已经结束。", "en": "This sign-off is closed."},
    "guest_cut": {"zh": "…（以客人身份只能回复一条消息，内容已截短；把我加入这个群可看到全部。）",
                  "en": "… (as a guest I can answer with one message only, so this is cut short; add me to "
                        "the chat to see all of it.)"},
}

_COMMANDS: dict[str, list[tuple[str, str]]] = {
    "en": [("start", "What this bot does"), ("help", "How to ask for a trip plan"),
           ("new", "Start a fresh conversation"), ("cancel", "Stop the current plan"),
           ("stop", "Stop now, keep what was written"), ("status", "What the bot is doing now")],
    "zh": [("start", "这个机器人能做什么"), ("help", "怎样提出出行需求"), ("new", "开始新的对话"),
           ("cancel", "停止当前规划"), ("stop", "立即停止，保留已写的内容"), ("status", "查看当前进度")],
}


def text(key: str, lang: str, **values: object) -> str:
    return pick(_TEXTS[key], lang, **values)


def commands(lang: str) -> list[BotCommand]:
    return [BotCommand(name, description) for name, description in _COMMANDS[lang]]
