"""The chat's transition table: total where it must be, deterministic, drawn in the README."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from bot.chat_machine import (
    TRANSITIONS,
    Action,
    ChatState,
    Facts,
    Trigger,
    UndefinedTransition,
    decide,
    diagram,
)

README = Path(__file__).resolve().parent.parent / "README.md"
ALL_FACTS = [Facts(a, c, i, k) for a, c, i, k in itertools.product([False, True], repeat=4)]
PERSON = (Trigger.MESSAGE, Trigger.NAMED_ANSWER, Trigger.LOCATION, Trigger.HELP, Trigger.STATUS, Trigger.CANCEL,
          Trigger.NEW, Trigger.STOP, Trigger.EXPIRED, Trigger.REMIND, Trigger.RESUME, Trigger.UNDELIVERABLE)
RUN_OUTCOMES = (Trigger.PAUSED, Trigger.FINISHED, Trigger.FAILED, Trigger.CRASHED)


def test_every_inbox_trigger_has_exactly_one_transition_in_every_state_whatever_the_facts():
    for state, trigger, facts in itertools.product(ChatState, PERSON, ALL_FACTS):
        matches = [t for t in TRANSITIONS if t.source is state and t.trigger is trigger and facts.holds(t.guard)]
        assert len(matches) == 1, (state, trigger, facts, matches)


def test_run_outcomes_are_defined_only_while_working():
    for state, trigger in itertools.product(ChatState, RUN_OUTCOMES):
        if state is ChatState.WORKING:
            assert decide(state, trigger, Facts()).target in (ChatState.ASKING, ChatState.IDLE)
        else:
            with pytest.raises(UndefinedTransition):
                decide(state, trigger, Facts())


def test_answers_bind_only_when_they_answer_and_runs_start_only_without_one():
    assert decide(ChatState.ASKING, Trigger.MESSAGE, Facts(answers=True)).action is Action.ANSWER
    assert decide(ChatState.ASKING, Trigger.MESSAGE, Facts(answers=False)).action is Action.HOLD
    assert decide(ChatState.WORKING, Trigger.MESSAGE, Facts()).action is Action.STEER
    assert decide(ChatState.IDLE, Trigger.NAMED_ANSWER, Facts(answers=True)).action is Action.STALE
    assert decide(ChatState.WORKING, Trigger.RESUME, Facts(idle_run=False)).action is Action.IGNORE
    assert decide(ChatState.ASKING, Trigger.EXPIRED, Facts(current=False)).action is Action.IGNORE
    assert decide(ChatState.WORKING, Trigger.STOP, Facts(asker=True)).target is ChatState.IDLE
    assert decide(ChatState.WORKING, Trigger.STOP, Facts(asker=False)).action is Action.REFUSE
    for state in (ChatState.CLOSED, ChatState.IDLE, ChatState.ASKING):  # nothing is being written
        assert decide(state, Trigger.STOP, Facts(asker=True)).action is Action.NOTHING_TO_CANCEL
    assert decide(ChatState.ASKING, Trigger.REMIND, Facts(current=True)).target is None
    assert decide(ChatState.ASKING, Trigger.REMIND, Facts(current=False)).action is Action.IGNORE
    starts = {t.source for t in TRANSITIONS if t.action in (Action.START_RUN, Action.ANSWER, Action.EXPIRE)}
    assert ChatState.WORKING not in starts  # a run starts only where none works


def test_the_readme_draws_the_table():
    assert diagram() in README.read_text(encoding="utf-8")
