"""Shared pieces of the travel tools: argument formats, date checks and the JSON they print."""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel

from tools.base import ToolContext, ToolResult
from tools.errors import ToolArgumentError
from tools.travel.models import Found

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIME = re.compile(r"^(?:(\d{4}-\d{2}-\d{2})[ T])?(\d{1,2}):(\d{2})$")


def _valid_date(v: str) -> str:
    v = v.strip()
    if not _DATE.match(v):
        raise ValueError(f"{v!r} is not a date; use YYYY-MM-DD, e.g. 2025-05-01")
    try:
        date.fromisoformat(v)
    except ValueError:
        raise ValueError(f"{v!r} is not a real calendar date") from None
    return v


def _valid_time(v: str) -> str:
    v = v.strip()
    m = _TIME.match(v)
    if not m or int(m.group(2)) > 23 or int(m.group(3)) > 59:
        raise ValueError(f"{v!r} is not a time; use HH:MM or YYYY-MM-DD HH:MM, e.g. 07:30")
    if m.group(1):
        _valid_date(m.group(1))
    return v


DateStr = Annotated[str, AfterValidator(_valid_date)]
TimeStr = Annotated[str, AfterValidator(_valid_time)]


def today(ctx: ToolContext) -> date:
    return ctx.now.date()


def not_past(value: str, ctx: ToolContext, field: str) -> date:
    d = date.fromisoformat(value)
    if d < today(ctx):
        raise ToolArgumentError(
            f"{field} {value} is in the past (today is {today(ctx).isoformat()}); ask the person for a future date",
            field=field,
        )
    return d


def minutes_of(value: str) -> int:
    """Minutes after midnight of HH:MM or of the time part of YYYY-MM-DD HH:MM."""
    m = _TIME.match(value.strip())
    assert m is not None
    return int(m.group(2)) * 60 + int(m.group(3))


def moment(value: str, day: date) -> datetime:
    """A full datetime; HH:MM is taken on `day`."""
    m = _TIME.match(value.strip())
    assert m is not None
    base = date.fromisoformat(m.group(1)) if m.group(1) else day
    return datetime(base.year, base.month, base.day) + timedelta(minutes=int(m.group(2)) * 60 + int(m.group(3)))


def parse_dt(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M")


def render(
    found: Found[Any],
    query: BaseModel,
    items: list[Any],
    *,
    limit: int,
    summary: str,
    extra: dict[str, Any] | None = None,
    caveats: list[str] | None = None,
) -> ToolResult:
    """The compact JSON a model reads and can cite: source, note, query, counts, results."""
    shown = items[:limit]
    payload: dict[str, Any] = {
        "source": found.source,
        "note": found.note,
        "query": query.model_dump(exclude_none=True),
        "matched": len(items),
        "shown": len(shown),
    }
    payload.update(extra or {})
    payload.update(found.extra)
    caveats = [*found.caveats, *(caveats or [])]
    if caveats:
        # "what the plan could not know": the model is asked to carry these into the plan's unknowns
        payload["caveats"] = caveats
    payload["results"] = [i.model_dump(exclude_none=True) if isinstance(i, BaseModel) else i for i in shown]
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    meta = {"source": found.source, "matched": str(len(items))}
    if caveats:
        meta["caveats"] = " | ".join(caveats)
    return ToolResult(output=text, summary=summary, meta=meta)
