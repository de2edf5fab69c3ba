"""Benchmark the instructor grader: N submissions of one lesson, graded with --jobs J.

    .venv/bin/python bench/grading_bench.py            # 40 submissions of lesson 03, --jobs 2
    .venv/bin/python bench/grading_bench.py --lesson 00 --count 10
    .venv/bin/python bench/grading_bench.py --cluster local:2   # the same on a Dask LocalCluster

The submissions are built from the lesson's own notebooks: correct ones are the solution, blank
ones the learner notebook, partial ones the solution with every other answer cell put back to its
stub (found by cell id). The grading cache is bypassed (--force) so every submission really runs.
Prints wall seconds, seconds per submission and the grader's summary table, and the overhead per
task: the worker time not spent grading, (wall x workers - sum of in-worker seconds) / count (start,
scheduling, transfers, the idle tail). With --cluster it also times Dask's scheduler alone on as many
no-op tasks on a LocalCluster of the same size. Not a test.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from labkit.grading.results import load_run

ROOT = Path(__file__).resolve().parents[1]


def _find(folder: Path, lesson: str) -> Path:
    key = f"{int(lesson):02d}" if lesson.isdigit() else lesson
    for p in sorted(folder.glob("*.ipynb")):
        if p.stem == key or p.stem.split("_", 1)[0] == key:
            return p
    raise SystemExit(f"no notebook for lesson {lesson!r} in {folder}")


def _answer_tag(cell: dict) -> str | None:
    for t in cell.get("metadata", {}).get("tags", []):
        if t.startswith("answer:"):
            return t.split(":", 1)[1]
    return None


def build(lesson: str, count: int, folder: Path) -> dict[str, int]:
    solution = json.loads(_find(ROOT / "solutions", lesson).read_text())
    blank = json.loads(_find(ROOT / "lessons", lesson).read_text())
    stubs = {c.get("id"): c["source"] for c in blank["cells"] if _answer_tag(c)}
    partial = json.loads(json.dumps(solution))
    answers = [c for c in partial["cells"] if _answer_tag(c)]
    for c in answers[1::2]:  # every other answer back to its stub
        c["source"] = stubs.get(c.get("id"), c["source"])
    kinds = {"correct": solution, "partial": partial, "blank": blank}
    plan = (["correct", "partial", "blank", "correct", "partial"] * count)[:count]
    folder.mkdir(parents=True, exist_ok=True)
    for i, kind in enumerate(plan):
        nb = json.loads(json.dumps(kinds[kind]))
        nb.setdefault("metadata", {})["labkit"] = {"student": f"learner{i:02d}_{kind}"}
        (folder / f"learner{i:02d}.ipynb").write_text(json.dumps(nb))
    return {k: plan.count(k) for k in kinds}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lesson", default="03")
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--cluster", default="", help="grade with --cluster ADDRESS (local:N) instead of --jobs")
    ap.add_argument("--keep", help="write submissions and grades here (default: a temporary folder)")
    args = ap.parse_args()
    where = ["--cluster", args.cluster] if args.cluster else ["--jobs", str(args.jobs)]
    workers = int(args.cluster[6:]) if args.cluster.startswith("local:") else args.jobs
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="grading-bench-"))
    mix = build(args.lesson, args.count, base / "submissions")
    print(f"lesson {args.lesson}: {args.count} submissions ({', '.join(f'{v} {k}' for k, v in mix.items())}), "
          f"{' '.join(where)}, {os.cpu_count()} cores", flush=True)
    cmd = [sys.executable, "-m", "labkit.cli", "grade", args.lesson, str(base / "submissions"),
           "--out", str(base / "out"), *where, "--timeout", str(args.timeout), "--force"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, text=True, stdout=subprocess.PIPE)
    wall = time.perf_counter() - t0
    print(proc.stdout)
    recs = load_run(base / "out").learners
    per = [r.seconds for r in recs if r.seconds is not None]
    judge = [r.judge_seconds for r in recs if r.judge_seconds is not None]
    if judge:
        print(f"verdict process: mean {sum(judge) / len(judge):.2f} s, max {max(judge):.2f} s per submission "
              f"(budget 0.3 s); protection: "
              f"{sorted({r.protection for r in recs})}")
    print(f"wall time: {wall:.1f} s for {args.count} submissions = {wall / args.count:.2f} s per submission "
          f"(with {' '.join(where)}); one submission alone took {min(per):.1f}-{max(per):.1f} s "
          f"(mean {sum(per) / max(1, len(per)):.1f} s) inside its worker" if per else f"wall time: {wall:.1f} s")
    if per:
        print(f"overhead per task (worker time not spent grading): {(wall * workers - sum(per)) / len(per):.2f} s")
    if args.cluster.startswith("local:"):
        print(f"Dask scheduler alone: {noop_tasks(workers, args.count) * 1000:.1f} ms per no-op task "
              f"({args.count} tasks, LocalCluster of {workers} processes)")
    print(f"exit code {proc.returncode}; outputs in {base / 'out'}")
    return proc.returncode


def noop_tasks(workers: int, count: int) -> float:
    """Seconds per task of `count` no-op tasks on a LocalCluster of `workers` processes (scheduling,
    transfer and bookkeeping only), after one warm-up round."""
    import distributed

    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        client.gather(client.map(abs, range(-workers, 0), pure=False))
        t0 = time.perf_counter()
        for fut in distributed.as_completed(client.map(abs, range(count), pure=False)):
            fut.result()
        return (time.perf_counter() - t0) / count


if __name__ == "__main__":
    sys.exit(main())
