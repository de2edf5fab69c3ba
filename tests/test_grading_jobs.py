"""One job, one outcome, one writer, shards — without a kernel (fast tier, about a second).

`Job` and `Outcome` must cross a process or a Dask worker unchanged (pickle), `Outcome` must read
back from its stored form unchanged (it is the cache entry), stay bounded whatever the submission
printed, and keep the seed out of every log line. The writer caches only verified outcomes and
turns a grader failure into that learner's error rows. Shards split by learner id, stably; merge
refuses what cannot be one run.
"""
from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from labkit.checks.result import TestResult
from labkit.grading import cache, jobs, lesson as lesson_mod, options, rebuild, results, shards, submissions, writer
from labkit.grading.results import ExerciseResult, ResultsError
from labkit.grading.sandbox import Bubblewrap

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = jobs.Settings("00", None, 424242, "# private extra tests", 15.0, 150.0, 60.0, 3.0, "sandbox", "b" * 64)


@pytest.fixture(scope="module")
def lesson():
    return lesson_mod.load_lesson(lesson_mod.resolve_lesson("00"))


def _results(lesson, message: str = "ok", tests: int = 2) -> list[ExerciseResult]:
    return [ExerciseResult(e.id, e.title, "passed", float(e.points), float(e.points), message,
                           [TestResult(f"t{i}", True, "fine") for i in range(tests)], e.hint) for e in lesson.exercises]


def _outcome(lesson, **kw) -> jobs.Outcome:
    events = [{"cell": 0, "what": "ok", "seconds": 0.5, "role": "code", "exercise": None}]
    return jobs.Outcome.make(_results(lesson), events, ["00.quiz/x is not a regular file"], seconds=2.5,
                             judge_seconds=0.25, kernel_starts=1, verified=True, protection="sandbox", **kw)


def test_job_and_outcome_cross_a_process_unchanged(lesson):
    job = jobs.Job("alice", "Alice", "/subs/alice.ipynb", "1" * 64, "k" * 64,
                   rebuild.Rebuilt([rebuild.RunCell("x = 1", "answer", "00.relu", 3)], {"00.relu": ["a note"]}),
                   SETTINGS)
    assert pickle.loads(pickle.dumps(job)) == job
    o = _outcome(lesson)
    assert pickle.loads(pickle.dumps(o)) == o
    # the stored form (the results-cache entry) reads back as the same outcome, through JSON text
    assert jobs.Outcome.from_json(json.loads(json.dumps(o.to_json()))) == o
    with pytest.raises(Exception):  # frozen: nothing on the way can change it
        o.seconds = 0  # type: ignore[misc]


def test_outcome_reader_refuses_what_is_not_one(lesson):
    old_entry = {"results": results.exercises_json(_results(lesson)), "protection": "sandbox", "seconds": 1.0,
                 "cells": [], "submission_sha256": "1" * 64}  # the cache entry of the labkit before jobs
    with pytest.raises(ResultsError, match="not a grading outcome"):
        jobs.Outcome.from_json(old_entry)
    good = _outcome(lesson).to_json()
    for bad in ({**good, "verified": "yes"}, {**good, "seconds": "3 s"}, {**good, "cells": ["x"]},
                {**good, "results": [{"exercise": "../x"}]}):
        with pytest.raises(ResultsError):
            jobs.Outcome.from_json(bad)


def test_outcome_is_bounded_whatever_the_submission_printed(lesson):
    flood = "x " * 1_000_000
    events = [{"cell": i, "what": "error", "ename": flood, "evalue": flood, "seconds": 0.1} for i in range(5000)]
    o = jobs.Outcome.make(_results(lesson, message=flood, tests=500), events, [flood] * 500, seconds=1.0)
    assert o.size() <= results.MAX_RECORD_CHARS + results.MAX_RECORD_CHARS // 2, o.size()
    assert all(len(r.message) <= results.MAX_MESSAGE_CHARS and len(r.tests) <= results.MAX_TESTS for r in o.results)
    assert len(o.problems) <= results.MAX_NOTES and all(len(p) <= results.MAX_TEST_CHARS for p in o.problems)
    assert o.cells and all(len(e["ename"]) <= jobs.MAX_EVENT_CHARS for e in o.cells)
    assert o.size() < results.MAX_RESULTS_BYTES  # what the results.json reader accepts


def test_settings_keep_the_seed_out_of_every_log_line():
    text = repr(jobs.Job("a", "A", "a.ipynb", "", "", rebuild.Rebuilt([]), SETTINGS))
    assert "424242" not in text and "private extra" not in text and "00" in text


def _sub(tmp_path: Path, student: str) -> submissions.Submission:
    return submissions.Submission(tmp_path / f"{student}.ipynb", student, "1" * 64)


def test_writer_caches_only_verified_outcomes_and_records_failures(tmp_path, lesson):
    out = tmp_path / "out"
    out.mkdir()
    opts = options.parse(["00", "x.ipynb", "--out", str(out)])
    store = cache.ResultsCache(out, trusted=True)
    w = writer.Writer(opts, lesson, Bubblewrap("bubblewrap"), store, {})
    job = lambda s, key: jobs.Job(s, s, f"{s}.ipynb", "1" * 64, key, rebuild.Rebuilt([]), SETTINGS)  # noqa: E731
    w.put(_sub(tmp_path, "ok"), job("ok", "k1"), _outcome(lesson))
    w.put(_sub(tmp_path, "dirty"), job("dirty", "k2"), jobs.Outcome.make(_results(lesson), seconds=1.0))
    w.put(_sub(tmp_path, "lost"), job("lost", "k3"), jobs.Outcome.failed("the worker died"))
    assert jobs.Outcome.from_json(store.get("k1")) == _outcome(lesson)
    assert store.get("k2") is None and store.get("k3") is None  # not verified-clean; a grader failure
    ok = results.read_record(out / "students" / "ok" / "results.json")
    assert ok.points == lesson.max_points and ok.answer_problems == ["00.quiz/x is not a regular file"]
    lost = results.read_record(out / "students" / "lost" / "results.json")
    assert {e.status for e in lost.exercises} == {"error"} and lost.points == 0 and lost.protection == "sandbox"
    assert "the worker died" in lost.exercises[0].message and w.failures == [f"{tmp_path / 'lost.ipynb'}: the worker died"]
    assert (out / "students" / "ok" / "feedback.html").is_file()
    assert not (out / "grades.csv").exists()  # its one writer is reports.write_grades, from disk, at the end


def test_shards_split_by_learner_id_stably():
    ids = [f"learner{i:03d}" for i in range(200)]
    split = {s: shards.shard_of(s, 3) for s in ids}
    assert set(split.values()) == {0, 1, 2} and min(list(split.values()).count(i) for i in range(3)) > 40
    more = ids + [f"late{i}" for i in range(50)]
    assert {s: shards.shard_of(s, 3) for s in more if s in split} == split  # adding files moves nobody
    # the same on every machine and Python (not hash(), which is salted per process)
    assert [shards.shard_of(s, 4) for s in ("alice", "bob", "zoe-muller-1a2b3c4d")] == [3, 2, 2]
    assert all(shards.in_shard(s, (split[s], 3)) and not shards.in_shard(s, ((split[s] + 1) % 3, 3)) for s in ids)


def test_shard_cluster_and_seed_options(tmp_path):
    assert options.parse_shard("1/4") == (1, 4)
    for bad in ("4/4", "-1/2", "1", "a/b", "0/0"):
        with pytest.raises(options.GradeError, match="--shard"):
            options.parse_shard(bad)
    assert options.parse_cluster("local:2") == "local:2" and options.parse_cluster("tcp://10.0.0.5:8786")
    for bad in ("local:0", "my cluster"):
        with pytest.raises(options.GradeError, match="--cluster"):
            options.parse_cluster(bad)
    seed = tmp_path / "seed"
    seed.write_text("1234\n")
    seed.chmod(0o600)
    o = options.parse(["00", "x.ipynb", "--out", "o", "--seed-file", str(seed), "--shard", "0/2", "--cluster", "local:2"])
    assert (o.seed, o.shard, o.cluster) == (1234, (0, 2), "local:2")
    with pytest.raises(options.GradeError, match="--seed-file"):
        options.parse(["00", "x.ipynb", "--out", "o", "--shard", "0/2"])  # each shard would draw its own seed
    seed.write_text("12 34")
    with pytest.raises(options.GradeError, match="one non-negative integer"):
        options.parse(["00", "x.ipynb", "--out", "o", "--seed-file", str(seed)])


def _shard_folder(root: Path, name: str, learners: list[str], bundle: str = "b" * 64, shard=None, lesson="00") -> Path:
    d = root / name
    d.mkdir()
    (d / "run.json").write_text(json.dumps({"lesson": lesson, "learners": [{"student": s} for s in learners],
                                            "batch": {"bundle": bundle, "shard": shard}}))
    return d


def test_merge_refuses_what_cannot_be_one_run(tmp_path):
    a = _shard_folder(tmp_path, "a", ["alice", "bob"], shard=[0, 2])
    b = _shard_folder(tmp_path, "b", ["carol"], shard=[1, 2])
    assert [f for f, _ in shards.check_shards([a, b])] == [a, b]
    cases = [
        ([a, _shard_folder(tmp_path, "c", ["bob"], shard=[1, 2])], "overlap: 1 learner"),
        ([a, _shard_folder(tmp_path, "d", ["dan"], bundle="c" * 64, shard=[1, 2])], "different test bundles"),
        ([a], r"shard\(s\) 1/2 missing"),
        ([a, _shard_folder(tmp_path, "e", ["eve"], shard=[0, 2])], r"shard\(s\) 0/2 given twice"),
        ([a, _shard_folder(tmp_path, "f", ["fay"], shard=[1, 3])], "mixed shards"),
        ([a, _shard_folder(tmp_path, "g", ["gus"], shard=[1, 2], lesson="01")], "different lessons"),
    ]
    for folders, why in cases:
        with pytest.raises(ResultsError, match=why):
            shards.check_shards(folders)
    old = tmp_path / "old"
    old.mkdir()
    (old / "run.json").write_text(json.dumps({"lesson": "00", "learners": []}))
    with pytest.raises(ResultsError, match="records no test bundle"):
        shards.check_shards([old])
