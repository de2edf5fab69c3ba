"""Learner side: reduce an answer to plain data (`labkit.plain`) — the only thing a verdict sees.

A function answer is called on the exercise's test inputs and only its outputs are kept. In the
learner's notebook the inputs come from the judge side (`judging.collect_answer` passes them);
in a graded kernel they come from the read-only folder the grader wrote (`LABKIT_INPUTS_DIR`),
because the kernel can import neither the judges nor the seed. Nothing here imports the judges.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .. import plain
from ..plain import NotPlain, OnnxBlob, Raised
from .registry import Exercise
from ..text import exception_text, for_beginners

#: seconds a learner's function may run on one test input before it is stopped
FUNCTION_TIME_LIMIT = 60
#: environment of a graded kernel: where answers are recorded, where the test inputs are
COLLECT_ENV = "LABKIT_COLLECT_DIR"
INPUTS_ENV = "LABKIT_INPUTS_DIR"


class NotAttempted(Exception):
    """The answer is still the stub (None, `...`, or a function raising NotImplementedError)."""


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


def exc_message(e: BaseException) -> str:
    """`TypeName: first line of the message` (no colour codes, cut at a word), with the real cause when
    `e` wraps another exception (an exporter's error around the learner's own mistake)."""
    return exception_text(e, 360)


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


def _fingerprint(x: Any, depth: int = 0) -> Any:
    """What a caller would see of an argument: arrays (dtype, shape, bytes), ONNX models (their bytes), and
    lists, tuples and dicts of them; None for objects that are not data (sessions, modules...)."""
    if depth > 20:
        return None
    if isinstance(x, np.ndarray):
        return ("array", x.dtype.str, x.shape, x.tobytes())
    if type(x).__name__ == "ModelProto" and hasattr(x, "SerializeToString"):
        return ("onnx", x.SerializeToString(deterministic=True))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_fingerprint(v, depth + 1) for v in x))
    if isinstance(x, dict):
        return ("dict", tuple((repr(k), _fingerprint(v, depth + 1)) for k, v in x.items()))
    if x is None or isinstance(x, (bool, int, float, str, bytes)):
        return ("value", x)
    return None


def changed_argument(before: list, args: tuple) -> str | None:
    """Which argument a call changed in place ("argument 1, the ONNX model"), or None: the caller's data
    must come back as it went in (a function that edits the model it was given breaks its caller's copy)."""
    for i, (fp, arg) in enumerate(zip(before, args)):
        if fp is not None and _fingerprint(arg) != fp:
            what = "the ONNX model" if fp[0] == "onnx" else "the array" if fp[0] == "array" else plain.describe(arg)
            return f"argument {i + 1}, {what}"
    return None


def collect(ex: Exercise, answer: Any, inputs: Callable[[], list[tuple]] | None = None) -> Any:
    """Reduce `answer` to plain data for `ex`. Raises NotAttempted or NotPlain.

    A function answer is called on each test input `inputs()` gives (asked only for a function); its
    outputs come back as `plain.Outputs`, which also records the form of each result (`plain.form`)."""
    if answer is None or answer is Ellipsis:
        raise NotAttempted()
    if ex.kind == "function":
        if not callable(answer):
            raise NotPlain(f"{plain.describe(answer)}; expected a function")
        if inputs is None:
            raise TypeError(f"{ex.id}: a function exercise is collected on its test inputs (inputs=)")
        outputs, forms = [], []
        for args in inputs():
            kind = ""
            try:
                call_args = plain.materialize(tuple(args))
                before = [_fingerprint(a) for a in call_args]
                with _time_limit(FUNCTION_TIME_LIMIT):
                    out = answer(*call_args)
                kind = plain.form(out)
                out = plain.to_plain(out)
                changed = changed_argument(before, call_args)
                if changed:
                    out = Raised(f"changed what it was given in place ({changed}): the caller's copy must stay as "
                                 "it was — work on a copy (copy.deepcopy, or ModelProto.CopyFrom) and return that")
            except NotImplementedError:
                raise NotAttempted() from None
            except _TimeLimit:
                out = Raised(f"took longer than {FUNCTION_TIME_LIMIT} s (an endless loop?)")
            except NotPlain as e:
                out = Raised(f"returned {e}, which is not a number, array, list, dict or string")
            except Exception as e:  # the learner's bug: report it, never raise it
                out = Raised(f"raised {for_beginners(e, exc_message(e))}")
            outputs.append(out)
            forms.append("" if isinstance(out, Raised) else kind)
        return plain.Outputs(outputs, forms)
    if ex.kind == "onnx":
        return _onnx_bytes(answer)
    if ex.kind == "quiz" and isinstance(answer, dict) and all(v is None for v in answer.values()):
        raise NotAttempted()
    return plain.to_plain(answer)


def grading_inputs(ex: Exercise) -> list[tuple] | None:
    """In a graded kernel: the test inputs the grader wrote for `ex` (None for other kinds)."""
    if ex.kind != "function":
        return None
    return plain.load_inputs(Path(os.environ[INPUTS_ENV]) / ex.id)


def record_for_grader(ex: Exercise, answer: Any, folder: Path) -> None:
    """Write the collected answer (or why there is none) to `folder` for the verdict process."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        plain.save(collect(ex, answer, lambda: grading_inputs(ex)), folder)
    except NotAttempted:
        (folder / "status.json").write_text(json.dumps({"status": "not_attempted", "message": ""}))
    except Exception as e:
        msg = f"Your answer is {e}." if isinstance(e, NotPlain) else f"Could not read your answer: {exc_message(e)}"
        (folder / "status.json").write_text(json.dumps({"status": "error", "message": msg}))


class Recorded:
    """What a check shows while the grader runs: the answer was recorded, no verdict yet."""

    def __init__(self, id: str):
        self.id = id

    def __repr__(self) -> str:
        return f"{self.id}: answer recorded for grading"
