"""Errors of the agent framework.

One root, typed fields::

    AgentCoreError
     ├── LLMError                      the model could not give a reply
     │    ├── TokenLimitExceeded       the request would not fit the context window (never retried)
     │    ├── LLMRequestRejected       the endpoint refused the request (400/401/403/404/422)
     │    ├── LLMUnavailable           transient faults outlived the retries (down, 429, 5xx, timeout)
     │    └── LLMStreamBroken          a streamed reply broke after its first chunk (never retried)
     └── AgentError                    the run itself went wrong
          ├── StepLimitReached         max_steps used up without an answer
          └── LoopDetected             the model repeated the same call

The ask_human pause is *not* here: it is a signal (tools.signals.HumanInputRequired).
"""

from __future__ import annotations


class AgentCoreError(Exception):
    """Root of every error raised by agent_core."""


class LLMError(AgentCoreError):
    pass


class TokenLimitExceeded(LLMError):
    def __init__(self, needed: int, limit: int) -> None:
        super().__init__(f"request needs {needed} tokens, the context window holds {limit}")
        self.needed = needed
        self.limit = limit


class LLMRequestRejected(LLMError):
    def __init__(self, status_code: int, detail: str) -> None:
        super().__init__(f"model endpoint rejected the request ({status_code}): {detail}")
        self.status_code = status_code
        self.detail = detail


class LLMUnavailable(LLMError):
    def __init__(self, detail: str, attempts: int, status_code: int | None = None) -> None:
        super().__init__(f"model endpoint unavailable after {attempts} attempts: {detail}")
        self.detail = detail
        self.attempts = attempts
        self.status_code = status_code


class LLMStreamBroken(LLMError):
    """The stream failed after its first chunk (the person may have seen part of it), or ended
    unfinished or unreadable: not retried, as a second reply would not continue the first."""

    def __init__(self, detail: str, shown_chars: int) -> None:
        super().__init__(f"the model's streamed reply broke off: {detail}")
        self.detail = detail
        self.shown_chars = shown_chars


class AgentError(AgentCoreError):
    pass


class StepLimitReached(AgentError):
    def __init__(self, max_steps: int) -> None:
        super().__init__(f"no answer after {max_steps} steps")
        self.max_steps = max_steps


class LoopDetected(AgentError):
    def __init__(self, tool_name: str, repeats: int) -> None:
        super().__init__(f"the model called {tool_name} with the same arguments {repeats} times")
        self.tool_name = tool_name
        self.repeats = repeats
