"""Short texts for panels, feedback and reports: one place that cuts a message at a word boundary with
"…", drops terminal colour codes, finds an exception's real cause, and keeps a CSV cell from being
run as a spreadsheet formula."""
from __future__ import annotations

import re

ELLIPSIS = "…"
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")


def strip_ansi(text: str) -> str:
    """`text` without terminal escape sequences (colours, cursor moves)."""
    return ANSI.sub("", text)


def shorten(text: object, limit: int = 300, *, keep_end: bool = False) -> str:
    """`text` on one line (whitespace runs collapsed, no colour codes), at most `limit` characters, cut at
    a word boundary.

    A cut text ends with "…"; a single word longer than the limit is cut inside the word. With `keep_end`
    the middle is cut instead ("start … end"): an error's end often says what was expected or what came."""
    s = " ".join(strip_ansi(str(text)).split())
    if len(s) <= limit:
        return s
    limit = max(limit, 2)
    if keep_end and limit >= 40:
        tail_len = limit * 2 // 5
        tail = s[-tail_len:]
        space = tail.find(" ")
        if 0 <= space < tail_len // 2:   # start the tail at a word
            tail = tail[space + 1:]
        return _head(s, limit - len(tail) - 2) + f"{ELLIPSIS} " + tail
    return _head(s, limit - 1) + ELLIPSIS


def _head(s: str, n: int) -> str:
    """The first `n` characters of `s` or fewer, cut at a word boundary not too far back."""
    cut = s[:n]
    space = cut.rfind(" ")
    if space >= (n + 1) // 2:          # a word boundary not too far back
        cut = cut[:space]
    return cut.rstrip(" ,;:.-")


def root_cause(e: BaseException, depth: int = 10) -> BaseException:
    """The innermost exception of `e`'s chain (`raise ... from ...` or raised while handling another)."""
    seen = {id(e)}
    while depth > 0:
        inner = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
        if inner is None or id(inner) in seen:
            break
        seen.add(id(inner))
        e, depth = inner, depth - 1
    return e


def _first_line(e: BaseException) -> str:
    text = strip_ansi(str(e)).strip()
    return text.splitlines()[0] if text else ""


def exception_text(e: BaseException, limit: int = 300) -> str:
    """`Type: message`, with the real cause when `e` wraps another exception: `Outer: … (cause: Inner: …)`."""
    outer = f"{type(e).__name__}: {_first_line(e)}" if _first_line(e) else type(e).__name__
    inner = root_cause(e)
    if inner is not e:
        cause = f"{type(inner).__name__}: {_first_line(inner)}" if _first_line(inner) else type(inner).__name__
        outer = f"{shorten(outer, limit // 2)} (cause: {cause})"
    return shorten(outer, limit)


def for_beginners(e: BaseException, message: str) -> str:
    """`message` (an exception's `Type: text`) with advice that misleads a beginner replaced.

    NumPy's "truth value of an array ... Use a.any() or a.all()" comes from `if`, `max()`, `and`/`or`
    applied to a whole array; any()/all() would hide the bug instead of fixing it."""
    if isinstance(e, ValueError) and "truth value of an" in str(e) and "ambiguous" in str(e):
        return (f"{type(e).__name__}: the truth value of an array is ambiguous — Python's `if`, `max()`, `min()`, "
                "`and`, `or` ask one yes/no question about the whole array; compute element by element instead "
                "(NumPy has elementwise functions for this), not with a.any() or a.all()")
    return message


def spreadsheet_safe(value: object) -> str:
    """`value` as one line of text that no spreadsheet runs as a formula (a leading = + - @ gets a quote;
    numbers, negative ones too, are left alone): every CSV cell a learner's text can reach."""
    s = " ".join(str(value).split())
    return "'" + s if s[:1] in ("=", "+", "-", "@") and not re.fullmatch(r"-?\d+(\.\d+)?", s) else s
