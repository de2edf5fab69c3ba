"""Learner side: reduce an answer to plain data (`labkit.plain`) — the only thing a verdict sees.

A function answer is called on the exercise's test inputs and only its outputs are kept. In the
learner's notebook the inputs come from the judge side (`judging.collect_answer` passes them);
in a graded kernel they come from the read-only folder the grader wrote (`LABKIT_INPUTS_DIR`),
because the kernel can import neither the judges nor the seed. Nothing here imports the judges.
"""
from __future__ import annotations

import functools
import importlib
import json
import os
from pathlib import Path
from typing import Any, Callable

from .. import plain
from ..plain import NotPlain, OnnxBlob
from .calls import NotAttempted, call_each, exc_message
from .confine import FUNCTION_FILE, call_confined, function_payload, unsendable
from .registry import Exercise

__all__ = ["COLLECT_ENV", "INPUTS_ENV", "NotAttempted", "collect", "exc_message", "grading_inputs",
           "record_for_grader", "Recorded"]

#: environment of a graded kernel: where answers are recorded, where the test inputs are
COLLECT_ENV = "LABKIT_COLLECT_DIR"
INPUTS_ENV = "LABKIT_INPUTS_DIR"


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
        if ex.tools:
            return call_confined(answer, inputs(), ex.tools)
        return call_each(_caller(ex, answer), inputs())
    if ex.kind == "onnx":
        return _onnx_bytes(answer)
    if ex.kind == "quiz" and isinstance(answer, dict) and all(v is None for v in answer.values()):
        raise NotAttempted()
    return plain.to_plain(answer)


def _caller(ex: Exercise, answer: Callable) -> Callable:
    """What the check calls on each case: the answer, or `ex.call`'s function with the answer bound first."""
    if not ex.call:
        return answer
    module, name = ex.call.split(":")
    return functools.partial(getattr(importlib.import_module(module), name), answer)


def grading_inputs(ex: Exercise) -> list[tuple] | None:
    """In a graded kernel: the test inputs the grader wrote for `ex` (None for other kinds)."""
    if ex.kind != "function":
        return None
    return plain.load_inputs(Path(os.environ[INPUTS_ENV]) / ex.id)


#: a graded kernel records a confined exercise's function in FUNCTION_FILE (`confine`), for the grader to call,
#: or why the function could not be recorded (it holds what cannot leave the kernel: a session...)
UNSENDABLE_FILE = "unsendable.json"


def record_for_grader(ex: Exercise, answer: Any, folder: Path) -> None:
    """Write the collected answer (or why there is none) to `folder` for the verdict process. A confined
    exercise's function is recorded itself (pickled by value): the grader calls it on hidden inputs
    this kernel never sees (`grading.confined`)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        if ex.kind == "function" and ex.tools and answer is not None and answer is not Ellipsis:
            if not callable(answer):
                raise NotPlain(f"{plain.describe(answer)}; expected a function")
            try:
                (folder / FUNCTION_FILE).write_bytes(function_payload(answer))
            except Exception as e:  # every case fails with why, as in the learner's panel (`call_confined`)
                (folder / UNSENDABLE_FILE).write_text(json.dumps(unsendable(e, ex.tools)))
            return
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
