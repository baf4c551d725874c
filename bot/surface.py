"""Who is talking where: chat keys, incoming messages, and the Surface protocol adapters implement.

Errors a surface raises when it cannot deliver::

    DeliveryError             a post did not reach the chat (reason; permanent; retry_after)
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from agent_core.events import AnswerReady, Event, QuestionAsked, Verdict
from agent_core.schema import Sender
from tools.base import SharedLocation


@dataclass(frozen=True, slots=True)
class ChatKey:
    """A conversation place: Telegram chat, Slack thread, web browser session, console."""

    platform: str
    chat_id: str
    thread_id: str = ""

    def __str__(self) -> str:
        return f"{self.platform}:{self.chat_id}:{self.thread_id}"

    @classmethod
    def parse(cls, raw: str) -> ChatKey:
        platform, chat_id, thread_id = raw.split(":", 2)
        return cls(platform, chat_id, thread_id)


class MessageKind(StrEnum):
    TEXT = "text"
    BUTTON = "button"  # an option button pressed: text is the chosen option
    LOCATION = "location"  # a shared location: text may be empty
    DECISION = "decision"  # an Approve / Reject press on a plan's sign-off (text: approve | reject), or a
    # Yes / No press on a suggestion (text: accept | decline); question_id names the sign-off or suggestion


@dataclass(frozen=True, slots=True)
class IncomingMessage:
    chat: ChatKey
    user_id: str
    text: str
    dedup_id: str = ""  # the platform's own id (Telegram update_id, Slack event_id); "" = none
    user_name: str = ""
    kind: MessageKind = MessageKind.TEXT
    reply_to: str | None = None  # platform message id this message replies to
    location: SharedLocation | None = None
    is_group: bool = False
    received_at: float = field(default_factory=time.time)
    lang: str = ""  # the platform's hint ("zh"/"en", e.g. Telegram's language_code); "" = none
    question_id: str | None = None  # an answer that names its question (the web API's tool_call_id)
    handle: str = ""  # the sender's @username where the platform has one (Telegram): travellers are named by it
    run: str | None = None  # a Stop button's run (RunInfo.run): it stops that run only; None stops the current one
    # a reply quoting someone else's message: their platform id ("?" when the platform does not say
    # whose words are quoted, e.g. Slack's "> ..." lines); the message is still only its sender's
    quoting: str = ""
    # a suggestion the person who may make the change accepted (bot.chat.suggestions): their id; the
    # message is the suggester's words, and counts as a change made by `adopted_by`
    adopted_by: str = ""

    @property
    def sender(self) -> Sender | None:
        """Who said it, as the model and the planner see it: in groups and team threads only (in a
        private chat there is one person, and their messages stay as they are)."""
        if not self.is_group or not self.user_id:
            return None
        return Sender(user_id=self.user_id, name=self.user_name or None, handle=self.handle.lstrip("@") or None)


class SubmitOutcome(StrEnum):
    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"
    REFUSED = "refused"  # not on the allowlist
    INVALID = "invalid"  # empty or too long: the person was told why
    LIMITED = "limited"  # over the per-user rate limit (bot.ratelimit): the person was told when to retry


@dataclass(frozen=True, slots=True)
class RunInfo:
    """What a surface may want to know about the run an event belongs to."""

    session_id: str
    lang: str  # "zh" or "en"
    user_id: str = ""  # the person who started the run (mentioned in questions on Slack)
    user_name: str = ""
    max_steps: int = 0
    run: str = ""  # the run's reference (run_ref): a surface's Stop button names it
    request: str = ""  # what the person asked for (the message that started the run): a title until there is a plan


RUN_REF_PATTERN = r"[0-9A-Za-z_-]{1,40}\.[0-9]{1,9}"  # what a surface accepts as a run's reference
RUN_REF = re.compile(f"^{RUN_REF_PATTERN}$")


def run_ref(session_id: str, run_no: int) -> str:
    """A run's reference, "<session id>.<run number>": unique across conversations (a new one
    counts its runs from 1 again), 34 characters for the store's session ids."""
    return f"{session_id}.{run_no}"


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file posted in the chat (a plan's calendar, its cost sheet)."""

    filename: str
    mime: str
    content: str  # text files only: UTF-8 on the wire
    title: str = ""


# How the runtime names a person in a notice's text, for every surface to render as a mention:
# `<@ID>` or `<@ID|Name>` (Slack's own form; on Telegram the numeric id, rendered as a
# tg://user link). Everything else in a notice is plain text the surface escapes.
MENTION = re.compile(r"<@(?P<id>[A-Za-z0-9]+)(?:\|(?P<name>[^<>|]{1,64}))?>")
_INERT = "<\u2060@"  # a word joiner after "<": a person's own "<@U1>" shows as typed, never as a mention


def mention(platform: str, user_id: str, name: str = "", handle: str = "") -> str:
    """A person as a notice names them: a mention where the platform has them (a Slack id, a
    Telegram @username or id), else their name or id."""
    if platform == "slack" and user_id and not user_id.startswith("@"):
        return f"<@{user_id}>"
    if platform == "telegram":
        if handle or user_id.startswith("@"):
            return handle or user_id  # Telegram links an @username itself
        if user_id.isdigit():
            clean = " ".join(name.replace("<", "").replace(">", "").replace("|", "").split())[:64]
            return f"<@{user_id}|{clean}>" if clean else f"<@{user_id}>"
    return name or handle or user_id


def quoted(words: str) -> str:
    """A person's words placed in a notice: shown as they wrote them, never rendered as a mention."""
    return words.replace("<@", _INERT)


@dataclass(frozen=True, slots=True)
class Notice:
    """A short message from the runtime itself (queued, cancelled, status, errors, help)."""

    kind: str  # queued | cancelled | new | status | error | refused | invalid | help | info | reminder | signoff | decided
    text: str  # already in the person's language
    reply_to: str | None = None  # the platform message it refers to (a reminder: the question; a decision: its card)
    signoff_id: str | None = None  # a sign-off request: the surface adds Approve / Reject buttons naming it
    suggestion_id: str | None = None  # a suggestion to confirm: the surface adds Yes / No buttons naming it
    closes: str | None = None  # a sign-off over with no card pressed (expired): its cards close before the notice
    cards: tuple[str, ...] = ()  # those cards' platform message ids (the delivery worker reads them: bot.team.cards)


class DeliveryError(Exception):
    """A surface could not post: `permanent` (blocked, chat gone, refused) is never retried;
    otherwise the delivery worker retries until the row's deadline, after `retry_after` seconds
    when the platform said so. `outage`: the platform itself could not be reached or answered
    5xx (the worker pauses every lane of that platform, bot.delivery.breaker), as opposed to
    refusing this one message."""

    def __init__(self, reason: str, *, permanent: bool, retry_after: float | None = None,
                 outage: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent
        self.retry_after = retry_after
        self.outage = outage and not permanent


class PartLog(Protocol):
    """The delivery record of one outgoing item that a surface may send as several messages."""

    @property
    def done(self) -> int:
        """Parts already delivered by an earlier attempt: the surface skips them."""
        ...

    async def sent(self, message_id: str, *, more: bool) -> None:
        """One more part was delivered (`more`: others follow). Recorded before the next is sent."""


class Surface(Protocol):
    platform: str
    # Whether a team plan can wait for sign-off here (bot.chat.machine, the `signable` fact): the
    # surface knows who presses, by a platform id an approver list can name, and shows the
    # approvers Approve / Reject buttons. Telegram and Slack do; the web chat (whose one user id
    # is a session id the client chooses) and the console do not.
    signs_off: bool

    async def show_progress(self, chat: ChatKey, event: Event, run: RunInfo) -> None:
        """Steps and tool calls; best effort (a failure must not stop the run)."""

    async def post_question(self, chat: ChatKey, question: QuestionAsked, run: RunInfo, parts: PartLog) -> None:
        """Post the question as new messages (the last carries the buttons); raise DeliveryError."""

    async def post_answer(
        self, chat: ChatKey, answer: AnswerReady, verdict: Verdict | None, run: RunInfo, parts: PartLog
    ) -> None:
        """Post the final answer (and the verdict when there is one); raise DeliveryError."""

    async def post_notice(self, chat: ChatKey, notice: Notice, parts: PartLog) -> None: ...

    async def post_file(self, chat: ChatKey, file: Attachment, parts: PartLog) -> None:
        """Attach a file to the chat (the thread on Slack); raise DeliveryError."""

    async def members(self, chat: ChatKey) -> frozenset[str] | None:
        """The platform ids of the people in the chat now; None when the surface cannot tell."""
