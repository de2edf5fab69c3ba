"""Lesson 00: answers learners write for the warm-up ReLU."""
import numpy as np

from corpus import Right, Wrong

CORPUS = {
    "00.relu": [
        Right("np.where", answer=lambda x: np.where(x > 0, x, 0).astype(x.dtype)),
        Right("clip", answer=lambda x: x.clip(min=0)),
        Right("mask multiply", answer=lambda x: (x > 0) * x),
        Wrong("returns x unchanged", answer=lambda x: x, skipped_skill=True),
        Wrong("abs", answer=lambda x: np.abs(x)),
        Wrong("min instead of max", answer=lambda x: np.minimum(x, 0)),
        Wrong("flattened", answer=lambda x: np.maximum(x, 0).ravel()),
        Wrong("python max on the array", answer=lambda x: max(x.max(), 0)),
        Wrong("leaky", answer=lambda x: np.where(x > 0, x, 0.01 * x)),
        Wrong("keeps only the first row", answer=lambda x: np.maximum(x, 0)[:1]),
        Wrong("in place on the input, returns None", answer=lambda x: np.maximum(x, 0, out=x) and None),
        Wrong("sigmoid", answer=lambda x: 1 / (1 + np.exp(-x))),
    ],
}
