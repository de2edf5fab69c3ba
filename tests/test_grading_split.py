"""A split lesson (09 and 09b, 11 and 11b) in the grader, without a kernel: each notebook is graded on
its own, with the exercises its answer cells hold (their ids keep the lesson's number: 09.generate)."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from labkit.grading import batch, lesson as lesson_mod, submissions
from labkit.grading.options import GradeError

ROOT = Path(__file__).resolve().parents[1]


def _notebook(*ids: str) -> dict:
    cells = []
    for i, ex in enumerate(ids):
        cells += [{"cell_type": "code", "id": f"a{i}-{ex}", "metadata": {"tags": [f"answer:{ex}"]}, "source": "x = 1",
                   "outputs": [], "execution_count": None},
                  {"cell_type": "code", "id": f"c{i}-{ex}", "metadata": {"tags": [f"check:{ex}"]},
                   "source": f'check("{ex}", x)', "outputs": [], "execution_count": None}]
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture()
def split(tmp_path) -> Path:
    """A solutions folder with lesson 09 in two notebooks, as the course ships it."""
    (tmp_path / "09_transformer.ipynb").write_text(json.dumps(_notebook("09.export_dynamic", "09.perplexity")))
    (tmp_path / "09b_generation.ipynb").write_text(json.dumps(_notebook("09.generate", "09.quiz")))
    (tmp_path / "10_beyond.ipynb").write_text(json.dumps(_notebook("10.quiz")))
    return tmp_path


@pytest.mark.parametrize("key, stem", [("09", "09_transformer"), ("9", "09_transformer"), ("09b", "09b_generation"),
                                       ("9b", "09b_generation"), ("generation", "09b_generation"),
                                       ("09b_generation", "09b_generation"), ("10", "10_beyond")])
def test_a_split_lessons_notebooks_are_named_by_number_and_letter(split, key, stem):
    assert lesson_mod.resolve_lesson(key, split).stem == stem


def test_an_unknown_part_names_the_lessons_there(split):
    with pytest.raises(GradeError, match=r"unknown lesson '09c'.*09b_generation"):
        lesson_mod.resolve_lesson("09c", split)


def test_each_notebook_is_graded_on_its_own_exercises(split):
    first = lesson_mod.load_lesson(split / "09_transformer.ipynb")
    second = lesson_mod.load_lesson(split / "09b_generation.ipynb")
    assert (first.number, [e.id for e in first.exercises]) == ("09", ["09.export_dynamic", "09.perplexity"])
    assert (second.number, [e.id for e in second.exercises]) == ("09b", ["09.generate", "09.quiz"])
    assert (first.max_points, second.max_points) == (3 + 2, 4 + 5)


def test_a_notebook_name_needs_its_number(tmp_path):
    (tmp_path / "9x_a.ipynb").write_text(json.dumps(_notebook("09.generate")))
    with pytest.raises(GradeError, match="two-digit number"):
        lesson_mod.load_lesson(tmp_path / "9x_a.ipynb")


def test_the_other_notebook_of_a_split_lesson_is_named_as_such(split, tmp_path):
    second = lesson_mod.load_lesson(split / "09b_generation.ipynb")
    sub = tmp_path / "ada.ipynb"
    sub.write_text(json.dumps(_notebook("09.export_dynamic", "09.perplexity")))
    got = submissions.read_submission(sub, second)
    assert got.status == "missing"
    assert got.error == ("this is another notebook of lesson 09 (its answer cells are 09.export_dynamic, "
                         "09.perplexity), not 09b_generation: hand in 09b_generation.ipynb")


def test_the_sandbox_confines_the_graded_notebooks_exercises(split, tmp_path):
    """The exercises whose checks run with only their tools come from the notebook being graded, whatever
    the instructor typed for the lesson (`9b`, `generation`): before, `labkit grade 9` confined none."""
    second = lesson_mod.load_lesson(split / "09b_generation.ipynb")
    seen = {}

    class Protection:
        mode = "test"

        def kernel_uid(self):
            return None

        def prepare(self, uid, folder, confined):
            seen["confined"] = confined
            return ""

    opts = SimpleNamespace(lesson="9b", memory_gb=1, notebook_timeout=60, cell_timeout=30, judge_timeout=10)
    batch.prepare_run(opts, second, Protection(), 0, tmp_path)
    assert seen["confined"] == ("09.generate",)   # 09.quiz has no tools; 09b holds no other 09 exercise


def test_a_release_of_a_split_lesson_holds_both_notebooks():
    from labkit.edition import ReleaseError, selected

    names = [Path(f"{n}.ipynb") for n in ("08_browser", "09_transformer", "09b_generation", "10_beyond")]
    assert [p.stem for p in selected(names, ["9"])] == ["09_transformer", "09b_generation"]
    assert [p.stem for p in selected(names, ["09b", "10"])] == ["09b_generation", "10_beyond"]
    with pytest.raises(ReleaseError, match="09b"):
        selected(names, ["nine"])


def test_the_verdict_process_judges_a_split_lessons_later_notebook(tmp_path):
    """The verdict process of `labkit grade 09b` imports lesson 09's judges (it ended at start before)."""
    from labkit import plain
    from labkit.checks import quiz_answers
    from labkit.grading import judge

    answers = tmp_path / "answers"
    plain.save(quiz_answers("09.quiz"), answers / "09.quiz")
    try:
        out = judge.judge_answers("09b", answers, 1, ["09.quiz"], "", timeout=30, data_dir=str(tmp_path))
    finally:
        if judge._SERVER is not None:
            judge._SERVER.close()
            judge._SERVER = None
    assert out["09.quiz"].status == "passed", out["09.quiz"]
