"""Stage 5: the verdict process — judges the plain data a kernel recorded, never learner code.

The recorded answers are copied (regular files only, bounded), then judged by a warm verdict
process per worker (`python -I -m labkit.grading.judge --serve`): it imports the lesson's
judges once and forks, per exercise, a child confined by resource limits (address space, CPU
seconds, no core files). It holds nothing a learner's model could name: it starts in an empty
folder only the grader can open, and its spec (seed, extra tests) arrives as the first line on its
stdin, never in a file; its children get the seed only, and /dev/null as stdin. An exercise whose judging runs past the judge timeout (a model with a
huge Loop...) gets the status `timeout` — a verdict like any other, cached.
"""
from __future__ import annotations

import json
import os
import re
import select
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..cells import is_exercise_id

if TYPE_CHECKING:
    from ..checks.result import Result

MAX_ANSWER_BYTES = 1 << 30
JUDGE_MEMORY = 4 << 30
MAX_LINE = 8 << 20


def copy_answers(src: Path, dest: Path) -> list[str]:
    """Copy recorded answers: real folders and regular files only, bounded size. `src`'s parent must
    be a folder only the grader can rename; below it nothing is followed: every folder and file is
    opened relative to its parent's descriptor with O_NOFOLLOW, and a file must be a regular file."""
    problems: list[str] = []
    dest.mkdir(parents=True, exist_ok=True)
    dflags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        parent = os.open(src.parent, dflags)
    except OSError:
        return problems
    fds = [parent]
    try:
        try:
            top = os.open(src.name, dflags, dir_fd=parent)
        except OSError:
            return problems
        fds.append(top)
        total = 0
        with os.scandir(top) as it:
            names = sorted(e.name for _, e in zip(range(10_000), it))
        for name in names[:200]:
            if not is_exercise_id(name):
                continue
            try:
                sub = os.open(name, dflags, dir_fd=top)
            except OSError:
                continue
            fds.append(sub)
            out = dest / name
            out.mkdir()
            with os.scandir(sub) as it:
                files = sorted(e.name for _, e in zip(range(10_000), it))
            for f in files[:1000]:
                if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", f) or f.startswith("."):
                    continue
                try:
                    fd = os.open(f, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=sub)
                except OSError:
                    problems.append(f"{name}/{f} is not a regular file (ignored)")
                    continue
                with os.fdopen(fd, "rb") as fi:
                    st = os.fstat(fi.fileno())
                    if not stat.S_ISREG(st.st_mode):
                        problems.append(f"{name}/{f} is not a regular file (ignored)")
                        continue
                    total += st.st_size
                    if total > MAX_ANSWER_BYTES:
                        problems.append(f"{name}: recorded answers exceed {MAX_ANSWER_BYTES >> 20} MB (ignored)")
                        break
                    with open(out / f, "wb") as fo:
                        shutil.copyfileobj(fi, fo, 1 << 20)
    except OSError as e:
        problems.append(f"the recorded answers could not all be read ({e.strerror or e})")
    finally:
        for fd in fds:
            os.close(fd)
    return problems


def _env(home: Path, data_dir: str) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", os.defpath), "LANG": os.environ.get("LANG", "C.UTF-8"),
            "HOME": str(home), "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "LABKIT_CACHE": data_dir}


class JudgeServer:
    """A warm verdict process for a worker: it imports labkit, the lesson's judges, numpy, onnx and
    ONNX Runtime once, then for each exercise forks a child confined by RLIMIT_AS, RLIMIT_CPU and
    no core files, and waits for it at most `timeout` seconds (past it: a `timeout` verdict).

    Requests and verdicts are JSON lines over its stdin/stdout; it never sees learner code."""

    def __init__(self, lesson: str, seed: int, extra: str, timeout: float, data_dir: str, home: Path):
        """`home`: an empty folder only the grader can open. The process's HOME (where ONNX Runtime
        keeps a cache of its own); its working folder, `home/cwd`, stays empty."""
        from .sandbox import verdict_server_command

        self.key = (lesson, seed, extra, timeout, data_dir)
        self.home = home
        (home / "cwd").mkdir(mode=0o700)
        cmd = verdict_server_command([sys.executable, "-I", "-m", "labkit.grading.judge", "--serve"])
        self.proc = subprocess.Popen(cmd, cwd=home / "cwd", env=_env(home, data_dir), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        spec = {"lesson": lesson, "seed": seed, "extra": extra, "timeout": timeout, "memory": JUDGE_MEMORY}
        self.proc.stdin.write((json.dumps(spec) + "\n").encode())  # through the pipe: never in a file
        self.proc.stdin.flush()
        self.timeout = timeout
        self.buf = b""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def judge(self, answers: Path, ids: list[str]) -> dict[str, Result]:
        """{exercise id: verdict} for the recorded answers in `answers`; raises when the server fails."""
        from ..checks.result import Result

        self.proc.stdin.write((json.dumps({"answers": str(answers), "ids": ids}) + "\n").encode())
        self.proc.stdin.flush()
        out: dict[str, Result] = {}
        deadline = time.monotonic() + (self.timeout + 10) * len(ids) + 120  # the first request pays the imports
        while len(out) < len(ids):
            while b"\n" not in self.buf:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                    raise RuntimeError("the checker process stopped answering")
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    raise RuntimeError("the checker process ended")
                self.buf += chunk
                if len(self.buf) > MAX_LINE:
                    raise RuntimeError("the checker wrote an oversized verdict")
            line, self.buf = self.buf.split(b"\n", 1)
            res = json.loads(line)
            out[res.pop("_id")] = Result.from_dict(res)
        return out

    def close(self) -> None:
        try:
            os.killpg(self.proc.pid, 9)
        except OSError:
            pass
        self.proc.wait()
        shutil.rmtree(self.home, ignore_errors=True)


_SERVER: JudgeServer | None = None


def server_pids() -> frozenset[int]:
    """The pid of this worker's verdict process (its launcher execs python: one pid)."""
    return frozenset([_SERVER.proc.pid]) if _SERVER is not None and _SERVER.alive() else frozenset()


def start_server(lesson: str, seed: int, extra: str, timeout: float, data_dir: str) -> None:
    """Start this worker's verdict process for these settings unless it runs: a worker calls it
    before running a notebook, so the process imports its judges while the kernel works."""
    global _SERVER
    key = (lesson, seed, extra, timeout, data_dir)
    if _SERVER is None or not _SERVER.alive() or _SERVER.key != key:
        if _SERVER is not None:
            _SERVER.close()
        home = Path(tempfile.mkdtemp(prefix="judge", dir=Path(data_dir).parent))  # 0700, empty
        _SERVER = JudgeServer(lesson, seed, extra, timeout, data_dir, home)


def judge_answers(lesson: str, answers: Path, seed: int, ids: list[str], extra: str, timeout: float,
                  data_dir: str) -> dict[str, Result]:
    """{exercise id: Result} from this worker's warm, confined verdict process (started on first use)."""
    global _SERVER
    start_server(lesson, seed, extra, timeout, data_dir)
    try:
        return _SERVER.judge(answers, ids)
    except Exception:
        _SERVER.close()
        _SERVER = None
        raise


def _judge_one(seed: int, answers: Path, id: str) -> dict:
    from .. import checks

    try:
        return checks.judge_saved(checks.get(id), answers / id, seed).to_dict()
    except Exception as e:  # judge_saved should not raise; be safe anyway
        return _no_verdict(id, "error", f"could not check: {e}")


def _no_verdict(id: str, status: str, message: str) -> dict:
    """A verdict the verdict process gives itself (the judge crashed or ran too long), as a `Result`."""
    from .. import checks

    ex = checks.get(id)
    return checks.Result(ex.id, ex.title, status, 0.0, ex.points, message, [], ex.hint).to_dict()


def serve() -> int:
    """The warm verdict process: read the spec (first line on stdin), import once, fork one confined
    child per exercise."""
    import resource
    import signal

    from .. import checks

    spec = json.loads(sys.stdin.readline())
    number = spec["lesson"][:2]   # 09b, a split lesson's notebook: its exercises are lesson 09's
    checks.judge_spec(checks.lesson_exercises(number)[0].id)  # imports labkit_judges.lNN
    for name in ("onnx", "onnxruntime", "onnx.reference"):
        try:
            __import__(name)
        except ImportError:
            pass
    if spec.get("extra"):
        exec(compile(spec["extra"], "<extra tests>", "exec"), {"__name__": "labkit_extra_tests"})
    seed, memory, timeout = int(spec["seed"]), int(spec["memory"]), float(spec["timeout"])
    warm = getattr(sys.modules.get(f"labkit_judges.l{spec['lesson']}"), "warm", None)
    if warm is not None:  # what every child would compute again (references of this seed, slow imports)
        try:
            warm(seed)
        except Exception:  # a child computes it then, and says so if it cannot
            pass
    del spec  # the extra tests' text is not kept: a child gets the seed only
    for request in sys.stdin:
        req = json.loads(request)
        for id in req["ids"]:
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: confined, judges one exercise, writes one line
                os.close(r)
                try:
                    null = os.open(os.devnull, os.O_RDONLY)
                    os.dup2(null, 0)  # the requests' pipe stays with the server
                    os.close(null)
                    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
                    resource.setrlimit(resource.RLIMIT_CPU, (int(timeout) + 5, int(timeout) + 5))
                    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
                    data = json.dumps(_judge_one(seed, Path(req["answers"]), id)).encode()
                    with os.fdopen(w, "wb") as f:
                        f.write(data)
                finally:
                    os._exit(0)
            os.close(w)
            buf, deadline, verdict = b"", time.monotonic() + timeout, None
            with os.fdopen(r, "rb", buffering=0) as f:
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0 or not select.select([f], [], [], left)[0]:
                        verdict = _no_verdict(id, "timeout",
                                              f"the checker ran past {timeout:g} s on this answer and was stopped")
                        break
                    chunk = f.read(1 << 16)
                    if not chunk:
                        break
                    buf += chunk
                    if len(buf) > MAX_LINE:
                        verdict = _no_verdict(id, "error", "the checker produced an oversized verdict")
                        break
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            _, status = os.waitpid(pid, 0)
            if verdict is None:
                try:
                    verdict = json.loads(buf)
                except ValueError:
                    why = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else "no verdict"
                    verdict = _no_verdict(id, "error", f"the checker crashed on this answer ({why}: out of memory "
                                                       "or CPU time?)")
            verdict["_id"] = id
            sys.stdout.write(json.dumps(verdict) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(serve() if sys.argv[1:] == ["--serve"] else 2)
