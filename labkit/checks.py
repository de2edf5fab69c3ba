"""Exercises and immediate feedback: `labkit.check("LL.name", answer)`.

An exercise has two halves that never share objects:

* collect: turn the learner's answer into plain data (`labkit.plain`). For a function answer,
  call it on the exercise's test inputs and keep only the outputs (or the exception message).
* judge: from that plain data alone, compute the expected values and compare.

In a notebook both halves run at once and a panel shows the verdict. When the grader runs a
submission, only collect runs in the learner's kernel (it writes plain data to disk) and the
judge runs later in a separate process, so nothing the learner's code does can fake a verdict.
"""
from __future__ import annotations

import contextlib
import copy
import html
import importlib
import math
import os
import re
import signal
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from . import plain
from .plain import NotPlain, OnnxBlob, Raised

KINDS = ("function", "value", "onnx", "quiz")
STATUSES = ("passed", "failed", "not_attempted", "error", "timeout", "missing")
ID_RE = re.compile(r"^\d\d\.[a-z][a-z0-9_]*$")
INTERACTIVE_SEED = 0
#: mimetype of the machine-readable verdict a check cell outputs beside its HTML panel
RESULT_MIME = "application/vnd.labkit.result+json"
#: seconds a learner's function may run in a notebook check before it is stopped
FUNCTION_TIME_LIMIT = 60


class NotAttempted(Exception):
    """The answer is still the stub (None, `...`, or a function raising NotImplementedError)."""


@dataclass
class TestResult:
    """One test of an exercise: its name, verdict and a precise message."""

    __test__ = False  # not a pytest class

    name: str
    passed: bool
    message: str = ""


@dataclass(frozen=True)
class Question:
    """One multiple-choice question of a quiz exercise."""

    key: str
    prompt: str
    options: dict[str, str]
    answer: str
    explain: str = ""


@dataclass
class Exercise:
    """A graded exercise. `judge(answer, seed)` sees only plain data and yields TestResults."""

    id: str
    title: str
    points: float
    kind: str
    judge: Callable[[Any, int], Iterable[TestResult]]
    cases: Callable[[int], list[tuple]] | None = None
    hint: str = ""
    questions: tuple[Question, ...] = ()


@dataclass
class Result:
    """The verdict on one exercise, shown as a panel in a notebook."""

    exercise: str
    title: str
    status: str
    points: float
    max_points: float
    message: str
    tests: list[TestResult] = field(default_factory=list)
    hint: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    def _repr_html_(self) -> str:
        return panel_html(self)

    def __repr__(self) -> str:
        return f"[{self.status}] {self.exercise} {self.points:g}/{self.max_points:g} points: {self.message}"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        bundle = {"text/html": panel_html(self), "text/plain": repr(self), RESULT_MIME: self.to_dict()}
        ex = REGISTRY.get(self.exercise)
        if ex is not None and ex.kind == "quiz":
            try:
                bundle = {**quiz_widget(ex, self)._repr_mimebundle_(), RESULT_MIME: self.to_dict()}
            except Exception:  # ipywidgets missing: the static panel still shows the verdict
                pass
        display(bundle, raw=True)


REGISTRY: dict[str, Exercise] = {}


def exercise(
    id: str,
    *,
    title: str,
    points: float,
    kind: str,
    hint: str = "",
    cases: Callable[[int], list[tuple]] | None = None,
) -> Callable[[Callable], Callable]:
    """Decorator registering `judge(answer, seed)` as the verdict of exercise `id`."""
    if not ID_RE.match(id):
        raise ValueError(f"exercise id {id!r} must look like '01.name'")
    if kind not in KINDS or (kind == "function") != (cases is not None):
        raise ValueError(f"{id}: kind {kind!r} needs cases= exactly when it is 'function'")

    def deco(judge: Callable) -> Callable:
        REGISTRY[id] = Exercise(id, title, float(points), kind, judge, cases, hint)
        return judge

    return deco


def quiz(id: str, *, title: str, points: float, questions: list[Question], hint: str = "") -> None:
    """Register a multiple-choice quiz; the answer is a dict {question key: option letter}."""
    qs = tuple(questions)
    for q in qs:
        if q.answer not in q.options:
            raise ValueError(f"{id}.{q.key}: answer {q.answer!r} is not an option")

    def judge(answer: Any, seed: int) -> Iterable[TestResult]:
        if not isinstance(answer, dict):
            yield TestResult("answers", False, f"expected a dict like {{'{qs[0].key}': 'a'}}, got {plain.describe(answer)}")
            return
        for q in qs:
            got = answer.get(q.key)
            if got is None:
                yield TestResult(q.key, False, "not answered yet")
            elif not isinstance(got, str) or got.strip().lower() not in q.options:
                yield TestResult(q.key, False, f"{got!r} is not one of {', '.join(q.options)}")
            elif got.strip().lower() == q.answer:
                yield TestResult(q.key, True, q.explain or "correct")
            else:
                yield TestResult(q.key, False, f"{got!r} is not right — think again about: {q.prompt}")

    if not ID_RE.match(id):
        raise ValueError(f"exercise id {id!r} must look like '01.name'")
    REGISTRY[id] = Exercise(id, title, float(points), "quiz", judge, None, hint, qs)


def get(id: str) -> Exercise:
    """The exercise `id`, importing its lesson's module (`labkit.exercises.lNN`) on first use."""
    if id not in REGISTRY and isinstance(id, str) and ID_RE.match(id):
        with contextlib.suppress(ModuleNotFoundError):
            importlib.import_module(f"labkit.exercises.l{id[:2]}")
    if id not in REGISTRY:
        raise KeyError(id)
    return REGISTRY[id]


def lesson_exercises(lesson: str) -> list[Exercise]:
    """All exercises of lesson `lesson` ("01"), in registration order."""
    with contextlib.suppress(ModuleNotFoundError):
        importlib.import_module(f"labkit.exercises.l{lesson}")
    return [e for e in REGISTRY.values() if e.id.startswith(lesson + ".")]


# ---------------------------------------------------------------- collect (learner side)


class _TimeLimit(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Stop a learner's function after `seconds` (main thread on Unix; otherwise no limit)."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable or not seconds:
        yield
        return

    def on_alarm(signum, frame):
        raise _TimeLimit()

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _exc_message(e: BaseException) -> str:
    text = str(e).strip().splitlines()[0][:300] if str(e).strip() else ""
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _onnx_bytes(answer: Any) -> OnnxBlob:
    if isinstance(answer, (bytes, bytearray)):
        return OnnxBlob(bytes(answer))
    if isinstance(answer, (str, os.PathLike)):
        path = Path(answer)
        if not path.is_file():
            raise NotPlain(f"no ONNX file at {str(path)!r} (is the path right, and did the cell that writes it run?)")
        return OnnxBlob(path.read_bytes())
    if hasattr(answer, "SerializeToString") and type(answer).__name__ == "ModelProto":
        return OnnxBlob(answer.SerializeToString())
    raise NotPlain(f"{plain.describe(answer)}; expected a path to an .onnx file or an onnx.ModelProto")


def collect(ex: Exercise, answer: Any, seed: int) -> Any:
    """Reduce `answer` to plain data for `ex`. Raises NotAttempted or NotPlain."""
    if answer is None or answer is Ellipsis:
        raise NotAttempted()
    if ex.kind == "function":
        if not callable(answer):
            raise NotPlain(f"{plain.describe(answer)}; expected a function")
        outputs = []
        for args in ex.cases(seed):
            try:
                with _time_limit(FUNCTION_TIME_LIMIT):
                    out = answer(*copy.deepcopy(args))
                out = plain.to_plain(out)
            except NotImplementedError:
                raise NotAttempted() from None
            except _TimeLimit:
                out = Raised(f"took longer than {FUNCTION_TIME_LIMIT} s (an endless loop?)")
            except NotPlain as e:
                out = Raised(f"returned {e}, which is not a number, array, list, dict or string")
            except Exception as e:  # the learner's bug: report it, never raise it
                out = Raised(f"raised {_exc_message(e)}")
            outputs.append(out)
        return outputs
    if ex.kind == "onnx":
        return _onnx_bytes(answer)
    if ex.kind == "quiz" and isinstance(answer, dict) and all(v is None for v in answer.values()):
        raise NotAttempted()
    return plain.to_plain(answer)


def _judge(ex: Exercise, answer: Any, seed: int) -> Result:
    """Run the verdict on plain data; a judge that trips over odd data reports an error."""
    try:
        tests = list(ex.judge(answer, seed))
    except Exception as e:
        return Result(ex.id, ex.title, "error", 0.0, ex.points,
                      f"could not check this answer: {_exc_message(e)}", [], ex.hint)
    if not tests:
        return Result(ex.id, ex.title, "error", 0.0, ex.points, "the check ran no test", [], ex.hint)
    passed = sum(t.passed for t in tests)
    points = round(ex.points * passed / len(tests), 2)
    if passed == len(tests):
        return Result(ex.id, ex.title, "passed", ex.points, ex.points,
                      f"all {len(tests)} tests passed", tests, ex.hint)
    first = next(t for t in tests if not t.passed)
    return Result(ex.id, ex.title, "failed", points, ex.points,
                  f"{passed}/{len(tests)} tests passed. {first.name}: {first.message}", tests, ex.hint)


def evaluate(ex: Exercise, answer: Any, seed: int = INTERACTIVE_SEED) -> Result:
    """Collect and judge in one go (what a notebook check does)."""
    try:
        data = collect(ex, answer, seed)
    except NotAttempted:
        return not_attempted(ex)
    except NotPlain as e:
        return Result(ex.id, ex.title, "error", 0.0, ex.points, f"Your answer is {e}.", [], ex.hint)
    except Exception as e:
        return Result(ex.id, ex.title, "error", 0.0, ex.points,
                      f"Could not read your answer: {_exc_message(e)}", [], ex.hint)
    return _judge(ex, data, seed)


def judge_saved(ex: Exercise, folder: str | os.PathLike, seed: int) -> Result:
    """Judge an answer the grader's kernel saved to `folder` (plain data only)."""
    folder = Path(folder)
    marker = folder / "status.json"
    if marker.is_file():
        import json

        try:
            info = json.loads(marker.read_text())
            status, message = str(info["status"]), str(info["message"])[:500]
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
        return Result(ex.id, ex.title, "error", 0.0, ex.points, f"unreadable answer: {_exc_message(e)}", [], ex.hint)
    return _judge(ex, data, seed)


def not_attempted(ex: Exercise) -> Result:
    return Result(ex.id, ex.title, "not_attempted", 0.0, ex.points,
                  "Not attempted yet: replace the stub in the answer cell above, run it, then run this cell.",
                  [], ex.hint)


def _save_for_grader(ex: Exercise, answer: Any, folder: Path, seed: int) -> None:
    import json

    folder.mkdir(parents=True, exist_ok=True)
    try:
        plain.save(collect(ex, answer, seed), folder)
    except NotAttempted:
        (folder / "status.json").write_text(json.dumps({"status": "not_attempted", "message": ""}))
    except Exception as e:
        msg = f"Your answer is {e}." if isinstance(e, NotPlain) else f"Could not read your answer: {_exc_message(e)}"
        (folder / "status.json").write_text(json.dumps({"status": "error", "message": msg}))


class Recorded:
    """What a check shows while the grader runs: the answer was recorded, no verdict yet."""

    def __init__(self, id: str):
        self.id = id

    def __repr__(self) -> str:
        return f"{self.id}: answer recorded for grading"


def check(id: str, answer: Any = None) -> Result | Recorded:
    """Check `answer` for exercise `id` and show a pass/fail panel. Never raises."""
    try:
        ex = get(id)
    except Exception:
        known = ", ".join(sorted(REGISTRY)) or "none loaded"
        return Result(str(id), "unknown exercise", "error", 0.0, 0.0,
                      f"There is no exercise {id!r}. Known exercises: {known}.")
    collect_dir = os.environ.get("LABKIT_COLLECT_DIR")
    if collect_dir:  # grading: record plain data, the verdict is decided elsewhere
        seed = int(os.environ.get("LABKIT_SEED", INTERACTIVE_SEED))
        _save_for_grader(ex, answer, Path(collect_dir) / ex.id, seed)
        return Recorded(ex.id)
    try:
        _remember_quiz(ex, answer)
        return evaluate(ex, answer)
    except BaseException as e:  # KeyboardInterrupt included: the panel says what happened
        return Result(ex.id, ex.title, "error", 0.0, ex.points, f"The check was interrupted: {_exc_message(e)}", [], ex.hint)


# ---------------------------------------------------------------- judging helpers


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
    diff = np.abs(arr - want)
    tol = atol + rtol * np.abs(want)
    if np.all((diff <= tol) | (np.isnan(want) & np.isnan(arr)) | (arr == want)):
        return TestResult(name, True, f"matches (max abs difference {float(np.nanmax(diff)):.2g})")
    idx = tuple(int(i) for i in np.unravel_index(np.nanargmax(diff - tol), diff.shape))
    return TestResult(name, False,
                      f"at index {idx} expected {float(want[idx]):.6g}, got {float(arr[idx]):.6g} "
                      f"({int((diff > tol).sum())} of {want.size} values off)")


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
        return None, f"the file is not a valid ONNX model ({_exc_message(e)})"
    if not model.graph.node and not model.graph.output:
        return None, "the ONNX model is empty (no graph)"
    return model, None


def ort_session(model_or_bytes: Any):
    """An ONNX Runtime CPU session on a model (bytes or ModelProto), or raise with a clear message."""
    import onnxruntime as ort

    data = model_or_bytes.data if isinstance(model_or_bytes, OnnxBlob) else (
        model_or_bytes if isinstance(model_or_bytes, bytes) else model_or_bytes.SerializeToString())
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    return ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])


# ---------------------------------------------------------------- rendering

_COLORS = {"passed": "#1a7f37", "failed": "#cf222e", "not_attempted": "#6e7781",
           "error": "#bc4c00", "timeout": "#bc4c00", "missing": "#6e7781"}
_LABELS = {"passed": "Passed", "failed": "Not yet", "not_attempted": "Not attempted",
           "error": "Error", "timeout": "Timed out", "missing": "Missing"}


def panel_html(r: Result) -> str:
    """A compact HTML panel: status, points, each test with its message, a hint on demand."""
    e = html.escape
    color = _COLORS.get(r.status, "#6e7781")
    rows = "".join(
        f"<li style='margin:1px 0'><span style='color:{_COLORS['passed'] if t.passed else _COLORS['failed']}'>"
        f"{'✔' if t.passed else '✘'}</span> <b>{e(t.name)}</b>: {e(t.message)}</li>"
        for t in r.tests)
    tests = f"<ul style='list-style:none;padding-left:0.5em;margin:4px 0'>{rows}</ul>" if rows else ""
    msg = "" if (r.status == "passed" and r.tests) else f"<div style='margin:4px 0'>{e(r.message)}</div>"
    hint = (f"<details style='margin-top:4px'><summary style='cursor:pointer'>Hint</summary>"
            f"<div style='margin-top:2px'>{e(r.hint)}</div></details>") if r.hint and r.status != "passed" else ""
    return (f"<div class='labkit-check labkit-{e(r.status)}' style='border-left:5px solid {color};"
            f"padding:6px 10px;margin:4px 0;background:#f6f8fa;font-family:sans-serif;font-size:13px;color:#24292f'>"
            f"<div><b style='color:{color}'>{_LABELS.get(r.status, r.status)}</b> · <code>{e(r.exercise)}</code> "
            f"{e(r.title)} · <b>{r.points:g}/{r.max_points:g}</b> points</div>{msg}{tests}{hint}</div>")


def quiz_widget(ex: Exercise, initial: Result):
    """Radio buttons per question, a Check button, the panel, and the dict to hand in."""
    import ipywidgets as w

    answers = {}
    given = _last_quiz_answer.get(ex.id, {})
    for q in ex.questions:
        opts = [(f"{k}) {v}", k) for k, v in q.options.items()]
        value = given.get(q.key) if given.get(q.key) in q.options else None
        answers[q.key] = w.RadioButtons(options=opts, value=value, layout=w.Layout(width="auto"))
    panel = w.HTML(panel_html(initial))
    record = w.HTML()

    def current() -> dict:
        return {k: rb.value for k, rb in answers.items()}

    def show_record(*_):
        record.value = ("<div style='font-size:12px'>Graded answer — put this in the answer cell above: "
                        f"<code>{html.escape(repr(current()))}</code></div>")

    def on_check(_):
        panel.value = panel_html(_judge(ex, current(), INTERACTIVE_SEED))
        show_record()

    button = w.Button(description="Check my choices", button_style="primary")
    button.on_click(on_check)
    for rb in answers.values():
        rb.observe(show_record, names="value")
    show_record()
    items = []
    for q in ex.questions:
        items += [w.HTML(f"<b>{html.escape(q.key)}.</b> {html.escape(q.prompt)}"), answers[q.key]]
    return w.VBox(items + [button, panel, record], layout=w.Layout(border="1px solid #d0d7de", padding="6px"))


_last_quiz_answer: dict[str, dict] = {}


def _remember_quiz(ex: Exercise, answer: Any) -> None:
    if ex.kind == "quiz" and isinstance(answer, dict):
        _last_quiz_answer[ex.id] = {k: v.strip().lower() for k, v in answer.items() if isinstance(v, str)}
