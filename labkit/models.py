"""The course CNN for 8x8 digits: its architecture, the shipped trained weights, and a short training loop.

Training gives other weights on another CPU (float sums take other paths on other instruction sets),
so the course ships one trained model inside the package, verified by its SHA-256, and everything
graded, compared or quoted uses it. Only lesson 03 trains, in front of the learner.
Maintainers regenerate the weights with `labkit course-model` (see docs/authoring.md).
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np

from .data import Digits, digits

#: the shipped weights (a plain .npz of the state dict: no pickle) and their SHA-256
WEIGHTS_FILE = Path(__file__).with_name("assets") / "digits_cnn.npz"
WEIGHTS_SHA256 = "5098a55358b00a02574f6ba9f91d1fb3eabae0a47d6351ca4f4901d309d929fd"
#: how the shipped weights were trained (`labkit course-model` uses these)
EPOCHS = 12
SEED = 0


def _torch():
    import torch

    return torch


def DigitsCNN():
    """Conv-BN-ReLU x2, max-pool, then a small classifier with dropout. Input (N, 1, 8, 8) in [0, 1]."""
    nn = _torch().nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Dropout(0.25),
        nn.Linear(64, 10),
    )


def train(model=None, data: Digits | None = None, epochs: int = EPOCHS, seed: int = SEED, progress: bool = True):
    """Train `model` (default: a new DigitsCNN) on the digits with Adam; returns it in eval mode.

    Runs on one thread, so a seed gives the same weights run after run on one machine. Another CPU
    may still give (slightly) other weights: that is why the course ships `trained_cnn()`'s weights.
    """
    torch = _torch()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _train(torch, model, data, epochs, seed, progress)
    finally:
        torch.set_num_threads(threads)


def _train(torch, model, data, epochs, seed, progress):
    from tqdm.auto import tqdm

    torch.manual_seed(seed)
    model = model if model is not None else DigitsCNN()
    data = data or digits()
    x = torch.from_numpy(data.x_train)
    y = torch.from_numpy(data.y_train)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    gen = torch.Generator().manual_seed(seed)
    model.train()
    bar = tqdm(range(epochs), desc="training", disable=not progress, leave=False)
    for _ in bar:
        order = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), 64):
            idx = order[i:i + 64]
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
        bar.set_postfix(loss=f"{loss.item():.3f}")
    return model.eval()


def accuracy(predict, x: np.ndarray, y: np.ndarray) -> float:
    """Share of correct predictions; `predict` maps a float32 batch to logits (torch model or function)."""
    torch = _torch()
    if isinstance(predict, torch.nn.Module):
        with torch.no_grad():
            logits = predict(torch.from_numpy(np.asarray(x))).numpy()
    else:
        logits = np.asarray(predict(x))
    return float((logits.argmax(axis=1) == np.asarray(y)).mean())


class CourseModelError(RuntimeError):
    """The shipped weights are missing or not the ones the course was built with."""


_state: dict | None = None


def read_weights(path: Path = WEIGHTS_FILE, sha256: str = WEIGHTS_SHA256, what: str = "course model",
                 regenerate: str = "labkit course-model") -> dict[str, np.ndarray]:
    """A shipped weights file's arrays, after checking its SHA-256 (no torch needed); `what` and
    `regenerate` name the model and the command that rebuilds it in the error."""
    try:
        blob = path.read_bytes()
    except OSError as e:
        raise CourseModelError(f"the {what}'s weights are missing ({path}): reinstall labkit ({e.strerror})") from None
    got = hashlib.sha256(blob).hexdigest()
    if got != sha256:
        raise CourseModelError(f"{path.name} is not the {what} (SHA-256 {got[:12]}…, expected {sha256[:12]}…): "
                               f"restore it with `git checkout labkit/assets`, or regenerate it with `{regenerate}`")
    import io

    with np.load(io.BytesIO(blob), allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def trained_cnn():
    """The course DigitsCNN with the shipped weights (hash-verified), in eval mode: the same model on every machine."""
    global _state
    torch = _torch()
    if _state is None:
        _state = read_weights()
    model = DigitsCNN()
    model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in _state.items()})
    return model.eval()


def save_weights(arrays: dict[str, np.ndarray], path: Path, module: Path) -> str:
    """Maintainers: write `arrays` to `path` (atomically) and record the file's SHA-256 as
    `WEIGHTS_SHA256 = "..."` in the source of `module`. Returns the SHA-256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as fh:
        np.savez(fh, **arrays)
    tmp.replace(path)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    text = module.read_text()
    module.write_text(re.sub(r'^WEIGHTS_SHA256 = "[0-9a-f@A-Z]*"$', f'WEIGHTS_SHA256 = "{sha}"', text, count=1,
                             flags=re.M))
    return sha


def write_course_model(epochs: int = EPOCHS, seed: int = SEED, path: Path = WEIGHTS_FILE) -> tuple[str, float]:
    """Maintainers: train the course CNN, write its weights to `path` and its SHA-256 into this module.

    Returns the new SHA-256 and the test accuracy. Every committed solution output that shows the
    model's numbers must be refreshed afterwards (`make solutions`).
    """
    global _state
    data = digits()
    model = train(data=data, epochs=epochs, seed=seed, progress=False)
    sha = save_weights({k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}, path, Path(__file__))
    _state = None
    return sha, accuracy(model, data.x_test, data.y_test)
