"""ReActAgent: a step is think, then act."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator

from agent_core.agents.base import BaseAgent
from agent_core.events import Event
from agent_core.journal import RunJournal


class ReActAgent(BaseAgent):
    async def step(self, journal: RunJournal) -> AsyncIterator[Event]:
        if not self.has_pending_actions():
            async for event in self.think(journal):
                yield event
        if self.state is not self.state.RUNNING or not self.has_pending_actions():
            return
        async for event in self.act(journal):
            yield event

    @abstractmethod
    def has_pending_actions(self) -> bool:
        """True when the latest decision still has actions to run (e.g. after a resume)."""

    @abstractmethod
    def think(self, journal: RunJournal) -> AsyncIterator[Event]:
        """Decide the next actions (one model call)."""

    @abstractmethod
    def act(self, journal: RunJournal) -> AsyncIterator[Event]:
        """Run the pending actions and record their results."""
