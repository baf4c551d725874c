"""Who a Slack user is: their display name and handle, read once from users.info and kept.

A message in a channel thread keeps its sender (bot.surface.IncomingMessage.sender): the model
and the planner see "Bo (@bo): …". Slack events carry only the user id, so the adapter asks
users.info the first time it meets someone and keeps the answer for the process's life (at most
`KEEP` people, the least recently met forgotten first). A refused or failed lookup (a missing
users:read scope, a network fault) leaves the name empty — the id still says who — and is
logged once per person; it is tried again after `RETRY_AFTER_S`.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from adapters.slack.errors import SlackCallFailed
from bot.surface import IncomingMessage

log = logging.getLogger(__name__)

KEEP = 5000
RETRY_AFTER_S = 300.0
Lookup = Callable[[str], Awaitable[dict[str, Any]]]  # users.info for a user id -> its answer


@dataclass(frozen=True, slots=True)
class Person:
    name: str  # profile.display_name, else real_name, else ""
    handle: str  # the user's name (their @handle), "" when unknown
    known_at: float
    failed: bool = False


class People:
    def __init__(self, lookup: Lookup, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._lookup = lookup
        self._clock = clock
        self._known: OrderedDict[str, Person] = OrderedDict()

    async def named(self, msg: IncomingMessage) -> IncomingMessage:
        """The message with its sender's name and handle filled in (in channels: a DM is one person's)."""
        if not msg.is_group or not msg.user_id or (msg.user_name and msg.handle):
            return msg
        person = await self.person(msg.user_id)
        return replace(msg, user_name=msg.user_name or person.name,
                       handle=msg.handle or (f"@{person.handle}" if person.handle else ""))

    async def person(self, user_id: str) -> Person:
        known = self._known.get(user_id)
        now = self._clock()
        if known is not None and not (known.failed and now - known.known_at > RETRY_AFTER_S):
            self._known.move_to_end(user_id)
            return known
        try:
            answer = await self._lookup(user_id)
        except SlackCallFailed as exc:
            if known is None:
                log.info("slack: who %s is stays unknown (%s)", user_id, exc)
            person = Person("", "", now, failed=True)
        else:
            user = answer.get("user") or {}
            profile = user.get("profile") or {}
            name = str(profile.get("display_name") or profile.get("real_name") or user.get("real_name") or "")
            person = Person(" ".join(name.split())[:80], str(user.get("name") or ""), now)
        self._known[user_id] = person
        self._known.move_to_end(user_id)
        while len(self._known) > KEEP:
            self._known.popitem(last=False)
        return person
