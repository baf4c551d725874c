"""Suggestions in the store suite: each test runs on SQLite and on PostgreSQL (tests/test_store.py's
`backend` fixture). A suggestion is kept with the message it came in (its inbox row closes in the
same transaction, its notice is queued with it), survives a restart, is decided once, and a Yes
writes the suggestion to the chat's inbox as the requester's change in that same transaction."""

from __future__ import annotations

import time

from bot.run.records import message_from_json, message_to_json
from bot.store.base import ChatEvent, Store, SuggestionRow
from bot.surface import ChatKey, IncomingMessage
from tests.test_store import KEY, Backend, backend, store, turn

__all__ = ["backend", "store"]  # the store suite's fixtures, used here by name


async def test_a_suggestion_is_kept_with_its_message_and_decided_once(backend: Backend, store: Store) -> None:
    request = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(request or 0))
    said = IncomingMessage(ChatKey.parse(KEY), "U0DAN", "Guangzhou", dedup_id="2", user_name="Dan", is_group=True)
    inbox = await store.add_inbox("test", "2", KEY, message_to_json(said))
    assert inbox is not None
    now = time.time()
    kept = SuggestionRow("a" * 32, session.id, KEY, "waiting", message_to_json(said), "U0DAN", "u1", now)
    [out_id] = await store.add_suggestion(kept, inbox_id=inbox, outbox=[("notice", '{"kind": "suggestion"}')])
    assert await store.inbox_for(KEY) == []  # the message is kept as the suggestion, not left to apply
    [notice] = await store.pending_outbox(KEY)
    assert (notice.id, notice.kind, notice.session_id) == (out_id, "notice", session.id)
    # another process (or a restart) reads it back whole
    other = backend.new()
    await other.open()
    try:
        assert await other.get_suggestion(kept.id) == kept
        assert await other.get_suggestion("b" * 32) is None
    finally:
        await other.close()
    # No by someone: recorded once; a second decision finds it decided and writes nothing
    press = await store.add_inbox("test", "3", KEY, "{}")
    assert await store.decide_suggestion(kept.id, "declined", "u1", inbox_id=press, outbox=[("notice", "{}")]) is not None
    decided = await store.get_suggestion(kept.id)
    assert decided is not None and (decided.status, decided.decided_by) == ("declined", "u1")
    assert decided.decided_at is not None and decided.decided_at >= now
    late = await store.add_inbox("test", "4", KEY, "{}")
    assert await store.decide_suggestion(kept.id, "accepted", "u1", inbox_id=late, outbox=[("notice", "{}")]) is None
    assert await store.inbox_for(KEY) == []  # the late press's row is closed all the same
    assert len(await store.pending_outbox(KEY)) == 2  # the suggestion's notice and the No's; nothing for the late Yes


async def test_a_yes_puts_the_suggestion_in_the_inbox_as_the_requesters_change(store: Store) -> None:
    request = await store.add_inbox("test", "1", KEY, "{}")
    session = await store.start_turn(turn(request or 0))
    said = IncomingMessage(ChatKey.parse(KEY), "U0DAN", "Guangzhou", dedup_id="2", is_group=True)
    inbox = await store.add_inbox("test", "2", KEY, message_to_json(said))
    kept = SuggestionRow("c" * 32, session.id, KEY, "waiting", message_to_json(said), "U0DAN", "u1", time.time())
    await store.add_suggestion(kept, inbox_id=inbox or 0)
    press = await store.add_inbox("test", "3", KEY, "{}")
    adopted = IncomingMessage(ChatKey.parse(KEY), "U0DAN", "Guangzhou", dedup_id=f"adopted:{kept.id}", is_group=True,
                              adopted_by="u1")
    event = ChatEvent(KEY, "message", message_to_json(adopted), adopted.dedup_id)
    rows = await store.decide_suggestion(kept.id, "accepted", "u1", inbox_id=press, adopted=event,
                                         outbox=[("notice", "{}")])
    assert rows is not None and len(rows) == 1
    [row] = await store.inbox_for(KEY)  # the press is done; the change waits for the chat, as a message
    assert row.kind == "message" and message_from_json(row.body) == adopted
    assert press is not None and row.id > press
