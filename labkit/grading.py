"""`labkit grade LESSON SUBMISSION... --out DIR`: grade a class's notebooks, and trust the result.

How one submission is graded:

1. **Rebuild.** What runs is the instructor's solution notebook with each solution answer cell
   replaced by the learner's answer cell (found by its `answer:LL.name` tag, else by its cell id).
   Nothing else from the submission runs: edited, deleted or added cells are only reported.
   `skip-grading` cells are left out, the `parameters` cell gets `QUICK = True`.
2. **Execute.** A fresh kernel (nbclient, ZMQ over IPC sockets in its own temporary folder) runs
   under `labkit.sandbox`: bubblewrap when available (read-only filesystem except that folder,
   private /tmp, no network, own PID namespace), resource limits (address space, processes, file
   size, no core dumps), a scrubbed environment, a time limit per cell and per notebook. With
   `LABKIT_COLLECT_DIR` set, every check cell only *records* the answer as plain data (JSON,
   `.npy`, `.onnx`). A cell that hangs is interrupted (or its kernel replaced, replaying the cells
   before it) and a kernel that dies is replaced the same way, so the other exercises are graded.
3. **Judge.** After the kernel and everything it started are gone, the recorded files are copied
   (regular files only) and judged by `labkit.checks.judge_saved` in a separate Python process
   (`python -I`, its own empty folder) that never imports or runs learner code; only the verdicts
   come back, as JSON.

Results are cached in `DIR/.cache` by the submission's bytes and the test bundle (solution
notebook, the lesson's exercise module, the check machinery, the grader version, the seed and the
limits), so re-running resumes an interrupted batch.
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import datetime as _dt
import hashlib
import html
import io
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GRADER_VERSION = "1"
COLUMNS = ["student", "lesson", "exercise", "points", "max_points", "status", "message"]
DEFAULT_SEED = 20250
DEFAULT_CELL_TIMEOUT = 120
DEFAULT_NOTEBOOK_TIMEOUT = 900
MAX_SUBMISSION_BYTES = 200 << 20
MAX_ANSWER_BYTES = 1 << 30
MAX_RESTARTS = 3
STARTUP_TIMEOUT = 120
PROBE_TIMEOUT = 6
JUDGE_TIMEOUT = 600
_TIMEOUT_ENAME = "LabkitCellTimeout"
_LABELS = {"passed": "Passed", "failed": "Not yet", "not_attempted": "Not attempted", "error": "Error",
           "timeout": "Timed out", "missing": "Missing"}


class GradeError(Exception):
    """The grader itself cannot run (unknown lesson, no submissions...): exit non-zero."""


# ---------------------------------------------------------------- small helpers


def _sha256(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(hashlib.sha256(p).digest())
    return h.hexdigest()


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write `path` through a temporary file in the same folder and an atomic rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _short(text: Any, limit: int = 300) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _src(cell: dict) -> str:
    s = cell.get("source", "")
    if isinstance(s, list):
        s = "".join(x for x in s if isinstance(x, str))
    return s if isinstance(s, str) else ""


def _tags(cell: dict) -> list[str]:
    meta = cell.get("metadata")
    tags = meta.get("tags", []) if isinstance(meta, dict) else []
    return [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []


def _role_id(cell: dict, role: str) -> str | None:
    for t in _tags(cell):
        if t.startswith(role + ":"):
            return t.split(":", 1)[1]
    return None


# ---------------------------------------------------------------- the lesson and its test bundle


@dataclass
class Lesson:
    number: str
    name: str
    solution_path: Path
    solution: dict
    exercises: list[dict]          # [{"id", "title", "points", "hint"}] in notebook order
    bundle: str                    # hash of everything that decides a verdict
    extra_tests: str = ""


def course_solutions() -> Path:
    from .assign import course_root

    return course_root() / "solutions"


def resolve_lesson(lesson: str, solutions: Path | None = None) -> Path:
    """`05`, `5`, `05_fusion`, `fusion` or a path to a solution notebook -> the solution's path."""
    p = Path(lesson)
    if p.suffix == ".ipynb" and p.is_file():
        return p.resolve()
    try:
        folder = solutions or course_solutions()
    except FileNotFoundError as e:
        raise GradeError(str(e)) from None
    if not folder.is_dir():
        raise GradeError(f"no solutions folder at {folder}")
    found = sorted(folder.glob("*.ipynb"))
    key = lesson.strip().removesuffix(".ipynb")
    if key.isdigit():
        key = f"{int(key):02d}"
    for nb in found:
        if nb.stem == key or nb.stem.split("_", 1)[0] == key or nb.stem.split("_", 1)[-1] == key:
            return nb.resolve()
    names = ", ".join(nb.stem for nb in found) or "none"
    raise GradeError(f"unknown lesson {lesson!r}: the lessons in {folder} are {names}")


def load_lesson(path: Path, seed: int, limits_key: str, extra_tests: Path | None = None) -> Lesson:
    from . import checks

    raw = path.read_bytes()
    try:
        solution = json.loads(raw)
    except ValueError as e:
        raise GradeError(f"the solution notebook {path} is not valid JSON: {e}") from None
    number = path.stem.split("_", 1)[0]
    if not re.fullmatch(r"\d\d", number):
        raise GradeError(f"{path.name}: a solution notebook's name starts with its two-digit number")
    registered = {e.id: e for e in checks.lesson_exercises(number)}
    order = [_role_id(c, "answer") for c in solution.get("cells", []) if c.get("cell_type") == "code"]
    order = [x for x in order if x]
    if not order:
        raise GradeError(f"{path.name} has no answer cells (tags answer:{number}.name): nothing to grade")
    unknown = [x for x in order if x not in registered]
    if unknown:
        raise GradeError(f"{path.name}: answer cells {unknown} have no registered exercise "
                         f"(labkit/exercises/l{number}.py)")
    checks_in_nb = {_role_id(c, "check") for c in solution.get("cells", [])}
    if set(order) - checks_in_nb:
        raise GradeError(f"{path.name}: answer cells {sorted(set(order) - checks_in_nb)} have no check cell")
    exercises = [{"id": i, "title": registered[i].title, "points": registered[i].points, "hint": registered[i].hint}
                 for i in order]
    parts = [raw, GRADER_VERSION.encode(), str(seed).encode(), limits_key.encode()]
    here = Path(__file__).resolve().parent
    for mod in (here / "exercises" / f"l{number}.py", here / "checks.py", here / "plain.py"):
        parts.append(mod.read_bytes() if mod.is_file() else b"")
    extra = ""
    if extra_tests is not None:
        try:
            extra = extra_tests.read_text()
        except OSError as e:
            raise GradeError(f"cannot read the extra tests {extra_tests}: {e}") from None
        parts.append(extra.encode())
    return Lesson(number, path.stem, path, solution, exercises, _sha256(*parts), extra)


# ---------------------------------------------------------------- submissions


@dataclass
class Submission:
    path: Path
    data: bytes = b""
    student: str = ""
    error: str | None = None        # the file cannot be graded at all (row status in `status`)
    status: str = "error"
    nb: dict | None = None
    sha: str = ""


def expand(paths: list[str]) -> list[Path]:
    """Submission arguments -> files: a folder gives every visible file in it (recursively)."""
    out: list[Path] = []
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                rel = f.relative_to(p).parts
                if f.is_file() and not any(x.startswith(".") or x == "__pycache__" for x in rel):
                    out.append(f)
        elif p.exists():
            out.append(p)
        else:
            raise GradeError(f"no such submission file or folder: {arg}")
    seen, unique = set(), []
    for f in out:
        r = f.resolve()
        if r not in seen:
            seen.add(r)
            unique.append(f)
    return unique


_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _clean_name(name: str) -> str:
    name = _SAFE.sub("_", name.strip()).strip("._-")[:80]
    return name or "student"


def read_submission(path: Path, lesson: Lesson) -> Submission:
    sub = Submission(path)
    try:
        size = path.stat().st_size
        if size > MAX_SUBMISSION_BYTES:
            sub.error = f"the file is too large to be a lesson notebook ({size >> 20} MB)"
            return sub
        sub.data = path.read_bytes()
    except OSError as e:
        sub.error = f"the file cannot be read ({e.strerror or e})"
        return sub
    sub.sha = _sha256(sub.data)
    if not sub.data.strip():
        sub.error = "the file is empty"
        return sub
    try:
        nb = json.loads(sub.data)
    except UnicodeDecodeError:
        sub.error = "not a Jupyter notebook (binary data, not JSON)"
        return sub
    except ValueError as e:
        what = "corrupt notebook (invalid JSON" if path.suffix == ".ipynb" else "not a Jupyter notebook (not JSON"
        sub.error = f"{what}: {_short(e, 120)})"
        return sub
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        sub.error = "not a Jupyter notebook (no list of cells)"
        return sub
    cells = [c for c in nb["cells"] if isinstance(c, dict)]
    nb["cells"] = cells
    meta = nb.get("metadata") if isinstance(nb.get("metadata"), dict) else {}
    who = meta.get("labkit", {}).get("student") if isinstance(meta.get("labkit"), dict) else None
    stem = path.stem
    if stem in (lesson.name, lesson.solution_path.stem) and path.parent.name:
        stem = path.parent.name  # collected as <student>/<lesson>.ipynb
    sub.student = _clean_name(who if isinstance(who, str) and who.strip() else stem)
    ours = {e["id"] for e in lesson.exercises}
    theirs = {x for c in cells for x in (_role_id(c, "answer"), _role_id(c, "check")) if x}
    sol_ids = {c.get("id") for c in lesson.solution.get("cells", []) if c.get("id")}
    sub_ids = {c.get("id") for c in cells if isinstance(c.get("id"), str)}
    if not (theirs & ours) and not (sol_ids & sub_ids):
        other = sorted({x.split(".", 1)[0] for x in theirs if re.fullmatch(r"\d\d\..+", x)})
        sub.status = "missing"
        if other:
            sub.error = (f"this is a notebook for lesson {', '.join(other)}, not lesson {lesson.number} "
                         f"({lesson.name}): hand in {lesson.name}.ipynb")
        else:
            sub.error = f"this notebook has none of the answer cells of lesson {lesson.number} ({lesson.name})"
        return sub
    sub.nb = nb
    return sub


def assign_students(subs: list[Submission]) -> None:
    """Make student ids unique: when several files claim one id, each gets its file name added."""
    claims: dict[str, list[Submission]] = {}
    for s in subs:
        claims.setdefault(s.student.lower(), []).append(s)
    for group in claims.values():
        if len(group) > 1:
            for s in group:
                s.student = _clean_name(f"{s.student}__{s.path.stem}")
            names: dict[str, int] = {}
            for s in group:
                n = names.get(s.student.lower(), 0)
                names[s.student.lower()] = n + 1
                if n:
                    s.student = f"{s.student}-{hashlib.sha256(str(s.path).encode()).hexdigest()[:6]}"


# ---------------------------------------------------------------- rebuild what runs


def build_run(lesson: Lesson, nb: dict) -> tuple[list[dict], dict[str, list[str]], dict[str, str]]:
    """(cells to run, notes per exercise, missing answer cells {id: why}) for one submission.

    Each cell to run is {"source", "role": answer|check|code, "exercise": id|None, "index"}.
    """
    from .assign import make_lesson, strip_solution
    import nbformat

    sol_cells = lesson.solution["cells"]
    try:
        blank = make_lesson(nbformat.from_dict(lesson.solution), lesson.name)
        blank_src = {c.get("id"): c.source for c in blank.cells if c.get("id")}
    except Exception:
        blank_src = {}
    sub_cells = nb["cells"]
    by_tag: dict[str, list[dict]] = {}
    by_id: dict[str, dict] = {}
    for c in sub_cells:
        if c.get("cell_type") != "code":
            if isinstance(c.get("id"), str):
                by_id.setdefault(c["id"], c)
            continue
        a = _role_id(c, "answer")
        if a:
            by_tag.setdefault(a, []).append(c)
        if isinstance(c.get("id"), str):
            by_id.setdefault(c["id"], c)

    notes: dict[str, list[str]] = {e["id"]: [] for e in lesson.exercises}
    missing: dict[str, str] = {}
    used_ids: set[str] = set()
    run: list[dict] = []
    ex_order = [e["id"] for e in lesson.exercises]

    def next_exercise(i: int) -> str:
        for c in sol_cells[i:]:
            x = _role_id(c, "check")
            if x in notes:
                return x
        return ex_order[-1]

    if lesson.extra_tests:
        run.append({"source": lesson.extra_tests, "role": "code", "exercise": None, "index": -1})
    parameters_done = False
    for i, c in enumerate(sol_cells):
        if c.get("cell_type") != "code":
            continue
        cid = c.get("id")
        tags = _tags(c)
        answer, check = _role_id(c, "answer"), _role_id(c, "check")
        if answer:
            cands = by_tag.get(answer, [])
            chosen = None
            if cands:
                chosen = next((x for x in cands if x.get("id") == cid), cands[0])
                if len(cands) > 1:
                    notes[answer].append(f"{len(cands)} cells are tagged answer:{answer}; the "
                                         f"{'one with the original cell id' if chosen.get('id') == cid else 'first'} was used")
            elif cid and cid in by_id and by_id[cid].get("cell_type") == "code":
                chosen = by_id[cid]
                notes[answer].append(f"the answer cell was found by its cell id (its tag answer:{answer} is gone)")
            if chosen is None:
                missing[answer] = (f"no answer cell for {answer} in the submission (tag answer:{answer} or cell id "
                                   f"{cid}); the blank stub ran in its place")
                source = blank_src.get(cid) or strip_solution(_src(c))
            else:
                source = _src(chosen)
                if isinstance(chosen.get("id"), str):
                    used_ids.add(chosen["id"])
            run.append({"source": source, "role": "answer", "exercise": answer, "index": i})
            continue
        if "skip-grading" in tags and not check:
            continue
        source = _src(c)
        if "parameters" in tags and not parameters_done:
            source = source + "\nQUICK = True  # set by the grader"
            parameters_done = True
        run.append({"source": source, "role": "check" if check else "code", "exercise": check, "index": i})

    # report what the learner changed outside the answer cells (never run)
    sol_by_id = {c.get("id"): (i, c) for i, c in enumerate(sol_cells) if c.get("id")}
    for i, c in enumerate(sol_cells):
        if c.get("cell_type") != "code" or _role_id(c, "answer") or "skip-grading" in _tags(c):
            continue  # answer cells are the learner's; demo cells are not run anyway
        cid = c.get("id")
        theirs = by_id.get(cid) if cid else None
        role = "check cell" if _role_id(c, "check") else "cell"
        target = next_exercise(i)
        if theirs is None:
            notes[target].append(f"a {role} above this exercise was deleted; the original ran")
        elif theirs.get("cell_type") == "code" and _src(theirs) != blank_src.get(cid, _src(c)):
            notes[target].append(f"a {role} above this exercise was edited; your edit was not run, the original was")
    positions = {}
    for n, c in enumerate(sub_cells):
        cid = c.get("id")
        if c.get("cell_type") != "code" or (isinstance(cid, str) and (cid in sol_by_id or cid in used_ids)):
            continue
        if _role_id(c, "answer") in by_tag and c in by_tag.get(_role_id(c, "answer"), []):
            continue
        # an added code cell: attribute it to the next exercise after it in the submission
        after = next((_role_id(x, "check") or _role_id(x, "answer") for x in sub_cells[n:]
                      if (_role_id(x, "check") or _role_id(x, "answer")) in notes), ex_order[-1])
        positions[after] = positions.get(after, 0) + 1
    for x, k in positions.items():
        notes[x].append(f"{k} code cell{'s' if k > 1 else ''} you added above this exercise "
                        f"{'were' if k > 1 else 'was'} not run (only answer cells are graded)")
    return run, notes, missing


# ---------------------------------------------------------------- execution (in a worker process)


def _scrubbed_env(work: Path, seed: int, bwrap: bool) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": os.environ.get("LANG", "C.UTF-8"),
           "HOME": str(work), "TMPDIR": "/tmp" if bwrap else str(work / "tmp"),
           "LABKIT_COLLECT_DIR": str(work / "answers"), "LABKIT_SEED": str(seed), "MPLBACKEND": "Agg",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "PYTHONDONTWRITEBYTECODE": "1", "JUPYTER_PLATFORM_DIRS": "1",
           "PYDEVD_DISABLE_FILE_VALIDATION": "1", "PYTHONUNBUFFERED": "1",
           "LABKIT_CACHE": str(_cache_dir())}
    return env


def _cache_dir() -> Path:
    from .data import cache_dir

    return cache_dir().resolve()


def _warm_cache(lesson: Lesson) -> None:
    """Fill and verify the course cache here (the digits split), so no sandboxed kernel or judge has to
    (they read it, read-only). The CNN's weights ship in the package and are verified on load."""
    from .data import digits

    digits()


def _kernel_classes():
    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    class SandboxKernelManager(AsyncKernelManager):
        """A kernel launched through labkit.sandbox (and bwrap), talking over IPC sockets."""

        prefix: list[str] = []

        def format_kernel_cmd(self, extra_arguments=None):
            # -P: a module the learner wrote into the working folder cannot stand in for ipykernel
            return list(self.prefix) + [sys.executable, "-P", "-m", "ipykernel_launcher", "-f", self.connection_file]

    class QuietClient(NotebookClient):
        """Keeps only error outputs (name and message), so a flood of output costs no memory."""

        def output(self, outs, msg, display_id, cell_index):
            if msg.get("msg_type") != "error":
                return None
            c = msg.get("content", {})
            from nbformat import NotebookNode

            out = NotebookNode(output_type="error", ename=_short(c.get("ename", ""), 100),
                               evalue=_short(c.get("evalue", ""), 300), traceback=[])
            if len(outs) < 5:
                outs.append(out)
            return out

        def handle_comm_msg(self, outs, msg, cell_index):
            return None

        async def _async_handle_timeout(self, timeout, cell=None):
            self.timed_out = True  # nbclient interrupts the kernel and hands back an error reply
            return await super()._async_handle_timeout(timeout, cell)

    return SandboxKernelManager, QuietClient, KernelSpec


@dataclass
class Kernel:
    km: Any
    kc: Any
    client: Any
    cgroup: Any
    n: int


class Runner:
    """Runs the rebuilt cells of one submission in confined kernels; records what happened per cell."""

    def __init__(self, cells: list[dict], work: Path, seed: int, cell_timeout: float, notebook_timeout: float,
                 limits: dict, bwrap: bool, hide: list[Path], keep: list[Path], hide_last: list[Path]):
        self.cells, self.work, self.seed = cells, work, seed
        self.cell_timeout, self.notebook_timeout = cell_timeout, notebook_timeout
        self.limits, self.bwrap, self.hide, self.keep, self.hide_last = limits, bwrap, hide, keep, hide_last
        self.events: list[dict] = []     # {"cell": position, "what": ok|error|timeout|died|skipped, ...}
        self.kernel_starts = 0

    async def _start(self) -> Kernel:
        from . import sandbox

        KM, Client, KernelSpec = _kernel_classes()
        self.kernel_starts += 1
        n = self.kernel_starts
        os.chmod(self.work, 0o700)
        conn = Path(tempfile.mkdtemp(prefix=f".kernel{n}-", dir=self.work))  # fresh: the learner owns work/
        cg = sandbox.PidsCgroup.create(f"labkit-grade-{os.getpid()}-{n}-{os.urandom(3).hex()}",
                                       self.limits.get("nproc", 256))
        limits = dict(self.limits)
        if os.geteuid() != 0:  # RLIMIT_NPROC counts all of this user's tasks, not just the kernel's
            limits["nproc"] = sandbox.user_task_count() + int(self.limits.get("nproc", 256))
        prefix = sandbox.launcher_args(limits, str(cg.path) if cg else None)
        if self.bwrap:
            prefix += sandbox.bwrap_args(self.work, self.hide, self.keep, hide_last=self.hide_last)
        km = KM(transport="ipc", connection_file=str(conn / f"k{n}.json"))
        km._kernel_spec = KernelSpec(argv=["python"], display_name="labkit grader", language="python",
                                     interrupt_mode="message")
        km.prefix = prefix
        log = open(conn / "kernel.log", "wb")
        try:
            await km.start_kernel(env=_scrubbed_env(self.work, self.seed, self.bwrap), cwd=str(self.work),
                                  stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        finally:
            log.close()
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=STARTUP_TIMEOUT)
        except Exception:
            kc.stop_channels()
            await self._stop(Kernel(km, None, None, cg, n))
            raise
        import nbformat

        client = Client(nbformat.v4.new_notebook(), km=km, allow_errors=True, interrupt_on_timeout=True,
                        error_on_timeout={"ename": _TIMEOUT_ENAME, "evalue": "cell time limit", "traceback": []},
                        store_widget_state=False, record_timing=False, iopub_timeout=4,
                        raise_on_iopub_timeout=False, shell_timeout_interval=1)
        client.kc = kc
        return Kernel(km, kc, client, cg, n)

    async def _stop(self, k: Kernel | None) -> None:
        from . import sandbox

        if k is None:
            return
        try:
            if k.kc is not None:
                k.kc.stop_channels()
        except Exception:
            pass
        pgid = None
        try:
            prov = k.km.provisioner
            pgid = getattr(prov, "pgid", None)
        except Exception:
            pass
        try:
            await asyncio.wait_for(k.km.shutdown_kernel(now=True), 20)
        except Exception:
            pass
        if k.cgroup is not None:
            k.cgroup.remove()
        sandbox.kill_tree(pgid=pgid)

    async def _exec(self, k: Kernel, source: str, timeout: float) -> dict:
        import nbformat
        from nbclient.exceptions import CellTimeoutError, DeadKernelError

        cell = nbformat.v4.new_code_cell(source)
        k.client.nb.cells = [cell]
        k.client.timed_out = False
        k.client.timeout = max(1, int(timeout))
        t0 = time.monotonic()
        try:
            await k.client.async_execute_cell(cell, 0, store_history=False)
        except DeadKernelError:
            return {"what": "died", "seconds": time.monotonic() - t0}
        except CellTimeoutError:
            return {"what": "timeout", "seconds": time.monotonic() - t0}
        except Exception as e:  # a confused channel: treat the kernel as lost
            return {"what": "died", "detail": _short(e, 200), "seconds": time.monotonic() - t0}
        errors = [o for o in cell.outputs if o.get("output_type") == "error"]
        if getattr(k.client, "timed_out", False) or any(o.get("ename") == _TIMEOUT_ENAME for o in errors):
            return {"what": "timeout", "seconds": time.monotonic() - t0}
        if errors:
            e = errors[-1]
            return {"what": "error", "ename": e.get("ename", ""), "evalue": e.get("evalue", ""),
                    "seconds": time.monotonic() - t0}
        if not await self._alive(k):
            return {"what": "died", "seconds": time.monotonic() - t0}
        return {"what": "ok", "seconds": time.monotonic() - t0}

    async def _alive(self, k: Kernel) -> bool:
        try:
            return bool(await k.km.is_alive())
        except Exception:
            return False

    async def _responsive(self, k: Kernel) -> bool:
        """After an interrupted timeout: does the kernel answer a trivial cell within a few seconds?"""
        if not await self._alive(k):
            return False
        r = await self._exec(k, "None", PROBE_TIMEOUT)
        return r["what"] == "ok"

    async def run(self) -> list[dict]:
        deadline = time.monotonic() + self.notebook_timeout
        done: list[int] = []        # positions that ran (replayed after a restart), check cells excluded
        bad: set[int] = set()
        k: Kernel | None = None
        restarts = 0
        pos = 0
        try:
            while pos < len(self.cells):
                left = deadline - time.monotonic()
                if left <= 1:
                    for p in range(pos, len(self.cells)):
                        self.events.append({"cell": p, "what": "skipped", "why": "notebook time limit"})
                    break
                if k is None:
                    if restarts > MAX_RESTARTS:
                        for p in range(pos, len(self.cells)):
                            self.events.append({"cell": p, "what": "skipped", "why": "the kernel kept dying"})
                        break
                    try:
                        k = await self._start()
                    except Exception as e:
                        if not restarts:  # the first start does not depend on the submission
                            raise RuntimeError(f"the kernel could not start: {_short(e, 200)}") from None
                        for p in range(pos, len(self.cells)):
                            self.events.append({"cell": p, "what": "skipped", "why": "the kernel could not be restarted"})
                        break
                    if restarts:  # replay the cells that ran before, so later answers have what they need
                        for p in done:
                            left = deadline - time.monotonic()
                            if left <= 1:
                                break
                            r = await self._exec(k, self.cells[p]["source"], min(self.cell_timeout, left))
                            if r["what"] in ("died", "timeout") and not await self._responsive(k):
                                await self._stop(k)
                                k = None
                                bad.add(p)
                                break
                        if k is None:
                            restarts += 1
                            done = [p for p in done if p not in bad]
                            continue
                cell = self.cells[pos]
                r = await self._exec(k, cell["source"], min(self.cell_timeout, left))
                r["cell"] = pos
                self.events.append(r)
                if r["what"] == "timeout" and time.monotonic() >= deadline - 1:
                    r["why"] = "notebook time limit"
                lost = r["what"] == "died" or (r["what"] == "timeout" and not await self._responsive(k))
                if lost:
                    await self._stop(k)
                    k = None
                    restarts += 1
                    bad.add(pos)
                elif cell["role"] != "check" and r["what"] != "timeout":
                    done.append(pos)
                pos += 1
        finally:
            await self._stop(k)
        return self.events


def _copy_answers(src: Path, dest: Path) -> list[str]:
    """Copy recorded answers: real folders and regular files only, no links, bounded size."""
    problems: list[str] = []
    dest.mkdir(parents=True, exist_ok=True)
    if not src.is_dir() or src.is_symlink():
        return problems
    total = 0
    for entry in sorted(os.scandir(src), key=lambda e: e.name)[:200]:
        if not re.fullmatch(r"\d\d\.[a-z][a-z0-9_]*", entry.name) or not entry.is_dir(follow_symlinks=False):
            continue
        out = dest / entry.name
        out.mkdir()
        for f in sorted(os.scandir(entry.path), key=lambda e: e.name)[:1000]:
            if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", f.name) or f.name.startswith("."):
                continue
            st = os.lstat(f.path)
            if not stat.S_ISREG(st.st_mode):
                problems.append(f"{entry.name}/{f.name} is not a regular file (ignored)")
                continue
            total += st.st_size
            if total > MAX_ANSWER_BYTES:
                problems.append(f"{entry.name}: recorded answers exceed {MAX_ANSWER_BYTES >> 20} MB (ignored)")
                break
            fd = os.open(f.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as fi, open(out / f.name, "wb") as fo:
                shutil.copyfileobj(fi, fo, 1 << 20)
    return problems


def _judge_subprocess(lesson_number: str, answers: Path, seed: int, ids: list[str], extra: str) -> list[dict]:
    """Verdicts from a fresh `python -I` process that reads only the copied plain data."""
    from . import sandbox

    spec = {"lesson": lesson_number, "answers": str(answers), "seed": seed, "ids": ids, "extra": extra}
    spec_path = answers.parent / "judge.json"
    spec_path.write_text(json.dumps(spec))
    env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": os.environ.get("LANG", "C.UTF-8"),
           "HOME": str(answers.parent), "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
           "LABKIT_CACHE": str(_cache_dir())}
    cmd = sandbox.launcher_args({"as": 6 * sandbox.GiB, "core": 0}) + [
        sys.executable, "-I", "-m", "labkit.grading", "_judge", str(spec_path)]
    r = subprocess.run(cmd, cwd=answers.parent, env=env, capture_output=True, text=True, timeout=JUDGE_TIMEOUT)
    lines = [x for x in r.stdout.splitlines() if x.startswith("{")]
    if r.returncode != 0 or not lines:
        tail = _short((r.stderr.strip().splitlines() or [f"exit code {r.returncode}"])[-1], 200)
        raise RuntimeError(f"the checker process failed: {tail}")
    return json.loads(lines[-1])["results"]


def _judge_main(spec_path: str) -> int:
    """In the verdict process: judge each exercise from its folder of plain data."""
    from . import checks

    spec = json.loads(Path(spec_path).read_text())
    checks.lesson_exercises(spec["lesson"])
    if spec.get("extra"):
        exec(compile(spec["extra"], "<extra tests>", "exec"), {"__name__": "labkit_extra_tests"})
    out = []
    for id in spec["ids"]:
        ex = checks.get(id)
        folder = Path(spec["answers"]) / id
        try:
            res = checks.judge_saved(ex, folder, int(spec["seed"]))
        except Exception as e:  # judge_saved should not raise; be safe anyway
            res = checks.Result(ex.id, ex.title, "error", 0.0, ex.points, f"could not check: {e}", [], ex.hint)
        out.append(res.to_dict())
    sys.stdout.write(json.dumps({"results": out}) + "\n")
    return 0


def _cell_label(cell: dict) -> str:
    if cell["role"] == "answer":
        return f"your answer cell for {cell['exercise']}"
    if cell["role"] == "check":
        return f"the check cell of {cell['exercise']}"
    return "an instructor cell"


def _compose(task: dict, events: list[dict], verdicts: list[dict]) -> list[dict]:
    """Final per-exercise results: verdicts, refined by what happened to the cells."""
    cells = task["cells"]
    by_id = {v["exercise"]: v for v in verdicts}
    results = []
    for ex in task["exercises"]:
        x = ex["id"]
        v = dict(by_id.get(x) or {"exercise": x, "title": ex["title"], "status": "missing", "points": 0.0,
                                  "max_points": ex["points"], "message": "no verdict", "tests": [], "hint": ex["hint"]})
        check_pos = next((p for p, c in enumerate(cells) if c["role"] == "check" and c["exercise"] == x), None)
        if x in task["missing"]:
            v.update(status="missing", points=0.0, message=task["missing"][x], tests=[])
        elif v["status"] == "missing":
            mine = [e for e in events if cells[e["cell"]]["exercise"] == x and e["what"] != "ok"]
            before = [e for e in events if check_pos is not None and e["cell"] < check_pos
                      and e["what"] in ("died", "timeout")]
            ev = mine[0] if mine else (before[-1] if before else None)
            ran = any(e["cell"] == check_pos and e["what"] == "ok" for e in events)
            if ev is None and ran:
                v.update(message="the check cell ran but recorded no answer (was check() redefined or replaced "
                                 "in an answer cell?)")
            elif ev is None:
                pass
            elif ev["what"] == "skipped":
                v.update(status="timeout" if "time" in ev.get("why", "") else "missing",
                         message=f"not run: {ev.get('why', '')} ({task['notebook_timeout']:g} s)"
                         if "time" in ev.get("why", "") else f"not run: {ev.get('why', '')}")
            elif ev["what"] == "timeout":
                where = _cell_label(cells[ev["cell"]])
                limit = "the whole-notebook limit" if ev.get("why") else f"the {task['cell_timeout']:g} s limit per cell"
                if ev in mine:
                    v.update(status="timeout", message=f"{where} ran past {limit} and was stopped (an endless loop?)")
                else:
                    v.update(message=f"the check cell did not record an answer: {where} ran past {limit} earlier")
            elif ev["what"] == "died":
                where = _cell_label(cells[ev["cell"]])
                msg = (f"the kernel died while running {where} (os._exit, a crash, or a memory/process limit); "
                       "the rest of the notebook was still graded")
                v.update(status="error" if ev in mine else "missing", message=msg)
            elif ev["what"] == "error":
                where = _cell_label(cells[ev["cell"]])
                v.update(message=f"the check cell did not record an answer: {where} raised "
                                 f"{_short(ev.get('ename', ''), 60)}: {_short(ev.get('evalue', ''), 200)}")
        notes = task["notes"].get(x, [])
        v["notes"] = notes
        if notes:
            v["message"] = v["message"].rstrip(". ") + ". Note: " + "; ".join(notes) + "."
        v["points"] = float(v.get("points") or 0.0)
        v["max_points"] = float(ex["points"])
        results.append(v)
    return results


def _worker_init() -> None:
    import signal

    from . import sandbox

    sandbox.make_subreaper()
    # die with the grader, even when it is killed: a worker left behind would go on grading
    sandbox._prctl(sandbox.PR_SET_PDEATHSIG, int(signal.SIGKILL))


def grade_one(task: dict) -> dict:
    """Grade one rebuilt submission (runs in a pool worker). Never raises: problems go in the result."""
    from . import sandbox

    t0 = time.monotonic()
    base = task.get("tmp_root") or None
    work = Path(tempfile.mkdtemp(prefix="lkg", dir=base))
    judge_dir = Path(tempfile.mkdtemp(prefix="lkj", dir=base))
    try:
        os.chmod(work, 0o700)
        (work / "answers").mkdir()
        (work / "tmp").mkdir()
        runner = Runner(task["cells"], work, task["seed"], task["cell_timeout"], task["notebook_timeout"],
                        task["limits"], task["bwrap"], [Path(p) for p in task["hide"]],
                        [Path(p) for p in task["keep"]], [Path(p) for p in task["hide_last"]])
        try:
            events = asyncio.run(runner.run())
        except Exception as e:
            return {"internal_error": f"{_short(e, 300)}", "seconds": time.monotonic() - t0}
        finally:
            sandbox.kill_tree()  # anything still below this worker (daemonized helpers included)
        problems = _copy_answers(work / "answers", judge_dir / "answers")
        t_judge = time.monotonic()
        try:
            verdicts = _judge_subprocess(task["lesson"], judge_dir / "answers", task["seed"],
                                         [e["id"] for e in task["exercises"]], task.get("extra", ""))
            judge_failed = None
        except subprocess.TimeoutExpired:
            return {"internal_error": f"the checker took longer than {JUDGE_TIMEOUT} s", "seconds": time.monotonic() - t0}
        except Exception as e:
            verdicts, judge_failed = [], _short(e, 300)
        results = _compose(task, events, verdicts)
        if judge_failed:
            for r in results:
                if r["status"] not in ("missing", "timeout"):
                    r.update(status="error", points=0.0, message=f"the checker could not judge this answer ({judge_failed})")
        events = [dict(e, seconds=round(e.get("seconds", 0.0), 2), role=task["cells"][e["cell"]]["role"],
                       exercise=task["cells"][e["cell"]]["exercise"]) for e in events]
        return {"results": results, "events": events, "problems": problems, "kernel_starts": runner.kernel_starts,
                "judge_seconds": round(time.monotonic() - t_judge, 2), "seconds": round(time.monotonic() - t0, 2)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(judge_dir, ignore_errors=True)


# ---------------------------------------------------------------- outputs


def _csv_cell(value: Any) -> str:
    s = " ".join(str(value).split())
    return "'" + s if s[:1] in ("=", "+", "-", "@") and not re.fullmatch(r"-?\d+(\.\d+)?", s) else s


def write_csv(path: Path, rows: list[dict]) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([_csv_cell(r["student"]), r["lesson"], r["exercise"], f"{r['points']:g}", f"{r['max_points']:g}",
                    r["status"], _csv_cell(r["message"])])
    atomic_write(path, buf.getvalue())


def feedback_html(record: dict) -> str:
    from .checks import Result, TestResult, panel_html

    e = html.escape
    panels = []
    for r in record["exercises"]:
        res = Result(r["exercise"], r.get("title", ""), r["status"], float(r["points"]), float(r["max_points"]),
                     r.get("message", ""), [TestResult(t.get("name", ""), bool(t.get("passed")), t.get("message", ""))
                                            for t in r.get("tests", []) if isinstance(t, dict)], r.get("hint", ""))
        panel = panel_html(res)
        if r.get("notes") and r["status"] == "passed":
            panel += f"<div style='font-size:12px;color:#6e7781'>Note: {e('; '.join(r['notes']))}</div>"
        panels.append(panel)
    total, most = record["points"], record["max_points"]
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{e(record['student'])} · lesson "
            f"{e(record['lesson'])}</title></head><body style='font-family:sans-serif;max-width:860px;margin:2em auto;"
            f"color:#24292f'><h1 style='font-size:20px'>Lesson {e(record['lesson_name'])}: feedback for "
            f"{e(record['student'])}</h1><p><b>{total:g} / {most:g} points</b> · submitted file "
            f"<code>{e(Path(record['submission']).name)}</code> · graded {e(record['graded_at'])}</p>"
            f"<p style='font-size:13px;color:#57606a'>Only your answer cells were run, inside the instructor's copy "
            f"of the lesson; each exercise shows what was expected and what your code gave.</p>"
            f"{''.join(panels)}</body></html>\n")


def histogram(path: Path, totals: list[float], most: float, lesson: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=100)
    bins = min(20, max(5, int(most) * 2)) if most else 10
    ax.hist(totals, bins=bins, range=(0, most or 1), color="#0969da", edgecolor="white")
    ax.set_xlabel(f"points (out of {most:g})")
    ax.set_ylabel("students")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_title(f"Lesson {lesson}: scores of {len(totals)} submissions")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    atomic_write(path, buf.getvalue())


def summary_table(lesson: Lesson, records: list[dict], protection: str) -> str:
    lines = [f"Lesson {lesson.name}: {len(records)} submissions graded ({protection})"]
    if not records:
        return "\n".join(lines)
    head = f"{'exercise':<22} {'max':>5} {'mean':>6} " + " ".join(f"{_LABELS[s][:9]:>9}" for s in _LABELS)
    lines += ["", head, "-" * len(head)]
    for ex in lesson.exercises:
        rs = [r for rec in records for r in rec["exercises"] if r["exercise"] == ex["id"]]
        mean = sum(r["points"] for r in rs) / len(rs)
        counts = " ".join(f"{sum(r['status'] == s for r in rs):>9}" for s in _LABELS)
        lines.append(f"{ex['id']:<22} {ex['points']:>5g} {mean:>6.2f} {counts}")
    totals = sorted(rec["points"] for rec in records)
    most = records[0]["max_points"]
    mid = totals[len(totals) // 2] if len(totals) % 2 else (totals[len(totals) // 2 - 1] + totals[len(totals) // 2]) / 2
    lines += ["", f"total out of {most:g}: mean {sum(totals) / len(totals):.2f}, median {mid:g}, "
                  f"min {totals[0]:g}, max {totals[-1]:g}", "",
              f"{'student':<32} {'points':>8}  statuses"]
    for rec in sorted(records, key=lambda r: r["student"].lower()):
        st = ", ".join(f"{k}×{v}" for k, v in sorted(_count(rec).items()))
        lines.append(f"{rec['student'][:32]:<32} {rec['points']:>4g}/{rec['max_points']:<3g}  {st}")
    return "\n".join(lines)


def _count(rec: dict) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rec["exercises"]:
        out[r["status"]] = out.get(r["status"], 0) + 1
    return out


# ---------------------------------------------------------------- the command


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="labkit grade", description="Grade learners' notebooks for one lesson (see docs/instructors.md).")
    p.add_argument("lesson", help="lesson number (05) or name (05_fusion)")
    p.add_argument("submissions", nargs="+", help=".ipynb files or folders of them")
    p.add_argument("--out", required=True, help="output folder (grades.csv, <student>/feedback.html, ...)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="submissions graded in parallel (default: cores)")
    p.add_argument("--timeout", type=float, default=DEFAULT_CELL_TIMEOUT,
                   help=f"seconds one cell may run (default {DEFAULT_CELL_TIMEOUT})")
    p.add_argument("--notebook-timeout", type=float, default=None,
                   help=f"seconds a whole notebook may run (default max({DEFAULT_NOTEBOOK_TIMEOUT}, 4 x --timeout))")
    p.add_argument("--memory", type=float, default=3.0, help="address-space limit of a kernel in GB (default 3)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the test inputs (default %(default)s)")
    p.add_argument("--solutions", default=None, help="folder of solution notebooks (default: the course's solutions/)")
    p.add_argument("--extra-tests", default=None, help="a Python file of private extra tests (docs/instructors.md)")
    p.add_argument("--force", action="store_true", help="ignore the cache and grade everything again")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _protection(bwrap: bool, reason: str) -> str:
    from . import sandbox

    enforced, how = sandbox.process_limit()
    limits = f"resource limits (address space, processes via {how}, file size, no core dumps)"
    if bwrap:
        return f"bubblewrap sandbox (read-only filesystem, private /tmp, no network, own PID namespace) + {limits}"
    return f"fallback: {limits} + killing the kernel's process tree; no bubblewrap ({reason})"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _grade(args)
    except GradeError as e:
        print(f"labkit grade: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nlabkit grade: interrupted; finished submissions are saved, re-run to resume.", file=sys.stderr)
        return 130


def _grade(args) -> int:
    from concurrent.futures import ProcessPoolExecutor, as_completed
    import multiprocessing

    from . import sandbox

    if args.jobs < 1:
        raise GradeError("--jobs must be at least 1")
    if args.timeout <= 0:
        raise GradeError("--timeout must be positive")
    nb_timeout = args.notebook_timeout or max(DEFAULT_NOTEBOOK_TIMEOUT, 4 * args.timeout)
    limits = dict(sandbox.DEFAULT_LIMITS, **{"as": int(args.memory * sandbox.GiB), "cpu": int(nb_timeout) + 120})
    solutions = Path(args.solutions).resolve() if args.solutions else None
    path = resolve_lesson(args.lesson, solutions)
    limits_key = json.dumps([limits, args.timeout, nb_timeout], sort_keys=True)
    extra = Path(args.extra_tests).resolve() if args.extra_tests else None
    lesson = load_lesson(path, args.seed, limits_key, extra)
    files = expand(args.submissions)
    if not files:
        raise GradeError("no submissions found in " + ", ".join(args.submissions))
    out = Path(args.out).resolve()
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / ".cache").mkdir(exist_ok=True)
    except OSError as e:
        raise GradeError(f"cannot write the output folder {out}: {e}") from None
    if any(f.resolve().is_relative_to(out) for f in files):
        raise GradeError(f"submissions must not lie inside the output folder {out}")

    bwrap, reason = sandbox.bwrap_status()
    protection = _protection(bwrap, reason)
    print(f"Grading lesson {lesson.name}: {len(files)} submission(s), {args.jobs} job(s). Protection: {protection}",
          file=sys.stderr)

    subs = [read_submission(f, lesson) for f in files]
    assign_students(subs)
    _warm_cache(lesson)
    home = Path.home().resolve()
    keep = sorted({*sandbox.python_paths(), Path(__file__).resolve().parents[1], _cache_dir()}, key=str)
    hide = [home] if home != Path("/") and not any(home.is_relative_to(k) for k in keep) else []
    tmp_root = _tmp_root()
    hide_last = [out] + ([Path(tmp_root)] if tmp_root else [])
    cells_common = {"seed": args.seed, "cell_timeout": float(args.timeout), "notebook_timeout": float(nb_timeout),
                    "limits": limits, "bwrap": bwrap, "hide": [str(h) for h in hide], "keep": [str(k) for k in keep],
                    "hide_last": [str(h) for h in hide_last], "lesson": lesson.number, "extra": lesson.extra_tests,
                    "tmp_root": tmp_root}

    records: dict[str, dict] = {}
    todo: list[tuple[Submission, dict, str]] = []
    failures: list[str] = []
    cached = 0
    for s in subs:
        key = _sha256(s.sha.encode(), lesson.bundle.encode(), s.error.encode() if s.error else b"")
        cache_file = out / ".cache" / f"{key}.json"
        if s.error is not None:
            records[s.student] = _record(lesson, s, _bad_results(lesson, s), protection="not run", key=key)
            continue
        if not args.force and cache_file.is_file():
            try:
                hit = json.loads(cache_file.read_text())
                records[s.student] = _record(lesson, s, hit["results"], hit["protection"], key, hit.get("seconds"),
                                             extra={"cells": hit.get("cells", []), "cached": True})
                cached += 1
                continue
            except (ValueError, KeyError, OSError):
                pass
        run, notes, missing = build_run(lesson, s.nb)
        task = dict(cells_common, cells=run, notes=notes, missing=missing, exercises=lesson.exercises)
        todo.append((s, task, key))

    for s in subs:
        if s.student in records:
            _write_student(out, records[s.student])
    _write_grades(out, records)
    if cached:
        print(f"{cached} submission(s) unchanged since the last run: reused their grades.", file=sys.stderr)

    try:
        if todo:
            try:
                from tqdm import tqdm
            except ImportError:  # pragma: no cover
                tqdm = None
            bar = tqdm(total=len(todo), desc="grading", unit="nb", disable=args.no_progress or tqdm is None,
                       file=sys.stderr) if tqdm else None
            ctx = multiprocessing.get_context("spawn")
            if threading.current_thread() is threading.main_thread():  # `kill`: clean up as Ctrl-C does
                signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
            pool = ProcessPoolExecutor(max_workers=min(args.jobs, len(todo)), mp_context=ctx, initializer=_worker_init)
            try:
                futures = {pool.submit(grade_one, task): (s, task, key) for s, task, key in todo}
                for fut in as_completed(futures):
                    s, task, key = futures[fut]
                    try:
                        res = fut.result()
                    except Exception as e:  # a worker crashed (should not happen): report, go on
                        res = {"internal_error": f"the grading worker failed: {_short(e, 200)}"}
                    if "internal_error" in res:
                        failures.append(f"{s.path}: {res['internal_error']}")
                        results = [_row_result(ex, "error", f"could not be graded (grader problem: {res['internal_error']}); "
                                                            "re-run labkit grade to retry") for ex in lesson.exercises]
                        records[s.student] = _record(lesson, s, results, protection, key)
                    else:
                        this_prot = protection
                        records[s.student] = _record(lesson, s, res["results"], this_prot, key, res.get("seconds"),
                                                     extra={"kernel_starts": res.get("kernel_starts"),
                                                            "judge_seconds": res.get("judge_seconds"),
                                                            "answer_problems": res.get("problems", []),
                                                            "cells": res.get("events", [])})
                        atomic_write(out / ".cache" / f"{key}.json", json.dumps(
                            {"results": res["results"], "protection": this_prot, "seconds": res.get("seconds"),
                             "cells": res.get("events", []),
                             "submission_sha256": s.sha, "bundle": lesson.bundle}))
                    _write_student(out, records[s.student])
                    _write_grades(out, records)
                    if bar:
                        bar.update(1)
            except BaseException:  # Ctrl-C or kill: stop at once; finished submissions are saved and cached
                for proc in list(getattr(pool, "_processes", {}).values()):
                    proc.kill()  # their kernels die with them (bubblewrap --die-with-parent, PDEATHSIG)
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            pool.shutdown(wait=True)
            if bar:
                bar.close()
    finally:
        if tmp_root:
            shutil.rmtree(tmp_root, ignore_errors=True)
    recs = sorted(records.values(), key=lambda r: r["student"].lower())
    most = sum(e["points"] for e in lesson.exercises)
    histogram(out / "histogram.png", [r["points"] for r in recs], most, lesson.number)
    print(summary_table(lesson, recs, protection))
    print(f"\nWrote {out / 'grades.csv'}, {out / 'histogram.png'} and a folder per student "
          f"(results.json, feedback.html).")
    if failures:
        print(f"labkit grade: {len(failures)} submission(s) could not be graded because of a problem in the "
              "grader or this machine (not the submission); re-run to retry them:", file=sys.stderr)
        for f in failures:
            print("  " + f, file=sys.stderr)
        return 1
    return 0


def _tmp_root() -> str | None:
    """A short folder for kernels' working folders (IPC socket paths must stay under 100 bytes)."""
    base = Path(tempfile.gettempdir())
    if len(str(base)) > 40:
        base = Path("/tmp")
    root = Path(tempfile.mkdtemp(prefix="labkit-grade-", dir=base))
    return str(root)


def _row_result(ex: dict, status: str, message: str) -> dict:
    return {"exercise": ex["id"], "title": ex["title"], "status": status, "points": 0.0,
            "max_points": float(ex["points"]), "message": message, "tests": [], "hint": ex["hint"], "notes": []}


def _bad_results(lesson: Lesson, s: Submission) -> list[dict]:
    return [_row_result(ex, s.status, s.error or "") for ex in lesson.exercises]


def _record(lesson: Lesson, s: Submission, results: list[dict], protection: str, key: str,
            seconds: float | None = None, extra: dict | None = None) -> dict:
    return {"student": s.student, "lesson": lesson.number, "lesson_name": lesson.name, "submission": str(s.path),
            "submission_sha256": s.sha, "cache_key": key, "graded_at": _dt.datetime.now().isoformat(timespec="seconds"),
            "protection": protection, "seconds": seconds,
            "points": round(sum(float(r["points"]) for r in results), 2),
            "max_points": round(sum(float(e["points"]) for e in lesson.exercises), 2),
            "exercises": results, **(extra or {})}


def _write_student(out: Path, rec: dict) -> None:
    folder = out / rec["student"]
    atomic_write(folder / "results.json", json.dumps(rec, indent=1))
    atomic_write(folder / "feedback.html", feedback_html(rec))


def _write_grades(out: Path, records: dict[str, dict]) -> None:
    rows = []
    for rec in sorted(records.values(), key=lambda r: r["student"].lower()):
        for r in rec["exercises"]:
            rows.append({"student": rec["student"], "lesson": rec["lesson"], "exercise": r["exercise"],
                         "points": float(r["points"]), "max_points": float(r["max_points"]),
                         "status": r["status"], "message": r.get("message", "")})
    write_csv(out / "grades.csv", rows)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "_judge":
        sys.exit(_judge_main(sys.argv[2]))
    sys.exit(main(sys.argv[1:]))
