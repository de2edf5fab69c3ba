"""Gradescope autograder bundle: the same grader, run inside Gradescope's container.

`labkit grades gradescope-autograder LESSON --out autograder.zip` writes a zip with

* `setup.sh` — run once by Gradescope when the image is built: installs the course (this package, the
  lesson's solution, the judges) into `/opt/labkit`, then makes the answers readable by root only;
* `run_autograder` — run (as root) for every submission: grades the notebook found in
  `/autograder/submission` with `labkit grade` and writes `/autograder/results/results.json` in
  Gradescope's format (score, one test per exercise, the protection mode in `extra_data`);
* `course/` and `labkit-autograder.json` (the lesson).

Protection inside Gradescope's container: bubblewrap when it can run there (then exactly as on the
instructor's machine); otherwise each kernel runs as an unprivileged uid with no capabilities
(`--unprivileged-user`), and the reference answers (the solution, the judges with their quiz keys),
the secret seed, the work folder and the results are readable by root only. What that mode does not
give is in `sandbox.NOT_GUARANTEED_UNPRIVILEGED` and docs/instructors.md.

For a local test the root can be moved: `LABKIT_AUTOGRADER_ROOT=/tmp/x run_autograder`
(`LABKIT_AUTOGRADER_PYTHON` names the Python with labkit installed; `LABKIT_AUTOGRADER_PROTECTION`
forces `sandbox` or `unprivileged-user`).
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

CONFIG = "labkit-autograder.json"
VENV = "/opt/labkit"

SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope: runs once, as root, when the autograder image is built.
set -euo pipefail
SRC="$(cd "$(dirname "$0")" && pwd)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q python3 python3-venv python3-pip bubblewrap util-linux
python3 -m venv {venv}
# CPU-only torch first (the course never uses a GPU; the CUDA wheels are gigabytes), at the course's pin
TORCH="$(sed -n 's/.*"torch==\([^"]*\)".*/\1/p' "$SRC/course/pyproject.toml")"
{venv}/bin/pip install -q --index-url https://download.pytorch.org/whl/cpu "torch==$TORCH"
{venv}/bin/pip install -q "$SRC/course"
# the answers are readable by root only: the solution, the judges (references, quiz keys), this folder
SITE="$({venv}/bin/python -c 'import labkit_judges, os; print(os.path.dirname(labkit_judges.__file__))')"
chown -R root:root "$SITE" "$SRC"
chmod -R go-rwx "$SITE" "$SRC"
{venv}/bin/python -P -m labkit.grading.gradescope check-setup
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope: runs as root for every submission; writes /autograder/results/results.json.
set -u
ROOT="${{LABKIT_AUTOGRADER_ROOT:-/autograder}}"
PY="${{LABKIT_AUTOGRADER_PYTHON:-{venv}/bin/python}}"
exec "$PY" -P -m labkit.grading.gradescope run --root "$ROOT"
"""


def _copytree(src: Path, zf: zipfile.ZipFile, arc: str) -> None:
    for root, dirs, files in os.walk(src, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for f in sorted(files):
            p = Path(root) / f
            if p.is_symlink() or p.suffix in (".pyc", ".onnx"):
                continue
            zf.write(p, f"{arc}/{p.relative_to(src)}")


def _executable(zf: zipfile.ZipFile, name: str, text: str) -> None:
    info = zipfile.ZipInfo(name, date_time=time.localtime()[:6])
    info.external_attr = (stat.S_IFREG | 0o755) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, text)


def build_bundle(lesson: str, out: Path, solutions: Path | None = None) -> Path:
    """Write the autograder zip for one lesson; returns its path."""
    from .lesson import resolve_lesson
    from ..fsutil import course_root

    sol = resolve_lesson(lesson, solutions)
    import labkit
    import labkit_judges

    pkg = Path(labkit.__file__).resolve().parent
    judges = Path(labkit_judges.__file__).resolve().parent
    root = pkg.parent
    try:
        root = course_root()
    except FileNotFoundError:
        pass
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        _executable(zf, "setup.sh", SETUP_SH.format(venv=VENV))
        _executable(zf, "run_autograder", RUN_AUTOGRADER.format(venv=VENV))
        zf.writestr(CONFIG, json.dumps({"lesson": sol.stem, "solution": f"course/solutions/{sol.name}"}, indent=1))
        for name in ("pyproject.toml", "README.md"):
            if (root / name).is_file():
                zf.write(root / name, f"course/{name}")
        _copytree(pkg, zf, "course/labkit")
        _copytree(judges, zf, "course/labkit_judges")
        zf.write(sol, f"course/solutions/{sol.name}")
    os.replace(tmp, out)
    return out


# ---------------------------------------------------------------- inside the container


def _private(path: Path) -> bool:
    """True when no one but the owner (root) can read or enter `path` or a folder above it."""
    p = path.resolve()
    for q in [p, *p.parents]:
        try:
            st = q.stat()
        except OSError:
            return False
        if st.st_uid == 0 and not st.st_mode & 0o077 and q != Path("/"):
            return True
    return False


def answers_private(source: Path) -> dict[str, bool]:
    """Which secrets only root can read (recorded in the results)."""
    import labkit_judges

    return {"solution": _private(source), "judges": _private(Path(labkit_judges.__file__).resolve().parent)}


def pick_notebook(folder: Path, lesson: str) -> tuple[Path | None, list[str]]:
    """The notebook to grade among what the learner uploaded: the only one, else the one named like the
    lesson, else the newest. Links are not followed."""
    found = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found += [Path(root) / f for f in files if f.endswith(".ipynb") and not (Path(root) / f).is_symlink()]
    notes = []
    if not found:
        return None, ["no .ipynb file in the submission"]
    if len(found) > 1:
        named = [p for p in found if lesson in p.name]
        pick = max(named or found, key=lambda p: (p.stat().st_mtime, str(p)))
        notes.append(f"{len(found)} notebooks uploaded; graded {pick.name}")
        return pick, notes
    return found[0], notes


def gradescope_json(run, protection: str, private: dict, notes: list[str], seconds: float) -> dict:
    """The learner's Gradescope results.json (`exports.gradescope_learner`) with what the autograder adds."""
    from .exports import gradescope_learner

    res = gradescope_learner(run, run.learners[0])
    return {**res, "execution_time": round(seconds),
            "output": res["output"] + ". Only your answer cells were run, inside the instructor's copy of the lesson."
                      + ("\n" + "\n".join(notes) if notes else ""),
            "stdout_visibility": "hidden", "extra_data": {"protection": protection, "answers_root_only": private}}


def _fail(results: Path, message: str, protection: str = "not run") -> int:
    results.mkdir(parents=True, exist_ok=True)
    (results / "results.json").write_text(json.dumps({
        "score": 0, "output": message, "visibility": "visible", "tests": [],
        "extra_data": {"protection": protection}}, indent=1))
    print(message, file=sys.stderr)
    return 0  # the learner sees the message; Gradescope shows a failed run otherwise


def run(root: Path) -> int:
    """Grade `root/submission`, write `root/results/results.json`."""
    from .. import sandbox
    from .results import ResultsError, load_run

    t0 = time.monotonic()
    source, results, work = root / "source", root / "results", root / "work"
    cfg = json.loads((source / CONFIG).read_text())
    for d in (results, work):
        d.mkdir(parents=True, exist_ok=True)
    for d in (source, results, work):  # root only: the kernel's uid can reach none of these
        os.chmod(d, 0o700)
    nb, notes = pick_notebook(root / "submission", cfg["lesson"])
    if nb is None:
        return _fail(results, f"Nothing to grade: {notes[0]}. Upload your {cfg['lesson']}.ipynb.")
    mode = os.environ.get("LABKIT_AUTOGRADER_PROTECTION") or ("sandbox" if sandbox.bwrap_status()[0]
                                                             else "unprivileged-user")
    if mode not in ("sandbox", "unprivileged-user"):
        return _fail(results, f"LABKIT_AUTOGRADER_PROTECTION={mode!r}: use sandbox or unprivileged-user")
    copy = work / "submission" / nb.name  # the learner's own upload, copied where only root can write
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(nb, copy, follow_symlinks=False)
    out = work / "out"
    cmd = [sys.executable, "-P", "-m", "labkit.cli", "grade", cfg["lesson"], str(copy), "--out", str(out),
           "--jobs", "1", "--no-progress", "--solutions", str((source / cfg["solution"]).parent), "--force"]
    if mode == "unprivileged-user":
        cmd.append("--unprivileged-user")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    try:
        graded = load_run(out)
    except ResultsError as e:
        return _fail(results, f"The grader could not run ({e}). {proc.stderr[-1500:]}", mode)
    if len(graded.learners) != 1:
        return _fail(results, f"The grader found {len(graded.learners)} learners in one submission", mode)
    res = gradescope_json(graded, graded.learners[0].protection or mode, answers_private(source), notes,
                          time.monotonic() - t0)
    (results / "results.json").write_text(json.dumps(res, indent=1))
    return 0


def check_setup() -> int:
    """After setup.sh: say whether the answers are root-only and bubblewrap usable (Gradescope's build log)."""
    from .. import sandbox

    import labkit_judges

    private = _private(Path(labkit_judges.__file__).resolve().parent)
    usable, why = sandbox.bwrap_status()
    print(f"labkit autograder: judges readable by root only: {private}; bubblewrap usable: {usable} ({why}); "
          f"kernels will run {'in bubblewrap' if usable else 'as an unprivileged uid (no bubblewrap)'}")
    return 0 if private else 1


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m labkit.grading.gradescope")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--root", default=os.environ.get("LABKIT_AUTOGRADER_ROOT", "/autograder"))
    sub.add_parser("check-setup")
    a = p.parse_args(argv)
    return run(Path(a.root)) if a.cmd == "run" else check_setup()


if __name__ == "__main__":
    sys.exit(main())
