"""End to end in a real JupyterLab, driven by headless Chromium (Playwright's Python package).

One JupyterLab server for the module, under the base URL /user/test/ with JUPYTERHUB_SERVICE_PREFIX
set, as on Binder (so a Netron viewer goes through jupyter-server-proxy). It serves a temporary copy
of solutions/ and lessons/. A solution of FULL_RUN (below) has its outputs cleared and `QUICK = True`
in the parameters cell (what CI runs): Run All in the browser, then no error output and no wall of
warnings, every widget rendered (no "Error displaying widget"), every check panel rendered and passed,
every plot drawn, every Netron viewer showing the graph. Every other solution is opened with its
committed outputs (nbval already proved them in the notebooks tier; running it here again would be a
fourth execution): the same checks on what a reader sees before running anything. Both are shown at
1024x768 with the file browser open, as on a laptop: every code line, printed line, figure and HTML output
of every lesson is measured against its cell's width (`fits_1024`) and screenshot at 1024 px. For lesson 01 (00 until 01 exists): the
lesson runs with every panel "not attempted", then an exercise is typed into the answer cell's editor,
run, and its panel turns to passed; the quiz is answered by clicking its radio buttons. Every quiz of every
lesson, in one generated notebook, is laid out at 1024x768 and 1280x800 (options wrap beside their radio
button, nothing overlaps); saved, closed and reopened, quizzes and other widgets stay readable.

Screenshots go to test-artifacts/screenshots/ (git-ignored). Needs Debian's `chromium`; never runs
`playwright install`.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_util import CHROMIUM_ARGS, ROOT, LabServer, chromium  # noqa: E402
from labkit.notebooks import BUDGET_SECONDS, budget_slack  # noqa: E402

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(chromium() is None, reason="Chromium is not installed (Debian: apt-get install chromium; "
                                                  "`make test` does it when run as root)"),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed")

PREFIX = "/user/test/"
CURRENT = ".jp-NotebookPanel:not(.lm-mod-hidden)"   # the notebook on screen
SHOTS = ROOT / "test-artifacts" / "screenshots"
#: whole-notebook screenshots, for a person to look at: `LABKIT_SCREENSHOTS=0` (.ci/run, where the clone and
#: its screenshots are thrown away) skips them, about 3 s a lesson; a failure's screenshot is always taken
WHOLE_SHOTS = os.environ.get("LABKIT_SCREENSHOTS", "1") != "0"
SOLUTIONS = sorted((ROOT / "solutions").glob("[0-9][0-9]*_*.ipynb"))   # 09_transformer, 09b_generation


def _full_run() -> set[str]:
    """Solutions Run All executes in the browser: LABKIT_BROWSER_FULL ("all", or lesson numbers "02,05"),
    else those whose committed outputs hold an IFrame (a Netron viewer: only a browser proves it draws),
    else the first solution."""
    chosen = os.environ.get("LABKIT_BROWSER_FULL", "").strip()
    if chosen == "all":
        return {p.stem for p in SOLUTIONS}
    if chosen:
        wanted = {x.strip() for x in chosen.split(",")}   # 09: both of lesson 09's notebooks; 09b: that one
        return {p.stem for p in SOLUTIONS if {p.stem[:2], p.stem.split("_", 1)[0]} & wanted}
    framed = {p.stem for p in SOLUTIONS if "<iframe" in p.read_text(encoding="utf-8").lower()}
    return framed or {p.stem for p in SOLUTIONS[:1]}


FULL_RUN = _full_run()
#: one notebook's Run All: the lesson's time budget with CI's slack, twice over for the browser's own
#: rendering and the kernel's start beside a second test worker (240 s at the defaults)
RUN_TIMEOUT_S = int(2 * BUDGET_SECONDS * budget_slack()) + 60
WIDTH = 1280
ERROR_LINE = re.compile(r"^\s*[A-Za-z_.]*(Error|Exception)\b")  # "ValueError: ...", "onnx...Error ..."
STDERR_WALL_LINES = 5        # more stderr lines than this in one cell is a wall of logs
FILL = {"01": "01.versions", "00": "00.relu"}   # the exercise typed in the browser, per lesson


def _fill_lesson() -> str:
    for lesson in FILL:
        if list((ROOT / "lessons").glob(f"{lesson}_*.ipynb")) and list((ROOT / "solutions").glob(f"{lesson}_*.ipynb")):
            return lesson
    pytest.skip("neither lesson 01 nor lesson 00 exists")


# ------------------------------------------------------------------ fixtures


def _prepare(src: Path, dst: Path) -> None:
    """Copy a notebook with its outputs cleared and QUICK = True (what CI runs); a solution only
    opened (not in FULL_RUN) keeps its committed outputs."""
    if src.parent.name == "solutions" and src.stem not in FULL_RUN:
        shutil.copy(src, dst)
        return
    nb = nbformat.read(src, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            if "parameters" in cell.metadata.get("tags", []):
                cell.source = re.sub(r"(?m)^QUICK\s*=\s*False\b", "QUICK = True", cell.source)
    nbformat.write(nb, dst)


QUIZZES = "every_quiz.ipynb"   # written into the server's root: one cell per quiz of every lesson


def all_quizzes() -> list:
    """Every quiz of every lesson that has an exercise module (labkit/exercises/lNN.py)."""
    import pkgutil

    import labkit.exercises
    from labkit.checks import lesson_exercises

    lessons = sorted(m.name[1:] for m in pkgutil.iter_modules(labkit.exercises.__path__)
                     if re.fullmatch(r"l\d\d", m.name))
    return [e for lesson in lessons for e in lesson_exercises(lesson) if e.kind == "quiz"]


def _write_quiz_notebook(path: Path) -> None:
    """What a learner sees in each lesson's quiz answer cell (nothing chosen yet), all in one notebook."""
    cells = [nbformat.v4.new_code_cell("import labkit\nfrom labkit import check"),
             nbformat.v4.new_code_cell("import ipywidgets\nipywidgets.IntSlider(description='a widget')"),
             nbformat.v4.new_code_cell("from collections import Counter\nfrom labkit.viz import op_diff_explorer\n"
                                       "op_diff_explorer({'DISABLE': Counter(Conv=2, Relu=2), 'ALL': Counter(FusedConv=2)})")]
    for e in all_quizzes():
        var = f"quiz_{e.lesson}"
        blank = "{" + ", ".join(f'"{q.key}": None' for q in e.questions) + "}"
        cells.append(nbformat.v4.new_code_cell(f'{var} = {blank}\nlabkit.quiz_buttons("{e.id}", {var})',
                                               metadata={"tags": [f"answer:{e.id}"]}))
    nbformat.write(nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}), path)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser-course")
    for folder in ("solutions", "lessons"):
        (root / folder).mkdir()
        for nb in sorted((ROOT / folder).glob("*.ipynb")):
            _prepare(nb, root / folder / nb.name)
    _write_quiz_notebook(root / QUIZZES)
    state = tmp_path_factory.mktemp("browser-lab")
    tracker = state / "settings/@jupyterlab/notebook-extension/tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    # every cell attached to the DOM, so the checks below and the screenshots see the whole notebook
    tracker.write_text(json.dumps({"windowingMode": "none"}))
    with LabServer(root, state, base_url=PREFIX, env={"JUPYTERHUB_SERVICE_PREFIX": PREFIX}) as server:
        yield server


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def _offline(route):
    """Only the local server is reachable (Netron would ask ipinfo.io and Google Analytics)."""
    host = route.request.url.split("/")[2]
    if host.split(":")[0] in ("127.0.0.1", "localhost"):
        route.continue_()
    else:
        route.abort()


def open_lab(browser, lab: LabServer, workspace: str, viewport: dict) -> tuple:
    """(context, page, JavaScript errors) of JupyterLab in a fresh layout (workspace `workspace`, reset)."""
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(60_000)
    context.route("**/*", _offline)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(f"{lab.url}lab/workspaces/{workspace}?reset&token={lab.token}")
    pg.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell && window.jupyterapp.started !== undefined",
                         timeout=180_000)
    pg.evaluate("async () => { await window.jupyterapp.started; await window.jupyterapp.restored; }")
    return context, pg, errors


@pytest.fixture(scope="module")
def lab_page(browser, lab):
    """One JupyterLab page for the module: loading JupyterLab once saves ~10 s per notebook."""
    context, pg, errors = open_lab(browser, lab, "browser-tests", {"width": WIDTH, "height": 900})
    pg.evaluate("() => { if (!window.jupyterapp.shell.leftCollapsed) window.jupyterapp.shell.collapseLeft(); }")
    yield pg, errors
    context.close()


def _page_for_a_test(shared: tuple, lab: LabServer, viewport: dict | None = None):
    """A module's page lent to one test: its JavaScript errors from now on (`page.console_errors`); after
    the test its notebooks closed, its viewport set back to `viewport` if given, the kernels shut down."""
    pg, errors = shared
    errors.clear()
    pg.console_errors = errors
    yield pg
    close_notebooks(pg)
    if viewport:
        pg.set_viewport_size(viewport)
    lab.shutdown_kernels()


@pytest.fixture
def page(lab_page, lab):
    yield from _page_for_a_test(lab_page, lab)


# ------------------------------------------------------------------ driving JupyterLab

KERNEL_IDLE = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!(k && k.status === 'idle' && w.content && w.content.widgets && w.content.widgets.length);
}"""

RUN_ALL = """() => {
  window.__labkitRun = undefined;
  window.jupyterapp.commands.execute('notebook:run-all-cells')
    .then(r => { window.__labkitRun = 'done:' + r; }, e => { window.__labkitRun = 'failed:' + e; });
}"""

# What each cell of the current notebook holds (model) and shows (DOM).
CELLS = """() => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  const text = t => Array.isArray(t) ? t.join('') : String(t || '');
  return nb.widgets.map((c, i) => {
    const m = c.model;
    const area = c.node.querySelector('.jp-Cell-outputArea');
    const q = s => area ? Array.from(area.querySelectorAll(s)) : [];
    return {
      index: i, type: m.type, tags: m.getMetadata('tags') || [],
      execution_count: m.type === 'code' ? m.executionCount : null,
      source: m.sharedModel.getSource(),
      outputs: m.type !== 'code' ? [] : m.outputs.toJSON().map(o => ({
        type: o.output_type, name: o.name || null, mimes: Object.keys(o.data || {}),
        text: o.output_type === 'stream' ? text(o.text).slice(0, 3000)
            : o.output_type === 'error' ? (o.ename + ': ' + o.evalue).slice(0, 3000) : ''})),
      panels: q('.labkit-check').map(e => e.className),
      widgets: q('.jp-OutputArea-output > .jupyter-widgets').length,
      radios: q('.widget-radio-box').length,
      static_quiz: q('.labkit-quiz-static').length,
      images: q('.jp-RenderedImage img').map(e => e.complete && e.naturalWidth > 0),
      iframes: q('iframe').map(e => e.getAttribute('src')),
      stderr: q('[data-mime-type="application/vnd.jupyter.stderr"]').map(e => e.textContent.slice(0, 3000)),
      widget_errors: q('.jp-OutputArea-output').map(e => e.textContent)
        .filter(t => t.includes('Error displaying widget') || t.includes('Loading widget...')),
    };
  });
}"""

# No widget still "Loading widget..." and every image decoded. (A widget closed by the kernel, such as a
# finished tqdm bar with leave=False, legitimately leaves an empty output.)
WIDGETS_RENDERED = """() => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  return nb.widgets.every(c => {
    const area = c.node.querySelector('.jp-Cell-outputArea');
    if (!area) return true;
    return Array.from(area.querySelectorAll('.jp-OutputArea-output')).every(e => !e.textContent.includes('Loading widget...'))
      && Array.from(area.querySelectorAll('.jp-RenderedImage img')).every(e => e.complete);
  });
}"""


def open_notebook(page, lab: LabServer, rel: str) -> None:
    """Open `rel` (relative to the server's root) as a learner would, and wait for its kernel to be idle."""
    page.evaluate("async (path) => { await window.jupyterapp.commands.execute('docmanager:open', {path}); }", rel)
    page.wait_for_function("(path) => { const w = window.jupyterapp.shell.currentWidget; "
                           "return w && w.context && w.context.path === path; }", arg=rel, timeout=60_000)
    page.wait_for_function(KERNEL_IDLE, timeout=180_000)


def close_notebooks(page) -> None:
    """Shut down the kernels of the open notebooks and close them without saving."""
    page.evaluate("""async () => {
      for (const w of Array.from(window.jupyterapp.shell.widgets('main'))) {
        if (w.sessionContext) { try { await w.sessionContext.shutdown(); } catch (e) {} }
        if (w.context) w.dispose();
      }
    }""")


def run_all(page, lab: LabServer, name: str) -> list[dict]:
    """Run > Run All Cells; wait until done and every widget and image is rendered; return the cells."""
    page.evaluate(RUN_ALL)
    try:
        page.wait_for_function("() => window.__labkitRun !== undefined", timeout=RUN_TIMEOUT_S * 1000, polling=500)
    except sync_api.TimeoutError:
        screenshot(page, f"{name}-timeout", always=True)
        pytest.fail(f"{name}: Run All did not finish within {RUN_TIMEOUT_S} s\n{lab.log_tail(2000)}")
    state = page.evaluate("() => window.__labkitRun")
    assert state.startswith("done"), f"{name}: Run All {state}"
    page.wait_for_function(KERNEL_IDLE, timeout=60_000)
    try:
        page.wait_for_function(WIDGETS_RENDERED, timeout=30_000, polling=250)
    except sync_api.TimeoutError:
        pass  # reported precisely by check_rendered
    return page.evaluate(CELLS)


def screenshot(page, name: str, width: int = WIDTH, *, always: bool = False) -> Path | None:
    """The whole notebook: the viewport stretched to the notebook's height, in parts of at most 30 000 px
    (Chromium's limit; lesson 09 is taller) named `name.png`, `name-2.png`, ...; returns the first. None
    when screenshots are off (`WHOLE_SHOTS`), unless `always` (what a failure leaves to look at)."""
    if not (WHOLE_SHOTS or always):
        return None
    SHOTS.mkdir(parents=True, exist_ok=True)
    outer = "document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer')"
    height = page.evaluate(f"() => {{ const o = {outer}; return o ? o.scrollHeight : 0; }}")
    size = page.viewport_size
    tall = min(max(900, height + 160), 30_000)
    page.set_viewport_size({"width": width, "height": tall})
    paths, top = [], 0
    while True:
        page.evaluate(f"(top) => {{ const o = {outer}; if (o) o.scrollTop = top; }}", top)
        page.wait_for_timeout(300)
        paths.append(SHOTS / (f"{name}.png" if not paths else f"{name}-{len(paths) + 1}.png"))
        page.screenshot(path=str(paths[-1]))
        top += tall - 400   # the notebook shows less than its window (menus, toolbar): parts overlap
        if top >= height or len(paths) == 5:
            break
    page.set_viewport_size(size)
    return paths[0]


def _where(cell: dict) -> str:
    first = cell["source"].strip().splitlines()[0][:80] if cell["source"].strip() else "(empty)"
    return f"cell {cell['index']} {cell['tags'] or ''} `{first}`"


def check_rendered(cells: list[dict], *, status: str, name: str, expect_images: int = 0, live: bool = True) -> dict:
    """Assert what a reader must see; returns a summary (counts) of what was checked. `live=False`: the
    outputs are committed ones, without a kernel (a quiz widget needs one to show its radio buttons)."""
    problems = []
    code = [c for c in cells if c["type"] == "code"]
    for c in code:
        where = _where(c)
        if c["execution_count"] is None:
            problems.append(f"{where} did not run")
        for o in c["outputs"]:
            if o["type"] == "error":
                problems.append(f"{where} raised {o['text']}")
        stderr = "".join(o["text"] for o in c["outputs"] if o["type"] == "stream" and o["name"] == "stderr")
        stderr_lines = [line for line in stderr.splitlines() if line.strip()]
        # an error is a traceback or a line that starts with an exception name; a warning a lesson
        # re-shows on purpose (labkit.quiet(show=...)) may mention an error class inside its text
        if "Traceback" in stderr or any(ERROR_LINE.match(line) for line in stderr_lines):
            problems.append(f"{where} printed an error to stderr: {stderr[:500]}")
        elif len(stderr_lines) > STDERR_WALL_LINES:
            problems.append(f"{where} shows a wall of {len(stderr_lines)} stderr lines: {stderr[:500]}")
        if any("Traceback" in t for t in c["stderr"]):
            problems.append(f"{where} shows a traceback")
        if c["widget_errors"]:
            problems.append(f"{where}: {c['widget_errors'][0][:300]}")
        if sum(c["images"]) < sum("image/png" in o["mimes"] for o in c["outputs"]):
            problems.append(f"{where} has a plot that did not render ({c['images']})")
        checks = [t for t in c["tags"] if t.startswith("check:")]
        if checks:
            if not c["panels"]:
                problems.append(f"{where} shows no check panel")
            elif f"labkit-{status}" not in c["panels"][-1].split():
                problems.append(f"{where} panel is `{c['panels'][-1]}`, expected labkit-{status}")
        quiz = [t for t in c["tags"] if t.startswith("answer:") and t.endswith(".quiz")]
        if quiz and live and not (c["widgets"] and c["radios"]):
            problems.append(f"{where}: the quiz's answer cell shows no radio buttons")
        if quiz and not live and not c["static_quiz"]:
            problems.append(f"{where}: the quiz's answer cell shows no copy of its questions")
    summary = {
        "code cells": len(code),
        "check panels": sum(1 for c in code if any(t.startswith("check:") for t in c["tags"])),
        "quizzes": sum(1 for c in code if any(t.startswith("answer:") and t.endswith(".quiz") for t in c["tags"])),
        "widgets": sum(c["widgets"] for c in code),
        "plots": sum(sum(c["images"]) for c in code),
        "iframes": sum(len(c["iframes"]) for c in code),
    }
    if summary["check panels"] + summary["quizzes"] == 0:
        problems.append("no check cell (tag check:NN.name) and no quiz in the notebook")
    if summary["plots"] < expect_images:
        problems.append(f"the committed notebook has {expect_images} plot(s), the browser drew {summary['plots']}")
    assert not problems, f"{name}:\n- " + "\n- ".join(problems)
    return summary


def check_netron_frames(page, name: str) -> None:
    """Every Netron IFrame (src <prefix>proxy/<port>/) loads Netron through the proxy and draws the graph.

    On a fresh browser profile Netron first asks for cookie consent: click Accept, as a learner would.
    (Netron overrides window.eval, so only locators are used inside its frame, never evaluate.)
    """
    frames = page.locator(f"{CURRENT} .jp-OutputArea-output iframe")
    for i in range(frames.count()):
        el = frames.nth(i)
        src = el.get_attribute("src") or ""
        if "/proxy/" not in src:
            continue
        assert src.startswith(PREFIX + "proxy/") and src.endswith("/"), f"{name}: Netron IFrame src {src!r}"
        el.scroll_into_view_if_needed()
        frame = page.frame_locator(f"{CURRENT} .jp-OutputArea-output iframe").nth(i)
        graph = frame.locator("#canvas .node").first
        accept = frame.get_by_role("button", name="Accept")
        try:
            accept.or_(graph).first.wait_for(state="attached", timeout=60_000)
            if accept.is_visible():   # what a learner sees first (the lesson says what it is and what to click)
                el.screenshot(path=str(SHOTS / f"solution-{name}-netron-{i}-splash.png"))
                accept.click()
            graph.wait_for(state="attached", timeout=60_000)
        except sync_api.TimeoutError:
            el.screenshot(path=str(SHOTS / f"{name}-netron-{i}.png"))
            body = frame.locator("body").inner_text(timeout=5_000)[:300]
            pytest.fail(f"{name}: Netron at {src} drew no graph; it shows {body!r}")
        el.screenshot(path=str(SHOTS / f"solution-{name}-netron-{i}.png"))


def _committed_images(path: Path) -> int:
    nb = nbformat.read(path, as_version=4)
    return sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)


# ------------------------------------------------------------------ tests


RUN = [p for p in SOLUTIONS if p.stem in FULL_RUN]
OPEN = [p for p in SOLUTIONS if p.stem not in FULL_RUN]


@pytest.mark.parametrize("solution", OPEN, ids=[p.stem for p in OPEN])
def test_solution_opens_in_jupyterlab(laptop_page, lab, solution):
    """A solution opened as committed, at 1024x768 with the file browser open: every output renders
    (panels passed, plots, no widget errors) and fits (`fits_1024`)."""
    page = laptop_page
    open_notebook(page, lab, f"solutions/{solution.name}")
    try:
        page.wait_for_function(WIDGETS_RENDERED, timeout=30_000, polling=250)
    except sync_api.TimeoutError:
        pass  # reported precisely by check_rendered
    cells = page.evaluate(CELLS)
    fit = fits_1024(page, lab, solution)
    summary = check_rendered(cells, status="passed", name=solution.name, expect_images=_committed_images(solution),
                             live=False)
    assert not page.console_errors, f"{solution.name}: JavaScript errors in the page: {page.console_errors[:3]}"
    print(f"{solution.stem} (opened): {summary}; {fit}")


@pytest.mark.parametrize("solution", RUN, ids=[p.stem for p in RUN])
def test_solution_runs_in_jupyterlab(laptop_page, lab, solution):
    """Run All on a solution notebook at 1024x768: clean outputs, widgets, plots, every panel passed, and
    what it printed fits (`fits_1024`)."""
    page = laptop_page
    open_notebook(page, lab, f"solutions/{solution.name}")
    cells = run_all(page, lab, solution.stem)
    fit = fits_1024(page, lab, solution)
    summary = check_rendered(cells, status="passed", name=solution.name, expect_images=_committed_images(solution))
    check_netron_frames(page, solution.stem)
    assert not page.console_errors, f"{solution.name}: JavaScript errors in the page: {page.console_errors[:3]}"
    print(f"{solution.stem}: {summary}; {fit}")


def _solution_body(lesson: str, exercise: str) -> str:
    """The answer as a learner would type it: the solution cell without the BEGIN/END markers."""
    nb = nbformat.read(next((ROOT / "solutions").glob(f"{lesson}_*.ipynb")), as_version=4)
    cell = next(c for c in nb.cells if f"answer:{exercise}" in c.metadata.get("tags", []))
    lines = [line for line in cell.source.splitlines()
             if not re.match(r"\s*### (BEGIN|END) SOLUTION", line) and not re.match(r"\s*# STUB:", line)]
    return "\n".join(lines)


def type_code(page, code: str) -> None:
    """Type `code` into the focused CodeMirror editor, key by key, undoing its auto-indent on each new line."""
    for i, line in enumerate(code.split("\n")):
        if i:
            page.keyboard.press("Enter")
            page.keyboard.press("Shift+Home")   # select the indentation the editor inserted...
            page.keyboard.press("Delete")       # ...and drop it: the line brings its own
        if line:
            page.keyboard.type(line)


def test_learner_fills_an_exercise_in_the_browser(page, lab):
    lesson = _fill_lesson()
    exercise = FILL[lesson]
    path = next((ROOT / "lessons").glob(f"{lesson}_*.ipynb"))
    open_notebook(page, lab, f"lessons/{path.name}")
    cells = run_all(page, lab, path.stem)
    screenshot(page, f"lesson-{path.stem}-start")
    check_rendered(cells, status="not_attempted", name=f"lessons/{path.name}")

    answer = next(c["index"] for c in cells if f"answer:{exercise}" in c["tags"])
    check = next(c["index"] for c in cells if f"check:{exercise}" in c["tags"])
    assert check == answer + 1, "the check cell should follow its answer cell"
    answer_cell = page.locator(f"{CURRENT} .jp-Notebook .jp-Cell").nth(answer)
    check_cell = page.locator(f"{CURRENT} .jp-Notebook .jp-Cell").nth(check)
    assert check_cell.locator(".labkit-check.labkit-not_attempted").count() == 1

    code = _solution_body(lesson, exercise)
    answer_cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    type_code(page, code)
    typed = page.evaluate(f"() => window.jupyterapp.shell.currentWidget.content.widgets[{answer}].model.sharedModel.getSource()")
    assert typed.rstrip() == code.rstrip(), f"the editor holds\n{typed}\ninstead of\n{code}"

    page.keyboard.press("Shift+Enter")   # run the answer cell; the check cell below becomes active
    page.keyboard.press("Shift+Enter")   # run the check cell
    try:
        check_cell.locator(".labkit-check.labkit-passed").wait_for(timeout=60_000)
    except sync_api.TimeoutError:
        screenshot(page, f"lesson-{path.stem}-filled", always=True)
        panel = check_cell.locator(".jp-OutputArea").inner_text()
        pytest.fail(f"{exercise}: the panel did not turn to passed; it shows: {panel[:500]}")
    assert "points" in check_cell.locator(".labkit-check").inner_text()
    check_cell.screenshot(path=str(SHOTS / f"lesson-{path.stem}-{exercise}-passed.png"))

    _answer_quiz_by_clicking(page, lesson, cells, path.stem)
    screenshot(page, f"lesson-{path.stem}-filled")
    assert not page.console_errors, f"JavaScript errors in the page: {page.console_errors[:3]}"


def quiz_line(quiz_id: str, answers: dict[str, str | None]) -> str:
    """The answer cell's line the quiz buttons write: `quiz_NN = {"q1": "b", ...}`."""
    from labkit.checks import get
    from labkit.checks.quizbox import answer_line

    ex = get(quiz_id)
    return f"quiz_{ex.lesson} = {answer_line(answers, [q.key for q in ex.questions])}"


def click_quiz(page, index: int, quiz_id: str, answers: dict[str, str]) -> None:
    """In the quiz answer cell at `index`, click option `answers[q]` of every question, as a learner does,
    and wait until the clicks are in the cell's source."""
    from labkit.checks import get

    questions = get(quiz_id).questions
    cell = page.locator(f"{CURRENT} .jp-Notebook .jp-Cell").nth(index)
    boxes = cell.locator(".labkit-quiz .widget-radio-box")
    assert boxes.count() == len(questions), f"{quiz_id}: {boxes.count()} radio groups for {len(questions)} questions"
    for i, q in enumerate(questions):
        box = boxes.nth(i)
        box.scroll_into_view_if_needed()
        box.locator("label").filter(has_text=re.compile(rf"^\s*{re.escape(answers[q.key])}\)")).first.click()
    want = quiz_line(quiz_id, answers)
    try:
        page.wait_for_function("""([i, want]) => window.jupyterapp.shell.currentWidget.content.widgets[i]
                                   .model.sharedModel.getSource().includes(want)""", arg=[index, want], timeout=30_000)
    except sync_api.TimeoutError:
        source = page.evaluate(f"() => window.jupyterapp.shell.currentWidget.content.widgets[{index}].model.sharedModel.getSource()")
        said = cell.locator(".labkit-quiz-saved").inner_text()
        pytest.fail(f"{quiz_id}: the clicks did not reach the answer cell; it holds\n{source}\nthe quiz says: {said!r}")
    assert "Saved in the code above" in cell.locator(".labkit-quiz-saved").inner_text()


def run_cell(page, index: int) -> None:
    """Run cell `index` of the current notebook and wait until it finished."""
    before = page.evaluate(f"() => window.jupyterapp.shell.currentWidget.content.widgets[{index}].model.executionCount")
    page.evaluate(f"""async () => {{
      const panel = window.jupyterapp.shell.currentWidget;
      panel.content.activeCellIndex = {index};
      await window.jupyterapp.commands.execute('notebook:run-cell');
    }}""")
    page.wait_for_function(f"""(before) => {{
      const m = window.jupyterapp.shell.currentWidget.content.widgets[{index}].model;
      return m.executionCount !== before && m.executionCount !== null;
    }}""", arg=before, timeout=60_000)
    page.wait_for_function(KERNEL_IDLE, timeout=60_000)


def _answer_quiz_by_clicking(page, lesson: str, cells: list[dict], stem: str) -> None:
    """Click the right option of every quiz question in the answer cell: the clicks are written into its
    code, and the check cell below, run again, passes."""
    from labkit.checks import quiz_answers

    quiz_id = f"{lesson}.quiz"
    answer = next((c["index"] for c in cells if f"answer:{quiz_id}" in c["tags"]), None)
    if answer is None:
        return
    check = next(c["index"] for c in cells if f"check:{quiz_id}" in c["tags"])
    assert check == answer + 1, f"{quiz_id}: the check cell should follow its answer cell"
    click_quiz(page, answer, quiz_id, quiz_answers(quiz_id))
    page.locator(f"{CURRENT} .jp-Notebook .jp-Cell").nth(answer).screenshot(
        path=str(SHOTS / f"lesson-{stem}-{quiz_id}-clicked.png"))
    run_cell(page, check)   # the kernel's dict changed with the clicks: no need to run the answer cell
    page.locator(f"{CURRENT} .jp-Notebook .jp-Cell").nth(check).locator(".labkit-check.labkit-passed").wait_for(
        timeout=30_000)


# ------------------------------------------------------------------ quizzes at any width, widgets after a reopen

# For every quiz on screen: its parts (prompts, option groups, button, panel) and, in each option group,
# the options (labels) overlap nothing; every option holds its visible radio circle, inside its own box,
# and no option runs past the quiz's right edge.
QUIZ_LAYOUT = """(sel) => {
  const problems = []; let options = 0; let quizzes = 0;
  const shown = e => e.checkVisibility({checkOpacity: true, checkVisibilityCSS: true});
  const meets = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const cellOf = e => { const c = e.closest('.jp-Cell'); const src = c ? c.querySelector('.cm-content') : null;
                        return src ? src.textContent.slice(0, 40) : '?'; };
  for (const quiz of document.querySelectorAll(sel + ' .labkit-quiz')) {
    quizzes += 1;
    const where = cellOf(quiz); const q = quiz.getBoundingClientRect();
    const parts = Array.from(quiz.children).filter(shown).map(e => e.getBoundingClientRect()).filter(r => r.height > 0);
    for (let i = 1; i < parts.length; i++)
      if (meets(parts[i - 1], parts[i])) problems.push(`${where}: part ${i} overlaps part ${i - 1} of the quiz`);
    quiz.querySelectorAll('.widget-radio-box').forEach((box, g) => {
      const labels = Array.from(box.querySelectorAll('label'));
      const rects = labels.map(l => l.getBoundingClientRect());
      labels.forEach((label, i) => {
        options += 1;
        const name = `${where} question ${g + 1} option "${label.textContent.slice(0, 30)}"`;
        const input = label.querySelector('input[type=radio]');
        const r = rects[i];
        if (!input || !shown(input)) { problems.push(`${name} has no visible radio button`); return; }
        const c = input.getBoundingClientRect();
        if (c.width < 8 || c.height < 8) problems.push(`${name}: its radio button is ${c.width}x${c.height} px`);
        if (c.left < r.left - 1 || c.right > r.right + 1 || c.top < r.top - 1 || c.bottom > r.bottom + 1)
          problems.push(`${name}: its radio button sits outside the option`);
        if (r.right > q.right + 1) problems.push(`${name} runs past the quiz's right edge`);
        if (r.height < 10) problems.push(`${name} is ${r.height} px high`);
        if (label.scrollHeight > label.clientHeight + 2) problems.push(`${name}: its text spills out of its box`);
        for (let j = 0; j < i; j++) if (meets(rects[j], r)) problems.push(`${name} overlaps option ${j + 1}`);
      });
    });
  }
  return {problems, options, quizzes};
}"""

# What a learner sees of each widget output: visible widget errors, visible static quiz copies, live quizzes.
REOPENED = """(sel) => {
  const shown = e => e.checkVisibility({checkOpacity: true, checkVisibilityCSS: true});
  const outs = Array.from(document.querySelectorAll(sel + ' .jp-OutputArea-output'));
  const errors = outs.filter(e => e.textContent.includes('Error displaying widget') && shown(e)
                                  && parseFloat(getComputedStyle(e).fontSize) > 0)
                     .map(e => e.textContent.slice(0, 100));
  const said = outs.filter(e => e.textContent.includes('Error displaying widget') && shown(e))
                   .map(e => getComputedStyle(e, '::after').content);
  return {errors, said,
          static_shown: Array.from(document.querySelectorAll(sel + ' .labkit-quiz-static')).filter(shown).length,
          other_static_shown: Array.from(document.querySelectorAll(sel + ' .labkit-static:not(.labkit-quiz-static)')).filter(shown).length,
          static_all: document.querySelectorAll(sel + ' .labkit-quiz-static').length,
          live: Array.from(document.querySelectorAll(sel + ' .labkit-quiz')).filter(shown).length,
          loading: outs.filter(e => e.textContent.includes('Loading widget...')).length};
}"""


def _quiz_layout(page, width: int, height: int, expected_options: int, name: str) -> None:
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_timeout(800)
    found = page.evaluate(QUIZ_LAYOUT, CURRENT)
    screenshot(page, f"{name}-{width}x{height}", width=width)
    assert found["options"] == expected_options, f"{width}x{height}: {found['options']} options on screen, " \
                                                 f"expected {expected_options} ({found['quizzes']} quizzes)"
    assert not found["problems"], f"{width}x{height}:\n- " + "\n- ".join(found["problems"][:20])


def save_close_reopen(page, lab: LabServer, rel: str) -> dict:
    """File > Save, close the notebook (its kernel shut down), open it again: what the learner sees."""
    page.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); }")
    close_notebooks(page)
    lab.shutdown_kernels()
    open_notebook(page, lab, rel)
    page.wait_for_function("(sel) => !Array.from(document.querySelectorAll(sel + ' .jp-OutputArea-output'))"
                           ".some(e => e.textContent.includes('Loading widget...'))", arg=CURRENT, timeout=60_000)
    page.wait_for_timeout(500)
    return page.evaluate(REOPENED, CURRENT)


def test_every_quiz_fits_a_laptop_screen_and_survives_a_reopen(page, lab):
    """Every quiz of every lesson at 1024x768 and 1280x800: options wrap beside their radio button and
    overlap nothing. Then saved, closed and reopened: each quiz shows its static copy, no widget error."""
    quizzes = all_quizzes()
    expected = sum(len(q.options) for e in quizzes for q in e.questions)
    open_notebook(page, lab, QUIZZES)
    cells = run_all(page, lab, "every-quiz")
    check_rendered(cells, status="not_attempted", name=QUIZZES)
    try:
        _quiz_layout(page, 1024, 768, expected, "quizzes")
        _quiz_layout(page, 1280, 800, expected, "quizzes")
    finally:
        page.set_viewport_size({"width": WIDTH, "height": 900})
    live = page.evaluate(REOPENED, CURRENT)
    assert live["live"] == len(quizzes) and live["static_shown"] == 0 and live["other_static_shown"] == 0, \
        f"while the kernel runs: {live}"

    seen = save_close_reopen(page, lab, QUIZZES)
    screenshot(page, "quizzes-reopened", width=1024)
    assert seen["live"] == 0, seen
    assert seen["static_all"] == len(quizzes) and seen["static_shown"] == len(quizzes), \
        f"a reopened notebook shows {seen['static_shown']} of {len(quizzes)} quizzes: {seen}"
    assert not seen["errors"], f"a reopened notebook shows widget errors: {seen['errors'][:3]}"
    assert seen["other_static_shown"] == 1, f"lesson 05's explorer shows no static copy: {seen}"
    # a widget that is not a quiz (the slider) says to run its cell again
    assert len(seen["said"]) == 1 and "run this cell again" in seen["said"][0], seen["said"]


def test_a_reopened_lesson_shows_no_widget_error(page, lab):
    """A real lesson, Run All, saved, closed, reopened: no widget error on screen, the quiz readable."""
    lesson = next((ROOT / "solutions").glob("00_*.ipynb"))
    rel = f"solutions/{lesson.name}"
    open_notebook(page, lab, rel)
    run_all(page, lab, lesson.stem)
    seen = save_close_reopen(page, lab, rel)
    screenshot(page, f"reopened-{lesson.stem}")
    assert not seen["errors"], f"{lesson.name} reopened shows widget errors: {seen['errors'][:3]}"
    assert seen["static_shown"] >= 1, f"{lesson.name} reopened: its quiz is not shown ({seen})"
    assert all("run this cell again" in s for s in seen["said"]), seen["said"]


CHECKED = """(i) => Array.from(window.jupyterapp.shell.currentWidget.content.widgets[i].node
  .querySelectorAll('.labkit-quiz .widget-radio-box input:checked')).map(e => e.closest('label').textContent.trim()[0])"""


def test_quiz_clicks_are_saved_reopened_and_graded(page, lab, tmp_path):
    """Lesson 00 as a learner gets it: Run All, click the quiz's answers (nothing typed), save, close,
    reopen: the choices are in the answer cell's code and shown in the quiz; run again, the buttons show
    them. Then the saved notebook goes to the instructor's grader: full quiz marks."""
    import csv
    import subprocess

    from labkit import sandbox
    from labkit.checks import get, quiz_answers

    quiz_id = "00.quiz"
    path = next((ROOT / "lessons").glob("00_*.ipynb"))
    rel = f"lessons/{path.name}"
    open_notebook(page, lab, rel)
    cells = run_all(page, lab, f"quiz-{path.stem}")
    answer = next(c["index"] for c in cells if f"answer:{quiz_id}" in c["tags"])
    key = quiz_answers(quiz_id)
    click_quiz(page, answer, quiz_id, key)
    page.set_viewport_size({"width": 1024, "height": 768})
    try:
        cell = page.locator(f"{CURRENT} .jp-Notebook .jp-Cell").nth(answer)
        cell.scroll_into_view_if_needed()
        cell.screenshot(path=str(SHOTS / "quiz-00-clicked-1024.png"))

        seen = save_close_reopen(page, lab, rel)
        cell = page.locator(f"{CURRENT} .jp-Notebook .jp-Cell").nth(answer)
        cell.scroll_into_view_if_needed()
        cell.screenshot(path=str(SHOTS / "quiz-00-reopened-1024.png"))
    finally:
        page.set_viewport_size({"width": WIDTH, "height": 900})
    source = page.evaluate(f"() => window.jupyterapp.shell.currentWidget.content.widgets[{answer}].model.sharedModel.getSource()")
    assert quiz_line(quiz_id, key) in source, f"the reopened answer cell holds\n{source}"
    assert seen["static_shown"] == 1 and not seen["errors"], seen
    static = cell.locator(".labkit-quiz-static")
    marked = static.locator("li", has_text="◉").all_inner_texts()
    assert [m.split(")")[0].replace("◉", "").strip() for m in marked] == [key[q.key] for q in get(quiz_id).questions], \
        f"the reopened quiz marks {marked}"

    # a fresh kernel: run the imports, then the answer cell; the buttons come back with the saved choices
    run_cell(page, next(c["index"] for c in cells if "import labkit" in c["source"]))
    run_cell(page, answer)
    page.locator(f"{CURRENT} .jp-Notebook .jp-Cell").nth(answer).locator(".labkit-quiz").wait_for(timeout=30_000)
    assert page.evaluate(CHECKED, answer) == [key[q.key] for q in get(quiz_id).questions]

    ok, why = sandbox.bwrap_status()
    if not ok:
        pytest.skip(f"the grader's sandbox is not usable here ({why}); the clicks were saved")
    saved = tmp_path / "class" / "clicker.ipynb"
    saved.parent.mkdir()
    shutil.copy(lab.root_dir / rel, saved)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "labkit.cli", "grade", "00", str(saved.parent), "--out", str(out),
                           "--jobs", "1", "--timeout", "30", "--notebook-timeout", "240", "--no-progress"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out / "grades.csv", newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["exercise"] == quiz_id)
    assert row["status"] == "passed" and float(row["points"]) == float(row["max_points"]) == get(quiz_id).points, row


# ------------------------------------------------------------------ every lesson at 1024x768, the file browser open

LAPTOP = {"width": 1024, "height": 768}
TALL = 3000

# Per cell (by id), as drawn: every code line's right edge against its editor's visible right edge, and
# the editor's own overflow (a horizontal scrollbar under the cell); every text output laid out without
# wrapping against its box (wider: JupyterLab wraps it); every image's drawn width against its own (less:
# shrunk); every HTML output wider than its box. Also how many characters fit, from the longest ASCII
# line, and how wide the file browser is. The notebook's scrollbar is forced on, so the notebook has the
# width it has on a laptop whatever its height.
FIT = """async (sel) => {
  const outer = document.querySelector(sel + ' .jp-WindowedPanel-outer');
  outer.style.overflowY = 'scroll';
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  const cut = []; const sideways = []; const lengths = []; const wrapped = {}; const shrunk = {};
  const wide_html = []; let widest = null;
  const cells = window.jupyterapp.shell.currentWidget.content.widgets;
  for (const cell of cells) {
    const id = cell.model.id;
    const scroller = cell.node.querySelector('.jp-InputArea .cm-scroller');
    if (cell.model.type === 'code' && scroller) {
      // CodeMirror draws only the lines near the window: bring each editor into view first
      scroller.scrollIntoView({block: 'start'});
      await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
      const right = scroller.getBoundingClientRect().left + scroller.clientWidth;
      if (scroller.scrollWidth > scroller.clientWidth + 1)
        sideways.push(`cell ${id}: ${scroller.scrollWidth} px in ${scroller.clientWidth} px`);
      for (const line of scroller.querySelectorAll('.cm-line')) {
        const text = line.textContent;
        lengths.push(text.length);
        if (!text.length) continue;
        const range = document.createRange(); range.selectNodeContents(line);
        const r = range.getBoundingClientRect();
        if (r.right > right + 0.5)
          cut.push(`cell ${id}, ${text.length} chars, ${Math.round(r.right - right)} px cut: ${text.trim().slice(0, 50)}`);
        if (/^[\\x20-\\x7e]+$/.test(text) && (!widest || text.length > widest.chars))
          widest = {chars: text.length, width: r.width, room: right - r.left};
      }
    }
    for (const pre of cell.node.querySelectorAll('.jp-OutputArea-output pre')) {
      const before = pre.style.whiteSpace;
      pre.style.whiteSpace = 'pre';
      if (pre.scrollWidth > pre.clientWidth + 1) (wrapped[id] = wrapped[id] || []).push(pre.scrollWidth);
      pre.style.whiteSpace = before;
    }
    for (const img of cell.node.querySelectorAll('.jp-OutputArea-output img')) {
      const drawn = img.getBoundingClientRect().width;
      if (img.naturalWidth && drawn < img.naturalWidth - 1) shrunk[id] = Math.round(100 * drawn / img.naturalWidth);
    }
    for (const html of cell.node.querySelectorAll('.jp-OutputArea-output.jp-RenderedHTMLCommon')) {
      if (html.scrollWidth > html.clientWidth + 1) wide_html.push(`cell ${id}: ${html.scrollWidth} px in ${html.clientWidth} px`);
    }
  }
  const browser = document.getElementById('filebrowser');
  const editor = document.querySelector(sel + ' .cm-scroller');
  const result = {cut, sideways, lengths, wrapped, shrunk, wide_html, font: editor && getComputedStyle(editor).fontSize,
          char_px: widest && widest.width / widest.chars, fit: widest && Math.floor(widest.room / (widest.width / widest.chars)),
          file_browser: browser && browser.checkVisibility() ? Math.round(browser.getBoundingClientRect().width) : 0,
          scrollbar: outer.offsetWidth - outer.clientWidth,
          breaks: (p => p ? getComputedStyle(p).wordBreak : null)(document.querySelector(sel + ' .jp-OutputArea-output pre'))};
  outer.style.overflowY = '';
  return result;
}"""


@pytest.fixture(scope="module")
def laptop_lab(browser, lab):
    """JupyterLab at 1024x768 as a learner first sees it (a fresh layout: the file browser open), in a
    Chromium that draws scrollbars as a desktop one does: Playwright starts headless Chromium with
    --hide-scrollbars, which gives a notebook the 15 px its vertical scrollbar takes on screen. One page for
    the module, as `lab_page`."""
    desktop = browser.browser_type.launch(executable_path=chromium(), args=CHROMIUM_ARGS, headless=True,
                                          ignore_default_args=["--hide-scrollbars"])
    try:
        context, pg, errors = open_lab(desktop, lab, "laptop", LAPTOP)
        yield pg, errors
        context.close()
    finally:
        desktop.close()


@pytest.fixture
def laptop_page(laptop_lab, lab):
    yield from _page_for_a_test(laptop_lab, lab, LAPTOP)


def fits_1024(page, lab: LabServer, solution: Path) -> str:
    """The notebook on screen, at 1024 px with the file browser open: no code line runs past its editor's
    edge or makes it scroll sideways, no printed line wraps and no figure is shrunk except the cells
    tests/test_output_width.py allows (that test's character and pixel model is what this measures), no
    HTML output is wider than its cell. Screenshot `solution-NN_name.png`, 1024 px wide. The layout is
    what `make lab` and Binder install from binder/ (overrides.json, custom.css)."""
    from test_output_width import IMAGE_ALLOWED, TEXT_ALLOWED

    # CodeMirror draws only the lines near the window, and a cell of 60 lines is taller than 768 px: measured
    # 1024 px wide and 3000 px high, where each editor scrolled into view is drawn whole (same width).
    page.set_viewport_size({"width": LAPTOP["width"], "height": TALL})
    page.wait_for_timeout(500)   # fonts and the editors' measurements settle
    found = page.evaluate(FIT, CURRENT)
    page.set_viewport_size(LAPTOP)
    shot = screenshot(page, f"solution-{solution.stem}", width=LAPTOP["width"])
    nb = nbformat.read(lab.root_dir / "solutions" / solution.name, as_version=4)  # as served
    lengths = sorted(len(line) for c in nb.cells if c.cell_type == "code" for line in c.source.split("\n"))
    summary = (f"{found['fit']} characters fit at {found['font']} ({found['char_px']:.2f} px each), file browser "
               f"{found['file_browser']} px -> {shot.relative_to(ROOT) if shot else 'no screenshot (LABKIT_SCREENSHOTS=0)'}")
    name = solution.name
    assert found["file_browser"] > 0, f"{name}: the file browser is not open in a fresh layout"
    assert found["scrollbar"] > 0, f"{name}: no scrollbar took its room: the width measured is not a laptop's"
    assert sorted(found["lengths"]) == lengths, \
        f"{name}: the page shows {len(found['lengths'])} code lines, the notebook has {len(lengths)}: not all measured"
    assert not found["cut"] and not found["sideways"], (
        f"{name}: {summary}\n{len(found['cut'])} code lines cut, {len(found['sideways'])} code cells scroll "
        "sideways at 1024 px (after changing binder/, `make .venv/.labkit-installed` installs it):\n- "
        + "\n- ".join(found["cut"][:12] + found["sideways"][:3]))
    assert found["fit"] >= 88, f"{name}: {summary}"
    allowed_text = TEXT_ALLOWED.get(solution.stem, (set(), ""))[0]
    wrapped = {c: w for c, w in found["wrapped"].items() if c not in allowed_text}
    shrunk = {c: pct for c, pct in found["shrunk"].items() if c not in IMAGE_ALLOWED.get(solution.stem, {})}
    assert not wrapped, f"{name}: printed lines wrap at 1024 px (cell: widths in px): {wrapped} ({shot})"
    assert not shrunk, f"{name}: figures shrunk at 1024 px (cell: % of their size): {shrunk} ({shot})"
    assert found["breaks"] in (None, "normal"), \
        f"{name}: a long printed line breaks mid-word (word-break: {found['breaks']}): binder/custom.css is not in effect"
    assert not found["wide_html"], f"{name}: HTML wider than its cell: {found['wide_html'][:3]} ({shot})"
    return summary


# ------------------------------------------------------------------ lesson 08: the link after Run All, your own browser


def test_lesson_08_link_works_after_run_all_and_the_page_reports_back(page, lab):
    """Run All on lesson 08, then click the notebook's link as a learner would: the page opens (through
    jupyter-server-proxy, as on Binder), its 'Test digits' results reach the kernel, and the notebook's
    'Your own browser' cell compares them with Python."""
    path = next((ROOT / "solutions").glob("08_*.ipynb"), None)
    if path is None:
        pytest.skip("no lesson 08")
    open_notebook(page, lab, f"solutions/{path.name}")
    cells = run_all(page, lab, path.stem)
    check_rendered(cells, status="passed", name=path.name)
    link = page.locator(f"{CURRENT} .jp-OutputArea-output a", has_text="the page").first
    href = link.get_attribute("href")
    assert href and href.startswith(PREFIX + "proxy/"), f"the link goes to {href!r}, not through the proxy"
    with page.context.expect_page() as opened:
        link.click()
    tab = opened.value
    try:
        tab.wait_for_function("() => window.labkit && window.labkit.state !== 'loading'", timeout=60_000)
        assert tab.evaluate("() => window.labkit.state") == "ready", tab.evaluate("() => window.labkit.error")
        tab.click("#run-tests")
        tab.wait_for_function("() => (window.labkit.reported || 0) >= 1", timeout=60_000)
        assert "sent to your notebook" in tab.inner_text("#tests")
        tab.screenshot(path=str(SHOTS / "lesson-08-own-browser-page.png"), full_page=True)
    finally:
        tab.close()

    # the learner runs the "Your own browser" cell again
    own = next(c["index"] for c in cells if c["source"].startswith("mine = server.reports()"))
    before = page.evaluate(f"() => window.jupyterapp.shell.currentWidget.content.widgets[{own}].model.executionCount")
    page.evaluate(f"""async () => {{
      const panel = window.jupyterapp.shell.currentWidget;
      panel.content.activeCellIndex = {own};
      await window.jupyterapp.commands.execute('notebook:run-cell');
    }}""")
    page.wait_for_function(f"""(before) => {{
      const m = window.jupyterapp.shell.currentWidget.content.widgets[{own}].model;
      return m.executionCount !== before && m.executionCount !== null;
    }}""", arg=before, timeout=60_000)
    page.wait_for_function(KERNEL_IDLE, timeout=60_000)
    out = page.evaluate(f"""() => window.jupyterapp.shell.currentWidget.content.widgets[{own}].model.outputs.toJSON()
                             .map(o => Array.isArray(o.text) ? o.text.join('') : (o.text || '')).join('')""")
    page.locator(f"{CURRENT} .jp-Notebook .jp-Cell").nth(own).screenshot(path=str(SHOTS / "lesson-08-own-browser-cell.png"))
    assert "your browser:" in out and "Chrome" in out, out
    assert "fp32" in out and "100%" in out, out
