"""The course CNN for 8x8 digits and a short, seeded training loop (seconds on a laptop CPU)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .data import Digits, cache_dir, cache_write, digits


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
    """Train `model` (default: a new DigitsCNN) on the digits with Adam; returns it in eval mode.

    Runs on one thread: float sums then happen in one order, so a seed gives the same weights on
    every run (with more threads they depend on the thread count). On this tiny CNN it costs no time.
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


_cache: dict = {}


def _weights_file(epochs: int, seed: int) -> Path:
    return cache_dir() / f"digits_cnn-e{epochs}-s{seed}-torch{_torch().__version__.split('+')[0]}.pt"


def _load_weights(path: Path):
    torch = _torch()
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        DigitsCNN().load_state_dict(state)  # refuses a file from another architecture
        return state
    except Exception:  # missing, truncated or foreign: train again
        return None


def trained_cnn(epochs: int = 12, seed: int = 0, progress: bool = True):
    """The course DigitsCNN trained with a fixed seed, once per machine.

    The weights are kept in `cache_dir()`, so every lesson (and the grader) uses the same model and
    only the first call pays the few seconds of training.
    """
    key = (epochs, seed)
    if key not in _cache:
        path = _weights_file(epochs, seed)
        state = _load_weights(path)
        if state is None:
            model = train(epochs=epochs, seed=seed, progress=progress)
            state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            cache_write(path, lambda fh: _torch().save(state, fh))
        _cache[key] = state
    model = DigitsCNN()
    model.load_state_dict(_cache[key])
    return model.eval()
