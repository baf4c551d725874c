"""How the LLM client reads a failed call: which fault it is (and the same one whichever HTTP
client the SDK ran on), transient or not, how long the server asks us to wait, and whether a
400 means the context window overflowed. Functions over openai's and aiohttp's exception types,
so the retry loop in llm.py stays a few lines.

The SDK's aiohttp client (`openai.DefaultAioHttpClient`, what llm_connection.py builds) turns
aiohttp's failures into httpx2 exceptions, and the SDK those into its own; but its table sends
every aiohttp connection error to a connect *timeout*, and a reply that is not HTTP escapes as
aiohttp's own exception. `as_api_error` puts them back to what the SDK's default client raises
for the same fault, reading the aiohttp exception the SDK's error was raised from:

    what happened                              SDK, as shipped     as_api_error
    refused, DNS, a refused certificate        APITimeoutError     APIConnectionError
    the server hung up before its reply        APITimeoutError     APIConnectionError
    a reply that is not HTTP                   aiohttp's error     APIConnectionError
    connect or read timed out                  APITimeoutError     APITimeoutError
    a body cut short, any other read error     APIConnectionError  APIConnectionError
"""

from __future__ import annotations

import email.utils
import random
import re
import time

import aiohttp
import httpx2
import openai

from agent_core.errors import LLMError, LLMRequestRejected, LLMUnavailable, TokenLimitExceeded

# What a model call through the SDK's aiohttp client can raise for a fault of the endpoint or
# the network: catch these, then read them with as_api_error.
MODEL_FAULTS: tuple[type[Exception], ...] = (openai.APIError, aiohttp.ClientError)

_CONTEXT_NUMBERS = re.compile(r"maximum context length is (\d+).*?(\d+) tokens", re.DOTALL)


def as_api_error(exc: Exception, request: httpx2.Request) -> openai.APIError:
    """One of MODEL_FAULTS as the openai error the SDK's default client raises for that fault
    (see the table above); `request`: the one named when aiohttp's own exception came through.
    The tracebacks of `exc`'s chain are dropped (_drop_tracebacks says why)."""
    _drop_tracebacks(exc)
    if isinstance(exc, openai.APITimeoutError):
        origin = _aiohttp_origin(exc)
        if origin is None or isinstance(origin, TimeoutError):  # aiohttp's timeouts are TimeoutErrors
            return exc
        return _connection_error(origin, exc.request)
    if isinstance(exc, openai.APIError):
        return exc
    return _connection_error(exc, request)


def _aiohttp_origin(exc: BaseException) -> aiohttp.ClientError | None:
    """The aiohttp exception a chain of `raise ... from` started at, if any."""
    cause = exc.__cause__
    for _ in range(8):  # the SDK's error <- httpx2's <- aiohttp's: a short chain
        if cause is None or isinstance(cause, aiohttp.ClientError):
            return cause
        cause = cause.__cause__
    return None


def _drop_tracebacks(exc: BaseException) -> None:
    """aiohttp's connect path (and aiohappyeyeballs under it) keeps a failed attempt's exception in
    a local of a frame that its own traceback holds: a cycle per refused or failed connect, which
    only the collector frees. A fault is kept as a value and never re-raised with its traceback
    (agent_core/llm_retry.py), so the tracebacks of its chain go."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        current.__traceback__ = None
        pending += (current.__cause__, current.__context__)


def _connection_error(origin: BaseException, request: httpx2.Request) -> openai.APIConnectionError:
    error = openai.APIConnectionError(request=request)
    error.__cause__ = origin  # what actually happened, in a traceback
    return error


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
