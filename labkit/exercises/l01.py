"""Lesson 01 exercises, learner side: what each exercise is (no answers, no test inputs).

The judges, references, test inputs and quiz keys are in `labkit_judges/l01.py`, which a graded
kernel cannot import (docs/authoring.md)."""
from __future__ import annotations

from ..checks.registry import Question, declare, quiz

declare("01.sigmoid_model", title="Build Y = Sigmoid(X·W + B)", points=4, kind="onnx",
        hint="Nodes MatMul(X, W) -> Add(·, B) -> Sigmoid(·) -> Y. Give X the shape ['batch', 4] (a string is a "
             "symbolic dimension) and store W and B as initializers with numpy_helper.from_array.")

declare("01.run_both", title="Run a model with onnx.reference and ONNX Runtime", points=3, kind="function",
        hint="ReferenceEvaluator(model_bytes).run(None, {'X': x})[0] and InferenceSession(model_bytes, "
             "providers=['CPUExecutionProvider']).run(None, {'X': x})[0].")

declare("01.versions", title="Read the IR version and the opset", points=2, kind="function",
        hint="Parse with onnx.load_from_string. ir_version is a field of the model; the opset is in "
             "model.opset_import: pick the entry whose domain is '' (the default ai.onnx domain).")

quiz("01.quiz", title="What ONNX is", points=4, questions=[
    Question("q1", "What is ONNX?",
             {"a": "A runtime that executes models fast",
              "b": "A file format: a graph of standard operators plus weights",
              "c": "A framework for training neural networks"}),
    Question("q2", "A model imports opset 21 of the default domain. What does 21 fix?",
             {"a": "The version of the file format (protobuf layout)",
              "b": "Which version of each operator's definition the graph uses",
              "c": "The minimum ONNX Runtime version"}),
    Question("q3", "Why give the input the shape ['batch', 4] instead of [2, 4]?",
             {"a": "So the same model accepts any number of rows at run time",
              "b": "Because ONNX forbids fixed shapes",
              "c": "Because it makes the file smaller"}),
    Question("q4", "When would you use onnx.reference instead of ONNX Runtime?",
             {"a": "To serve a model in production",
              "b": "To check what the specification says an operator computes",
              "c": "To run on a GPU"}),
])
