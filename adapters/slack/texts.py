"""The Slack surface's own words (progress lines, plan headings), in Chinese and English."""

from __future__ import annotations

from agent_core.lang import pick

_TEXTS: dict[str, dict[str, str]] = {
    "working": {"zh": "⏳ 正在规划…（第 {step}/{max} 步）", "en": "⏳ Working on it… (step {step}/{max})"},
    "paused": {"zh": "⏸ 需要你的回答", "en": "⏸ Waiting for your answer"},
    "done": {"zh": "✅ 完成（{steps} 步）", "en": "✅ Done ({steps} steps)"},
    "stopped": {"zh": "⏹ 已停止", "en": "⏹ Stopped"},
    "earlier": {"zh": "…（之前还有 {n} 项）", "en": "… ({n} earlier)"},
    "options_hint": {"zh": "点一个按钮，或直接在本话题里回复。", "en": "Pick a button, or just reply in this thread."},
    "chose": {"zh": "✅ <@{user}> 选择了：{option}", "en": "✅ <@{user}> chose: {option}"},
    "legs": {"zh": "交通", "en": "Getting there"},
    "hotel": {"zh": "住宿", "en": "Hotel"},
    "sights": {"zh": "景点", "en": "Sights"},
    "total": {"zh": "合计", "en": "Total"},
    "backups": {"zh": "备选方案", "en": "Backups"},
    "notes": {"zh": "备注", "en": "Notes"},
    "breakfast": {"zh": "含早", "en": "breakfast"},
    "sandbox": {
        "zh": "⚠️ 示例数据（沙盒）：班次、价格和酒店仅供演示，并非实时。",
        "en": "⚠️ Sandbox data: schedules, prices and hotels are examples, not live.",
    },
    "mixed": {
        "zh": "⚠️ 部分数据来自沙盒示例，请出行前再次核实。",
        "en": "⚠️ Some data comes from the sandbox examples; check before you travel.",
    },
    "verdict": {"zh": "🧭 评审：{label}", "en": "🧭 Review: {label}"},
    "not_graded": {"zh": "🧭 评审：未评分（没有可核对的内容）", "en": "🧭 Review: not graded (nothing could be checked)"},
    "answer_more": {"zh": "（续）", "en": "(continued)"},
    "stop_button": {"zh": "⏹ 停止", "en": "⏹ Stop"},
    "prompts_title": {"zh": "想去哪里？", "en": "Where to?"},
    "plan_title": {"zh": "正在规划行程", "en": "Planning your trip"},
    "feedback_up": {"zh": "这份行程有帮助", "en": "This plan helps"},
    "feedback_down": {"zh": "这份行程没帮上忙", "en": "This plan does not help"},
    "feedback_thanks": {"zh": "谢谢你的反馈！", "en": "Thanks for the feedback!"},
    "feedback_unknown": {"zh": "找不到这份行程的记录，反馈没有保存。", "en": "That plan is no longer on record; the feedback was not kept."},
    "signoff_approved": {"zh": "✅ 已由 <@{who}> 于 {at} 批准", "en": "✅ Approved by <@{who}> at {at}"},
    "signoff_rejected": {"zh": "❌ 已由 <@{who}> 于 {at} 驳回", "en": "❌ Rejected by <@{who}> at {at}"},
    "signoff_expired": {"zh": "⌛ 截止 {at} 前无人审批", "en": "⌛ Nobody decided by {at}"},
    "signoff_closed": {"zh": "这次审批已经结束", "en": "This sign-off is closed"},
    "signoff_newer": {"zh": "有一份更新的行程在等待审批", "en": "A newer plan is waiting for sign-off"},
    "old_card": {"zh": "这张审批卡片已经失效：{line}。", "en": "This card is out of date: {line}."},
    "prompt_1_title": {"zh": "周末短途", "en": "A weekend away"},
    "prompt_1": {"zh": "下周五从上海去杭州，玩两天，预算 2000 元", "en": "Shanghai to Hangzhou next Friday, two days, budget 2000 yuan"},
    "prompt_2_title": {"zh": "出差行程", "en": "A business trip"},
    "prompt_2": {"zh": "下周一北京到深圳出差，坐高铁还是飞机更合适？", "en": "Beijing to Shenzhen on business next Monday: train or plane?"},
    "prompt_3_title": {"zh": "带家人出游", "en": "With the family"},
    "prompt_3": {"zh": "五一带父母从成都去西安玩四天", "en": "Four days in Xi'an from Chengdu with my parents over May Day"},
}

_KINDS: dict[str, dict[str, str]] = {
    "train": {"zh": "🚄 火车", "en": "🚄 Train"},
    "flight": {"zh": "✈️ 航班", "en": "✈️ Flight"},
    "taxi": {"zh": "🚕 打车", "en": "🚕 Taxi"},
    "drive": {"zh": "🚗 自驾", "en": "🚗 Drive"},
    "transit": {"zh": "🚇 公共交通", "en": "🚇 Transit"},
    "walk": {"zh": "🚶 步行", "en": "🚶 Walk"},
}


def t(key: str, lang: str, **kw: object) -> str:
    return pick(_TEXTS[key], lang, **kw)


def lang_of(text: str) -> str:
    """The language of a text the bot wrote (a status line): Chinese when it has any."""
    return "zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en"


def lang_of_locale(locale: str) -> str:
    """users.info's locale ("zh-CN", "en-US") as the bot's language."""
    return "zh" if locale.lower().startswith("zh") else "en"


def suggested_prompts(lang: str) -> list[dict[str, str]]:
    """What an assistant thread offers before the person types (assistant.threads.setSuggestedPrompts)."""
    return [{"title": t(f"prompt_{i}_title", lang), "message": t(f"prompt_{i}", lang)} for i in (1, 2, 3)]


def leg_kind(kind: str, lang: str) -> str:
    entry = _KINDS.get(kind)
    return kind if entry is None else pick(entry, lang)
