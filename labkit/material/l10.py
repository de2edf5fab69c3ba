"""Lesson 10 material, learner side: what the notebook hands out and the factories a graded kernel
builds test inputs with (`plain.Make("labkit.material.l10:name", ...)`). No answers, no test inputs.

Written by hand (the notebooks import it); the generated `labkit/exercises/lNN.py`
holds only declarations."""
from __future__ import annotations

from typing import Any

import numpy as np

from sklearn.base import BaseEstimator, TransformerMixin

__all__ = ["PerFeatureClip", "MODEL_KINDS", "fitted_model"]


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
