"""Learner side: call a learner's function where only the skill's tools can be imported.

Some exercises *are* the arithmetic (quantize with the affine mapping, fold BatchNorm, perplexity from
logits): a library that already does it (`onnx.reference`, `onnxruntime.quantization`,
`torch.nn.functional`) is a shortcut, not the skill. Such an exercise declares `tools=("numpy",)`, and
its answer runs in a fresh child process (not a fork: the kernel's loaded modules stay behind) that may
read only Python's standard library, the tools, cloudpickle and labkit. On Linux the kernel enforces
that with Landlock (no privileges needed; every protection mode of the grader), so importing a
library afresh, reaching its files or calling its shared library is refused by the kernel, not by a
Python hook an answer could remove; the child may not execute programs, open TCP connections or
signal processes outside itself either. Where Landlock is missing (macOS, old kernels) only an import
hook stands in: honest answers see the same, a determined one is not stopped. On Windows (no fork) the
learner's own check calls the function in the kernel; grading runs on Linux.

The function travels by value (cloudpickle) into the child; only plain data comes back, through files
read with `allow_pickle=False` (`labkit.plain`), so nothing the child writes can run in the kernel.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

#: bytes of the child's own printing shown under the check (its stdout and stderr, each)
SHOWN_OUTPUT = 2000
#: seconds the child may take beyond the per-call limits (start-up, NumPy's import)
SLACK = 30
#: seconds the zygote may take to start and fork a call
START_TIMEOUT = 60
#: a call's files: the function (pickled by `function_payload`; also what a graded kernel records) and its cases
FUNCTION_FILE, CASES_FILE = "function.pkl", "cases.pkl"
#: tools an answer reaches through a stand-in for the check's own objects (`served`), never the library
SERVED = {"onnxruntime"}


def _dir_of(module: str) -> list[str]:
    """The folders a package `module` is read from (with NumPy-style bundled libraries, `numpy.libs`)."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        return []
    folder = Path(spec.origin).resolve().parent
    out = [str(folder)]
    libs = folder.parent / f"{module}.libs"
    if libs.is_dir():
        out.append(str(libs.resolve()))
    return out


@functools.lru_cache(maxsize=None)
def _readable(tools: tuple[str, ...]) -> list[str]:
    """Every folder the child may read: the standard library, the tools, cloudpickle and labkit (found once)."""
    folders = {str(p.resolve()) for p in _stdlib()}
    for module in (*(t for t in tools if t not in SERVED), "cloudpickle"):
        folders.update(_dir_of(module))
    return sorted(folders | set(_labkit_tree()[1]))


@functools.lru_cache(maxsize=None)
def _labkit_tree() -> tuple[list[str], list[str]]:
    """labkit's folders (listed: `landlock`'s `listed`) and its code files (read): only its `.py`/`.pyc`, so an
    answer cannot read the course's weights or templates beside them (blind round 12). One walk, found once."""
    root = Path(__file__).resolve().parents[1]
    folders, code = [str(root)], []
    for p in sorted(root.rglob("*")):
        if p.is_dir():
            folders.append(str(p))
        elif p.suffix in (".py", ".pyc"):
            code.append(str(p))
    return folders, code


def function_payload(fn: Any) -> bytes:
    """`fn` pickled by value: a function from a module (the notebook's, the corpus's, a helper's) goes with
    its code, and what it uses from other modules goes by name, for the child to import or not."""
    import cloudpickle

    name = getattr(fn, "__module__", None) or ""
    module = sys.modules.get(name)
    by_value = module is not None and name != "__main__" and name.partition(".")[0] not in sys.stdlib_module_names
    if by_value:
        cloudpickle.register_pickle_by_value(module)
    try:
        return cloudpickle.dumps(fn)
    finally:
        if by_value:
            cloudpickle.unregister_pickle_by_value(module)


def request(folder: str | os.PathLike, fn_payload: bytes, cases: list, tools: Sequence[str], limit: float,
            result: str = "result") -> dict:
    """Write one call's files into `folder` (the function, pickled by `function_payload`, and its cases)
    and return the request a zygote serves: the child confines itself to reading what `tools` need and
    writing `folder`, and leaves the outputs in `folder/result` as plain data (`labkit.plain`)."""
    import pickle

    folder = Path(folder)
    (folder / FUNCTION_FILE).write_bytes(fn_payload)
    (folder / CASES_FILE).write_bytes(pickle.dumps(cases))
    only = only_words(tools)
    return {"dir": str(folder), "result": result, "read": _readable(tuple(tools)), "listed": _labkit_tree()[0],
            "tools": list(tools), "only": only, "limit": limit}


def outputs(folder: Path, n: int, ended: str, limit: float) -> Any:
    """What a served call left in `folder` (its result folder): `plain.Outputs` of `n` cases, each a
    `Raised` when the call failed as a whole. Raises NotAttempted for a stub."""
    from .. import plain
    from .calls import NotAttempted

    def every(message: str) -> plain.Outputs:
        return plain.Outputs([plain.Raised(message)] * n, [""] * n)

    if ended == "timeout":
        return every(f"took longer than {limit:g} s (an endless loop?)")
    status = folder / "status.json"
    if status.is_file():
        state = json.loads(status.read_text())
        if state.get("status") == "not_attempted":
            raise NotAttempted()
        return every(str(state.get("message", ""))[:400])
    try:
        got = plain.load(folder)
    except Exception:
        got = None
    if not isinstance(got, plain.Outputs) or len(got) != n:
        return every(f"stopped the check's separate process (exit status {ended}) before it returned")
    return got


def _shown(label: str, data: bytes) -> None:
    text = data.decode("utf-8", "replace").strip()
    if text:
        cut = text if len(text) <= SHOWN_OUTPUT else "…" + text[-SHOWN_OUTPUT:]
        print(f"[{label}] {cut}")


class Zygote:
    """A clean child that has imported NumPy and the checking code and never runs a learner's code itself:
    each call is a fork of it that confines itself, so a call costs milliseconds instead of a Python
    start and NumPy's import. It dies with the kernel (its stdin closes; on Linux also PR_SET_PDEATHSIG)."""

    def __init__(self, prefix: Sequence[str] = (), cwd: str | None = None) -> None:
        self.proc: subprocess.Popen | None = None
        self.prefix, self.cwd = list(prefix), cwd  # a sandbox to start it in (the grader's), its folder
        self.owner = os.getpid()  # a forked copy of this process must not talk to its parent's zygote
        self.buf = b""

    def _start(self) -> subprocess.Popen:
        if self.owner != os.getpid():  # inherited through a fork: the pipes are the parent's
            self.proc, self.owner = None, os.getpid()
        if self.proc is None or self.proc.poll() is not None:
            self.buf = b""
            env = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "LC_ALL": "C.UTF-8"}
            boot = {"labkit": str(Path(__file__).resolve().parents[1]), "path": _child_path()}
            self.proc = subprocess.Popen([*self.prefix, sys.executable, "-I", "-S", "-c", _BOOT, json.dumps(boot)],
                                         env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, cwd=self.cwd or tempfile.gettempdir())
        return self.proc

    def close(self) -> None:
        if self.proc is not None and self.owner == os.getpid():
            self.proc.kill()
            self.proc.wait()
        self.proc, self.buf = None, b""

    def _line(self, timeout: float) -> bytes | None:
        """The zygote's next line, or None after `timeout` seconds. Read from the pipe itself, never through
        a buffer: "done" often arrives with "pid", and a select() on the pipe would not see it waiting."""
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                raise BrokenPipeError
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def call(self, request: dict, timeout: float) -> str:
        """Run one request in a fork: its exit status ("0", "-9"...), "timeout", or "lost" when the zygote
        died or stopped answering (it is replaced on the next call)."""
        proc = self._start()
        pid = None
        try:
            proc.stdin.write((json.dumps(request) + "\n").encode())
            proc.stdin.flush()
            # the pid line follows the check's own set-up (a served call's sessions are built first, an export
            # that takes long on a loaded machine): the call's own time on top of the start's
            line = (self._line(START_TIMEOUT + timeout) or b"").split()
            if len(line) != 2 or line[0] != b"pid":
                raise BrokenPipeError
            pid = int(line[1])
            got = self._line(timeout)
            late = got is None
            if late:
                os.kill(pid, signal.SIGKILL)
                got = self._line(START_TIMEOUT)
            pid = None
            done = (got or b"").split()
            if len(done) != 2 or done[0] != b"done":
                raise BrokenPipeError
            return "timeout" if late else done[1].decode()
        except (BrokenPipeError, ValueError, OSError):
            self.close()
            return "lost"
        finally:
            if pid is not None:  # interrupted while it ran (the learner pressed stop)
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                self.close()


_ZYGOTE = Zygote()
_LOCK = threading.Lock()


def call_confined(fn: Any, cases: Iterable[tuple], tools: Sequence[str], time_limit: float | None = None) -> Any:
    """`calls.call_each(fn, cases)`, run in a child that can import only `tools` and the standard library.
    Raises NotAttempted for a stub, like `call_each`."""
    from .. import plain
    from .calls import FUNCTION_TIME_LIMIT, call_each

    cases = list(cases)
    limit = FUNCTION_TIME_LIMIT if time_limit is None else time_limit
    if not hasattr(os, "fork"):  # Windows: no zygote to fork; the learner's own check runs in the kernel
        return call_each(fn, cases, limit)
    try:
        payload = function_payload(fn)
    except Exception as e:
        return plain.Outputs([plain.Raised(unsendable(e, tools))] * len(cases), [""] * len(cases))
    with tempfile.TemporaryDirectory(prefix="labkit-confined-") as tmp:
        req = request(tmp, payload, cases, tools, limit)
        with _LOCK:
            ended = _ZYGOTE.call(req, limit * max(1, len(cases)) + SLACK)
        printed = Path(tmp) / "printed"
        if printed.is_file():
            with printed.open("rb") as f:
                _shown("your function printed", f.read(SHOWN_OUTPUT * 4))
        return outputs(Path(tmp) / "result", len(cases), ended, limit)


def only_words(tools: Sequence[str]) -> str:
    """What a confined answer may use, for messages: "NumPy", "NumPy, the check's session"."""
    return ", ".join("NumPy" if t == "numpy" else "the check's session" if t in SERVED else t for t in tools)


def unsendable(e: BaseException, tools: Sequence[str]) -> str:
    """Why a function could not be pickled for its confined call, for the learner."""
    only = only_words(tools)
    why = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    return (f"could not be handed to the check's separate process ({why}): this check runs your function with "
            f"only {only} and Python's standard library, so it may use nothing else from the notebook but plain "
            "values and functions")


def _stdlib() -> list[Path]:
    """The standard library's folders: its Python modules and its extension modules (`lib-dynload`), where the
    base Python has them. Not sysconfig's "platstdlib": in a virtual environment that is the environment's own
    lib/pythonX.Y, with site-packages (every library) inside it."""
    import _struct

    return sorted({Path(os.__file__).resolve().parent, Path(_struct.__file__).resolve().parent}
                  if getattr(_struct, "__file__", None) else {Path(os.__file__).resolve().parent})


def _child_path() -> list[str]:
    """The child's `sys.path`: the standard library's folders, then where the tools are installed."""
    stdlib = [str(p) for p in _stdlib()]
    return stdlib + [p for p in sys.path if p and p not in stdlib and os.path.isdir(p)]


# ---------------------------------------------------------------- the child


_BOOT = """
import json, os, sys, types
config = json.loads(sys.argv[1])
for name, sub in (("labkit", ""), ("labkit.checks", "checks"), ("labkit.material", "material")):
    module = types.ModuleType(name)
    module.__path__ = [os.path.join(config["labkit"], sub)]
    sys.modules[name] = module
sys.path[:] = config["path"]
from labkit.checks.confine import zygote_main
zygote_main()
"""

# Landlock (linux/landlock.h): the rights the child keeps on what it may read and in its own folder
_READ_FILE, _READ_DIR = 1 << 2, 1 << 3
_WRITE = (1 << 1) | (1 << 4) | (1 << 5) | (1 << 7) | (1 << 8)  # write, remove dir/file, make dir/file
_TRUNCATE = 1 << 14


def landlock(read: Sequence[str], write: str, listed: Sequence[str] = ()) -> bool:
    """Restrict this process (and all it starts) to reading `read`, listing the folders `listed` and writing
    `write`, with no program execution, no TCP and no signals or abstract sockets outside itself. False where
    Landlock is missing."""
    import ctypes
    import struct

    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    abi = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # landlock_create_ruleset(VERSION)
    if abi < 1:
        return False
    handled = (1 << 13) - 1 | (1 << 13 if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0) | (1 << 15 if abi >= 5 else 0)
    attr = struct.pack("Q", handled)
    if abi >= 4:
        attr += struct.pack("Q", 0b11)  # bind and connect TCP
    if abi >= 6:
        attr += struct.pack("Q", 0b11)  # abstract unix sockets, signals
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = libc.syscall(444, buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        return False

    def allow(path: str, rights: int) -> None:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        try:
            if not os.path.isdir(path):
                rights &= _READ_FILE | 1 << 1 | _TRUNCATE  # a file takes no folder rights
            rule = ctypes.create_string_buffer(struct.pack("=Qi", rights & handled, fd), 12)
            if libc.syscall(445, ruleset, 1, rule, 0) != 0:  # landlock_add_rule(PATH_BENEATH)
                raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
        finally:
            os.close(fd)

    try:
        for path in read:
            if os.path.exists(path):
                allow(path, _READ_FILE | _READ_DIR)
        for path in listed:
            if os.path.isdir(path):
                allow(path, _READ_DIR)
        allow(write, _READ_FILE | _READ_DIR | _WRITE | _TRUNCATE)
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            return False
        return libc.syscall(446, ruleset, 0) == 0  # landlock_restrict_self
    finally:
        os.close(ruleset)


class _OnlyTools:
    """An import hook that names what is missing: the standard library and the tools import, nothing else.
    (With Landlock this only words the message; without it, it is all there is.)"""

    def __init__(self, allowed: set[str], only: str, served: set[str] = frozenset()):
        self.allowed, self.only, self.served = allowed, only, served

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in self.served:  # only what the stand-in has (`served.stand_in`), already in sys.modules
            from .served import WHERE

            raise ModuleNotFoundError(f"No module named {name!r} in this check: {WHERE}", name=name)
        if top in self.allowed or top in sys.stdlib_module_names:
            return None
        raise ModuleNotFoundError(f"No module named {top!r} in this check: it runs your function with only "
                                  f"{self.only} and Python's standard library (the skill is to do it yourself)",
                                  name=top)


def zygote_main() -> None:
    """The zygote: import what every call needs, then fork once per request line on stdin."""
    import numpy  # noqa: F401  (imported before confinement: its shared libraries load from anywhere)
    import cloudpickle  # noqa: F401

    from . import calls  # noqa: F401

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the learner's stop reaches the kernel, which ends the call
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: die with the kernel
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: what a call leaves behind stays below, to be killed
    from .session_server import Host

    host = Host()  # started on the first call that is given a session (`served`)
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        request = json.loads(line)
        conn = None
        if set(request["tools"]) & SERVED:
            try:
                conn = host.connection((Path(request["dir"]) / CASES_FILE).read_bytes())
            except OSError:
                conn = None
        pid = os.fork()
        if pid == 0:
            try:
                host.forget()
                _serve(request, conn)
            finally:
                os._exit(0)
        if conn is not None:
            conn.close()
        out.write(f"pid {pid}\n".encode())
        out.flush()
        _, code = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(code) < 0 and conn is not None:
            host.stop()  # the call was killed (its time limit): its host may be stuck in one of its requests
        out.write(f"done {os.waitstatus_to_exitcode(code)}\n".encode())
        out.flush()


def _serve(req: dict, conn: Any = None) -> None:
    """In a fork of the zygote: confine, load the cases and the function, and call it on every case (`conn`:
    this call's connection to the zygote's session host, for an exercise whose tools are `SERVED`)."""
    import cloudpickle

    from .. import plain
    from .calls import NotAttempted, call_each

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    folder = Path(req["dir"])
    printed = os.open(folder / "printed", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    os.dup2(printed, 1)
    os.dup2(printed, 2)
    os.close(printed)
    sys.stdin.close()
    os.close(0)
    result = folder / req["result"]

    def status(state: str, message: str = "") -> None:
        result.mkdir(exist_ok=True)
        (result / "status.json").write_text(json.dumps({"status": state, "message": message}))

    tools = set(req["tools"])
    for tool in tools - SERVED:
        __import__(tool)
    served = None
    if tools & SERVED:  # the sessions are the host's; this process gets stand-ins before it confines itself
        from . import served as stand_in

        if conn is None:
            status("error", "the check's session host could not be started")
            return
        served = stand_in.connect(cloudpickle.loads((folder / CASES_FILE).read_bytes()), conn)
    landlock(req["read"], str(folder), req.get("listed", ()))
    sys.meta_path.insert(0, _OnlyTools(tools | {"cloudpickle", "labkit"}, req["only"], tools & SERVED))
    os.chdir(folder)
    os.environ.update({"TMPDIR": str(folder), "HOME": str(folder)})
    signal.alarm(max(1, int(req["limit"])))  # unpickling runs the learner's code too: the default action ends it
    try:
        cases = served if served is not None else cloudpickle.loads((folder / CASES_FILE).read_bytes())
        fn = cloudpickle.loads((folder / FUNCTION_FILE).read_bytes())
    except BaseException as e:
        status("error", f"uses something this check leaves out ({type(e).__name__}: {str(e)[:200]})")
        return
    finally:
        signal.alarm(0)
    try:
        got = call_each(fn, cases, req["limit"])
    except NotAttempted:
        status("not_attempted")
        return
    plain.save(got, result)
    sys.stdout.flush()
