"""`labkit clean` on synthetic notebooks (what it drops, what it keeps, idempotence, the CLI), and the
guard CI runs: every committed solution and lesson is clean."""
from __future__ import annotations

import json
import subprocess
import sys

import nbformat
import pytest

from labkit.clean import clean_file, clean_notebook

from conftest import LESSONS, ROOT, SOLUTIONS

WIDGET = {"model_id": "abc123", "version_major": 2, "version_minor": 0}


def _run_notebook() -> dict:
    """A notebook as papermill leaves it after a run, widget and all."""
    nb = nbformat.v4.new_notebook()
    nb.metadata.update({
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python", "version": "3.11.2"},
        "labkit": {"requires": ["chromium"]},
        "papermill": {"input_path": "/home/someone/onnx-lab/solutions/x.ipynb", "duration": 3.1},
        "widgets": {"application/vnd.jupyter.widget-state+json": {"state": {"abc123": {}}}},
    })
    params = nbformat.v4.new_code_cell("QUICK = False", execution_count=1, metadata={
        "tags": ["parameters"], "papermill": {"duration": 0.01, "status": "completed"},
        "execution": {"iopub.execute_input": "2026-11-23T15:08:05.898865Z"}})
    widget = nbformat.v4.new_code_cell("slider", execution_count=2, metadata={"tags": ["skip-grading"]}, outputs=[
        nbformat.v4.new_output("display_data", data={"text/plain": "IntSlider(value=3)",
                                                     "application/vnd.jupyter.widget-view+json": WIDGET})])
    warn = nbformat.v4.new_code_cell("f", execution_count=3, metadata={"editable": False, "deletable": False,
                                                                        "collapsed": True}, outputs=[
        nbformat.v4.new_output("stream", name="stderr", text="/tmp/ipykernel_19427/2613045775.py:2: UserWarning: x\n"),
        nbformat.v4.new_output("execute_result", execution_count=3,
                               data={"text/plain": "<function f at 0x7f3a2b1c9d30>", "text/html": "<b>f</b>"})])
    nb.cells = [nbformat.v4.new_markdown_cell("# Title", metadata={"tags": ["optional"]}), params, widget, warn]
    return json.loads(nbformat.writes(nb))


def _joined(data: dict) -> dict:
    """Output data with nbformat's lists of lines joined back into strings."""
    return {k: "".join(v) if isinstance(v, list) else v for k, v in data.items()}


def test_clean_drops_run_leftovers_and_keeps_content():
    nb = _run_notebook()
    out = clean_notebook(nb)
    assert set(out["metadata"]) == {"kernelspec", "language_info", "labkit"}
    md, params, widget, warn = out["cells"]
    assert md["metadata"] == {"tags": ["optional"]}
    assert params["metadata"] == {"tags": ["parameters"]}, "papermill and execution timings go, tags stay"
    assert warn["metadata"] == {"editable": False, "deletable": False}
    assert [c["id"] for c in out["cells"]] == [c["id"] for c in nb["cells"]], "cell ids stay"
    assert [c.get("execution_count") for c in out["cells"][1:]] == [1, 2, 3], "nbval compares only run cells"
    assert _joined(widget["outputs"][0]["data"]) == {"text/plain": "IntSlider(value=3)"}, \
        "the widget view goes, its text stays"
    assert "".join(warn["outputs"][0]["text"]) == "<ipython-input>:2: UserWarning: x\n"
    assert _joined(warn["outputs"][1]["data"]) == {"text/plain": "<function f>", "text/html": "<b>f</b>"}
    assert warn["outputs"][1]["execution_count"] == 3
    assert nb["metadata"]["widgets"], "clean_notebook returns a copy"


def test_clean_is_idempotent_and_a_widget_only_output_is_kept():
    nb = _run_notebook()
    only_view = nbformat.v4.new_output("display_data", data={"application/vnd.jupyter.widget-view+json": WIDGET})
    nb["cells"][2]["outputs"].append(json.loads(json.dumps(only_view)))
    once = clean_notebook(nb)
    assert clean_notebook(once) == once
    assert once["cells"][2]["outputs"][1]["data"] == {"application/vnd.jupyter.widget-view+json": WIDGET}, \
        "an output that is only a widget view keeps it (dropping it would leave nbval an output less)"


def test_clean_replaces_a_containers_repr_with_one_line():
    """ipywidgets' repr of a VBox spells out every child (a quiz's CSS and all): a reopened notebook would
    show it as text where the widget was. It becomes WIDGET_NOTE; a short repr stays as it is."""
    from labkit.clean import WIDGET_NOTE

    nb = _run_notebook()
    box = "VBox(children=(HTML(value='<style>\\n.labkit-quiz .widget-radio { width: auto; }'), RadioButtons(…"
    nb["cells"][2]["outputs"].append(json.loads(json.dumps(nbformat.v4.new_output(
        "display_data", data={"text/plain": box.splitlines(keepends=True),
                              "application/vnd.jupyter.widget-view+json": WIDGET}))))
    out = clean_notebook(nb)["cells"][2]["outputs"]
    assert [_joined(o["data"]) for o in out] == [{"text/plain": "IntSlider(value=3)"}, {"text/plain": WIDGET_NOTE}]
    assert clean_notebook(clean_notebook(nb)) == clean_notebook(nb)


def test_labkit_widgets_write_the_one_line_text(monkeypatch):
    """What the quiz buttons and the course's widgets display: their view and WIDGET_NOTE as text, so a
    fresh run's output equals the committed one that `labkit clean` left (nbval compares text/plain)."""
    import ipywidgets

    from labkit.checks.display import widget_bundle
    from labkit.clean import WIDGET_NOTE

    bundle = widget_bundle(ipywidgets.VBox([ipywidgets.HTML("<style>.x {}</style>"), ipywidgets.IntSlider()]))
    assert bundle["text/plain"] == WIDGET_NOTE
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_clean_file_check_then_clean(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(_run_notebook()))
    before = path.read_text()
    assert clean_file(path, check=True) is False and path.read_text() == before, "--check changes nothing"
    assert clean_file(path) is False
    assert clean_file(path, check=True) is True
    nbformat.validate(nbformat.read(path, as_version=4))
    assert "widget-state" not in path.read_text() and "/home/someone" not in path.read_text()


def _cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "labkit.cli", "clean", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def test_cli_check_names_the_file_and_the_fix_then_cleans(tmp_path):
    (tmp_path / "a.ipynb").write_text(json.dumps(_run_notebook()))
    (tmp_path / "b.ipynb").write_text(json.dumps(clean_notebook(_run_notebook())))
    check = _cli("--check", str(tmp_path))
    assert check.returncode == 1
    assert "a.ipynb: not clean" in check.stdout and "run `labkit clean" in check.stdout
    assert "b.ipynb" not in check.stdout
    assert _cli(str(tmp_path)).returncode == 0
    assert _cli("--check", str(tmp_path)).returncode == 0


def test_cli_bad_input_is_a_message_not_a_traceback(tmp_path):
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json")
    for args in ([str(bad)], [str(tmp_path / "missing.ipynb")]):
        proc = _cli(*args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr and "labkit clean:" in proc.stderr, proc.stderr


@pytest.mark.parametrize("path", SOLUTIONS + LESSONS, ids=[f"{p.parent.name}/{p.stem}" for p in SOLUTIONS + LESSONS])
def test_committed_notebook_is_clean(path):
    """CI's guard: a re-run solution diffs only where outputs changed."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    if clean_notebook(nb) != nb:  # pytest.fail, not assert: no diff of two whole notebooks
        pytest.fail(f"{path.relative_to(ROOT)} holds widget state, run metadata or run-specific "
                                      f"text: run `.venv/bin/labkit clean {path.relative_to(ROOT)}` and commit it", pytrace=False)
