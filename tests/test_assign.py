"""`labkit assign`: lessons are generated from solutions, exactly and deterministically."""
import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from labkit.assign import AssignError, assign, make_lesson, strip_solution

from conftest import ROOT, SOLUTIONS


def test_indented_block_becomes_not_implemented():
    src = "def f(x):\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION\n"
    out = strip_solution(src)
    assert "return x + 1" not in out and "    raise NotImplementedError" in out and "def f(x):" in out
    compile(out, "cell", "exec")


def test_stub_lines_replace_top_level_block():
    src = "### BEGIN SOLUTION\nanswer = 42\n# STUB: answer = None\n### END SOLUTION\nprint(answer)"
    assert strip_solution(src) == "answer = None\nprint(answer)"
    assert strip_solution("### BEGIN SOLUTION\nx = 1\n### END SOLUTION") == "# YOUR CODE HERE"


@pytest.mark.parametrize("src", ["### BEGIN SOLUTION\nx = 1", "x = 1\n### END SOLUTION",
                                 "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION"])
def test_malformed_blocks_are_rejected(src):
    with pytest.raises(AssignError):
        strip_solution(src)


def _nb(*cells):
    return new_notebook(cells=list(cells))


def test_make_lesson_clears_outputs_keeps_ids_and_tags_and_locks_checks():
    ans = new_code_cell("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION", metadata={"tags": ["answer:99.f"]})
    chk = new_code_cell('check("99.f", f)', metadata={"tags": ["check:99.f"]})
    chk.outputs = [nbformat.v4.new_output("stream", text="secret")]
    chk.execution_count = 3
    sol = _nb(new_markdown_cell("# t"), ans, chk)
    lesson = make_lesson(sol)
    assert [c.id for c in lesson.cells] == [c.id for c in sol.cells]
    assert lesson.cells[1].metadata["tags"] == ["answer:99.f"]
    assert lesson.cells[2].outputs == [] and lesson.cells[2].execution_count is None
    assert lesson.cells[2].metadata["editable"] is False and lesson.cells[2].metadata["deletable"] is False
    assert "return 1" not in lesson.cells[1].source
    assert sol.cells[2].outputs  # the solution object is untouched


def test_answer_without_check_is_an_error():
    ans = new_code_cell("x = 1", metadata={"tags": ["answer:99.f"]})
    with pytest.raises(AssignError, match="no check cell"):
        make_lesson(_nb(ans))


def test_committed_lessons_are_exactly_what_assign_makes():
    assert SOLUTIONS, "no solution notebooks found"
    assert assign(ROOT, check_only=True) == []


def test_no_solution_text_leaks_into_lessons():
    for sol in SOLUTIONS:
        lesson = nbformat.read(ROOT / "lessons" / sol.name, as_version=4)
        for cell in lesson.cells:
            assert "### BEGIN SOLUTION" not in cell.source, sol.name
            if cell.cell_type == "code":
                assert cell.outputs == [], sol.name


def test_assign_check_cli_reports_stale_lessons(tmp_path):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "lessons").mkdir()
    src = ROOT / "solutions" / SOLUTIONS[0].name
    (tmp_path / "solutions" / src.name).write_text(src.read_text())
    run = lambda *a: subprocess.run([sys.executable, "-m", "labkit.cli", "assign", *a], cwd=tmp_path,
                                    capture_output=True, text=True)
    stale = run("--check")
    assert stale.returncode == 1 and f"lessons/{src.name} is missing" in stale.stdout
    assert run().returncode == 0
    assert run("--check").returncode == 0
    lesson = tmp_path / "lessons" / src.name
    lesson.write_text(lesson.read_text().replace("Goal", "Gaol"))
    stale = run("--check")
    assert stale.returncode == 1 and "differs" in stale.stdout and "Gaol" in stale.stdout
