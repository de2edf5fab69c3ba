"""Silence the chatter of exporters and runtimes so a notebook shows results, not logs."""
from __future__ import annotations

import contextlib
import io
import logging
import warnings
from typing import Iterator


@contextlib.contextmanager
def quiet() -> Iterator[io.StringIO]:
    """Swallow prints, warnings and log records inside the block; yields what was printed.

    Errors still raise. Use it around `torch.onnx.export`, whose progress lines and
    deprecation warnings would otherwise fill the notebook.
    """
    buf = io.StringIO()
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            warnings.simplefilter("ignore")
            yield buf
    finally:
        logging.disable(previous)
