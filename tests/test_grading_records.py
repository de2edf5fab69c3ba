"""Records people can read, without a kernel (fast tier, about a second).

A class folder as a platform hands it over: a Moodle file named for Анна Петрова, a plain notebook,
a broken notebook and a `.txt` put there by mistake. Reading it (`batch.read_batch`, no kernel) and
writing records as the grader does must give grades.csv, the summary and the class report that name
each learner as the identity gives it beside the stable id, and list the `.txt` as a problem file
that is not a learner (3 learners, not 4).
"""
from __future__ import annotations

import csv
import io
import json
import re

import pytest

from labkit.cli import main as cli
from labkit.grading import batch, class_report, reports
from labkit.grading.lesson import load_lesson, resolve_lesson
from labkit.grading.results import ExerciseResult, load_run
from labkit.grading.submissions import expand, roots_of
from labkit.grading.verdicts import unjudged

ANNA = "Анна Петрова"


@pytest.fixture(scope="module")
def lesson():
    return load_lesson(resolve_lesson("00"))


def _graded_class(tmp_path, lesson):
    """The folder read and every learner's record written (Anna full marks, the others unjudged)."""
    subs = tmp_path / "subs"
    subs.mkdir()
    solution = lesson.solution_path.read_text()
    (subs / f"{ANNA}_12345_assignsubmission_file_00_setup_check.ipynb").write_text(solution)
    (subs / "bob.ipynb").write_text(solution)
    (subs / "broken.ipynb").write_text("{not json")
    (subs / "notes.txt").write_text("I could not finish exercise 2, sorry!\n")
    out = tmp_path / "out"
    out.mkdir()
    read, learners = batch.read_batch(lesson, expand([str(subs)]), roots_of([str(subs)]), out)
    for s in read:
        if s.error:
            results = [unjudged(ex, s.status, s.error) for ex in lesson.exercises]
        else:
            results = [ExerciseResult(ex.id, ex.title, "passed", float(ex.points), float(ex.points), "ok")
                       for ex in lesson.exercises]
        reports.write_student(out, reports.record(lesson, s, results, "sandbox", "k", out=out))
    return out, read, learners


def test_a_file_that_is_not_a_notebook_is_a_problem_file_not_a_learner(tmp_path, lesson, capsys):
    out, read, learners = _graded_class(tmp_path, lesson)
    assert len(read) == len(learners) == 3, sorted(learners)   # Anna, bob, broken.ipynb (a learner's bad file)
    assert "notes" not in learners and "bob" in learners and "broken" in learners
    assert "1 problem file(s), not notebooks" in capsys.readouterr().err
    manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert [p["submission"].rsplit("/", 1)[-1] for p in manifest["problem_files"]] == ["notes.txt"]
    assert "not a Jupyter notebook" in manifest["problem_files"][0]["why"]
    run = load_run(out)
    assert len(run.learners) == 3 and [p["name"] for p in run.problem_files] == ["notes"]
    summary = reports.finish_run(out, lesson, "sandbox")
    assert "3 learners graded" in summary and "notes.txt (not a Jupyter notebook" in summary
    page = class_report.report_html(load_run(out))
    assert "3 learners (one graded file each)" in page and "1 problem file(s)" in page
    assert re.search(r"<td>notes\.txt</td><td>not a Jupyter notebook", page)


def test_grades_csv_and_the_summary_name_each_learner_beside_the_id(tmp_path, lesson):
    out, read, _ = _graded_class(tmp_path, lesson)
    anna = next(s for s in read if s.name == ANNA)
    assert anna.student.startswith("learner-") and anna.identity.source == "moodle"
    summary = reports.finish_run(out, lesson, "sandbox")
    assert re.search(rf"^{ANNA}\s+{anna.student}\s+{lesson.max_points:g}/", summary, re.M), summary
    rows = list(csv.DictReader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8"))))
    assert list(rows[0]) == reports.COLUMNS and reports.COLUMNS[:2] == ["student", "name"]
    assert {r["name"] for r in rows if r["student"] == anna.student} == {ANNA}
    assert {r["name"] for r in rows if r["student"] == "bob"} == {"bob"}
    # an override rewrites grades.csv through its one writer: the names stay
    ex = lesson.exercises[0].id
    assert cli(["grades", "override", str(out), ANNA, ex, "0", "--reason", "copied"]) == 0
    rows = list(csv.DictReader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8"))))
    got = next(r for r in rows if r["student"] == anna.student and r["exercise"] == ex)
    assert got["name"] == ANNA and got["points"] == "0" and "override" in got["message"]


def test_html_pages_escape_names_and_messages(tmp_path, lesson):
    """The feedback page and the class report come from templates that escape by default: a name, a
    message, a test and a problem file's reason holding markup are shown as text, never run."""
    from labkit.checks.result import TestResult

    evil = "<script>alert(1)</script>"
    out, read, _ = _graded_class(tmp_path, lesson)
    s = next(x for x in read if x.student == "bob")
    s.identity.name = f"Bob {evil}"
    results = [ExerciseResult(ex.id, ex.title, "failed", 0.0, float(ex.points), f"got {evil}",
                              [TestResult(f"t {evil}", False, f"expected `{evil}` **x**")], f"hint {evil}")
               for ex in lesson.exercises]
    rec = reports.record(lesson, s, results, "sandbox", "k", out=out)
    page = reports.feedback_html(rec)
    assert "<script>" not in page and page.count("&lt;script&gt;") >= 4, page
    assert "<code>&lt;script&gt;alert(1)&lt;/script&gt;</code>" in page and "<b>x</b>" in page  # inline Markdown kept
    reports.write_student(out, rec)
    manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
    manifest["problem_files"][0]["why"] = evil
    (out / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    report = class_report.report_html(load_run(out))
    assert "<script>" not in report and "Bob &lt;script&gt;" in report and f"got {evil}" not in report
