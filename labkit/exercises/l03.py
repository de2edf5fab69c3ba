"""Lesson 03 exercises, learner side: what each exercise is (no answers, no test inputs).

The judges, references, test inputs and quiz keys are in `labkit_judges/l03.py`, which a graded
kernel cannot import (docs/authoring.md). `make_net` builds the PyTorch side of `03.faithful`'s test
cases in the learner's kernel from plain arrays."""
from __future__ import annotations

import numpy as np

from ..checks.registry import Question, declare, quiz

declare("03.dynamic_batch", title="Export the course CNN with a dynamic batch", points=4, kind="onnx",
        hint=[
            'Export the course model in eval mode with its first dimension declared dynamic, and keep the weights inside the one file.',
            "torch.onnx.export(..., dynamo=True, dynamic_shapes=...) keyed by the name of forward's argument; program.save(path).",
        ])

declare("03.faithful", title="Decide whether an export is faithful", points=4, kind="function",
        hint=[
            'An export is faithful when both run on inputs it never saw, at batch sizes on both sides of any branch, and agree within a relative tolerance; a run that fails means not faithful.',
            'onnxruntime.InferenceSession on onnx_model.SerializeToString(), the net under torch.no_grad(), and np.allclose with rtol and atol.',
        ])

declare("03.raw_input", title="Bake the preprocessing into the model", points=4, kind="onnx",
        hint=[
            'Put the preprocessing inside the model: a wrapper module whose forward turns raw uint8 pixels into what the CNN expects, exported with a uint8 example and a dynamic batch.',
            'torch.nn.Module with forward(pixels); Tensor.to(torch.float32); torch.onnx.export(..., dynamo=True, dynamic_shapes=...).',
        ])

declare("03.custom_op", title="Translate a custom operator to standard ONNX", points=4, kind="function",
        hint=[
            'Write soft-thresholding with standard operators: the sign of x times how far |x| lies beyond the threshold (never below 0); export the module with the threshold it was given.',
            'An onnxscript function using op.Sign, op.Abs, op.Sub, op.Relu, op.Mul (or op.Where); torch.onnx.export(..., custom_translation_table=..., dynamic_shapes=...) and program.model_proto.',
        ])

quiz("03.quiz", title="Exports that lie, and how to catch them", points=4, questions=[
    Question("q1", "forward() contains `if x.shape[0] > 4:`. You export with dynamo=True, an example batch of 8 and "
                   "dynamic_shapes={'x': {0: 'batch'}}. No error, no warning. What is in the file?",
             {"a": "A symbolic batch dimension and only the branch batch 8 took: batch 2 gets the wrong result",
              "b": "An If node on the batch size, so every batch takes the right branch",
              "c": "Nothing: dynamo refuses any if statement in forward"}),
    Question("q2", "assert_allclose between PyTorch and ONNX Runtime fails with differences near 1, and calling the "
                   "PyTorch model twice on the same batch gives two different answers. Most likely cause?",
             {"a": "ONNX Runtime rounds float32 differently from PyTorch",
              "b": "The opset version is too old for the model",
              "c": "The model is in training mode: dropout is active and BatchNorm uses batch statistics"}),
    Question("q3", "ONNX Runtime says 'Got invalid dimensions for input ... index: 0 Got: 7 Expected: 1'. What fixes it?",
             {"a": "Pad every request to batch size 1",
              "b": "Export again with a symbolic batch dimension (dynamic_shapes; dynamic_axes in the legacy exporter)",
              "c": "Set the session's graph optimization level to ORT_ENABLE_ALL"}),
    Question("q4", "A correct export differs from PyTorch by a few millionths on logits around 10. How do you test exports "
                   "in general?",
             {"a": "assert_allclose with a relative and an absolute tolerance (rtol=1e-3, atol=1e-5)",
              "b": "Require bit-identical outputs: any difference means the export is broken",
              "c": "Require every difference below 1e-5 in absolute value"}),
    Question("q5", "forward() contains `if x.sum() > 0:`. What does torch.onnx.export(..., dynamo=True) do?",
             {"a": "Exports both branches and an If node",
              "b": "Keeps the branch the example input took, silently",
              "c": "Fails: it cannot guard on a data-dependent value (rewrite with torch.where or torch.cond)"}),
    Question("q6", "torch.onnx.export(model, (x,), 'model.onnx', dynamo=True) ran; you copy model.onnx to a phone and "
                   "loading fails. Why?",
             {"a": "ONNX compresses the model and the phone cannot decompress it",
              "b": "The weights went to model.onnx.data next to it: copy both, or save with program.save(path)",
              "c": "Phones need opset 14, and dynamo wrote opset 18"}),
])


# ---------------------------------------------------------------- test harness (built in the learner's kernel)

def make_net(kind: str, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray, threshold: int):
    """The PyTorch model of one `03.faithful` test case, in eval mode, from plain weights.

    `kind` is "mlp" (Linear-ReLU-Linear), "branchy" (the same, doubled when the batch is larger than
    `threshold`) or "prescaled" (the same on raw 0..16 pixels: forward divides them by 16 first).
    """
    import torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(w1.shape[1], w1.shape[0])
            self.fc2 = torch.nn.Linear(w2.shape[1], w2.shape[0])
            with torch.no_grad():
                for p, v in ((self.fc1.weight, w1), (self.fc1.bias, b1), (self.fc2.weight, w2), (self.fc2.bias, b2)):
                    p.copy_(torch.from_numpy(np.asarray(v, dtype=np.float32)))

        def forward(self, x):
            if kind == "prescaled":
                x = x / 16
            y = self.fc2(torch.relu(self.fc1(x)))
            if kind == "branchy" and x.shape[0] > threshold:
                return y * 2
            return y

    return Net().eval()
