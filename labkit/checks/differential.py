"""Differential judging (judge side): the learner's function and the reference run on inputs generated from
the seed, and the judge compares everything a caller would notice.

* `arrays(rng, ...)`: test arrays that cover an input space — sizes 0 and 1, near-zero and huge values, and
  (as `strided`) views that are not contiguous in memory.
* `compare(name, got, want, ...)`: dtype, shape, then every value in its place within a tolerance.
* `grouped(names, groups, outputs, judge_one)`: a fixed test made of several generated cases (the test
  passes when each of its cases does), so generated cases add to a judge's hand-listed ones.
* `promised_form(name, outputs, allowed, promise)`: every result has the form the prompt promises (an int, not a
  NumPy integer; a list, not a tuple; a ModelProto, not bytes), read from what the learner side recorded
  (`plain.Outputs.forms`), since plain data merges those forms.

That a function leaves its arguments as they were is checked where it runs (`calls.changed_argument`):
an answer that changes them comes back as `Raised`, so every judge sees it.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .. import plain
from ..plain import Make, Raised
from .result import TestResult


def strided(base: np.ndarray, axis: int = 0, step: int = 2) -> tuple[Make, np.ndarray]:
    """A test input that reaches the learner as a non-contiguous view of `base` (built learner side, since a
    saved or copied array is contiguous), and the same view here, for the reference."""
    from ..material.views import strided as view

    return Make("labkit.material.views:strided", (base, axis, step)), view(base, axis, step)


def arrays(rng: np.random.Generator, shape: Sequence[int], dtype: Any, *, low: float = -1.0,
           high: float = 1.0) -> list[np.ndarray]:
    """Arrays of `dtype` like `shape`: one of that shape, one with a single element, one with none, and (floats)
    one of near-zero and one of huge values, all drawn from `rng` (the seed)."""
    dtype = np.dtype(dtype)
    shape = tuple(int(s) for s in shape)

    def draw(shp, lo, hi):
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return rng.integers(max(info.min, int(lo)), min(info.max, int(hi)) + 1, size=shp).astype(dtype)
        return rng.uniform(lo, hi, size=shp).astype(dtype)

    out = [draw(shape, low, high), draw((1,) * len(shape), low, high), draw((0,) + shape[1:], low, high)]
    if dtype.kind == "f":
        out += [draw(shape, -1e-30, 1e-30), draw(shape, -1e30, 1e30)]
    return out


def compare(name: str, got: Any, want: np.ndarray, *, rtol: float, atol: float,
            dtype: Any | None = None) -> TestResult:
    """`got` against the reference `want`: the dtype (when given), the shape, then each value in its place within
    `atol + rtol * |want|` (the tolerance each judge justifies where it calls this)."""
    if isinstance(got, Raised):
        return TestResult(name, False, f"your function {got.message}")
    want = np.asarray(want)
    if not isinstance(got, np.ndarray):
        return TestResult(name, False, f"expected an array of shape {want.shape}, got {plain.describe(got)}")
    if dtype is not None and got.dtype != np.dtype(dtype):
        return TestResult(name, False, f"expected dtype {np.dtype(dtype)}, got {got.dtype}")
    if got.shape != want.shape:
        return TestResult(name, False, f"expected shape {want.shape}, got shape {got.shape}")
    if want.size == 0:
        return TestResult(name, True, f"an empty array of shape {want.shape}, as expected")
    g, w = got.astype(np.float64), want.astype(np.float64)
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(same, 0.0, np.abs(g - w))
        # an infinite or NaN reference value is met only exactly (inf * rtol would excuse anything)
        bad = ~(same | (np.isfinite(w) & (diff <= atol + rtol * np.abs(w))))
    if not bad.any():
        return TestResult(name, True, f"matches (max abs difference {float(diff.max()):.2g})")
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    return TestResult(name, False, f"at index {idx} expected {w[idx]:.6g}, got {g[idx]:.6g} "
                                   f"({int(bad.sum())} of {w.size} values off)")


def grouped(names: Sequence[str], groups: Sequence[Sequence[int]], outputs: list,
            judge_one: Callable[[str, int, Any], TestResult]) -> Iterable[TestResult]:
    """One TestResult per name in `names`: test k passes when `judge_one(name, i, outputs[i])` passes for every
    case i of `groups[k]`; else the first failing case's message, with which case it was."""
    for name, group in zip(names, groups):
        results = [judge_one(name, i, outputs[i] if i < len(outputs) else None) for i in group]
        failed = next((r for r in results if not r.passed), None)
        if failed is None:
            yield TestResult(name, True, results[0].message + (f" (and {len(results) - 1} generated cases)"
                                                               if len(results) > 1 else ""))
        else:
            k = results.index(failed)
            where = "" if len(results) == 1 else f"case {k + 1} of {len(results)}: "
            yield TestResult(name, False, where + failed.message)


def _form(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return "array"
    if isinstance(x, list):
        return "list"
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, (int, float)):
        return "number"
    return "other"


def same(name: str, got: Any, want: Any, *, forms: Sequence[str] = ("array",), dtype: Any | None = None,
         integer: bool = False, rtol: float = 0.0, atol: float = 0.0) -> TestResult:
    """What a caller notices of `got` against the reference `want`, in one test: its form (`forms`: "array", "list"
    of numbers, "number" — the prompt's allowed forms), the dtype of an array (`dtype`, when the prompt fixes it) or
    integer values (`integer`: ids, codes, counts, also in a list), the shape, then every value in its place
    (order kept) within `atol + rtol * |want|`. Default tolerance 0: exact, for integers."""
    if isinstance(got, Raised):
        return TestResult(name, False, f"your function {got.message}")
    want = np.asarray(want)
    allowed = " or ".join({"array": "an array", "list": "a list", "number": "a number"}[f] for f in forms)
    if _form(got) not in forms:
        return TestResult(name, False, f"expected {allowed} of shape {want.shape}, got {plain.describe(got)}")
    if isinstance(got, list):
        flat = list(np.asarray(got, dtype=object).ravel()) if got else []
        if not all(type(v) in (int, float) for v in flat):
            return TestResult(name, False, f"expected a list of numbers, got a list holding {plain.describe(flat[0])}"
                              if flat else "expected a list of numbers")
        if integer and not all(type(v) is int for v in flat):
            return TestResult(name, False, "expected a list of ints, got floats in it")
        arr = np.asarray(got, dtype=np.int64 if integer else np.float64)
    else:
        arr = np.asarray(got)
        if isinstance(got, np.ndarray):
            if dtype is not None and arr.dtype != np.dtype(dtype):
                return TestResult(name, False, f"expected dtype {np.dtype(dtype)}, got {arr.dtype}")
            if integer and arr.dtype.kind not in "iu":
                return TestResult(name, False, f"expected integers, got dtype {arr.dtype} (also when it is empty)")
        elif integer and type(got) is not int:
            return TestResult(name, False, f"expected an int, got {plain.describe(got)}")
    return compare(name, arr, want, rtol=rtol, atol=atol)


def promised_form(name: str, outputs: Any, allowed: Sequence[str], promise: str, fix: str = "") -> TestResult:
    """One test: every result of a function answer has a form the prompt allows (`allowed`: `plain.form` names
    such as "int", "list", "onnx.ModelProto"; `promise` says it to the learner: "a Python int"; `fix`: how to get
    there). A call that raised fails the other tests, not this one; with no result at all, this one fails too."""
    recorded = plain.forms_of(outputs)
    if recorded is None:
        return TestResult(name, False, "the types of your function's results were not recorded (run the check again)")
    returned = [(i, f) for i, f in enumerate(recorded) if f]
    if not returned:
        return TestResult(name, False, f"no result to look at (every call raised); the exercise asks for {promise}")
    wrong = [(i, f) for i, f in returned if f not in allowed]
    if not wrong:
        return TestResult(name, True, f"{promise} every time, as asked")
    i, f = wrong[0]
    return TestResult(name, False, f"returned a {f} (test input {i + 1}, {len(wrong)} of {len(returned)} results): "
                                   f"the exercise asks for {promise}" + (f" — {fix}" if fix else ""))
