"""Learner side, graded release: instant feedback from public checks, with no judge, reference or key.

A graded release (`labkit release`, labkit/edition.py) installs `labkit` without `labkit_judges` and
with a folder `labkit/public/`: per exercise, `check.json` says how it is checked here, and for a
function exercise the public test inputs (`inputs/`, the format the grader gives a graded kernel) and
the outputs the reference solution returned on them (`expected/`: JSON + `.npy`, plain data only).
From that, `check()` answers at once:

* ``outputs``: the learner's function runs on the public inputs; each output is compared with the
  expected one (numbers within `RTOL`/`atol_for`, everything else exactly). Hidden inputs, dtypes and
  the process an exercise teaches are judged by the grader only. ``shapes``: the same, but arrays are
  compared by shape only (an exercise whose judge accepts values a plain comparison would not).
* ``structure``: an ONNX answer must parse and pass `onnx.checker`; what it computes is graded later.
* ``answered``: a quiz says which questions have an answer, never which are right.

The panel of the release never shows points: they are decided when the instructor grades.
"""
from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from .. import plain
from ..plain import NotPlain, OnnxBlob, Raised
from .collect import NotAttempted, collect, exc_message
from .registry import Exercise
from .result import Result, TestResult

#: where a release keeps its public checks (inside the installed package)
PUBLIC_DIR = Path(__file__).resolve().parent.parent / "public"
MODES = ("outputs", "shapes", "structure", "answered")
#: relative tolerance of a public comparison: looser than any judge's, so no correct form fails here
RTOL = 1e-3
GRADED = "points are given when your instructor grades: hidden inputs too"


def judges_installed() -> bool:
    """Whether the full checks are here (the self-study course) or only the public ones (a release)."""
    return importlib.util.find_spec("labkit_judges") is not None


def atol_for(want: np.ndarray) -> float:
    """Absolute tolerance of a public comparison: scaled to the largest expected value."""
    finite = np.abs(want[np.isfinite(want)]) if want.size else np.zeros(0)
    return 1e-5 + 1e-4 * (float(finite.max()) if finite.size else 0.0)


def compare(got: Any, want: Any, where: str = "the result", values: bool = True) -> str:
    """'' when `got` matches the expected plain value `want`, else what differs (one line). `values=False`:
    arrays need only the expected shape."""
    if isinstance(got, Raised):
        return f"your function {got.message}"
    if isinstance(want, np.ndarray):
        if not isinstance(got, (np.ndarray, list, int, float)) or isinstance(got, bool):
            return f"{where}: expected an array of shape {want.shape}, got {plain.describe(got)}"
        try:
            arr = np.asarray(got, dtype=np.float64)
        except (TypeError, ValueError):
            return f"{where}: expected an array of shape {want.shape}, got a ragged or non-numeric value"
        if arr.shape != want.shape:
            return f"{where}: expected shape {want.shape}, got shape {arr.shape}"
        if not values:
            return ""
        w = want.astype(np.float64)
        exact = want.dtype.kind in "biu"
        ok = (arr == w) | (np.isnan(arr) & np.isnan(w))
        if not exact:
            ok |= np.abs(arr - w) <= atol_for(w) + RTOL * np.abs(w)
        if ok.all():
            return ""
        idx = tuple(int(i) for i in np.argwhere(~ok)[0])
        return (f"{where}: at index {idx} expected {w[idx]:.6g}, got {arr[idx]:.6g} "
                f"({int((~ok).sum())} of {w.size} values off)")
    if isinstance(want, bool) or want is None or isinstance(want, str):
        return "" if type(got) is type(want) and got == want else f"{where}: expected {want!r}, got {_short(got)}"
    if isinstance(want, (int, float)):
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return f"{where}: expected the number {want!r}, got {plain.describe(got)}"
        if isinstance(want, int) and isinstance(got, int):
            return "" if got == want else f"{where}: expected {want}, got {got}"
        if (math.isnan(want) and math.isnan(got)) or abs(got - want) <= 1e-5 + RTOL * abs(want):
            return ""
        return f"{where}: expected {want:.6g}, got {got:.6g}"
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            n = f"{len(got)} items" if isinstance(got, list) else plain.describe(got)
            return f"{where}: expected {len(want)} items (a list or tuple), got {n}"
        return next((m for i, (g, w) in enumerate(zip(got, want)) if (m := compare(g, w, f"{where}[{i}]", values))),
                    "")
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            keys = sorted(got) if isinstance(got, dict) else plain.describe(got)
            return f"{where}: expected a dict with keys {sorted(want)}, got {keys}"
        return next((m for k in want if (m := compare(got[k], want[k], f"{where}[{k!r}]", values))), "")
    if isinstance(want, OnnxBlob):
        return structure_problem(got, where)
    return f"{where}: cannot be compared here"


def structure_problem(got: Any, where: str = "the model") -> str:
    """'' when `got` is an ONNX model that parses and passes `onnx.checker` (or an ORT-format model that
    ONNX Runtime loads), else what is wrong."""
    if isinstance(got, Raised):
        return f"your function {got.message}"
    if not isinstance(got, OnnxBlob):
        return f"{where}: expected an ONNX model, got {plain.describe(got)}"
    if got.data[4:8] == b"ORTM":  # an ORT-format (flatbuffer) file, as a phone app ships it
        import onnxruntime as ort

        try:
            ort.InferenceSession(got.data, providers=["CPUExecutionProvider"])
        except Exception as e:
            return f"{where}: ONNX Runtime cannot load this ORT-format model ({exc_message(e)})"
        return ""
    import onnx

    try:
        model = onnx.load_from_string(got.data)
        onnx.checker.check_model(model)
    except Exception as e:
        return f"{where}: not a valid ONNX model ({exc_message(e)})"
    return "" if model.graph.node else f"{where}: the ONNX model has no nodes"


def _short(x: Any) -> str:
    text = repr(x) if isinstance(x, (str, int, float, bool)) or x is None else plain.describe(x)
    return text if len(text) <= 80 else text[:77] + "..."


def _spec(ex: Exercise) -> dict:
    path = PUBLIC_DIR / ex.id / "check.json"
    if not path.is_file():
        return {}
    info = json.loads(path.read_text())
    return info if info.get("mode") in MODES else {}


def public_verdict(ex: Exercise, answer: Any) -> Result:
    """The public check of `ex` on `answer` (a release's `check()`): never points, never raises."""
    title = f"{ex.title} (public check)"
    spec = _spec(ex)
    if not spec:
        return Result(ex.id, title, "error", 0.0, ex.points, "This release has no public check for this "
                      "exercise: it is checked when your instructor grades.", [], ex.hint)
    try:
        if spec["mode"] in ("outputs", "shapes"):
            data = collect(ex, answer, lambda: plain.load_inputs(PUBLIC_DIR / ex.id / "inputs"))
        else:
            data = collect(ex, answer)
    except NotAttempted:
        return Result(ex.id, title, "not_attempted", 0.0, ex.points, "Not attempted yet: replace the stub in "
                      "the answer cell above, run it, then run this cell.", [], ex.hint)
    except NotPlain as e:
        return Result(ex.id, title, "error", 0.0, ex.points, f"Your answer is {e}.", [], ex.hint)
    except Exception as e:
        return Result(ex.id, title, "error", 0.0, ex.points, f"Could not read your answer: {exc_message(e)}",
                      [], ex.hint)
    tests = _tests(spec["mode"], ex, data)
    passed = sum(t.passed for t in tests)
    status = "passed" if tests and passed == len(tests) else "failed"
    note = spec.get("note", "")
    message = f"Public checks: {passed}/{len(tests)} passed. {note} The {GRADED}.".replace("  ", " ")
    return Result(ex.id, title, status, 0.0, 0.0, message, tests, ex.hint)   # 0/0: "points when graded"


def _tests(mode: str, ex: Exercise, data: Any) -> list[TestResult]:
    if mode == "answered":
        if not isinstance(data, dict):
            return [TestResult("answers", False, f"expected a dict like {{'q1': 'a'}}, got {plain.describe(data)}")]
        out = []
        for q in ex.questions:
            got = data.get(q.key)
            ok = isinstance(got, str) and got.strip().lower() in q.options
            out.append(TestResult(q.key, ok, f"answered {got.strip().lower()!r} (right or not: checked when graded)"
                                  if ok else ("not answered yet" if got is None
                                              else f"{got!r} is not one of {', '.join(q.options)}")))
        return out
    if mode == "structure":
        problem = structure_problem(data)
        return [TestResult("a valid ONNX model", not problem, problem or
                           "it parses and passes onnx.checker; what it computes is checked when graded")]
    expected = plain.load(PUBLIC_DIR / ex.id / "expected")
    if not isinstance(data, list) or len(data) != len(expected):
        return [TestResult("public inputs", False, "the answer did not run on every public input")]
    values = mode == "outputs"
    said = "matches the reference's output" if values else "the shapes of the reference's output"
    return [TestResult(f"public input {i + 1}", not (m := compare(g, w, values=values)), m or said)
            for i, (g, w) in enumerate(zip(data, expected))]
