"""Which process runs a chat: the interface, and the one-process case (SQLite).

The SessionManager runs a chat's actor (and sends the chat's outbox) only under a claim on the
chat. With SQLite one process serves every chat, so a claim is granted at once and carries no
fence (`LocalOwnership`). With PostgreSQL several processes share the chats, and a claim is the
chat's lease (bot.cluster.leases.LeasedOwnership): renewed while held, released when the chat goes
quiet, and lost when another process took the chat over.

    claim = ownership.claim_now(key)       # LocalOwnership: a claim, at once
    claim = await ownership.claim(key)     # LeasedOwnership: a claim, or None (held elsewhere)
    with ownership.scope(claim):           # tasks created here write under the claim's fence
        ...start the chat's actor...
    ownership.holds(key)                   # may this process send to the chat now?
    ownership.release(key)                 # the chat went quiet (actor ended, nothing to send)
    await ownership.tell_holder(key)       # an update stored here for a chat held elsewhere

`holds` is checked before every send, edit or progress update of a chat: a process whose lease
ran out (it was stopped, or lost the database) sends nothing to that chat, even before the
database has refused its next write.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # asyncpg is loaded only with PostgreSQL
    from bot.store.postgres.leases import Lease


@dataclass(frozen=True, slots=True)
class Claim:
    chat_key: str
    lease: Lease | None  # None: one process serves every chat (SQLite)
    fresh: bool  # granted just now; False when this process already held the chat
    # fresh claims, what the previous owner left (read once the claim was granted, in the same
    # round trip): its open session if its run was left working (the new owner re-drives it),
    # and whether the chat's outbox has rows to send
    working_session: str | None = None
    outbox_pending: bool = True


class Ownership(Protocol):
    immediate: bool  # claims are granted at once (claim_now), without a database round trip

    def claim_now(self, chat_key: str) -> Claim | None: ...

    async def claim(self, chat_key: str) -> Claim | None: ...

    def scope(self, claim: Claim) -> AbstractContextManager[object]: ...

    def holds(self, chat_key: str) -> bool: ...

    def release(self, chat_key: str) -> None: ...

    def lost_now(self, chat_key: str) -> None:
        """A write of the chat was refused (LeaseLost): the chat is no longer this process's."""

    async def tell_holder(self, chat_key: str) -> None:
        """Wake the process that holds the chat: an update was stored here without waking anyone
        (this process meant to run the chat) and the claim found the chat held elsewhere."""

    async def start(self, wake: Callable[[str], None], lost: Callable[[str], None]) -> None: ...

    async def stop(self) -> None: ...


class LocalOwnership:
    """One process serves every chat: every claim is granted, nothing is fenced or renewed."""

    immediate = True

    def claim_now(self, chat_key: str) -> Claim | None:
        return Claim(chat_key, None, fresh=False)

    async def claim(self, chat_key: str) -> Claim | None:
        return self.claim_now(chat_key)

    def scope(self, claim: Claim) -> AbstractContextManager[object]:
        return contextlib.nullcontext()

    def holds(self, chat_key: str) -> bool:
        return True

    def release(self, chat_key: str) -> None:
        return None

    def lost_now(self, chat_key: str) -> None:
        return None

    async def tell_holder(self, chat_key: str) -> None:
        return None

    async def start(self, wake: Callable[[str], None], lost: Callable[[str], None]) -> None:
        return None

    async def stop(self) -> None:
        return None
