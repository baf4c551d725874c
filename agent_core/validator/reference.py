"""The Validator's input, assembled from the planner's conversation as the original did:
the person's request, the reply under review (reasoning cut off), and the reference
information (every tool output the planner saw, labelled by tool, JSON pretty-printed)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from agent_core.schema import Message, Role
from agent_core.validator.findings import CheckReport
from tools.plan import TripPlan

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_PLANNER_ONLY = ("ask_human", "submit_plan", "terminate")
MAX_OUTPUT_CHARS = 6000  # one tool output; the rest is marked as cut so the model knows


def reply_without_reasoning(text: str) -> str:
    """The reply as the person would see it: no <think> blocks, nothing before a stray </think>."""
    text = _THINK.sub("", text)
    if "</think>" in text.lower():
        text = re.split(r"</think>", text, flags=re.I)[-1]
    return text.strip()


def _pretty(output: str) -> str:
    try:
        text = json.dumps(json.loads(output), ensure_ascii=False, indent=2)
    except (json.JSONDecodeError, TypeError):
        text = output
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + f"\n... ({len(text) - MAX_OUTPUT_CHARS} more characters cut)"
    return text


def reference_information(messages: Sequence[Message], lang: str) -> str:
    """Every result of a travel tool in the conversation, numbered and labelled by tool."""
    calls: dict[str, tuple[str, str]] = {}
    blocks: list[str] = []
    for m in messages:
        if m.role is Role.ASSISTANT:
            for tc in m.tool_calls or []:
                calls[tc.id] = (tc.function.name, tc.function.arguments)
        elif m.role is Role.TOOL and m.tool_call_id:
            name, args = calls.get(m.tool_call_id, (m.name or "tool", "{}"))
            if name in _PLANNER_ONLY:
                continue
            n = len(blocks) + 1
            head = f"[{n}] {name}" + (f" 参数 {args}" if lang == "zh" else f" arguments {args}")
            blocks.append(f"{head}\n```json\n{_pretty(m.content or '')}\n```")
    if not blocks:
        return "（规划助手没有调用任何工具）" if lang == "zh" else "(the assistant called no tools)"
    return "\n\n".join(blocks)


def validation_input(
    *, request: str, reply: str, plan: TripPlan | None, messages: Sequence[Message], checks: CheckReport | None, lang: str,
    current: str | None = None,
) -> str:
    """`current`: the request as it stands after the person's changes (agent_core.prompts.request_note),
    which the reply is graded against when the message that started the run was a follow-up."""
    zh = lang == "zh"
    parts = [("## 用户的问题" if zh else "## The person's request"), request.strip(), ""]
    if current:
        parts += [("## 用户改动后的当前需求（按这份需求评估）" if zh else "## The request after the person's changes (grade against this)"),
                  current, ""]
    parts += [
        ("## 待评估的回复" if zh else "## The reply under review"), reply_without_reasoning(reply) or "(empty)",
    ]
    if plan is not None:
        parts += ["", "结构化行程：" if zh else "Structured plan:",
                  "```json\n" + json.dumps(plan.model_dump(), ensure_ascii=False, indent=2) + "\n```"]
    parts += ["", ("## 参考信息（规划助手看到的全部工具输出）" if zh else "## Reference information (every tool output the assistant saw)"),
              reference_information(messages, lang)]
    if checks is not None:
        parts += ["", ("## 自动核对结果" if zh else "## Automatic checks already run")]
        if checks.findings:
            parts += [f"- {f.line(lang)}" for f in checks.findings]
        else:
            parts.append(f"全部通过（核对了 {checks.lookups} 项）" if zh else f"all passed ({checks.lookups} items re-queried)")
    return "\n".join(parts)
