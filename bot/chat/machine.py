"""The chat's state machine: its states, its triggers, and every transition, written once.

A chat is in one state, stored with its session (no open session reads as `closed`). Its own
task (bot.chat.actor.ChatActor) takes one trigger at a time — an inbox row (a message, a command,
or an event another part of the bot wrote: a deadline, a restart, a delivery outcome) or an
outcome of the run it started — asks `decide` what to do, does it, and stores the new state
in the same transaction as the action's data. A pair (state, trigger) not in the table is a bug
and raises; the pairs that are legitimately nothing to do say so (`ignore`).

Guards are named facts the task reads from the store before deciding:

- `answers`: the message binds to one of the waiting questions (bot.chat.addressing: it arrived
  after the question was posted — the inbox watermark — and its sender may answer it: the
  traveller it is addressed to, or in a group the person asked or a reply to it); a named
  answer must name a waiting question.
- `current`: an event (expiry, reminder, undeliverable question) is about a question still waiting;
  a Stop names no run (a typed /stop) or the run working now (a button names the run whose
  progress message carries it: one left from a run that ended stops nothing, and says so).
- `last`: that question is the only one still waiting (a turn can ask several people at once;
  the run resumes when the last of them is answered or expired).
- `idle_run`: no run of this chat is alive in this process.
- `asker`: a Stop or /cancel comes from the person the run works for (anyone may stop it outside
  groups). One rule for every way of stopping: the Stop button, /stop, /cancel, and the word
  ("stop", "取消") a surface reads as /cancel.
- `signoff`: the run's answer is a team plan and the chat has approvers: it waits for sign-off.
- `signable`: the chat's surface can carry a sign-off: it knows who presses (a platform id an
  approver list can name) and shows the approvers Approve / Reject buttons: Telegram and Slack.
  The web chat cannot: its only user id is the browser's session id, which the client chooses and
  anyone holding it presents, so no web user can be told to be an approver (nor told apart from
  one). The console is one person at a terminal. There a team plan is final, said so, and
  `/trip approver` sets nobody.
- `approver`: the person deciding (an Approve / Reject press) is one of the sign-off's approvers.
- `reason`: the message comes from the approver who pressed Reject: it is the reason, and the
  plan is made again with it.
- `entitled`: the sender may make the change their message asks for (bot.chat.rights). In a
  private chat (one person) and in a conversation not yet open, anyone. In a group or a team
  thread: the person who asked for the trip, and the approvers once they rejected its plan, may
  change anything (destination, dates, budget); a traveller may change their own legs (home city,
  seat class, arrival time); a message the requester accepted as a suggestion counts as theirs.
  Anyone else's message is kept as a suggestion the requester is asked to confirm (Yes / No),
  never applied silently. For a Yes / No press on a suggestion: the presser may decide it (the
  requester, or an approver after a Reject).

For a suggestion's Yes / No, `current` says the press is about a suggestion still waiting in the
open conversation.

For a sign-off's decision, reminder and deadline, `current` says the event or press is about
the sign-off still open.
A guard is a fact, its negation ("not answers"), or a conjunction of those ("answers and not last").
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ChatState(StrEnum):
    CLOSED = "closed"  # no open conversation: the next message opens one
    IDLE = "idle"  # a conversation with no run: the next message starts one
    WORKING = "working"  # a run is working (or is to be re-driven after a restart)
    ASKING = "asking"  # the run is paused on a question, stored; nothing is held in memory
    SIGNOFF = "signoff"  # a finished team plan waits for an approver's decision, stored


class Trigger(StrEnum):
    MESSAGE = "message"  # a person's message
    NAMED_ANSWER = "named answer"  # an answer that names its question (an option button, the web's answer)
    LOCATION = "location"  # a shared location with no text
    HELP = "/help"
    STATUS = "/status"
    CANCEL = "/cancel"
    NEW = "/new"
    STOP = "stop"  # the Stop button (or /stop): end the run now, keep what it wrote
    TRIP = "/trip"  # /trip approver @who: a Slack channel's approvers
    APPROVE = "approve"  # an approver's button on a plan waiting for sign-off
    REJECT = "reject"
    REMINDER = "reminder"  # the deadline watcher: a sign-off's one reminder is due
    OVERDUE = "overdue"  # the deadline watcher: a sign-off's deadline passed
    EXPIRED = "expired"  # the deadline watcher: a question's deadline passed
    REMIND = "remind"  # the deadline watcher: a question waited BOT_REMIND_AFTER_S unanswered
    RESUME = "resume"  # the start-up recovery: a run was interrupted by the restart
    UNDELIVERABLE = "undeliverable"  # the delivery worker gave up posting a question
    PAUSED = "paused"  # the run asked a question
    FINISHED = "finished"  # the run made its answer
    FAILED = "failed"  # the run ended on a model or agent fault
    CRASHED = "crashed"  # the run raised (a bug): its open calls are closed
    ACCEPT = "accept"  # Yes on a suggestion: the suggester's words become a change to the trip
    DECLINE = "decline"  # No on a suggestion: it stays on record, nothing changes


class Action(StrEnum):
    START_RUN = "start_run"
    STEER = "steer"  # given to the run at its next step as a user message
    ANSWER = "answer"  # stored as the question's tool result; the run resumes
    ANSWER_ONE = "answer_one"  # stored as its question's tool result; other questions still wait
    HOLD = "hold"  # kept for the run's next step once the question is answered
    STALE = "stale"  # an answer to a question no longer waiting (a Stop of a run that ended): said so, nothing changes
    REMEMBER_LOCATION = "remember_location"
    REPLY = "reply"  # /help, /status: say something, change nothing
    NOTHING_TO_CANCEL = "nothing_to_cancel"  # also a Stop with nothing being written
    REFUSE = "refuse"  # a Stop from someone the run is not for: said so, nothing changes
    STOP_RUN = "stop_run"  # cancel the run, close its open calls and its question
    CLOSE = "close"  # /new: stop what runs and close the conversation
    EXPIRE = "expire"  # the question's tool result says nobody answered; the run resumes
    REMIND = "remind"  # one short reminder of the question, queued as the reminder is marked sent
    EXPIRE_ONE = "expire_one"  # the same for one question of several; the others still wait
    RESUME_RUN = "resume_run"
    ABANDON = "abandon"  # the question cannot be posted: the run stops, the failure is on record
    STORE_PAUSE = "store_pause"  # the pause and the question's outbox row, one transaction
    STORE_ANSWER = "store_answer"  # the run's end and the answer's outbox row, one transaction
    STORE_FAILURE = "store_failure"  # the run's end and the error notice, one transaction
    STORE_CRASH = "store_crash"
    STORE_FOR_SIGNOFF = "store_for_signoff"  # the run's end, the answer and the sign-off request, one transaction
    APPROVE = "approve"  # the decision stored and shown (with the exports); the chat is idle
    ASK_REASON = "ask_reason"  # Reject: stored as rejecting, the approver is asked why
    REPLAN = "replan"  # the reason: the rejection stored with a new turn that plans again
    REFUSE_DECISION = "refuse_decision"  # a press by someone who is not an approver: said so, nothing changes
    REMIND_SIGNOFF = "remind_signoff"  # the sign-off's one reminder, queued as it is marked sent
    EXPIRE_SIGNOFF = "expire_signoff"  # nobody decided in time: stored and said; the plan stands unapproved
    SET_APPROVER = "set_approver"
    STORE_UNSIGNED = "store_unsigned"  # a team plan with approvers where nobody can sign: final, with its files and a note why
    NO_APPROVERS_HERE = "no_approvers_here"  # /trip approver where nobody can sign: said so, nothing changes
    SUGGEST = "suggest"  # kept as a suggestion (stored); the requester is asked Yes / No; nothing changes yet
    ADOPT = "adopt"  # the suggestion accepted: its words go to the inbox as a change the requester made
    DECLINE = "decline"  # the suggestion declined: stored and said; nothing changes
    REFUSE_CHOICE = "refuse_choice"  # a Yes / No by someone who may not decide it: said so, nothing changes
    IGNORE = "ignore"


@dataclass(frozen=True, slots=True)
class Transition:
    source: ChatState
    trigger: Trigger
    guard: str | None  # facts that must hold ("answers", "not answers", "answers and last"); None: always
    action: Action
    target: ChatState | None  # None: the state stays as it is


@dataclass(frozen=True, slots=True)
class Facts:
    answers: bool = False
    current: bool = False
    idle_run: bool = True
    asker: bool = False
    last: bool = True
    signoff: bool = False
    approver: bool = False
    reason: bool = False
    entitled: bool = True  # a private chat's one person may change anything
    signable: bool = True  # Telegram and Slack carry a sign-off; the web chat and the console do not

    def holds(self, guard: str | None) -> bool:
        if guard is None:
            return True
        return all(self._one(part) for part in guard.split(" and "))

    def _one(self, fact: str) -> bool:
        negate = fact.startswith("not ")
        value = bool(getattr(self, fact.removeprefix("not ")))
        return value != negate


class UndefinedTransition(Exception):
    def __init__(self, state: ChatState, trigger: Trigger) -> None:
        super().__init__(f"no transition from {state} on {trigger}")
        self.state = state
        self.trigger = trigger


S, T, A = ChatState, Trigger, Action
_EVERY = tuple(ChatState)
_NOT_SIGNOFF = (S.CLOSED, S.IDLE, S.WORKING, S.ASKING)


def _each(states: tuple[ChatState, ...], trigger: Trigger, action: Action, target: ChatState | None,
          guard: str | None = None) -> list[Transition]:
    return [Transition(s, trigger, guard, action, target) for s in states]


TRANSITIONS: tuple[Transition, ...] = (
    # who may change what: a message from someone who may not make its change is a suggestion
    Transition(S.CLOSED, T.MESSAGE, None, A.START_RUN, S.WORKING),  # it opens a conversation: theirs
    Transition(S.IDLE, T.MESSAGE, "entitled", A.START_RUN, S.WORKING),
    Transition(S.WORKING, T.MESSAGE, "entitled", A.STEER, None),
    *_each((S.IDLE, S.WORKING), T.MESSAGE, A.SUGGEST, None, "not entitled"),
    Transition(S.ASKING, T.MESSAGE, "answers and last", A.ANSWER, S.WORKING),
    Transition(S.ASKING, T.MESSAGE, "answers and not last", A.ANSWER_ONE, None),
    Transition(S.ASKING, T.MESSAGE, "not answers and entitled", A.HOLD, None),
    Transition(S.ASKING, T.MESSAGE, "not answers and not entitled", A.SUGGEST, None),
    *[t for trig, act in ((T.ACCEPT, A.ADOPT), (T.DECLINE, A.DECLINE)) for t in (
        *_each(_EVERY, trig, act, None, "current and entitled"),
        *_each(_EVERY, trig, A.REFUSE_CHOICE, None, "current and not entitled"),
        *_each(_EVERY, trig, A.STALE, None, "not current"))],
    Transition(S.ASKING, T.NAMED_ANSWER, "answers and last", A.ANSWER, S.WORKING),
    Transition(S.ASKING, T.NAMED_ANSWER, "answers and not last", A.ANSWER_ONE, None),
    Transition(S.ASKING, T.NAMED_ANSWER, "not answers", A.STALE, None),
    *_each((S.CLOSED, S.IDLE, S.WORKING, S.SIGNOFF), T.NAMED_ANSWER, A.STALE, None),
    *_each((S.CLOSED, S.IDLE), T.LOCATION, A.REMEMBER_LOCATION, S.IDLE),
    *_each((S.WORKING, S.ASKING, S.SIGNOFF), T.LOCATION, A.REMEMBER_LOCATION, None),
    *_each(_EVERY, T.HELP, A.REPLY, None),
    *_each(_EVERY, T.STATUS, A.REPLY, None),
    # approvers and sign-off only where an approver can be known and press (the `signable` fact)
    *_each(_EVERY, T.TRIP, A.SET_APPROVER, None, "signable"),
    *_each(_EVERY, T.TRIP, A.NO_APPROVERS_HERE, None, "not signable"),
    *_each((S.CLOSED, S.IDLE), T.CANCEL, A.NOTHING_TO_CANCEL, None),
    *_each((S.WORKING, S.ASKING, S.SIGNOFF), T.CANCEL, A.STOP_RUN, S.IDLE, "asker"),
    *_each((S.WORKING, S.ASKING, S.SIGNOFF), T.CANCEL, A.REFUSE, None, "not asker"),
    *_each(_EVERY, T.NEW, A.CLOSE, S.CLOSED),
    # a Stop (button or /stop) ends what /cancel ends, by the same rule; a button left on an
    # earlier run's progress message names that run, which has ended: stale
    *_each((S.WORKING, S.ASKING), T.STOP, A.STOP_RUN, S.IDLE, "current and asker"),
    *_each((S.WORKING, S.ASKING), T.STOP, A.REFUSE, None, "current and not asker"),
    *_each((S.WORKING, S.ASKING), T.STOP, A.STALE, None, "not current"),
    *_each((S.CLOSED, S.IDLE, S.SIGNOFF), T.STOP, A.NOTHING_TO_CANCEL, None, "current"),
    *_each((S.CLOSED, S.IDLE, S.SIGNOFF), T.STOP, A.STALE, None, "not current"),
    Transition(S.ASKING, T.REMIND, "current", A.REMIND, None),
    Transition(S.ASKING, T.REMIND, "not current", A.IGNORE, None),
    *_each((S.CLOSED, S.IDLE, S.WORKING, S.SIGNOFF), T.REMIND, A.IGNORE, None),
    # a team plan waiting for sign-off: an approver decides; a rejection's reason plans again;
    # any other message that may change the trip is a new turn (the plan it changes is no longer
    # the one to sign)
    Transition(S.SIGNOFF, T.MESSAGE, "reason", A.REPLAN, S.WORKING),
    Transition(S.SIGNOFF, T.MESSAGE, "not reason and entitled", A.START_RUN, S.WORKING),
    Transition(S.SIGNOFF, T.MESSAGE, "not reason and not entitled", A.SUGGEST, None),
    Transition(S.SIGNOFF, T.APPROVE, "current and approver", A.APPROVE, S.IDLE),
    Transition(S.SIGNOFF, T.REJECT, "current and approver", A.ASK_REASON, None),
    *[Transition(S.SIGNOFF, t, "current and not approver", A.REFUSE_DECISION, None) for t in (T.APPROVE, T.REJECT)],
    *[Transition(S.SIGNOFF, t, "not current", A.STALE, None) for t in (T.APPROVE, T.REJECT)],
    *[t for trig in (T.APPROVE, T.REJECT) for t in _each(_NOT_SIGNOFF, trig, A.STALE, None)],
    Transition(S.SIGNOFF, T.REMINDER, "current", A.REMIND_SIGNOFF, None),
    Transition(S.SIGNOFF, T.OVERDUE, "current", A.EXPIRE_SIGNOFF, S.IDLE),
    *[Transition(S.SIGNOFF, t, "not current", A.IGNORE, None) for t in (T.REMINDER, T.OVERDUE)],
    *[t for trig in (T.REMINDER, T.OVERDUE) for t in _each(_NOT_SIGNOFF, trig, A.IGNORE, None)],
    Transition(S.ASKING, T.EXPIRED, "current and last", A.EXPIRE, S.WORKING),
    Transition(S.ASKING, T.EXPIRED, "current and not last", A.EXPIRE_ONE, None),
    Transition(S.ASKING, T.EXPIRED, "not current", A.IGNORE, None),
    *_each((S.CLOSED, S.IDLE, S.WORKING, S.SIGNOFF), T.EXPIRED, A.IGNORE, None),
    Transition(S.WORKING, T.RESUME, "idle_run", A.RESUME_RUN, None),
    Transition(S.WORKING, T.RESUME, "not idle_run", A.IGNORE, None),
    *_each((S.CLOSED, S.IDLE, S.ASKING, S.SIGNOFF), T.RESUME, A.IGNORE, None),
    Transition(S.ASKING, T.UNDELIVERABLE, "current", A.ABANDON, S.IDLE),
    Transition(S.ASKING, T.UNDELIVERABLE, "not current", A.IGNORE, None),
    *_each((S.CLOSED, S.IDLE, S.WORKING, S.SIGNOFF), T.UNDELIVERABLE, A.IGNORE, None),
    Transition(S.WORKING, T.PAUSED, None, A.STORE_PAUSE, S.ASKING),
    Transition(S.WORKING, T.FINISHED, "not signoff", A.STORE_ANSWER, S.IDLE),
    Transition(S.WORKING, T.FINISHED, "signoff and signable", A.STORE_FOR_SIGNOFF, S.SIGNOFF),
    Transition(S.WORKING, T.FINISHED, "signoff and not signable", A.STORE_UNSIGNED, S.IDLE),
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
