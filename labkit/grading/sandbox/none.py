"""The no-sandbox backend (`--no-sandbox`, never as root): resource limits and killing the kernel's
process tree only; kernels run as the grader's own user and can reach what it can."""
from __future__ import annotations

from dataclasses import dataclass

from .base import Sandbox

#: what an instructor loses without bubblewrap (printed, and in docs/instructors.md)
NOT_GUARANTEED = (
    "a submission can read every file this user can: solutions/, labkit_judges (references, quiz keys), "
    "the output folder with its cache key, other submissions",
    "a submission can write wherever this user can (the course cache, the output folder, other submissions)",
    "a submission can signal this user's other processes (other kernels, the grader)",
    "cached grades are therefore not reused: every submission is graded again",
)


@dataclass(frozen=True)
class NoSandbox(Sandbox):
    mode = "no-sandbox"
    not_guaranteed = NOT_GUARANTEED
