"""Short texts for panels and reports: one place that cuts a message at a word boundary with "…"."""
from __future__ import annotations

ELLIPSIS = "…"


def shorten(text: object, limit: int = 300) -> str:
    """`text` on one line (whitespace runs collapsed), at most `limit` characters, cut at a word boundary.

    A cut text ends with "…"; a single word longer than the limit is cut inside the word."""
    s = " ".join(str(text).split())
    if len(s) <= limit:
        return s
    limit = max(limit, 2)
    cut = s[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:          # a word boundary not too far back
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + ELLIPSIS


def for_beginners(e: BaseException, message: str) -> str:
    """`message` (an exception's `Type: text`) with advice that misleads a beginner replaced.

    NumPy's "truth value of an array ... Use a.any() or a.all()" comes from `if`, `max()`, `and`/`or`
    applied to a whole array; any()/all() would hide the bug instead of fixing it."""
    if isinstance(e, ValueError) and "truth value of an" in str(e) and "ambiguous" in str(e):
        return (f"{type(e).__name__}: the truth value of an array is ambiguous — Python's `if`, `max()`, `min()`, "
                "`and`, `or` ask one yes/no question about the whole array; compute element by element instead "
                "(NumPy has elementwise functions for this), not with a.any() or a.all()")
    return message
