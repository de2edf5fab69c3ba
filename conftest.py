"""pytest setup that must apply to every collected path, `solutions/*.ipynb` included.

(A conftest.py under tests/ only reaches collectors under tests/, so nbval's rules live here.)

nbval's run of a solution is the one execution of it in the notebooks tier: every cell is compared
with its committed output, and the same run is held to the lesson budgets (`labkit.notebooks.BUDGET_SECONDS`
of cell time, `BUDGET_MB` of kernel peak memory). Its cells carry the `notebooks` marker, so
`-m notebooks` selects them and `-m "not notebooks"` leaves them out.
"""
from __future__ import annotations

import os

import pytest

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


def _is_nbval_cell(item) -> bool:
    return hasattr(getattr(item, "parent", None), "skip_compare")


def pytest_configure(config):
    """nbval's cell timeout tied to the lesson budget (`labkit.notebooks.cell_timeout()`), not its 2000 s."""
    if getattr(config.option, "nbval_cell_timeout", None) in (2000, "2000"):
        from labkit.notebooks import cell_timeout

        config.option.nbval_cell_timeout = cell_timeout()


@pytest.hookimpl(tryfirst=True)  # before -m deselects: nbval cells get their marker first
def pytest_collection_modifyitems(config, items):
    """nbval cells are the `notebooks` tier; the last cell of each notebook closes its budget check.
    A notebook whose outputs come from a browser (lesson 08) is compared only where Chromium exists."""
    import shutil

    last: dict[str, object] = {}
    for item in items:
        if _is_nbval_cell(item):
            item.add_marker(pytest.mark.notebooks)
            last[str(item.parent.path)] = item
    for item in last.values():
        item.labkit_budget_last = True
    if shutil.which("chromium") or shutil.which("chromium-browser"):
        return
    cache: dict[str, list[str]] = {}
    for item in items:
        if not _is_nbval_cell(item):
            continue
        parent = item.parent
        path = str(parent.path)
        needs = cache.setdefault(path, _needs(path))
        if "chromium" in needs:
            item.add_marker(pytest.mark.skip(reason="its outputs come from headless Chromium, which is not installed "
                                                    "(Debian: apt-get install chromium; `make test` does it as root)"))


# ------------------------------------------------------------------ lesson budgets in nbval's run

def _budgets_on() -> bool:
    """Off for the second CPU path (`make test-cpu-path`: portable kernels, one ORT thread are slower)."""
    return os.environ.get("LABKIT_BUDGETS", "1") != "0"


def _kernel_peak_mb(item) -> float | None:
    """Peak resident memory (VmHWM) of the kernel process nbval started for this notebook, in MB."""
    km = getattr(getattr(item.parent, "kernel", None), "km", None)
    proc = getattr(getattr(km, "provisioner", None), "process", None) or getattr(km, "kernel", None)
    pid = getattr(proc, "pid", None)
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, TypeError, ValueError):
        pass
    return None


def _budget_problem(item, seconds: float, peak_mb: float | None) -> str | None:
    from labkit.notebooks import BUDGET_MB, BUDGET_SECONDS, budget_slack

    allowed = BUDGET_SECONDS * budget_slack()
    name = item.parent.path.name
    if seconds > allowed:
        return (f"{name}: its cells ran {seconds:.1f} s, over the lesson budget of {BUDGET_SECONDS} s "
                f"(x{budget_slack():g} slack for a shared CI machine, LABKIT_BUDGET_SLACK). "
                "Shorten it, or move material to an optional part.")
    if peak_mb is not None and peak_mb > BUDGET_MB:
        return f"{name}: its kernel peaked at {peak_mb:.0f} MB, over the lesson budget of {BUDGET_MB} MB."
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Sum the cell time of each notebook nbval runs; at its last cell, fail when over budget."""
    outcome = yield
    if call.when != "call" or not _is_nbval_cell(item) or not _budgets_on():
        return
    report = outcome.get_result()
    nb = item.parent
    nb.labkit_seconds = getattr(nb, "labkit_seconds", 0.0) + (call.stop - call.start)
    peak = _kernel_peak_mb(item)
    if peak is not None:
        nb.labkit_peak_mb = max(peak, getattr(nb, "labkit_peak_mb", 0.0))
    if not getattr(item, "labkit_budget_last", False):
        return
    peak = getattr(nb, "labkit_peak_mb", None)
    report.user_properties.append(("labkit_budget", [nb.path.name, round(nb.labkit_seconds, 1),
                                                     None if peak is None else round(peak)]))
    problem = _budget_problem(item, nb.labkit_seconds, peak)
    if problem and report.passed:
        report.outcome = "failed"
        report.longrepr = problem


_BUDGETS: list[list] = []


def pytest_runtest_logreport(report):
    """Collect each notebook's budget line (also from xdist workers: user_properties travel with reports)."""
    for key, value in getattr(report, "user_properties", ()):
        if key == "labkit_budget":
            _BUDGETS.append(value)


def pytest_terminal_summary(terminalreporter):
    """One line per solution nbval ran: its cell time and its kernel's peak memory, against the budgets."""
    if not _BUDGETS:
        return
    from labkit.notebooks import BUDGET_MB, BUDGET_SECONDS

    terminalreporter.section(f"lesson budgets (<= {BUDGET_SECONDS} s of cells, <= {BUDGET_MB} MB kernel peak)")
    for name, seconds, peak in sorted(_BUDGETS):
        terminalreporter.line(f"{name:<32} {seconds:>6.1f} s {'?' if peak is None else peak:>6} MB")
