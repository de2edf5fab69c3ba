"""Stage 5: the verdict process — judges the plain data a kernel recorded, never learner code.

The recorded answers are copied (regular files only, bounded), then `python -I -m
labkit.grading.judge SPEC` judges them with the judges of `labkit_judges`, confined by resource
limits (CPU seconds, address space, no core files). It prints one JSON line per exercise; an
exercise whose judging runs past the judge timeout (a model with a huge Loop...) gets the status
`timeout` — a verdict like any other, cached — and the rest are judged by a fresh process.
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
import time
from pathlib import Path

from ..cells import is_exercise_id

MAX_ANSWER_BYTES = 1 << 30
JUDGE_MEMORY = 4 << 30
MAX_LINE = 8 << 20


def copy_answers(src: Path, dest: Path) -> list[str]:
    """Copy recorded answers: real folders and regular files only, no links, bounded size."""
    problems: list[str] = []
    dest.mkdir(parents=True, exist_ok=True)
    if not src.is_dir() or src.is_symlink():
        return problems
    total = 0
    for entry in sorted(os.scandir(src), key=lambda e: e.name)[:200]:
        if not is_exercise_id(entry.name) or not entry.is_dir(follow_symlinks=False):
            continue
        out = dest / entry.name
        out.mkdir()
        for f in sorted(os.scandir(entry.path), key=lambda e: e.name)[:1000]:
            if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", f.name) or f.name.startswith("."):
                continue
            st = os.lstat(f.path)
            if not stat.S_ISREG(st.st_mode):
                problems.append(f"{entry.name}/{f.name} is not a regular file (ignored)")
                continue
            total += st.st_size
            if total > MAX_ANSWER_BYTES:
                problems.append(f"{entry.name}: recorded answers exceed {MAX_ANSWER_BYTES >> 20} MB (ignored)")
                break
            fd = os.open(f.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as fi, open(out / f.name, "wb") as fo:
                shutil.copyfileobj(fi, fo, 1 << 20)
    return problems




def judge_answers(lesson: str, answers: Path, seed: int, ids: list[str], extra: str, timeout: float,
                  data_dir: str) -> dict[str, dict]:
    """{exercise id: Result dict} from confined judge processes; a judge timeout is a `timeout` verdict."""
    from .. import sandbox

    out: dict[str, dict] = {}
    todo = list(ids)
    while todo:
        spec_path = answers.parent / f"judge-{len(out)}.json"
        spec_path.write_text(json.dumps({"lesson": lesson, "answers": str(answers), "seed": seed, "ids": todo,
                                         "extra": extra}))
        env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": os.environ.get("LANG", "C.UTF-8"),
               "HOME": str(answers.parent), "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1",
               "PYTHONDONTWRITEBYTECODE": "1", "LABKIT_CACHE": data_dir}
        limits = {"as": JUDGE_MEMORY, "core": 0, "cpu": int(timeout * len(todo)) + 30}
        cmd = sandbox.launcher_args(limits) + [sys.executable, "-I", "-m", "labkit.grading.judge", str(spec_path)]
        proc = subprocess.Popen(cmd, cwd=answers.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        buf = b""
        deadline = time.monotonic() + timeout + 30  # the first exercise pays the imports
        try:
            while todo:
                left = deadline - time.monotonic()
                ready = select.select([proc.stdout], [], [], max(0.0, left))[0] if left > 0 else []
                if not ready:
                    current = todo.pop(0)
                    out[current] = {"status": "timeout", "message": f"the checker ran past {timeout:g} s on this "
                                                                    "answer and was stopped"}
                    break
                chunk = os.read(proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    err = proc.stderr.read(4000).decode(errors="replace").strip().splitlines()
                    current = todo.pop(0)
                    out[current] = {"status": "error", "message": "the checker crashed on this answer "
                                                                  f"({(err or ['no message'])[-1][:200]})"}
                    break
                buf += chunk
                if len(buf) > MAX_LINE:
                    raise RuntimeError("the checker wrote an oversized verdict")
                while b"\n" in buf and todo:
                    line, buf = buf.split(b"\n", 1)
                    res = json.loads(line)
                    if res.get("exercise") != todo[0]:
                        raise RuntimeError("the checker answered out of order")
                    out[todo.pop(0)] = res
                    deadline = time.monotonic() + timeout
        finally:
            try:
                os.killpg(proc.pid, 9)
            except OSError:
                pass
            proc.wait()
            proc.stdout.close()
            proc.stderr.close()
    return out


def main(spec_path: str) -> int:
    """In the verdict process: judge each exercise from its folder of plain data, one JSON line each."""
    from .. import checks

    spec = json.loads(Path(spec_path).read_text())
    if spec.get("extra"):
        exec(compile(spec["extra"], "<extra tests>", "exec"), {"__name__": "labkit_extra_tests"})
    for id in spec["ids"]:
        ex = checks.get(id)
        try:
            res = checks.judge_saved(ex, Path(spec["answers"]) / id, int(spec["seed"]))
        except Exception as e:  # judge_saved should not raise; be safe anyway
            res = checks.Result(ex.id, ex.title, "error", 0.0, ex.points, f"could not check: {e}", [], ex.hint)
        sys.stdout.write(json.dumps(res.to_dict()) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
