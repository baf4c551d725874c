"""What a model call's span records: the request (operation, model, streamed or not) when it
starts, and when it ends the tokens, the latency and the attempts (each failed one an event),
or the error it gave up with. OpenTelemetry's GenAI attribute names where they exist."""

from __future__ import annotations

from opentelemetry.trace import Span, Status, StatusCode
from opentelemetry.util.types import AttributeValue


def request_attributes(model: str, *, stream: bool) -> dict[str, AttributeValue]:
    return {"gen_ai.operation.name": "chat", "gen_ai.request.model": model, "llm.stream": stream}


def annotate(current: Span, prompt: int, completion: int, seconds: float, failures: list[str]) -> None:
    """A model call's span, once it answered: tokens, latency, attempts (a failed one is an event)."""
    if not current.is_recording():
        return
    for kind in failures:
        current.add_event("attempt failed", {"error.type": kind})
    current.set_attributes({
        "gen_ai.usage.input_tokens": prompt, "gen_ai.usage.output_tokens": completion,
        "llm.latency_ms": round(seconds * 1000, 1), "llm.attempts": 1 + len(failures),
    })


def annotate_failed(current: Span, failures: list[str], error: object) -> None:
    if not current.is_recording():
        return
    for kind in failures:
        current.add_event("attempt failed", {"error.type": kind})
    current.set_attribute("llm.attempts", max(1, len(failures)))
    current.set_status(Status(StatusCode.ERROR, str(error)[:200]))
