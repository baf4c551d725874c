"""How loaded the whole machine was while a benchmark measured: CPU busy and CPU waits, per second.

A run's tail latency on a small shared machine follows its busiest second, not its average:
bench_pg_scale's lanes move in step (every lane asks its question in the same second, and
starts its next conversation in the same second), so most of a conversation's CPU falls into a
few seconds of the run. When those seconds need more cores than there are, every process's
work queues behind the others' and the step p99 jumps by ten times between runs of the same
code. This sampler reads, every `interval_s`:

- /proc/stat: CPU time of every process on the machine (the benchmark's own included);
- /proc/pressure/cpu (PSI, Linux 4.20+): the time at least one runnable task waited for a CPU.

    with MachineLoad() as load:
        ...                       # the measured phase
    load.figures()  # {"busy_cores_mean", "busy_cores_peak_1s", "cpu_wait_share", "cpu_wait_peak_1s"}

`cpu_wait_share` is the share of the wall time in which some task waited for a CPU; `_peak_1s`
figures are the worst one-second window. A figure is None where the kernel does not offer it.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from types import TracebackType

STAT = Path("/proc/stat")
PSI_CPU = Path("/proc/pressure/cpu")
TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def _busy_seconds() -> float | None:
    """CPU seconds spent by the machine so far, all CPUs (not idle, not waiting for I/O)."""
    try:
        fields = STAT.read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    values = [int(v) for v in fields[:8]]  # user nice system idle iowait irq softirq steal
    return (sum(values) - values[3] - values[4] - values[7]) * TICK_S


def _waited_seconds() -> float | None:
    """Seconds so far in which at least one runnable task waited for a CPU (PSI `some`)."""
    try:
        line = PSI_CPU.read_text().split("\n", 1)[0]
    except OSError:
        return None
    return int(line.rsplit("total=", 1)[1]) / 1e6


class MachineLoad:
    def __init__(self, interval_s: float = 0.1) -> None:
        self.interval_s = interval_s
        self._samples: list[tuple[float, float | None, float | None]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample_until_stopped, name="machine-load", daemon=True)

    def __enter__(self) -> MachineLoad:
        self._take()
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        self._take()

    def _take(self) -> None:
        self._samples.append((time.monotonic(), _busy_seconds(), _waited_seconds()))

    def _sample_until_stopped(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._take()

    def figures(self) -> dict[str, float | None]:
        return {
            "busy_cores_mean": self._rate(1, len(self._samples) - 1),
            "busy_cores_peak_1s": self._peak(1),
            "cpu_wait_share": self._rate(2, len(self._samples) - 1),
            "cpu_wait_peak_1s": self._peak(2),
        }

    def _rate(self, column: int, span: int, start: int = 0) -> float | None:
        """Growth of a column per wall second from sample `start` over `span` samples."""
        s = self._samples
        if span < 1 or start + span > len(s) - 1:
            return None
        first, last = s[start][column], s[start + span][column]
        wall = s[start + span][0] - s[start][0]
        if first is None or last is None or wall <= 0:
            return None
        return round((last - first) / wall, 2)

    def _peak(self, column: int, window_s: float = 1.0) -> float | None:
        """The highest rate of a column over any window of about `window_s`."""
        span = max(1, round(window_s / self.interval_s))
        rates = [self._rate(column, span, i) for i in range(len(self._samples) - span)]
        known = [r for r in rates if r is not None]
        return max(known) if known else None
