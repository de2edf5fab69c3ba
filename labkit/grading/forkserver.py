"""Warm kernels: one confined fork server per grading worker forks a fresh kernel per submission.

Starting a kernel, importing torch, onnx, ONNX Runtime, onnxscript and matplotlib, and paying the
exporter's first-call set-up cost several CPU seconds, the same for every submission. The fork
server pays them once per worker. It starts inside exactly the sandbox a kernel gets (bubblewrap
view, resource limits, pids cgroup, unprivileged uid; its writable folder is the worker's *slot*),
imports what the lesson imports (and runs the exporter once if the lesson exports from PyTorch),
then forks one kernel per request. It never runs learner code, and it is not
dumpable, so a kernel of the same uid can neither ptrace it nor read its memory.

Each submission starts from a verified-clean state (`KernelServer.begin`/`end`): for a root
grader its kernels run under a fresh uid, in their own mount and IPC namespaces with a fresh /tmp
and /dev/shm, in a fresh folder; after it, every process of that uid is killed (zombie leaders
with live threads included), its folders are removed without following a link, and the server's
health is checked; any doubt replaces the server and its slot. A kernel that kills or stops the
server costs a new server (a few seconds for its own submission), never a grade.

Run inside the sandbox as `python -P -m labkit.grading.forkserver`: JSON lines on stdin/stdout.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the server itself never imports the grader's side
    from .sandbox import Sandbox

#: always imported by the server: what every kernel loads
BASE_MODULES = ("IPython", "ipykernel.kernelapp", "labkit", "labkit.checks")
#: imported too when the lesson imports them (each only if installed). Not onnxruntime: importing it
#: starts a native thread, and a process must not fork with two threads
LESSON_MODULES = {"numpy": ("numpy",), "matplotlib": ("matplotlib.pyplot",), "ipywidgets": ("ipywidgets",),
                  "onnx": ("onnx",), "torch": ("torch",), "onnxscript": ("onnxscript",)}


def warm_plan(sources: list[str]) -> dict:
    """What a server for a lesson with these code cells pre-imports, whether it runs the exporter once
    (only a lesson that exports from PyTorch pays for that), and whether it looks for the WebGPU
    adapter once (`labkit.gpu` probes it in two child processes, 2-4 s, once per process: the
    kernels forked from the server inherit the answer, as they inherit its imports)."""
    import re

    text = "\n".join(sources)
    roots = set(re.findall(r"^[ \t]*from[ \t]+([A-Za-z_]\w*)", text, re.M))
    for names in re.findall(r"^[ \t]*import[ \t]+([^#\n]+)", text, re.M):  # import a, b.c as d
        roots |= {n.strip().split(".")[0].split()[0] for n in names.split(",") if n.strip()}
    modules = [m for root, mods in LESSON_MODULES.items() if root in roots for m in mods]
    export = "torch" in roots and "torch.onnx.export" in text
    gpu = bool(re.search(r"\bdoctor\(|\bgpu\.(setup|status|find_adapter)\(", text))
    return {"modules": [*modules, *(["torch.onnx"] if export else []), *BASE_MODULES], "export": export,
            "gpu": gpu}


@dataclass(frozen=True)
class SandboxSpec:
    """How one submission's kernels are confined (the same for a whole batch, except the folders)."""

    limits: dict
    sandbox: Sandbox                  # the protection mode's backend (grading.sandbox)
    visible: tuple[str, ...]          # read-only folders the kernel sees (python, labkit, inputs, data)
    hidden: tuple[str, ...]           # folders inside those that must look empty (labkit_judges...)
    inputs_dir: str
    data_dir: str
    uid: int | None                   # unprivileged uid of the kernel (root grader), else None
    pythonpath: str = ""              # a readable copy of the course the kernel imports (sandbox.unprivileged)


def kernel_env(work: Path, spec: SandboxSpec) -> dict[str, str]:
    """A scrubbed environment: no seed, nothing of the grader's, the grader's inputs and data folders."""
    return {"PATH": os.environ.get("PATH", os.defpath), "LANG": os.environ.get("LANG", "C.UTF-8"),
            "HOME": str(work), "TMPDIR": spec.sandbox.kernel_tmp(work),
            "LABKIT_COLLECT_DIR": str(work / "answers"), "LABKIT_INPUTS_DIR": spec.inputs_dir,
            "LABKIT_CACHE": spec.data_dir, "MPLBACKEND": "Agg",
            "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "PYTHONDONTWRITEBYTECODE": "1", "JUPYTER_PLATFORM_DIRS": "1",
            "PYDEVD_DISABLE_FILE_VALIDATION": "1", "PYTHONUNBUFFERED": "1",
            **({"PYTHONPATH": spec.pythonpath} if spec.pythonpath else {})}


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
    if plan.get("gpu"):
        try:
            from labkit import gpu

            gpu.find_adapter()  # in child processes: this server starts no thread of ONNX Runtime's
        except Exception:
            pass
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
    leading to them, which are emptied the same way. Never follows a link; any depth (see
    `sandbox.remove_tree`). Returns how many other entries are left."""
    from .. import sandbox

    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    left = 0
    for name in names:
        path = os.path.join(folder, name)
        if path in keep:
            continue
        if any(k.startswith(path + os.sep) for k in keep) and not os.path.islink(path):
            left += _empty(path, keep)
            continue
        if not sandbox.remove_tree(path, max_entries=200_000, max_seconds=20):
            left += 1
    return left


def _ipc_objects() -> int:
    """System V IPC objects (shared memory, message queues, semaphores) in this IPC namespace."""
    n = 0
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                n += max(0, len(f.read().strip().splitlines()) - 1)
        except OSError:
            pass
    return n


#: the fresh /tmp and /dev/shm of each kernel of a root grader (tmpfs: bytes, inodes)
KERNEL_TMP_SIZE = 512 << 20
KERNEL_TMP_INODES = 65536


def _isolate(req: dict) -> None:
    """In a kernel forked by a root grader's server: its own mount and IPC namespaces (System V IPC,
    POSIX message queues), a fresh /tmp and /dev/shm (the course folders mounted under /tmp kept),
    then its own uid with no capability and no new privileges. Raises if any step fails."""
    from .. import sandbox

    uid = int(req["uid"])
    if uid <= 0:
        raise OSError("no kernel uid")
    sandbox.unshare(sandbox.CLONE_NEWNS | sandbox.CLONE_NEWIPC)
    sandbox.mount("none", "/", None, sandbox.MS_REC | sandbox.MS_PRIVATE)
    opts = f"size={KERNEL_TMP_SIZE},nr_inodes={KERNEL_TMP_INODES},mode=1777"
    flags = sandbox.MS_NOSUID | sandbox.MS_NODEV
    sandbox.mount("tmpfs", "/dev/shm", "tmpfs", flags, opts)  # the new /tmp, built here first
    for path in sorted(k for k in req.get("keep", []) if k.startswith("/tmp/")):
        inner = "/dev/shm" + path[len("/tmp"):]
        os.makedirs(inner, mode=0o755, exist_ok=True)
        sandbox.mount(path, inner, None, 4096 | sandbox.MS_REC)  # MS_BIND: read-only stays read-only
    sandbox.mount("/dev/shm", "/tmp", None, 8192)  # MS_MOVE
    sandbox.mount("tmpfs", "/dev/shm", "tmpfs", flags, opts)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # from uid 0 to another: every capability is dropped
    with open("/proc/self/status") as f:
        status = f.read()
    caps = [line.split()[1] for line in status.splitlines() if line.startswith(("CapEff:", "CapPrm:", "CapAmb:"))]
    if os.getuid() != uid or os.geteuid() != uid or any(int(c, 16) for c in caps):
        raise OSError("the kernel kept privileges")
    if not _prctl(38, 1):  # PR_SET_NO_NEW_PRIVS
        raise OSError("no_new_privs refused")


def _become_kernel(req: dict) -> None:
    """In the forked child: a new session, its own namespaces, /tmp, /dev/shm and uid (root grader),
    fresh stdio, new random seeds (as a fresh process gets), then ipykernel on the requested
    connection file. Never returns."""
    code = 1
    try:
        os.setsid()
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        if req.get("uid") is not None:
            _isolate(req)
        os.chdir(req["work"])
        os.environ.clear()
        os.environ.update(req.get("env") or {})
        null = os.open(os.devnull, os.O_RDONLY)
        log = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
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
    except BaseException as e:  # noqa: BLE001 - the child must never return into the server's loop
        try:
            os.write(2, f"labkit kernel: {e}\n".encode())
        except OSError:
            pass
    finally:
        os._exit(code)


def _prctl(option: int, value: int) -> bool:
    from .. import sandbox

    return sandbox._prctl(option, value)


def serve(private_tmp: bool, keep: frozenset[str], plan: dict) -> None:
    """The server's loop: warm up, say ready, then fork kernels and clean up on request. `private_tmp`:
    its /tmp, /dev/shm and System V IPC are the sandbox's own, to be kept empty."""
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
    baseline = _visible_tmp()  # what the warm-up itself left in /tmp (torch, matplotlib caches)
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
                _become_kernel(dict(req, keep=sorted(keep)))
            out.write(json.dumps({"pid": pid}) + "\n")
        elif req.get("op") == "clean":  # kernels sharing the server's /tmp (no root grader)
            left = sum(_empty(d, keep) for d in ("/tmp", "/dev/shm")) if private_tmp else 0
            out.write(json.dumps({"left": left}) + "\n")
        elif req.get("op") == "check":  # the server's own health: its /tmp and /dev/shm as after warm-up
            left = len(_visible_tmp() ^ baseline) if private_tmp else 0
            out.write(json.dumps({"threads": threads(), "left": left, "ipc": _ipc_objects() if private_tmp else 0,
                                  "uid": os.getuid()}) + "\n")


def _visible_tmp() -> set[str]:
    """Everything in the server's /tmp and /dev/shm (two levels deep)."""
    seen = set()
    for d in ("/tmp", "/dev/shm"):
        try:
            for n in os.listdir(d):
                seen.add(os.path.join(d, n))
                p = os.path.join(d, n)
                if os.path.isdir(p) and not os.path.islink(p):
                    seen.update(os.path.join(p, m) for m in os.listdir(p)[:1000])
        except OSError:
            seen.add(f"{d}: unreadable")
    return seen


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


#: a root grader's slot is a tmpfs of this size and inode count (thrown away in one step)
SLOT_SIZE = 2 << 30
SLOT_INODES = 200_000
#: cleaning a slot without a tmpfs stops after this many entries / seconds (then: a new slot)
CLEAN_ENTRIES = 200_000
CLEAN_SECONDS = 30
_PRIVATE_MOUNTS = False


def worker_setup() -> None:
    """In a grading worker, before it starts any thread: its own mount namespace (root only), so
    its slots can be tmpfs mounts that nothing outside sees and that vanish with it."""
    global _PRIVATE_MOUNTS
    from .. import sandbox

    _PRIVATE_MOUNTS = sandbox.private_mounts()


class KernelServer:
    """The worker's fork server and its slot.

    The slot (`slot/sN`, a fresh tmpfs per server when the worker runs as root) is the sandbox's
    writable folder; it holds one folder per submission (`wN`, the kernels' home and work folder)
    and one root-owned folder per kernel for its connection file and sockets (`cN-K`). A root
    grader's server runs as root inside the sandbox with only the capabilities a kernel needs to
    get its own namespaces and uid; each submission gets a fresh uid (`sandbox.UidClaim`).
    `begin()` and `end()` bracket a submission; `end()` verifies that nothing of it is left, and any
    doubt replaces the server and the slot."""

    def __init__(self, spec: SandboxSpec, slot: Path, warm: dict | None = None):
        self.spec, self.slot = spec, slot
        self.log = slot.parent / f"{slot.name}-server.log"
        self.warm = warm or {"modules": list(BASE_MODULES), "export": False}  # see warm_plan()
        self.isolate = spec.sandbox.isolates(spec.uid)   # a fresh uid and namespaces per submission
        self.uid: int | None = None        # the current submission's kernels' uid (root grader)
        # Without bubblewrap, a root grader told to (Gradescope's container) runs the server and its
        # kernels as one unprivileged uid: the weaker mode docs/instructors.md describes.
        self.run_as = spec.sandbox.runs_as(spec.uid)
        self.claim = None
        self.mount: Path | None = None     # the folder the server's sandbox binds
        self.tmpfs = False
        self.work: Path | None = None      # the current submission's folder
        self.verified = True               # nothing of an earlier submission can be left
        self.proc: subprocess.Popen | None = None
        self.pid = 0            # the server's pid as this worker sees it
        self.keep: set[int] = set()
        self.cgroup = None
        self.buf = b""
        self.starts = 0
        self.generation = 0
        self.submissions = 0
        self.conns: list[Path] = []

    @property
    def kernel_uid(self) -> int | None:
        """The uid the current submission's kernels run as: its own (root grader with bubblewrap), the
        one unprivileged uid (Gradescope's container), or None (the grader's own uid)."""
        return self.uid if self.uid is not None else self.run_as

    # -- the slot

    def _new_mount(self) -> None:
        from .. import sandbox

        self.generation += 1
        self.slot.mkdir(parents=True, exist_ok=True)
        os.chmod(self.slot, 0o711)
        m = self.slot / f"s{self.generation}"
        m.mkdir()
        self.tmpfs = False
        if _PRIVATE_MOUNTS:
            try:
                sandbox.mount("tmpfs", str(m), "tmpfs", sandbox.MS_NOSUID | sandbox.MS_NODEV,
                              f"size={SLOT_SIZE},nr_inodes={SLOT_INODES},mode=0711")
                self.tmpfs = True
            except OSError:
                pass
        os.chmod(m, 0o711 if self.isolate else 0o700)
        if self.run_as is not None:
            os.chown(m, self.run_as, self.run_as)
        self.mount = m

    def _discard_mount(self) -> None:
        """Throw the slot away: unmount its tmpfs, or remove it (bounded; what is left stays in the
        worker's folder, which the grader removes at the end)."""
        from .. import sandbox

        m, self.mount = self.mount, None
        if m is None:
            return
        if self.tmpfs and sandbox.umount(str(m)):
            try:
                m.rmdir()
            except OSError:
                pass
        else:
            sandbox.remove_tree(m, max_entries=CLEAN_ENTRIES, max_seconds=CLEAN_SECONDS)

    def prepare_slot(self) -> None:
        """A slot exists (the folder the next server binds)."""
        if self.mount is None:
            self._new_mount()

    def begin(self) -> Path:
        """Start a submission from a verified-clean state: a server that passed `end()`'s checks (or
        none yet), a fresh folder and, for a root grader, a fresh uid. Returns its folder."""
        from .. import sandbox

        if not self.verified:
            self.stop()
            self._discard_mount()
            self.verified = True
        self.prepare_slot()
        if self.isolate:
            self.claim = sandbox.UidClaim.claim(self.spec.uid)
            self.uid = self.claim.uid
        self.submissions += 1
        self.work = self.mount / f"w{self.submissions}"
        for d in (self.work, self.work / "answers", self.work / "tmp"):
            d.mkdir(mode=0o700)
            if self.kernel_uid is not None:
                os.chown(d, self.kernel_uid, self.kernel_uid)
        self.conns = []
        return self.work

    def conn_dir(self, n: int) -> Path:
        """A root-owned folder for kernel `n`'s connection file and sockets: writable by the kernel
        only until it is ready (`lock`), so it never holds a link the worker would follow."""
        d = self.mount / f"c{self.submissions}-{n}"
        d.mkdir(mode=0o700)
        if self.kernel_uid is not None:
            os.chown(d, 0, self.kernel_uid)
            os.chmod(d, 0o770)
        self.conns.append(d)
        return d

    def relay_dir(self, n: int) -> Path:
        """A folder for the relay of kernel `n` (`relay.Relay`): beside the slot, only the worker can open it."""
        return self.slot.parent / f"{self.slot.name}-r{self.submissions}-{n}"

    def lock(self, conn: Path) -> None:
        """The kernel is ready: it can no longer change what is in its connection folder."""
        if self.kernel_uid is not None:
            os.chmod(conn, 0o750)

    def end(self) -> bool:
        """After a submission (its answers copied): kill everything of it, remove its folders, and
        verify — no process of its uid, nothing left in the slot, the server healthy with nothing in
        its /tmp, /dev/shm or System V IPC. Anything off (or the check failing) replaces the server
        and the slot before the next submission. True when verified clean."""
        from .. import sandbox

        why: list[str] = []
        try:
            if not self.kill_others():
                why.append("a process of the submission would not die")
            if self.uid is not None and sandbox.uid_tasks(self.uid, live_only=True):
                why.append(f"a process of uid {self.uid} is left")
            if self.mount is not None:
                for name in os.listdir(self.mount):
                    sandbox.remove_tree(self.mount / name, max_entries=CLEAN_ENTRIES, max_seconds=CLEAN_SECONDS)
                if os.listdir(self.mount):
                    why.append("the slot could not be emptied")
            if self.alive():
                if not self.isolate and self._ask({"op": "clean"}).get("left") != 0:
                    why.append("the server's /tmp could not be emptied")
                health = self._ask({"op": "check"})
                if health != {"threads": 1, "left": 0, "ipc": 0, "uid": health.get("uid")} or \
                        (self.isolate and health["uid"] != 0) or not self.alive():
                    why.append(f"the server is not as it started: {health}")
        except (ServerError, OSError, ValueError) as e:
            why.append(f"the check failed: {e}")
        ok = not why
        if why:
            self.note("replacing the kernel server: " + "; ".join(why))
        if self.claim is not None and (self.uid is None or not sandbox.uid_tasks(self.uid)):
            self.claim.release()
        self.claim, self.uid, self.work, self.conns = None, None, None, []
        self.verified = ok
        if not ok:
            self.stop()
            self._discard_mount()
            self.verified = True  # a new server and slot: nothing of the submission can reach them
        return ok

    def note(self, text: str) -> None:
        """One line in the server's log (the worker's folder, never a kernel's)."""
        try:
            with open(self.log, "a") as f:
                f.write(f"labkit worker: {text}\n")
        except OSError:
            pass

    def close(self) -> None:
        """The worker is done: the server stopped, the slot thrown away."""
        self.stop()
        self._discard_mount()
        if self.claim is not None:
            self.claim.release()
            self.claim = None

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

        self.prepare_slot()
        self.starts += 1
        self.cgroup = sandbox.PidsCgroup.create(f"labkit-grade-{os.getpid()}-{self.starts}-{os.urandom(3).hex()}",
                                                self.spec.limits.get("nproc", 256))
        limits = dict(self.spec.limits)
        if self.spec.sandbox.caps_user_tasks():  # RLIMIT_NPROC counts all of this user's tasks
            limits["nproc"] = sandbox.user_task_count() + int(self.spec.limits.get("nproc", 256))
        cmd = sandbox.launcher_args(limits, str(self.cgroup.path) if self.cgroup else None)
        cmd += self.spec.sandbox.server_prefix(self.mount, [Path(p) for p in self.spec.visible],
                                               [Path(p) for p in self.spec.hidden], self.spec.uid)
        keep = [str(Path(p).resolve()) for p in (self.mount, *self.spec.visible)]
        cmd += [sys.executable, "-P", "-m", "labkit.grading.forkserver",
                json.dumps({"private_tmp": self.spec.sandbox.private_tmp, "warm": self.warm, "keep": keep})]
        log = open(self.log, "ab")
        try:
            self.proc = subprocess.Popen(cmd, cwd=self.mount, env=kernel_env(self.mount, self.spec),
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                         start_new_session=True)
        finally:
            log.close()
        self.buf = b""
        ready = self._reply(STARTUP_TIMEOUT, "start")
        ns = int(ready.get("pid", 0))
        self.pid = self.proc.pid if _ns_pid(self.proc.pid) == ns and not self.spec.sandbox.own_pid_namespace() else 0
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
        chain, p = {self.pid}, self.pid  # the server and what runs it (bwrap): spared by kill_others()
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
        except (OSError, ValueError, AttributeError) as e:
            raise ServerError(f"the kernel server is gone: {e}") from None
        return self._reply(timeout, req.get("op", "?"))

    def fork(self, conn: Path, log: Path) -> int:
        """A new kernel on connection file `conn`; returns its pid as this worker sees it."""
        from .. import sandbox

        req = {"op": "fork", "conn": str(conn), "log": str(log), "work": str(self.work), "uid": self.uid,
               "env": kernel_env(self.work, self.spec)}
        ns = int(self._ask(req)["pid"])
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
        """SIGKILL every process of the submission: everything of its uid (root grader) and every
        process of the sandbox but the server and bwrap, zombie leaders whose threads still run
        included. True when none is left."""
        from .. import sandbox

        ok = True
        if self.uid is not None:
            ok = sandbox.kill_uid(self.uid)
        if self.proc is None:
            return ok
        for _ in range(500):
            victims = [p for p in sandbox.descendants(self.proc.pid) if p not in self.keep]
            live = [p for p in victims if sandbox._has_live_task(str(p))]
            if not live:
                return ok
            for p in victims:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.005)
        return False

    def reset(self) -> None:
        """Between submissions (kept for callers that do not bracket with begin/end)."""
        if self.work is not None:
            self.end()
        self.begin()

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
    """The last line of a kernel's or server's log, for an error message (a regular file only, never
    through a link, its last 64 KB)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return "no output"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "no output"
        os.lseek(fd, max(0, st.st_size - (64 << 10)), os.SEEK_SET)
        lines = os.read(fd, 64 << 10).decode(errors="replace").strip().splitlines()
    except OSError:
        return "no output"
    finally:
        os.close(fd)
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
        if not self.server.kill_others():
            self.server.stop()  # something would not die: the server goes with it


if __name__ == "__main__":
    _args = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    serve(bool(_args.get("private_tmp")), frozenset(_args.get("keep", ())), _args.get("warm") or {})
