"""The chat's transition table: total where it must be, deterministic, drawn in the docs."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest

from bot.chat.machine import (
    TRANSITIONS,
    Action,
    ChatState,
    Facts,
    Trigger,
    UndefinedTransition,
    decide,
    diagram,
)

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
ALL_FACTS = [Facts(*values) for values in itertools.product([False, True], repeat=len(dataclasses.fields(Facts)))]
PERSON = (Trigger.MESSAGE, Trigger.NAMED_ANSWER, Trigger.LOCATION, Trigger.HELP, Trigger.STATUS, Trigger.CANCEL,
          Trigger.NEW, Trigger.EXPIRED, Trigger.RESUME, Trigger.UNDELIVERABLE, Trigger.TRIP, Trigger.APPROVE,
          Trigger.REJECT, Trigger.REMINDER, Trigger.OVERDUE,
          Trigger.STOP, Trigger.REMIND, Trigger.ACCEPT, Trigger.DECLINE)
RUN_OUTCOMES = (Trigger.PAUSED, Trigger.FINISHED, Trigger.FAILED, Trigger.CRASHED)


def test_every_inbox_trigger_has_exactly_one_transition_in_every_state_whatever_the_facts():
    for state, trigger, facts in itertools.product(ChatState, PERSON, ALL_FACTS):
        matches = [t for t in TRANSITIONS if t.source is state and t.trigger is trigger and facts.holds(t.guard)]
        assert len(matches) == 1, (state, trigger, facts, matches)


def test_run_outcomes_are_defined_only_while_working():
    for state, trigger in itertools.product(ChatState, RUN_OUTCOMES):
        if state is ChatState.WORKING:
            assert decide(state, trigger, Facts()).target in (ChatState.ASKING, ChatState.IDLE)
            assert decide(state, trigger, Facts(signoff=True)).target in (ChatState.ASKING, ChatState.IDLE,
                                                                         ChatState.SIGNOFF)
        else:
            with pytest.raises(UndefinedTransition):
                decide(state, trigger, Facts())


def test_answers_bind_only_when_they_answer_and_runs_start_only_without_one():
    assert decide(ChatState.ASKING, Trigger.MESSAGE, Facts(answers=True)).action is Action.ANSWER
    assert decide(ChatState.ASKING, Trigger.MESSAGE, Facts(answers=False)).action is Action.HOLD
    # a team trip's questions: an answer that leaves others waiting keeps the chat asking
    one = decide(ChatState.ASKING, Trigger.MESSAGE, Facts(answers=True, last=False))
    assert (one.action, one.target) == (Action.ANSWER_ONE, None)
    expired = decide(ChatState.ASKING, Trigger.EXPIRED, Facts(current=True, last=False))
    assert (expired.action, expired.target) == (Action.EXPIRE_ONE, None)
    assert decide(ChatState.ASKING, Trigger.EXPIRED, Facts(current=True, last=True)).target is ChatState.WORKING
    assert decide(ChatState.WORKING, Trigger.MESSAGE, Facts()).action is Action.STEER
    assert decide(ChatState.IDLE, Trigger.NAMED_ANSWER, Facts(answers=True)).action is Action.STALE
    assert decide(ChatState.WORKING, Trigger.RESUME, Facts(idle_run=False)).action is Action.IGNORE
    assert decide(ChatState.ASKING, Trigger.EXPIRED, Facts(current=False)).action is Action.IGNORE
    assert decide(ChatState.WORKING, Trigger.STOP, Facts(current=True, asker=True)).target is ChatState.IDLE
    assert decide(ChatState.WORKING, Trigger.STOP, Facts(current=True, asker=False)).action is Action.REFUSE
    for state in (ChatState.CLOSED, ChatState.IDLE):  # nothing is being written
        assert decide(state, Trigger.STOP, Facts(current=True, asker=True)).action is Action.NOTHING_TO_CANCEL
    # one rule for every way of stopping: the button or /stop, and /cancel (or the word), in a group
    for state in (ChatState.WORKING, ChatState.ASKING):
        for trigger in (Trigger.STOP, Trigger.CANCEL):
            assert decide(state, trigger, Facts(current=True, asker=True)).target is ChatState.IDLE
            refused = decide(state, trigger, Facts(current=True, asker=False))
            assert (refused.action, refused.target) == (Action.REFUSE, None)
    assert decide(ChatState.SIGNOFF, Trigger.CANCEL, Facts(asker=False)).action is Action.REFUSE
    # a Stop button of a run that ended (not the one working now) stops nothing, and says so
    for state in (ChatState.CLOSED, ChatState.IDLE, ChatState.WORKING, ChatState.SIGNOFF):
        stale = decide(state, Trigger.STOP, Facts(current=False, asker=True))
        assert (stale.action, stale.target) == (Action.STALE, None)
    assert decide(ChatState.ASKING, Trigger.REMIND, Facts(current=True)).target is None
    assert decide(ChatState.ASKING, Trigger.REMIND, Facts(current=False)).action is Action.IGNORE
    # sign-off: only an approver decides; a rejection's reason plans again; a late press is stale
    assert decide(ChatState.SIGNOFF, Trigger.APPROVE, Facts(current=True, approver=True)).target is ChatState.IDLE
    assert decide(ChatState.SIGNOFF, Trigger.APPROVE, Facts(current=True)).action is Action.REFUSE_DECISION
    assert decide(ChatState.SIGNOFF, Trigger.REJECT, Facts(current=True, approver=True)).action is Action.ASK_REASON
    assert decide(ChatState.SIGNOFF, Trigger.MESSAGE, Facts(reason=True)).action is Action.REPLAN
    assert decide(ChatState.IDLE, Trigger.APPROVE, Facts(current=True, approver=True)).action is Action.STALE
    assert decide(ChatState.WORKING, Trigger.FINISHED, Facts(signoff=True)).target is ChatState.SIGNOFF
    starts = {t.source for t in TRANSITIONS if t.action in (Action.START_RUN, Action.ANSWER, Action.EXPIRE)}
    assert ChatState.WORKING not in starts  # a run starts only where none works


def test_a_surface_that_cannot_carry_a_sign_off_never_enters_one():
    """The web chat and the console cannot tell an approver from anyone else: a team plan there is
    final (with its files and a note), and `/trip approver` sets nobody, in every state."""
    final = decide(ChatState.WORKING, Trigger.FINISHED, Facts(signoff=True, signable=False))
    assert (final.action, final.target) == (Action.STORE_UNSIGNED, ChatState.IDLE)
    assert decide(ChatState.WORKING, Trigger.FINISHED, Facts(signable=False)).action is Action.STORE_ANSWER
    for state in ChatState:
        assert decide(state, Trigger.TRIP, Facts(signable=False)).action is Action.NO_APPROVERS_HERE
        assert decide(state, Trigger.TRIP, Facts(signable=True)).action is Action.SET_APPROVER
    assert not any(t.target is ChatState.SIGNOFF and Facts(signoff=True, signable=False).holds(t.guard)
                   for t in TRANSITIONS)


def test_the_docs_draw_the_table():
    """The diagram as the table draws it is in the docs: the README, or a page under docs/ (the
    who-may-change-what rules added guards the README's copy is waiting to be given)."""
    pages = [README, *sorted((ROOT / "docs").rglob("*.md"))]
    assert any(diagram() in page.read_text(encoding="utf-8") for page in pages)
