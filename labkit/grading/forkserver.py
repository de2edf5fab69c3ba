"""Warm kernels: one confined fork server per grading worker forks a fresh kernel per submission.

Starting a kernel, importing torch, onnx, ONNX Runtime, onnxscript and matplotlib, and paying the
exporter's first-call set-up cost several CPU seconds, the same for every submission. The fork
server pays them once per worker. It starts inside exactly the sandbox a kernel gets (bubblewrap
view, resource limits, pids cgroup, unprivileged uid; its writable folder is the worker's *slot*),
imports what the lesson imports (and runs the exporter once if the lesson exports from PyTorch),
then forks one kernel per request. It never runs learner code, and it is not
dumpable, so a kernel of the same uid can neither ptrace it nor read its memory.

Between two submissions (`KernelServer.reset`) the worker kills every other process of the
sandbox, has the server empty `/tmp` and `/dev/shm`, and empties the slot: nothing of one
submission reaches the next. A kernel that kills or stops the server costs a new server (a few
seconds for its own submission), never a grade.

Run inside the sandbox as `python -P -m labkit.grading.forkserver`: JSON lines on stdin/stdout.
"""
from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

#: always imported by the server: what every kernel loads
BASE_MODULES = ("IPython", "ipykernel.kernelapp", "labkit", "labkit.checks")
#: imported too when the lesson imports them (each only if installed). Not onnxruntime: importing it
#: starts a native thread, and a process must not fork with two threads
LESSON_MODULES = {"numpy": ("numpy",), "matplotlib": ("matplotlib.pyplot",), "ipywidgets": ("ipywidgets",),
                  "onnx": ("onnx",), "torch": ("torch",), "onnxscript": ("onnxscript",)}


def warm_plan(sources: list[str]) -> dict:
    """What a server for a lesson with these code cells pre-imports, and whether it runs the exporter
    once (only a lesson that exports from PyTorch pays for that)."""
    import re

    text = "\n".join(sources)
    roots = set(re.findall(r"^[ \t]*from[ \t]+([A-Za-z_]\w*)", text, re.M))
    for names in re.findall(r"^[ \t]*import[ \t]+([^#\n]+)", text, re.M):  # import a, b.c as d
        roots |= {n.strip().split(".")[0].split()[0] for n in names.split(",") if n.strip()}
    modules = [m for root, mods in LESSON_MODULES.items() if root in roots for m in mods]
    export = "torch" in roots and "torch.onnx.export" in text
    return {"modules": [*modules, *(["torch.onnx"] if export else []), *BASE_MODULES], "export": export}


STARTUP_TIMEOUT = 180
REQUEST_TIMEOUT = 30
PR_SET_DUMPABLE = 4


# ---------------------------------------------------------------- inside the sandbox


def _warm_up(plan: dict) -> None:
    """Import the plan's modules and, if it says so, run the exporter once on a toy module."""
    import importlib
    import logging
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in plan.get("modules", BASE_MODULES):
            try:
                importlib.import_module(name)
            except Exception:  # not installed, or broken: the kernel will say so itself
                pass
        torch = sys.modules.get("torch")
        if torch is not None and plan.get("export") and "torch.onnx" in sys.modules:
            levels = {n: logging.getLogger(n).level for n in ("torch", "onnxscript", "torch.onnx")}
            for n in levels:
                logging.getLogger(n).setLevel(logging.ERROR)
            try:
                import contextlib
                import io

                class Toy(torch.nn.Module):
                    def forward(self, x):
                        return torch.relu(x) * 2.0

                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    torch.onnx.export(Toy().eval(), (torch.ones(2, 3),), dynamo=True,
                                      dynamic_shapes={"x": {0: "batch"}})
                _reuse_torchlib_list()
            except Exception:
                pass
            finally:
                for n, level in levels.items():
                    logging.getLogger(n).setLevel(level)
    tqdm = sys.modules.get("tqdm")
    monitor = getattr(getattr(tqdm, "tqdm", None), "monitor", None)
    if monitor is not None:  # the exporter's progress bars started tqdm's monitor thread
        monitor.exit()
        monitor.join()


def _reuse_torchlib_list() -> None:
    """Every torch.onnx.export call asks onnxscript for its list of torchlib functions, and onnxscript
    (0.7) rebuilds it each time by parsing the source of ~550 functions: about half a second per
    export, the same list every time (it depends only on the installed onnxscript). The server
    builds it once and its kernels reuse it. Only when two fresh builds agree; the exported models
    are the same (tests/test_kernel_server.py)."""
    names = [n for n in sys.modules if n.startswith("onnxscript._framework_apis.torch_")]
    modules = [sys.modules[n] for n in names if callable(getattr(sys.modules[n], "get_torchlib_ops", None))]
    if not modules:
        return
    build = modules[0].get_torchlib_ops
    first, second = build(), build()
    key = lambda metas: [(m.qualified_name, m.domain, m.name, m.is_complex, m.function) for m in metas]  # noqa: E731
    if key(first) != key(second):
        return

    def get_torchlib_ops() -> list:
        return list(first)

    get_torchlib_ops.__doc__ = f"{build.__doc__ or ''} (built once by the labkit kernel server)"
    for m in modules:
        m.get_torchlib_ops = get_torchlib_ops


def threads() -> int:
    """How many threads this process runs (native ones included)."""
    return len(os.listdir("/proc/self/task"))


def _empty(folder: str, keep: frozenset[str] = frozenset()) -> int:
    """Remove everything inside `folder` but the `keep` paths (mounted folders) and the folders
    leading to them, which are emptied the same way. Returns how many other entries are left."""
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    left = 0
    for name in names:
        path = os.path.join(folder, name)
        if path in keep:
            continue
        if any(k.startswith(path + os.sep) for k in keep):
            left += _empty(path, keep)
            continue
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                for d, subdirs, _ in os.walk(path):
                    for sub in subdirs:
                        try:
                            os.chmod(os.path.join(d, sub), 0o700)
                        except OSError:
                            pass
                os.chmod(path, 0o700)
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        except OSError:
            pass
        left += os.path.lexists(path)
    return left


def _become_kernel(req: dict) -> None:
    """In the forked child: a new session, fresh stdio, new random seeds (as a fresh process gets),
    then ipykernel on the requested connection file. Never returns."""
    code = 1
    try:
        os.setsid()
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        log = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(null)
        os.close(log)
        sys.stdin = open(0, closefd=False)
        sys.stdout = open(1, "w", closefd=False, buffering=1)
        sys.stderr = open(2, "w", closefd=False, buffering=1)
        _prctl(PR_SET_DUMPABLE, 1)  # the kernel is an ordinary process; the server stays undumpable
        import random

        random.seed()
        if "numpy" in sys.modules:
            sys.modules["numpy"].random.seed()
        if "torch" in sys.modules:
            sys.modules["torch"].seed()
        sys.argv = ["ipykernel_launcher", "-f", req["conn"]]
        from ipykernel.kernelapp import IPKernelApp

        IPKernelApp.launch_instance(argv=["-f", req["conn"]])
        code = 0
    finally:
        os._exit(code)


def _prctl(option: int, value: int) -> bool:
    from .. import sandbox

    return sandbox._prctl(option, value)


def serve(sandboxed: bool, keep: frozenset[str], plan: dict) -> None:
    """The server's loop: warm up, say ready, then fork kernels and clean up on request."""
    _prctl(PR_SET_DUMPABLE, 0)  # a kernel (same uid) cannot ptrace this process or read its memory
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, lambda *_: _reap())
    _warm_up(plan)
    for _ in range(50):  # a thread the warm-up started may still be ending
        if threads() == 1:
            break
        time.sleep(0.1)
    if threads() != 1:  # a fork copies one thread: locks held by the others would stay locked
        import threading

        names = [t.name for t in threading.enumerate()]
        sys.exit(f"labkit kernel server: the warm-up left {threads()} threads running ({', '.join(names)}); "
                 "cannot fork safely")
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # stray prints cannot corrupt the protocol
    out.write(json.dumps({"ready": True, "pid": os.getpid()}) + "\n")
    for line in sys.stdin:
        _reap()
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if req.get("op") == "fork":
            pid = os.fork()
            if pid == 0:
                out.close()
                _become_kernel(req)
            out.write(json.dumps({"pid": pid}) + "\n")
        elif req.get("op") == "clean":
            left = sum(_empty(d, keep) for d in ("/tmp", "/dev/shm")) if sandboxed else 0
            out.write(json.dumps({"left": left}) + "\n")


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


# ---------------------------------------------------------------- in the grading worker


def _ns_pid(pid: int) -> int | None:
    """The pid `pid` has in its own (innermost) pid namespace."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError):
        pass
    return None


def _state_ppid(pid: int) -> tuple[str, int]:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode(errors="replace")
        fields = stat[stat.rindex(")") + 2:].split()
        return fields[0], int(fields[1])
    except (OSError, ValueError, IndexError):
        return "X", 0


#: process states of a server or kernel that will not answer: zombie, dead, stopped, traced
_GONE = "ZXTt"


class ServerError(RuntimeError):
    """The fork server did not start or stopped answering."""


class KernelServer:
    """The worker's fork server and its slot (the sandbox's writable folder, the kernels' work dir)."""

    def __init__(self, spec, slot: Path, warm: dict | None = None):
        self.spec, self.slot = spec, slot
        self.log = slot.parent / f"{slot.name}-server.log"
        self.warm = warm or {"modules": list(BASE_MODULES), "export": False}  # see warm_plan()
        self.uid = None if spec.uid is None else spec.uid + (os.getpid() % 100_000) * 8
        self.proc: subprocess.Popen | None = None
        self.pid = 0            # the server's pid as this worker sees it
        self.keep: set[int] = set()
        self.cgroup = None
        self.buf = b""
        self.starts = 0

    # -- the slot

    def prepare_slot(self) -> None:
        """The slot exists, is owned by the kernels' uid and holds an empty answers/ and tmp/."""
        self.slot.mkdir(parents=True, exist_ok=True)
        for d in (self.slot, self.slot / "answers", self.slot / "tmp"):
            d.mkdir(exist_ok=True)
            if self.uid is not None:
                os.chown(d, self.uid, self.uid)
        os.chmod(self.slot, 0o711 if self.uid is not None else 0o700)

    def _wipe_slot(self) -> None:
        if not self.slot.is_dir():
            return
        os.chmod(self.slot, 0o700)
        if _empty(str(self.slot)):
            raise ServerError(f"could not empty {self.slot}")

    # -- the process

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and _state_ppid(self.pid)[0] not in _GONE

    def ensure(self) -> None:
        """Start the server if it is not running (the first time, or after a kernel killed it)."""
        if not self.alive():
            self.stop()
            self.start()

    def start(self) -> None:
        from .. import sandbox
        from .run import kernel_env

        self.prepare_slot()
        self.starts += 1
        self.cgroup = sandbox.PidsCgroup.create(f"labkit-grade-{os.getpid()}-{self.starts}-{os.urandom(3).hex()}",
                                                self.spec.limits.get("nproc", 256))
        limits = dict(self.spec.limits)
        if os.geteuid() != 0 or not self.spec.bwrap:  # RLIMIT_NPROC counts all of this user's tasks
            limits["nproc"] = sandbox.user_task_count() + int(self.spec.limits.get("nproc", 256))
        cmd = sandbox.launcher_args(limits, str(self.cgroup.path) if self.cgroup else None)
        if self.spec.bwrap:
            cmd += sandbox.bwrap_args(self.slot, [Path(p) for p in self.spec.visible],
                                      [Path(p) for p in self.spec.hidden], uid=self.uid)
        elif self.uid is not None:  # no bubblewrap (Gradescope's container): only drop to the unprivileged uid
            cmd += sandbox.drop_to(self.uid)
        cmd += [sys.executable, "-P", "-m", "labkit.grading.forkserver", json.dumps({"sandboxed": self.spec.bwrap, "warm": self.warm,
                                "keep": [str(Path(p).resolve()) for p in (self.slot, *self.spec.visible)]})]
        log = open(self.log, "ab")
        try:
            self.proc = subprocess.Popen(cmd, cwd=self.slot, env=kernel_env(self.slot, self.spec),
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                         start_new_session=True)
        finally:
            log.close()
        self.buf = b""
        ready = self._reply(STARTUP_TIMEOUT, "start")
        ns = int(ready.get("pid", 0))
        self.pid = self.proc.pid if _ns_pid(self.proc.pid) == ns and not self.spec.bwrap else 0
        for _ in range(100):
            if self.pid:
                break
            for p in sandbox.descendants(self.proc.pid):
                if _ns_pid(p) == ns and b"labkit.grading.forkserver" in _cmdline(p):
                    self.pid = p
            time.sleep(0.01)
        if not self.pid:
            self.stop()
            raise ServerError("the kernel server started but could not be found")
        chain, p = {self.pid}, self.pid  # the server and what runs it (bwrap): spared by reset()
        while p and p != self.proc.pid:
            p = _state_ppid(p)[1]
            chain.add(p)
        self.keep = chain | {self.proc.pid}

    def _reply(self, timeout: float, what: str) -> dict:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                raise ServerError(f"the kernel server did not answer ({what})")
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                raise ServerError(f"the kernel server ended ({what}): {log_tail(self.log)}")
            self.buf += chunk
            if len(self.buf) > 1 << 20:
                raise ServerError("the kernel server wrote an oversized reply")
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def _ask(self, req: dict, timeout: float = REQUEST_TIMEOUT) -> dict:
        try:
            self.proc.stdin.write((json.dumps(req) + "\n").encode())
            self.proc.stdin.flush()
        except (OSError, ValueError) as e:
            raise ServerError(f"the kernel server is gone: {e}") from None
        return self._reply(timeout, req.get("op", "?"))

    def fork(self, conn: Path, log: Path) -> int:
        """A new kernel on connection file `conn`; returns its pid as this worker sees it."""
        from .. import sandbox

        ns = int(self._ask({"op": "fork", "conn": str(conn), "log": str(log)})["pid"])
        for _ in range(200):
            for p in sandbox.descendants(self.pid):
                if _ns_pid(p) == ns and _state_ppid(p)[1] == self.pid:
                    return p
            time.sleep(0.005)
        raise ServerError("the kernel server forked a kernel that could not be found")

    def kernel_alive(self, pid: int) -> bool:
        state, ppid = _state_ppid(pid)
        return state not in _GONE and ppid == self.pid

    def kill_others(self) -> bool:
        """SIGKILL every process of the sandbox but the server and bwrap; True when none is left."""
        from .. import sandbox

        if self.proc is None:
            return True
        for _ in range(500):
            victims = [p for p in sandbox.descendants(self.proc.pid)
                       if p not in self.keep and _state_ppid(p)[0] not in "ZX"]  # zombies are dead
            if not victims:
                return True
            for p in victims:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.005)
        return False

    def reset(self) -> None:
        """Between submissions: no process, file or folder of the last one is left (see module doc).
        A server that cannot be reset is replaced."""
        try:
            if self.alive() and self.kill_others() and self._ask({"op": "clean"}).get("left") == 0:
                self._wipe_slot()
                self.prepare_slot()
                return
        except ServerError:
            pass
        self.stop()
        self._wipe_slot()
        self.prepare_slot()

    def stop(self) -> None:
        from .. import sandbox

        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            sandbox.kill_tree(self.proc.pid)
            try:
                self.proc.kill()
            except OSError:
                pass
            for f in (self.proc.stdin, self.proc.stdout):
                try:
                    f.close()
                except OSError:
                    pass
            self.proc.wait()
        if self.cgroup is not None:
            self.cgroup.remove()
        self.proc, self.pid, self.keep, self.cgroup = None, 0, set(), None


def log_tail(path: Path) -> str:
    """The last line of a kernel's or server's log, for an error message."""
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "no output"
    return " ".join(lines[-1].split())[:200] if lines else "no output"


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


class ForkedKernel:
    """What nbclient and the runner need of a kernel manager, for a kernel the server forked."""

    def __init__(self, server: KernelServer, pid: int, kc):
        self.server, self.pid, self.kc = server, pid, kc
        self.provisioner = None

    async def interrupt_kernel(self) -> None:
        """ipykernel's message-mode interrupt, on the control channel."""
        self.kc.control_channel.send(self.kc.session.msg("interrupt_request", content={}))

    async def is_alive(self) -> bool:
        return self.server.kernel_alive(self.pid)

    async def shutdown_kernel(self, now: bool = True) -> None:
        """The kernel and everything it started (a server runs one kernel at a time)."""
        self.server.kill_others()


if __name__ == "__main__":
    _args = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    serve(bool(_args.get("sandboxed")), frozenset(_args.get("keep", ())), _args.get("warm") or {})
