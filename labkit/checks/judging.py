"""Judge side: the one spec of each exercise, running its judge on plain data, scoring the tests.

Each exercise is specified once, in the `labkit_judges` package (one module per lesson,
`labkit_judges/lNN.py`): `@exercise(id, title=, points=, kind=, hint=, cases=, tests=, skill=)` on its
judge, or `quiz(id, title=, points=, questions=[Question(..., answer=, why=)])`. That registers the
judge side here and the learner side in `registry`; `labkit assign` writes the learner-visible part to
`labkit/exercises/lNN.py`. Only the verdict process and the learner's own notebook import the judges; a
graded kernel cannot (the sandbox does not mount `labkit_judges`).
Generic comparison helpers (`expect_close`, `expect_equal`, `load_onnx`, `ort_session`) are here.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .. import plain
from ..cells import is_exercise_id
from ..external_data import ExternalDataError, refuse_external_data
from ..plain import NotPlain, OnnxBlob, Raised
from ..runtime import ort_session  # noqa: F401 (the one session helper, re-exported for judges)
from .collect import NotAttempted, collect, exc_message
from .registry import Exercise, Question, _import_lesson, make_exercise, register
from .result import Result, TestResult
from ..text import shorten

JUDGE_PACKAGE = "labkit_judges"
INTERACTIVE_SEED = 0


@dataclass
class JudgeSpec:
    """The judge side of one exercise: `judge(answer, seed)` yields TestResults; `cases(seed)` gives
    a function exercise's test inputs (plain data, `plain.File`, `plain.Make`).

    `tests` is the exercise's fixed list of test names and `skill` the ones that *are* the exercise:
    outputs on inputs the learner never saw, or the property the exercise exists to teach (the
    scoring rule in `score()`). `exercise` is its learner side, as the spec declared it."""

    exercise: Exercise
    judge: Callable[[Any, int], Iterable[TestResult]]
    cases: Callable[[int], list[tuple]] | None = None
    key: dict[str, tuple[str, str]] | None = None   # quizzes: {question: (letter, explanation)}
    tests: tuple[str, ...] = ()
    skill: tuple[str, ...] = ()


@dataclass
class DidNotDo:
    """Yielded by a judge beside its tests: this answer did not do the exercise — it hands back its input
    unchanged, a constant, or a library's result for the very thing asked. `score()` then gives at most
    `SKIPPED_CAP` of the points, whatever the tests say; `message` tells the learner what was seen."""

    __test__ = False  # not a pytest class

    message: str


JUDGES: dict[str, JudgeSpec] = {}


def _spec_source(id: str) -> str:
    return f"{JUDGE_PACKAGE}/l{id[:2]}.py"


def exercise(id: str, *, title: str, points: float, kind: str, hint: Sequence[str], tests: Sequence[str],
             skill: Sequence[str], cases: Callable[[int], list[tuple]] | None = None,
             bonus: bool = False, tools: Sequence[str] = (), call: str = "") -> Callable[[Callable], Callable]:
    """The one spec of exercise `id`, on its judge `fn(answer, seed)` (a decorator).

    `title`, `points`, `kind` ("function", "value" or "onnx") and `hint` (a list of one-line steps: the
    concept, then the API) are what the learner sees. `cases(seed)`: a function exercise's test inputs
    (needed exactly for kind "function"). `tests`: every test name the judge can yield, fixed (a test it
    does not yield counts as failed). `skill`: the tests that *are* the exercise (outputs on unseen
    inputs, or the property the exercise teaches); failing any caps the points at half. The judge may
    also yield `DidNotDo(message)`. `bonus=True`: the exercise sits in a part the lesson calls optional, and
    its points count on top of the lesson's maximum (which is what the core asks). `tools=("numpy",)`: a function
    answer runs where only these and the standard library import (`confine`): the skill is the arithmetic,
    and a library that does it is a shortcut. `call="labkit.module:name"`: the check calls `name(answer, *case)`
    instead of `answer(*case)`, for an answer that is not the process itself (rules the check applies)."""
    if kind == "quiz":
        raise ValueError(f"{id}: a quiz is specified with quiz(), not @exercise")
    if (kind == "function") != (cases is not None):
        raise ValueError(f"{id}: cases= is needed exactly when the exercise is a function (it is {kind!r})")
    tests, skill = tuple(tests), tuple(skill)
    if not tests or len(set(tests)) != len(tests):
        raise ValueError(f"{id}: tests= must list distinct test names")
    if not skill or not set(skill) <= set(tests):
        raise ValueError(f"{id}: skill= must name at least one of its tests (the ones that are the exercise)")
    ex = register(make_exercise(id, title=title, points=points, kind=kind, hint=hint, bonus=bonus, tools=tools,
                                call=call),
                  _spec_source(id))

    def deco(fn: Callable) -> Callable:
        JUDGES[id] = JudgeSpec(ex, fn, cases, tests=tests, skill=skill)
        return fn

    return deco


def quiz(id: str, *, title: str, points: float, questions: Sequence[Question], hint: Sequence[str] = ()) -> None:
    """The one spec of a multiple-choice quiz: each Question with its `answer` (the right letter) and
    `why` (the explanation shown once it is right). The learner answers with {question key: letter}."""
    for q in questions:
        if q.answer not in q.options:
            raise ValueError(f"{id}.{q.key}: answer {q.answer!r} is not one of its options")
    ex = register(make_exercise(id, title=title, points=points, kind="quiz", hint=hint, questions=questions),
                  _spec_source(id))
    qs = ex.questions
    key = {q.key: (q.answer, q.why) for q in questions}

    def verdict(answer: Any, seed: int) -> Iterable[TestResult]:
        if not isinstance(answer, dict):
            yield TestResult("answers", False, f"expected a dict like {{'{qs[0].key}': 'a'}}, got {plain.describe(answer)}")
            return
        for q in qs:
            got = answer.get(q.key)
            right, explain = key[q.key]
            if got is None:
                yield TestResult(q.key, False, "not answered yet")
            elif not isinstance(got, str) or got.strip().lower() not in q.options:
                yield TestResult(q.key, False, f"{got!r} is not one of {', '.join(q.options)}")
            elif got.strip().lower() == right:
                yield TestResult(q.key, True, explain or "correct")
            else:
                yield TestResult(q.key, False, f"{got!r} is not right — think again about: {q.prompt}")

    JUDGES[id] = JudgeSpec(ex, verdict, key=key, tests=tuple(q.key for q in qs), skill=())


def quiz_answers(id: str) -> dict[str, str]:
    """{question key: right letter} of quiz `id` (judge side: tests and instructors only)."""
    spec = judge_spec(id)
    return {k: v[0] for k, v in (spec.key or {}).items()}


def judge_spec(id: str) -> JudgeSpec:
    """The judge side of exercise `id`, importing `labkit_judges.lNN` on first use."""
    if id not in JUDGES and is_exercise_id(id):
        if not _import_lesson(JUDGE_PACKAGE, id[:2]):
            raise KeyError(f"no judge module {JUDGE_PACKAGE}.l{id[:2]} (it is not installed here)")
    if id not in JUDGES:
        raise KeyError(f"{JUDGE_PACKAGE}.l{str(id)[:2]} has no spec for {id}")
    return JUDGES[id]


def lesson_specs(lesson: str) -> list[JudgeSpec]:
    """The specs of lesson `lesson` ("01") in the order `labkit_judges/lNN.py` gives them (imports it)."""
    if not _import_lesson(JUDGE_PACKAGE, lesson):
        raise KeyError(f"no judge module {JUDGE_PACKAGE}.l{lesson}")
    return [s for id, s in JUDGES.items() if id.startswith(lesson + ".")]


def collect_answer(ex: Exercise, answer: Any, seed: int = INTERACTIVE_SEED, *, cases: list[tuple] | None = None) -> Any:
    """`collect()` in the learner's notebook: a function answer runs on the spec's test inputs for `seed`
    (or on `cases`). Raises NotAttempted or NotPlain."""
    return collect(ex, answer, lambda: judge_spec(ex.id).cases(seed) if cases is None else cases)


#: share of the points an answer can reach while a skill test fails
SKILL_CAP = 0.5
#: share of the points an answer can reach when its judge says it did not do the exercise (`DidNotDo`)
SKIPPED_CAP = 0.25


def score(ex: Exercise, spec: JudgeSpec, yielded: list[TestResult | DidNotDo]) -> Result:
    """The scoring rule (docs/authoring.md): the exercise's fixed list of tests, each passed or failed;
    a test the judge did not get to counts as failed; points are the share of tests passed, capped
    at half while any skill test fails, and at a quarter when the judge yielded `DidNotDo` (the
    answer skipped the exercise: its input unchanged, a constant, a library doing the very thing)."""
    names = spec.tests
    got: dict[str, TestResult] = {}
    skipped: list[DidNotDo] = []
    for t in yielded:
        if isinstance(t, DidNotDo):
            skipped.append(t)
            continue
        if t.name not in names:
            return Result(ex.id, ex.title, "error", 0.0, ex.points,
                          f"the check is broken: it ran a test {t.name!r} it does not declare", [], ex.hint)
        got.setdefault(t.name, t)
    first_fail = next((got[n] for n in names if n in got and not got[n].passed), None)
    tests = [got.get(n) or TestResult(n, False, f"not run (after {first_fail.name!r} failed)" if first_fail
                                      else "not run") for n in names]
    passed = sum(t.passed for t in tests)
    if passed == len(tests) and not skipped:
        return Result(ex.id, ex.title, "passed", ex.points, ex.points, f"all {len(tests)} tests passed", tests, ex.hint)
    share = passed / len(tests)
    if any(not t.passed for t in tests if t.name in spec.skill):
        share = min(share, SKILL_CAP)
    first = next((t for t in tests if not t.passed), None)
    message = f"{passed}/{len(tests)} tests passed." + (f" {first.said()}" if first else "")
    if skipped:
        share = min(share, SKIPPED_CAP)
        message = (f"This answer does not do the exercise: {skipped[0].message} "
                   f"(at most {SKIPPED_CAP:.0%} of the points). {message}")
    return Result(ex.id, ex.title, "failed", round(ex.points * share, 2), ex.points, message, tests, ex.hint)


def _same_plain(a: Any, b: Any) -> bool:
    """Whether two plain values are the same (models: the same graph; arrays: same shape and values)."""
    if isinstance(a, OnnxBlob) or isinstance(b, OnnxBlob):
        if not (isinstance(a, OnnxBlob) and isinstance(b, OnnxBlob)):
            return False
        if a.data == b.data:
            return True
        import onnx

        try:
            ga, gb = onnx.load_from_string(a.data).graph, onnx.load_from_string(b.data).graph
            return ga.SerializeToString(deterministic=True) == gb.SerializeToString(deterministic=True)
        except Exception:
            return False
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        try:
            x, y = np.asarray(a), np.asarray(b)
            return x.shape == y.shape and x.dtype.kind in "biuf" and y.dtype.kind in "biuf" and np.array_equal(x, y)
        except Exception:
            return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_plain(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_plain(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def skipped_exercise(ex: Exercise, spec: JudgeSpec, outputs: Any, seed: int) -> DidNotDo | None:
    """A function answer that did not do the exercise, whatever the exercise: the same value for every
    test input (a constant: it ignores its inputs), or each test input handed back unchanged. Judges
    detect the exercise-specific shortcuts (a library's result for the very thing asked) themselves."""
    if ex.kind != "function" or spec.cases is None or not isinstance(outputs, list) or len(outputs) < 2:
        return None
    if any(isinstance(o, Raised) for o in outputs):
        return None
    if all(_same_plain(o, outputs[0]) for o in outputs[1:]):
        if outputs[0] is None:
            return DidNotDo(f"it returns None for all {len(outputs)} test inputs (is a `return` missing?)")
        return DidNotDo(f"it returns the same value for all {len(outputs)} test inputs, so it does not look at them")
    try:
        cases = spec.cases(seed)
    except Exception:
        return None
    if len(cases) != len(outputs):
        return None

    def handed_back(out: Any, args: tuple) -> bool:
        """`out` is the first argument, or the first few arguments as a tuple, unchanged."""
        try:
            args = tuple(args)
            if any(isinstance(a, (plain.File, plain.Make)) for a in args):
                return False
            if args and args[0] is not None and _same_plain(out, plain.to_plain(args[0])):
                return True
            return isinstance(out, list) and 1 < len(out) <= len(args) and \
                _same_plain(out, plain.to_plain(list(args[:len(out)])))
        except Exception:
            return False

    if all(handed_back(o, c) for o, c in zip(outputs, cases)):
        return DidNotDo("it hands back each input it is given unchanged")
    return None


def _names_a_file(answer: Any) -> str | None:
    """Why a model in `answer` cannot be judged: it keeps a tensor's data in another file (None if
    no model in it does). See `labkit.external_data`."""
    stack = [answer]
    while stack:
        x = stack.pop()
        if isinstance(x, OnnxBlob):
            try:
                refuse_external_data(x.data)
            except ExternalDataError as e:
                return str(e)
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
    return None


def run_judge(ex: Exercise, answer: Any, seed: int) -> Result:
    """Run the verdict on plain data; a judge that trips over odd data reports an error. A function answer
    that ignores its inputs or hands them back unchanged, and fails a test, gets `DidNotDo`."""
    try:
        spec = judge_spec(ex.id)
        refused = _names_a_file(answer)
        if refused:  # before any judge, checker or ONNX Runtime sees the model
            return score(ex, spec, [TestResult(n, False, refused) for n in spec.tests])
        yielded = list(spec.judge(answer, seed))
        failed = any(isinstance(t, TestResult) and not t.passed for t in yielded) or \
            {t.name for t in yielded if isinstance(t, TestResult)} != set(spec.tests)
        skipped = skipped_exercise(ex, spec, answer, seed) if failed and yielded else None
    except Exception as e:
        return Result(ex.id, ex.title, "error", 0.0, ex.points,
                      f"could not check this answer: {exc_message(e)}", [], ex.hint)
    if not yielded:
        return Result(ex.id, ex.title, "error", 0.0, ex.points, "the check ran no test", [], ex.hint)
    return score(ex, spec, yielded + ([skipped] if skipped else []))


def not_attempted(ex: Exercise) -> Result:
    return Result(ex.id, ex.title, "not_attempted", 0.0, ex.points,
                  "Not attempted yet: replace the stub in the answer cell above, run it, then run this cell.",
                  [], ex.hint)


def evaluate(ex: Exercise, answer: Any, seed: int = INTERACTIVE_SEED) -> Result:
    """Collect and judge in one go (what a check does in the learner's notebook)."""
    try:
        data = collect_answer(ex, answer, seed)
    except NotAttempted:
        return not_attempted(ex)
    except NotPlain as e:
        return Result(ex.id, ex.title, "error", 0.0, ex.points, f"Your answer is {e}.", [], ex.hint)
    except Exception as e:
        return Result(ex.id, ex.title, "error", 0.0, ex.points,
                      f"Could not read your answer: {exc_message(e)}", [], ex.hint)
    return run_judge(ex, data, seed)


def fresh_seed() -> int:
    """A seed the learner has not seen: each check of a function answer also runs on new inputs."""
    return int.from_bytes(os.urandom(4), "little") % 1_000_000_000 + 1


def evaluate_unseen(ex: Exercise, answer: Any, seed: int | None = None) -> Result:
    """What a check does in the learner's notebook: judge on the notebook's inputs (`INTERACTIVE_SEED`, so
    a right answer always shows the same messages), and again on inputs it has never seen (`seed`, fresh by
    default). The worse of the two is shown: an answer that replays the values it
    saw fails here as it fails in the grader. An artifact (a model, a value) is judged again too: its judge
    may test it on inputs drawn from the seed, as the grader's does with its own."""
    first = evaluate(ex, answer, INTERACTIVE_SEED)
    if ex.kind == "quiz" or first.status not in ("passed", "failed"):
        return first
    seed = fresh_seed() if seed is None else seed
    second = evaluate(ex, answer, seed)
    if second.points < first.points or (first.status == "passed" and second.status != "passed"):
        second.message = f"On new test inputs (seed {seed}): {second.message}"
        return second
    return first


def judge_saved(ex: Exercise, folder: str | os.PathLike, seed: int) -> Result:
    """Judge an answer a graded kernel recorded in `folder` (plain data only)."""
    folder = Path(folder)
    marker = folder / "status.json"
    if marker.is_file():
        try:
            info = json.loads(marker.read_text()[:10_000])
            status, message = str(info["status"]), shorten(info["message"], 500)
        except Exception:
            status, message = "error", "malformed answer record"
        if status == "not_attempted":
            return not_attempted(ex)
        return Result(ex.id, ex.title, "error", 0.0, ex.points, message, [], ex.hint)
    try:
        data = plain.load(folder)
    except FileNotFoundError:
        return Result(ex.id, ex.title, "missing", 0.0, ex.points,
                      "the check cell did not run (an earlier cell crashed or timed out)", [], ex.hint)
    except Exception as e:
        return Result(ex.id, ex.title, "error", 0.0, ex.points, f"unreadable answer: {exc_message(e)}", [], ex.hint)
    return run_judge(ex, data, seed)


# ---------------------------------------------------------------- comparison helpers for judges


def error_line(e: BaseException, n: int = 200) -> str:
    """The useful part of an exception's message for a judge's TestResult: its first line, without the
    code and source-file prefix ONNX Runtime puts in front ("[ONNXRuntimeError] : 2 : ... : file.cc:12 f()"),
    with the lines that say which indices were wrong when the first line announces them; cut in the
    middle when long, so the end of the message stays."""
    import re

    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()] or [type(e).__name__]
    text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", lines[0])
    text = re.sub(r"^\S+\.(cc|h|cpp):\d+ [^(]*\([^)]*\)\s*", "", text)
    if text.endswith("indices"):  # "Got invalid dimensions for input: x for the following indices"
        text += ": " + "; ".join(line for line in lines[1:] if line.startswith("index:"))
    return shorten(text, n, keep_end=True)


def expect_close(name: str, got: Any, want: np.ndarray, *, rtol: float = 1e-4, atol: float = 1e-5) -> TestResult:
    """Compare a learner's array to the expected one with a precise message on failure."""
    if isinstance(got, Raised):
        return TestResult(name, False, f"your function {got.message}")
    want = np.asarray(want)
    if isinstance(got, OnnxBlob) or isinstance(got, dict) or isinstance(got, str):
        return TestResult(name, False, f"expected an array of shape {want.shape}, got {plain.describe(got)}")
    try:
        arr = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        return TestResult(name, False, f"expected an array of shape {want.shape}, got a ragged or non-numeric value")
    if arr.shape != want.shape:
        return TestResult(name, False, f"expected shape {want.shape}, got shape {arr.shape}")
    if want.size == 0:
        return TestResult(name, True, f"shape {want.shape} as expected")
    bad = ~np.isfinite(arr) & np.isfinite(want)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        return TestResult(name, False, f"your result has {arr[idx]} at index {idx} where {want[idx]:.6g} was expected")
    same = (arr == want) | (np.isnan(want) & np.isnan(arr))  # equal infinities too (their difference is NaN)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(same, 0.0, np.abs(arr - want))
        tol = atol + rtol * np.abs(want)
        ok = same | (np.isfinite(want) & (diff <= tol))  # an infinite or NaN expectation is met only exactly
    if ok.all():
        return TestResult(name, True, f"matches (max abs difference {float(diff.max()):.2g})")
    off = ~ok
    with np.errstate(invalid="ignore", over="ignore"):
        excess = np.where(off, np.nan_to_num(diff - tol, nan=np.inf, posinf=np.inf), -np.inf)
    idx = tuple(int(i) for i in np.unravel_index(np.argmax(excess), diff.shape))
    return TestResult(name, False,
                      f"at index {idx} expected {float(want[idx]):.6g}, got {float(arr[idx]):.6g} "
                      f"({int(off.sum())} of {want.size} values off)")


def expect_equal(name: str, got: Any, want: Any) -> TestResult:
    """Exact comparison of plain values (numbers compared as numbers, strings as strings)."""
    if isinstance(got, Raised):
        return TestResult(name, False, f"your function {got.message}")
    if isinstance(want, np.ndarray) or isinstance(got, np.ndarray):
        try:
            ok = np.array_equal(np.asarray(got), np.asarray(want))
        except Exception:
            ok = False
        return TestResult(name, ok, "as expected" if ok else f"expected {np.asarray(want)!r}, got {plain.describe(got)}")
    if isinstance(want, bool) or isinstance(got, bool):
        ok = type(got) is type(want) and got == want
    elif isinstance(want, (int, float)) and isinstance(got, (int, float)):
        ok = got == want or (math.isnan(want) and math.isnan(got))
    else:
        ok = type(got) is type(want) and got == want
    return TestResult(name, ok, "as expected" if ok else f"expected {want!r}, got {got!r}")


def load_onnx(answer: Any) -> tuple[Any, str | None]:
    """Parse ONNX bytes into a ModelProto, or return (None, a message saying why not)."""
    if isinstance(answer, Raised):
        return None, f"your function {answer.message}"
    if not isinstance(answer, OnnxBlob):
        return None, f"expected an ONNX model, got {plain.describe(answer)}"
    import onnx

    try:
        model = onnx.load_from_string(answer.data)
    except Exception as e:
        return None, f"the file is not a valid ONNX model ({exc_message(e)})"
    try:
        refuse_external_data(model)
    except ExternalDataError as e:
        return None, str(e)
    if not model.graph.node and not model.graph.output:
        return None, "the ONNX model is empty (no graph)"
    return model, None
