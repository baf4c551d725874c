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
    "travellers": {"zh": "{n} 人", "en": "{n} travellers"},
    "nights": {"zh": "{n} 晚", "en": "{n} nights"},
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


def leg_kind(kind: str, lang: str) -> str:
    entry = _KINDS.get(kind)
    return kind if entry is None else pick(entry, lang)
