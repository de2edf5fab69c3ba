"""The sandbox: the protection modes as backends of one interface (`Sandbox`, in `base`).

* `bubblewrap`   — `sandbox`: bubblewrap's view, namespaces, a fresh uid per submission as root.
* `unprivileged` — `unprivileged-user`: no bubblewrap (Gradescope's container); kernels as one
  unprivileged uid, answers readable by root only.
* `none`         — `no-sandbox`: resource limits only, never as root.

`select` decides the mode from the command line and what this machine can do; `for_mode` gives a
cluster node the mode its client decided, or refuses. The system calls are in `labkit.sandbox`.
"""
from __future__ import annotations

import os

from ..options import GradeError
from .base import Sandbox, verdict_server_command
from .bubblewrap import Bubblewrap
from .none import NOT_GUARANTEED, NoSandbox
from .unprivileged import NOT_GUARANTEED_UNPRIVILEGED, UnprivilegedUser

__all__ = ["Sandbox", "Bubblewrap", "UnprivilegedUser", "NoSandbox", "BACKENDS", "MODES", "NOT_GUARANTEED",
           "NOT_GUARANTEED_UNPRIVILEGED", "select", "for_mode", "verdict_server_command"]

#: each protection mode, as results files, the cache key and docs/instructors.md name it, to its backend
BACKENDS: dict[str, type[Sandbox]] = {b.mode: b for b in (Bubblewrap, UnprivilegedUser, NoSandbox)}
MODES = tuple(BACKENDS)


def select(no_sandbox: bool, unprivileged_user: bool = False) -> Sandbox:
    """Bubblewrap when usable; otherwise refuse, unless --no-sandbox and not root, or
    --unprivileged-user as root (kernels as an unprivileged uid, answers root-only: Gradescope)."""
    from labkit import sandbox as primitives

    usable, reason = primitives.bwrap_status()
    enforced, how = primitives.process_limit()
    limits = f"resource limits (address space, processes via {how}, file size, no core dumps)"
    if unprivileged_user:  # asked for explicitly (Gradescope's container, where bubblewrap cannot run)
        if os.geteuid() != 0:
            raise GradeError("--unprivileged-user needs a root grader (it runs each kernel as another, unprivileged uid)")
        return UnprivilegedUser(f"NO BUBBLEWRAP (--unprivileged-user): each kernel runs as an unprivileged uid "
                                f"with no capabilities; answers, judges and results readable by root "
                                f"only + {limits}")
    if usable:
        who = "a fresh unprivileged uid, namespaces, /tmp and folder per submission" if os.geteuid() == 0 else "this unprivileged user"
        return Bubblewrap(f"bubblewrap sandbox (only the Python environment, learner-side labkit, "
                          f"verified course data and its own folder visible; private /tmp, no network, "
                          f"own PID namespace; {who}) + {limits}")
    if not no_sandbox:
        raise GradeError(f"no usable sandbox: {reason}. Install bubblewrap (Debian/Ubuntu: apt install bubblewrap), "
                         "or pass --no-sandbox to grade without it (not as root), knowing that then: "
                         + "; ".join(NOT_GUARANTEED) + ".")
    if os.geteuid() == 0:
        raise GradeError(f"no usable sandbox ({reason}), and labkit grade never runs submissions as root without "
                         "one: install bubblewrap, or run labkit grade as an ordinary user with --no-sandbox")
    return NoSandbox(f"NO SANDBOX (--no-sandbox; {reason}): {limits} + killing the kernel's "
                     "process tree only")


def for_mode(mode: str) -> Sandbox:
    """The sandbox of `mode` on this machine (a cluster node grading for a client); GradeError when
    this machine would grade under another mode."""
    sandbox = select(mode == "no-sandbox", mode == "unprivileged-user")
    if sandbox.mode != mode:
        raise GradeError(f"this node grades with protection {sandbox.mode!r}, the client asked for {mode!r}")
    return sandbox
