"""Lesson 04 exercises, learner side: what each exercise is (no answers, no test inputs).

The judges, references, test inputs and quiz keys are in `labkit_judges/l04.py`, which a graded
kernel cannot import (docs/authoring.md)."""
from __future__ import annotations

import numpy as np

from ..checks.registry import Question, declare, quiz

declare("04.predict", title="Batched predictions with one session", points=3, kind="function",
        hint=[
            'Run the images in slices of at most batch_size, keep the predicted class of each, join the pieces; zero images is a valid input.',
            'session.get_inputs()[0].name, session.run(None, feed), argmax over the classes, np.concatenate.',
        ])

declare("04.top_operator", title="Read the top operator from a profile", points=3, kind="function",
        hint=[
            'A profile is a list of timed events; only the node events count, grouped by operator type (not node name), their durations summed over all runs.',
            "json.load; an event's 'cat', 'dur' and args['op_name']; a dict or collections.Counter of totals.",
        ])

declare("04.choose_providers", title="Choose execution providers with a fallback", points=2, kind="function",
        hint=[
            'Keep the preference order, skip what this machine does not have, never list a provider twice, and always end with the CPU, which runs everything.',
            "A loop over `preferred` with a membership test in `available`; 'CPUExecutionProvider'.",
        ])

quiz("04.quiz", title="Running models with ONNX Runtime", points=4, questions=[
    Question("q1", "You ask for providers=['CUDAExecutionProvider', 'CPUExecutionProvider'] and session.get_providers() returns ['CPUExecutionProvider']. What happened?",
             {"a": "The model runs on the GPU anyway", "b": "This onnxruntime build has no CUDA provider, so ORT warned and used the CPU", "c": "get_providers() only lists the last provider you asked for"}),
    Question("q2", "Why create one InferenceSession and reuse it for every request?",
             {"a": "Creating a session loads, checks and optimizes the graph, which costs far more than one run", "b": "A process may create only one session", "c": "A reused session gives more accurate results"}),
    Question("q3", "When does SessionOptions.inter_op_num_threads change anything?",
             {"a": "Always: it is the main thread setting", "b": "Only on GPUs", "c": "Only with execution_mode = ORT_PARALLEL, which runs independent nodes at the same time"}),
    Question("q4", "In ONNX Runtime's profile trace, where is the operator type of a node event?",
             {"a": "In event['args']['op_name']", "b": "In the event's name", "c": "In event['cat']"}),
    Question("q5", "After the export, cnn.onnx is about 12 KiB although the CNN has tens of thousands of float32 parameters. Why?",
             {"a": "ONNX compresses the weights", "b": "ONNX Runtime downloads the weights when the session is created", "c": "The exporter wrote the weights to cnn.onnx.data (external data) next to it; the .onnx file holds the graph"}),
])


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
                                       f"run() call, got {rows}: split the images into batches")
            return super().run(output_names, input_feed, run_options)

        def __deepcopy__(self, memo):  # the check copies its inputs before each call
            return type(self)(self._model_bytes, self.max_rows)

    return LimitedSession(model_bytes, max_rows)
