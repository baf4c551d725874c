"""LiveChats: the chats this process runs now, an actor each, each under a claim on the chat.

Which process runs a chat is bot.cluster.ownership's answer: with SQLite this one, at once; with
PostgreSQL the one holding the chat's lease (bot.cluster.leases). `wake(key)` wakes the chat's
actor, or starts one (claiming the chat first where that takes a lease). An actor ends when its
chat is quiet, and the claim is given up once the chat's delivery lane is idle too.

A chat's actor, its run and its delivery lane run only under the claim, and their writes carry
its fence; a lease taken over stops all three here (`lost`). A chat claimed fresh whose run was
working (its owner died, or was stopped past its lease) gets a `resume` event, so the new owner
re-drives the run.
"""

from __future__ import annotations

import asyncio
import json
import logging

from bot.chat.actor import ChatActor
from bot.chat.actor_deps import ActorDeps
from bot.cluster.ownership import Claim, Ownership
from bot.delivery.outbox import DeliveryWorker
from bot.store.base import ChatEvent, Store
from bot.surface import ChatKey

log = logging.getLogger(__name__)


class LiveChats:
    def __init__(self, store: Store, ownership: Ownership, deps: ActorDeps, outbox: DeliveryWorker,
                 changed: asyncio.Event) -> None:
        self.store = store
        self.ownership = ownership
        self._deps = deps
        self._outbox = outbox
        self._changed = changed  # set whenever a chat's actor ends (SessionManager.wait_until_idle)
        self._actors: dict[str, ChatActor] = {}
        self._claiming: dict[str, asyncio.Task[None]] = {}
        self._tell: set[str] = set()  # chats with an update stored here without a NOTIFY (see wake)
        self._stopping: set[asyncio.Task[None]] = set()
        self.started = False

    def actor(self, key: str) -> ChatActor | None:
        return self._actors.get(key)

    def busy(self, key: str) -> bool:
        """An actor runs the chat here, or a claim on it is under way."""
        return key in self._actors or key in self._claiming

    def will_run(self, key: str) -> bool:
        """Does this process run the chat, or take it when woken (no claim of another kind under
        way)? Then an update stored for it need wake no other process (Store.add_inbox's `notify`)."""
        if self.ownership.immediate or key in self._actors:
            return True
        return self.started and key not in self._claiming

    def wake(self, key: str, *, stored_quietly: bool = False) -> None:
        """The chat has something in its inbox: its actor applies it (started if it had ended).
        `stored_quietly`: an update was stored here without waking other processes; should the
        chat be held elsewhere, its holder is told."""
        if not self.started:
            return  # stopped (or not yet started: SessionManager.start wakes every chat with work)
        actor = self._actors.get(key)
        if actor is not None:
            actor.wake()
            return
        if self.ownership.immediate:
            claim = self.ownership.claim_now(key)
            if claim is not None:
                self._run_actor(claim)
            return
        if stored_quietly:
            self._tell.add(key)
        if key not in self._claiming:  # a claim under way starts an actor that reads the inbox
            self._claiming[key] = asyncio.create_task(self._claim(key), name=f"claim:{key}")

    async def stop(self) -> None:
        self.started = False  # no new actors: the runs stopped below must not start any
        claiming = list(self._claiming.values())
        for task in claiming:
            task.cancel()
        await asyncio.gather(*claiming, return_exceptions=True)
        actors = list(self._actors.values())
        self._actors.clear()
        for actor in actors:
            await actor.stop()

    async def stopped(self) -> None:
        """The actors stopped because their chats were lost have ended."""
        await asyncio.gather(*self._stopping, return_exceptions=True)

    # -- claims ------------------------------------------------------------------------------
    async def _claim(self, key: str) -> None:
        try:
            claim = await self.ownership.claim(key)
            if claim is None:  # held live elsewhere
                if key in self._tell:  # stored here without a NOTIFY: wake the holder now
                    await self.ownership.tell_holder(key)
                return
            if not self.started:
                self.ownership.release(key)
                return
            if claim.fresh:
                await self._resume_taken_over(claim)
            self._run_actor(claim)
        except Exception:  # the store failed: the sweep comes back to this chat
            log.exception("could not take chat %s", key)
            self.ownership.release(key)
        finally:
            self._claiming.pop(key, None)
            self._tell.discard(key)  # told, or run here, or left to the sweep

    async def _resume_taken_over(self, claim: Claim) -> None:
        """A run left working by an owner that died (or stalled past its lease) is re-driven here
        (the claim read the chat's session once it was granted: bot.cluster.leases)."""
        session_id = claim.working_session
        if session_id is not None and claim.lease is not None:
            body = json.dumps({"session_id": session_id})
            await self.store.add_events([ChatEvent(claim.chat_key, "resume", body,
                                                   f"resume:{session_id}:{claim.lease.fence}")])

    def _run_actor(self, claim: Claim) -> None:
        key = claim.chat_key
        with self.ownership.scope(claim):  # the actor's tasks (its run, its lanes) carry the fence
            actor = self._actors[key] = ChatActor(ChatKey.parse(key), self._deps, self._actor_quiet, self._actor_lost)
            if claim.fresh and claim.outbox_pending:
                self._outbox.wake(key)  # what a previous owner queued and did not send
        actor.wake()

    # -- ends --------------------------------------------------------------------------------
    def _actor_quiet(self, actor: ChatActor) -> None:
        if self._actors.get(actor.skey) is actor:
            del self._actors[actor.skey]
            if not self._outbox.busy(actor.skey):
                self.ownership.release(actor.skey)
        self._changed.set()

    def lane_idle(self, key: str) -> None:
        """The chat's delivery lane has nothing left to send (DeliveryWorker's on_idle)."""
        if not self.busy(key):
            self.ownership.release(key)

    def _actor_lost(self, actor: ChatActor) -> None:
        if self._actors.get(actor.skey) is actor:
            self.ownership.lost_now(actor.skey)  # calls lost() when the chat was still held
            self.lost(actor.skey)

    def lost(self, key: str) -> None:
        """Another process owns the chat now: stop its actor, run and lane here (it rejoins when
        this process claims the chat again)."""
        actor = self._actors.pop(key, None)
        if actor is not None:
            task = asyncio.create_task(actor.stop(), name=f"stop:{key}")
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)
        self._outbox.drop(key)
        self._changed.set()
