"""The Dask backend of `labkit grade --cluster ADDRESS` (`local:N`: a LocalCluster of N processes).

The client (this process) keeps everything that decides and records a grade: it reads and rebuilds
the submissions, looks up the cache, and hands every `Outcome` to the one `writer.Writer` as it
completes, so an interrupted run resumes with nothing graded twice. A Dask task carries one `Job`
(its settings hold the seed: it reaches the nodes in the task's arguments, never in a file) and
returns one `Outcome`. On its node, `grade_on_node` prepares that node once per batch
(`node_context`: the node's own course install, its own sandbox and temporary folder, its test
bundle checked against the client's) and grades the job with the same `batch.grade_one`, in a
grading process the Dask worker keeps between tasks (so its warm kernel server stays warm).

A worker that dies mid-task costs nothing: the scheduler gives the task to another worker, and a
task that was running on `allowed-failures` + 1 dead workers (`KilledWorker`) is recorded as an
error for that learner alone (not cached: a re-run tries it again).
"""
from __future__ import annotations

import socket
import uuid
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from .jobs import Job, Outcome, Settings
from .options import GradeError, Options
from .submissions import Submission
from .writer import Writer, progress
from ..text import shorten

try:
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError:  # without Dask, `run_on_cluster` says what to install
    WorkerPlugin = object

#: a task that was running on this many + 1 workers when they died is not tried again (local:N; a
#: remote scheduler uses its own `distributed.scheduler.allowed-failures`)
ALLOWED_FAILURES = 2
#: what `local:N` sets in this process's Dask configuration (a remote cluster: see docs/instructors.md).
#: Worker processes that may have children (each grades in a child process of its own); one task per
#: worker at a time (the balance stays even, and a dead worker takes one task with it); no statistical
#: profiler (it samples every thread of a worker every 10 ms for a dashboard nobody opens here: lesson 03's
#: class took 2.96 s per submission with it, 2.73 s without, against 2.45 s on the local backend).
LOCAL_CONFIG = {"distributed.scheduler.allowed-failures": ALLOWED_FAILURES,
                "distributed.scheduler.worker-saturation": 1.0, "distributed.worker.daemon": False,
                "distributed.worker.profile.enabled": False}


def _dask():
    try:
        import distributed
    except ImportError:
        raise GradeError("--cluster needs Dask distributed: pip install 'labkit[cluster]' (on the client and "
                         "on every node)") from None
    return distributed


def connect(address: str):
    """(client, cluster it started or None) for `address`: local:N starts a LocalCluster of N worker
    processes with one thread each on loopback; anything else is a running scheduler's address."""
    import dask

    distributed = _dask()
    try:
        if address.startswith("local:"):
            dask.config.set(LOCAL_CONFIG)  # for the whole run: a nanny restarting a killed worker reads it too
            cluster = distributed.LocalCluster(n_workers=int(address[6:]), threads_per_worker=1, processes=True,
                                               host="127.0.0.1", dashboard_address=None)
            return distributed.Client(cluster), cluster
        return distributed.Client(address, timeout="30s"), None
    except (OSError, TimeoutError) as e:
        raise GradeError(f"--cluster {address}: cannot reach the Dask scheduler ({shorten(e, 200)})") from None


def run_on_cluster(opts: Options, machine: object, jobs: list[tuple[Submission, Job]], writer: Writer) -> None:
    """The Dask backend of `batch.grade`: `jobs` on the cluster `opts.cluster`, each outcome to `writer`
    as it completes (`machine`, the client's own preparation, is not used: each node prepares its own)."""
    distributed = _dask()
    client, cluster = connect(opts.cluster)
    bar = progress(len(jobs), opts)
    futures: dict = {}
    waiting = list(reversed(jobs))
    done = distributed.as_completed()

    def top_up() -> None:
        """Keep one task per worker thread in flight: a task waits on the client, not in a worker's queue,
        so a worker that dies takes only the task it was grading with it, and the ETA stays honest."""
        slots = max(1, sum(client.nthreads().values()))
        while waiting and len(futures) < slots:
            s, job = waiting.pop()
            key = f"labkit-grade-{job.student}-{uuid.uuid4().hex[:8]}"
            fut = client.submit(grade_on_node, job, key=key, pure=False)
            futures[fut] = (s, job)
            done.add(fut)

    try:
        client.register_plugin(NodePlugin(), name="labkit-grade")
        top_up()
        for fut in done:
            s, job = futures.pop(fut)
            try:
                outcome = fut.result()
            except distributed.KilledWorker as e:
                times = getattr(e, "allowed_failures", None)
                outcome = Outcome.failed(f"the Dask worker grading it died {'' if times is None else times + 1} "
                                         "time(s), the most the scheduler allows (allowed-failures); not graded")
            except Exception as e:  # noqa: BLE001 - the cluster lost it: this learner's row, not the batch
                outcome = Outcome.failed(f"the cluster could not grade it: {shorten(e, 200)}")
            fut.release()
            writer.put(s, job, outcome)
            if bar:
                bar.update(1)
            top_up()
    finally:
        if futures:  # interrupted: nothing left running on the cluster for this batch
            client.cancel(list(futures), force=True)
        try:  # every worker ends its grading process and removes its folder (hidden inputs, data copy)
            client.run(close_node)
        except Exception:  # noqa: BLE001 - a worker that is gone has nothing left to end
            pass
        if bar:
            bar.close()
        client.close()
        if cluster is not None:
            cluster.close()


# ---------------------------------------------------------------- on a node (a Dask worker process)


@dataclass
class NodeContext:
    """What one Dask worker prepared for one batch: its machine view and its grading process."""

    settings: Settings
    machine: object                 # batch.Machine
    pool: object                    # concurrent.futures.ProcessPoolExecutor (batch.grading_pool)
    tmp_root: Path

    def close(self) -> None:
        from .batch import _remove, kill_pool

        kill_pool(self.pool)
        _remove(self.tmp_root)


_NODE: NodeContext | None = None


def _where() -> str:
    import os

    return f"{socket.gethostname()} (pid {os.getpid()})"


def node_context(settings: Settings) -> NodeContext:
    """This worker's context for `settings`' batch, prepared on first use: the lesson from this node's
    course install, the protection the client chose (refused when this node cannot give it), the
    verified data, the hidden inputs and the sandbox view in a private folder, a grading process.
    GradeError when this node would grade differently (its test bundle is not the client's)."""
    global _NODE
    if _NODE is not None and _NODE.settings == settings:
        return _NODE
    close_node()
    import multiprocessing

    if multiprocessing.current_process().daemon:
        raise GradeError("this Dask worker is a daemonic process, which may not start the grading process: start "
                         "the workers with DASK_DISTRIBUTED__WORKER__DAEMON=False (docs/instructors.md)")
    from .batch import grading_pool, new_tmp_root, prepare_machine
    from .lesson import load_lesson, resolve_lesson
    from .sandbox import for_mode

    protection = for_mode(settings.protection)
    lesson = load_lesson(resolve_lesson(settings.lesson, Path(settings.solutions) if settings.solutions else None))
    lesson.extra_tests = settings.extra
    tmp_root = new_tmp_root(protection)
    try:
        machine, bundle = prepare_machine(settings, lesson, protection, tmp_root)
        if bundle != settings.bundle:
            raise GradeError("this node's course, labkit, packages or limits differ from the client's (test bundle "
                             f"{bundle[:12]}, the client's {settings.bundle[:12]}): install the same versions")
    except BaseException:
        from .batch import _remove

        _remove(tmp_root)
        raise
    _NODE = NodeContext(settings, machine, grading_pool(1), tmp_root)
    return _NODE


def close_node() -> None:
    """End this worker's batch context (its grading process and temporary folder)."""
    global _NODE
    if _NODE is not None:
        node, _NODE = _NODE, None
        node.close()


def grade_on_node(job: Job) -> Outcome:
    """The Dask task: grade one job on this worker with `batch.grade_one`, in the worker's grading
    process. Never raises for a problem of this node or job: that is the outcome's `error`."""
    from .batch import Task, grade_one

    try:
        node = node_context(job.settings)
    except GradeError as e:
        return Outcome.failed(f"{_where()}: {e}")
    try:
        return node.pool.submit(grade_one, Task(job, node.machine)).result()
    except BrokenProcessPool as e:  # the grading process died (not the Dask worker): a fresh one next time
        close_node()
        return Outcome.failed(f"the grading process on {_where()} died: {shorten(e, 200)}")


class NodePlugin(WorkerPlugin):
    """Registered on every worker: ends the worker's grading process and removes its temporary
    folder when the worker closes (a killed worker's folder is removed by the next batch there)."""

    idempotent = True

    def teardown(self, worker) -> None:
        close_node()
