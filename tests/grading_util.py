"""Helpers shared by the grading attack tests: hostile notebooks and the daemons they leave."""
from __future__ import annotations

import json
import site
import sys
from pathlib import Path


def with_answers(notebook: Path, answers: dict[str, str]) -> dict:
    """`notebook` with the source of each `answer:<id>` cell replaced by `answers[id]`."""
    nb = json.loads(notebook.read_text())
    for c in nb["cells"]:
        for ex, src in answers.items():
            if f"answer:{ex}" in c.get("metadata", {}).get("tags", []):
                c["source"] = src
    return nb


def sleepers(mark: str) -> list[int]:
    """Pids of the `sleep <mark>` daemons a hostile submission started."""
    out = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and (d / "cmdline").read_bytes().split(b"\0")[:2] == [b"sleep", mark.encode()]:
                out.append(int(d.name))
        except OSError:
            pass
    return out


def unprivileged_python_problem() -> str:
    """'' when the kernels' uid of `--unprivileged-user` can read this Python environment; else why not
    (a virtualenv inside a private folder: no code can make that run as another uid; the grader
    refuses it in one line, `labkit.grading.sandbox.unprivileged`)."""
    from labkit import sandbox
    from labkit.grading.sandbox.unprivileged import unreachable

    envs = [Path(p) for p in site.getsitepackages() if Path(p).is_dir()]
    missing = unreachable(sandbox.KERNEL_UID_BASE, envs)
    return "" if missing == [] else \
        f"the kernels' uid cannot read this Python environment ({', '.join(map(str, missing or [sys.executable]))})"
