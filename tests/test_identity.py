"""Learner identity and the instructor's week, replayed without kernels: files named as Canvas, Moodle and
Gradescope download them, non-Latin names, a late resubmission, a notebook whose metadata claims another
learner, rosters as the platforms export them. Every learner must get exactly their own grade in every
output (grades.csv, each export, the report, feedback)."""
from __future__ import annotations

import csv
import io
import json
import os
import time
import unicodedata
from pathlib import Path

import pytest

from labkit import grading
from labkit.cli import main as cli
from labkit.grading import identity, reports
from labkit.grading.class_report import report_html
from labkit.grading.exports import canvas_csv, match, moodle_csv, read_roster
from labkit.grading.results import ExerciseResult, load_run
from labkit.grading.submissions import read_submission, resolve

from conftest import ROOT

LESSON_NB = ROOT / "lessons" / "00_setup_check.ipynb"


@pytest.fixture(scope="module")
def lesson():
    return grading.load_lesson(grading.resolve_lesson("00"))


def names(*paths: str) -> tuple[str, ...]:
    return ("00_setup_check", "lesson00")


# ---------------------------------------------------------------- identity from names


@pytest.mark.parametrize("path, key, name", [
    ("class/mullerzoe_1001_555_00_setup_check.ipynb", "canvas:1001", "mullerzoe"),
    ("class/mullerzoe_late_1001_556_00_setup_check-1.ipynb", "canvas:1001", "mullerzoe"),
    ("class/Zoë Müller_88_assignsubmission_file_00_setup_check.ipynb", "moodle:88", "Zoë Müller"),
    ("class/Иван Петров_89_assignsubmission_file_/00_setup_check.ipynb", "moodle:89", "Иван Петров"),
    ("class/Smith, Anna - lesson00 (1).ipynb", "file:smith, anna", "Smith, Anna"),
    ("class/王小明.ipynb", "file:王小明", "王小明"),
    ("class/Γιώργος Παπαδόπουλος.ipynb", "file:" + identity.fold("Γιώργος Παπαδόπουλος"), "Γιώργος Παπαδόπουλος"),
    ("class/anna/00_setup_check.ipynb", "file:anna", "anna"),
    ("class/bob_00_setup_check.ipynb", "file:bob", "bob"),
    ("class/other_lesson.ipynb", "file:other_lesson", "other_lesson"),
    ("class/Anna Lab 3.ipynb", "file:anna", "Anna"),
])
def test_identity_from_platform_and_file_names(path, key, name):
    ident = identity.from_path(Path(path), names())
    assert (ident.key, ident.name) == (key, name)
    assert "/" not in ident.id and not ident.id.startswith(".") and ident.id.isascii()


@pytest.mark.parametrize("path, key, name", [
    # a Canvas upload whose own file name holds Moodle's marker: Canvas's prefix decides
    ("class/smithjohn_1001_555_x_77_assignsubmission_file_00_setup_check.ipynb", "canvas:1001", "smithjohn"),
    ("class/smithjohn_late_1001_556_77_assignsubmission_file_nb-1.ipynb", "canvas:1001", "smithjohn"),
    # a Moodle learner whose full name looks like a Canvas prefix
    ("class/anna_5_77_assignsubmission_file_00_setup_check.ipynb", "moodle:77", "anna_5"),
    # a Moodle full name holding the marker cannot take learner 7's key: the folder's last marker is Moodle's
    ("class/Eve_7_assignsubmission_file_x_42_assignsubmission_file_/00_setup_check.ipynb", "moodle:42",
     "Eve_7_assignsubmission_file_x"),
])
def test_identity_patterns_cannot_claim_another_platform_or_learner(path, key, name):
    ident = identity.from_path(Path(path), names())
    assert (ident.key, ident.name) == (key, name)


def test_a_flat_moodle_name_with_two_markers_names_no_moodle_learner():
    """Which of two markers is Moodle's cannot be told (full name or the learner's file name): the file
    is named by its file name, in the `file:` namespace, so it can take no Moodle learner's key."""
    ident = identity.from_path(Path("class/Eve_7_assignsubmission_file_x_42_assignsubmission_file_nb.ipynb"), names())
    assert ident.source == "file" and ident.key.startswith("file:")


def test_display_names_are_nfc_and_ids_hash_based_for_non_latin():
    composed, decomposed = "Zoë Müller", unicodedata.normalize("NFD", "Zoë Müller")
    a = identity.from_path(Path(f"{composed}.ipynb"))
    b = identity.from_path(Path(f"{decomposed}.ipynb"))
    assert a.name == composed and b.name == composed and a.id == b.id and a.id.startswith("zoe-muller-")
    ids = {identity.from_path(Path(f"{n}.ipynb")).id for n in ("王小明", "李华", "Анна", "Ольга", "Νίκος")}
    assert len(ids) == 5 and all(i.startswith("learner-") for i in ids), ids  # never student, student-2, ...


def test_gradescope_export_names_each_submission(tmp_path):
    root = tmp_path / "assignment_123_export"
    for sub, nb in (("submission_9001", "00_setup_check.ipynb"), ("submission_9002", "00_setup_check.ipynb")):
        (root / sub).mkdir(parents=True)
        (root / sub / nb).write_text("{}")
    (root / "submission_metadata.yml").write_text(
        "submission_9001:\n  :submitters:\n  - :name: 王小明\n    :sid: '2023001'\n    :email: wang@uni.edu\n"
        "  :created_at: 2026-11-20 10:00:00.000000000 -08:00\n  :score: 0.0\n"
        "submission_9002:\n  :submitters:\n  - :name: \"Zoë Müller\"\n    :sid: '2023002'\n    :email: zoe@uni.edu\n"
        "  :created_at: 2026-11-20 11:00:00.000000000 -08:00\n")
    files = grading.expand([str(root)])
    assert [f.parent.name for f in files] == ["submission_9001", "submission_9002"]  # the .yml is not graded
    got = [identity.from_path(f, names()) for f in files]
    assert [(g.key, g.name, g.email, g.source) for g in got] == [
        ("gradescope:sid:2023001", "王小明", "wang@uni.edu", "gradescope"),
        ("gradescope:sid:2023002", "Zoë Müller", "zoe@uni.edu", "gradescope")]
    assert got[1].timestamp - got[0].timestamp == 3600


def test_ids_never_depend_on_the_other_files(tmp_path, lesson):
    """Adding or removing files never changes anyone else's id (the old ids were file-order counters)."""
    folder = tmp_path / "class"
    folder.mkdir()
    text = LESSON_NB.read_text()
    everyone = ["王小明", "李华", "Иван Петров", "Γιώργος", "Zoë Müller", "alice"]
    for n in everyone:
        (folder / f"{n}.ipynb").write_text(text)
    full = {s.name: s.student for s in resolve([read_submission(f, lesson) for f in grading.expand([str(folder)])])[0]}
    (folder / "李华.ipynb").unlink()
    (folder / "Άννα.ipynb").write_text(text)
    fewer = {s.name: s.student for s in resolve([read_submission(f, lesson) for f in grading.expand([str(folder)])])[0]}
    assert {n: full[n] for n in fewer if n in full} == {n: fewer[n] for n in fewer if n in full}
    assert len(set(full.values())) == len(everyone)


def test_latest_file_of_a_learner_is_graded_the_rest_listed(tmp_path, lesson):
    folder = tmp_path / "canvas"
    folder.mkdir()
    first = folder / "mullerzoe_1001_555_00_setup_check.ipynb"
    late = folder / "mullerzoe_late_1001_556_00_setup_check-1.ipynb"
    other = folder / "smithanna_1002_557_00_setup_check.ipynb"
    for p in (late, first, other):  # the late file is written first: the resubmission counter decides, not mtime
        p.write_text(LESSON_NB.read_text())
    graded, older, res = resolve([read_submission(p, lesson) for p in grading.expand([str(folder)])])
    assert sorted(s.path.name for s in graded) == [late.name, other.name]
    assert [s.path.name for s in older] == [first.name]
    zoe = next(s for s in graded if s.path == late)
    assert zoe.other_files == [str(first)] and any("2 files" in n for n in res.notes)
    # plain names: the newer file (modification time) wins
    a, b = tmp_path / "x" / "alice.ipynb", tmp_path / "y" / "Alice.ipynb"
    for p in (a, b):
        p.parent.mkdir()
        p.write_text(LESSON_NB.read_text())
    os.utime(a, (time.time() - 100, time.time() - 100))
    graded, older, _ = resolve([read_submission(p, lesson) for p in (b, a)])
    assert [s.path for s in graded] == [b] and [s.path for s in older] == [a]


def test_metadata_never_takes_another_learners_rows(tmp_path, lesson):
    folder = tmp_path / "class"
    folder.mkdir()
    nb = json.loads(LESSON_NB.read_text())
    (folder / "bob.ipynb").write_text(json.dumps(nb))
    claim = dict(nb, metadata={**nb["metadata"], "labkit": {"student": "bob"}})
    (folder / "00_setup_check.ipynb").write_text(json.dumps(claim))          # named only by its metadata
    (folder / "carol.ipynb").write_text(json.dumps(claim))                   # file name vs metadata: file wins
    graded, older, res = resolve([read_submission(p, lesson, (str(folder),)) for p in grading.expand([str(folder)])])
    by_id = {s.student: s for s in graded}
    assert by_id["bob"].path.name == "bob.ipynb", "the real bob keeps his plain row"
    assert "carol" in by_id and not older
    claimer = next(s for s in graded if s.identity.source == "metadata")
    assert claimer.student not in ("bob", "carol") and claimer.student.startswith("bob-")
    assert any("metadata says 'bob'" in n for n in res.notes)
    assert any("different learners are called 'bob'" in n for n in res.notes)


# ---------------------------------------------------------------- the week, replayed on synthetic results

CLASS = [  # file as downloaded, display name, Canvas id, email, relu points, quiz points
    ("mullerzoe_late_1001_556_00_setup_check-1.ipynb", "mullerzoe", "1001", "zoe@uni.edu", 2.0, 0.5),
    ("wangxiaoming_1002_557_00_setup_check.ipynb", "wangxiaoming", "1002", "wang@uni.edu", 0.25, 2.0),
    ("petrovivan_1003_558_00_setup_check.ipynb", "petrovivan", "1003", "ivan@uni.edu", 1.0, 1.0),
    ("papadopoulosgiorgos_1004_559_00_setup_check.ipynb", "papadopoulosgiorgos", "1004", "giorgos@uni.edu", 0.0, 1.5),
]
CANVAS_ROSTER = (  # Canvas: Grades > Export (two header rows, a test student)
    "Student,ID,SIS User ID,SIS Login ID,Section,ONNX Lab 00 (777001),Current Score\n"
    ",,,,,Manual Posting,\n"
    "    Points Possible,,,,,4,(read only)\n"
    "\"Müller, Zoë\",1001,S1,zoe,Sec A,,\n"
    "\"王, 小明\",1002,S2,wang,Sec A,,\n"
    "\"Петров, Иван\",1003,S3,ivan,Sec A,,\n"
    "\"Παπαδόπουλος, Γιώργος\",1004,S4,giorgos,Sec A,,\n"
    "\"Absent, Amy\",1005,S5,amy,Sec A,,\n"
    "\"Student, Test\",1006,,,Sec A,,\n")


def _synthetic_run(tmp_path: Path, lesson, files: list[tuple[str, float, float]], out: Path) -> list:
    folder = tmp_path / "downloads"
    folder.mkdir(exist_ok=True)
    for name, _, _ in files:
        (folder / name).write_text(LESSON_NB.read_text())
    points = {name: (r, q) for name, r, q in files}
    subs, older, res = resolve([read_submission(p, lesson) for p in grading.expand([str(folder)])])
    stale = sorted(set(reports.previous_records(out)) - {s.student for s in subs})
    reports.write_manifest(out, lesson, subs, older, res.notes, stale)
    for s in subs:
        r, q = points[s.path.name]
        rows = [ExerciseResult("00.relu", "ReLU", "passed" if r == 2 else "failed", r, 2.0, ""),
                ExerciseResult("00.quiz", "Quiz", "passed" if q == 2 else "failed", q, 2.0, "")]
        reports.write_student(out, reports.record(lesson, s, rows, "sandbox", "k", out=out))
    reports.finish_run(out, lesson, "sandbox")
    return subs


def test_the_week_every_learner_gets_their_own_grade_everywhere(tmp_path, lesson):
    out = tmp_path / "grades00"
    files = [(f, r, q) for f, _, _, _, r, q in CLASS] + [("mullerzoe_1001_555_00_setup_check.ipynb", 0.0, 0.0)]
    subs = _synthetic_run(tmp_path, lesson, files, out)
    want = {cid: r + q for _, _, cid, _, r, q in CLASS}  # Canvas id -> total
    assert len(subs) == 4, "Zoë's first file is set aside, not graded as another learner"

    roster_path = tmp_path / "canvas-gradebook.csv"
    roster_path.write_text(CANVAS_ROSTER)
    roster = read_roster(roster_path)
    assert roster.kind == "canvas" and len(roster.entries) == 5 and roster.assignments == {"ONNX Lab 00 (777001)": "777001"}

    # Canvas: the column of the existing assignment (id from the gradebook export), every grade its owner's
    out_csv = tmp_path / "canvas.csv"
    assert cli(["grades", "export", str(out), "--to", "canvas", "--roster", str(roster_path), "--out", str(out_csv)]) == 0
    rows = list(csv.reader(io.StringIO(out_csv.read_text(encoding="utf-8"))))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "ONNX Lab 00 (777001)"]
    assert rows[1][0] == "Points Possible" and rows[1][5] == "4"
    assert {r[1]: float(r[5]) for r in rows[2:]} == want and all(r[5] != "" for r in rows[2:])
    m = match([load_run(out)], roster)
    assert [e.label for e in m.no_submission] == ["Absent, Amy"] and not m.not_on_roster and not m.ambiguous

    # grades.csv, wide csv, report, feedback: by learner id; ids map to Canvas ids through the identity
    run = load_run(out)
    by_canvas = {l.identity["platform_id"]: l for l in run.learners}
    assert {k: l.points for k, l in by_canvas.items()} == want
    with open(out / "grades.csv", newline="") as f:
        g = list(csv.DictReader(f))
    totals: dict[str, float] = {}
    for r in g:
        totals[r["student"]] = totals.get(r["student"], 0.0) + float(r["points"])
    assert {by_canvas[k].student: v for k, v in want.items()} == totals
    assert cli(["grades", "export", str(out), "--to", "csv", "--out", str(tmp_path / "wide.csv")]) == 0
    wide = {r["student"]: r for r in csv.DictReader(io.StringIO((tmp_path / "wide.csv").read_text()))}
    assert {k: float(wide[l.student]["total"]) for k, l in by_canvas.items()} == want
    page = report_html(run)
    for l in run.learners:
        assert f"students/{l.student}/feedback.html" in page
    back = tmp_path / "back"
    assert cli(["grades", "feedback", str(out), "--out", str(back)]) == 0
    for k, l in by_canvas.items():
        nb = json.loads((back / l.student / "00_setup_check.ipynb").read_text())
        assert f"**{want[k]:g} / 4 points**" in nb["cells"][0]["source"]
    # Gradescope-style results: the score of each learner's own file
    assert cli(["grades", "export", str(out), "--to", "gradescope", "--out", str(tmp_path / "gs")]) == 0
    for k, l in by_canvas.items():
        assert json.loads((tmp_path / "gs" / l.student / "results.json").read_text())["score"] == want[k]


def test_regrading_with_a_file_removed_leaves_no_stale_learner(tmp_path, lesson):
    out = tmp_path / "grades00"
    files = [(f, r, q) for f, _, _, _, r, q in CLASS]
    _synthetic_run(tmp_path, lesson, files, out)
    (tmp_path / "downloads" / CLASS[3][0]).unlink()
    _synthetic_run(tmp_path, lesson, files[:3], out)
    run = load_run(out)
    assert len(run.learners) == 3 and len(run.stale) == 1
    wide = tmp_path / "wide.csv"
    assert cli(["grades", "export", str(out), "--to", "csv", "--out", str(wide)]) == 0
    assert len(list(csv.DictReader(io.StringIO(wide.read_text())))) == 1 + 3  # max-points row + 3 learners
    assert "papadopoulos" not in report_html(run).split("id='learners'")[1]
    with open(out / "grades.csv", newline="") as f:
        assert len({r["student"] for r in csv.DictReader(f)}) == 3


def test_moodle_roster_and_download_names(tmp_path, lesson):
    out = tmp_path / "grades00"
    files = [("Zoë Müller_88_assignsubmission_file_00_setup_check.ipynb", 2.0, 1.5),
             ("王小明_89_assignsubmission_file_00_setup_check.ipynb", 0.5, 0.0),
             ("Иван Петров_90_assignsubmission_file_00_setup_check.ipynb", 1.0, 2.0)]
    _synthetic_run(tmp_path, lesson, files, out)
    worksheet = tmp_path / "worksheet.csv"  # Moodle: the assignment's "Download grading worksheet"
    worksheet.write_text("Identifier,Full name,Email address,Status,Grade,Maximum Grade\n"
                         "Participant 88,Zoë Müller,zoe@uni.edu,Submitted,,4\n"
                         "Participant 89,王小明,wang@uni.edu,Submitted,,4\n"
                         "Participant 90,Иван Петров,ivan@uni.edu,Submitted,,4\n"
                         "Participant 91,Amy Absent,amy@uni.edu,No submission,,4\n")
    text, m = moodle_csv([load_run(out)], read_roster(worksheet))
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["Email address", "ONNX Lab 00_setup_check"]
    assert {r[0]: float(r[1]) for r in rows[1:]} == {"zoe@uni.edu": 3.5, "wang@uni.edu": 0.5, "ivan@uni.edu": 3.0}
    assert [e.label for e in m.no_submission] == ["Amy Absent"]
    # a participants export (no participant ids): matched by full name, NFC and case-insensitive
    participants = tmp_path / "participants.csv"
    participants.write_text("First name,Last name,ID number,Email address\n"
                            f"{unicodedata.normalize('NFD', 'Zoë')},müller,,zoe@uni.edu\n小明,王,,wang@uni.edu\n"
                            "Иван,Петров,,ivan@uni.edu\n")
    text, m = moodle_csv([load_run(out)], read_roster(participants))
    assert len(list(csv.reader(io.StringIO(text)))) == 4 and not m.not_on_roster and not m.ambiguous


def test_ambiguous_roster_matches_are_refused_never_guessed(tmp_path, lesson):
    out = tmp_path / "grades00"
    _synthetic_run(tmp_path, lesson, [("Anna Smith.ipynb", 2.0, 2.0), ("bob.ipynb", 1.0, 1.0)], out)
    roster = tmp_path / "r.csv"
    roster.write_text("name,email,id\nAnna Smith,anna.smith@uni.edu,1\n\"Smith, Anna\",anna.s2@uni.edu,2\n"
                      "Bob Brown,bob@uni.edu,3\n")
    text, m = canvas_csv([load_run(out)], read_roster(roster))
    rows = list(csv.reader(io.StringIO(text)))
    assert [r[1] for r in rows[2:]] == ["3"], "only bob (matched by his email's login) is exported"
    assert m.ambiguous and "Anna Smith" in m.ambiguous[0]
    assert "ambiguous" in m.report()


def test_multi_lesson_moodle_export_never_writes_a_blank(tmp_path, lesson):
    out0 = tmp_path / "g00"
    _synthetic_run(tmp_path, lesson, [("alice.ipynb", 2.0, 2.0), ("bob.ipynb", 1.0, 1.0)], out0)
    out1 = tmp_path / "g00b"
    (tmp_path / "downloads" / "bob.ipynb").unlink()
    _synthetic_run(tmp_path, lesson, [("alice.ipynb", 1.0, 1.0)], out1)
    run1 = load_run(out1)
    run1.lesson = "00b"  # a second lesson for the export's purpose
    roster = tmp_path / "r.csv"
    roster.write_text("name,email\nalice,alice@uni.edu\nbob,bob@uni.edu\n")
    from labkit.grading.exports import export
    summary = export([load_run(out0), run1], "moodle", tmp_path / "moodle.csv", read_roster(roster))
    assert "its own file" in summary
    for f in (tmp_path / "moodle-00.csv", tmp_path / "moodle-00b.csv"):
        rows = list(csv.reader(io.StringIO(f.read_text())))
        assert all(all(c != "" for c in r) for r in rows), rows


def test_canvas_column_given_by_the_instructor(tmp_path, lesson, capsys):
    out = tmp_path / "grades00"
    _synthetic_run(tmp_path, lesson, [("alice.ipynb", 2.0, 2.0)], out)
    roster = tmp_path / "r.csv"
    roster.write_text("name,email,id\nalice,alice@uni.edu,42\n")
    dest = tmp_path / "c.csv"
    assert cli(["grades", "export", str(out), "--to", "canvas", "--roster", str(roster), "--out", str(dest),
                "--canvas-column", "Lab 0: setup (98765)"]) == 0
    assert dest.read_text().splitlines()[0].endswith(",Lab 0: setup (98765)")
    assert cli(["grades", "export", str(out), "--to", "canvas", "--roster", str(roster), "--out", str(dest)]) == 0
    assert "will create a new assignment" in capsys.readouterr().out
    assert cli(["grades", "export", str(out), "--to", "canvas", "--roster", str(roster), "--out", str(dest),
                "--canvas-column", "Lab 0"]) == 2
    assert "Title (assignment id)" in capsys.readouterr().err


def test_overrides_reach_grades_csv_and_feedback_works_from_anywhere(tmp_path, lesson, monkeypatch, capsys):
    out = tmp_path / "grades00"
    _synthetic_run(tmp_path, lesson, [("Zoë Müller.ipynb", 1.0, 1.0)], out)
    assert cli(["grades", "override", str(out), "Zoë Müller", "00.relu", "2", "--reason", "typo in the prompt"]) == 0
    with open(out / "grades.csv", newline="") as f:
        relu = next(r for r in csv.DictReader(f) if r["exercise"] == "00.relu")
    assert relu["points"] == "2" and "override" in relu["message"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    rec = json.loads(next((out / "students").glob("*/results.json")).read_text())
    assert os.path.isabs(rec["submission"]) and rec["name"] == "Zoë Müller"
    assert cli(["grades", "feedback", str(out), "--out", "back"]) == 0
    nb = json.loads(next((elsewhere / "back").glob("*/00_setup_check.ipynb")).read_text())
    assert "3 / 4 points" in nb["cells"][0]["source"] and "Zoë Müller" in nb["cells"][0]["source"]
    page = next((elsewhere / "back").glob("*/feedback.html")).read_text()
    assert "feedback for Zoë Müller" in page
    # the class folder is gone: no notebook can be returned, and the command says so with a non-zero exit
    for f in (tmp_path / "downloads").iterdir():
        f.unlink()
    assert cli(["grades", "feedback", str(out), "--out", "back2"]) == 1
    assert "notebook not returned" in capsys.readouterr().err


# ---------------------------------------------------------------- lesson version stamp, feedback text


def test_assign_stamps_a_version_that_only_the_exercise_layout_changes():
    import copy

    import nbformat

    from labkit.assign import lesson_version, make_lesson, render, stamped_version

    sol = nbformat.read(ROOT / "solutions" / "00_setup_check.ipynb", as_version=4)
    text = render(ROOT / "solutions" / "00_setup_check.ipynb")
    assert text == render(ROOT / "solutions" / "00_setup_check.ipynb"), "assign --check needs a stable render"
    v = stamped_version(nbformat.reads(text, as_version=4))
    assert len(v) == 12 and v == lesson_version(make_lesson(sol))
    rerun = copy.deepcopy(sol)  # re-executing the solution (outputs, counts, metadata) keeps the version
    for c in rerun.cells:
        if c.cell_type == "code":
            c.outputs, c.execution_count = [{"output_type": "stream", "name": "stdout", "text": "x"}], 7
    rerun.metadata["kernelspec"] = {"name": "other"}
    assert stamped_version(make_lesson(rerun)) == v
    changed = copy.deepcopy(sol)  # an instructor cell changes: a new version
    code = next(c for c in changed.cells if c.cell_type == "code" and not any(
        t.startswith(("answer:", "check:")) for t in c.metadata.get("tags", [])))
    code.source += "\n# changed"
    assert stamped_version(make_lesson(changed)) != v


def test_an_outdated_submission_is_reported_as_outdated_not_as_deleted_cells(lesson):
    from labkit.grading.batch import outdated_notes
    from labkit.grading.rebuild import build_run

    nb = json.loads(LESSON_NB.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code" and not any(
        t.startswith(("answer:", "check:", "skip-grading")) for t in c.get("metadata", {}).get("tags", []))]
    assert len(code) >= 2
    code[0]["source"] = "# the older lesson had this instead"
    nb["cells"].remove(code[-1])  # and one cell less
    nb["metadata"].setdefault("labkit", {})["lesson_version"] = "0ld0ld0ld0ld"
    rebuilt = build_run(lesson, nb)
    before = " ".join(n for ns in rebuilt.notes.values() for n in ns)
    assert "deleted" in before and "edited" in before  # what the learner was told before stamps
    outdated_notes(rebuilt, "0ld0ld0ld0ld", "n3wn3wn3wn3w")
    after = " ".join(n for ns in rebuilt.notes.values() for n in ns)
    assert "older version of this lesson (0ld0ld0ld0ld; now n3wn3wn3wn3w)" in after
    assert "deleted" not in after and "your edit was not run" not in after


def test_feedback_text_shows_the_real_cause_without_colour_codes():
    from labkit.checks.collect import exc_message
    from labkit.text import shorten

    try:
        try:
            raise ValueError("\x1b[31mexpected 10 classes\x1b[0m, got 12")
        except ValueError as inner:
            raise RuntimeError("Failed to export the model with torch.export. This is step 1/3") from inner
    except RuntimeError as e:
        msg = exc_message(e)
    assert "\x1b" not in msg and "(cause: ValueError: expected 10 classes, got 12)" in msg
    cut = shorten("the quick brown fox jumps over the lazy dog " * 20, 50)
    assert len(cut) <= 50 and cut.endswith("…") and cut[:-1].split()[-1] in "the quick brown fox jumps over lazy dog"


def test_a_notebook_claiming_bob_never_reaches_bobs_canvas_cell(tmp_path, lesson):
    """Issue 20, point 8: a blank notebook whose metadata claims `bob` keeps its own rows; the real bob
    keeps his plain id and his Canvas cell holds his own grade."""
    folder, out = tmp_path / "subs", tmp_path / "out"
    folder.mkdir()
    nb = json.loads(LESSON_NB.read_text())
    (folder / "bob.ipynb").write_text(json.dumps(nb))
    (folder / "00_setup_check.ipynb").write_text(json.dumps(dict(nb, metadata={**nb["metadata"],
                                                                               "labkit": {"student": "bob"}})))
    subs, older, res = resolve([read_submission(p, lesson, (str(folder),)) for p in grading.expand([str(folder)])])
    reports.write_manifest(out, lesson, subs, older, res.notes, [])
    for s in subs:
        pts = 2.0 if s.path.name == "bob.ipynb" else 0.0
        rows = [ExerciseResult(x, x, "passed" if pts else "not_attempted", pts, 2.0, "") for x in ("00.relu", "00.quiz")]
        reports.write_student(out, reports.record(lesson, s, rows, "sandbox", "k", out=out))
    reports.finish_run(out, lesson, "sandbox")
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n    Points Possible,,,,\nBob,2001,,bob,A\n")
    text, m = canvas_csv([load_run(out)], read_roster(roster))
    rows = list(csv.reader(io.StringIO(text)))
    assert [(r[1], r[5]) for r in rows[2:]] == [("2001", "4")]
    assert [l.identity["source"] for _, l in m.not_on_roster] == ["metadata"] and not m.ambiguous
    with open(out / "grades.csv", newline="") as f:
        g = {(r["student"], r["exercise"]): r["points"] for r in csv.DictReader(f)}
    assert g[("bob", "00.relu")] == "2" and len({k[0] for k in g}) == 2


def test_the_grader_computes_the_version_assign_stamps(lesson):
    import nbformat

    from labkit.assign import render, stamped_version
    from labkit.grading.batch import current_lesson_version

    v = stamped_version(nbformat.reads(render(ROOT / "solutions" / "00_setup_check.ipynb"), as_version=4))
    assert current_lesson_version(lesson) == v != ""


def test_read_submission_records_the_stamped_version(tmp_path, lesson):
    nb = json.loads(LESSON_NB.read_text())
    nb["metadata"]["labkit"] = {"lesson_version": "abcdef012345"}
    (tmp_path / "alice.ipynb").write_text(json.dumps(nb))
    assert read_submission(tmp_path / "alice.ipynb", lesson).version == "abcdef012345"


def test_a_learners_notebook_wins_over_their_other_files(tmp_path, lesson):
    """Moodle puts an online text next to the file submission: the notebook is graded, the text listed."""
    files = tmp_path / "moodle"
    (files / "Ivan Petrov_77_assignsubmission_file_").mkdir(parents=True)
    (files / "Ivan Petrov_77_assignsubmission_onlinetext_").mkdir(parents=True)
    nb = files / "Ivan Petrov_77_assignsubmission_file_" / "00_setup_check.ipynb"
    nb.write_text(LESSON_NB.read_text())
    text = files / "Ivan Petrov_77_assignsubmission_onlinetext_" / "onlinetext.html"
    text.write_text("<p>see my notebook</p>")
    os.utime(nb, (time.time() - 100, time.time() - 100))  # the text is newer
    graded, older, _ = resolve([read_submission(p, lesson) for p in grading.expand([str(files)])])
    assert [s.path for s in graded] == [nb] and [s.path for s in older] == [text]
    assert graded[0].name == "Ivan Petrov" and graded[0].identity.key == "moodle:77"
