"""Lesson 10 exercises, learner side: what each exercise is (no answers, no test inputs), the custom
transformer the lesson hands out, and the harness factories a graded kernel builds its test inputs with.

The judges, references, test inputs and quiz keys are in `labkit_judges/l10.py`, which a graded
kernel cannot import (docs/authoring.md)."""
from __future__ import annotations

from typing import Any

import numpy as np

from sklearn.base import BaseEstimator, TransformerMixin

from ..checks.registry import Question, declare, quiz

declare("10.to_onnx", title="A scikit-learn model to ONNX, probabilities as an array", points=3, kind="function",
        hint=["A converter needs the type and shape of the input (float32, with a batch dimension left open), "
              "and a classifier's default output is a list of dicts, not an array: ask the converter for plain "
              "probabilities.",
              "skl2onnx.to_onnx(model, X_sample) reads the input type from a sample; its `options=` argument, keyed "
              "by id() of the classifier step, turns ZipMap off."])

declare("10.custom_converter", title="A converter for a transformer skl2onnx does not know", points=3,
        kind="function",
        hint=["skl2onnx knows a class only once it is registered with two functions: one that says the output's "
              "type and shape, one that writes the ONNX nodes. Per-feature bounds are a vector, which ONNX's Clip "
              "does not take.",
              "skl2onnx's update_registered_converter; read the fitted attributes from operator.raw_operator; "
              "elementwise Max and Min broadcast a vector over rows."])

declare("10.placement", title="Predict which provider runs each node", points=2, kind="function",
        hint=["ONNX Runtime offers the graph to the providers in the order you list them: each one claims the "
              "nodes it supports that no earlier one claimed; what is left falls back to the CPU provider, unless "
              "fallback is switched off.",
              "A provider this build does not have is skipped; with session.disable_cpu_ep_fallback set, a node "
              "left for the CPU makes session creation fail (answer None)."])

declare("10.io_binding", title="A loop that allocates nothing new", points=3, kind="function",
        hint=["Allocate once, outside the loop: bind the output to a buffer you created, and inside the loop only "
              "change the input and run. An OrtValue's numpy() is a view of the bound buffer, which the next run "
              "overwrites.",
              "session.io_binding(), OrtValue.ortvalue_from_shape_and_type, bind_ortvalue_output, bind_cpu_input, "
              "run_with_iobinding."])

quiz("10.quiz", title="Beyond PyTorch", points=5, questions=[
    Question("q1", "skl2onnx's default classifier output 'output_probability' arrives in Python as a list of dicts. Why?",
             {"a": "ONNX Runtime cannot return float arrays for classifiers",
              "b": "The converter ends the graph with a ZipMap node, whose output type is seq(map(int64, tensor(float))); options={id(clf): {'zipmap': False}} gives a plain (N, classes) tensor",
              "c": "The probabilities were computed in float64"}),
    Question("q2", "A StandardScaler + RandomForest pipeline converted with float32 input gives other probabilities than scikit-learn on a few test digits: some trees voted for another class. What is the likeliest cause?",
             {"a": "scikit-learn scales in float64, the ONNX graph in float32; a scaled value within rounding of a split threshold takes the other branch",
              "b": "ONNX Runtime drops some trees of the forest to save time",
              "c": "The ONNX model was exported with a fixed batch size"}),
    Question("q3", "You create a session with providers=['XnnpackExecutionProvider', 'CPUExecutionProvider']. Which nodes run on XNNPACK?",
             {"a": "All of them: the first provider in the list runs the whole graph",
              "b": "None: the CPU provider is always preferred",
              "c": "Those XNNPACK says it supports, offered to it first; every other node falls back to the next provider, here the CPU"}),
    Question("q4", "You set the session config entry session.disable_cpu_ep_fallback = '1' and ask only for an accelerator provider that does not support one node of the model. What happens?",
             {"a": "Session creation fails with an error saying nodes are assigned to the CPU EP but fallback is disabled",
              "b": "The node runs on the CPU anyway, with a warning",
              "c": "The node is skipped and its output filled with zeros"}),
    Question("q5", "On a CPU-only machine, IO binding with a pre-allocated output saves little per call. When does it matter most?",
             {"a": "Never: it only changes the API",
              "b": "When the model has many nodes",
              "c": "When the provider keeps data on a GPU: binding device buffers avoids copying inputs and outputs between host and device on every call"}),
    Question("q6", "A pipeline holds a transformer you wrote yourself, and skl2onnx.to_onnx raises 'Unable to find a shape calculator for type ...'. What is the fix?",
             {"a": "Convert it with a higher target_opset",
              "b": "Register a shape calculator and a converter for the class with update_registered_converter, writing the transformer's maths as ONNX nodes",
              "c": "Use zipmap=False"}),
])


# ---------------------------------------------------------------- lesson material (the exercise's transformer)


class PerFeatureClip(TransformerMixin, BaseEstimator):
    """A scikit-learn transformer that clips each feature to its own range, learned in `fit`: the `q`
    and `1 - q` quantiles of that feature (`lo_`, `hi_`, float32 arrays of n_features). skl2onnx has
    no converter for it: exercise 10.custom_converter writes one."""

    def __init__(self, q: float = 0.05):
        self.q = q

    def fit(self, X: np.ndarray, y: Any = None) -> "PerFeatureClip":
        X = np.asarray(X, dtype=np.float64)
        self.lo_ = np.quantile(X, self.q, axis=0).astype(np.float32)
        self.hi_ = np.quantile(X, 1 - self.q, axis=0).astype(np.float32)
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        return np.minimum(np.maximum(np.asarray(X, dtype=np.float32), self.lo_), self.hi_)


# ---------------------------------------------------------------- test harness (built in the learner's kernel)

#: the kinds of fitted model 10.to_onnx and 10.custom_converter are called on
MODEL_KINDS = ("scaler+logreg", "logreg", "tree", "clip+logreg", "clip+scaler+logreg")


def fitted_model(kind: str, x: np.ndarray, y: np.ndarray):
    """A scikit-learn model of `kind` fitted on (x, y): the test input of 10.to_onnx and
    10.custom_converter (built in the kernel from plain arrays; the fit is deterministic)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    if kind == "scaler+logreg":
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))
    elif kind == "logreg":
        model = LogisticRegression(max_iter=500)
    elif kind == "tree":
        model = DecisionTreeClassifier(max_depth=5, random_state=0)
    elif kind == "clip+logreg":
        model = make_pipeline(PerFeatureClip(0.1), LogisticRegression(max_iter=500))
    elif kind == "clip+scaler+logreg":
        model = make_pipeline(PerFeatureClip(0.05), StandardScaler(), LogisticRegression(max_iter=500))
    else:
        raise ValueError(f"unknown model kind {kind!r}; known: {MODEL_KINDS}")
    return model.fit(np.asarray(x, dtype=np.float32), np.asarray(y))


def bound_session(model_bytes: bytes):
    """A test input of 10.io_binding: a real InferenceSession that runs only through IO binding and
    refuses a run whose output landed in a new buffer (the loop allocated a new output)."""
    import onnxruntime as ort

    class BoundSession(ort.InferenceSession):
        """An InferenceSession whose run() is refused and whose run_with_iobinding() checks that every
        run writes its output to the same buffer as the first."""

        def __init__(self, model_bytes: bytes):
            opts = ort.SessionOptions()
            opts.log_severity_level = 3
            opts.intra_op_num_threads = 1
            super().__init__(model_bytes, opts, providers=["CPUExecutionProvider"])
            self._model_bytes = model_bytes
            self._first_ptr: int | None = None
            self._kept: list = []  # outputs kept alive, so a new allocation cannot reuse their address
            self.runs = 0

        def run(self, output_names, input_feed, run_options=None):
            raise RuntimeError("this test session runs only through IO binding: use session.io_binding() "
                               "and session.run_with_iobinding(binding), not session.run()")

        def run_with_ort_values(self, *args, **kwargs):
            raise RuntimeError("this test session runs only through IO binding (run_with_iobinding)")

        def run_with_iobinding(self, iobinding, run_options=None):
            super().run_with_iobinding(iobinding, run_options)
            self.runs += 1
            outs = iobinding.get_outputs()
            if not len(outs):
                raise RuntimeError("the binding has no output bound: bind one with bind_ortvalue_output "
                                   "(or bind_output)")
            ptr = outs[0].data_ptr()
            self._kept.append(outs[0])
            if self._first_ptr is None:
                self._first_ptr = ptr
            elif ptr != self._first_ptr:
                raise RuntimeError(f"run {self.runs}: the output was written to a new buffer, not the one of the "
                                   "first run — bind one output once, before the loop, and reuse the binding")

        def __deepcopy__(self, memo):  # the check copies its inputs before each call
            return type(self)(self._model_bytes)

    return BoundSession(model_bytes)
