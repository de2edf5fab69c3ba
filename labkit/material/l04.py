"""Lesson 04 material, learner side: what the notebook hands out and the factories a graded kernel
builds test inputs with (`plain.Make("labkit.material.l04:name", ...)`). No answers, no test inputs.

Written by hand (the notebooks import it); the generated `labkit/exercises/lNN.py`
holds only declarations."""
from __future__ import annotations

import numpy as np

__all__ = ["CPU", "limited_session"]


# ---------------------------------------------------------------- test harness (built in the learner's kernel)

CPU = "CPUExecutionProvider"


def limited_session(model_bytes: bytes, max_rows: int):
    """A test input of 04.predict: a session that, like a device short of memory, takes at most
    `max_rows` images per run() (built in the learner's kernel from the model bytes)."""
    import onnxruntime as ort

    class LimitedSession(ort.InferenceSession):
        """A real InferenceSession that, like a device short of memory, takes at most `max_rows` per run()."""

        def __init__(self, model_bytes: bytes, max_rows: int):
            opts = ort.SessionOptions()
            opts.log_severity_level = 3
            opts.intra_op_num_threads = 1
            super().__init__(model_bytes, opts, providers=[CPU])
            self._model_bytes = model_bytes
            self.max_rows = max_rows

        def run(self, output_names, input_feed, run_options=None):
            for value in dict(input_feed).values():
                rows = np.shape(value)[0] if np.ndim(value) else 0
                if rows > self.max_rows:
                    raise RuntimeError(f"this test session accepts at most batch_size={self.max_rows} images per "
                                       f"run() call, got {rows}")
            return super().run(output_names, input_feed, run_options)

        def __deepcopy__(self, memo):  # the check copies its inputs before each call
            return type(self)(self._model_bytes, self.max_rows)

    return LimitedSession(model_bytes, max_rows)
