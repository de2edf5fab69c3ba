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
    """nbval's cell timeout tied to the lesson budget (`labkit.notebooks.cell_timeout()`), not its 2000 s;
    the long tests spread over xdist's workers (SpreadLongTests)."""
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(SpreadLongTests(), "labkit-spread-long-tests")
    if getattr(config.option, "nbval_cell_timeout", None) in (2000, "2000"):
        from labkit.notebooks import cell_timeout

        config.option.nbval_cell_timeout = cell_timeout()


#: test files whose tests `--dist loadfile` spreads one by one over the workers: their tests are long (a
#: lesson graded twice) and set up no shared fixture. Every other file, and each notebook
#: nbval runs, keeps all its tests on one worker (module fixtures set up once, one kernel per notebook).
SPREAD_FILES = frozenset({"test_grading_lessons.py"})
#: the corpus goes one exercise to a unit: an exercise's first entry in a process pays what its judge builds
#: once (models, exports, WebGPU shaders), and one worker pays it instead of both
CORPUS_FILE = "test_corpus.py"
#: the files whose tests are scheduled first, longest units first: test_binder.py (two tests sharing a venv,
#: one unit: ~20 s, or ~90 s when `make test` did not build the venv beside the install), each lesson graded,
#: then the grading tier's files of a few long tests (they would hold one worker while the other idles at the
#: end), then the corpus, its heavy exercises first. The many short units after them even the workers out.
FIRST = ("test_binder.py", "test_grading_lessons.py", "test_grading_attacks.py", "test_grading_confined.py",
         "test_grading.py", "test_grading_cluster.py", "test_regrade.py", "test_kernel_server.py", CORPUS_FILE)


def _corpus_exercise(nodeid: str) -> str | None:
    """The exercise id of a corpus entry's node id ("tests/test_corpus.py::test_…[03.raw_input-name]")."""
    if "::test_corpus_entry_scores_by_the_rule[" not in nodeid:
        return None
    return nodeid.split("[", 1)[1].split("-", 1)[0]


class SpreadLongTests:
    """`--dist loadfile`, except that each test of SPREAD_FILES is a unit of its own and the corpus's
    entries of one exercise are one unit. (xdist's
    `loadgroup` would do it with marks, but with pytest 9 the groups never reach the scheduler:
    xdist renames `item._nodeid`, which pytest no longer reads.) Registered only where xdist is."""

    @staticmethod
    def pytest_xdist_make_scheduler(config, log):
        if config.getvalue("dist") != "loadfile":
            return None
        from xdist.scheduler import LoadFileScheduling

        class Scheduling(LoadFileScheduling):
            def _split_scope(self, nodeid: str) -> str:
                file = nodeid.split("::", 1)[0]
                exercise = _corpus_exercise(nodeid)
                if exercise:
                    return f"{file}::{exercise}"
                return nodeid if file.rsplit("/", 1)[-1] in SPREAD_FILES else file

        config.option.loadscopereorder = False  # collection order: the long tests first (below)
        return Scheduling(config, log)


#: kernel-free tests that take seconds each, because they export, convert, train or generate: marked
#: `heavy` (by node-id prefix), they run in the grading tier and keep `make test-fast` a quick inner
#: loop. Measured with `--durations=0` on the fast tier.
#: the third blind round's corpus entries (about 180 s of CPU in all): the heavy tier, so the fast one stays short
#: (the seventh's, 05.rewrite_rule, are rules the check applies since stop 46: 0.02-0.07 s an evaluation)
#: the twelfth's (444 answers over 30 exercises, about 50 s of CPU outside the heavy exercises): the heavy tier too
HEAVY_BLIND_ROUNDS = ("-blind3-", "-blind12-", "-blind13-", "-blind14-", "-blind15-")
#: the exercises whose every corpus entry is heavy, the longest first (seconds of CPU in all, measured)
HEAVY_EXERCISES = ("09.export_dynamic", "11.device_decode", "03.raw_input", "03.dynamic_batch", "03.custom_op",
                   "09.generate", "11.placement", "07.ort_file", "08.web_model", "10.custom_converter", "10.to_onnx")
HEAVY = (
    *(f"tests/test_corpus.py::test_corpus_entry_scores_by_the_rule[{ex}-" for ex in HEAVY_EXERCISES),
    "tests/test_l07.py::test_ort_file_",  # a conversion to ORT format in their fixture (5 s)
    "tests/test_l07.py::test_answers_survive_the_grader_round_trip",  # the same fixture (7.7 s)
    # the corpus's training-mode model, a dynamo export (7 s, once per worker)
    "tests/test_l03.py::test_training_mode_nodes_are_found",
    "tests/test_l03.py::test_dynamic_batch_says_what_is_wrong[<lambda>-same logits at any batch size-training mode]",
    "tests/test_l03.py::test_dynamic_batch_says_what_is_wrong[<lambda>-same logits as the course model-exported in",
    "tests/test_l11.py::test_decoder_on_webgpu_decodes_as_the_cpu",  # the WebGPU shaders' first compile (5 s)
    "tests/test_l08.py::test_wrong_answers_get_precise_messages[08.web_model-",
    "tests/test_l08.py::test_answers_survive_the_grader_round_trip",  # exports the web model (8 s)
    "tests/test_kernel_server.py::test_reused_torchlib_list_changes_no_export",  # two exports (6 s)
    "tests/test_l09.py::test_course_model_command_retrains_the_transformer",
    "tests/test_l09.py::test_export_for_genai_runs_in_genai_with_the_same_tokens",
    "tests/test_l09.py::test_export_with_a_fixed_length_is_named",
    "tests/test_l09.py::test_export_with_a_size_one_example_is_told_the_trap",  # two exports
    "tests/test_library.py::test_course_model_command_regenerates_weights_and_hash",
    "tests/test_library.py::test_doctor_cli",
)


#: the release's public checks of the exercises that run a WebGPU decoder or export per call (14 s of CPU)
THOROUGH_PUBLIC = ("11.device_decode", "11.placement")


def _mark_thorough(items) -> None:
    """A heavy exercise's blind entries (every round: once a judge has met a round they are regression
    tests), its own entries' runs at the notebook's seed and the heaviest public checks are `thorough`:
    `make test-all` runs them; `make test` keeps each exercise's own entries at the hidden seed (what a
    grade is: the grader's data path, and the panel beside it where the judge does not export per call).
    They are the corpus's costliest share: their answers export a model each. Run `make test-thorough`
    whenever one of these judges changes."""
    for item in items:
        ex = _corpus_exercise(item.nodeid)
        if ex in HEAVY_EXERCISES and (item.callspec.params["entry"].blind or item.nodeid.endswith("@notebook]")):
            item.add_marker(pytest.mark.thorough)   # @notebook: test_corpus.py's NOTEBOOK_SUFFIX
        elif "test_public_checks.py::" in item.nodeid and any(f"[{x}]" in item.nodeid for x in THOROUGH_PUBLIC):
            item.add_marker(pytest.mark.thorough)


@pytest.hookimpl(tryfirst=True)  # before -m deselects: nbval cells get their marker first
def pytest_collection_modifyitems(config, items):
    """nbval cells are the `notebooks` tier; the last cell of each notebook closes its budget check.
    A notebook whose outputs come from a browser (lesson 08) is compared only where Chromium exists.
    The tests of FIRST come first, so no worker starts a long one while the others finish (the corpus's
    heavy exercises first), then the files with the most tests (xdist's own order for --dist loadfile)."""
    import collections
    import shutil

    per_file = collections.Counter(item.path for item in items)  # xdist's own order (kept by the scheduler)
    first = {name: i for i, name in enumerate(FIRST)}
    heavy = {ex: i for i, ex in enumerate(HEAVY_EXERCISES)}
    items.sort(key=lambda item: (first.get(item.path.name, len(FIRST)), -per_file[item.path],
                                 heavy.get(_corpus_exercise(item.nodeid), len(heavy))))
    for item in items:
        if item.nodeid.startswith(HEAVY) or any(r in item.nodeid for r in HEAVY_BLIND_ROUNDS):
            item.add_marker(pytest.mark.heavy)
    _mark_thorough(items)

    last: dict[str, object] = {}
    for item in items:
        if _is_nbval_cell(item):
            item.add_marker(pytest.mark.notebooks)
            last[str(item.parent.path)] = item
    for item in last.values():
        item.labkit_budget_last = True
    for item in reversed(items):  # the first cell of each notebook (its kernel's start is not a cell)
        if _is_nbval_cell(item):
            item.parent.labkit_first = item
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
    """On unless LABKIT_BUDGETS=0 (a maintainer's run on a slow machine, or a test of the rule itself)."""
    return os.environ.get("LABKIT_BUDGETS", "1") != "0"


def _kernel_pid(item) -> int | None:
    km = getattr(getattr(item.parent, "kernel", None), "km", None)
    proc = getattr(getattr(km, "provisioner", None), "process", None) or getattr(km, "kernel", None)
    return getattr(proc, "pid", None)


def _kernel_peak_mb(pid: int | None) -> float | None:
    """Peak resident memory (VmHWM) of the kernel process nbval started for this notebook, in MB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, TypeError, ValueError):
        pass
    return None


def _kernel_cpu_seconds(pid: int | None) -> float | None:
    """CPU time (user + system, its finished children included) the kernel process has used."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, TypeError, ValueError, IndexError):
        return None


def _budget_problem(name: str, seconds: float, cpu: float | None, peak_mb: float | None) -> str | None:
    """Time counts as min(wall, kernel CPU): a busy machine stretches the wall clock but adds no CPU
    time, and a lesson that computes longer than its budget spends both."""
    from labkit.notebooks import BUDGET_MB, BUDGET_SECONDS, budget_slack

    allowed = BUDGET_SECONDS * budget_slack()
    spent = seconds if cpu is None else min(seconds, cpu)
    if spent > allowed:
        return (f"{name}: its cells ran {seconds:.1f} s ({'?' if cpu is None else f'{cpu:.1f}'} s of kernel CPU), "
                f"over the lesson budget of {BUDGET_SECONDS} s (x{budget_slack():g} slack for a shared CI machine, "
                "LABKIT_BUDGET_SLACK). Shorten it, or move material to an optional part.")
    if peak_mb is not None and peak_mb > BUDGET_MB:
        return f"{name}: its kernel peaked at {peak_mb:.0f} MB, over the lesson budget of {BUDGET_MB} MB."
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Sum the cell time of each notebook nbval runs; at its last cell, fail when over budget."""
    outcome = yield
    if not _is_nbval_cell(item) or not _budgets_on():
        return
    nb = item.parent
    pid = _kernel_pid(item)
    if call.when == "setup" and item is getattr(nb, "labkit_first", None):
        nb.labkit_cpu0 = _kernel_cpu_seconds(pid)  # the kernel's start is not a cell
    if call.when != "call":
        return
    report = outcome.get_result()
    nb.labkit_seconds = getattr(nb, "labkit_seconds", 0.0) + (call.stop - call.start)
    peak = _kernel_peak_mb(pid)
    if peak is not None:
        nb.labkit_peak_mb = max(peak, getattr(nb, "labkit_peak_mb", 0.0))
    if not getattr(item, "labkit_budget_last", False):
        return
    cpu = _kernel_cpu_seconds(pid)
    cpu0 = getattr(nb, "labkit_cpu0", None)
    cpu = None if cpu is None or cpu0 is None else cpu - cpu0
    peak = getattr(nb, "labkit_peak_mb", None)
    report.user_properties.append(("labkit_budget", [nb.path.name, round(nb.labkit_seconds, 1),
                                                     None if cpu is None else round(cpu, 1),
                                                     None if peak is None else round(peak)]))
    problem = _budget_problem(nb.path.name, nb.labkit_seconds, cpu, peak)
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
    terminalreporter.line(f"{'solution':<32} {'wall s':>7} {'CPU s':>7} {'peak MB':>8}")
    for name, seconds, cpu, peak in sorted(_BUDGETS):
        terminalreporter.line(f"{name:<32} {seconds:>7.1f} {'?' if cpu is None else cpu:>7} {'?' if peak is None else peak:>8}")
