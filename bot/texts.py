"""What the runtime itself says to people, in Chinese and English."""

from __future__ import annotations

import re

from agent_core.lang import pick

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def detect_lang(text: str, default: str = "en") -> str:
    """zh for any Chinese; en for English words; `default` (the conversation's language) for
    text that says neither: a number, a train number, a place name alone, or keyboard mash
    ("asdf" in a Chinese conversation is no reason to switch to English)."""
    if _CJK.search(text):
        return "zh"
    words = _LATIN_WORD.findall(text)
    if len(words) >= 2 or any(w.lower() in _ENGLISH_ALONE for w in words):
        return "en"
    return default


# English words that say "English" even alone
_ENGLISH_ALONE = frozenset(
    ["hi", "hello", "hey", "thanks", "thank", "thx", "yes", "no", "ok", "okay", "sure", "please", "help", "status", "cancel", "new", "start", "stop", "tomorrow", "today", "tonight", "weekend", "next", "cheaper", "flight", "flights", "train", "trains", "hotel", "why", "what", "how", "when", "where"]
)


_TEXTS: dict[str, dict[str, str]] = {
    "help": {
        "zh": "我是出行规划助手。告诉我从哪里出发、去哪里、哪天、玩几天（可以加上预算和偏好），我来查火车、航班、酒店和景点，并给出完整行程。\n命令：/new 开始新对话，/stop 停下正在写的回答（已写的保留），/cancel 停止当前规划，/status 查看进度，/help 显示这段说明。",
        "en": "I plan trips. Tell me where from, where to, when and for how long (budget and preferences welcome), and I will look up trains, flights, hotels and sights and give you a full itinerary.\nCommands: /new starts a fresh conversation, /stop stops the answer being written (what is written stays), /cancel stops the current plan, /status tells what I am doing, /help shows this.",
    },
    "unknown_command": {"zh": "{command}：没有这个命令。", "en": "{command}: no such command."},
    "queued": {
        "zh": "我还在处理上一个请求，这条消息已记下，处理完后马上接着办。",
        "en": "I'm still working on your previous request. I've noted this message and will handle it right after.",
    },
    "cancelled": {"zh": "已停止当前规划。可以直接发新的需求。", "en": "Stopped the current plan. Send a new request whenever you like."},
    "reminder": {
        "zh": "提醒一下：我还在等你回答这个问题——{question}",
        "en": "A reminder: I'm still waiting for your answer to this question: {question}",
    },
    "nothing_to_stop": {
        "zh": "现在没有正在写的回答，没什么可停止的。",
        "en": "Nothing is being written right now, so there is nothing to stop.",
    },
    "stop_refused": {
        "zh": "只有发起这次规划的人可以停止它。",
        "en": "Only the person who asked for this plan can stop it.",
    },
    "stopped_writing": {
        "zh": "已停止：回答写到一半就停下了，上面是已写的部分，已保留在对话里。接着发消息就能继续。",
        "en": "Stopped while the answer was being written; the part above is kept in the conversation. Send a message to continue.",
    },
    "stopped_tool": {
        "zh": "已停止：当时正在运行 {tool}，它的结果不会被使用。接着发消息就能继续。",
        "en": "Stopped while {tool} was running; its result will not be used. Send a message to continue.",
    },
    "stopped_thinking": {
        "zh": "已停止：模型当时正在思考下一步。接着发消息就能继续。",
        "en": "Stopped while the model was working out its next step. Send a message to continue.",
    },
    "nothing_to_cancel": {"zh": "现在没有正在进行的规划。", "en": "There is nothing running to cancel."},
    "new": {"zh": "好的，已开始新的对话。想去哪里？", "en": "Fresh start. Where would you like to go?"},
    "status_idle": {"zh": "空闲中：发一条出行需求就可以开始。", "en": "Idle: send a trip request to start."},
    "status_running": {"zh": "正在规划中（第 {step} 步，最多 {max} 步）。", "en": "Planning (step {step} of at most {max})."},
    "status_waiting": {"zh": "正在等你回答：{question}", "en": "Waiting for your answer to: {question}"},
    "status_usage": {
        "zh": "本次行程已用：{calls} 次模型调用，输入 {prompt} / 输出 {completion} 个 token，约 ${cost}。",
        "en": "This trip so far: {calls} model calls, {prompt} tokens in / {completion} out, about ${cost}.",
    },
    "refused": {
        "zh": "抱歉，这个机器人只对指定用户开放。如需使用，请联系管理员把你的 ID（{user}）加入白名单。",
        "en": "Sorry, this bot only serves listed users. Ask its admin to add your id ({user}) to BOT_ALLOWED_USERS.",
    },
    "slow_down": {
        "zh": "消息发得太快了，请 {seconds} 秒后再发。",
        "en": "That is a lot of messages at once. Please wait {seconds} s and send it again.",
    },
    "empty": {"zh": "消息是空的。请用文字告诉我你的出行需求。", "en": "That message was empty. Please tell me about your trip in words."},
    "too_long": {
        "zh": "消息太长了（{n} 个字符，上限 {max}）。请精简后再发。",
        "en": "That message is too long ({n} characters; the limit is {max}). Please shorten it and send it again.",
    },
    "unsupported": {
        "zh": "我只能读文字（和位置）。请用文字描述你的出行需求。",
        "en": "I can only read text (and shared locations). Please describe your trip in words.",
    },
    "location_saved": {"zh": "已记下你的位置。", "en": "Got your location."},
    "steered": {
        "zh": "收到，我会在下一步把这条考虑进去。",
        "en": "Got it: I'll take that into account at my next step.",
    },
    "held": {
        "zh": "已记下。请先回答我上面的问题，之后我会把这条一并考虑。",
        "en": "Noted. Please answer my question above first; I'll take this into account right after.",
    },
    "signoff_request": {
        "zh": "这份团队行程需要审批：{who}，请点「批准」或「驳回」（截止 {deadline}）。",
        "en": "This team plan needs sign-off: {who}, please Approve or Reject it (by {deadline}).",
    },
    "signoff_approved": {"zh": "✅ 行程已由 {who} 于 {at} 批准。", "en": "✅ Plan approved by {who} at {at}."},
    "signoff_ask_reason": {
        "zh": "{who} 驳回了这份行程。请直接回复驳回的原因，我会据此重新规划。",
        "en": "{who} rejected this plan. Please reply with the reason, and I'll plan again with it.",
    },
    "signoff_refused": {
        "zh": "只有审批人（{who}）可以批准或驳回这份行程。",
        "en": "Only the approvers ({who}) can approve or reject this plan.",
    },
    "signoff_reminder": {
        "zh": "提醒：这份团队行程还在等 {who} 审批（截止 {deadline}）。",
        "en": "Reminder: this team plan is still waiting for sign-off by {who} (until {deadline}).",
    },
    "signoff_expired": {
        "zh": "截止 {deadline} 前没有人审批，这份行程未获批准。",
        "en": "Nobody signed this plan off by {deadline}; it stands unapproved.",
    },
    "status_signoff": {"zh": "行程在等 {who} 审批（截止 {deadline}）。", "en": "The plan is waiting for sign-off by {who} (until {deadline})."},
    "status_decided": {
        "zh": "最近一次审批：{status}，{who}，{at}{reason}",
        "en": "Last sign-off: {status} by {who} at {at}{reason}",
    },
    "approver_added": {"zh": "已把 {who} 设为本频道的审批人。审批人：{all}", "en": "{who} now approves this channel's team plans. Approvers: {all}"},
    "approver_gone": {
        "zh": "{who} 已不在本频道，无法审批这份行程，这次不等 TA。",
        "en": "{who} is no longer in this channel and cannot sign this plan off, so the request does not wait for them.",
    },
    "approvers_all_gone": {
        "zh": "审批人（{who}）都已不在本频道，这份行程无人审批，按未批准处理。可用 /trip approver @某人 添加审批人。",
        "en": "None of the approvers ({who}) is in this channel any more, so nobody can sign this plan off; it stands unapproved. Add one with /trip approver @who.",
    },
    "approver_usage": {
        "zh": "用法：/trip approver @某人（设置本频道的行程审批人）。",
        "en": "Usage: /trip approver @who (who signs off this channel's team plans).",
    },
    "approver_not_allowed": {
        "zh": "只有现有的审批人（{who}）可以添加审批人。",
        "en": "Only the current approvers ({who}) can add an approver.",
    },
    # where the surface cannot tell an approver from anyone else (the web chat, the console)
    "signoff_elsewhere": {
        "zh": "这份团队行程就是最终版。审批只在 Telegram 和 Slack 里进行：那里能确认谁是审批人，并让 TA 点「批准」或「驳回」；这里无法确认，所以不等审批。",
        "en": "This team plan is final. Sign-off happens only in Telegram and Slack, where I can tell who an approver is and let them press Approve or Reject; here I cannot, so the plan does not wait for one.",
    },
    "approver_elsewhere": {
        "zh": "这里不能设置审批人：审批只在 Telegram 和 Slack 里进行，那里能确认谁是审批人。这里的团队行程直接作为最终版发出。",
        "en": "Approvers cannot be set here: sign-off happens only in Telegram and Slack, where I can tell who an approver is. Team plans here are posted as final.",
    },
    "team_too_big": {
        "zh": "这条请求里有 {n} 位出行人，超过了每次最多 {max} 人的上限。请把团队分成几组，每组单独发一条请求。",
        "en": "This request names {n} travellers, more than the {max} I plan for at once. Please split the team into groups and send one request per group.",
    },
    "not_yours": {
        "zh": "这个问题是问 {who} 的，只有 TA 的回答算数。你的消息我会在规划时一并考虑。",
        "en": "That question is for {who}; only their reply answers it. I'll take your message into account when I plan.",
    },
    # who may change what (bot.chat.rights, bot.chat.suggestions): what happened to a person's message
    "kept_not_theirs": {
        "zh": "只有 {asker} 可以修改这次行程，所以 {who} 的消息先作为建议记下。",
        "en": "Only {asker} can change this trip, so {who}'s message is kept as a suggestion.",
    },
    "kept_traveller": {
        "zh": "{who} 可以改自己的行程（出发城市、座位、出发或到达时间），但目的地、日期和预算要由 {asker} 决定，所以这条先作为建议记下。",
        "en": "{who} can change their own journey (home city, seat, when they leave or arrive), but the destination, dates and budget are {asker}'s to change, so this is kept as a suggestion.",
    },
    "kept_newcomer": {
        "zh": "{who} 还不在这次行程的对话里，所以这条消息先作为建议记下。",
        "en": "{who} is not part of this trip's conversation yet, so their message is kept as a suggestion.",
    },
    "kept_not_yours": {
        "zh": "这个问题是问 {addressee} 的，只有 TA 的回答算数。{who} 的消息先作为建议记下。",
        "en": "That question is for {addressee}; only their reply answers it. {who}'s message is kept as a suggestion.",
    },
    "kept_quoting": {
        "zh": "{who} 的回复引用了别人的消息：只有 {who} 自己写的话算作 TA 的意思。",
        "en": "{who}'s reply quotes someone else's message: it counts as {who}'s own words.",
    },
    "suggestion_place": {
        "zh": "{who} 建议把 {old} 换成 {new}。{asker}，要改吗？",
        "en": "{who} suggests {new} instead of {old}. {asker}, change it?",
    },
    "suggestion_words": {
        "zh": "{who} 建议：“{words}”。{asker}，要按这条修改行程吗？",
        "en": "{who} suggests: “{words}”. {asker}, change the trip with it?",
    },
    "suggestion_accepted": {
        "zh": "{asker} 采纳了 {who} 的建议，我会在规划中考虑。",
        "en": "{asker} accepted {who}'s suggestion: I'll take it into account.",
    },
    "suggestion_declined": {
        "zh": "{asker} 没有采纳 {who} 的建议，行程保持不变。",
        "en": "{asker} declined {who}'s suggestion; the trip stays as it is.",
    },
    "suggestion_refused": {
        "zh": "只有 {asker} 可以决定是否采纳 {who} 的建议。",
        "en": "Only {asker} can decide on {who}'s suggestion.",
    },
    "stale_suggestion": {
        "zh": "这条建议已经处理过了，这次没有改变什么。",
        "en": "That suggestion has already been decided, so this changes nothing.",
    },
    "not_in_channel": {
        "zh": "不在本频道：{who}。看不到这个话题，也无法回答问题：请邀请加入，或者不把 TA 算进这次行程。",
        "en": "Not in this channel: {who}. They cannot see this thread or answer its questions: invite them, or leave them out of the trip.",
    },
    "status_waiting_many": {"zh": "正在等这些回答：\n{questions}", "en": "Waiting for these answers:\n{questions}"},
    "stale_stop": {
        "zh": "那次运行已经结束了，这次停止没有改变什么。",
        "en": "That run has already ended, so this Stop changes nothing.",
    },
    "stale_answer": {
        "zh": "那个问题已经回答过或已过期，这次选择没有改变什么。",
        "en": "That question has already been answered or has expired, so this changes nothing.",
    },
    "status_failed": {
        "zh": "有 {messages}没能送达（最近一次：{reason}）。",
        "en": "{messages} could not be delivered (last: {reason}).",
    },
    "err_llm_unavailable": {
        "zh": "模型服务暂时连不上。你的消息已保存，请稍后再发一次。",
        "en": "The model service is not reachable right now. Your message is kept; please send it again in a minute.",
    },
    "err_llm_stream": {
        "zh": "模型的回答写到一半中断了。你的消息已保存，请再发一次。",
        "en": "The model's reply broke off while it was being written. Your message is kept; please send it again.",
    },
    "err_llm_rejected": {
        "zh": "模型服务拒绝了请求，可能是配置问题（密钥或模型名）。请联系管理员；你的消息已保存。",
        "en": "The model service refused the request, probably a configuration problem (key or model name). Please tell the bot's admin; your message is kept.",
    },
    "err_token_limit": {
        "zh": "对话太长，超出了模型的上下文。请发送 /new 开始新对话。",
        "en": "The conversation is too long for the model. Send /new to start a fresh one.",
    },
    "err_step_limit": {
        "zh": "在步数上限内没能完成规划。请把需求说得更具体一些再试。",
        "en": "I couldn't finish within the step limit. Please make the request more specific and try again.",
    },
    "err_loop": {
        "zh": "我在重复同样的查询，先停下了。请换个说法或补充细节。",
        "en": "I kept repeating the same search, so I stopped. Please rephrase or add details.",
    },
    "err_internal": {
        "zh": "出了点问题，这次规划没能完成。你的消息已保存，请再发一次；如果反复出现，请发送 /new。",
        "en": "Something went wrong and this plan couldn't be finished. Your message is kept; please send it again, or /new if it keeps happening.",
    },
}


def text(key: str, lang: str, **values: object) -> str:
    return pick(_TEXTS[key], lang, **values)


def help_text(lang: str, unknown: str = "") -> str:
    """The help; after a command nobody has ("/foo"), said to be the answer to it."""
    if unknown:
        return f"{text('unknown_command', lang, command=unknown)}\n\n{text('help', lang)}"
    return text("help", lang)


def error_text(reason: str, lang: str) -> str:
    key = f"err_{reason}"
    return text(key if key in _TEXTS else "err_internal", lang)


def stopped_text(lang: str, tool: str, partial: str) -> str:
    """What a Stop tells the person: the text written so far (it may have been a preview only,
    like a Telegram draft), and what was stopped."""
    if tool:
        return text("stopped_tool", lang, tool=tool)
    if partial:
        return f"{partial} …\n\n{text('stopped_writing', lang)}"
    return text("stopped_thinking", lang)

# What the model reads when an approver rejected its plan (the model reads English fine).
REJECTED = "[sign-off] The plan was rejected by {who}. Their reason: {reason}\nMake the plan again with this in mind."

# What the model is told when a question's deadline passes (the model reads English fine).
NO_ANSWER = (
    "The person did not answer within {hours:g} hours. Continue with sensible assumptions and say "
    "which ones you made, or finish politely and say what you still need."
)
CANCELLED_CALL = "Cancelled: the person stopped this run."
NEW_TRIP_CALL = "Closed: a new trip started, so this is no longer asked."
UNDELIVERABLE_CALL = "Not asked: the question could not be delivered to the person ({reason})."
