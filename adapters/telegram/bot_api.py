"""Bot API parts python-telegram-bot 22.8 (Bot API 10.0) does not know yet, as typed models of ours.

Bot API 10.3 (2026-08-24) lets a person stop a draft: `sendMessageDraft` takes `can_stop`
(show a stop button on the draft) and `keep_on_stop` (keep the draft in the chat when it is
pressed), and a press arrives as the update `stopped_message_generation`, a
MessageGenerationStopped (`chat`, `message_thread_id`, `draft_id`). python-telegram-bot's
`Bot.send_message_draft` passes parameters it does not know through its `api_kwargs` (its
`Bot.do_api_request` is for methods it lacks, and warns for one it has), and `Update.de_json`
keeps a field it does not know in `Update.api_kwargs`, where `generation_stopped` reads it.
Both go away with the python-telegram-bot release that supports Bot API 10.3 (22.8 supports
10.0; its development branch no later API as of this writing).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError
from telegram import Update

STOPPED_GENERATION = "stopped_message_generation"  # the update's field: allowed_updates must name it


class DraftStop(BaseModel):
    """sendMessageDraft's stop controls: a stop button on the draft; the draft goes when pressed
    (the Stop's notice repeats what was written, so keeping it would show it twice)."""

    model_config = ConfigDict(frozen=True)

    can_stop: bool = True
    keep_on_stop: bool = False

    def api_kwargs(self) -> dict[str, Any]:
        return self.model_dump()


class _StoppedChat(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: int
    type: str


class GenerationStopped(BaseModel):
    """MessageGenerationStopped: the person pressed stop on a draft."""

    model_config = ConfigDict(extra="ignore")

    chat: _StoppedChat
    message_thread_id: int | None = None
    draft_id: int


def generation_stopped(update: Update) -> GenerationStopped | None:
    """The update's stopped_message_generation, or None (absent, or not the shape the Bot API
    documents: logged by the caller as an update it ignores)."""
    raw = (update.api_kwargs or {}).get(STOPPED_GENERATION)
    if not isinstance(raw, dict):
        return None
    try:
        return GenerationStopped.model_validate(raw)
    except ValidationError:
        return None
