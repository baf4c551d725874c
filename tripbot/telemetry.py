"""The OpenTelemetry SDK, configured from Settings: the tracer the bot passes down, or None.

Tracing is off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (spans go there over OTLP/HTTP,
batched) or BOT_TRACE=console (each span is printed as it ends). The SDK is imported only then,
and the tracer comes from a provider of our own, never the process-wide one: two runtimes in
one process (the tests) never share spans.
"""

from __future__ import annotations

import contextlib

from opentelemetry.trace import Tracer

from bot.settings import Settings


def make_tracer(settings: Settings, resources: contextlib.AsyncExitStack) -> Tracer | None:
    """The tracer, with the provider's shutdown (which flushes what is batched) pushed onto
    `resources`; None when tracing is off."""
    if not settings.otel_endpoint and settings.trace != "console":
        return None
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    provider = TracerProvider(resource=Resource.create({"service.name": settings.otel_service_name}))
    if settings.otel_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        # the standard variable names the collector's base URL; traces go to its /v1/traces
        endpoint = settings.otel_endpoint.rstrip("/") + "/v1/traces"
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    if settings.trace == "console":
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    resources.callback(provider.shutdown)
    return provider.get_tracer("tripbot")
