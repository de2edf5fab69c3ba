"""Lesson 03 material, learner side: what the notebook hands out and the factories a graded kernel
builds test inputs with (`plain.Make("labkit.material.l03:name", ...)`). No answers, no test inputs.

Written by hand (the notebooks import it); the generated `labkit/exercises/lNN.py`
holds only declarations."""
from __future__ import annotations

import numpy as np

__all__ = ["make_net"]


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
