"""Lesson 10's test session, learner side: what exercise 10.io_binding's answer is handed
(`plain.Make("labkit.material.l10_bound:bound_session", ...)`). Apart from lesson 10's other material so
that building it imports ONNX Runtime and NumPy only (a confined call's server builds one per case)."""
from __future__ import annotations

import numpy as np

__all__ = ["bound_session"]


def bound_session(model_bytes: bytes, shift: int = 0, rows: int | None = None):
    """A test input of 10.io_binding: a real InferenceSession that runs only through IO binding and
    refuses a run with another binding than the first, a first run with no output buffer bound before it
    (ONNX Runtime would allocate one inside the loop), a run of anything but one batch of `rows` rows
    (the batches stacked into one run is no loop), or a run whose output landed in a new buffer (the
    loop allocated a new output).

    `model_bytes` holds the classifier with its classes rotated by `shift`; each run through the
    session's IO binding turns them back in the bound output buffer. So the session's own outputs
    come only through its binding: run by any other path (the class's run called past this one, the
    C session, a session of the same bytes), the classes stay rotated."""
    import onnxruntime as ort

    class BoundSession(ort.InferenceSession):
        """An InferenceSession whose run() is refused and whose run_with_iobinding() checks that every
        run writes its output to the same buffer as the first."""

        def __init__(self, model_bytes: bytes, shift: int, rows: int | None):
            opts = ort.SessionOptions()
            opts.log_severity_level = 3
            opts.intra_op_num_threads = 1
            super().__init__(model_bytes, opts, providers=["CPUExecutionProvider"])
            self._model_bytes, self._shift, self._rows = model_bytes, shift, rows
            self._first_ptr: int | None = None
            self._binding = None  # the one binding every run must use
            self._kept: list = []  # outputs kept alive, so a new allocation cannot reuse their address
            self.runs = 0

        def run(self, output_names, input_feed, run_options=None):
            raise RuntimeError("this test session runs only through IO binding, not session.run()")

        def run_with_ort_values(self, *args, **kwargs):
            raise RuntimeError("this test session runs only through IO binding")

        def run_with_iobinding(self, iobinding, run_options=None):
            if self._binding is not None and iobinding is not self._binding:
                raise RuntimeError(f"run {self.runs + 1}: a new binding; expected one binding for every batch")
            if self._binding is None:
                bound = iobinding.get_outputs()
                if not len(bound) or not bound[0].has_value():
                    raise RuntimeError("run 1: no output buffer was bound before it, so ONNX Runtime allocates "
                                       "one inside the loop; expected one output buffer, bound before the loop")
            self._binding = iobinding
            super().run_with_iobinding(iobinding, run_options)
            self.runs += 1
            outs = iobinding.get_outputs()
            if not len(outs):
                raise RuntimeError("the binding has no output bound")
            got_rows = outs[0].shape()[0] if outs[0].shape() else None
            if self._rows is not None and got_rows != self._rows:
                raise RuntimeError(f"run {self.runs}: {got_rows} rows in one run, a batch has {self._rows}; "
                                   "expected one batch per run")
            ptr = outs[0].data_ptr()
            self._kept.append(outs[0])
            if self._first_ptr is None:
                self._first_ptr = ptr
            elif ptr != self._first_ptr:
                raise RuntimeError(f"run {self.runs}: the output was written to a new buffer, not the one of the "
                                   "first run; expected one output buffer for every run")
            if self._shift:
                buffer = outs[0].numpy()  # a view of the bound buffer
                buffer[...] = np.roll(buffer, -self._shift, axis=-1)

        def __deepcopy__(self, memo):  # the check copies its inputs before each call
            return type(self)(self._model_bytes, self._shift, self._rows)

    return BoundSession(model_bytes, int(shift), None if rows is None else int(rows))
