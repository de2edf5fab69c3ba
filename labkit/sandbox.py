"""Confinement for the grader's kernels: bubblewrap, resource limits, a pids cgroup, cleanup.

Two layers, the second always in force:

* bubblewrap (`bwrap`, Linux): the kernel sees the filesystem read-only except its own working
  directory, a private `/tmp`, no network, its own PID namespace, and dies with the grader. The
  grader's output folder and the grader's home directory are hidden (empty).
* this file run as a launcher (`python -I -S sandbox.py SPEC -- CMD...`), started before bwrap:
  joins a pids cgroup when the grader runs as root (RLIMIT_NPROC does not bind root), sets
  resource limits (address space, processes, file size, no core files, open files, CPU seconds),
  arranges to die with its parent, then `exec`s bwrap or the kernel. After each submission the
  grader kills everything in the cgroup, the kernel's process group and every process below the
  grading worker (which is a child subreaper, so daemonized processes cannot slip away).

The launcher part uses only the standard library and is run with `-I -S` so that nothing in the
kernel's working directory can be imported before the limits are in place.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

GiB = 1 << 30
#: default limits for one kernel (the lesson budget is 1 GB peak; torch reserves address space)
DEFAULT_LIMITS = {"as": 3 * GiB, "fsize": 1 * GiB, "nproc": 256, "nofile": 1024, "core": 0, "cpu": 1800}
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
#: kernels of a root grader run as uid KERNEL_UID_BASE + a per-kernel number (no passwd entry needed)
KERNEL_UID_BASE = 1_500_000


# ---------------------------------------------------------------- the launcher (runs first, then execs)


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except Exception:
        return False


def _apply_limits(limits: dict) -> None:
    import resource

    names = {"as": "RLIMIT_AS", "fsize": "RLIMIT_FSIZE", "nproc": "RLIMIT_NPROC", "nofile": "RLIMIT_NOFILE",
             "core": "RLIMIT_CORE", "cpu": "RLIMIT_CPU"}
    for key, value in limits.items():
        which = getattr(resource, names.get(key, ""), None)
        if which is None or value is None:
            continue
        soft, hard = resource.getrlimit(which)
        value = int(value)
        if hard != resource.RLIM_INFINITY and value > hard and os.geteuid() != 0:
            value = hard
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):  # e.g. RLIMIT_AS on macOS: keep what the system allows
            try:
                resource.setrlimit(which, (min(value, soft) if soft != resource.RLIM_INFINITY else value, hard))
            except (ValueError, OSError):
                pass


def launch(argv: list[str]) -> None:
    """`sandbox.py '{"limits": {...}, "cgroup": DIR|null}' -- cmd...`: confine this process, exec cmd."""
    spec = json.loads(argv[0])
    cmd = argv[argv.index("--") + 1:]
    os.environ.pop("JPY_PARENT_PID", None)  # ipykernel's parent poller misreads a PID namespace
    cgroup = spec.get("cgroup")
    if cgroup:  # join the kernel's pids cgroup first: everything started from here stays in it
        with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    _apply_limits(spec.get("limits") or {})
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails with EFBIG, no kill
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)        # the kernel dies with the grader
    os.execvp(cmd[0], cmd)


# ---------------------------------------------------------------- the grader's side


_BWRAP_STATE: dict[str, object] = {}


def bwrap_path() -> str | None:
    return shutil.which("bwrap") or (os.path.exists("/usr/bin/bwrap") and "/usr/bin/bwrap") or None


def python_paths() -> list[Path]:
    """The folders a kernel needs to see: this Python, its base installation, its executable."""
    return sorted({Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(),
                   Path(sys.executable).resolve().parent, Path(sys.executable).parent.absolute()}, key=str)


def bwrap_status() -> tuple[bool, str]:
    """(usable, reason): is bubblewrap installed, allowed here, and not switched off?"""
    if os.environ.get("LABKIT_NO_BWRAP", "") not in ("", "0"):
        return False, "bubblewrap switched off (LABKIT_NO_BWRAP is set)"
    if not sys.platform.startswith("linux"):
        return False, f"bubblewrap needs Linux (this is {sys.platform})"
    if "status" in _BWRAP_STATE:
        return _BWRAP_STATE["status"]  # type: ignore[return-value]
    path = bwrap_path()
    if not path:
        result = (False, "bubblewrap is not installed (Debian/Ubuntu: apt install bubblewrap)")
    else:
        import tempfile

        try:
            with tempfile.TemporaryDirectory(prefix="lkgprobe") as tmp:  # the very flags used for kernels
                uid = KERNEL_UID_BASE if os.geteuid() == 0 else None
                if uid is not None:
                    os.chown(tmp, uid, uid)
                    os.chmod(tmp, 0o711)  # bwrap, without capabilities, must be able to enter it
                probe = bwrap_args(Path(tmp), python_paths(), uid=uid) + [
                    sys.executable, "-I", "-S", "-c", "import os; assert os.getuid() != 0 or %r is None" % uid]
                r = subprocess.run(probe, capture_output=True, text=True, timeout=60)
            ok = r.returncode == 0
            why = "" if ok else (r.stderr.strip().splitlines() or ["exit code %d" % r.returncode])[-1]
        except Exception as e:  # pragma: no cover - depends on the machine
            ok, why = False, str(e)
        result = (True, f"bubblewrap {path}") if ok else (False, f"bubblewrap failed here: {why}")
    _BWRAP_STATE["status"] = result
    return result


def _under(path: Path, parent: Path) -> bool:
    try:
        path.relative_to(parent)
        return True
    except ValueError:
        return False


def bwrap_args(workdir: Path, visible: list[Path], hidden: list[Path] = (), uid: int | None = None,
               tmp_size: int = 512 << 20, server: bool = False) -> list[str]:
    """The bwrap prefix: an empty root with only the system (/usr, /etc...), the `visible` folders
    (read-only: Python, learner-side labkit, test inputs, course data) and `workdir` (writable);
    `hidden` folders inside a visible one become empty. Private /tmp, no network, own PIDs, no /run.

    With `uid` (a root grader), the command runs as that unprivileged uid: bwrap keeps only
    CAP_SETUID/CAP_SETGID, and `setpriv` drops to `uid` with no capabilities and no new privileges.
    With `server` (a root grader's kernel server), the command keeps uid 0 with only CAP_SETUID,
    CAP_SETGID and CAP_SYS_ADMIN: what each forked kernel needs to get its own mount and IPC
    namespaces, fresh /tmp and /dev/shm, and its own uid, before it drops every capability."""
    args = [bwrap_path() or "bwrap", "--dev", "/dev", "--proc", "/proc",
            "--perms", "1777", "--size", str(tmp_size), "--tmpfs", "/tmp",
            "--perms", "1777", "--size", str(tmp_size), "--tmpfs", "/dev/shm"]  # writable, like a real /tmp
    for name in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "sys"):
        top = Path("/") / name
        if top.is_symlink():
            args += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            args += ["--ro-bind", str(top), str(top)]
    shown = sorted({p.resolve() for p in visible if p.exists()} | {workdir}, key=lambda p: len(p.parts))
    parents = sorted({a for v in shown for a in v.parents if a != Path("/")}, key=lambda p: len(p.parts))
    for a in parents:  # bwrap would create them 0700: the unprivileged kernel must be able to walk them
        if not (a.is_symlink() or any(_under(a, v) for v in shown)):
            args += ["--perms", "0755", "--dir", str(a)]
    for v in shown:
        if v != workdir:
            args += ["--ro-bind", str(v), str(v)]
    for h in hidden:
        if h.is_dir() and any(_under(h, v) for v in visible):
            args += ["--size", str(1 << 16), "--tmpfs", str(h)]
    args += ["--bind", str(workdir), str(workdir),
             "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
             "--die-with-parent", "--new-session", "--chdir", str(workdir)]
    if os.geteuid() == 0:  # bwrap run by root keeps every capability unless told
        args += ["--cap-drop", "ALL"]
        if server:
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SYS_ADMIN"]
        elif uid is not None:
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--",
                     shutil.which("setpriv") or "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}",
                     "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]
    return args + ["--"]


def drop_to(uid: int) -> list[str]:
    """The prefix that runs a command as `uid` with no capabilities and no new privileges (no bwrap)."""
    return [shutil.which("setpriv") or "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]


def launcher_args(limits: dict, cgroup: str | None = None) -> list[str]:
    """The launcher prefix: `python -I -S sandbox.py SPEC --` (run outside bwrap, before it)."""
    spec = json.dumps({"limits": limits, "cgroup": cgroup})
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), spec, "--"]


CLONE_NEWNS, CLONE_NEWIPC = 0x00020000, 0x08000000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 2, 4, 1 << 14, 1 << 18
MNT_DETACH = 2


def _libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def unshare(flags: int) -> None:
    """unshare(2); OSError when refused."""
    import ctypes

    if _libc().unshare(flags) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"unshare: {os.strerror(e)}")


def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    """mount(2); OSError when refused."""
    import ctypes

    r = _libc().mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                      data.encode() if data else None)
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"mount {target}: {os.strerror(e)}")


def umount(target: str) -> bool:
    """Detach the mount at `target` (lazily); True when done."""
    return _libc().umount2(target.encode(), MNT_DETACH) == 0


def private_mounts() -> bool:
    """This process gets its own mount namespace, nothing propagating to or from the machine's (a root
    grading worker: its slots are tmpfs mounts that vanish with it). Needs root and one thread."""
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        return False
    try:
        unshare(CLONE_NEWNS)
        mount("none", "/", None, MS_REC | MS_PRIVATE)
        return True
    except OSError:
        return False


def make_subreaper() -> bool:
    """Orphans of this process's descendants get reparented here (so they can be found and killed)."""
    return sys.platform.startswith("linux") and _prctl(PR_SET_CHILD_SUBREAPER, 1)


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def descendants(pid: int) -> list[int]:
    """Every live process below `pid` (Linux /proc; empty elsewhere)."""
    if not os.path.isdir("/proc"):
        return []
    kids, out, todo = _children_map(), [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


class PidsCgroup:
    """A pids cgroup for one kernel (root only, cgroup v1 or v2): caps its task count, lists them all.

    A process cannot leave it without privileges (and inside bwrap /sys is read-only), so killing
    everything listed in it ends everything the kernel started, fork bombs and daemons included.
    """

    def __init__(self, path: Path):
        self.path = path

    @classmethod
    def create(cls, name: str, max_tasks: int) -> "PidsCgroup | None":
        if os.geteuid() != 0 or not sys.platform.startswith("linux"):
            return None
        v1 = Path("/sys/fs/cgroup/pids")
        v2 = Path("/sys/fs/cgroup")
        for base in (v1, v2):
            if base == v2:
                try:
                    if "pids" not in (v2 / "cgroup.subtree_control").read_text().split():
                        continue
                except OSError:
                    continue
            elif not (base / "cgroup.procs").exists():
                continue
            path = base / name
            try:
                path.mkdir(exist_ok=True)
                (path / "pids.max").write_text(str(int(max_tasks)))
                return cls(path)
            except OSError:
                try:
                    path.rmdir()
                except OSError:
                    pass
        return None

    def pids(self) -> list[int]:
        try:
            return [int(x) for x in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def kill_all(self) -> None:
        for _ in range(500):
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            _reap(pids)
            time.sleep(0.01)

    def remove(self) -> None:
        self.kill_all()
        for _ in range(100):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:  # tasks not reaped yet
                _reap(self.pids())
                time.sleep(0.05)


def process_limit() -> tuple[bool, str]:
    """(enforced, how): can this grader cap the number of processes a kernel starts?"""
    if os.geteuid() != 0:
        return True, "RLIMIT_NPROC"
    cg = PidsCgroup.create(f"labkit-probe-{os.getpid()}-{os.urandom(3).hex()}", 16)
    if cg is None:
        return False, "NOT enforced: running as root (RLIMIT_NPROC does not bind root) without a pids cgroup"
    cg.remove()
    return True, "a pids cgroup (root)"


def kill_tree(root_pid: int | None = None, pgid: int | None = None, spare: frozenset[int] = frozenset()) -> int:
    """SIGKILL a process group and every descendant of `root_pid` (default: this process).

    Repeats until nothing is left (a fork bomb keeps forking while it is being killed) and reaps
    the orphans reparented to this process (see `make_subreaper`). `spare` processes (the worker's
    own verdict process) and their children are left alone. Returns how many were signalled.
    """
    root_pid = os.getpid() if root_pid is None else root_pid
    killed = 0
    for _ in range(500):
        victims = set(descendants(root_pid)) - set(spare)
        for keep in spare:
            victims -= set(descendants(keep))
        if pgid:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
        _reap(victims)
        if not victims:
            break
        time.sleep(0.01)
    return killed


def _reap(pids) -> None:
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except (ChildProcessError, OSError):
            pass


def _uids(pid: str) -> set[int]:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Uid:"):
                    return {int(x) for x in line.split()[1:]}
    except (OSError, ValueError):
        pass
    return set()


def uid_tasks(uid: int, live_only: bool = False) -> list[int]:
    """Every process (thread group) with `uid` among its uids, zombies included: a zombie leader
    whose other threads still run (its main thread left with the raw `exit` system call) counts.
    With `live_only`, only groups with a task that is not a zombie."""
    out = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit() and uid in _uids(entry):
            if live_only and not _has_live_task(entry):
                continue
            out.append(int(entry))
    return out


def _has_live_task(pid: str) -> bool:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
            if stat[stat.rindex(")") + 2:].split()[0] not in "ZX":
                return True
        except (OSError, ValueError, IndexError):
            continue
    return False


def kill_uid(uid: int, rounds: int = 500) -> bool:
    """SIGKILL every process of `uid` (zombie leaders included: the signal reaches their live
    threads) until none has a live task. True when none is left."""
    if uid in (0, os.getuid()):
        raise ValueError(f"refusing to kill every process of uid {uid}")
    for _ in range(rounds):
        victims = uid_tasks(uid)
        live = [p for p in victims if _has_live_task(str(p))]
        if not live:
            return True
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap(victims)
        time.sleep(0.005)
    return not uid_tasks(uid, live_only=True)


#: where a root grader's uid claims live (flock'ed files; machine-wide, never visible to a kernel)
UID_LOCKS = "/run/labkit-grade-uids"
UID_RANGE = 1 << 30


class UidClaim:
    """A fresh unprivileged uid for one submission, claimed machine-wide (an flock'ed file per uid,
    so no other worker or concurrent grader can hold the same uid) and free (no process has it)."""

    def __init__(self, uid: int, fd: int, path: str):
        self.uid, self.fd, self.path = uid, fd, path

    @classmethod
    def claim(cls, base: int = KERNEL_UID_BASE) -> "UidClaim":
        import fcntl
        import random

        folder = UID_LOCKS if os.path.isdir(os.path.dirname(UID_LOCKS)) else os.path.join("/tmp", "labkit-grade-uids")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        rng = random.SystemRandom()
        for _ in range(100):
            uid = base + rng.randrange(UID_RANGE)
            path = os.path.join(folder, str(uid))
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if os.fstat(fd).st_ino != os.stat(path, follow_symlinks=False).st_ino:
                    raise OSError("lock file replaced")
            except OSError:
                os.close(fd)
                continue
            if uid_tasks(uid):  # left by a grader that was killed outright: not free
                os.close(fd)
                continue
            return cls(uid, fd, path)
        raise OSError("could not claim a free uid for a kernel")

    def release(self) -> None:
        """Give the uid back (only once no process of it is left)."""
        if self.fd < 0:
            return
        try:
            os.unlink(self.path)
        except OSError:
            pass
        os.close(self.fd)
        self.fd = -1


def remove_tree(path: str | os.PathLike, max_entries: int | None = None, max_seconds: float | None = None) -> bool:
    """Remove `path` and everything below it without following a link or leaving the folder, for
    any depth, names, permissions, fifos and sockets: iterative, file-descriptor based (openat with
    O_NOFOLLOW, unlinkat), at most a few dozen descriptors however deep the tree (deeper folders are
    moved up first). Bounded by `max_entries` and `max_seconds` when given. True when `path` is gone.
    Never raises for what is inside the tree. `path` itself must be reachable through trusted folders."""
    path = os.path.abspath(os.fspath(path))
    parent, name = os.path.split(path)
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        pfd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return not os.path.lexists(path)
    stack: list[tuple[int, str]] = []   # (fd of a folder, its name in the folder above)
    count, moved, root = 0, 0, os.geteuid() == 0
    try:
        try:
            top = os.open(name, flags, dir_fd=pfd)
        except FileNotFoundError:
            return True
        except OSError:  # a link, a file, or a folder we may not read
            done = _remove_entry(pfd, name, root)
            if done is not None:
                return done
            try:
                top = os.open(name, flags, dir_fd=pfd)
            except OSError:
                return False
        stack.append((top, name))
        while stack:
            if (deadline is not None and time.monotonic() > deadline) or \
                    (max_entries is not None and count > max_entries):
                return False
            fd = stack[-1][0]
            try:
                with os.scandir(fd) as it:
                    names = [e.name for _, e in zip(range(1000), it)]
            except OSError:
                names = []
            descended = False
            for n in names:
                count += 1
                try:
                    sub = os.open(n, flags, dir_fd=fd)
                except FileNotFoundError:
                    continue
                except OSError:
                    done = _remove_entry(fd, n, root)
                    if done is None:  # a folder of ours made readable: open it again
                        try:
                            sub = os.open(n, flags, dir_fd=fd)
                        except OSError:
                            return False
                    elif not done:
                        return False
                    else:
                        continue
                if len(stack) >= 32:  # too deep for one descriptor per level: move it to the top
                    os.close(sub)
                    moved += 1
                    try:
                        os.rename(n, f".deep{moved}-{os.getpid()}", src_dir_fd=fd, dst_dir_fd=stack[0][0])
                    except OSError:
                        return False
                    continue
                stack.append((sub, n))
                descended = True
                break
            if descended or names:
                continue
            fd, n = stack.pop()
            os.close(fd)
            try:
                os.rmdir(n, dir_fd=stack[-1][0] if stack else pfd)
            except FileNotFoundError:
                pass
            except OSError:
                return False
        return True
    finally:
        for fd, _ in stack:
            os.close(fd)
        os.close(pfd)


def _remove_entry(dir_fd: int, name: str, root: bool) -> bool | None:
    """Remove a non-folder entry: True when gone, False when it cannot be; None for a folder of our
    own uid that we could not read and made readable (the caller opens it again)."""
    import stat as _stat

    try:
        os.unlink(name, dir_fd=dir_fd)
        return True
    except FileNotFoundError:
        return True
    except IsADirectoryError:
        pass
    except OSError:
        return False
    if root:  # root reads any folder: an unreadable one is something else
        return False
    try:
        if _stat.S_ISDIR(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            os.chmod(name, 0o700, dir_fd=dir_fd)
            return None
    except OSError:
        pass
    return False


def user_task_count() -> int:
    """Threads and processes of this user (RLIMIT_NPROC counts them all, not per process)."""
    me, total = os.getuid(), 0
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                text = f.read()
            uid = int(text.split("\nUid:", 1)[1].split()[0])
            threads = int(text.split("\nThreads:", 1)[1].split()[0])
        except (OSError, IndexError, ValueError):
            continue
        if uid == me:
            total += threads
    return total


if __name__ == "__main__":
    launch(sys.argv[1:])
