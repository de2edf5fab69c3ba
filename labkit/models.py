"""The course CNN for 8x8 digits and a short, seeded training loop (seconds on a laptop CPU)."""
from __future__ import annotations

import numpy as np

from .data import Digits, digits


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


def train(model=None, data: Digits | None = None, epochs: int = 12, seed: int = 0, progress: bool = True):
    """Train `model` (default: a new DigitsCNN) on the digits with Adam; returns it in eval mode."""
    torch = _torch()
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


_cache: dict = {}


def trained_cnn(epochs: int = 12, seed: int = 0, progress: bool = True):
    """A DigitsCNN trained once per process with a fixed seed (lessons share the same weights)."""
    torch = _torch()
    key = (epochs, seed)
    if key not in _cache:
        _cache[key] = {k: v.clone() for k, v in train(epochs=epochs, seed=seed, progress=progress).state_dict().items()}
    model = DigitsCNN()
    model.load_state_dict(_cache[key])
    return model.eval()
