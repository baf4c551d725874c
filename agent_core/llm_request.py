"""What the LLM client sends: messages in the chat completions wire form, images as `image_url`
parts (or a note for a model that cannot see them), and the request body for a model name
(OpenAI's reasoning models refuse `max_tokens` and `temperature`)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

from agent_core.llm_config import LLMConfig, is_reasoning_model
from agent_core.schema import Message, Role
from agent_core.tool_output import quote_tool_output

NO_IMAGE_NOTE = "[an image was attached here; this model cannot see images, so it was left out]"


def format_messages(messages: Sequence[Message], *, vision: bool) -> list[dict[str, Any]]:
    """Wire form. The API takes images in user turns only, so an image on another turn is
    sent in a user turn placed after it (after the whole run of tool results, which must
    stay right behind their assistant turn)."""
    out: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []
    for msg in messages:
        if held and msg.role is not Role.TOOL:
            out.append({"role": "user", "content": held})
            held = []
        wire = msg.to_openai()
        if msg.role is Role.TOOL:  # quoted, under the fixed line that it is untrusted data
            wire["content"] = quote_tool_output(msg.name, wire["content"])
        if msg.base64_image:
            if not vision:
                wire["content"] = f"{wire.get('content') or ''}\n{NO_IMAGE_NOTE}".strip()
            else:
                part = {"type": "image_url", "image_url": {"url": image_url(msg.base64_image)}}
                if msg.role is Role.USER:
                    wire["content"] = [*as_parts(wire["content"]), part]
                else:
                    held.extend([{"type": "text", "text": f"(image from the {msg.role.value} turn above)"}, part])
        out.append(wire)
    if held:
        out.append({"role": "user", "content": held})
    return out


def add_images(formatted: list[dict[str, Any]], images: Sequence[str | bytes], *, vision: bool) -> None:
    """Images (base64 text, raw bytes, or URLs) added to the last user turn of `formatted`
    (one is added when the last turn is not the user's); a note instead for a blind model."""
    if not images:
        return
    if not formatted or formatted[-1]["role"] != "user":
        formatted.append({"role": "user", "content": ""})
    last = formatted[-1]
    parts = as_parts(last["content"])
    if vision:
        parts.extend({"type": "image_url", "image_url": {"url": image_url(i)}} for i in images)
    else:
        parts.append({"type": "text", "text": NO_IMAGE_NOTE})
    last["content"] = parts


def request_body(
    config: LLMConfig, formatted: list[dict[str, Any]], tools: list[dict[str, Any]] | None, tool_choice: str | None
) -> dict[str, Any]:
    body: dict[str, Any] = {"model": config.model, "messages": formatted}
    reasoning = is_reasoning_model(config.model)
    body["max_completion_tokens" if reasoning else "max_tokens"] = config.max_tokens
    if config.temperature is not None and not reasoning:
        body["temperature"] = config.temperature
    if tools:
        body["tools"] = tools
        if tool_choice is not None:
            body["tool_choice"] = tool_choice
    return body


def as_parts(content: object) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return list(content)
    return [{"type": "text", "text": content}] if content else []


def image_url(image: str | bytes) -> str:
    if isinstance(image, bytes):
        data, raw = base64.b64encode(image).decode("ascii"), image
    elif image.startswith(("http://", "https://", "data:")):
        return image
    else:
        data = image
        try:
            raw = base64.b64decode(image[:64])  # the magic bytes are all we need
        except (binascii.Error, ValueError):
            raw = b""
    return f"data:{_mime(raw)};base64,{data}"


def _mime(raw: bytes) -> str:
    if raw.startswith(b"\x89PNG"):
        return "image/png"
    if raw[:3] == b"GIF":
        return "image/gif"
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return "image/jpeg"
