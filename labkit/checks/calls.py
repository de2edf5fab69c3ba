"""Learner side: call a learner's function on each test input and keep only plain data.

One way to call an answer, used in the kernel (`collect`) and in the confined child (`confine`): every
call gets fresh arguments, a time limit, and comes back as its output in plain form, or as `Raised`
when it raised, timed out, returned something that is not data, or changed what it was given.
Imports only the standard library, NumPy and `labkit.plain`/`labkit.text`, so a child that may import
nothing else can run it.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Callable, Iterable

import numpy as np

from .. import plain
from ..plain import NotPlain, Raised
from ..text import exception_text, for_beginners

#: seconds a learner's function may run on one test input before it is stopped
FUNCTION_TIME_LIMIT = 60


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


def fingerprint(x: Any, depth: int = 0) -> Any:
    """What a caller would see of an argument: arrays (dtype, shape, bytes), ONNX models (their bytes),
    PyTorch modules (their state and mode), scikit-learn models (their pickle), and lists, tuples and dicts
    of them; None for objects that are not
    data (sessions, modules...)."""
    if depth > 20:
        return None
    if isinstance(x, np.ndarray):
        return ("array", x.dtype.str, x.shape, x.tobytes())
    if type(x).__name__ == "ModelProto" and hasattr(x, "SerializeToString"):
        return ("onnx", x.SerializeToString(deterministic=True))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(fingerprint(v, depth + 1) for v in x))
    if isinstance(x, dict):
        return ("dict", tuple((repr(k), fingerprint(v, depth + 1)) for k, v in x.items()))
    if x is None or isinstance(x, (bool, int, float, str, bytes)):
        return ("value", x)
    if _derives_from(x, "torch.nn.modules.module", "Module"):  # its state (weights and buffers, dtype included) and each submodule's mode
        try:
            state = tuple((k, str(v.dtype), tuple(v.shape), v.detach().cpu().contiguous().numpy().tobytes())
                          for k, v in x.state_dict().items())
            return ("torch", state, tuple(m.training for m in x.modules()))
        except Exception:
            return None
    if _derives_from(x, "sklearn.base", "BaseEstimator"):  # a fitted scikit-learn model: its pickle holds every fitted attribute
        import pickle

        try:
            return ("sklearn", pickle.dumps(x, protocol=5))
        except Exception:
            return None
    return None


def _derives_from(x: Any, module: str, name: str) -> bool:
    """Whether `x` is an instance of the class `module.name`, without importing that module."""
    return any(c.__module__ == module and c.__name__ == name for c in type(x).__mro__)


def changed_argument(before: list, args: tuple) -> str | None:
    """Which argument a call changed in place ("argument 1, the ONNX model"), or None: the caller's data
    must come back as it went in (a function that edits the model it was given breaks its caller's copy)."""
    for i, (fp, arg) in enumerate(zip(before, args)):
        if fp is not None and fingerprint(arg) != fp:
            what = {"onnx": "the ONNX model", "array": "the array", "sklearn": "the scikit-learn model",
                    "torch": "the PyTorch module"}.get(
                fp[0]) or plain.describe(arg)
            return f"argument {i + 1}, {what}"
    return None


def call_each(fn: Callable, cases: Iterable[tuple], time_limit: float = FUNCTION_TIME_LIMIT) -> plain.Outputs:
    """`fn` called on fresh copies of each case's arguments: its outputs in plain form with the form of each
    (`plain.form`), a `Raised` in place of a call that failed. Raises NotAttempted when `fn` is a stub."""
    outputs, forms = [], []
    for args in cases:
        kind = ""
        try:
            call_args = plain.materialize(tuple(args))
            before = [fingerprint(a) for a in call_args]
            with _time_limit(time_limit):
                out = fn(*call_args)
            kind = plain.form(out)
            out = plain.to_plain(out)
            changed = changed_argument(before, call_args)
            if changed:
                out = Raised(f"changed what it was given in place ({changed}): the caller's copy must stay as "
                             "it was — work on a copy (copy.deepcopy, or ModelProto.CopyFrom) and return that")
        except NotImplementedError:
            raise NotAttempted() from None
        except _TimeLimit:
            out = Raised(f"took longer than {time_limit:g} s (an endless loop?)")
        except NotPlain as e:
            out = Raised(f"returned {e}, which is not a number, array, list, dict or string")
        except Exception as e:  # the learner's bug: report it, never raise it
            out = Raised(f"raised {for_beginners(e, exc_message(e))}")
        outputs.append(out)
        forms.append("" if isinstance(out, Raised) else kind)
    return plain.Outputs(outputs, forms)
