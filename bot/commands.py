"""The chat commands every surface shares: /start and /help, /new, /cancel, /status."""

from __future__ import annotations

from bot import texts
from bot.chat import IncomingMessage, Notice
from bot.runs import ChatRuntime, RunDriver
from bot.settings import Settings
from bot.store.base import InboxRow, SessionRow, Store

COMMANDS = {"/start": "help", "/help": "help", "/new": "new", "/cancel": "cancel", "/status": "status"}


def command_of(text: str) -> str | None:
    word = text.strip().split(maxsplit=1)[0].lower() if text.strip() else ""
    word = word.split("@", 1)[0]  # Telegram's /cmd@botname
    return COMMANDS.get(word)


class Commands:
    def __init__(self, store: Store, driver: RunDriver, settings: Settings) -> None:
        self.store = store
        self.driver = driver
        self.settings = settings

    async def run(
        self, chat: ChatRuntime, session: SessionRow | None, row: InboxRow, msg: IncomingMessage, command: str
    ) -> None:
        """Act on a command (called with the chat's lock held), consume its update, say what happened."""
        # a command says nothing of the person's language: keep the conversation's
        lang = session.lang if session else (msg.lang or "zh")
        if command == "help":
            notice = Notice("help", texts.text("help", lang))
        elif command == "status":
            notice = Notice("status", await self._status(chat, session, lang))
        elif command == "cancel":
            active = chat.busy or (session is not None and session.state in ("running", "waiting"))
            if session is not None and active:
                await self.driver.stop_run(chat, session, close=False)
                notice = Notice("cancelled", texts.text("cancelled", lang))
            else:
                notice = Notice("info", texts.text("nothing_to_cancel", lang))
        else:  # new
            if session is not None:
                await self.driver.stop_run(chat, session, close=True)
            notice = Notice("new", texts.text("new", lang))
        await self.store.finish_inbox(row.id, drop_earlier=command in ("cancel", "new"))
        await self.driver.delivery.notice(chat.key, notice)

    async def _status(self, chat: ChatRuntime, session: SessionRow | None, lang: str) -> str:
        if session is None or session.state == "idle":
            return texts.text("status_idle", lang)
        if session.state == "waiting":
            q = await self.store.get_question(session.id)
            return texts.text("status_waiting", lang, question=q.question if q else "?")
        return texts.text("status_running", lang, step=session.run_steps, max=self.settings.max_steps)
