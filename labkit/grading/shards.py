"""Shards for any scheduler: `labkit grade … --shard I/N` grades a fixed share of the learners into
its own folder; `labkit grades merge OUT SHARD…` joins the folders into one run.

A learner's share is a hash of their learner id (identity.learner_id: the same on every run and
unique whatever other files are added), so adding files never moves a learner to another shard.
Every shard reads all the files (one learner's several files are resolved before the split) and
records in its run.json the test-bundle hash it graded with (lesson, judges, grader, packages,
limits, protection and seed together): merge refuses shards of different bundles, overlapping
learners, or an incomplete set, and writes the merged records through the one writer.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..fsutil import atomic_write
from .results import Learner, ResultsError, load_run, read_manifest, read_record



def shard_of(student: str, n: int) -> int:
    """The shard (0..n-1) of a learner id: a stable hash, the same on every machine and run."""
    return int.from_bytes(hashlib.sha256(student.encode()).digest()[:8], "big") % n


def in_shard(student: str, shard: tuple[int, int]) -> bool:
    i, n = shard
    return shard_of(student, n) == i


# ---------------------------------------------------------------- merge


def _batch(folder: Path) -> tuple[dict, dict]:
    """(run.json, its batch record) of a graded folder; ResultsError when it has none."""
    manifest = read_manifest(folder)
    batch = manifest.get("batch")
    if not isinstance(batch, dict) or not isinstance(batch.get("bundle"), str) or not batch["bundle"]:
        raise ResultsError(f"{folder} records no test bundle (graded by an older labkit, or not a `labkit grade "
                           "--out` folder): grade it again with this labkit")
    return manifest, batch


def check_shards(folders: list[Path]) -> list[tuple[Path, dict]]:
    """The shards' manifests, once they are shown to be one lesson version and one seed (the same
    test bundle), one complete set of shards, and disjoint sets of learners."""
    found = [(f, *_batch(f)) for f in folders]
    bundles = {b["bundle"] for _, _, b in found}
    if len(bundles) > 1:
        raise ResultsError("these folders were graded with different test bundles (another lesson version, seed, "
                           "labkit, package versions, limits or protection): " +
                           ", ".join(f"{f} ({b['bundle'][:12]})" for f, _, b in found))
    lessons = {m.get("lesson") for _, m, _ in found}
    if len(lessons) > 1:
        raise ResultsError(f"these folders grade different lessons: {', '.join(sorted(map(str, lessons)))}")
    shards = [tuple(b["shard"]) if b.get("shard") else None for _, _, b in found]
    if any(shards):
        ns = {s[1] for s in shards if s}
        if None in shards or len(ns) > 1:
            raise ResultsError("mixed shards: every folder must be a shard I/N of the same N "
                               f"({', '.join(f'{f}: {s[0]}/{s[1]}' if s else f'{f}: whole' for (f, _, _), s in zip(found, shards))})")
        n = ns.pop()
        seen = [s[0] for s in shards]
        twice = sorted({i for i in seen if seen.count(i) > 1})
        missing = sorted(set(range(n)) - set(seen))
        if twice:
            raise ResultsError(f"shard(s) {', '.join(f'{i}/{n}' for i in twice)} given twice")
        if missing:
            raise ResultsError(f"shard(s) {', '.join(f'{i}/{n}' for i in missing)} missing: merge needs all {n}")
    owner: dict[str, Path] = {}
    overlap = []
    for f, m, _ in found:
        for learner in m["learners"]:
            if learner["student"] in owner:
                overlap.append(f"{learner['student']} ({owner[learner['student']]} and {f})")
            owner[learner["student"]] = f
    if overlap:
        raise ResultsError(f"the shards overlap: {len(overlap)} learner(s) graded twice: " + "; ".join(overlap[:5]))
    return [(f, m) for f, m, _ in found]


def merge(out: Path, folders: list[Path]) -> str:
    """Join shard folders into `out` (new or empty): every learner's record rewritten by the one
    writer (paths relative to `out`), the verified cache entries signed with `out`'s key, one
    run.json, then grades.csv, the histogram and the summary read back from the files."""
    from .cache import ResultsCache
    from .reports import _where, write_student

    out = out.resolve()
    if out.exists() and any(out.iterdir()):
        raise ResultsError(f"{out} is not empty: merge into a new folder")
    for f in folders:
        if (f / "overrides.csv").exists():
            raise ResultsError(f"{f} has overrides.csv: merge first, then override in the merged folder")
    shards = check_shards([f.resolve() for f in folders])
    load = [(f, m, load_run(f, overrides=False)) for f, m in shards]  # every record is read and checked first
    out.mkdir(parents=True, exist_ok=True)
    cache = ResultsCache(out, trusted=True)
    manifest: dict = {k: shards[0][1].get(k) for k in ("lesson", "lesson_name")}
    manifest.update(graded_at=max(str(m.get("graded_at", "")) for _, m in shards), learners=[], set_aside=[],
                    problem_files=[], notes=[], stale=[], batch={"bundle": shards[0][1]["batch"]["bundle"], "shard": None,
                                               "merged_from": [str(f) for f, _ in shards]})
    for f, m, run in load:
        wanted = {x["student"] for x in m["learners"]}
        source = ResultsCache(f, trusted=True)
        for learner in run.learners:
            if learner.student not in wanted:
                continue
            rec = _moved(read_record(f / "students" / learner.student / "results.json"), out, _where)
            write_student(out, rec)
            entry = source.get(rec.cache_key) if rec.cache_key else None
            if entry is not None:
                cache.put(rec.cache_key, entry)
        manifest["learners"] += [dict(x, **_where(x["submission"], out)) for x in m["learners"]]
        manifest["set_aside"] += [dict(x, **_where(x["submission"], out)) for x in m.get("set_aside", [])]
        manifest["problem_files"] += [dict(x, **_where(x["submission"], out)) for x in m.get("problem_files", [])]
        manifest["notes"] += m.get("notes", [])
    manifest["learners"].sort(key=lambda x: x["student"].lower())
    atomic_write(out / "run.json", json.dumps(manifest, indent=1, ensure_ascii=False))
    return _finish(out)


def _moved(rec: Learner, out: Path, where) -> Learner:
    from dataclasses import replace

    return replace(rec, **where(rec.submission, out))


def _finish(out: Path) -> str:
    """grades.csv, the histogram and the summary of the merged folder, from its files."""
    from .lesson import ExerciseInfo, Lesson
    from .reports import finish_run, histogram

    run = load_run(out)
    lesson = Lesson(run.lesson, run.lesson_name, out, {}, [ExerciseInfo(i, t, m, "", "") for i, t, m in run.exercises])
    histogram(out / "histogram.png", [r.points for r in run.learners], run.max_points, run.lesson)
    protections = sorted({r.protection for r in run.learners})
    return finish_run(out, lesson, ", ".join(protections)) + (
        f"\n\nMerged {len(run.learners)} learners into {out} (grades.csv, histogram.png, students/).")

