"""Block Kit validation as strict as Slack's for the blocks the bot sends.

Slack answers `invalid_blocks` for a malformed or oversized block and `msg_blocks_too_long`
when the blocks of one message carry too much text in total (observed near 13,000
characters; we use 12,000 to stay on the safe side of an undocumented limit).

`context_actions` (messages only; 1 to 5 `feedback_buttons` or `icon_button` elements) and the
`feedback_buttons` element (an action_id of at most 255 characters; a positive and a negative
button, each plain text of at most 75 characters, a value of at most 2000 and an optional
accessibility_label of at most 75) follow Slack's Block Kit reference and slack-sdk 3.48's
ContextActionsBlock, FeedbackButtonsElement and FeedbackButtonObject.
"""

from __future__ import annotations

from typing import Any

MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_FIELD_TEXT = 2000
MAX_HEADER_TEXT = 150
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_ID = 255
MAX_ACTION_ELEMENTS = 25
MAX_CONTEXT_ELEMENTS = 10
MAX_TOTAL_BLOCK_TEXT = 12_000
MAX_CONTEXT_ACTIONS = 5


class BlockError(Exception):
    """`error` is the Slack error code; `detail` says which block and why."""

    def __init__(self, error: str, detail: str) -> None:
        super().__init__(f"{error}: {detail}")
        self.error = error
        self.detail = detail


def _text_object(obj: object, where: str, *, limit: int, plain_only: bool = False) -> int:
    if not isinstance(obj, dict):
        raise BlockError("invalid_blocks", f"{where}: a text object is required")
    kind = obj.get("type")
    allowed = {"plain_text"} if plain_only else {"plain_text", "mrkdwn"}
    if kind not in allowed:
        raise BlockError("invalid_blocks", f"{where}: text type must be one of {sorted(allowed)}")
    text = obj.get("text")
    if not isinstance(text, str) or not text:
        raise BlockError("invalid_blocks", f"{where}: text must be a non-empty string")
    if len(text) > limit:
        raise BlockError("invalid_blocks", f"{where}: must be less than {limit + 1} characters")
    extra = set(obj) - {"type", "text", "emoji", "verbatim"}
    if extra:
        raise BlockError("invalid_blocks", f"{where}: unknown fields {sorted(extra)}")
    return len(text)


def _button(el: dict[str, Any], where: str) -> int:
    size = _text_object(el.get("text"), f"{where}.text", limit=MAX_BUTTON_TEXT, plain_only=True)
    action_id = el.get("action_id")
    if action_id is not None and (not isinstance(action_id, str) or len(action_id) > MAX_ID):
        raise BlockError("invalid_blocks", f"{where}.action_id: at most {MAX_ID} characters")
    value = el.get("value")
    if value is not None and (not isinstance(value, str) or len(value) > MAX_BUTTON_VALUE):
        raise BlockError("invalid_blocks", f"{where}.value: at most {MAX_BUTTON_VALUE} characters")
    if el.get("style") not in (None, "primary", "danger"):
        raise BlockError("invalid_blocks", f"{where}.style: must be primary or danger")
    return size


def _feedback_buttons(el: dict[str, Any], where: str) -> int:
    extra = set(el) - {"type", "action_id", "positive_button", "negative_button"}
    if extra:
        raise BlockError("invalid_blocks", f"{where}: unknown fields {sorted(extra)}")
    action_id = el.get("action_id")
    if not isinstance(action_id, str) or not action_id or len(action_id) > MAX_ID:
        raise BlockError("invalid_blocks", f"{where}.action_id: 1 to {MAX_ID} characters")
    size = 0
    for side in ("positive_button", "negative_button"):
        button = el.get(side)
        if not isinstance(button, dict):
            raise BlockError("invalid_blocks", f"{where}.{side}: required")
        if set(button) - {"text", "value", "accessibility_label"}:
            raise BlockError("invalid_blocks", f"{where}.{side}: unknown fields")
        size += _text_object(button.get("text"), f"{where}.{side}.text", limit=MAX_BUTTON_TEXT, plain_only=True)
        value = button.get("value")
        if not isinstance(value, str) or not value or len(value) > MAX_BUTTON_VALUE:
            raise BlockError("invalid_blocks", f"{where}.{side}.value: 1 to {MAX_BUTTON_VALUE} characters")
        label = button.get("accessibility_label")
        if label is not None and (not isinstance(label, str) or len(label) > MAX_BUTTON_TEXT):
            raise BlockError("invalid_blocks", f"{where}.{side}.accessibility_label: at most {MAX_BUTTON_TEXT}")
    return size


def _block(block: object, i: int) -> int:
    where = f"blocks[{i}]"
    if not isinstance(block, dict):
        raise BlockError("invalid_blocks", f"{where}: must be an object")
    block_id = block.get("block_id")
    if block_id is not None and (not isinstance(block_id, str) or not block_id or len(block_id) > MAX_ID):
        raise BlockError("invalid_blocks", f"{where}.block_id: 1 to {MAX_ID} characters")
    kind = block.get("type")
    if kind == "divider":
        return 0
    if kind == "header":
        return _text_object(block.get("text"), f"{where}.text", limit=MAX_HEADER_TEXT, plain_only=True)
    if kind == "section":
        size = 0
        if "text" in block:
            size += _text_object(block["text"], f"{where}.text", limit=MAX_SECTION_TEXT)
        fields = block.get("fields")
        if fields is not None:
            if not isinstance(fields, list) or not 1 <= len(fields) <= 10:
                raise BlockError("invalid_blocks", f"{where}.fields: 1 to 10 items")
            for j, f in enumerate(fields):
                size += _text_object(f, f"{where}.fields[{j}]", limit=MAX_FIELD_TEXT)
        if "text" not in block and fields is None:
            raise BlockError("invalid_blocks", f"{where}: a section needs text or fields")
        accessory = block.get("accessory")
        if accessory is not None:
            if not isinstance(accessory, dict) or accessory.get("type") != "button":
                raise BlockError("invalid_blocks", f"{where}.accessory: only a button is supported here")
            size += _button(accessory, f"{where}.accessory")
        return size
    if kind == "context":
        elements = block.get("elements")
        if not isinstance(elements, list) or not 1 <= len(elements) <= MAX_CONTEXT_ELEMENTS:
            raise BlockError("invalid_blocks", f"{where}.elements: 1 to {MAX_CONTEXT_ELEMENTS} items")
        return sum(_text_object(e, f"{where}.elements[{j}]", limit=MAX_SECTION_TEXT) for j, e in enumerate(elements))
    if kind == "actions":
        elements = block.get("elements")
        if not isinstance(elements, list) or not 1 <= len(elements) <= MAX_ACTION_ELEMENTS:
            raise BlockError("invalid_blocks", f"{where}.elements: 1 to {MAX_ACTION_ELEMENTS} items")
        size = 0
        action_ids: set[str] = set()
        for j, el in enumerate(elements):
            if not isinstance(el, dict) or el.get("type") != "button":
                raise BlockError("invalid_blocks", f"{where}.elements[{j}]: only buttons are supported here")
            size += _button(el, f"{where}.elements[{j}]")
            aid = el.get("action_id")
            if isinstance(aid, str):
                if aid in action_ids:
                    raise BlockError("invalid_blocks", f"{where}: duplicate action_id {aid!r}")
                action_ids.add(aid)
        return size
    if kind == "context_actions":
        elements = block.get("elements")
        if not isinstance(elements, list) or not 1 <= len(elements) <= MAX_CONTEXT_ACTIONS:
            raise BlockError("invalid_blocks", f"{where}.elements: 1 to {MAX_CONTEXT_ACTIONS} items")
        size = 0
        for j, el in enumerate(elements):
            if not isinstance(el, dict) or el.get("type") not in ("feedback_buttons", "icon_button"):
                raise BlockError("invalid_blocks", f"{where}.elements[{j}]: feedback_buttons or icon_button only")
            if el["type"] == "feedback_buttons":
                size += _feedback_buttons(el, f"{where}.elements[{j}]")
        return size
    raise BlockError("invalid_blocks", f"{where}: unsupported block type {kind!r}")


def validate_blocks(blocks: object) -> None:
    """Raise BlockError unless `blocks` is a message's valid list of blocks."""
    if not isinstance(blocks, list):
        raise BlockError("invalid_blocks_format", "blocks must be a JSON array")
    if len(blocks) > MAX_BLOCKS:
        raise BlockError("invalid_blocks", f"no more than {MAX_BLOCKS} items allowed")
    total = 0
    seen_ids: set[str] = set()
    for i, block in enumerate(blocks):
        total += _block(block, i)
        block_id = block.get("block_id") if isinstance(block, dict) else None
        if isinstance(block_id, str):
            if block_id in seen_ids:
                raise BlockError("invalid_blocks", f"blocks[{i}].block_id: duplicate {block_id!r}")
            seen_ids.add(block_id)
    if total > MAX_TOTAL_BLOCK_TEXT:
        raise BlockError("msg_blocks_too_long", f"blocks carry {total} characters of text")
