"""The retry policy of a model call: tenacity's `AsyncRetrying`, one long-lived object per client.

The policy: transient faults only (agent_core.llm_faults.is_transient), `max_retries` more
attempts, the server's Retry-After (capped) or our backoff in between. A retry object made per
call is a reference cycle (it holds bound methods of itself), and so is an exception stored with
the traceback of the frame that holds it: every model call then left garbage that only the
collector's rare full passes free, and a thousand waiting conversations grew the process. So an
attempt returns its failure as a value (never raises into tenacity), and the one retry object
lives as long as the client: a call leaves nothing behind (tests/test_memory_cycles.py). The
SDK's own retries are off; docs/decisions/tenacity-retries.md has the measurement that chose
tenacity over them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import openai
from tenacity import AsyncRetrying, RetryCallState, retry_if_result

from agent_core.llm_config import LLMConfig
from agent_core.llm_faults import is_transient, retry_delay


@dataclass(frozen=True, slots=True)
class GaveUp:
    """How a call through the retry policy ended without a response: the last error, and how
    many attempts were made."""

    error: openai.APIError
    attempts: int


def model_retry_policy(config: LLMConfig) -> AsyncRetrying:
    """The one retry object of a client: attempts return their failure as a value (an
    openai.APIError); transient ones are retried up to `max_retries` times, with the server's
    Retry-After (capped) or exponential backoff with jitter in between. Every way of stopping
    ends in a GaveUp. Its callbacks close over the config only: no cycle back to the client."""

    def failed(outcome: object) -> bool:
        return isinstance(outcome, openai.APIError)

    def give_up(state: RetryCallState) -> bool:
        error = state.outcome.result() if state.outcome is not None else None
        return state.attempt_number > config.max_retries or not is_transient(error)  # type: ignore[arg-type]

    def wait(state: RetryCallState) -> float:
        error = state.outcome.result() if state.outcome is not None else None
        return retry_delay(state.attempt_number, error, config.backoff_base_s, config.backoff_cap_s,  # type: ignore[arg-type]
                           config.retry_after_cap_s)

    def gave_up(state: RetryCallState) -> GaveUp:
        assert state.outcome is not None
        return GaveUp(state.outcome.result(), state.attempt_number)

    return AsyncRetrying(retry=retry_if_result(failed), stop=give_up, wait=wait, retry_error_callback=gave_up,
                         sleep=asyncio.sleep)
