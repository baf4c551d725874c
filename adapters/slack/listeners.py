"""What the Slack surface does with each event and press Bolt hands it.

Every listener only maps what came in (adapters.slack.inbound) and submits it to the
SessionManager, which stores it in the chat's inbox; whichever process owns the chat acts on it.
Events of one thread reach the manager in the order Slack delivered them. What became of each is
counted in `inbound`: accepted, duplicate, refused, invalid, limited, ignored, stale, unknown.

- a message or mention: the thread's conversation (its agent session opens with the run).
- Slack's own stop button (`agent_session_stopped`): the thread's /stop, from the person who
  pressed it (bot.chat.machine decides whether they may stop the run); a thread we have no
  conversation in is logged and counted (`unknown`), nothing else.
- Approve / Reject on a sign-off card: a card whose sign-off is closed (decided, expired, or an
  older one) is answered to the presser alone (ephemeral) and closed; the press is not acted on.
- 👍 / 👎 under a plan: stored with its run (SessionManager.record_feedback), thanked ephemerally.
- the Messages tab opened (Agent experience) or an assistant thread started (Assistant
  experience): suggested requests in the person's language.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import (
    AsyncSetSuggestedPrompts,
)
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack import render
from adapters.slack.calls import SlackCalls
from adapters.slack.errors import SlackCallFailed
from adapters.slack.inbound import (
    route_button,
    route_decision,
    route_event,
    route_feedback,
    route_session_stop,
    route_stop,
)
from adapters.slack.mrkdwn import escape
from adapters.slack.people import People
from adapters.slack.texts import lang_of_locale, suggested_prompts, t
from bot.store.base import SignoffRow
from bot.surface import IncomingMessage, SubmitOutcome

if TYPE_CHECKING:
    from bot.sessions import SessionManager

log = logging.getLogger(__name__)


class SlackListeners:
    def __init__(self, manager: SessionManager, client: AsyncWebClient, calls: SlackCalls,
                 bot_user_id: Callable[[], str], timezone: str) -> None:
        self._manager = manager
        self._client = client
        self._call = calls
        self._bot_user_id = bot_user_id
        self._timezone = timezone
        # who a user is (users.info, kept): messages in channel threads keep their sender's name
        self.people = People(lambda user: self._call("users.info", self._client.users_info(user=user)))
        self._order: dict[str, tuple[asyncio.Lock, int]] = {}
        self.inbound: Counter[str] = Counter()
        self._inbound_changed = asyncio.Condition()

    def attach(self, app: AsyncApp) -> None:
        """Each event and action of `app` to its listener."""
        app.event("app_mention")(self.on_event)
        app.event("message")(self.on_event)
        app.event("agent_session_stopped")(self.on_session_stopped)
        app.event("app_home_opened")(self.on_messages_tab)
        app.action(re.compile(f"^{render.OPTION_ACTION_PREFIX}"))(self.on_button)
        app.action(render.STOP_ACTION)(self.on_stop)
        app.action(re.compile(f"^{render.SIGNOFF_ACTION_PREFIX}"))(self.on_decision)
        app.action(re.compile(f"^{render.SUGGESTION_ACTION_PREFIX}"))(self.on_decision)
        app.action(render.FEEDBACK_ACTION)(self.on_feedback)
        # apps still on the Assistant experience: suggested prompts when an assistant thread opens
        # (its other messages go on to the `message` listener above)
        assistant = AsyncAssistant(logger=app.logger)
        assistant.thread_started(self.on_assistant_thread)
        app.use(assistant)

    # -- messages and mentions ---------------------------------------------------------------
    async def on_event(self, event: dict[str, Any], context: AsyncBoltContext) -> None:
        inbound = route_event(event, context.bot_user_id or self._bot_user_id())
        if inbound is None:
            await self.count("ignored")
            return
        msg = inbound.message
        chat = msg.chat
        async with self._in_order(str(chat)):
            if inbound.needs_session and await self._manager.session_info(chat) is None:
                await self.count("ignored")
                return
            outcome = await self._manager.submit(await self.people.named(msg))
        log.debug("slack: %s in %s -> %s", msg.dedup_id, chat, outcome.value)
        if outcome is SubmitOutcome.ACCEPTED and not inbound.needs_session:
            # 👀 on the request: seen, even before the status message appears
            self._call.spawn(self._call("reactions.add", self._client.reactions_add(
                channel=chat.chat_id, timestamp=str(event.get("ts") or ""), name="eyes")), quiet=True)
        await self.count(outcome.value)

    # -- presses -------------------------------------------------------------------------------
    async def on_button(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        press = route_button(body)
        if press is None:
            return
        chat = press.message.chat
        async with self._in_order(str(chat)):
            pending = await self._manager.pending_question(chat)
            if pending is None or (pending.posted_message_id not in (None, press.question_ts)):
                log.info("slack: ignored a click on an old question in %s", chat)
                await self.count("stale")
                return
            outcome = await self._manager.submit(press.message)
        await self.count(outcome.value)
        if outcome is SubmitOutcome.ACCEPTED:
            info = await self._manager.session_info(chat)
            blocks = (body.get("message") or {}).get("blocks") or []
            lang = info.lang if info else "zh"
            self._call.spawn(self._call("chat.update", self._client.chat_update(
                channel=chat.chat_id, ts=press.question_ts, text=escape(press.message.text),
                blocks=render.chosen(blocks, press.message.user_id, press.message.text, lang))))

    async def on_stop(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        """The Stop button on a status message: the chat's /stop, from the person who clicked."""
        await ack()
        await self._submit(route_stop(body))

    async def on_decision(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        """Approve / Reject on a sign-off card, or Yes / No on a suggestion (the chat decides those)."""
        await ack()
        press = route_decision(body)
        if press is None:
            return
        if press.text not in ("approve", "reject"):
            await self._submit(press)
            return
        signoff = await self._manager.signoff(press.chat)
        if signoff is None or signoff.id != press.question_id or not signoff.open:
            await self._old_card(press, signoff)
            return
        await self._submit(press)

    async def _old_card(self, press: IncomingMessage, signoff: SignoffRow | None) -> None:
        """A press on a card whose sign-off is over: said to the presser alone, and the card closes."""
        info = await self._manager.session_info(press.chat)
        lang = info.lang if info else "zh"
        if signoff is not None and signoff.id != press.question_id and signoff.open:
            line = t("signoff_newer", lang)  # an older plan's card
        else:
            current = signoff if signoff is not None and signoff.id == press.question_id else None
            line = render.decided_line(current, lang, self._timezone)
        log.info("slack: a press on an old sign-off card in %s (%s)", press.chat, press.question_id)
        await self.count("stale")
        self._call.spawn(self._call("chat.postEphemeral", self._client.chat_postEphemeral(
            channel=press.chat.chat_id, user=press.user_id, thread_ts=press.chat.thread_id or None,
            text=t("old_card", lang, line=line))))
        if press.reply_to:
            card = render.closed_card(line)
            self._call.spawn(self._call("chat.update", self._client.chat_update(
                channel=press.chat.chat_id, ts=press.reply_to, text=card.text, blocks=card.blocks)))

    async def on_feedback(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        press = route_feedback(body)
        if press is None:
            await self.count("invalid")
            return
        kept = await self._manager.record_feedback(press.chat, press.run, press.user_id, press.rating)
        info = await self._manager.session_info(press.chat)
        lang = info.lang if info else "zh"
        await self.count("feedback" if kept else "stale")
        self._call.spawn(self._call("chat.postEphemeral", self._client.chat_postEphemeral(
            channel=press.chat.chat_id, user=press.user_id, thread_ts=press.chat.thread_id or None,
            text=t("feedback_thanks" if kept else "feedback_unknown", lang))), quiet=True)

    async def on_session_stopped(self, event: dict[str, Any]) -> None:
        """Slack's stop button on the thread's agent session."""
        stop = route_session_stop(event)
        if stop is None:
            await self.count("invalid")
            return
        async with self._in_order(str(stop.chat)):
            if not await self._manager.known(stop.chat):
                log.info("slack: Slack's stop button in %s, where there is no conversation: nothing to stop", stop.chat)
                await self.count("unknown")
                return
            outcome = await self._manager.submit(stop)
        await self.count(outcome.value)

    async def _submit(self, press: IncomingMessage | None) -> None:
        if press is None:
            return
        async with self._in_order(str(press.chat)):
            outcome = await self._manager.submit(press)
        await self.count(outcome.value)

    # -- where a conversation starts -------------------------------------------------------------
    async def on_messages_tab(self, event: dict[str, Any]) -> None:
        """The app's Messages tab opened (the Agent experience): requests to start from."""
        if event.get("tab") != "messages" or not str(event.get("channel") or "").startswith("D"):
            return
        lang = await self._lang_of(str(event.get("user") or ""))
        try:
            await self._call("assistant.threads.setSuggestedPrompts", self._client.assistant_threads_setSuggestedPrompts(
                channel_id=str(event["channel"]), prompts=suggested_prompts(lang), title=t("prompts_title", lang)))
        except SlackCallFailed as exc:
            log.info("slack: suggested prompts not set in the Messages tab: %s", exc)

    async def on_assistant_thread(self, payload: dict[str, Any], set_suggested_prompts: AsyncSetSuggestedPrompts) -> None:
        """A new assistant thread (the Assistant experience): the same, for that thread."""
        user = str((payload.get("assistant_thread") or {}).get("user_id") or payload.get("user") or "")
        lang = await self._lang_of(user)
        try:
            await set_suggested_prompts(prompts=suggested_prompts(lang), title=t("prompts_title", lang))
        except SlackApiError as exc:
            log.warning("slack: suggested prompts not set: %s", exc.response.get("error"))

    async def _lang_of(self, user: str) -> str:
        with contextlib.suppress(SlackCallFailed):
            info = await self._call("users.info", self._client.users_info(user=user, include_locale=True))
            return lang_of_locale(str((info.get("user") or {}).get("locale") or ""))
        return "en"

    # -- bookkeeping ---------------------------------------------------------------------------
    async def count(self, outcome: str) -> None:
        async with self._inbound_changed:
            self.inbound[outcome] += 1
            self._inbound_changed.notify_all()

    async def wait_inbound(self, predicate: Callable[[Counter[str]], bool], within: float) -> None:
        async with asyncio.timeout(within), self._inbound_changed:
            await self._inbound_changed.wait_for(lambda: predicate(self.inbound))

    @contextlib.asynccontextmanager
    async def _in_order(self, key: str) -> AsyncIterator[None]:
        """Events of one thread reach the manager in the order Slack delivered them."""
        lock, users = self._order.get(key) or (asyncio.Lock(), 0)
        self._order[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._order[key]
            if users <= 1:
                del self._order[key]
            else:
                self._order[key] = (lock, users - 1)
