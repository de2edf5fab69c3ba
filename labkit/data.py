"""The course's data: scikit-learn's 8x8 handwritten digits, shipped with the package (no download)."""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import BinaryIO, Callable, NamedTuple

import numpy as np

#: raw digit pixels are integers 0..16 (how dark each 4x4 block of the scanned digit is)
PIXEL_MAX = 16.0
SPLIT_SEED = 0
TEST_FRACTION = 0.25
#: SHA-256 of the raw split's arrays (`split_sha256`): a cached split that does not match is rebuilt
SPLIT_SHA256 = "ca6aa695b84bbf6cc1b65e38878ecbb0d28131ee79f1e038bf6a77c6d2512ca4"


class Digits(NamedTuple):
    """Train/test split. Images are (N, 1, 8, 8): float32 in [0, 1], or uint8 0..16 when raw."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def cache_dir() -> Path:
    """Where the course keeps what it computes once per machine: $LABKIT_CACHE, else ~/.cache/onnx-lab."""
    if os.environ.get("LABKIT_CACHE"):
        return Path(os.environ["LABKIT_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "onnx-lab"


def digits(raw: bool = False) -> Digits:
    """The fixed, stratified 75/25 split of the 1,797 digits (same split in every lesson)."""
    d = _raw_split()
    if raw:
        return Digits(*(a.copy() for a in d))
    return Digits(normalize(d.x_train), d.y_train.copy(), normalize(d.x_test), d.y_test.copy())


def _split_file() -> Path:
    return cache_dir() / f"digits-split-s{SPLIT_SEED}-t{TEST_FRACTION}.npz"


def split_sha256(d: Digits) -> str:
    """SHA-256 of a split's arrays (names, dtypes, shapes and bytes): what the course checks before use."""
    h = hashlib.sha256()
    for name, a in zip(Digits._fields, d):
        a = np.ascontiguousarray(a)
        h.update(f"{name}:{a.dtype.str}:{a.shape};".encode())
        h.update(a.tobytes())
    return h.hexdigest()


#: the verified split of this process, by (file, mtime, size): read-only arrays (callers copy them)
_VERIFIED: dict[tuple, Digits] = {}


def _raw_split() -> Digits:
    """The split as raw uint8 arrays: from the cache when it verifies (importing scikit-learn costs
    ~1.5 s per kernel), else rebuilt from scikit-learn and verified against `SPLIT_SHA256`. Once read
    and verified, a process keeps it until the file changes (a judge asks for it many times)."""
    path = _split_file()
    try:
        st = path.stat()
        key = (str(path), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    if key in _VERIFIED:
        return _VERIFIED[key]
    d = _read_split(path)
    if key is not None and d is not None:
        for a in d:
            a.setflags(write=False)
        _VERIFIED.clear()
        _VERIFIED[key] = d
    return d or _rebuild_split(path)


def _read_split(path: Path) -> Digits | None:
    """The split from the cache file when it is readable and verifies, else None (said on stderr)."""
    d = None
    try:
        with np.load(path, allow_pickle=False) as f:
            d = Digits(*(f[k] for k in Digits._fields))
    except FileNotFoundError:
        pass
    except Exception:  # truncated or foreign: say so, then rebuild
        print(f"labkit: {path} is not a readable digits split; rebuilding it.", file=sys.stderr)
    if d is not None:
        if split_sha256(d) == SPLIT_SHA256:
            return d
        print(f"labkit: {path} does not match the course's digits split; rebuilding it.", file=sys.stderr)
    return None


def _rebuild_split(path: Path) -> Digits:
    """The split rebuilt from scikit-learn, verified, and written to the cache file."""
    d = _sklearn_split()
    if split_sha256(d) != SPLIT_SHA256:
        raise RuntimeError("scikit-learn's digits split is not the course's (SHA-256 mismatch): "
                           "install the pinned scikit-learn (`make lab` does)")
    cache_write(path, lambda fh: np.savez(fh, **d._asdict()))
    return d


def cache_write(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write a cache file atomically (`write` gets the open file); a read-only cache, as in the
    grading sandbox, is no error: it only costs computing the value again next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
    except OSError:
        pass


def _sklearn_split() -> Digits:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    images = d.images.astype(np.uint8)[:, None, :, :]
    xtr, xte, ytr, yte = train_test_split(
        images, d.target.astype(np.int64), test_size=TEST_FRACTION, random_state=SPLIT_SEED, stratify=d.target)
    return Digits(xtr, ytr, xte, yte)


def normalize(raw_pixels: np.ndarray) -> np.ndarray:
    """Raw 0..16 pixels to the float32 [0, 1] images the course CNN is trained on."""
    return (np.asarray(raw_pixels, dtype=np.float32) / PIXEL_MAX).astype(np.float32)
