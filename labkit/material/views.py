"""Learner-side factories of array views: a test input that must reach the learner's function as it is
built here (a strided view is not contiguous; a saved or copied array would be)."""
from __future__ import annotations

import numpy as np

__all__ = ["strided"]


def strided(base: np.ndarray, axis: int, step: int) -> np.ndarray:
    """Every `step`-th slice of `base` along `axis`: a view, not contiguous in memory."""
    index = [slice(None)] * np.ndim(base)
    index[int(axis)] = slice(None, None, int(step))
    return np.asarray(base)[tuple(index)]
