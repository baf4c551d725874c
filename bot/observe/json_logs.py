"""BOT_LOG_FORMAT=json: one JSON object per line, with the chat it is about.

Every line written while a chat is handled (by its task, its run, its delivery lane) carries
`chat_key`, `session_id`, `run_no` and `trace_id` (bot.observe.log_context); inside a span, the span's
own trace and span ids, so a line can be found from its trace and the other way round.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import IO

from opentelemetry import trace

from bot.observe.log_context import ChatLogContext


class JsonFormatter(logging.Formatter):
    def __init__(self, context: ChatLogContext) -> None:
        super().__init__()
        self.context = context

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname, "logger": record.name, "message": record.getMessage(),
        }
        fields = self.context.current()
        if fields is not None:
            line.update(chat_key=fields.chat_key, session_id=fields.session_id, run_no=fields.run_no,
                        trace_id=fields.trace_id)
        span = trace.get_current_span().get_span_context()
        if span.is_valid:
            line.update(trace_id=format(span.trace_id, "032x"), span_id=format(span.span_id, "016x"))
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def json_handler(context: ChatLogContext, stream: IO[str]) -> logging.Handler:
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter(context))
    return handler
