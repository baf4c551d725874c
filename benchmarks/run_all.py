"""`make bench`: run every benchmarks/bench_*.py, print one table, add the run to benchmarks/results.json.

Each script runs as its own subprocess and prints ONE JSON line of figures (the last line of
its stdout that parses as a JSON object is taken). A script that crashes, times out, or lacks
an optional dependency is reported as such in the table; the runner goes on with the next.

    python benchmarks/run_all.py [--only compare,parked] [--skip crash_soak] [--timeout 900]

Status: ok (the script's own targets met), missed (figures measured, a target missed),
no-deps (an optional dependency is not installed: `pip install -e '.[bench]'`),
failed (no figures), timeout.

benchmarks/results.json is the history, kept in git: `{"runs": [newest, ...]}`, each run its
figures as the scripts printed them. The docs' performance page is rendered from it
(scripts/docs_gen.py); `--out` writes elsewhere, `--no-record` writes nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results.json"
_MISSING_RE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
RUNTIME_ORDER = ("ours", "langgraph", "agents", "bare")


def discover(only: set[str], skip: set[str]) -> list[Path]:
    scripts = sorted(HERE.glob("bench_*.py"))
    picked = []
    for path in scripts:
        name = path.stem.removeprefix("bench_")
        if (only and name not in only) or name in skip:
            continue
        picked.append(path)
    return picked


def last_json(stdout: str) -> dict[str, Any] | None:
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return None


def run_one(path: Path, timeout: float) -> dict[str, Any]:
    started = time.monotonic()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    try:
        proc = subprocess.run(
            [sys.executable, str(path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": round(time.monotonic() - started, 1), "detail": f"over {timeout:g} s"}
    seconds = round(time.monotonic() - started, 1)
    figures = last_json(proc.stdout)
    if figures is None:
        missing = _MISSING_RE.search(proc.stderr)
        if missing:
            return {"status": "no-deps", "seconds": seconds, "detail": f"missing module {missing.group(1)}"}
        tail = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()][-1:] or [f"exit code {proc.returncode}"]
        return {"status": "failed", "seconds": seconds, "detail": tail[0][:200], "returncode": proc.returncode}
    status = "ok" if figures.get("ok", proc.returncode == 0) and proc.returncode == 0 else "missed"
    return {"status": status, "seconds": seconds, "figures": figures, "returncode": proc.returncode}


# ------------------------------------------------------------------ the table


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "-"
    return str(value)


def key_figures(figures: dict[str, Any], limit: int = 9) -> str:
    """The scalar figures of a result, short."""
    skip = {"bench", "ok"}
    parts = [f"{k}={_fmt(v)}" for k, v in figures.items() if k not in skip and not isinstance(v, dict | list)]
    return ", ".join(parts[:limit]) + (", ..." if len(parts) > limit else "")


def compare_rows(figures: dict[str, Any]) -> list[list[str]]:
    runtimes = figures.get("runtimes") or {}
    rows = []
    for name in RUNTIME_ORDER:
        r = runtimes.get(name)
        if not r:
            continue
        over = (figures.get("overhead_per_step_ms") or {}).get(name)
        c0, c1 = r.get("conc50_0ms") or {}, r.get("conc50_1s") or {}
        rows.append([
            name, _fmt(r.get("step_median_ms")), _fmt(r.get("step_p99_ms")), _fmt(over if name != "bare" else 0.0),
            _fmt(r.get("resume_median_ms")), _fmt(r.get("sqlite_bytes_per_conversation")),
            _fmt(r.get("rss_per_paused_bytes")), _fmt(r.get("resumes_in_new_process")),
            _fmt(c0.get("conv_per_s")), _fmt(c0.get("step_p99_minus_model_ms")),
            _fmt(c1.get("conv_per_s")), _fmt(c1.get("step_p99_minus_model_ms")),
        ])
    return rows


COMPARE_HEAD = [
    "runtime", "step p50 ms", "step p99 ms", "overhead/step ms", "resume ms", "SQLite B/conv",
    "RSS B/paused", "new-process resume", "50@0ms conv/s", "50@0ms p99-model ms", "50@1s conv/s", "50@1s p99-model ms",
]


def markdown(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def render(results: dict[str, dict[str, Any]]) -> str:
    rows = []
    for name, res in results.items():
        figures = res.get("figures")
        detail = key_figures(figures) if figures else res.get("detail", "")
        rows.append([name, res["status"], _fmt(res["seconds"]), detail])
    out = [markdown(["benchmark", "status", "s", "figures"], rows)]
    compare = results.get("compare", {}).get("figures")
    if compare:
        out += ["", "Side by side (same scripted trip, same fake model):", "", markdown(COMPARE_HEAD, compare_rows(compare))]
        checks = compare.get("checks") or {}
        if checks:
            out += ["", "Targets: " + ", ".join(f"{k}={'met' if v else 'MISSED'}" for k, v in checks.items())]
    out += pg_lines(results)
    return "\n".join(out)


def pg_lines(results: dict[str, dict[str, Any]]) -> list[str]:
    """Several processes on PostgreSQL (bench_pg_overhead.py, bench_pg_scale.py, bench_pg_cluster.py), in words."""
    out: list[str] = []
    over = results.get("pg_overhead", {}).get("figures")
    if over:
        per = over.get("overhead_per_step_ms") or {}
        out.append("Per-step overhead (ms over the bare client): " + ", ".join(f"{k} {_fmt(v)}" for k, v in per.items()))
    scale = results.get("pg_scale", {}).get("figures")
    if scale:
        one, three = scale.get("one_process") or {}, scale.get("three_processes") or {}
        out.append(f"PostgreSQL, bench_compare's 50 concurrent chats per process, 1 s model: 1 process "
                   f"{_fmt(one.get('conv_per_s'))} conv/s, step p99 minus model {_fmt(one.get('step_p99_minus_model_ms'))} ms; "
                   f"3 processes {_fmt(three.get('conv_per_s'))} conv/s (x{_fmt(scale.get('throughput_ratio'))}), "
                   f"{_fmt(three.get('step_p99_minus_model_ms'))} ms; CPU cores busy with 3: {three.get('cpu_cores')}")
    cluster = results.get("pg_cluster", {}).get("figures")
    if cluster:
        one, three, take = cluster.get("one_process") or {}, cluster.get("three_processes") or {}, cluster.get("takeover") or {}
        out.append(f"PostgreSQL, 50 chats per process, 1 s model: 1 process {_fmt(one.get('conv_per_s'))} conv/s, "
                   f"3 processes {_fmt(three.get('conv_per_s'))} conv/s (x{_fmt(cluster.get('throughput_ratio'))}), "
                   f"step p99 minus model {_fmt(cluster.get('step_p99_minus_model_ms_worst'))} ms; takeover after "
                   f"SIGKILL median {_fmt(take.get('takeover_median_s'))} s, max {_fmt(take.get('takeover_max_s'))} s "
                   f"(lease {_fmt(take.get('lease_s'))} s)")
    return ["", *out] if out else []


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {"python": platform.python_version(), "platform": platform.platform(), "cores": os.cpu_count()}
    with contextlib.suppress(OSError):
        info["load_avg_1m_at_start"] = round(os.getloadavg()[0], 2)
    return info


def commit() -> str | None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10)
        if done.returncode == 0:
            return done.stdout.strip() or None
    return None


def record(path: Path, report: dict[str, Any]) -> None:
    """Put the run at the top of the history in `path` (a file of one older report is kept as a run)."""
    history: dict[str, Any] = {"about": "make bench's runs, newest first", "runs": []}
    if path.exists():
        with contextlib.suppress(ValueError):
            old = json.loads(path.read_text(encoding="utf-8"))
            history["about"] = old.get("about", history["about"])
            history["runs"] = old.get("runs", [old] if "results" in old else [])
    history["runs"].insert(0, report)
    path.write_text(json.dumps(history, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated names (bench_NAME.py)")
    parser.add_argument("--skip", default="", help="comma-separated names to leave out")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per script")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--no-record", action="store_true", help="print the table only")
    args = parser.parse_args()
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    scripts = discover(only, skip)
    if not scripts:
        print("no benchmark scripts matched", file=sys.stderr)
        return 2
    started = time.time()
    results: dict[str, dict[str, Any]] = {}
    for path in scripts:
        name = path.stem.removeprefix("bench_")
        print(f"[bench] {name} ...", file=sys.stderr, flush=True)
        results[name] = run_one(path, args.timeout)
        print(f"[bench] {name}: {results[name]['status']} in {results[name]['seconds']} s", file=sys.stderr, flush=True)
    report = {"started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)), "commit": commit(),
              "machine": machine(), "seconds": round(time.time() - started, 1),
              **({"only": sorted(results)} if only or skip else {}), "results": results}
    print(render(results))
    if not args.no_record:
        record(args.out, report)
        print(f"\nresults: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
