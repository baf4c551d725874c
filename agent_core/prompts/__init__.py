"""System prompts, built when a run starts (never at import time: they carry today's date)."""

from agent_core.prompts.travel import RunClock, build_system_prompt, read_run_clock

__all__ = ["RunClock", "build_system_prompt", "read_run_clock"]
