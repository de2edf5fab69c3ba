"""pytest setup that must apply to every collected path, `solutions/*.ipynb` included.

(A conftest.py under tests/ only reaches collectors under tests/, so nbval's rules live here.)
"""
from __future__ import annotations

#: outputs nbval never compares: rendering (HTML, images, widget state), stderr, and the verdict JSON,
#: whose verdict is compared through the text/plain line beside it
NBVAL_SKIP_COMPARE = (
    "text/html",
    "image/png",
    "image/svg+xml",
    "application/vnd.jupyter.widget-view+json",
    "application/vnd.jupyter.widget-state+json",
    "stderr",
    "application/vnd.labkit.result+json",
)


def pytest_collectstart(collector):
    """nbval: compare text and the machine-readable verdicts, not HTML, images or widget ids."""
    if hasattr(collector, "skip_compare"):  # nbval's notebook collector
        collector.skip_compare += NBVAL_SKIP_COMPARE
