"""Plots and viewers the lessons share (matplotlib; Netron for graphs)."""
from __future__ import annotations

from typing import Sequence

from .bench import Timing


def plot_timings(timings: Sequence[Timing], title: str = "", ax=None, unit: str = "ms"):
    """Bar chart of median latencies with p10–p90 error bars (the spread of the runs)."""
    import matplotlib.pyplot as plt
    import numpy as np

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3))
    med = np.array([t.median_ms for t in timings])
    err = np.array([[t.median_ms - t.p10_ms for t in timings], [t.p90_ms - t.median_ms for t in timings]])
    ax.bar([t.label for t in timings], med, yerr=err, capsize=4, color="#4c72b0")
    ax.set_ylabel(f"median latency ({unit})")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    return ax
