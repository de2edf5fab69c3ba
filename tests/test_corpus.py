"""Every graded exercise tells right from wrong: its mutation corpus (tests/corpus/lNN.py) under the
scoring rule, and every quiz is worth answering (docs/authoring.md). A wrong answer's panel names what is
wrong, never the fix (tests/feedback_fixes.py)."""
from __future__ import annotations

import collections

import pytest

from labkit import plain
from labkit.checks import evaluate, judge_saved, judge_spec, lesson_exercises, quiz_answers, record_for_grader
from labkit.checks.collect import FUNCTION_FILE, INPUTS_ENV, UNSENDABLE_FILE
from labkit.checks.confine import Zygote
from labkit.grading.confined import call_recorded
from labkit.checks.judging import SKILL_CAP, SKIPPED_CAP

import corpus
from conftest import SOLUTIONS
from feedback_fixes import fixes_in

LESSONS = sorted({p.stem[:2] for p in SOLUTIONS})
GRADED = [e for lesson in LESSONS for e in lesson_exercises(lesson) if e.kind != "quiz"]
QUIZZES = [e for lesson in LESSONS for e in lesson_exercises(lesson) if e.kind == "quiz"]
ENTRIES = [(ex, entry) for ex in GRADED for entry in corpus.load(ex.lesson).get(ex.id, [])]
#: a second seed: right answers must hold on inputs other than the notebook's
HIDDEN_SEED = 20250
#: judges that export a model per call (1-5 s): at the hidden seed only the grader's data path runs, for the
#: team's entries too (their inputs are recipes, `plain.Make`, that the data path carries unchanged)
EXPORTS_PER_CALL = {"09.export_dynamic", "03.custom_op"}


@pytest.mark.parametrize("ex", GRADED, ids=[e.id for e in GRADED])
def test_every_exercise_has_its_corpus(ex):
    entries = corpus.load(ex.lesson).get(ex.id, [])
    wrong = [e for e in entries if isinstance(e, corpus.Wrong)]
    right = [e for e in entries if isinstance(e, corpus.Right)]
    assert len(wrong) >= corpus.MIN_WRONG and len(right) >= corpus.MIN_RIGHT, (
        f"{ex.id}: {len(wrong)} wrong and {len(right)} right answers in tests/corpus/l{ex.lesson}.py "
        f"(needs ≥ {corpus.MIN_WRONG} and ≥ {corpus.MIN_RIGHT})")
    assert len({e.name for e in entries}) == len(entries), f"{ex.id}: corpus names must be distinct"


def test_add_blind_keeps_order_leaves_out_slow_marks_holes_and_refuses_unknown_names():
    import types

    blind = types.SimpleNamespace(__name__="corpus.blind_l99", CORPUS={"99.x": [
        corpus.Wrong("w", answer=1), corpus.Right("r", answer=2), corpus.Wrong("h", answer=3)]})
    mine = [corpus.Right("own", answer=0)]
    lesson = {"99.x": mine}
    corpus.add_blind(lesson, blind, slow={"r"}, holes={"h": "why"})
    assert [(e.name, e.hole, e.blind) for e in lesson["99.x"]] == [
        ("own", "", False), ("w", "", True), ("h", "why", True)]
    assert mine == [corpus.Right("own", answer=0)]  # the lesson's own list is not changed in place
    with pytest.raises(ValueError, match="no entry named renamed"):
        corpus.add_blind({"99.x": []}, blind, holes={"renamed": "a typo would drop the hole silently"})


@pytest.mark.parametrize("ex", GRADED, ids=[e.id for e in GRADED])
def test_every_hint_is_stepwise(ex):
    """A nudge naming the concept, then one naming the API (docs/authoring.md, "Hints")."""
    assert len(ex.hints) >= 2, f"{ex.id}: hint= should be a list of at least two steps, got {ex.hints}"


def graded(ex, answer, seed: int, folder, monkeypatch):
    """What the grader makes of `answer` at `seed`: the test inputs written to a folder and read back
    (`plain.save_inputs`, as `grading.batch` does), the answer collected on them and recorded
    (`record_for_grader`, as a graded kernel does), the verdict from the recorded folder (`judge_saved`)."""
    if ex.kind == "function":
        plain.save_inputs(judge_spec(ex.id).cases(seed), folder / "inputs" / ex.id)
        monkeypatch.setenv(INPUTS_ENV, str(folder / "inputs"))
    record_for_grader(ex, answer, folder / "answer")
    if ex.tools and any((folder / "answer" / f).is_file() for f in (FUNCTION_FILE, UNSENDABLE_FILE)):
        # the grader calls it (grading.confined)
        (folder / "calls").mkdir()
        call_recorded(ZYGOTE, folder / "calls", folder / "answer", ex.id, ex.tools,
                      plain.load_inputs(folder / "inputs" / ex.id))
    return judge_saved(ex, folder / "answer", seed)


#: the grader's zygote for confined answers, here without a sandbox around it (one per test process)
ZYGOTE = Zygote()


#: the seed of the notebook's own inputs (what a learner's panel judges)
NOTEBOOK_SEED = 0
#: a team entry's run at the notebook's seed is a case of its own, its id ending NOTEBOOK_SUFFIX (conftest.py
#: makes a heavy exercise's such runs `thorough`: the hidden seed is what a grade is)
NOTEBOOK_SUFFIX = "@notebook"
#: (exercise, entry, seed): every entry at the hidden seed, the team's entries also at the notebook's seed.
#: Known holes (`hole=`) are strict xfails: when a judge starts to see one, the entry must be reclassified.
CASES = [pytest.param(ex, e, seed, id=f"{ex.id}-{e.name}" + ("" if seed == HIDDEN_SEED else NOTEBOOK_SUFFIX),
                      marks=[pytest.mark.xfail(strict=True, reason=e.hole)] if e.hole else [])
         for ex, e in ENTRIES for seed in ((HIDDEN_SEED,) if e.blind else (NOTEBOOK_SEED, HIDDEN_SEED))]


@pytest.fixture
def rewriter_restored(request):
    """Undo what a 05.rewrite_rule answer patched in onnxscript's rewriter (blind9-monkeypatch-apply), so
    that the entries after it in this worker meet the rewriter as it ships (a learner's kernel keeps its own)."""
    if request.node.callspec.params["ex"].id != "05.rewrite_rule":
        yield
        return
    from labkit.material import l05_rules

    saved = l05_rules._BASELINE
    yield
    modules = {m.__name__: m for m in l05_rules._rewriter_modules()}
    for key, value in saved.items():
        owner = modules[key[0]] if len(key) == 2 else vars(modules[key[0]])[key[1]]
        if vars(owner).get(key[-1]) is not value:
            setattr(owner, key[-1], value)


@pytest.fixture
def numpy_restored():
    """Undo what an answer patched in NumPy (blind round 12's "patch-numpy" shortcuts replace np.allclose and
    np.testing's asserts for the whole process): the tests after it in this worker meet NumPy as it ships. (In
    the grader the answer runs in the learner's kernel and the verdict in another process.)"""
    import numpy as np

    modules = (np, np.testing, np.linalg)
    saved = [dict(vars(m)) for m in modules]
    yield
    for module, before in zip(modules, saved):
        for key, value in before.items():
            if vars(module).get(key) is not value:
                setattr(module, key, value)


@pytest.fixture(scope="session")
def corpus_temp_root():
    """One temp folder for this worker's corpus entries, removed at the end of the session."""
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="lkc")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def own_temp_folder(monkeypatch, corpus_temp_root):
    """What an answer or its check leaves in the temp folder (a blind answer's `mkdtemp`, the folder a `File`
    input is written to) goes in the worker's corpus folder, removed at the end of the session: one run of the
    corpus left thousands of folders, some of 100 MB, in /tmp. (Not removed after each test: a corpus module
    may build a model once, lazily, in a folder of its own, for the entries after it.)"""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", corpus_temp_root)


@pytest.mark.parametrize("ex, entry, seed", CASES)
@pytest.mark.usefixtures("rewriter_restored", "numpy_restored", "own_temp_folder")
def test_corpus_entry_scores_by_the_rule(ex, entry, seed, tmp_path, monkeypatch):
    """Every entry by the rule at the hidden seed through the grader's data path (what a grade is). The
    team's entries also run at the notebook's seed through the learner's panel and, written around the
    types that cross the data path, through the panel at the hidden seed, which must agree: an answer the
    panel passes and the grade fails (or the reverse) on the same inputs is a defect of one of them
    (inputs that change on the way, a type that does not cross). Blind entries run once, as graded: the
    panel and the grade are one judge (the team's entries hold them together), and the corpus is
    `make test`'s biggest cost (a second seed for the blind entries was ~140 s of CPU). A wrong answer's
    messages are read at every seed it runs at."""
    if seed == NOTEBOOK_SEED:
        r = evaluate(ex, entry.build(tmp_path), seed=seed)
    else:
        p = None  # the panel runs first: `graded` leaves the grader's inputs in the environment
        if not entry.blind and ex.id not in EXPORTS_PER_CALL:
            (tmp_path / "panel").mkdir()
            p = evaluate(ex, entry.build(tmp_path / "panel"), seed=seed)
        (tmp_path / "graded").mkdir()
        r = graded(ex, entry.build(tmp_path / "graded"), seed, tmp_path / "graded", monkeypatch)
        assert p is None or (p.status, p.points) == (r.status, r.points), (
            f"{ex.id} / {entry.name} at seed {seed}: the panel gives {p!r}, the grader's data path {r!r}")
    detail = f"{ex.id} / {entry.name} at seed {seed}: {r!r}"
    if isinstance(entry, corpus.Wrong):  # the messages (issue 36), at every seed an entry runs
        fixes = [f for text in [r.message] + [t.message for t in r.tests] for f in fixes_in(text)]
        assert not fixes, f"a message gives the fix {fixes} (it belongs in the hint): {detail}"
    if isinstance(entry, corpus.Right):
        assert r.status == "passed" and r.points == r.max_points, detail
        return
    assert r.status != "passed" and r.points < r.max_points, f"wrong answer scored full: {detail}"
    if entry.outputs_wrong:
        assert r.points <= SKILL_CAP * r.max_points, f"a failed skill test scored over half: {detail}"
    if entry.skipped_skill:
        assert r.points <= SKIPPED_CAP * r.max_points, f"did not do the exercise, yet over a quarter: {detail}"


@pytest.mark.parametrize("ex", QUIZZES, ids=[e.id for e in QUIZZES])
def test_quiz_is_worth_answering(ex):
    key = quiz_answers(ex.id)
    assert len(ex.questions) >= 5, f"{ex.id}: {len(ex.questions)} questions (needs ≥ 5)"
    letters = collections.Counter(key.values())
    letter, most = letters.most_common(1)[0]
    assert most <= 0.4 * len(key), f"{ex.id}: {most} of {len(key)} answers are {letter!r} (≤ 40% per letter)"
    for q in ex.questions:
        assert len(q.options) >= 3, f"{ex.id}.{q.key}: at least three options"
        for guess in q.options:  # answering one letter everywhere scores at most 40%
            r = evaluate(ex, {k.key: guess for k in ex.questions})
            assert r.points <= 0.4 * r.max_points + 1e-9, f"{ex.id}: all {guess!r} scores {r.points}/{r.max_points}"


@pytest.mark.parametrize("ex", QUIZZES, ids=[e.id for e in QUIZZES])
def test_quiz_feedback_says_why_each_distractor_is_wrong(ex):
    """The explanation is in the feedback, not in the right option: it names every wrong letter,
    as "(b)" or "Not b:" (docs/authoring.md)."""
    from labkit.checks import judge_spec

    for q in ex.questions:
        right, why = judge_spec(ex.id).key[q.key]
        missing = [k for k in q.options if k != right and f"({k})" not in why and f"Not {k}:" not in why]
        assert not missing, f"{ex.id}.{q.key}: the explanation never says why {', '.join(missing)} is wrong: {why}"


def test_only_the_tiers_that_run_corpus_tests_import_the_corpus():
    """conftest.py skips this file (and the corpus's imports) in a session whose `-m` selects none of its
    tests: the Makefile's notebooks, network and browser tiers, never the fast or grading tier."""
    from conftest import corpus_deselected

    slow = "notebooks or grading or browser"
    fast, grading = f"not ({slow} or network or heavy)", "(grading or heavy) and not (browser or thorough)"
    for runs in (fast, grading, f"({fast}) or ({grading})", "thorough", "heavy", "not xfail"):
        assert not corpus_deselected(runs), runs
    for skips in ("notebooks and not (grading or browser)", f"network and not ({slow})", "browser and not thorough"):
        assert corpus_deselected(skips), skips
