"""Stage 0: the command line, validated into `Options` (the protection mode it asks for is decided
by `grading.sandbox.select`)."""
from __future__ import annotations

import argparse
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

GRADER_VERSION = "2"
DEFAULT_CELL_TIMEOUT = 120
DEFAULT_NOTEBOOK_TIMEOUT = 900
DEFAULT_JUDGE_TIMEOUT = 300


class GradeError(Exception):
    """The grader itself cannot run (unknown lesson, no submissions, no sandbox...): exit 2."""


@dataclass(frozen=True)
class Options:
    lesson: str
    submissions: tuple[str, ...]
    out: Path
    jobs: int
    cell_timeout: float
    notebook_timeout: float
    judge_timeout: float
    memory_gb: float
    seed: int | None            # None: the output folder's secret seed
    solutions: Path | None
    extra_tests: Path | None
    force: bool
    progress: bool
    no_sandbox: bool
    only: tuple[str, ...] = ()          # regrade these learners only; the others' results stay as they are
    exercises: tuple[str, ...] = ()     # regrade these exercises only; the others' results stay as they are
    unprivileged_user: bool = False     # no bubblewrap (a Gradescope container): the kernel as an unprivileged uid
    cluster: str = ""                   # a Dask scheduler's address, or local:N (grading.cluster)
    shard: tuple[int, int] | None = None   # (i, N): grade only this share of the learners (grading.shards)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="labkit grade", description="Grade learners' notebooks for one lesson (see docs/instructors.md).")
    p.add_argument("lesson", help="lesson number (05; 09b for a split lesson's second notebook) or name (05_fusion)")
    p.add_argument("submissions", nargs="+", help=".ipynb files or folders of them")
    p.add_argument("--out", required=True, help="output folder (grades.csv, students/<student>/feedback.html, ...)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="submissions graded in parallel (default: cores)")
    p.add_argument("--timeout", type=float, default=DEFAULT_CELL_TIMEOUT,
                   help=f"seconds one cell may run (default {DEFAULT_CELL_TIMEOUT})")
    p.add_argument("--notebook-timeout", type=float, default=None,
                   help=f"seconds a whole notebook may run (default max({DEFAULT_NOTEBOOK_TIMEOUT}, 4 x --timeout))")
    p.add_argument("--judge-timeout", type=float, default=DEFAULT_JUDGE_TIMEOUT,
                   help=f"seconds the checker may spend on one exercise (default {DEFAULT_JUDGE_TIMEOUT})")
    p.add_argument("--memory", type=float, default=3.0, help="address-space limit of a kernel in GB (default 3)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the hidden test inputs (default: a secret seed kept in the output folder)")
    p.add_argument("--solutions", default=None, help="folder of solution notebooks (default: the course's solutions/)")
    p.add_argument("--extra-tests", default=None, help="a Python file of private extra tests (docs/instructors.md)")
    p.add_argument("--force", action="store_true", help="ignore the cache and grade everything again")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--only", action="append", default=[], metavar="STUDENT",
                   help="regrade only this learner (repeatable); everyone else's results in --out stay as they are")
    p.add_argument("--exercise", action="append", default=[], metavar="ID",
                   help="regrade only this exercise (repeatable); the learners' other exercises keep their results")
    p.add_argument("--no-sandbox", action="store_true",
                   help="grade without bubblewrap (refused as root; see what is then not guaranteed)")
    p.add_argument("--unprivileged-user", action="store_true",
                   help="where bubblewrap cannot run (Gradescope's container), as root: run each kernel as an "
                        "unprivileged uid; answers must then be readable by root only (the Gradescope bundle does this)")
    p.add_argument("--seed-file", default=None, metavar="FILE",
                   help="read the seed from FILE (keep it private, mode 0600): the same seed for every shard or node")
    p.add_argument("--cluster", default="", metavar="ADDRESS",
                   help="grade on a Dask cluster: a scheduler's address (tcp://host:8786) or local:N for N worker "
                        "processes on this machine (needs labkit[cluster]; docs/instructors.md, Past one machine)")
    p.add_argument("--shard", default=None, metavar="I/N",
                   help="grade only share I of N of the learners (0 <= I < N, by learner id) into --out; "
                        "`labkit grades merge` joins the shards' folders")
    return p


def parse(argv: list[str] | None) -> Options:
    a = parser().parse_args(argv)
    if a.jobs < 1:
        raise GradeError("--jobs must be at least 1")
    for name in ("timeout", "judge_timeout", "memory"):
        if getattr(a, name) <= 0:
            raise GradeError(f"--{name.replace('_', '-')} must be positive")
    nb_timeout = a.notebook_timeout or max(DEFAULT_NOTEBOOK_TIMEOUT, 4 * a.timeout)
    seed = a.seed
    if a.seed_file is not None:
        if seed is not None:
            raise GradeError("give --seed or --seed-file, not both")
        seed = read_seed_file(Path(a.seed_file))
    shard = parse_shard(a.shard) if a.shard is not None else None
    if shard is not None and seed is None:
        raise GradeError("--shard needs the class's seed, the same for every shard: --seed-file FILE (or --seed)")
    return Options(a.lesson, tuple(a.submissions), Path(a.out).resolve(), a.jobs, float(a.timeout), float(nb_timeout),
                   float(a.judge_timeout), float(a.memory), seed,
                   Path(a.solutions).resolve() if a.solutions else None,
                   Path(a.extra_tests).resolve() if a.extra_tests else None, a.force, not a.no_progress, a.no_sandbox,
                   tuple(a.only), tuple(a.exercise), a.unprivileged_user, parse_cluster(a.cluster), shard)


_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
_LOCAL = re.compile(r"^local:(\d+)$")


def parse_shard(text: str) -> tuple[int, int]:
    """`I/N` -> (I, N), 0 <= I < N; GradeError otherwise."""
    m = _SHARD.match(text)
    if not m or not 0 <= int(m[1]) < int(m[2]):
        raise GradeError(f"--shard {text!r}: give I/N with 0 <= I < N (for example 0/4 … 3/4)")
    return int(m[1]), int(m[2])


def parse_cluster(text: str) -> str:
    """A Dask scheduler address (tcp://host:8786, tls://…, host:8786) or local:N; '' for none."""
    text = text.strip()
    if not text:
        return ""
    m = _LOCAL.match(text)
    if m:
        if int(m[1]) < 1:
            raise GradeError("--cluster local:N needs N >= 1 worker processes")
        return text
    if "://" in text or re.fullmatch(r"[\w.-]+:\d+", text):
        return text
    raise GradeError(f"--cluster {text!r}: give a Dask scheduler's address (tcp://host:8786) or local:N")


def read_seed_file(path: Path) -> int:
    """The seed kept in `path` (one integer). A file others may read is said, not refused (a mounted
    Kubernetes Secret is 0644 inside its own pod)."""
    try:
        text = path.read_text().strip()
        mode = path.stat().st_mode
    except OSError as e:
        raise GradeError(f"--seed-file {path}: {e.strerror or e}") from None
    if not re.fullmatch(r"\d{1,18}", text):
        raise GradeError(f"--seed-file {path}: it must hold one non-negative integer")
    if mode & stat.S_IROTH:
        print(f"labkit grade: note: {path} is readable by every user of this machine; the seed decides the hidden "
              "test inputs (chmod 600 it)", file=sys.stderr)
    return int(text)

