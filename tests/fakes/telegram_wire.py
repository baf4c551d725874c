"""The Bot API's wire rules the fake Telegram applies: its errors, and how it reads parameters
(text and its entities, reply markup, reply parameters), as strict as the real service."""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.telegram_html import EntityParseError, parse_html, utf16_len


class ApiError(Exception):
    def __init__(self, code: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.retry_after = retry_after

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": False, "error_code": self.code, "description": self.description}
        if self.retry_after is not None:
            out["parameters"] = {"retry_after": self.retry_after}
        return out


def _bad(description: str) -> ApiError:
    return ApiError(400, f"Bad Request: {description}")


def _maybe_int(value: object) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(str(value))
    except ValueError:
        return None


def _truthy(value: object) -> bool:
    return value is True or str(value).lower() in {"true", "1"}


def _json_field(p: dict[str, Any], name: str) -> Any:
    value = p.get(name)
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            raise _bad(f"can't parse {name} JSON object") from None
    return value


def _message_text(p: dict[str, Any]) -> tuple[str, str, str | None, list[Any]]:
    raw = str(p.get("text") or "")
    mode = p.get("parse_mode")
    parse_mode = str(mode) if mode else None
    if parse_mode and parse_mode.lower() == "html":
        try:
            text, entities = parse_html(raw)
        except EntityParseError as exc:
            raise _bad(str(exc).removeprefix("Bad Request: ")) from None
    elif parse_mode and parse_mode.lower() not in {"markdown", "markdownv2"}:
        raise _bad(f"unsupported parse_mode {parse_mode}")
    else:
        text, entities = raw, []
    if not text.strip():
        raise _bad("message text is empty")
    if utf16_len(text) > 4096:
        raise _bad("message is too long")
    return text, raw, parse_mode, entities


def _reply_markup(p: dict[str, Any]) -> dict[str, Any] | None:
    if not p.get("reply_markup"):
        return None
    markup = _json_field(p, "reply_markup")
    if not isinstance(markup, dict):
        raise _bad("can't parse reply keyboard markup JSON object")
    if "inline_keyboard" in markup:
        rows = markup["inline_keyboard"]
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
            raise _bad("can't parse inline keyboard button: InlineKeyboardMarkup must be an Array of Arrays")
        for row in rows:
            for button in row:
                if not isinstance(button, dict) or not str(button.get("text") or "").strip():
                    raise _bad("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard")
                data = button.get("callback_data")
                if data is not None and not (1 <= len(str(data).encode("utf-8")) <= 64):
                    raise _bad("BUTTON_DATA_INVALID")
                if data is None and not button.get("url"):
                    raise _bad("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard")
    elif "force_reply" in markup:
        if markup["force_reply"] is not True:
            raise _bad("can't parse reply keyboard markup JSON object")
    elif "keyboard" not in markup and "remove_keyboard" not in markup:
        raise _bad("can't parse reply keyboard markup JSON object")
    return markup


def _reply_to(p: dict[str, Any]) -> tuple[int, bool] | None:
    if p.get("reply_parameters"):
        rp = _json_field(p, "reply_parameters")
        mid = _maybe_int(rp.get("message_id")) if isinstance(rp, dict) else None
        if mid is None:
            raise _bad("can't parse reply parameters JSON object")
        return mid, bool(rp.get("allow_sending_without_reply"))
    mid = _maybe_int(p.get("reply_to_message_id"))
    return (mid, _truthy(p.get("allow_sending_without_reply"))) if mid is not None else None
