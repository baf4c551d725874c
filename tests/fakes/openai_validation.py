"""Request validation for the fake OpenAI server: the checks the real API makes that our
client could get wrong (tool-call pairing above all), with OpenAI-shaped error bodies."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

DEFAULT_KEY = ""
_CONV_MARKER = re.compile(r"\[conv:([^\]\s]+)\]")
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_KNOWN_ROLES = {"system", "developer", "user", "assistant", "tool"}


class Rejected(Exception):
    def __init__(self, status: int, message: str, *, type_: str = "invalid_request_error",
                 param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": {"message": message, "type": type_, "param": param, "code": code}}


def text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def rough_tokens(body: Mapping[str, Any]) -> int:
    """A deliberately simple size estimate (about 4 characters a token) of messages + tools."""
    text = json.dumps([body.get("messages"), body.get("tools")], ensure_ascii=False)
    return math.ceil(len(text) / 4)


def conv_marker_key(messages: list[dict[str, Any]]) -> str:
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "user":
            found = _CONV_MARKER.search(text_of(m.get("content")))
            return found.group(1) if found else DEFAULT_KEY
    return DEFAULT_KEY


def validate_request(body: object, context_limit: int) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise Rejected(400, "We could not parse the JSON body of your request.")
    if not body.get("model") or not isinstance(body["model"], str):
        raise Rejected(400, "you must provide a model parameter", param="model")
    _validate_stream(body)
    tool_names = _validate_tools(body.get("tools"))
    _validate_tool_choice(body.get("tool_choice"), tool_names, has_tools="tools" in body)
    _validate_messages(body.get("messages"))
    needed = rough_tokens(body) + int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
    if needed > context_limit:
        raise Rejected(
            400,
            f"This model's maximum context length is {context_limit} tokens. However, your messages "
            f"resulted in {needed} tokens. Please reduce the length of the messages.",
            param="messages",
            code="context_length_exceeded",
        )
    return body


def _validate_stream(body: dict[str, Any]) -> None:
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise Rejected(400, f"Invalid type for 'stream': expected a boolean, but got {type(stream).__name__} instead.",
                       param="stream", code="invalid_type")
    options = body.get("stream_options")
    if options is None:
        return
    if not stream:
        raise Rejected(400, "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                       param="stream_options", code="invalid_value")
    if not isinstance(options, dict) or set(options) - {"include_usage", "include_obfuscation"}:
        raise Rejected(400, "Invalid 'stream_options': unknown parameter.", param="stream_options")
    if "include_usage" in options and not isinstance(options["include_usage"], bool):
        raise Rejected(400, "Invalid type for 'stream_options.include_usage': expected a boolean.",
                       param="stream_options.include_usage", code="invalid_type")


def _validate_tools(tools: object) -> set[str]:
    if tools is None:
        return set()
    if not isinstance(tools, list) or not tools:
        raise Rejected(400, "Invalid 'tools': expected a non-empty array.", param="tools")
    names: set[str] = set()
    for i, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(fn, dict):
            raise Rejected(400, f"Invalid 'tools[{i}]': expected an object with type 'function'.", param=f"tools[{i}]")
        name = fn.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise Rejected(400, f"Invalid 'tools[{i}].function.name': string does not match pattern.",
                            param=f"tools[{i}].function.name", code="invalid_value")
        params = fn.get("parameters")
        if params is not None and (not isinstance(params, dict) or params.get("type", "object") != "object"):
            raise Rejected(400, f"Invalid schema for function '{name}': schema must be a JSON Schema of 'type: \"object\"'.",
                            param=f"tools[{i}].function.parameters", code="invalid_function_parameters")
        if name in names:
            raise Rejected(400, f"Duplicate tool name '{name}'.", param="tools")
        names.add(name)
    return names


def _validate_tool_choice(choice: object, names: set[str], *, has_tools: bool) -> None:
    if choice is None:
        return
    if not has_tools:
        raise Rejected(400, "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
                        param="tool_choice")
    if choice in ("none", "auto", "required"):
        return
    if isinstance(choice, dict) and choice.get("type") == "function" and isinstance(choice.get("function"), dict):
        name = choice["function"].get("name")
        if name in names:
            return
        raise Rejected(400, f"Invalid value for 'tool_choice': function '{name}' is not among the tools.",
                        param="tool_choice")
    raise Rejected(400, "Invalid value for 'tool_choice'.", param="tool_choice")


def _validate_messages(messages: object) -> None:
    if not isinstance(messages, list) or not messages:
        raise Rejected(400, "Invalid 'messages': empty array. Expected an array with minimum length 1.", param="messages")
    pending: dict[str, int] = {}  # tool_call_id -> index of the assistant message that made it
    answerable: set[str] = set()
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise Rejected(400, f"Invalid type for 'messages[{i}]': expected an object.", param=f"messages[{i}]")
        role = msg.get("role")
        if role not in _KNOWN_ROLES:
            raise Rejected(400, f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'developer'.",
                            param=f"messages[{i}].role", code="invalid_value")
        if role == "tool":
            tcid = msg.get("tool_call_id")
            if not isinstance(tcid, str) or tcid not in answerable:
                raise Rejected(400, "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
                                param=f"messages.[{i}].role")
            if not isinstance(msg.get("content"), str | list):
                raise Rejected(400, f"Invalid 'messages[{i}].content': expected a string.", param=f"messages[{i}].content")
            pending.pop(tcid, None)
            answerable.discard(tcid)
            continue
        if pending:
            _unanswered(pending)
        answerable.clear()
        content = msg.get("content")
        if role == "assistant":
            calls = msg.get("tool_calls")
            if calls is not None:
                if not isinstance(calls, list) or not calls:
                    raise Rejected(400, f"Invalid 'messages[{i}].tool_calls': empty array.", param=f"messages[{i}].tool_calls")
                for j, tc in enumerate(calls):
                    fn = tc.get("function") if isinstance(tc, dict) else None
                    if (not isinstance(tc, dict) or not isinstance(tc.get("id"), str) or tc.get("type") != "function"
                            or not isinstance(fn, dict) or not isinstance(fn.get("name"), str)
                            or not isinstance(fn.get("arguments"), str)):
                        raise Rejected(400, f"Invalid 'messages[{i}].tool_calls[{j}]'.", param=f"messages[{i}].tool_calls[{j}]")
                    pending[tc["id"]] = i
                    answerable.add(tc["id"])
            elif content is None:
                raise Rejected(400, f"Invalid value for 'messages[{i}].content': expected a string, got null.",
                                param=f"messages[{i}].content")
        elif not isinstance(content, str | list):
            raise Rejected(400, f"Invalid type for 'messages[{i}].content': expected one of a string or array of objects.",
                            param=f"messages[{i}].content")
        if isinstance(content, list):
            for j, part in enumerate(content):
                ok = isinstance(part, dict) and (
                    (part.get("type") == "text" and isinstance(part.get("text"), str))
                    or (role == "user" and part.get("type") == "image_url" and isinstance(part.get("image_url"), dict)
                        and isinstance(part["image_url"].get("url"), str))
                )
                if not ok:
                    raise Rejected(400, f"Invalid content part 'messages[{i}].content[{j}]'.", param=f"messages[{i}].content[{j}]")
    if pending:
        _unanswered(pending)


def _unanswered(pending: dict[str, int]) -> None:
    first = min(pending.values())
    ids = ", ".join(pending)
    raise Rejected(400, "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                    f"'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
                    param=f"messages.[{first}].role")
