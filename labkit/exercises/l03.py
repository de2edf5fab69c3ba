"""Lesson 03 exercises, learner side: what each exercise is (no answers, no test inputs).

The judges, references, test inputs and quiz keys are in `labkit_judges/l03.py`, which a graded
kernel cannot import (docs/authoring.md)."""
from __future__ import annotations

from ..checks.registry import Question, declare, quiz

declare("03.dynamic_batch", title="Export the CNN with a dynamic batch", points=4, kind="onnx",
        hint="program = torch.onnx.export(model, (example,), dynamo=True, dynamic_shapes={'input': {0: "
             "'batch'}}) then program.save(path). The key is the name of forward's argument (nn.Sequential "
             "calls it 'input').")

declare("03.eval_fix", title="Fix the train-mode export", points=4, kind="onnx",
        hint="A module built with DigitsCNN() starts in training mode and load_state_dict does not change that."
             " Call .eval() on it before exporting (and before computing the PyTorch reference).")

declare("03.raw_input", title="Bake the preprocessing into the model", points=4, kind="onnx",
        hint="Wrap the CNN in a module whose forward does net(pixels.to(torch.float32) / 16), export the "
             "wrapper with a uint8 example such as torch.from_numpy(raw.x_test[:4]) and a dynamic batch.")

quiz("03.quiz", title="Explain a parity failure", points=4, questions=[
    Question("q1", "assert_allclose between PyTorch and ONNX Runtime fails with differences near 1, and calling"
                   " the PyTorch model twice on the same batch gives two different answers. Most likely cause?",
             {"a": "ONNX Runtime rounds float32 differently from PyTorch",
              "b": "The model is in training mode: dropout is active and BatchNorm uses batch statistics",
              "c": "The opset version is too old"}),
    Question("q2", "ONNX Runtime says 'Got invalid dimensions for input ... index: 0 Got: 7 Expected: 1'. What "
                   "fixes it?",
             {"a": "Pad every request to batch size 1",
              "b": "Export again with a symbolic batch dimension (dynamic_shapes, or dynamic_axes in the legacy"
                   " exporter)",
              "c": "Set the session's graph optimization level to ORT_ENABLE_ALL"}),
    Question("q3", "forward() contains `if x.sum() > 0:`. The legacy exporter (dynamo=False) succeeds. What did"
                   " it export?",
             {"a": "Both branches and an If node",
              "b": "Only the branch the example input took; the condition is gone",
              "c": "Nothing: it raises"}),
    Question("q4", "After a correct export, ONNX Runtime and PyTorch differ by at most 3e-6 on logits around "
                   "10. What now?",
             {"a": "Fine: float32 kernels round differently; compare with assert_allclose and sensible rtol/atol",
              "b": "The export is broken: outputs must be bit-identical",
              "c": "Retrain the model"}),
])
