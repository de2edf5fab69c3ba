"""Shared pytest setup: course paths, nbval output comparison rules."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
LESSONS = sorted((ROOT / "lessons").glob("*.ipynb"))



def pytest_collectstart(collector):
    """nbval: compare text and the machine-readable verdicts, not HTML, images or widget ids."""
    if hasattr(collector, "skip_compare"):  # nbval's notebook collector
        collector.skip_compare += (
            "text/html",
            "image/png",
            "image/svg+xml",
            "application/vnd.jupyter.widget-view+json",
            "application/vnd.jupyter.widget-state+json",
            "stderr",
            "application/vnd.labkit.result+json",  # verdicts are compared through text/plain
        )


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
