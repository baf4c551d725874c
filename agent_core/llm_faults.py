"""How the LLM client reads a failed call: transient or not, how long the server asks us to
wait, whether a 400 means the context window overflowed, and the typed error a call that gave up
raises. Pure functions over openai's exception types, so the retry loop in llm.py stays a few lines."""

from __future__ import annotations

import email.utils
import random
import re
import time

import openai

from agent_core.errors import LLMError, LLMRequestRejected, LLMUnavailable, TokenLimitExceeded

_CONTEXT_NUMBERS = re.compile(r"maximum context length is (\d+).*?(\d+) tokens", re.DOTALL)


def typed_error(exc: openai.APIError, needed: int, window: int, attempts: int) -> LLMError:
    """The agent_core error a call that gave up on `exc` raises. `needed`: our count of the
    request's tokens; `window`: the model's context window."""
    if isinstance(exc, openai.APIStatusError):
        if is_context_overflow(exc):
            needed_by_server, limit_by_server = context_overflow_numbers(exc) or (needed, window)
            return TokenLimitExceeded(needed_by_server, limit_by_server)
        if is_transient(exc):
            return LLMUnavailable(error_detail(exc), attempts, exc.status_code)
        return LLMRequestRejected(exc.status_code, error_detail(exc))
    # connection errors, timeouts, unreadable responses
    detail = f"{type(exc).__name__}: {exc}" if isinstance(exc, openai.APIConnectionError) else error_detail(exc)
    return LLMUnavailable(detail, attempts)


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 429) or exc.status_code >= 500
    return False


def fault_kind(exc: BaseException) -> str:
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection"
    if isinstance(exc, openai.APIStatusError):
        if is_context_overflow(exc):
            return "token_limit"
        if exc.status_code == 429:
            return "rate_limit"
        return "server" if exc.status_code >= 500 or exc.status_code == 408 else "rejected"
    return "unexpected"


def retry_after_seconds(exc: BaseException) -> float | None:
    """The server's requested wait from `retry-after-ms` or `Retry-After` (seconds or a date)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(float(ms) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def retry_delay(attempt: int, exc: BaseException, base_s: float, cap_s: float, retry_after_cap_s: float) -> float:
    """Seconds to wait before attempt `attempt + 1`: the server's Retry-After when it gives one
    (capped), else exponential backoff `base * 2^(attempt-1)` plus up to `base` of jitter."""
    asked = retry_after_seconds(exc)
    if asked is not None:
        return min(asked, retry_after_cap_s)
    return min(base_s * 2 ** (attempt - 1) + random.uniform(0, base_s), cap_s)


def error_detail(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
    return str(getattr(exc, "message", None) or exc) or type(exc).__name__


def is_context_overflow(exc: openai.APIStatusError) -> bool:
    if exc.status_code not in (400, 413):
        return False
    code = getattr(exc, "code", None)
    text = error_detail(exc).lower()
    return code == "context_length_exceeded" or "context length" in text or "context_length" in text


def context_overflow_numbers(exc: BaseException) -> tuple[int, int] | None:
    """(needed, limit) when the server's message states them."""
    found = _CONTEXT_NUMBERS.search(error_detail(exc))
    return (int(found.group(2)), int(found.group(1))) if found else None
