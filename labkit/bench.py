"""Fair latency measurement: warm up, repeat, report the median and the spread."""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


@dataclass
class Timing:
    """Latency of one workload in milliseconds over `runs` timed repeats."""

    label: str
    median_ms: float
    p10_ms: float
    p90_ms: float
    runs: int
    samples_ms: list[float]

    @property
    def spread_ms(self) -> float:
        """p90 - p10: how much the runs disagree (the error bar the plots draw)."""
        return self.p90_ms - self.p10_ms

    def __repr__(self) -> str:
        return (f"{self.label or 'timing'}: median {self.median_ms:.3f} ms "
                f"(p10 {self.p10_ms:.3f}, p90 {self.p90_ms:.3f}, {self.runs} runs)")


def bench(fn: Callable[..., Any], *args: Any, label: str = "", warmup: int = 3,
          repeat: int = 20, min_seconds: float = 0.0, max_seconds: float = 10.0) -> Timing:
    """Time `fn(*args)`: `warmup` untimed calls, then at least `repeat` timed ones.

    Keeps repeating until `min_seconds` have passed (short workloads get more samples) but
    stops after `max_seconds`. The median resists outliers from a busy machine; p10/p90 show
    how noisy the measurement was.
    """
    for _ in range(max(0, warmup)):
        fn(*args)
    samples: list[float] = []
    start = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        fn(*args)
        samples.append((time.perf_counter() - t0) * 1e3)
        elapsed = time.perf_counter() - start
        if (len(samples) >= repeat and elapsed >= min_seconds) or elapsed >= max_seconds:
            break
    p10, p90 = np.percentile(samples, [10, 90])
    return Timing(label, statistics.median(samples), float(p10), float(p90), len(samples), samples)
