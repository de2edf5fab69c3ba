"""Text for people: no terminal colour codes, messages cut at a word boundary, an exception's real cause."""
from __future__ import annotations

import re

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")


def strip_ansi(text: str) -> str:
    """`text` without terminal escape sequences (colours, cursor moves)."""
    return ANSI.sub("", text)


def shorten(text: object, limit: int = 300) -> str:
    """One line of at most `limit` characters, cut at a word boundary (with an ellipsis), no colour codes."""
    s = " ".join(strip_ansi(str(text)).split())
    if len(s) <= limit:
        return s
    cut = s[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit * 0.6:  # a word boundary not too far back; else cut inside a very long word
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


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


def first_line(e: BaseException) -> str:
    text = strip_ansi(str(e)).strip()
    return text.splitlines()[0] if text else ""


def exception_text(e: BaseException, limit: int = 300) -> str:
    """`Type: message`, with the real cause when `e` wraps another exception: `Outer: … (cause: Inner: …)`."""
    outer = f"{type(e).__name__}: {first_line(e)}" if first_line(e) else type(e).__name__
    inner = root_cause(e)
    if inner is not e:
        cause = f"{type(inner).__name__}: {first_line(inner)}" if first_line(inner) else type(inner).__name__
        outer = f"{shorten(outer, limit // 2)} (cause: {cause})"
    return shorten(outer, limit)
