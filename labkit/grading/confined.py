"""Stage 4b: call the confined exercises' functions on their hidden inputs, where the kernel is not.

A confined exercise (`tools=("numpy",)`: the skill is the arithmetic, a library that does it is a
shortcut) must not be answerable by a kernel that computes its outputs with that library: so the
kernel never sees its hidden inputs (`batch.prepare_inputs` keeps them in `inputs_folder`, which no
kernel mounts or can open), and records the function itself (`checks.collect`). After the kernel is
gone, the grader starts a zygote in the kernel's own sandbox (`Sandbox.process_prefix`: its uid, no
capability, its view of the files) and each call confines itself further (`checks.confine`: Landlock,
NumPy and the standard library only). What comes back is plain data, copied without following a link
(`judge.copy_answers`), and replaces the recorded function for the verdict process.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ..checks.confine import Zygote

if TYPE_CHECKING:
    from .forkserver import SandboxSpec
    from .lesson import ExerciseInfo


def inputs_folder(kernel_inputs: Path) -> Path:
    """Where the confined exercises' hidden inputs are kept: beside the kernels' inputs, root only."""
    return Path(kernel_inputs).parent / "confined-inputs"


def call_answers(judge_dir: Path, exercises: Sequence[ExerciseInfo], inputs: Path, spec: SandboxSpec,
                 uid: int | None) -> None:
    """Replace each recorded confined function in `judge_dir/answers/<id>` with its outputs on the hidden
    inputs in `inputs/<id>` (or with why there are none). The calls' folder sits beside `judge_dir`, in the
    batch folder a kernel's uid can walk (`Sandbox.tmp_root_mode`)."""
    from .. import plain
    from ..checks.collect import FUNCTION_FILE, UNSENDABLE_FILE

    answers = judge_dir / "answers"
    todo = [ex for ex in exercises if ex.tools and any((answers / ex.id / f).is_file()
                                                        for f in (FUNCTION_FILE, UNSENDABLE_FILE))]
    if not todo:
        return
    from .. import sandbox

    work = Path(tempfile.mkdtemp(prefix="lkc", dir=judge_dir.parent))
    os.chmod(work, 0o755)  # bubblewrap, as root with no capability, must enter it; each call's folder is 0700
    if uid is not None:
        os.chown(work, uid, uid)
    visible = [Path(p) for p in spec.visible]
    prefix = sandbox.launcher_args({k: v for k, v in spec.limits.items() if k != "nproc"})
    prefix += spec.sandbox.process_prefix(work, visible, [Path(p) for p in spec.hidden], uid)
    zygote = Zygote(prefix, cwd=str(work))
    try:
        for ex in todo:
            call_recorded(zygote, work, answers / ex.id, ex.id, ex.tools, plain.load_inputs(inputs / ex.id), uid)
    finally:
        if zygote.proc is not None:  # what a call left running (the zygote reaps orphans: it is their subreaper)
            for pid in sandbox.descendants(zygote.proc.pid):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        zygote.close()
        shutil.rmtree(work, ignore_errors=True)


def call_recorded(zygote: Zygote, work: Path, answer: Path, id: str, tools: Sequence[str], cases: list,
                  uid: int | None = None) -> None:
    """Replace the function of exercise `id` recorded in the folder `answer` (`collect.FUNCTION_FILE`) with
    its outputs on `cases`, called by `zygote` in a folder of its own under `work` (owned by `uid`), or with
    why there are none. Nothing the call leaves is followed or trusted: it is copied as `copy_answers` does."""
    from .. import plain
    from ..checks.calls import FUNCTION_TIME_LIMIT, NotAttempted
    from ..checks.collect import FUNCTION_FILE, UNSENDABLE_FILE
    from ..checks.confine import CASES_FILE, SLACK, outputs, request
    from .judge import copy_answers

    unsent = answer / UNSENDABLE_FILE
    if unsent.is_file():  # the kernel could not pickle it: every case says why, as the panel does
        try:
            why = str(json.loads(unsent.read_text()))[:400]
        except ValueError:
            why = "could not be handed to the check's separate process"
        shutil.rmtree(answer)
        answer.mkdir()
        plain.save(plain.Outputs([plain.Raised(why)] * len(cases), [""] * len(cases)), answer)
        return
    name = id
    folder = work / name
    folder.mkdir(mode=0o700)
    req = request(folder, (answer / FUNCTION_FILE).read_bytes(), cases, tools, FUNCTION_TIME_LIMIT, result=name)
    if uid is not None:
        for p in (folder, folder / FUNCTION_FILE, folder / CASES_FILE):
            os.chown(p, uid, uid)
    ended = zygote.call(req, FUNCTION_TIME_LIMIT * max(1, len(cases)) + SLACK)
    staged = work / f"{name}.copied"
    copy_answers(folder, staged)  # regular files only, no link followed, bounded
    shutil.rmtree(answer)
    answer.mkdir()
    try:
        plain.save(outputs(staged / name, len(cases), ended, FUNCTION_TIME_LIMIT), answer)
    except NotAttempted:
        (answer / "status.json").write_text('{"status": "not_attempted", "message": ""}')
    except Exception as e:  # the grader's own failure, said as such
        (answer / "status.json").write_text(
            '{"status": "error", "message": %s}' % _json(f"the grader could not call your function: {e}"))


def _json(text: str) -> str:
    import json

    return json.dumps(text[:300])

