"""LeasedOwnership: several processes share the chats of one PostgreSQL database.

A chat runs in the process that holds its lease (bot.store.postgres.leases: an owner, an expiry by
the database's clock, a fencing number). This object is that process's side of it:

- `claim(key)` takes the chat's lease (None while another process holds it live; that process
  was woken by the same NOTIFY). A chat this process already holds is claimed again at once.
- `scope(claim)` makes every store write of the tasks started inside carry the lease's fence
  (PostgresStore.fenced): once another process took the chat over, they are refused.
- One task renews every lease held, in one statement, each `lease_s / 3`. A lease missing from
  the result was taken over: `lost(key)` stops the chat here (its actor, its delivery lane).
- `release(key)` gives the lease up after `linger_s` (a third of the lease, at most LINGER_MAX_S)
  unless the chat is claimed again meanwhile: a person's quick follow-up, the answer to a
  question just posted, the next delivery, reuse it without two more transactions.
- `holds(key)` says whether a send is allowed: the lease is held and its time, counted on this
  process's monotonic clock from *before* the renewal was asked for, has not run out. A process
  stopped past its lease (SIGSTOP, a frozen VM) wakes up with that time gone and sends nothing
  until a renewal succeeds, which it cannot once the chat was taken over.
- Wake-ups: a LISTEN on the inbox channel hears the chat named by each NOTIFY (add_inbox and
  add_events send them, from any process; every process hears every one). A process storing a
  message for a chat it runs, or claims at that moment, sends none (PostgreSQL commits one
  notifying transaction at a time, so each NOTIFY is a queue for all); when that claim finds the
  chat held elsewhere, `tell_holder` NOTIFYs it then. Only the process that can use a NOTIFY
  acts on it: the chat's holder (its actor reads the new row), and a process that
  released the chat moments ago (`_recent`: a message stored while the release was committing
  found the lease still held, so its storer did not take it). Nobody else claims on a NOTIFY:
  the process that stored the message claims the chat itself (SessionManager.submit; deadlines
  and redeliveries likewise), so the others' claims could only lose, each a round trip and a
  transaction, for every new chat. A chat whose owner died is the sweep's: a sweep every
  `sweep_s` (a third of the lease, at most SWEEP_MAX_S; and after every reconnect of the LISTEN
  connection) wakes chats with work and no live owner in every process: a dead owner's chats
  are taken within the lease plus SWEEP_MAX_S, and a storer that could not claim (the database
  failed it) is covered too.
- The database lost: claims fail (no new leases), renewals fail, and once a lease's time has
  run out here the chat is given up (another process may take it). Everything comes back by
  itself when the database does: the listener reconnects and sweeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from bot.cluster.ownership import Claim
from bot.store.base import StoreError
from bot.store.postgres.connect import LEASES_APPLICATION_NAME
from bot.store.postgres.leases import Lease, new_owner_id
from bot.store.postgres.notify import INBOX_CHANNEL, Listener
from bot.store.postgres.store import PostgresStore

log = logging.getLogger(__name__)

SWEEP_MAX_S = 0.5  # one indexed query per process: cheap, and it bounds a takeover's delay
RECENT_MAX = 10_000  # chats remembered as released here; past it the run-out ones are dropped
LINGER_MAX_S = 2.0


@dataclass(slots=True)
class _Held:
    lease: Lease
    until: float  # monotonic: sends are allowed before this


class LeasedOwnership:
    immediate = False

    def __init__(self, store: PostgresStore, lease_s: float, *, owner: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.lease_s = lease_s
        self.owner = owner or new_owner_id()
        self._clock = clock
        self._held: dict[str, _Held] = {}
        self._recent: dict[str, float] = {}  # chat -> until (monotonic): released here, see _notified
        self._releasing: dict[str, asyncio.Task[None]] = {}
        self._sweep_lock = asyncio.Lock()
        self._lingering: dict[str, asyncio.TimerHandle] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._listener: Listener | None = None
        self._wake: Callable[[str], None] = lambda key: None
        self._lost: Callable[[str], None] = lambda key: None

    @property
    def interval_s(self) -> float:
        return self.lease_s / 3

    @property
    def sweep_s(self) -> float:
        return min(self.interval_s, SWEEP_MAX_S)

    @property
    def linger_s(self) -> float:
        return min(self.interval_s, LINGER_MAX_S)

    # -- lifecycle -------------------------------------------------------------------------
    def bind(self, wake: Callable[[str], None], lost: Callable[[str], None]) -> None:
        """Who is told: `wake(key)` the chat has work, `lost(key)` another process took it."""
        self._wake, self._lost = wake, lost

    async def start(self, wake: Callable[[str], None], lost: Callable[[str], None]) -> None:
        self.bind(wake, lost)
        self._listener = self.store.listener([INBOX_CHANNEL], self._notified, on_connect=self.sweep,
                                             check_s=max(0.5, self.interval_s),
                                             application_name=LEASES_APPLICATION_NAME)
        await self._listener.start()  # its first connect sweeps
        self._tasks = [asyncio.create_task(self._renewing(), name="lease-renewal"),
                       asyncio.create_task(self._sweeping(), name="lease-sweep")]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for timer in self._lingering.values():
            timer.cancel()
        self._lingering.clear()
        self._tasks = []
        if self._listener is not None:
            await self._listener.stop()
            self._listener = None
        held, self._held = list(self._held.values()), {}
        with contextlib.suppress(StoreError, TimeoutError):  # a successor need not wait out the lease
            async with asyncio.timeout(2):
                await asyncio.gather(*(self.store.release_lease(h.lease) for h in held))
        await asyncio.gather(*self._releasing.values(), return_exceptions=True)

    # -- claims ----------------------------------------------------------------------------
    def claim_now(self, chat_key: str) -> Claim | None:
        return None  # a lease is a database round trip: see claim()

    async def claim(self, chat_key: str) -> Claim | None:
        held = self._held.get(chat_key)
        if held is not None:
            if (timer := self._lingering.pop(chat_key, None)) is not None:
                timer.cancel()
            return Claim(chat_key, held.lease, fresh=False)
        releasing = self._releasing.get(chat_key)
        if releasing is not None:  # our own release first, or the lease would look held by us
            await asyncio.gather(releasing, return_exceptions=True)
        asked = self._clock()
        try:
            taken = await self.store.take_lease(chat_key, self.owner, self.lease_s)
        except StoreError as exc:  # the database is gone: take nothing new; the sweep tries again
            log.warning("cannot take the lease of %s: %s", chat_key, exc)
            return None
        self._recent.pop(chat_key, None)  # granted, or held by another process, which is told
        if taken is None:
            return None
        self._held[chat_key] = _Held(taken.lease, asked + self.lease_s)
        return Claim(chat_key, taken.lease, fresh=True, working_session=taken.working_session,
                     outbox_pending=taken.outbox_pending)

    def scope(self, claim: Claim) -> AbstractContextManager[object]:
        assert claim.lease is not None
        return self.store.fenced(claim.lease)

    def holds(self, chat_key: str) -> bool:
        held = self._held.get(chat_key)
        return held is not None and self._clock() < held.until

    def release(self, chat_key: str) -> None:
        if chat_key in self._held and chat_key not in self._lingering:
            self._lingering[chat_key] = asyncio.get_running_loop().call_later(
                self.linger_s, self._release_now, chat_key)

    def _release_now(self, chat_key: str) -> None:
        self._lingering.pop(chat_key, None)
        held = self._held.pop(chat_key, None)
        if held is None:
            return
        self._remember_released(chat_key)
        task = asyncio.create_task(self._release(held.lease), name=f"release:{chat_key}")
        self._releasing[chat_key] = task
        task.add_done_callback(lambda t: self._releasing.pop(chat_key, None) if self._releasing.get(chat_key) is t else None)

    async def _release(self, lease: Lease) -> None:
        try:
            await self.store.release_lease(lease)
        except StoreError as exc:  # it runs out by itself
            log.warning("could not release the lease of %s: %s", lease.chat_key, exc)

    # -- renewal ---------------------------------------------------------------------------
    async def _renewing(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            await self.renew()

    async def renew(self) -> None:
        """Renew every lease held; give up the chats whose lease was taken over, or whose time ran
        out while the database could not be reached."""
        if not self._held:
            return
        held = dict(self._held)
        asked = self._clock()
        try:
            renewed = await self.store.renew_leases([h.lease for h in held.values()], self.lease_s)
        except StoreError as exc:
            log.warning("cannot renew %d leases: %s", len(held), exc)
            for key, h in held.items():
                if self._clock() >= h.until and self._held.get(key) is h:
                    self._give_up(key, "its time ran out while the database was unreachable")
            return
        for key, h in held.items():
            if self._held.get(key) is not h:
                continue  # released (or lost) meanwhile
            lease = renewed.get(key)
            if lease is None:
                self._give_up(key, "another process took it over")
            else:
                h.lease, h.until = lease, asked + self.lease_s

    def _give_up(self, key: str, why: str) -> None:
        log.warning("lost the lease of %s: %s; stopping it here", key, why)
        self._held.pop(key, None)
        if (timer := self._lingering.pop(key, None)) is not None:
            timer.cancel()
        self._lost(key)

    def lost_now(self, key: str) -> None:
        """A write of the chat was refused (LeaseLost): stop treating the chat as ours."""
        if key in self._held:
            self._give_up(key, "a write was refused")

    # -- wake-ups --------------------------------------------------------------------------
    async def tell_holder(self, chat_key: str) -> None:
        try:
            await self.store.notify_chat(chat_key)
        except StoreError as exc:  # the row is stored: the sweep finds it once the holder lets go
            log.warning("could not wake the holder of %s: %s", chat_key, exc)

    def _remember_released(self, chat_key: str) -> None:
        now = self._clock()
        if len(self._recent) >= RECENT_MAX:
            self._recent = {k: t for k, t in self._recent.items() if t > now}
        self._recent[chat_key] = now + self.lease_s

    async def _notified(self, channel: str, chat_key: str) -> None:
        # a chat released here lately is woken once: the claim forgets it, granted or not
        lately = self._recent.get(chat_key, 0.0) > self._clock()
        if chat_key in self._held or chat_key in self._releasing or lately:
            self._wake(chat_key)

    async def _sweeping(self) -> None:
        while True:
            await asyncio.sleep(self.sweep_s)
            await self.sweep()

    async def sweep(self) -> None:
        """Wake every chat that has work and no live owner (a missed NOTIFY, a dead owner).
        One sweep at a time (the reconnect's and the periodic one): once a sweep returns, no
        sweep that read the table before it started is still waking chats."""
        async with self._sweep_lock:
            try:
                keys = await self.store.unowned_chats_with_work()
            except StoreError as exc:
                log.warning("sweep skipped: %s", exc)
                return
            for key in keys:
                self._wake(key)
