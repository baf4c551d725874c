"""The offline planner on the sandbox data, for its own tests and the team-trip tests: one
gazetteer, planner and tool set per module (loading the gazetteer is the costly part)."""

from __future__ import annotations

import pytest

from agent_core.offline import OfflinePlanner
from agent_core.travel_agent import travel_toolset
from tools.collection import ToolCollection
from tools.travel import Gazetteer
from tools.travel.factory import build_sandbox_tools


@pytest.fixture(scope="module")
def gazetteer() -> Gazetteer:
    return Gazetteer.load()


@pytest.fixture(scope="module")
def planner(gazetteer: Gazetteer) -> OfflinePlanner:
    return OfflinePlanner(gazetteer)


@pytest.fixture(scope="module")
def tools(gazetteer: Gazetteer) -> ToolCollection:
    """The sandbox travel tools, built the way bot.py builds them."""
    return travel_toolset(build_sandbox_tools(gazetteer))
