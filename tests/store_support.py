"""What the store's tests share: the posting of a question, as the chat's actor makes it."""

from __future__ import annotations

from collections.abc import Sequence

from bot.delivery.bodies import Audience, question_body
from bot.store.base import QuestionRow


def postings_for(questions: Sequence[QuestionRow], lang: str = "en", asker_name: str = "Ann") -> list[str]:
    """Each question's outbox body (bot.run.outcome builds them so for Store.pause)."""
    return [question_body(q.tool_call_id, q.question, q.options, Audience(lang, q.asker_id, q.addressee or asker_name))
            for q in questions]
