"""Each stage of `labkit.grading` on its own, without a kernel: fast, and precise about what broke."""
from __future__ import annotations

import json
import os
import subprocess
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

from labkit import plain, sandbox
from labkit.checks import quiz_answers
from labkit.checks.result import Result, TestResult
from labkit.grading import batch, cache, forkserver, judge, lesson as lesson_mod, options, rebuild, submissions, verdicts
from labkit.grading import sandbox as grading_sandbox

ROOT = Path(__file__).resolve().parents[1]
LESSON00 = ROOT / "lessons" / "00_setup_check.ipynb"


@pytest.fixture(scope="module")
def lesson():
    return lesson_mod.load_lesson(lesson_mod.resolve_lesson("00"))


# ---------------------------------------------------------------- options


def test_options_validate():
    with pytest.raises(options.GradeError, match="--jobs"):
        options.parse(["00", "x.ipynb", "--out", "o", "--jobs", "0"])
    with pytest.raises(options.GradeError, match="--judge-timeout"):
        options.parse(["00", "x.ipynb", "--out", "o", "--judge-timeout", "0"])
    o = options.parse(["00", "x.ipynb", "--out", "o", "--timeout", "10"])
    assert o.notebook_timeout == options.DEFAULT_NOTEBOOK_TIMEOUT and o.seed is None and not o.no_sandbox


def test_no_silent_fallback(monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap_status", lambda: (False, "bubblewrap is not installed"))
    with pytest.raises(options.GradeError, match="--no-sandbox"):
        grading_sandbox.select(no_sandbox=False)
    if os.geteuid() == 0:
        with pytest.raises(options.GradeError, match="never runs submissions as root"):
            grading_sandbox.select(no_sandbox=True)
    else:
        assert grading_sandbox.select(no_sandbox=True).mode == "no-sandbox"


# ---------------------------------------------------------------- submissions: bounded work per file


def test_bad_files_become_rows(tmp_path, lesson, monkeypatch):
    (tmp_path / "deep.ipynb").write_text("[" * 100_000 + "]" * 100_000)
    nb = json.loads(LESSON00.read_text())
    many = dict(nb, cells=nb["cells"] + [{"cell_type": "code", "source": ""}] * (submissions.MAX_CELLS + 1))
    (tmp_path / "many.ipynb").write_text(json.dumps(many))
    (tmp_path / "big.ipynb").write_text(json.dumps(nb))
    os.symlink(LESSON00, tmp_path / "link.ipynb")
    os.mkfifo(tmp_path / "pipe.ipynb")
    got = {p.stem: submissions.read_submission(p, lesson) for p in sorted(tmp_path.iterdir())}
    monkeypatch.setattr(submissions, "MAX_SUBMISSION_BYTES", len((tmp_path / "big.ipynb").read_bytes()) - 1)
    got["big"] = submissions.read_submission(tmp_path / "big.ipynb", lesson)
    assert "nested too deeply" in got["deep"].error
    assert got["many"].error.startswith("notebook too large") and "cells" in got["many"].error
    assert got["big"].error.startswith("notebook too large")
    assert "symbolic link" in got["link"].error
    assert "not a regular file" in got["pipe"].error
    assert {s.student for s in got.values()} == set(got)  # named after their file, never empty


def test_links_are_not_followed_when_walking(tmp_path):
    (tmp_path / "class").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "secret.ipynb").write_text("{}")
    os.symlink(tmp_path / "elsewhere", tmp_path / "class" / "linked_dir")
    os.symlink(tmp_path / "elsewhere" / "secret.ipynb", tmp_path / "class" / "linked.ipynb")
    files = submissions.expand([str(tmp_path / "class")])
    assert [f.name for f in files] == ["linked.ipynb"]  # reported as a link, the folder is not entered


def test_names_unique_across_the_batch():
    subs = [submissions.Submission(Path(f"/x/{stem}.ipynb"), student=name)
            for stem, name in (("bob", "bob"), ("b2", "bob"), ("bob__bob", "bob__bob"), ("B3", "BOB__B2"))]
    submissions.assign_students(subs)
    names = [s.student for s in subs]
    assert len({n.lower() for n in names}) == 4, names
    assert "bob__bob" in names  # claimed by one file only: kept


# ---------------------------------------------------------------- rebuild: linear


def test_rebuild_is_linear(lesson):
    nb = json.loads(LESSON00.read_text())
    nb["cells"] += [{"cell_type": "code", "source": "", "id": f"x{i}", "metadata": {}} for i in range(8000)]
    t0 = time.perf_counter()
    rebuilt = rebuild.build_run(lesson, nb)
    assert time.perf_counter() - t0 < 2.0  # was 71 s (quadratic)
    assert any("8000 code cells you added" in n for ns in rebuilt.notes.values() for n in ns)


def test_rebuild_stages_find_answers_and_note_changes():
    cells = [{"cell_type": "code", "source": "a = 1", "id": "s1", "metadata": {}},
             {"cell_type": "code", "source": "ans", "id": "s2", "metadata": {"tags": ["answer:00.relu"]}},
             {"cell_type": "code", "source": "chk", "id": "s3", "metadata": {"tags": ["check:00.relu"]}}]
    notes: dict[str, list[str]] = {"00.relu": [], "00.quiz": []}
    untagged = [dict(cells[0]), {"cell_type": "code", "source": "mine", "id": "s2", "metadata": {}}]
    assert rebuild.answer_cell(cells[1], "00.relu", rebuild.index_submission(untagged), notes) == 1
    assert "found by its cell id" in notes["00.relu"][0]
    twice = rebuild.index_submission([dict(cells[1], id="other"), cells[1]])
    assert rebuild.answer_cell(cells[1], "00.relu", twice, notes) == 1  # the one with the original id
    assert "2 cells are tagged answer:00.relu; the one with the original cell id" in notes["00.relu"][1]
    assert rebuild.answer_cell(cells[1], "00.relu", rebuild.index_submission([cells[0]]), notes) is None
    # an added cell counts under the next exercise after it; a deleted instructor cell is noted, not run
    sub = rebuild.index_submission([{"cell_type": "code", "source": "extra", "id": "new", "metadata": {}}, *cells[1:]])
    notes = {"00.relu": [], "00.quiz": []}
    sol_ids = rebuild.note_changed_cells(cells, {}, sub, rebuild.next_exercise(cells, ["00.relu", "00.quiz"]), notes)
    rebuild.note_added_cells(sub, {1}, sol_ids, "00.quiz", notes)
    assert sol_ids == {"s1", "s2", "s3"} and notes["00.quiz"] == []
    assert notes["00.relu"] == ["a cell above this exercise was deleted; the original ran",
                                "1 code cell you added above this exercise was not run (only answer cells are graded)"]



def test_rebuild_stops_at_the_last_check_cell():
    """Cells after the last check cell can change no grade: they are not run (nor noted as edited)."""
    cells = [{"cell_type": "code", "source": "a = 1", "id": "s1", "metadata": {}},
             {"cell_type": "code", "source": "ans", "id": "s2", "metadata": {"tags": ["answer:00.relu"]}},
             {"cell_type": "code", "source": "chk", "id": "s3", "metadata": {"tags": ["check:00.relu"]}},
             {"cell_type": "markdown", "source": "Optional", "id": "m4", "metadata": {}},
             {"cell_type": "code", "source": "slow_demo()", "id": "s5", "metadata": {"tags": ["optional"]}}]
    run, used = rebuild.cells_to_run(cells, {}, rebuild.index_submission(cells), {"00.relu": []}, {})
    assert [(c.source, c.role) for c in run] == [("a = 1", "code"), ("ans", "answer"), ("chk", "check")]
    assert used == {1}
    edited = [*cells[:4], dict(cells[4], source="my_own_demo()")]
    notes = {"00.relu": []}
    rebuild.note_changed_cells(cells, {}, rebuild.index_submission(edited), rebuild.next_exercise(cells, ["00.relu"]),
                               notes)
    assert notes == {"00.relu": []}
    no_check = rebuild.cells_to_run(cells[:2], {}, rebuild.index_submission(cells), {"00.relu": []}, {})[0]
    assert [c.source for c in no_check] == ["a = 1", "ans"]  # no check cell at all: everything runs


def test_batch_output_folder_is_checked(tmp_path):
    out = tmp_path / "out"
    protection = grading_sandbox.Bubblewrap("bubblewrap")
    assert isinstance(batch.open_output(out, [tmp_path / "a.ipynb"], protection), cache.ResultsCache)
    with pytest.raises(options.GradeError, match="must not lie inside the output folder"):
        batch.open_output(out, [tmp_path / "a.ipynb", out / "b.ipynb"], protection)
    (tmp_path / "file").write_text("")
    with pytest.raises(options.GradeError, match="cannot write the output folder"):
        batch.open_output(tmp_path / "file" / "out", [], protection)


def test_batch_plan_rebuilds_only_what_must_run(tmp_path, lesson):
    opts = options.parse(["00", "x.ipynb", "--out", str(tmp_path)])
    results = cache.ResultsCache(tmp_path, trusted=True)
    good = submissions.Submission(tmp_path / "good.ipynb", "good", "1" * 64, nb=json.loads(LESSON00.read_text()))
    bad = submissions.Submission(tmp_path / "bad.ipynb", "bad", "2" * 64, error="not a notebook")
    records, todo, cached = batch.plan(opts, lesson, [good, bad], results, "bundle", "", lambda rebuilt: rebuilt)
    assert list(records) == ["bad"] and cached == 0
    assert {x.status for x in records["bad"].exercises} == {"error"}
    (s, rebuilt, key), = todo
    assert s is good and s.nb is None and isinstance(rebuilt, rebuild.Rebuilt)
    assert key == results.entry_key("1" * 64, "bundle")


# ---------------------------------------------------------------- lesson: the cache key covers the verdict path


def test_bundle_covers_every_verdict_module(lesson, monkeypatch):
    files = {str(p.relative_to(ROOT)) for p in lesson_mod.verdict_sources()}
    for f in ("labkit_judges/l00.py", "labkit/data.py", "labkit/models.py", "labkit/grading/judge.py",
              "labkit/checks/judging.py", "labkit/plain.py"):
        assert f in files, f
    base = dict(seed=1, limits={}, protection_mode="sandbox", data_hashes={})
    h = lesson_mod.bundle_hash(lesson, **base)
    assert lesson_mod.bundle_hash(lesson, **dict(base, protection_mode="no-sandbox")) != h
    monkeypatch.setattr(lesson_mod, "package_versions", lambda: {"onnxruntime": "0"})
    assert lesson_mod.bundle_hash(lesson, **base) != h


# ---------------------------------------------------------------- cache: authenticated


def test_cache_entries_of_another_results_schema_are_never_looked_up(tmp_path, monkeypatch):
    c = cache.ResultsCache(tmp_path, trusted=True)
    key = c.entry_key("sha", "bundle")
    monkeypatch.setattr(cache, "SCHEMA_VERSION", cache.SCHEMA_VERSION + 1)
    assert c.entry_key("sha", "bundle") != key


def test_cache_entries_are_authenticated(tmp_path):
    c = cache.ResultsCache(tmp_path, trusted=True)
    key = c.entry_key("sha", "bundle")
    c.put(key, {"results": [{"points": 0}]})
    assert c.get(key) == {"results": [{"points": 0}]}
    entry = tmp_path / ".cache" / f"{key}.json"
    data = json.loads(entry.read_text())
    data["payload"] = json.dumps({"results": [{"points": 99}]})
    entry.write_text(json.dumps(data))
    assert c.get(key) is None  # forged without the key
    assert (tmp_path / ".grader").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / ".grader" / "key").stat().st_mode & 0o777 == 0o600
    c.put(key, {"ok": 1})
    assert cache.ResultsCache(tmp_path, trusted=False).get(key) is None  # no sandbox: nothing reused
    assert cache.secret_seed(tmp_path) == cache.secret_seed(tmp_path)


# ---------------------------------------------------------------- run: what a kernel is given


def test_kernel_environment_holds_no_secret(tmp_path):
    spec = forkserver.SandboxSpec({}, grading_sandbox.Bubblewrap("test"), (), (), "/in", "/data", None)
    env = forkserver.kernel_env(tmp_path, spec)
    assert not [k for k in env if "SEED" in k or "KEY" in k or "TOKEN" in k]
    assert env["LABKIT_INPUTS_DIR"] == "/in" and env["LABKIT_CACHE"] == "/data"


def test_sandbox_view(tmp_path):
    """The kernel's view: no judges, no solutions, no /run, not root, nothing outside its folder writable."""
    if not sandbox.bwrap_status()[0]:
        pytest.skip("bubblewrap is not usable here")
    import labkit
    import labkit_judges

    uid = sandbox.KERNEL_UID_BASE + 7 if os.geteuid() == 0 else None
    work = tmp_path / "work"
    work.mkdir()
    if uid is not None:
        os.chown(work, uid, uid)
        os.chmod(work, 0o711)
    visible = [*sandbox.python_paths(), Path(labkit.__file__).parent]
    code = ("import os, json, importlib.util as u\n"
            "print(json.dumps({'uid': os.getuid(), 'judges': u.find_spec('labkit_judges') is not None,\n"
            "  'solutions': os.path.exists(%r), 'run': os.listdir('/run') if os.path.isdir('/run') else [],\n"
            "  'git': os.path.exists(%r), 'labkit': u.find_spec('labkit.checks') is not None,\n"
            "  'write_labkit': os.access(%r, os.W_OK)}))") % (
        str(ROOT / "solutions"), str(ROOT / ".git"), str(Path(labkit.__file__).parent))
    cmd = sandbox.bwrap_args(work, visible, [Path(labkit_judges.__file__).parent], uid=uid) + [
        sys.executable, "-I", "-c", code]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    seen = json.loads(r.stdout)
    assert seen == {"uid": seen["uid"], "judges": False, "solutions": False, "run": [], "git": False,
                    "labkit": True, "write_labkit": False}, seen
    assert seen["uid"] != 0


# ---------------------------------------------------------------- judge: confined, a timeout is a verdict


def test_judge_timeout_is_a_verdict(tmp_path):
    answers = tmp_path / "answers"
    plain.save([[0.0]], answers / "00.relu")
    plain.save(quiz_answers("00.quiz"), answers / "00.quiz")
    slow = ("import time\nfrom labkit.checks import judge_spec\n"
            "def never(answer, seed):\n    time.sleep(1000)\n    yield\n"
            "judge_spec('00.relu').judge = never\n")
    out = judge.judge_answers("00", answers, 1, ["00.relu", "00.quiz"], slow, timeout=3, data_dir=str(tmp_path))
    assert out["00.relu"].status == "timeout" and "3 s" in out["00.relu"].message
    assert out["00.quiz"].status == "passed"  # judged by a fresh process after the timeout


def test_verdict_process_stays_warm_between_submissions(tmp_path):
    """The worker kills everything a kernel left behind, but not its own warm verdict process."""
    answers = tmp_path / "answers"
    plain.save(quiz_answers("00.quiz"), answers / "00.quiz")
    judge.judge_answers("00", answers, 1, ["00.quiz"], "", timeout=30, data_dir=str(tmp_path))
    pid = judge.server_pids()
    assert pid
    sandbox.kill_tree(spare=pid)
    t0 = time.perf_counter()
    out = judge.judge_answers("00", answers, 1, ["00.quiz"], "", timeout=30, data_dir=str(tmp_path))
    assert out["00.quiz"].status == "passed" and judge.server_pids() == pid
    assert time.perf_counter() - t0 < 1.0  # no imports paid again
    judge._SERVER.close()
    judge._SERVER = None


def test_verdict_process_holds_nothing_a_learner_can_name(tmp_path):
    """Its working folder is empty and only the grader can open it; its spec came through a pipe: no
    file anywhere in the run's folder holds the seed or the extra tests, nor does its command line."""
    answers = tmp_path / "answers"
    plain.save(quiz_answers("00.quiz"), answers / "00.quiz")
    seed, extra = 1618033988, "# PRIVATE-EXTRA-TESTS-31\n"
    out = judge.judge_answers("00", answers, seed, ["00.quiz"], extra, timeout=30, data_dir=str(tmp_path / "data"))
    assert out["00.quiz"].status == "passed"
    (pid,) = judge.server_pids()
    try:
        cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
        assert cwd.parent.parent == tmp_path and not os.listdir(cwd)
        assert os.stat(cwd).st_mode & 0o777 == os.stat(cwd.parent).st_mode & 0o777 == 0o700
        assert b"json" not in Path(f"/proc/{pid}/cmdline").read_bytes()
        for f in tmp_path.rglob("*"):
            if f.is_file():
                assert str(seed).encode() not in f.read_bytes() and b"PRIVATE-EXTRA" not in f.read_bytes(), f
    finally:
        judge._SERVER.close()
        judge._SERVER = None
    assert not cwd.parent.exists()


def test_each_protection_mode_prints_its_own_warning(capsys, lesson):
    """--unprivileged-user lists what that mode does not give, not the no-sandbox list; the modes the
    code writes are the ones docs/instructors.md names."""
    both = grading_sandbox.NOT_GUARANTEED + grading_sandbox.NOT_GUARANTEED_UNPRIVILEGED
    for mode, says, not_says in (("unprivileged-user", grading_sandbox.NOT_GUARANTEED_UNPRIVILEGED,
                                  grading_sandbox.NOT_GUARANTEED),
                                 ("no-sandbox", grading_sandbox.NOT_GUARANTEED, grading_sandbox.NOT_GUARANTEED_UNPRIVILEGED),
                                 ("sandbox", (), both)):
        batch.announce(lesson, 1, 1, grading_sandbox.BACKENDS[mode]("test"))
        err = capsys.readouterr().err
        assert all(line in err for line in says) and not any(line in err for line in not_says), mode
    row = next(line for line in (ROOT / "docs" / "instructors.md").read_text().splitlines()
               if line.startswith("| `protection` |"))
    assert all(f"`{m}`" in row for m in grading_sandbox.MODES) and "`none`" not in row


# ---------------------------------------------------------------- verdicts


def test_compose_timeout_and_missing(lesson):
    rebuilt = rebuild.Rebuilt([rebuild.RunCell("x", "check", "00.relu", 0)], {}, {"00.quiz": "no answer cell"})
    timeout = Result("00.relu", "ReLU", "timeout", 3.0, 3.0, "slow", [TestResult("t", True)])
    res = verdicts.compose(lesson.exercises, rebuilt, [], {"00.relu": timeout}, 10, 100)
    by = {r.exercise: r for r in res}
    assert by["00.relu"].status == "timeout" and by["00.relu"].points == 0 and not by["00.relu"].tests
    assert by["00.quiz"].status == "missing" and by["00.quiz"].message == "no answer cell"


# ---------------------------------------------------------------- batch: temporary folders


def test_stale_temporary_folders_are_removed(tmp_path, monkeypatch):
    short = Path(tempfile.mkdtemp(prefix="lkt", dir="/tmp"))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = short / f"{batch.TMP_PREFIX}old"
    stale.mkdir()
    (stale / "owner.pid").write_text(str(dead.pid))
    live = short / f"{batch.TMP_PREFIX}live"
    live.mkdir()
    (live / "owner.pid").write_text(str(os.getpid()))
    root = batch.make_tmp_root(short)
    try:
        assert not stale.exists() and live.exists() and root.exists()
    finally:
        shutil.rmtree(short)
