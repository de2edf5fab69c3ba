"""`labkit grades`: exports, the class report, feedback returned to learners, overrides — all from a
graded run's files (written here with the grader's own writer, no kernel)."""
from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from labkit.cli import main as cli
from labkit.grading import reports
from labkit.grading.class_report import common_mistakes, mistake_key, report_html
from labkit.grading.exports import canvas_csv, gradescope_results, read_roster, wide_csv
from labkit.grading.release import FEEDBACK_TAG, annotate
from labkit.checks.result import TestResult
from labkit.grading.results import (DERIVED_KEYS, SCHEMA_VERSION, ExerciseResult, Learner, ResultsError, load_run,
                                    read_record, record_json, stored_fields, write_record)

from conftest import ROOT

EXERCISES = [("03.dynamic_batch", "Dynamic batch", 4.0), ("03.faithful", "Faithful", 4.0), ("03.quiz", "Quiz", 2.0)]


def _ex(i, title, most, points, status, message, tests=()):
    return ExerciseResult(i, title, status, float(points), most, message, [TestResult(*t) for t in tests],
                          f"hint for {i}")


def _learner_results(kind: str) -> list[ExerciseResult]:
    d, r, q = EXERCISES
    if kind == "full":
        return [_ex(*d, 4, "passed", "all tests passed"), _ex(*r, 4, "passed", "all tests passed"),
                _ex(*q, 2, "passed", "all tests passed")]
    if kind == "fixed_batch":
        return [_ex(*d, 2, "failed", "2/4 tests passed. batch 7: got shape (1, 10)",
                    [("batch 1", True, "ok"), ("batch 7", False, "expected shape (7, 10), got shape (1, 10)"),
                     ("batch 64", False, "expected shape (64, 10), got shape (1, 10)")]),
                _ex(*r, 4, "passed", "all tests passed"), _ex(*q, 1, "failed", "1/2", [("q2", False, "'a' is not right")])]
    if kind == "div255":
        return [_ex(*d, 4, "passed", "all tests passed"),
                _ex(*r, 1, "failed", "accuracy 18.0%", [("accuracy", False, "accuracy 18.0% on the raw digits, needs 95%")]),
                _ex(*q, 0, "not_attempted", "Not attempted yet")]
    return [_ex(*d, 0, "timeout", "the cell ran longer than 120 s"), _ex(*r, 0, "missing", "did not run"),
            _ex(*q, 0, "missing", "did not run")]


def _notebook(path: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    for i, _, _ in EXERCISES:
        nb.cells += [nbformat.v4.new_code_cell("answer = 1", metadata={"tags": [f"answer:{i}"]}),
                     nbformat.v4.new_code_cell(f'check("{i}", answer)', metadata={"tags": [f"check:{i}"]})]
    nbformat.write(nb, path)
    return path


@pytest.fixture
def run_dir(tmp_path):
    """A graded run of lesson 03 for four learners, written by the grader's reports module."""
    out = tmp_path / "grades03"
    lesson = SimpleNamespace(number="03", name="03_export_pytorch", max_points=10.0)
    for student, kind in [("alice9", "full"), ("bob", "fixed_batch"), ("cyrus7", "div255"), ("=evil", "broken")]:
        from labkit.grading.submissions import clean_name

        name = clean_name(student)
        sub = SimpleNamespace(student=name, path=_notebook(tmp_path / f"{name}.ipynb"), sha="0" * 64)
        reports.write_student(out, reports.record(lesson, sub, _learner_results(kind), "sandbox", "k"))
    return out


ROSTER = "student,id,name,email\nalice9,1001,Alice Liddell,alice@uni.edu\nbob,1002,\"=HYPERLINK(\"\"x\"\")\",bob@uni.edu\nzoe,1003,Zoe,zoe@uni.edu\n"


def test_load_run_reads_what_the_grader_wrote(run_dir):
    run = load_run(run_dir)
    assert run.lesson == "03" and [l.student for l in run.learners] == ["alice9", "bob", "cyrus7", "evil"]
    assert run.max_points == 10 and run.learner("ALICE9").points == 10 and run.learner("bob").points == 7


def test_wide_csv_parses_as_a_spreadsheet_would(run_dir):
    rows = list(csv.DictReader(io.StringIO(wide_csv([load_run(run_dir)]))))
    assert rows[0]["student"] == "max points" and rows[0]["total"] == "10"
    bob = next(r for r in rows if r["student"] == "bob")
    assert (bob["03.dynamic_batch"], bob["03.quiz"], bob["03 total"], bob["total"]) == ("2", "1", "7", "7")


def test_canvas_import_csv_and_roster_report(run_dir, tmp_path):
    (tmp_path / "roster.csv").write_text(ROSTER)
    roster = read_roster(tmp_path / "roster.csv")
    text, m = canvas_csv([load_run(run_dir)], roster)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert rows[0][5] == "ONNX Lab 03_export_pytorch" and rows[1][0] == "Points Possible" and rows[1][5] == "10"
    by_id = {r[1]: r for r in rows[2:]}
    assert by_id["1001"][5] == "10" and by_id["1002"][5] == "7"
    assert "1003" not in by_id, "no row for zoe: a blank cell could erase a grade already in Canvas"
    assert by_id["1002"][0].startswith("'="), "a formula in a name must not run in a spreadsheet"
    assert [e.label for e in m.no_submission] == ["Zoe"]
    assert sorted(l.student for _, l in m.not_on_roster) == ["cyrus7", "evil"]
    assert "Zoe" in m.report() and "cyrus7" in m.report() and "evil" in m.report()


def test_canvas_and_moodle_need_a_roster_with_ids(run_dir, tmp_path, capsys):
    assert cli(["grades", "export", str(run_dir), "--to", "canvas"]) == 2
    assert "needs --roster" in capsys.readouterr().err
    (tmp_path / "r.csv").write_text("student,name\nalice9,Alice\n")
    assert cli(["grades", "export", str(run_dir), "--to", "canvas", "--roster", str(tmp_path / "r.csv")]) == 2
    assert "Canvas ID" in capsys.readouterr().err
    (tmp_path / "roster.csv").write_text(ROSTER)
    out = tmp_path / "moodle.csv"
    assert cli(["grades", "export", str(run_dir), "--to", "moodle", "--roster", str(tmp_path / "roster.csv"),
                "--out", str(out)]) == 0
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert rows[0] == ["Email address", "ONNX Lab 03_export_pytorch"]
    assert sorted(rows[1:]) == [["alice@uni.edu", "10"], ["bob@uni.edu", "7"]]


def test_gradescope_results_follow_the_autograder_format(run_dir, tmp_path):
    assert cli(["grades", "export", str(run_dir), "--to", "gradescope", "--out", str(tmp_path / "gs")]) == 0
    res = json.loads((tmp_path / "gs" / "bob" / "results.json").read_text())
    assert res["score"] == 7 and len(res["tests"]) == 3
    for t in res["tests"]:
        assert set(t) >= {"name", "score", "max_score", "output"} and isinstance(t["score"], (int, float))
    assert sum(t["score"] for t in res["tests"]) == res["score"]
    assert gradescope_results(load_run(run_dir))["alice9"]["tests"][0]["status"] == "passed"


def test_overrides_apply_everywhere_and_are_validated(run_dir, tmp_path, capsys):
    assert cli(["grades", "override", str(run_dir), "bob", "03.dynamic_batch", "4", "--reason",
                "regraded by hand: batch 7 failed on a typo in the prompt"]) == 0
    run = load_run(run_dir)
    ex = run.learner("bob").get("03.dynamic_batch")
    assert ex.points == 4 and ex.graded_points == 2 and ex.overridden and run.learner("bob").points == 9
    assert "9" in [r["total"] for r in csv.DictReader(io.StringIO(wide_csv([run]))) if r["student"] == "bob"]
    assert "regraded by hand" in report_html(run)
    for bad, why in [(["nobody", "03.quiz", "1"], "no graded learner"), (["bob", "03.nope", "1"], "no exercise"),
                     (["bob", "03.quiz", "5"], "outside 0..2"), (["bob", "03.dynamic_batch", "1"], "second override")]:
        assert cli(["grades", "override", str(run_dir), *bad, "--reason", "x"]) == 2
        assert why in capsys.readouterr().err
    (run_dir / "overrides.csv").write_text("student,exercise,points,reason\nbob,03.quiz,2,\n")
    with pytest.raises(ResultsError, match="needs a reason"):
        load_run(run_dir)


def test_class_report_groups_mistakes_and_lists_trouble(run_dir):
    run = load_run(run_dir)
    assert mistake_key("expected shape (7, 10), got shape (1, 10)") == mistake_key("expected shape (64, 10), got shape (1, 10)")
    top = common_mistakes(run, "03.dynamic_batch")
    shapes = [t for t in top if "shape" in t[1]]
    assert len(shapes) == 1 and shapes[0][2] == 1 and shapes[0][0] == "batch 64, batch 7", "one root cause, one row"
    page = report_html(run)
    assert page.count("data:image/png;base64,") == 2
    assert "accuracy 18.0% on the raw digits" in page and "evil" in page and "timeout" in page
    for learner in run.learners:
        assert f"href='students/{learner.student}/feedback.html'" in page
    assert "&lt;" not in "".join(l.student for l in run.learners)


def test_feedback_returns_each_learner_their_own_notebook(run_dir, tmp_path):
    assert cli(["grades", "feedback", str(run_dir), "--out", str(tmp_path / "back")]) == 0
    folders = sorted(p.name for p in (tmp_path / "back").iterdir())
    assert folders == ["alice9", "bob", "cyrus7", "evil"]
    nb = nbformat.read(tmp_path / "back" / "bob" / "03_export_pytorch.ipynb", as_version=4)
    fb = [c for c in nb.cells if FEEDBACK_TAG in c.metadata.get("tags", [])]
    assert len(fb) == 4 and "7 / 10 points" in fb[0].source
    check = next(i for i, c in enumerate(nb.cells) if "check:03.dynamic_batch" in c.metadata.get("tags", []))
    assert "03.dynamic\\_batch" in nb.cells[check + 1].source or "03.dynamic_batch" in nb.cells[check + 1].source
    assert "expected shape \\(7" in nb.cells[check + 1].source or "expected shape (7" in nb.cells[check + 1].source
    text = json.dumps(nb) + (tmp_path / "back" / "bob" / "feedback.html").read_text()
    for other in ("alice9", "cyrus7", "evil"):
        assert other not in text, f"bob's feedback mentions {other}"
    assert (tmp_path / "back" / "bob" / "feedback.html").is_file()
    again = annotate(nbformat.reads(json.dumps(nb), as_version=4), load_run(run_dir), load_run(run_dir).learner("bob"))
    assert sum(FEEDBACK_TAG in c["metadata"].get("tags", []) for c in again["cells"]) == 4, "re-release duplicates"


def test_feedback_markdown_cannot_inject_html(run_dir):
    from labkit.grading.release import feedback_markdown
    md = feedback_markdown(ExerciseResult("03.quiz", "Quiz", "failed", 0, 2, "<script>alert(1)</script> `x` [a](b)"))
    assert "<script>" not in md and "&lt;script&gt;" in md and "\\`x\\`" in md


def _record() -> Learner:
    """A learner record using every field, with text a CSV or a JSON writer could get wrong."""
    exercises = _learner_results("fixed_batch")
    exercises[0].notes = ["a cell above this exercise was edited; your edit was not run"]
    return Learner("zoe", "03", "03_export_pytorch", exercises, name="Zoë Ångström, 张伟", identity={"source": "file"},
                   submission="/class/zoe.ipynb", submission_relative_to_out="../class/zoe.ipynb",
                   other_files=["/class/zoe-old.ipynb"], lesson_version="abc", submission_sha256="0" * 64,
                   cache_key="1" * 64, graded_at="2026-01-01T10:00:00", protection="sandbox", seconds=3.5,
                   cached=False, kernel_starts=1, judge_seconds=0.25, answer_problems=["03.quiz/x is not a regular file"],
                   cells=[{"cell": 0, "what": "ok", "seconds": 0.5, "role": "code", "exercise": None}],
                   regraded_exercises=["03.quiz"])


def test_a_record_round_trips_writer_reader_csv(tmp_path):
    """writer -> reader gives the same record; its grades.csv rows say what the record says."""
    rec = _record()
    path = tmp_path / "results.json"
    write_record(path, rec)
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert raw["schema_version"] == SCHEMA_VERSION and raw["points"] == 7 and raw["max_points"] == 10
    back = read_record(path)
    assert back == rec
    assert back.exercises[0].tests[1] == TestResult("batch 7", False, "expected shape (7, 10), got shape (1, 10)")
    reports.write_csv(tmp_path / "grades.csv", reports.grade_rows([back]))
    rows = list(csv.DictReader(io.StringIO((tmp_path / "grades.csv").read_text())))
    assert [(r["student"], r["lesson"], r["exercise"], r["points"], r["max_points"], r["status"]) for r in rows] == [
        ("zoe", "03", "03.dynamic_batch", "2", "4", "failed"), ("zoe", "03", "03.faithful", "4", "4", "passed"),
        ("zoe", "03", "03.quiz", "1", "2", "failed")]
    assert rows[0]["message"] == rec.exercises[0].message


@pytest.mark.parametrize("change, said", [
    (lambda r: r.update(schema_version=SCHEMA_VERSION + 1), f"version {SCHEMA_VERSION + 1}, newer than"),
    (lambda r: r.update(schema_version=SCHEMA_VERSION - 1), f"version {SCHEMA_VERSION - 1} (written by an older"),
    (lambda r: r.update(schema_version=True), "version True (written by an older"),
    (lambda r: r.pop("schema_version"), "no schema version (written by an older"),
    (lambda r: r.pop("cells"), "no field 'cells'"),
    (lambda r: r.update(seconds="3 s"), "field 'seconds' is not a valid float | None"),
    (lambda r: r["exercises"][0].update(points=float("nan")), "field 'points' is not a valid float"),
    (lambda r: r["exercises"][0].update(status="great"), "field 'status' is not a valid Status"),
    (lambda r: r["exercises"][1]["tests"].append({"name": "t"}), "field 'tests' is not a valid list[TestResult]"),
    (lambda r: r["exercises"].append({"exercise": "../x"}), "an exercise entry without a valid id"),
])
def test_the_reader_refuses_another_version_or_a_malformed_record(tmp_path, change, said):
    path = tmp_path / "results.json"
    raw = record_json(_record())
    change(raw)
    path.write_text(json.dumps(raw))
    with pytest.raises(ResultsError) as e:
        read_record(path)
    assert said in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_a_run_of_an_older_schema_is_one_clear_line(run_dir, capsys):
    path = run_dir / "students" / "bob" / "results.json"
    raw = json.loads(path.read_text())
    del raw["schema_version"]
    path.write_text(json.dumps(raw))
    assert cli(["grades", "export", str(run_dir), "--to", "csv"]) == 2
    err = capsys.readouterr().err
    assert "no schema version" in err and "grade the folder again" in err and err.count("\n") == 1, err


def _documented(heading: str) -> list[list[tuple[str, str]]]:
    """The (field, type) rows of each table in the section `heading` of docs/instructors.md."""
    text = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n## ", 1)[0].split("\n**", 1)[0]
    tables, rows = [], []
    for line in section.splitlines() + [""]:
        m = re.match(r"\| `(\w+)` \| `(.+?)` \|", line)
        if m:
            rows.append((m[1], m[2].replace("\\|", "|")))
        elif rows:
            tables.append(rows)
            rows = []
    return tables


def test_the_documented_results_schema_is_the_dataclasses():
    record, exercise = _documented(f"### The results.json schema (version {SCHEMA_VERSION})")
    derived = dict(DERIVED_KEYS)
    assert record == [("schema_version", derived["schema_version"])] + stored_fields(Learner) + \
        [(k, derived[k]) for k in ("points", "max_points")]
    assert exercise == stored_fields(ExerciseResult)
    assert list(record_json(_record())) == [k for k, _ in record]   # the file holds exactly that, in that order


def test_a_run_folder_that_is_not_one_says_so(tmp_path, capsys):
    assert cli(["grades", "report", str(tmp_path)]) == 2
    assert "no graded run" in capsys.readouterr().err
    (tmp_path / "students" / "x").mkdir(parents=True)
    (tmp_path / "students" / "x" / "results.json").write_text("{not json")
    assert cli(["grades", "report", str(tmp_path)]) == 2
    assert "not valid JSON" in capsys.readouterr().err


def test_cli_report_writes_html(run_dir):
    out = subprocess.run([sys.executable, "-m", "labkit.cli", "grades", "report", str(run_dir)], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert (run_dir / "report.html").read_text().startswith("<!doctype html>")


@pytest.mark.browser
def test_class_report_renders_in_chromium(run_dir):
    """The report opens from disk in a real browser: both figures decode and draw, the tables are there."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from browser_util import CHROMIUM_ARGS, ROOT, chromium

    exe = chromium()
    if exe is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    run = load_run(run_dir)
    (run_dir / "report.html").write_text(report_html(run))
    shots = ROOT / "test-artifacts" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.goto((run_dir / "report.html").as_uri())
        sizes = page.eval_on_selector_all("img", "els => els.map(e => [e.complete, e.naturalWidth, e.naturalHeight])")
        assert len(sizes) == 2 and all(ok and w > 100 and h > 50 for ok, w, h in sizes), sizes
        for anchor in ("#scores", "#exercises", "#nobody", "#mistakes", "#trouble"):
            assert page.locator(anchor).count() == 1
        assert page.locator("table").count() >= 3
        assert "accuracy 18.0%" in page.inner_text("#mistakes ~ h3 + table") or "accuracy 18.0%" in page.inner_text("body")
        page.screenshot(path=str(shots / "class-report.png"), full_page=True)
        browser.close()


@pytest.mark.parametrize("text, cell", [("=HYPERLINK(1)", "'=HYPERLINK(1)"), ("+1+2", "'+1+2"), ("@SUM(A1)", "'@SUM(A1)"),
                                        ("-2+3", "'-2+3"), ("-2.5", "-2.5"), ("4", "4"), ("Zoë =1", "Zoë =1"),
                                        ("a\tb\nc", "a b c")])
def test_every_csv_cell_is_spreadsheet_safe(text, cell):
    """One guard for grades.csv and every export: a leading = + - @ is quoted, numbers are kept."""
    from labkit.text import spreadsheet_safe

    assert spreadsheet_safe(text) == cell
