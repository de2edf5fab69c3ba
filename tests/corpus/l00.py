"""Lesson 00: answers learners write for the warm-up ReLU."""
import numpy as np

from corpus import Right, Wrong

CORPUS = {
    "00.relu": [
        Right("np.where", answer=lambda x: np.where(x > 0, x, 0).astype(x.dtype)),
        Right("clip", answer=lambda x: x.clip(min=0)),
        Wrong("mask multiply", answer=lambda x: (x > 0) * x),  # -inf * False is NaN: not a ReLU at -inf
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


# Second-round blind entries (issue 32), measured by this corpus's rule before and after the fixes: tests/corpus/blind2_l00.py.
# Left out of the fast tier: the 0 of 19 measured above 0.15 s an evaluation (they scored by the rule when measured).
from corpus import add_blind, blind2_l00  # noqa: E402

add_blind(CORPUS, blind2_l00)

# Blind round 3 (tests/corpus/blind3_lNN.py): measured first, then added; slow ones scored by hand.
from corpus import add_blind, blind3_l00  # noqa: E402

add_blind(CORPUS, blind3_l00)

# Blind round 13 (tests/corpus/blind13_l00.py, 20 answers by a writer who read only the prompt): measured first —
# no full marks for a wrong answer, no over-credit, no false reject.
from corpus import blind13_l00  # noqa: E402

add_blind(CORPUS, blind13_l00)
