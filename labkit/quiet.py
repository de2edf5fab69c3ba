"""Silence the chatter of exporters and runtimes so a notebook shows results, not logs — but keep
the warnings a lesson is about."""
from __future__ import annotations

import contextlib
import io
import logging
import re
import warnings
from typing import Iterator, Sequence, Union

#: what `quiet(show=...)` and `Captured.about(...)` accept: a warning class (its subclasses match too)
#: or a piece of the message (case-insensitive)
About = Union[type, str]


class Captured(io.StringIO):
    """What a `quiet()` block said: `.getvalue()` is what it printed, `.warnings` every warning it raised
    (`warnings.WarningMessage`: `.category`, `.message`, `.filename`, `.lineno`), `.records` the log
    records of level WARNING and above it emitted (`logging.LogRecord`), each in order."""

    def __init__(self) -> None:
        super().__init__()
        self.warnings: list[warnings.WarningMessage] = []
        self.records: list[logging.LogRecord] = []

    def transcript(self) -> str:
        """Everything the block would have shown without `quiet()`: prints, log records (with their
        tracebacks) and warnings, as text."""
        fmt = logging.Formatter("%(levelname)s %(name)s: %(message)s")
        parts = [self.getvalue().rstrip("\n")] if self.getvalue() else []
        parts += [fmt.format(r) for r in self.records]
        parts += self.summary()
        return "\n".join(parts)

    def about(self, *what: About) -> list[warnings.WarningMessage]:
        """The captured warnings matching any of `what` (a category, or text found in the message)."""
        return [w for w in self.warnings if _matches(w, what)]

    def summary(self, *what: About) -> list[str]:
        """One line per matching warning: 'Category: message' (all warnings when `what` is empty)."""
        found = self.about(*what) if what else self.warnings
        return [f"{w.category.__name__}: {' '.join(str(w.message).split())}" for w in found]


def _matches(w: warnings.WarningMessage, what: Sequence[About]) -> bool:
    text = str(w.message).lower()
    for item in what:
        if isinstance(item, type) and issubclass(w.category, item):
            return True
        if isinstance(item, str) and item.lower() in text:
            return True
    return False


def _short_path(filename: str) -> str:
    """A source path that reads the same on every machine: from the package down (…/site-packages/torch/x.py -> torch/x.py)."""
    return re.split(r"[\\/](?:site|dist)-packages[\\/]", filename)[-1]


@contextlib.contextmanager
def quiet(show: Sequence[About] = ()) -> Iterator[Captured]:
    """Swallow prints, log records and warnings inside the block; yields a `Captured` that keeps them all.

    Every warning is recorded in `captured.warnings` (even one Python would show only once), none is
    printed inside the block. Those matching `show` — a warning class, or a piece of the message —
    are re-emitted when the block ends, through `warnings` (so filters and `pytest.warns` see them),
    with their source path shortened to the package (`torch/onnx/...`). Use it around
    `torch.onnx.export`, whose progress lines and deprecation warnings would otherwise fill the
    notebook, while keeping the one warning the lesson is about:

        with labkit.quiet(show=["training mode"]):
            torch.onnx.export(model, (x,), dynamo=True)

    Errors still raise (the warnings matching `show` are re-emitted first).
    """
    if isinstance(show, (str, type)):
        show = (show,)
    captured = Captured()
    call_handlers = logging.Logger.callHandlers
    # every log record goes to `captured.records` instead of the handlers (torch's own handlers
    # hold the real stderr, which redirect_stderr does not reach)
    # (debug-level trace records, which no handler shows, are dropped)
    def keep(logger: logging.Logger, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            captured.records.append(record)

    logging.Logger.callHandlers = keep  # type: ignore[method-assign]
    try:
        with warnings.catch_warnings(record=True) as record, contextlib.redirect_stdout(captured), \
                contextlib.redirect_stderr(captured):
            warnings.simplefilter("always")
            try:
                yield captured
            finally:
                captured.warnings = list(record)
    finally:
        logging.Logger.callHandlers = call_handlers  # type: ignore[method-assign]
        for w in captured.about(*show) if show else ():
            with warnings.catch_warnings():
                warnings.simplefilter("always")
                warnings.warn_explicit(w.message, w.category, _short_path(w.filename), w.lineno)
