"""The learner-time rule (labkit/lesson_time.py) and `labkit lesson-time`."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from labkit import lesson_time as lt
from labkit.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _nb(*cells):
    return new_notebook(cells=list(cells))


def _md(words: int, tags=(), head="# 99 · Title") -> nbformat.NotebookNode:
    c = new_markdown_cell(head + "\n\n" + " ".join(["word"] * words) if head else " ".join(["word"] * words))
    c.metadata["tags"] = list(tags)
    return c


def _code(tags=()):
    c = new_code_cell("x = 1")
    c.metadata["tags"] = list(tags)
    return c


def test_rule_counts_words_code_exercises_and_quiz():
    nb = _nb(_md(396),  # 400 words with the four of "# 99 · Title"
             _code(), _code(["parameters"]),
             _code(["answer:99.a"]), _code(["check:99.a"]),
             _code(["answer:99.quiz"]), _code(["check:99.quiz"]))
    t = lt.lesson_time(nb)
    assert t.core_exact == pytest.approx(400 / 200 + 1 + 6 + 4)  # the parameters cell is free
    assert t.optional_exact == 0
    assert t.core == 15 and t.optional == 0  # 13 min
    assert t.line == "*Time: about 15 min (core)*"


def test_optional_cells_are_summed_apart():
    nb = _nb(_md(10), _code(),
             _md(200, ["optional"], head="## Optional: more"), _code(["optional"]), _code(["optional"]),
             _code(["answer:99.b", "optional"]), _code(["check:99.b", "optional"]))
    t = lt.lesson_time(nb)
    assert t.optional_exact == pytest.approx(203 / 200 + 2 + 6)  # "## Optional: more" is 3 words
    assert t.line == f"*Time: about 5 min (core) + {t.optional} min optional*"
    assert t.optional == 10


@pytest.mark.parametrize("minutes,shown", [(0.1, 5), (7.4, 5), (7.5, 10), (44.9, 45), (47.6, 50), (88.2, 90)])
def test_rounding_to_five_minutes(minutes, shown):
    assert lt.round_minutes(minutes) == shown


def test_stamp_inserts_after_title_then_replaces_and_does_not_count_itself():
    nb = _nb(_md(50), _code())
    before = lt.lesson_time(nb)
    assert lt.stamped_line(nb) is None
    assert lt.stamp(nb, before.line)
    assert nb.cells[0].source.splitlines()[:3] == ["# 99 · Title", "", before.line]
    assert lt.stamped_line(nb) == before.line
    assert lt.lesson_time(nb) == before  # the line's own words are not reading time
    assert not lt.stamp(nb, before.line)  # idempotent
    assert lt.stamp(nb, "*Time: about 50 min (core) + 5 min optional*")
    assert nb.cells[0].source.count("*Time:") == 1


def test_problems_report_missing_stale_and_too_long(tmp_path):
    p = tmp_path / "99_x.ipynb"
    nbformat.write(_nb(_md(20), *[_code() for _ in range(60)]), str(p))
    found = lt.problems(p)
    assert any("no time line" in f for f in found) and any("over the 45-minute" in f for f in found)
    assert lt.write(p) and not lt.write(p)
    assert [f for f in lt.problems(p) if "time line" in f] == []
    nb = nbformat.read(str(p), 4)
    nb.cells = nb.cells[:10]
    nbformat.write(nb, str(p))
    stale = lt.problems(p)
    assert len(stale) == 1 and "the rule gives" in stale[0]


def test_cli_write_then_check(tmp_path, monkeypatch, capsys):
    (tmp_path / "solutions").mkdir()
    p = tmp_path / "solutions" / "99_x.ipynb"
    nbformat.write(_nb(_md(20), _code()), str(p))
    monkeypatch.setattr("labkit.fsutil.course_root", lambda: tmp_path)
    assert main(["lesson-time", "--check"]) == 1
    assert main(["lesson-time", "--write", "99"]) == 0
    assert main(["lesson-time", "--check"]) == 0
    assert "*Time: about 5 min (core)*" in p.read_text()
    assert main(["lesson-time", "--check", "--write"]) == 2
    out = capsys.readouterr().out
    assert "stamped 99_x.ipynb" in out


def _solutions():
    return sorted((ROOT / "solutions").glob("*.ipynb"))


@pytest.mark.parametrize("path", _solutions(), ids=lambda p: p.stem)
def test_every_solution_states_its_time_and_fits_one_sitting(path):
    """Every solution states its time, as the rule computes it, and its core fits 45 minutes."""
    assert lt.problems(path) == []


def test_readme_time_column_matches_the_rule():
    """The README's lesson table states each lesson's minutes exactly as the rule computes them."""
    import re

    rows = re.findall(r"^\| (\d\d) \| .*\| ([\d +]+) \| \[launch\]", (ROOT / "README.md").read_text(), re.M)
    assert rows, "README.md has no lesson table with a minutes column"
    for number, shown in rows:
        (path,) = (ROOT / "solutions").glob(f"{number}_*.ipynb")
        t = lt.lesson_time(path)
        want = f"{t.core} + {t.optional}" if t.optional else f"{t.core}"
        assert shown.strip() == want, f"README says {shown.strip()} min for lesson {number}, the rule gives {want}"
