"""The chat's state machine: its states, its triggers, and every transition, written once.

A chat is in one state, stored with its session (no open session reads as `closed`). Its own
task (bot.actor.ChatActor) takes one trigger at a time — an inbox row (a message, a command,
or an event another part of the bot wrote: a deadline, a restart, a delivery outcome) or an
outcome of the run it started — asks `decide` what to do, does it, and stores the new state
in the same transaction as the action's data. A pair (state, trigger) not in the table is a bug
and raises; the pairs that are legitimately nothing to do say so (`ignore`).

Guards are named facts the task reads from the store before deciding:

- `answers`: the message binds to the waiting question. A message must have arrived after the
  question was posted (the inbox watermark) and, in a group, come from the person asked or
  reply to the question; a named answer must name that question, once it was posted.
- `current`: an event (expiry, reminder, undeliverable question) is about the question still waiting.
- `idle_run`: no run of this chat is alive in this process.
- `asker`: a Stop comes from the person the run works for (anyone may stop it outside groups).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ChatState(StrEnum):
    CLOSED = "closed"  # no open conversation: the next message opens one
    IDLE = "idle"  # a conversation with no run: the next message starts one
    WORKING = "working"  # a run is working (or is to be re-driven after a restart)
    ASKING = "asking"  # the run is paused on a question, stored; nothing is held in memory


class Trigger(StrEnum):
    MESSAGE = "message"  # a person's message
    NAMED_ANSWER = "named answer"  # an answer that names its question (an option button, the web's answer)
    LOCATION = "location"  # a shared location with no text
    HELP = "/help"
    STATUS = "/status"
    CANCEL = "/cancel"
    NEW = "/new"
    STOP = "stop"  # the Stop button (or /stop): end the run now, keep what it wrote
    EXPIRED = "expired"  # the deadline watcher: a question's deadline passed
    REMIND = "remind"  # the deadline watcher: a question waited BOT_REMIND_AFTER_S unanswered
    RESUME = "resume"  # the start-up recovery: a run was interrupted by the restart
    UNDELIVERABLE = "undeliverable"  # the delivery worker gave up posting a question
    PAUSED = "paused"  # the run asked a question
    FINISHED = "finished"  # the run made its answer
    FAILED = "failed"  # the run ended on a model or agent fault
    CRASHED = "crashed"  # the run raised (a bug): its open calls are closed


class Action(StrEnum):
    START_RUN = "start_run"
    STEER = "steer"  # given to the run at its next step as a user message
    ANSWER = "answer"  # stored as the question's tool result; the run resumes
    HOLD = "hold"  # kept for the run's next step once the question is answered
    STALE = "stale"  # an answer to a question no longer waiting: said so, nothing changes
    REMEMBER_LOCATION = "remember_location"
    REPLY = "reply"  # /help, /status: say something, change nothing
    NOTHING_TO_CANCEL = "nothing_to_cancel"  # also a Stop with nothing being written
    REFUSE = "refuse"  # a Stop from someone the run is not for: said so, nothing changes
    STOP_RUN = "stop_run"  # cancel the run, close its open calls and its question
    CLOSE = "close"  # /new: stop what runs and close the conversation
    EXPIRE = "expire"  # the question's tool result says nobody answered; the run resumes
    REMIND = "remind"  # one short reminder of the question, queued as the reminder is marked sent
    RESUME_RUN = "resume_run"
    ABANDON = "abandon"  # the question cannot be posted: the run stops, the failure is on record
    STORE_PAUSE = "store_pause"  # the pause and the question's outbox row, one transaction
    STORE_ANSWER = "store_answer"  # the run's end and the answer's outbox row, one transaction
    STORE_FAILURE = "store_failure"  # the run's end and the error notice, one transaction
    STORE_CRASH = "store_crash"
    IGNORE = "ignore"


@dataclass(frozen=True, slots=True)
class Transition:
    source: ChatState
    trigger: Trigger
    guard: str | None  # a fact that must hold ("answers"), or "not answers"; None: always
    action: Action
    target: ChatState | None  # None: the state stays as it is


@dataclass(frozen=True, slots=True)
class Facts:
    answers: bool = False
    current: bool = False
    idle_run: bool = True
    asker: bool = False

    def holds(self, guard: str | None) -> bool:
        if guard is None:
            return True
        negate = guard.startswith("not ")
        value = bool(getattr(self, guard.removeprefix("not ")))
        return value != negate


class UndefinedTransition(Exception):
    def __init__(self, state: ChatState, trigger: Trigger) -> None:
        super().__init__(f"no transition from {state} on {trigger}")
        self.state = state
        self.trigger = trigger


S, T, A = ChatState, Trigger, Action
_EVERY = tuple(ChatState)
_OPEN = (S.IDLE, S.WORKING, S.ASKING)


def _each(states: tuple[ChatState, ...], trigger: Trigger, action: Action, target: ChatState | None,
          guard: str | None = None) -> list[Transition]:
    return [Transition(s, trigger, guard, action, target) for s in states]


TRANSITIONS: tuple[Transition, ...] = (
    *_each((S.CLOSED, S.IDLE), T.MESSAGE, A.START_RUN, S.WORKING),
    Transition(S.WORKING, T.MESSAGE, None, A.STEER, None),
    Transition(S.ASKING, T.MESSAGE, "answers", A.ANSWER, S.WORKING),
    Transition(S.ASKING, T.MESSAGE, "not answers", A.HOLD, None),
    Transition(S.ASKING, T.NAMED_ANSWER, "answers", A.ANSWER, S.WORKING),
    Transition(S.ASKING, T.NAMED_ANSWER, "not answers", A.STALE, None),
    *_each((S.CLOSED, S.IDLE, S.WORKING), T.NAMED_ANSWER, A.STALE, None),
    *_each((S.CLOSED, S.IDLE), T.LOCATION, A.REMEMBER_LOCATION, S.IDLE),
    *_each((S.WORKING, S.ASKING), T.LOCATION, A.REMEMBER_LOCATION, None),
    *_each(_EVERY, T.HELP, A.REPLY, None),
    *_each(_EVERY, T.STATUS, A.REPLY, None),
    *_each((S.CLOSED, S.IDLE), T.CANCEL, A.NOTHING_TO_CANCEL, None),
    *_each((S.WORKING, S.ASKING), T.CANCEL, A.STOP_RUN, S.IDLE),
    *_each(_EVERY, T.NEW, A.CLOSE, S.CLOSED),
    Transition(S.WORKING, T.STOP, "asker", A.STOP_RUN, S.IDLE),
    Transition(S.WORKING, T.STOP, "not asker", A.REFUSE, None),
    *_each((S.CLOSED, S.IDLE, S.ASKING), T.STOP, A.NOTHING_TO_CANCEL, None),
    Transition(S.ASKING, T.EXPIRED, "current", A.EXPIRE, S.WORKING),
    Transition(S.ASKING, T.EXPIRED, "not current", A.IGNORE, None),
    *_each((S.CLOSED, S.IDLE, S.WORKING), T.EXPIRED, A.IGNORE, None),
    Transition(S.ASKING, T.REMIND, "current", A.REMIND, None),
    Transition(S.ASKING, T.REMIND, "not current", A.IGNORE, None),
    *_each((S.CLOSED, S.IDLE, S.WORKING), T.REMIND, A.IGNORE, None),
    Transition(S.WORKING, T.RESUME, "idle_run", A.RESUME_RUN, None),
    Transition(S.WORKING, T.RESUME, "not idle_run", A.IGNORE, None),
    *_each((S.CLOSED, S.IDLE, S.ASKING), T.RESUME, A.IGNORE, None),
    Transition(S.ASKING, T.UNDELIVERABLE, "current", A.ABANDON, S.IDLE),
    Transition(S.ASKING, T.UNDELIVERABLE, "not current", A.IGNORE, None),
    *_each((S.CLOSED, S.IDLE, S.WORKING), T.UNDELIVERABLE, A.IGNORE, None),
    Transition(S.WORKING, T.PAUSED, None, A.STORE_PAUSE, S.ASKING),
    Transition(S.WORKING, T.FINISHED, None, A.STORE_ANSWER, S.IDLE),
    Transition(S.WORKING, T.FAILED, None, A.STORE_FAILURE, S.IDLE),
    Transition(S.WORKING, T.CRASHED, None, A.STORE_CRASH, S.IDLE),
)


def decide(state: ChatState, trigger: Trigger, facts: Facts) -> Transition:
    """The one transition for `state` on `trigger` whose guard holds; raises UndefinedTransition."""
    for transition in TRANSITIONS:
        if transition.source is state and transition.trigger is trigger and facts.holds(transition.guard):
            return transition
    raise UndefinedTransition(state, trigger)


def diagram() -> str:
    """The machine as a Mermaid state diagram (the README shows it; a test keeps them equal)."""
    lines = ["stateDiagram-v2", "    [*] --> closed"]
    seen: set[tuple[str, str, str]] = set()
    for t in TRANSITIONS:
        if t.action is A.IGNORE or t.target is None or t.target is t.source:
            continue
        label = t.trigger.value + (f" [{t.guard}]" if t.guard else "")
        edge = (t.source.value, t.target.value, label)
        if edge not in seen:
            seen.add(edge)
            lines.append(f"    {t.source.value} --> {t.target.value}: {label}")
    return "\n".join(lines)
