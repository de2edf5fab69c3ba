"""The bubblewrap backend: only the Python environment, learner-side labkit, the verified course data
and the kernel's own folder visible; private /tmp, no network, own PID namespace. A root grader gives
each submission a fresh uid and namespaces; an ordinary user's kernels run as that user."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .base import Sandbox


@dataclass(frozen=True)
class Bubblewrap(Sandbox):
    mode = "sandbox"
    trusted_cache = True
    private_tmp = True

    def kernel_uid(self) -> int | None:
        from labkit import sandbox as primitives

        return primitives.KERNEL_UID_BASE if os.geteuid() == 0 else None

    def isolates(self, uid: int | None) -> bool:
        return uid is not None and os.geteuid() == 0

    def caps_user_tasks(self) -> bool:
        return os.geteuid() != 0  # as root each submission's fresh uid is capped by the pids cgroup

    def own_pid_namespace(self) -> bool:
        return True

    def server_prefix(self, mount: Path, visible: list[Path], hidden: list[Path], uid: int | None) -> list[str]:
        from labkit import sandbox as primitives

        isolate = self.isolates(uid)
        return primitives.bwrap_args(mount, visible, hidden, uid=None if isolate else uid, server=isolate)

    def process_prefix(self, work: Path, visible: list[Path], hidden: list[Path], uid: int | None) -> list[str]:
        from labkit import sandbox as primitives

        return primitives.bwrap_args(work, visible, hidden, uid=uid if os.geteuid() == 0 else None)
