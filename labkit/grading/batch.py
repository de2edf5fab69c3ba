"""Stage 7: grade a batch — prepare once (inputs, verified data copy, sandbox view), then each
submission's `jobs.Job` in a pool worker (run, judge, compose -> `jobs.Outcome`), or on a Dask
cluster (`cluster`), each outcome written by the one `writer.Writer`, cached, with temporary folders
removed however grading ends (normal end, error, Ctrl-C, SIGTERM; a SIGKILLed grader's are removed
by the next run).
"""
from __future__ import annotations

import asyncio
import atexit
import hashlib
import os
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import nbformat

from ..assign import lesson_version, make_lesson
from . import confined, judge
from .confined import inputs_folder
from .forkserver import KernelServer, SandboxSpec, warm_plan
from .jobs import Job, Outcome, Settings
from .judge import copy_answers, judge_answers
from .lesson import ExerciseInfo, Lesson, bundle_hash, load_lesson, resolve_lesson
from .options import GradeError, Options
from .rebuild import Rebuilt, build_run
from .reports import finish_run, histogram, previous_records, record, write_grades, write_manifest
from .results import Learner, ResultsError
from .run import Runner, bound_channels
from .submissions import Submission, expand, problem_files, read_submission, resolve, roots_of
from .sandbox import Sandbox, select
from .verdicts import compose, unjudged
from .writer import Writer, learner_record, progress
from ..text import shorten

if TYPE_CHECKING:
    from .cache import ResultsCache

WORKER_MEMORY = 4 << 30
TMP_PREFIX = "labkit-grade-"


@dataclass(frozen=True)
class Machine:
    """What one machine prepared for a batch (`prepare_machine`): its paths are local to it."""

    exercises: list[ExerciseInfo]
    spec: SandboxSpec
    tmp_root: str
    warm: dict                        # what the kernel server pre-imports (forkserver.warm_plan)


@dataclass(frozen=True)
class Task:
    """A job with what the machine grading it prepared (picklable, no learner objects)."""

    job: Job
    machine: Machine

    @property
    def spec(self) -> SandboxSpec:
        return self.machine.spec

    @property
    def tmp_root(self) -> str:
        return self.machine.tmp_root

    @property
    def warm(self) -> dict:
        return self.machine.warm


# ---------------------------------------------------------------- preparing the batch (grader process)


def make_tmp_root(base: Path | None = None) -> Path:
    """A short private folder for this run (IPC socket paths must stay under 100 bytes); stale ones
    of graders that were killed outright are removed first."""
    base = base or Path(tempfile.gettempdir())
    if len(str(base)) > 40:
        base = Path("/tmp")
    for old in base.glob(TMP_PREFIX + "*"):
        try:
            pid = int((old / "owner.pid").read_text())
            os.kill(pid, 0)
        except ProcessLookupError:
            _remove(old)
        except (OSError, ValueError):
            pass
    root = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=base))
    (root / "owner.pid").write_text(str(os.getpid()))
    return root


def _remove(folder: Path) -> None:
    """Remove a temporary folder whatever a kernel left in it (any depth, links not followed); never raises."""
    from .. import sandbox

    try:
        sandbox.remove_tree(folder)
    except Exception:  # noqa: BLE001 - a stale folder must never stop grading
        pass


def _readable(folder: Path) -> None:
    """Folders 0755 and files 0444, owned by the grader: a kernel may read, never change them."""
    for d, _, files in os.walk(folder):
        os.chmod(d, 0o755)
        for f in files:
            os.chmod(os.path.join(d, f), 0o444)


def prepare_data(lesson: Lesson, dest: Path) -> dict[str, str]:
    """Give the kernels a private read-only copy of the course data, verified by its SHA-256.

    The digits split is the only data file (the CNN's weights ship inside labkit and are verified
    whenever they load). Returns {file name: sha256} of the copy (part of the cache key)."""
    import numpy as np

    from ..data import SPLIT_SHA256, Digits, _split_file, digits, split_sha256

    digits()  # verifies the cached split, rebuilding it if it does not verify
    src = _split_file()
    dest.mkdir(parents=True)
    data = src.read_bytes()
    copy = dest / src.name
    copy.write_bytes(data)
    with np.load(copy, allow_pickle=False) as f:  # what the kernels will read is what was verified
        if split_sha256(Digits(*(f[k] for k in Digits._fields))) != SPLIT_SHA256:
            raise GradeError(f"the course data changed while it was copied ({src}): grade again")
    _readable(dest)
    return {src.name: hashlib.sha256(data).hexdigest()}


def prepare_inputs(lesson: Lesson, seed: int, dest: Path) -> None:
    """The hidden test inputs of every function exercise, computed here with the secret seed: for the
    kernels in `dest`, except those of confined exercises, which go to `confined.inputs_folder(dest)`, a
    folder no kernel sees (`confined` calls those answers on them after the kernel is gone)."""
    from .. import plain
    from ..checks import judge_spec
    from .confined import inputs_folder

    hidden = inputs_folder(dest)
    hidden.mkdir(mode=0o700, parents=True, exist_ok=True)
    for ex in lesson.exercises:
        if ex.kind == "function":
            plain.save_inputs(judge_spec(ex.id).cases(seed), (hidden if ex.tools else dest) / ex.id)
    dest.mkdir(parents=True, exist_ok=True)
    _readable(dest)


def load_extra_tests(text: str) -> None:
    """Run the instructor's private extra tests here (they may replace an exercise's cases and judge)."""
    if text:
        exec(compile(text, "<extra tests>", "exec"), {"__name__": "labkit_extra_tests"})


def sandbox_spec(opts: Options | Settings, protection: Sandbox, inputs: Path, data: Path,
                 confined: tuple[str, ...]) -> SandboxSpec:
    """The sandbox view of a batch; `confined`: the exercises whose checks run with only their tools."""
    import labkit
    import labkit_judges

    from .. import sandbox

    limits = dict(sandbox.DEFAULT_LIMITS, **{"as": int(opts.memory_gb * sandbox.GiB),
                                             "cpu": int(opts.notebook_timeout) + 120})
    visible = [*sandbox.python_paths(), Path(labkit.__file__).resolve().parent, inputs, data]
    hidden = [Path(labkit_judges.__file__).resolve().parent]
    uid = protection.kernel_uid()
    pythonpath = protection.prepare(uid, inputs.parent, confined)
    return SandboxSpec(limits, protection, tuple(map(str, visible)), tuple(map(str, hidden)),
                       str(inputs), str(data), uid, pythonpath)


def current_lesson_version(lesson: Lesson) -> str:
    """The version `labkit assign` stamps in this lesson today ('' if it cannot be computed)."""
    import json

    try:
        nb = nbformat.reads(json.dumps(lesson.solution), as_version=4)  # sources as strings, as assign reads them
        return lesson_version(make_lesson(nb, lesson.name))
    except Exception:  # a lesson assign cannot render is refused by assign itself; grading goes on
        return ""


def outdated_notes(rebuilt: Rebuilt, theirs: str, current: str) -> None:
    """A notebook saved from an older version of the lesson: its cells that differ from today's lesson
    are the lesson's change, not the learner's. Say so, instead of "deleted" or "edited"."""
    said = False
    for x, notes in rebuilt.notes.items():
        kept = [n for n in notes if "was deleted; the original ran" not in n and "was edited; your edit was not run" not in n]
        if len(kept) != len(notes) or not said:
            kept.insert(0, f"your notebook is from an older version of this lesson ({theirs}; now {current}): it was "
                           "graded on your answer cells inside the current lesson; download the new lesson for the "
                           "changed cells")
            said = True
        rebuilt.notes[x] = kept


# ---------------------------------------------------------------- one submission (pool worker)


def worker_init() -> None:
    from .. import sandbox
    from .forkserver import worker_setup

    worker_setup()  # first, while the worker has one thread: its own mount namespace (root)
    sandbox.make_subreaper()
    # die with the grader, even when it is killed: a worker left behind would go on grading
    sandbox._prctl(sandbox.PR_SET_PDEATHSIG, int(signal.SIGKILL))
    bound_channels()
    try:  # a bounded worker: a flood it somehow accepted ends in MemoryError here, not the OOM killer
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY, resource.getrlimit(resource.RLIMIT_AS)[1]))
    except (ImportError, ValueError, OSError):
        pass


_KERNELS: KernelServer | None = None


def kernel_server(task: Task) -> KernelServer:
    """This worker's warm kernel server (one per worker and batch; stopped when the worker ends)."""
    global _KERNELS
    slot = Path(task.tmp_root) / f"slot{os.getpid()}"
    if _KERNELS is None or _KERNELS.spec != task.spec or _KERNELS.slot != slot or _KERNELS.warm != task.warm:
        if _KERNELS is not None:
            _KERNELS.close()
        else:
            atexit.register(lambda: _KERNELS and _KERNELS.close())
        _KERNELS = KernelServer(task.spec, slot, task.warm)
    return _KERNELS


def grade_one(task: Task) -> Outcome:
    """Turn one job into its outcome (in a pool worker, here or on a cluster node): run, judge,
    compose. Never raises: a problem of the grader is the outcome's `error`."""
    from .. import sandbox

    t0 = time.monotonic()
    job, how, exercises = task.job, task.job.settings, task.machine.exercises
    server = kernel_server(task)
    judge.start_server(how.lesson, how.seed, how.extra, how.judge_timeout, task.spec.data_dir)  # warms meanwhile
    judge_dir = Path(tempfile.mkdtemp(prefix="lkj", dir=task.tmp_root))
    verified = False
    try:
        runner = Runner(job.rebuilt.cells, server, how.cell_timeout, how.notebook_timeout)
        try:
            server.begin()  # a verified-clean server, a fresh folder and uid (see forkserver)
            verified = server.verified
            events = asyncio.run(runner.run())
        except Exception as e:
            return Outcome.failed(shorten(e, 300), round(time.monotonic() - t0, 2))
        finally:  # all below this worker but its verdict process and its kernel server
            sandbox.kill_tree(spare=judge.server_pids() | ({server.proc.pid} if server.proc else set()))
            server.kill_others()
        problems = copy_answers(server.work / "answers", judge_dir / "answers")
        confined.call_answers(judge_dir, exercises, inputs_folder(Path(task.spec.inputs_dir)), task.spec,
                              server.kernel_uid)
        t_judge = time.monotonic()
        try:
            verdicts = judge_answers(how.lesson, judge_dir / "answers", how.seed, [e.id for e in exercises],
                                     how.extra, how.judge_timeout, task.spec.data_dir)
        except Exception as e:
            return Outcome.failed(f"the checker failed: {shorten(e, 300)}", round(time.monotonic() - t0, 2))
        results = compose(exercises, job.rebuilt, events, verdicts, how.cell_timeout, how.notebook_timeout)
        cells = job.rebuilt.cells
        events = [dict(e, seconds=round(e.get("seconds", 0.0), 2), role=cells[e["cell"]].role,
                       exercise=cells[e["cell"]].exercise) for e in events]
        return Outcome.make(results, events, problems, seconds=round(time.monotonic() - t0, 2),
                            judge_seconds=round(time.monotonic() - t_judge, 2), kernel_starts=runner.kernel_starts,
                            verified=verified, protection=how.protection)
    finally:
        try:
            server.end()  # nothing of this submission stays for the next, verified (its answers were copied)
        except Exception:
            server.close()
        _remove(judge_dir)


# ---------------------------------------------------------------- the batch (the client)


#: how a batch's jobs are graded: `run_local`, or `cluster.run_on_cluster`
Backend = Callable[[Options, Machine, list[tuple[Submission, Job]], Writer], None]


def grade(opts: Options, backend: Backend | None = None) -> int:
    """`labkit grade`: check the inputs, prepare the run once, reuse cached grades, grade the rest with
    `backend` (default: a pool of sandboxed workers here, `run_local`; `command` picks the Dask one),
    then write the class outputs. Returns the exit status."""
    from .cache import secret_seed

    protection = select(opts.no_sandbox, opts.unprivileged_user)
    lesson = load_lesson(resolve_lesson(opts.lesson, opts.solutions), opts.extra_tests)
    files = expand(opts.submissions)
    if not files:
        raise GradeError("no submissions found in " + ", ".join(opts.submissions))
    out = opts.out
    cache = open_output(out, files, protection)
    seed = opts.seed if opts.seed is not None else secret_seed(out)
    announce(lesson, len(files), f"on the Dask cluster {opts.cluster}" if opts.cluster else f"{opts.jobs} job(s)",
             protection)

    tmp_root = new_tmp_root(protection)
    if threading.current_thread() is threading.main_thread():  # `kill`: clean up as Ctrl-C does
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        settings = Settings(lesson.number, str(opts.solutions) if opts.solutions else None, seed, lesson.extra_tests,
                            opts.cell_timeout, opts.notebook_timeout, opts.judge_timeout, opts.memory_gb,
                            protection.mode)
        machine, bundle = prepare_machine(settings, lesson, protection, tmp_root)
        settings = replace(settings, bundle=bundle)
        current_version = current_lesson_version(lesson)
        subs, learners = read_batch(lesson, files, roots_of(opts.submissions), out, opts.shard, bundle)
        subs = _select(opts, lesson, subs)
        previous = ({k: v for k, v in previous_records(out).items() if k in learners}
                    if (opts.only or opts.exercises) else {})
        records, todo, cached = plan(opts, lesson, subs, cache, bundle, current_version, lambda rebuilt: rebuilt)
        writer = Writer(opts, lesson, protection, cache, previous)
        writer.start(records)
        if cached:
            print(f"{cached} submission(s) unchanged since the last run: reused their grades.", file=sys.stderr)
        jobs = [(s, Job(s.student, s.name, str(s.path), s.sha, key, rebuilt, settings)) for s, rebuilt, key in todo]
        if jobs:
            (backend or run_local)(opts, machine, jobs, writer)
    except (KeyboardInterrupt, SystemExit):  # Ctrl-C, kill: grades.csv from what is saved, overrides applied
        _grades_so_far(out)
        raise
    finally:
        _remove(tmp_root)
    return finish(out, lesson, protection, writer.all_records(), writer.failures)


def new_tmp_root(protection: Sandbox) -> Path:
    """This machine's private folder for a batch (`make_tmp_root`), of the mode the sandbox asks for
    (walkable by an unprivileged kernel uid when no bind mount brings it its slot and data)."""
    tmp_root = make_tmp_root()
    if protection.tmp_root_mode is not None:
        os.chmod(tmp_root, protection.tmp_root_mode)
    return tmp_root


def prepare_machine(settings: Settings, lesson: Lesson, protection: Sandbox, tmp_root: Path) -> tuple[Machine, str]:
    """Prepare this machine (the client, or a cluster node) for a batch in `tmp_root`: the extra tests
    loaded, the verified data copy, the hidden inputs, the sandbox view, the kernel server's warm
    plan. Returns it and the bundle hash it gives."""
    load_extra_tests(settings.extra)
    spec, bundle = prepare_run(settings, lesson, protection, settings.seed, tmp_root)
    warm = warm_plan([c.source for c in build_run(lesson, lesson.solution).cells])  # what a submission runs
    return Machine(lesson.exercises, spec, str(tmp_root), warm), bundle


def _grades_so_far(out: Path) -> None:
    """grades.csv after an interrupted run (never raises: the interruption is what the user sees)."""
    try:
        write_grades(out)
    except (ResultsError, OSError):
        pass


def open_output(out: Path, files: list[Path], protection: Sandbox) -> ResultsCache:
    """Create the output folder and open its results cache (trusted only when the sandbox says so); refuse
    submissions inside it (the grader writes there)."""
    from .cache import ResultsCache

    try:
        out.mkdir(parents=True, exist_ok=True)
        cache = ResultsCache(out, trusted=protection.trusted_cache)
    except OSError as e:
        raise GradeError(f"cannot write the output folder {out}: {e}") from None
    if any(os.path.abspath(f).startswith(str(out) + os.sep) for f in files):
        raise GradeError(f"submissions must not lie inside the output folder {out}")
    return cache


def announce(lesson: Lesson, n_files: int, where: str, protection: Sandbox) -> None:
    """Say what is graded, where and how it is protected, and what this protection mode does not guarantee."""
    print(f"Grading lesson {lesson.name}: {n_files} submission(s), {where}. "
          f"Protection: {protection.description}", file=sys.stderr)
    if protection.not_guaranteed:
        print(f"labkit grade: {protection.mode.upper()} MODE, NOT GUARANTEED:\n  - "
              + "\n  - ".join(protection.not_guaranteed), file=sys.stderr)


def prepare_run(opts: Options | Settings, lesson: Lesson, protection: Sandbox, seed: int,
                tmp_root: Path) -> tuple[SandboxSpec, str]:
    """Prepare once for the whole batch: the verified data copy, the hidden inputs and the sandbox
    view; returns that view and the bundle hash (everything a verdict depends on, for the cache key)."""
    data_hashes = prepare_data(lesson, tmp_root / "data")
    prepare_inputs(lesson, seed, tmp_root / "inputs")
    spec = sandbox_spec(opts, protection, tmp_root / "inputs", tmp_root / "data",
                        tuple(e.id for e in lesson.exercises if e.tools))
    bundle = bundle_hash(lesson, seed=seed, limits={"kernel": spec.limits, "cell": opts.cell_timeout,
                                                    "notebook": opts.notebook_timeout, "judge": opts.judge_timeout},
                         protection_mode=protection.mode, data_hashes=data_hashes)
    return spec, bundle


def read_batch(lesson: Lesson, files: list[Path], roots: tuple[str, ...], out: Path,
               shard: tuple[int, int] | None = None, bundle: str = "") -> tuple[list[Submission], set[str]]:
    """Read every file and resolve them to one submission per learner (only `shard`'s share of the
    learners, when given); report the resolution and the stale learner folders of earlier runs, and
    write the manifest (with the test bundle and shard). A file that is not a notebook at all is a
    problem file: listed in the manifest, never a learner. Returns the submissions and learners."""
    from .shards import in_shard

    notebooks, problems = problem_files([read_submission(f, lesson, roots) for f in files])
    if not notebooks and shard is None:
        raise GradeError(f"none of the {len(problems)} file(s) given is a notebook: "
                         + "; ".join(f"{s.path.name} ({s.error})" for s in problems[:5]))
    subs, older, resolution = resolve(notebooks)
    if shard is not None:
        subs, older = [s for s in subs if in_shard(s.student, shard)], [s for s in older if in_shard(s.student, shard)]
        problems = [s for s in problems if in_shard(s.student, shard)]
    learners = {s.student for s in subs}
    stale = sorted(set(previous_records(out)) - learners)
    for note in resolution.notes:
        print("  " + note, file=sys.stderr)
    if problems:
        print(f"labkit grade: {len(problems)} problem file(s), not notebooks (not graded, not counted as learners): "
              + "; ".join(f"{s.path.name} ({s.error})" for s in problems[:10]), file=sys.stderr)
    if stale:
        print(f"labkit grade: {len(stale)} learner folder(s) in {out / 'students'} are from files no longer "
              f"given (not in this run's grades, exports or report): {', '.join(stale[:10])}", file=sys.stderr)
    write_manifest(out, lesson, subs, older, resolution.notes, stale,
                   batch={"bundle": bundle, "shard": list(shard) if shard else None}, problems=problems)
    return subs, learners


def plan(opts: Options, lesson: Lesson, subs: list[Submission], cache: ResultsCache, bundle: str,
         current_version: str, task_for: Callable[[Rebuilt], object]) -> tuple[dict[str, Learner], list, int]:
    """Sort the submissions: unreadable ones become records at once, cached ones reuse their grade,
    the rest are rebuilt into what runs. Returns (records, [(submission, task_for(rebuilt), cache key)],
    cached)."""
    out = opts.out
    records: dict[str, Learner] = {}
    todo: list[tuple[Submission, object, str]] = []
    cached = 0
    for s in subs:
        key = cache.entry_key(s.sha or hashlib.sha256(str(s.path).encode()).hexdigest(), bundle)
        if s.error is not None or s.nb is None:
            records[s.student] = record(lesson, s, [unjudged(ex, s.status, s.error or "") for ex in lesson.exercises],
                                        protection="not run", key=key, out=out)
            continue
        hit = None if (opts.force or opts.only or opts.exercises) else _cached(cache, key)
        if hit is not None:
            records[s.student] = learner_record(lesson, s, key, hit, out, cached=True)
            cached += 1
            continue
        rebuilt = build_run(lesson, s.nb)
        if s.version and current_version and s.version != current_version:
            outdated_notes(rebuilt, s.version, current_version)
        s.nb = None  # the parent keeps only what runs
        todo.append((s, task_for(rebuilt), key))
    return records, todo, cached


def finish(out: Path, lesson: Lesson, protection: Sandbox, records: dict[str, Learner], failures: list[str]) -> int:
    """Write the histogram and the run summary, name the outputs, list the submissions the grader
    could not grade (exit status 1: re-run to retry them)."""
    histogram(out / "histogram.png", [r.points for r in records.values()], lesson.max_points, lesson.number)
    print(finish_run(out, lesson, protection.description))
    print(f"\nWrote {out / 'grades.csv'}, {out / 'histogram.png'} and a folder per student under "
          f"{out / 'students'} (results.json, feedback.html).")
    if failures:
        print(f"labkit grade: {len(failures)} submission(s) could not be graded because of a problem in the "
              "grader or this machine (not the submission); re-run to retry them:", file=sys.stderr)
        for f in failures:
            print("  " + f, file=sys.stderr)
        return 1
    return 0


def _cached(cache: ResultsCache, key: str) -> Outcome | None:
    """The outcome cached under `key` (None when absent or not one this labkit reads: such a
    submission is graded again)."""
    hit = cache.get(key)
    if hit is None:
        return None
    try:
        outcome = Outcome.from_json(hit)
    except ResultsError:
        return None
    return None if outcome.error or not outcome.verified else outcome


def _select(opts: Options, lesson: Lesson, subs: list[Submission]) -> list[Submission]:
    """--only and --exercise: check what they name, keep the submissions to regrade."""
    known = {e.id for e in lesson.exercises}
    bad = [x for x in opts.exercises if x not in known]
    if bad:
        raise GradeError(f"--exercise {', '.join(bad)}: lesson {lesson.number} has {', '.join(sorted(known))}")
    if not opts.only:
        return subs
    from .identity import fold

    picked, missing = [], []
    for want in opts.only:  # a learner id, or a display name that names exactly one learner
        hits = [s for s in subs if s.student.lower() == want.lower()] or [s for s in subs if fold(s.name) == fold(want)]
        if len(hits) != 1:
            missing.append(want if not hits else f"{want} (ambiguous: {', '.join(s.student for s in hits)})")
        else:
            picked += [h for h in hits if h not in picked]
    if missing:
        raise GradeError(f"--only {', '.join(missing)}: no such learner among the files given "
                         f"(learners: {', '.join(sorted(s.student for s in subs)[:20])})")
    return picked


def grading_pool(workers: int):
    """A pool of `workers` sandboxed grading processes (spawned, each set up by `worker_init`)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=worker_init)


def kill_pool(pool) -> None:
    """Stop a grading pool at once (Ctrl-C, kill): its kernels die with its workers (bubblewrap
    --die-with-parent, PDEATHSIG)."""
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        proc.kill()
    pool.shutdown(wait=False, cancel_futures=True)


def run_local(opts: Options, machine: Machine, jobs: list[tuple[Submission, Job]], writer: Writer) -> None:
    """The local backend: `opts.jobs` pool workers on this machine, each outcome to the writer as it completes."""
    from concurrent.futures import as_completed

    bar = progress(len(jobs), opts)
    pool = grading_pool(min(opts.jobs, len(jobs)))
    try:
        futures = {pool.submit(grade_one, Task(job, machine)): (s, job) for s, job in jobs}
        for fut in as_completed(futures):
            s, job = futures[fut]
            try:
                outcome = fut.result()
            except Exception as e:  # a worker crashed (should not happen): report, go on
                outcome = Outcome.failed(f"the grading worker failed: {shorten(e, 200)}")
            writer.put(s, job, outcome)
            if bar:
                bar.update(1)
    except BaseException:  # Ctrl-C or kill: stop at once; finished submissions are saved and cached
        kill_pool(pool)
        raise
    pool.shutdown(wait=True)
    if bar:
        bar.close()
