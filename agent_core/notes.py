"""The bot's own notes to its planner, told apart from what a person said.

Models know four roles, so the notes the bot writes for its planner (the Validator's findings
for a re-plan, a nudge to submit the plan as data, an approver's rejection passed on) travel as
user-role messages. `Message.origin` says which they are; every reader of "what the person
said" (the offline planner, the Validator, the history shown after a reload) asks `origin_of`.

Messages stored before origins existed carry none: a review or nudge note among them starts
with "[review]", a rejection with "[sign-off]", and is read as such.
"""

from __future__ import annotations

from typing import Final

from agent_core.schema import Message, Origin, Role

LEGACY_PREFIXES: Final = (("[review]", Origin.REVIEW), ("[sign-off]", Origin.SIGNOFF))


def origin_of(message: Message) -> Origin | None:
    """Who wrote a user-role message (None for other roles); a person unless it says otherwise."""
    if message.role is not Role.USER:
        return None
    if message.origin is not None:
        return message.origin
    text = (message.content or "").lstrip()
    return next((origin for prefix, origin in LEGACY_PREFIXES if text.startswith(prefix)), Origin.PERSON)


def said_by_person(message: Message) -> bool:
    """A user-role message with a person's words (not one of the bot's notes)."""
    return origin_of(message) is Origin.PERSON


def bot_note(text: str, origin: Origin) -> Message:
    """A note from the bot to its planner, typed by its origin."""
    if origin is Origin.PERSON:
        raise ValueError("a bot note cannot be a person's words")
    return Message.user(text, origin=origin)
