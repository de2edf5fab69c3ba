"""The course's data: scikit-learn's 8x8 handwritten digits, shipped with the package (no download)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: raw digit pixels are integers 0..16 (how dark each 4x4 block of the scanned digit is)
PIXEL_MAX = 16.0
SPLIT_SEED = 0
TEST_FRACTION = 0.25


class Digits(NamedTuple):
    """Train/test split. Images are (N, 1, 8, 8): float32 in [0, 1], or uint8 0..16 when raw."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def digits(raw: bool = False) -> Digits:
    """The fixed, stratified 75/25 split of the 1,797 digits (same split in every lesson)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    images = d.images.astype(np.uint8)[:, None, :, :]
    xtr, xte, ytr, yte = train_test_split(
        images, d.target.astype(np.int64), test_size=TEST_FRACTION, random_state=SPLIT_SEED, stratify=d.target)
    if not raw:
        xtr, xte = normalize(xtr), normalize(xte)
    return Digits(xtr, ytr, xte, yte)


def normalize(raw_pixels: np.ndarray) -> np.ndarray:
    """Raw 0..16 pixels to the float32 [0, 1] images the course CNN is trained on."""
    return (np.asarray(raw_pixels, dtype=np.float32) / PIXEL_MAX).astype(np.float32)
