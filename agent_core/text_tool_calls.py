"""Tool calls that a model wrote into its text, and text the person should not see.

Models without (reliable) native tool calling write calls into their content instead:

- a fenced block: ```json {"name": "x", "arguments": {...}} ``` (also "tool"/"function" for the
  name and "parameters"/"args"/"input" for the arguments, a list of such objects, or
  {"tool_calls": [...]}); the whole content being such JSON counts too;
- ``<tool_call>{"name": "x", "arguments": {...}}</tool_call>``;
- ``<tool_call>x(k="v", n=1, flag=true)</tool_call>``, several possibly wrapped in
  ``<TOOL_BEGIN> ... <TOOL_END>`` (the Validator prompt's format). The call syntax is read with
  `ast` and literal values only; nothing is ever evaluated.

Only calls to tools that were offered are recovered (anything else is ordinary text); each
gets a fresh id, and its text is cut out of the visible content.
"""

from __future__ import annotations

import ast
import json
import re
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from agent_core.schema import Function, ToolCall

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN_TO_END = re.compile(r"<think>.*\Z", re.DOTALL | re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|\Z)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*([A-Za-z_]*)[ \t]*\n?(.*?)```", re.DOTALL)
_TAGGED = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL | re.IGNORECASE)
_WRAPPER = re.compile(r"<TOOL_BEGIN>(.*?)(?:<TOOL_END>|\Z)", re.DOTALL)

_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "params")
_JSON_WORDS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


# ---------------------------------------------------------------------------- think / answer


def strip_think(text: str | None) -> str:
    """Remove `<think>...</think>` blocks, a leading reasoning closed by a lone `</think>`, and
    an unclosed `<think>` running to the end (a reply cut off mid-thought)."""
    if not text:
        return ""
    out = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(out))
    if closes:
        out = out[closes[-1].end() :]
    out = _THINK_OPEN_TO_END.sub("", out)
    return out.strip()


def answer_text(text: str | None) -> str | None:
    """The inside of `<answer>...</answer>` (an unclosed tag runs to the end), or None."""
    if not text:
        return None
    found = _ANSWER.search(text)
    return found.group(1).strip() if found else None


_ANSWER_TAG = re.compile(r"</?answer>", re.IGNORECASE)


def strip_answer_tags(text: str) -> str:
    """`text` with `<answer>` tags removed and their content kept (what a stream shows)."""
    return _ANSWER_TAG.sub("", text).strip()


# ---------------------------------------------------------------------------- recovery


@dataclass(frozen=True, slots=True)
class Recovered:
    content: str  # what is left to show
    calls: list[ToolCall]


def recover_tool_calls(text: str | None, known_tools: Collection[str]) -> Recovered:
    """Find tool calls written in `text` for tools in `known_tools`."""
    if not text or not known_tools:
        return Recovered(content=text or "", calls=[])
    calls: list[ToolCall] = []

    def take(parsed: list[tuple[str, dict[str, Any]]] | None) -> bool:
        if not parsed or any(name not in known_tools for name, _ in parsed):
            return False
        calls.extend(_make_call(name, args) for name, args in parsed)
        return True

    def sub(pattern: re.Pattern[str], parse: Callable[[re.Match[str]], list[tuple[str, dict[str, Any]]] | None],
            source: str) -> str:
        return pattern.sub(lambda m: "" if take(parse(m)) else m.group(0), source)

    content = sub(_WRAPPER, lambda m: _parse_wrapper(m.group(1)), text)
    content = sub(_TAGGED, lambda m: _parse_tagged(m.group(1)), content)
    content = sub(_FENCE, lambda m: _parse_fence(m.group(1), m.group(2)), content)
    if not calls:
        whole = content.strip()
        if whole[:1] in "{[" and take(_calls_from_json_text(whole)):
            content = ""
    return Recovered(content=_tidy(content) if calls else text, calls=calls)


def _make_call(name: str, args: dict[str, Any]) -> ToolCall:
    return ToolCall(id=new_call_id(), function=Function(name=name, arguments=json.dumps(args, ensure_ascii=False)))


def _tidy(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _parse_wrapper(body: str) -> list[tuple[str, dict[str, Any]]] | None:
    found = list(_TAGGED.finditer(body))
    leftover = _TAGGED.sub("", body).strip()
    if not found or leftover:
        return None
    out: list[tuple[str, dict[str, Any]]] = []
    for m in found:
        parsed = _parse_tagged(m.group(1))
        if parsed is None:
            return None
        out.extend(parsed)
    return out


def _parse_tagged(body: str) -> list[tuple[str, dict[str, Any]]] | None:
    body = body.strip()
    if body.startswith("```"):
        fence = _FENCE.fullmatch(body)
        body = fence.group(2).strip() if fence else body
    if body[:1] in "{[":
        return _calls_from_json_text(body)
    parsed = _parse_call_syntax(body)
    return [parsed] if parsed else None


def _parse_fence(lang: str, body: str) -> list[tuple[str, dict[str, Any]]] | None:
    if lang.lower() not in ("", "json", "tool_call", "tool_code", "tool", "function_call"):
        return None
    body = body.strip()
    if body[:1] in "{[":
        return _calls_from_json_text(body)
    if lang.lower() in ("tool_call", "tool_code"):
        parsed = _parse_call_syntax(body)
        return [parsed] if parsed else None
    return None


def _calls_from_json_text(text: str) -> list[tuple[str, dict[str, Any]]] | None:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return _calls_from_json(value)


def _calls_from_json(value: object) -> list[tuple[str, dict[str, Any]]] | None:
    if isinstance(value, list):
        out: list[tuple[str, dict[str, Any]]] = []
        for item in value:
            parsed = _calls_from_json(item)
            if not parsed:
                return None
            out.extend(parsed)
        return out or None
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("tool_calls"), list):
        return _calls_from_json(value["tool_calls"])
    if isinstance(value.get("function"), dict):  # OpenAI wire shape
        return _calls_from_json(value["function"])
    name = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
    if not name:
        return None
    raw_args: object = next((value[k] for k in _ARG_KEYS if k in value), {})
    if isinstance(raw_args, str):
        try:
            raw_args = json.loads(raw_args) if raw_args.strip() else {}
        except json.JSONDecodeError:
            return None
    if not isinstance(raw_args, dict):
        return None
    return [(name, raw_args)]


def _parse_call_syntax(text: str) -> tuple[str, dict[str, Any]] | None:
    """`name(k="v", n=1)` -> ("name", {"k": "v", "n": 1}); literals only, never evaluated."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return None
    node = tree.body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
        return None
    args: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            return None
        try:
            args[kw.arg] = _literal(kw.value)
        except ValueError:
            return None
    return node.func.id, args


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float | bool | type(None)):
        return node.value
    if isinstance(node, ast.Name) and node.id in _JSON_WORDS:
        return _JSON_WORDS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _literal(node.operand)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        out: dict[str, Any] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            key = _literal(k) if k is not None else None
            if not isinstance(key, str):
                raise ValueError("dict keys must be strings")
            out[key] = _literal(v)
        return out
    raise ValueError(f"not a literal: {ast.dump(node)[:60]}")
