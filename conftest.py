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


def _needs(path) -> list[str]:
    """What a notebook says it needs to reproduce its outputs: metadata {"labkit": {"requires": [...]}}."""
    import json

    try:
        meta = json.loads(open(path, encoding="utf-8").read()).get("metadata", {})
    except (OSError, ValueError):
        return []
    needs = meta.get("labkit", {}).get("requires", []) if isinstance(meta.get("labkit"), dict) else []
    return [n for n in needs if isinstance(n, str)]


def pytest_collection_modifyitems(config, items):
    """A notebook whose outputs come from a browser (lesson 08) is compared only where Chromium exists."""
    import shutil

    import pytest

    if shutil.which("chromium") or shutil.which("chromium-browser"):
        return
    cache: dict[str, list[str]] = {}
    for item in items:
        parent = getattr(item, "parent", None)
        if not hasattr(parent, "skip_compare"):  # not an nbval cell
            continue
        path = str(parent.path)
        needs = cache.setdefault(path, _needs(path))
        if "chromium" in needs:
            item.add_marker(pytest.mark.skip(reason="its outputs come from headless Chromium, which is not installed "
                                                    "(Debian: apt-get install chromium; `make test` does it as root)"))
