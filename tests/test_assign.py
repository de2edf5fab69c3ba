"""`labkit assign`: labkit/exercises/ is generated from the specs and lessons/ from solutions/, exactly and
deterministically; solution headings agree with the specs."""
import dataclasses
import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from labkit.assign import AssignError, assign, heading_problems, make_lesson, strip_solution
from labkit.checks import get

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
    """lessons/ and labkit/exercises/ are what assign makes, and every solution's headings state the
    points of its specs."""
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


# ---------------------------------------------------------------- one spec per exercise

TINY_SPEC = '''"""Lesson 98, a throwaway: one function exercise and one quiz, nothing else."""
import numpy as np

from labkit.checks import Question, exercise, expect_close, quiz


def _triple_cases(seed):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=3),), (np.arange(4.0),)]


TRIPLE_TESTS = ("random vector", "0 1 2 3")


@exercise("98.triple", title="Triple it", points=3, kind="function", hint=["Scale each value.", "x * 3"],
          cases=_triple_cases, tests=TRIPLE_TESTS, skill=TRIPLE_TESTS)
def _triple(outputs, seed):
    for name, (x,), got in zip(TRIPLE_TESTS, _triple_cases(seed), outputs):
        yield expect_close(name, got, 3 * x)


quiz("98.quiz", title="Tiny quiz", points=2, questions=[
    Question("q1", "Which is three times 2?", {"a": "5", "b": "6", "c": "8"}, answer="b", why="SECRET-WHY-1"),
    Question("q2", "Which is three times 0?", {"a": "0", "b": "3", "c": "1"}, answer="a", why="SECRET-WHY-2"),
])
'''


def _tiny_solution(triple_heading: str = "### Exercise `98.triple` (3 points)") -> nbformat.NotebookNode:
    """A solution for lesson 98: for each exercise its three cells (heading, answer, check)."""
    return _nb(
        new_markdown_cell("# 98 · Tiny\n\n" + triple_heading + "\n\nWrite `triple(x)`."),
        new_code_cell("def triple(x):\n    ### BEGIN SOLUTION\n    return 3 * x\n    ### END SOLUTION",
                      metadata={"tags": ["answer:98.triple"]}),
        new_code_cell('check("98.triple", triple)', metadata={"tags": ["check:98.triple"]}),
        new_markdown_cell("### Quiz `98.quiz` (2 points)"),
        new_code_cell('### BEGIN SOLUTION\nquiz_98 = {"q1": "b", "q2": "a"}\n'
                      '# STUB: quiz_98 = {"q1": None, "q2": None}\n### END SOLUTION',
                      metadata={"tags": ["answer:98.quiz"]}),
        new_code_cell('check("98.quiz", quiz_98)', metadata={"tags": ["check:98.quiz"]}))


@pytest.fixture
def tiny_course(tmp_path, monkeypatch):
    """A course with one new judge module (labkit_judges/l98.py) and its solution, nothing else; the
    installed packages see its labkit_judges/ and labkit/exercises/ folders too."""
    import labkit.exercises
    import labkit_judges
    from labkit.checks import JUDGES, REGISTRY

    (tmp_path / "labkit_judges").mkdir()
    (tmp_path / "labkit_judges" / "l98.py").write_text(TINY_SPEC)
    (tmp_path / "labkit" / "exercises").mkdir(parents=True)
    (tmp_path / "solutions").mkdir()
    nbformat.write(_tiny_solution(), tmp_path / "solutions" / "98_tiny.ipynb")
    monkeypatch.setattr(labkit_judges, "__path__", [*labkit_judges.__path__, str(tmp_path / "labkit_judges")])
    monkeypatch.setattr(labkit.exercises, "__path__", [*labkit.exercises.__path__, str(tmp_path / "labkit" / "exercises")])
    yield tmp_path
    for mod in ("labkit_judges.l98", "labkit.exercises.l98"):
        sys.modules.pop(mod, None)
    for id in [i for i in REGISTRY if i.startswith("98.")]:
        REGISTRY.pop(id)
    for id in [i for i in JUDGES if i.startswith("98.")]:
        JUDGES.pop(id)


def test_a_new_spec_is_picked_up_everywhere_by_assign(tiny_course):
    """One spec and its three notebook cells, then `labkit assign`: the generated declaration, the lesson,
    the registry, `assign --check` and the scoring all know the exercise; nothing else was edited."""
    from labkit.checks import JUDGES, REGISTRY, evaluate, get, lesson_exercises

    assert assign(tiny_course) == []
    generated = (tiny_course / "labkit" / "exercises" / "l98.py").read_text()
    assert generated.splitlines()[0] == ("# AUTOGENERATED by `labkit assign` from labkit_judges/l98.py: do not edit. "
                                         "File to edit: labkit_judges/l98.py")
    assert "declare('98.triple', title='Triple it', points=3, kind='function', hint=[" in generated
    assert "'Scale each value.'" in generated and "Question('q1', 'Which is three times 2?', {" in generated
    for secret in ("SECRET-WHY", "answer=", "_triple_cases", "random vector", "3 * x"):
        assert secret not in generated, f"the learner side must not know {secret!r}"
    lesson = nbformat.read(tiny_course / "lessons" / "98_tiny.ipynb", as_version=4)
    assert "raise NotImplementedError" in lesson.cells[1].source and "3 * x" not in lesson.cells[1].source
    assert assign(tiny_course, check_only=True) == []
    assign(tiny_course)
    assert (tiny_course / "labkit" / "exercises" / "l98.py").read_text() == generated, "assign is deterministic"

    # the learner side alone (what a graded kernel has) registers the very exercises the spec declares
    specs = {id: JUDGES[id].exercise for id in ("98.triple", "98.quiz")}
    for id in specs:
        REGISTRY.pop(id)
    assert [e.id for e in lesson_exercises("98")] == ["98.triple", "98.quiz"]
    assert {id: get(id) for id in specs} == specs
    assert all(q.answer == "" and q.why == "" for q in get("98.quiz").questions)

    triple = get("98.triple")
    assert evaluate(triple, lambda x: 3 * x).status == "passed"
    wrong = evaluate(triple, lambda x: 2 * x)
    assert wrong.status == "failed" and wrong.points <= triple.points / 2 and wrong.max_points == 3
    assert evaluate(get("98.quiz"), {"q1": "b", "q2": "a"}).points == 2
    assert evaluate(get("98.quiz"), {"q1": "a", "q2": "a"}).points == 1


def test_assign_check_catches_a_hand_edited_module_and_wrong_headings(tiny_course):
    assert assign(tiny_course) == []
    generated = tiny_course / "labkit" / "exercises" / "l98.py"
    generated.write_text(generated.read_text().replace("points=3", "points=30"))
    problems = assign(tiny_course, check_only=True)
    assert len(problems) == 1 and problems[0].startswith("labkit/exercises/l98.py differs from what assign makes")
    assert "\n" not in problems[0] and "points=30" in problems[0]
    assign(tiny_course)
    assert assign(tiny_course, check_only=True) == []

    solution = tiny_course / "solutions" / "98_tiny.ipynb"
    nbformat.write(_tiny_solution("### Exercise `98.triple` (4 points)"), solution)
    assign(tiny_course)  # the lesson is rewritten; the heading is still wrong
    assert assign(tiny_course, check_only=True) == [
        "solutions/98_tiny.ipynb: the heading of 98.triple says (4 points), its spec in labkit_judges/l98.py "
        "says (3 points): write `### Exercise `98.triple` (3 points)`"]
    nbformat.write(_tiny_solution("### Exercise `98.triple` (bonus, 3 points)"), solution)
    assign(tiny_course)  # a core exercise called a bonus
    assert assign(tiny_course, check_only=True)[0].endswith("write `### Exercise `98.triple` (3 points)`")
    bonus = dataclasses.replace(get("98.triple"), bonus=True)  # a bonus whose heading does not say so
    assert heading_problems(_tiny_solution(), "98_tiny.ipynb", [bonus])[0].endswith(
        "write `### Exercise `98.triple` (bonus, 3 points)`")
    assert heading_problems(_tiny_solution("### Exercise `98.triple` (bonus, 3 points)"), "98_tiny.ipynb",
                            [bonus, get("98.quiz")]) == []
    nbformat.write(_tiny_solution("### Exercise 98.triple"), solution)
    assign(tiny_course)
    problems = assign(tiny_course, check_only=True)
    assert len(problems) == 1 and problems[0].startswith("solutions/98_tiny.ipynb: no heading for 98.triple")
    nbformat.write(_tiny_solution("### Exercise `98.triple` (3 points)\n\n### Exercise `98.gone` (1 point)"), solution)
    assign(tiny_course)
    assert assign(tiny_course, check_only=True) == [
        "solutions/98_tiny.ipynb: a heading names 98.gone, which labkit_judges/l98.py does not specify"]

