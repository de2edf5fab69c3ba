"""Past one machine: the Dask backend and shards give the grades of one machine (grading tier).

A small class of lesson 00 (the solution, the blank lesson, wrong quiz answers, a file that is not a
notebook) is graded once with the local backend (`--jobs 2`), the reference. Then:

* `--cluster local:2` (a real distributed.LocalCluster, 2 worker processes on loopback) writes the
  same results.json files and a byte-identical grades.csv, once `same_run` has masked the times;
* on a cluster this test runs, a worker process SIGKILLed while it grades loses nothing and grades
  nothing twice: its task is rescheduled, the run ends with the same results; with no failures
  allowed, the learner whose task was running gets an error row (alone), and the re-run grades
  that learner only;
* shards 0/2 and 1/2 merged are the whole run; merge refuses overlapping folders.

Cost: nine small batches of lesson 00 (3 notebooks each) and two LocalCluster starts. Measured only on
a machine whose 2 cores were shared by six sessions (load 14-15): 20 minutes for the file, each batch
about 10x slower than on an idle machine; on an idle 2-core machine this was not measured.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labkit import sandbox
from labkit.grading import shards
from labkit.grading.results import load_run

from conftest import ROOT
from grading_util import with_answers

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.grading

SOLUTION = ROOT / "solutions" / "00_setup_check.ipynb"
LESSON = ROOT / "lessons" / "00_setup_check.ipynb"
SEED = "7"
ARGS = ["--timeout", "30", "--notebook-timeout", "150", "--no-progress"]
#: what changes from one grading of the same files to the next (docs/instructors.md, "Past one machine")
TIMES = ("graded_at", "seconds", "judge_seconds")


def same_run(folder: Path) -> dict[str, object]:
    """Every learner's results.json (times masked: TIMES at the top and each cell's seconds) and grades.csv
    as bytes: two gradings of the same files with the same seed give equal values."""
    got: dict[str, object] = {"grades.csv": (folder / "grades.csv").read_bytes()}
    for f in sorted((folder / "students").glob("*/results.json")):
        rec = json.loads(f.read_text())
        rec.update({k: "<time>" for k in TIMES if rec.get(k) is not None})
        rec["cells"] = [dict(c, seconds="<time>") for c in rec["cells"]]
        got[f.parent.name] = rec
    return got


def _grade(subs: Path, out: Path, *more: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "labkit.cli", "grade", "00", str(subs), "--out", str(out), *ARGS,
                           *more], capture_output=True, text=True, cwd=ROOT, timeout=600)
    if check:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class, its seed file and its reference grading (local backend, --jobs 2)."""
    if not sandbox.bwrap_status()[0]:
        pytest.skip("bubblewrap is not usable here: " + sandbox.bwrap_status()[1])
    root = tmp_path_factory.mktemp("cluster")
    subs = root / "class"
    subs.mkdir()
    quiz = next(c for c in json.loads(SOLUTION.read_text())["cells"] if "answer:00.quiz" in c["metadata"].get("tags", []))
    wrong = "".join(quiz["source"]).replace('"b"', '"x"').replace('"c"', '"x"').replace('"a"', '"x"')
    (subs / "solution.ipynb").write_text(SOLUTION.read_text())
    (subs / "blank.ipynb").write_text(LESSON.read_text())
    (subs / "wrong.ipynb").write_text(json.dumps(with_answers(SOLUTION, {"00.quiz": wrong})))
    (subs / "notes.txt").write_text("not a notebook")
    seed = root / "seed"
    seed.write_text(SEED)
    seed.chmod(0o600)
    _grade(subs, root / "local", "--jobs", "2", "--seed", SEED)
    return {"root": root, "subs": subs, "seed": seed, "want": same_run(root / "local")}


def test_class_has_work_on_both_shards_and_a_wrong_answer(graded):
    run = load_run(graded["root"] / "local")
    points = {l.student: l.points for l in run.learners}
    assert points["solution"] == run.max_points and points["blank"] == 0 < points["wrong"] < run.max_points
    assert {shards.shard_of(s, 2) for s in ("solution", "blank", "wrong")} == {0, 1}  # both shards grade


def test_local_cluster_gives_the_same_grades(graded):
    out = graded["root"] / "dask"
    proc = _grade(graded["subs"], out, "--cluster", "local:2", "--seed", SEED)
    assert "on the Dask cluster local:2" in proc.stderr
    assert same_run(out) == graded["want"]


@pytest.fixture(scope="module")
def cluster(graded):
    """A LocalCluster this test controls: 2 worker processes (1 thread each) on loopback, behind nannies
    that restart a killed worker."""
    import dask

    from labkit.grading.cluster import LOCAL_CONFIG

    with dask.config.set(LOCAL_CONFIG):  # as `local:N` sets it (the nannies read it when they restart a worker)
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                           dashboard_address=None)
        client = distributed.Client(cluster)
        yield cluster, client
        client.close()
        cluster.close()


def _kill_a_grading_worker(cluster, client, proc: subprocess.Popen) -> tuple[str, int]:
    """SIGKILL the first worker process seen grading (its task started and its kernel server runs):
    (the learner whose task it was running, the pid killed)."""
    deadline = time.monotonic() + 600  # a busy machine may take minutes to start a cluster's sandboxes
    while time.monotonic() < deadline and proc.poll() is None:
        busy = {w: keys for w, keys in client.processing().items() if keys}
        for nanny in cluster.workers.values():
            pid = nanny.process.process.pid if nanny.process and nanny.process.process else None
            keys = busy.get(nanny.worker_address)
            if pid and keys and any(b"labkit.grading.forkserver" in _cmdline(p) for p in sandbox.descendants(pid)):
                os.kill(pid, signal.SIGKILL)
                return keys[0].split("-", 2)[2].rsplit("-", 1)[0], pid
        time.sleep(0.1)
    raise AssertionError("no worker was seen grading")


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _allow_failures(client, n: int) -> None:
    client.run_on_scheduler(lambda dask_scheduler: setattr(dask_scheduler, "allowed_failures", n))


def test_killed_worker_loses_nothing_and_grades_nothing_twice(graded, cluster):
    cluster, client = cluster
    out = graded["root"] / "killed"
    _allow_failures(client, 1)
    cmd = [sys.executable, "-m", "labkit.cli", "grade", "00", str(graded["subs"]), "--out", str(out), *ARGS,
           "--cluster", cluster.scheduler_address, "--seed-file", str(graded["seed"])]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    victim, pid = _kill_a_grading_worker(cluster, client, proc)
    written = {f: f.stat().st_mtime_ns for f in out.glob("students/*/results.json")}  # before the kill
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    assert same_run(out) == graded["want"], victim  # the victim's task ran again elsewhere; nothing lost
    assert {f: f.stat().st_mtime_ns for f in written} == written  # what was written is never written again
    assert not Path(f"/proc/{pid}").exists()


def test_task_that_keeps_killing_workers_is_that_learners_error(graded, cluster):
    """No failure allowed: the learner whose task died with its worker gets error rows, nobody else;
    re-running grades that learner only and gives the reference grades."""
    cluster, client = cluster
    out = graded["root"] / "killed-twice"
    _allow_failures(client, 0)
    cmd = [sys.executable, "-m", "labkit.cli", "grade", "00", str(graded["subs"]), "--out", str(out), *ARGS,
           "--cluster", cluster.scheduler_address, "--seed-file", str(graded["seed"])]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    victim, _ = _kill_a_grading_worker(cluster, client, proc)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 1 and "re-run to retry" in err, err[-3000:]
    run = {l.student: l for l in load_run(out).learners}
    assert {e.status for e in run[victim].exercises} == {"error"}
    assert "the Dask worker grading it died 1 time(s)" in run[victim].exercises[0].message
    assert all(same_run(out)[s] == graded["want"][s] for s in run if s not in (victim, "notes"))
    _allow_failures(client, 1)
    again = _grade(graded["subs"], out, "--cluster", cluster.scheduler_address, "--seed-file", str(graded["seed"]))
    assert "2 submission(s) unchanged since the last run" in again.stderr, again.stderr[-2000:]
    got = same_run(out)
    reused = {s for s, rec in got.items() if isinstance(rec, dict) and rec["cached"]}
    assert reused == set(run) - {victim, "notes"}  # only the victim was graded again
    assert {s: dict(rec, cached=False) if s in reused else rec for s, rec in got.items()} == graded["want"]


def test_shards_merged_are_the_whole_run(graded):
    root = graded["root"]
    for i in (0, 1):
        _grade(graded["subs"], root / f"shard{i}", "--shard", f"{i}/2", "--jobs", "1", "--seed-file", str(graded["seed"]))
    mine = [{l.student for l in load_run(root / f"shard{i}").learners} for i in (0, 1)]
    assert mine[0] and mine[1] and not mine[0] & mine[1]
    proc = subprocess.run([sys.executable, "-m", "labkit.cli", "grades", "merge", str(root / "merged"),
                           str(root / "shard0"), str(root / "shard1")], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert same_run(root / "merged") == graded["want"]
    # the merged folder resumes like any other: nothing is graded again
    again = _grade(graded["subs"], root / "merged", "--seed-file", str(graded["seed"]), "--jobs", "1")
    assert "3 submission(s) unchanged" in again.stderr, again.stderr[-2000:]
    for folders, why in ((["shard0", "local"], "mixed shards"), (["local", "merged"], "the shards overlap: ")):
        proc = subprocess.run([sys.executable, "-m", "labkit.cli", "grades", "merge", str(root / "refused"),
                               *(str(root / f) for f in folders)], capture_output=True, text=True, cwd=ROOT)
        assert proc.returncode == 2 and why in proc.stderr, proc.stderr
    assert not (root / "refused").exists()
