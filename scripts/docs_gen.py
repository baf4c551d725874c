"""The docs' generated parts, from the code and the data they describe (an mkdocs hook).

A page asks for a part with a marker on a line of its own, `<!-- generated: NAME -->`, and the
hook puts the part there when the site is built (mkdocs.yml: `hooks: [scripts/docs_gen.py]`):

    settings        the configuration reference, from bot.settings.Settings: a section per
                    group of settings (bot.settings.GROUPS), every field's variable, type,
                    default and description
    chat-diagram    the chat's state diagram, from bot.chat.machine.diagram()
    chat-table      every transition of bot.chat.machine.TRANSITIONS, by state
    bench-latest    the latest full `make bench` run in benchmarks/results.json
    bench-history   the headline figures of every run in benchmarks/results.json

An unknown marker stops the build. Without mkdocs, print one part:

    .venv/bin/python scripts/docs_gen.py settings
"""

from __future__ import annotations

import json
import re
import sys
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results.json"
MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)


class DocsGenError(Exception):
    """A page asked for a part that does not exist, or the data behind a part is unusable."""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(head: list[str], rows: Iterable[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# ------------------------------------------------------------------ settings

def setting_variable(name: str, field: Any) -> str:
    """The environment variable a field is read from (its first alias), else its name upper-cased."""
    alias = field.validation_alias
    choices = getattr(alias, "choices", None)
    if choices:
        return str(choices[0])
    return str(alias) if isinstance(alias, str) else name.upper()


def _type_name(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) if isinstance(annotation, type) else None
    text = text or str(annotation)
    text = re.sub(r"typing\.|pathlib\.|typing_extensions\.", "", text)
    text = re.sub(r"Annotated\[(.+?), .*\]$", r"\1", text)
    return text.replace("NoneType", "None")


def _type_cell(annotation: Any) -> str:
    """`str`, or `str`, optional for `str | None` (a pipe cannot stand in a table's code span)."""
    if typing.get_origin(annotation) is typing.Literal:
        return "one of " + ", ".join(f"`{v}`" for v in typing.get_args(annotation))
    name = _type_name(annotation)
    if name.endswith(" | None"):
        return f"`{name.removesuffix(' | None')}`, optional"
    return f"`{name}`"


def _default(field: Any) -> str:
    value = field.default_factory() if field.default_factory is not None else field.default
    if value is None or value == [] or value == {}:
        return "unset"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, Path) and not value.is_absolute():
        return f"`./{value}`"
    return f"`{value}`"


def missing_descriptions() -> list[str]:
    from bot.settings import Settings

    return [name for name, field in Settings.model_fields.items() if not (field.description or "").strip()]


def settings_reference() -> str:
    from bot.settings import GROUPS, Settings

    fields = dict(Settings.model_fields)
    missing = missing_descriptions()
    if missing:
        raise DocsGenError(f"settings without a description: {', '.join(missing)} (bot/settings/)")
    # a section per group of settings, in Settings' order; a field of no group lands in "Other" (never lost)
    sections = [(group.section, list(group.model_fields)) for group in GROUPS]
    grouped = {name for _, names in sections for name in names}
    sections.append(("Other", [n for n in fields if n not in grouped]))
    out: list[str] = []
    for title, names in sections:
        if not names:
            continue
        rows = [[f"`{setting_variable(n, fields[n])}`", _type_cell(fields[n].annotation),
                 _default(fields[n]), fields[n].description or ""] for n in names]
        out += [f"## {title}", "", _table(["variable", "type", "default", "meaning"], rows), ""]
    return "\n".join(out).rstrip() + "\n"


# ------------------------------------------------------------------ the chat machine


def chat_diagram() -> str:
    from bot.chat.machine import diagram

    return "```mermaid\n" + diagram() + "\n```\n"


def chat_table() -> str:
    from bot.chat.machine import TRANSITIONS, ChatState

    out: list[str] = []
    for state in ChatState:
        rows = [[t.trigger.value, t.guard or "", t.action.value, t.target.value if t.target else "(stays)"]
                for t in TRANSITIONS if t.source is state]
        out += [f"### From `{state.value}`", "", _table(["trigger", "guard", "action", "to"], rows), ""]
    return "\n".join(out).rstrip() + "\n"


# ------------------------------------------------------------------ benchmarks


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _scalars(figures: dict[str, Any], limit: int = 8) -> str:
    skip = {"bench", "ok", "cores", "wall_s", "load_avg_1m"}
    parts = [f"{k}={_fmt(v)}" for k, v in figures.items() if k not in skip and not isinstance(v, dict | list)]
    return ", ".join(parts[:limit]) + (", ..." if len(parts) > limit else "")


def headline(name: str, figures: dict[str, Any]) -> str:
    """One benchmark's figures, short: its own words for the ones made of nested results."""
    if name == "compare":
        over = figures.get("overhead_per_step_ms") or {}
        return (f"overhead a step over the bare client: ours {_fmt(over.get('ours'))} ms, LangGraph "
                f"{_fmt(over.get('langgraph'))}, Agents SDK {_fmt(over.get('agents'))}")
    if name == "pg_overhead":
        over = figures.get("overhead_per_step_ms") or {}
        return ("overhead a step over the bare client: " + ", ".join(f"{k} {_fmt(v)}" for k, v in over.items())
                + f"; ours on PostgreSQL / LangGraph on PostgreSQL = {_fmt(figures.get('ratio_ours_pg_to_langgraph_pg'))}")
    if name == "pg_scale":
        one, three = figures.get("one_process") or {}, figures.get("three_processes") or {}
        return (f"1 process {_fmt(one.get('conv_per_s'))} conv/s, step p99 over the model "
                f"{_fmt(one.get('step_p99_minus_model_ms'))} ms; 3 processes {_fmt(three.get('conv_per_s'))} conv/s "
                f"(x{_fmt(figures.get('throughput_ratio'))}), {_fmt(three.get('step_p99_minus_model_ms'))} ms")
    if name == "pg_cluster":
        take = figures.get("takeover") or {}
        return (f"3 processes x{_fmt(figures.get('throughput_ratio'))} one; step p99 over the model "
                f"{_fmt(figures.get('step_p99_minus_model_ms_worst'))} ms; takeover after SIGKILL median "
                f"{_fmt(take.get('takeover_median_s'))} s, max {_fmt(take.get('takeover_max_s'))} s "
                f"(lease {_fmt(take.get('lease_s'))} s)")
    if name == "model_transport":
        cpu = figures.get("cpu_ms_per_call") or {}
        ours, theirs = cpu.get("ours") or {}, cpu.get("httpx2") or {}
        return (f"CPU a call, ours / httpx2: whole {_fmt(ours.get('whole'))} / {_fmt(theirs.get('whole'))} ms, "
                f"streamed {_fmt(ours.get('streamed'))} / {_fmt(theirs.get('streamed'))} ms")
    return _scalars(figures)


COMPARE_HEAD = ["runtime", "step p50 ms", "steps 1-4 median ms", "overhead/step ms", "resume ms",
                "SQLite B/conv", "RSS B/paused", "50@0ms conv/s", "50@1s p99-model ms"]
COMPARE_ORDER = ("ours", "langgraph", "agents", "bare", "ours_streaming", "bare_streaming")


def compare_rows(figures: dict[str, Any]) -> list[list[str]]:
    runtimes = figures.get("runtimes") or {}
    over = figures.get("overhead_per_step_ms") or {}
    rows = []
    for name in COMPARE_ORDER:
        r = runtimes.get(name)
        if not r:
            continue
        if name == "bare":
            overhead = "0"
        elif name == "ours_streaming":
            overhead = (f"{_fmt(over.get('ours_streaming_over_bare'))} over bare, "
                        f"{_fmt(over.get('ours_streaming_over_bare_streaming'))} over bare_streaming")
        else:
            overhead = _fmt(over.get(name))
        steps = r.get("steps_median_ms") or []
        rows.append([
            name, _fmt(r.get("step_median_ms")), " / ".join(_fmt(s) for s in steps) or "-", overhead,
            _fmt(r.get("resume_median_ms")), _fmt(r.get("sqlite_bytes_per_conversation")),
            _fmt(r.get("rss_per_paused_bytes")), _fmt((r.get("conc50_0ms") or {}).get("conv_per_s")),
            _fmt((r.get("conc50_1s") or {}).get("step_p99_minus_model_ms")),
        ])
    return rows


def load_runs(path: Path = RESULTS) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DocsGenError(f"{path.relative_to(ROOT)}: {exc}") from exc
    runs = data.get("runs")
    if not isinstance(runs, list) or not runs:
        raise DocsGenError(f"{path.relative_to(ROOT)} has no runs")
    return runs


def _when(run: dict[str, Any]) -> str:
    return str(run.get("started_at", "?"))[:16].replace("T", " ")


def bench_latest(path: Path = RESULTS) -> str:
    runs = load_runs(path)
    run = next((r for r in runs if not r.get("only")), runs[0])
    machine = run.get("machine") or {}
    about = ", ".join(f"{k} {v}" for k, v in machine.items() if k != "note")
    note = f" ({machine['note']})" if machine.get("note") else ""
    commit = f", commit `{run['commit']}`" if run.get("commit") else ""
    results: dict[str, Any] = run.get("results") or {}
    rows = []
    for name, res in results.items():
        figures = res.get("figures")
        text = headline(name, figures) if figures else res.get("detail", "")
        if name == "compare" and figures:
            text += " (the table below)"
        if res.get("note"):
            text += f". {res['note']}"
        rows.append([name, res.get("status", "?"), _fmt(res.get("seconds")), text])
    out = [f"**{_when(run)}**{commit}; machine: {about}{note}.", "",
           _table(["benchmark", "status", "s", "figures"], rows), ""]
    compare = (results.get("compare") or {}).get("figures")
    if compare:
        out += ["Side by side (`bench_compare.py`: the same scripted trip, the same fake model):", "",
                _table(COMPARE_HEAD, compare_rows(compare)), ""]
    return "\n".join(out)


def bench_history(path: Path = RESULTS) -> str:
    runs = load_runs(path)
    by_bench: dict[str, list[list[str]]] = {}
    for run in runs:  # newest first, as the file keeps them
        results: dict[str, Any] = run.get("results") or {}
        for name, res in results.items():
            figures = res.get("figures")
            if figures:
                by_bench.setdefault(name, []).append(
                    [name, _when(run), run.get("commit") or "", res.get("status", "?"), headline(name, figures)])
    rows = [row for name in sorted(by_bench) for row in by_bench[name]]
    return _table(["benchmark", "run", "commit", "status", "figures"], rows) + "\n"


# ------------------------------------------------------------------ the hook

PARTS: dict[str, Callable[[], str]] = {
    "settings": settings_reference,
    "chat-diagram": chat_diagram,
    "chat-table": chat_table,
    "bench-latest": bench_latest,
    "bench-history": bench_history,
}


def fill(markdown: str, where: str = "page") -> str:
    def part(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in PARTS:
            raise DocsGenError(f"{where}: no generated part named {name!r} (known: {', '.join(PARTS)})")
        return PARTS[name]().rstrip("\n")

    return MARKER.sub(part, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """mkdocs hook: fill a page's markers."""
    try:
        return fill(markdown, page.file.src_uri)
    except DocsGenError as exc:
        from mkdocs.exceptions import PluginError

        raise PluginError(str(exc)) from exc


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in PARTS:
        print(f"usage: docs_gen.py {{{'|'.join(PARTS)}}}", file=sys.stderr)
        return 2
    print(PARTS[argv[0]](), end="")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
