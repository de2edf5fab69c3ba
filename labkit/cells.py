"""Notebook cells as the course reads them: one exercise-id pattern, one tag/role parser.

`answer:LL.name` and `check:LL.name` tags mark an exercise's cells; `labkit.assign`,
`labkit.checks` and `labkit.grading` all read cells through these functions.
"""
from __future__ import annotations

import re
from typing import Any

#: an exercise id: two-digit lesson number, a dot, a lower-case name (`05.fold_bn`)
EXERCISE_ID = re.compile(r"\d\d\.[a-z][a-z0-9_]*")


def is_exercise_id(value: Any) -> bool:
    """True for a well-formed exercise id such as `01.sigmoid_model`."""
    return isinstance(value, str) and EXERCISE_ID.fullmatch(value) is not None


def cell_tags(cell: Any) -> list[str]:
    """The string tags of a cell (tolerates any malformed metadata)."""
    meta = cell.get("metadata") if isinstance(cell, dict) else None
    tags = meta.get("tags", []) if isinstance(meta, dict) else []
    return [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []


def exercise_tag(cell: Any, role: str) -> str | None:
    """The exercise id of the cell's `role:` tag (`answer` or `check`), or None."""
    for t in cell_tags(cell):
        if t.startswith(role + ":"):
            return t.split(":", 1)[1]
    return None


def cell_source(cell: Any) -> str:
    """A cell's source as one string (lists of lines joined; anything malformed is empty)."""
    s = cell.get("source", "") if isinstance(cell, dict) else ""
    if isinstance(s, list):
        s = "".join(x for x in s if isinstance(x, str))
    return s if isinstance(s, str) else ""
