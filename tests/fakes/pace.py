"""The platforms' clock in the fakes: how long one of Telegram's or Slack's seconds lasts here.

The fakes read BOT_PLATFORM_TIME_SCALE, the setting the bot paces itself by (bot/settings/delivery.py),
so a bot and the fakes it talks to in one test run on the same clock: at 0.05 a chat's one
message a second is one every 50 ms, enforced as strictly as the real limit is (tests/conftest.py
sets the tests' scale; tests marked `real_pace` run at 1.0). `Retry-After` and `retry_after`
stay whole platform seconds on the wire, as the real services send them.
"""

from __future__ import annotations

import math
import os

ENV = "BOT_PLATFORM_TIME_SCALE"


def time_scale(value: float | None = None) -> float:
    """`value`, or the environment's scale (1.0 when unset); above 0 either way."""
    scale = float(os.environ.get(ENV) or 1.0) if value is None else float(value)
    if not scale > 0:
        raise ValueError(f"{ENV} must be above 0, not {scale}")
    return scale


def passed_on() -> dict[str, str]:
    """The scale for the environment of a bot process a test starts (the fakes it talks to read it too)."""
    return {ENV: os.environ[ENV]} if ENV in os.environ else {}


def platform_seconds(ours: float, scale: float) -> int:
    """A wait on our clock as the whole platform seconds a 429 names (rounded up, at least 1)."""
    return max(1, math.ceil(ours / scale - 1e-9))
