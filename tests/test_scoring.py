"""The scoring rule on synthetic exercises (no lesson, no kernel): fixed tests, tests that could not
run count as failed, skill gates the points, an answer that did not do the exercise gets at most a
quarter, undeclared tests are a broken check."""
from __future__ import annotations

import pytest

from labkit.checks import REGISTRY, JUDGES, DidNotDo, TestResult, evaluate, exercise
from labkit.checks.judging import SKILL_CAP, SKIPPED_CAP

ID = "99.toy_scoring"


@pytest.fixture
def toy():
    """A value exercise whose judge yields what the answer says, e.g. {"shape": True, "outputs": False}."""
    @exercise(ID, title="toy", points=4, kind="value", hint=[], tests=("loads", "shape", "outputs", "dtype"),
              skill=("outputs",))
    def _verdict(answer, seed):
        for name, ok in answer.items():
            if name == "skipped":
                yield DidNotDo("it hands back its input unchanged")
            else:
                yield TestResult(name, bool(ok), "ok" if ok else "wrong")

    yield REGISTRY[ID]
    REGISTRY.pop(ID, None)
    JUDGES.pop(ID, None)


def test_all_tests_pass_is_full_marks(toy):
    r = evaluate(toy, {"loads": 1, "shape": 1, "outputs": 1, "dtype": 1})
    assert (r.status, r.points) == ("passed", 4)


def test_wrong_outputs_cap_at_half_whatever_the_structure(toy):
    r = evaluate(toy, {"loads": 1, "shape": 1, "outputs": 0, "dtype": 1})
    assert r.status == "failed" and r.points == SKILL_CAP * 4 == 2  # 3/4 of the tests, capped


def test_a_test_the_judge_did_not_reach_counts_as_failed(toy):
    r = evaluate(toy, {"loads": 1, "shape": 0})           # an early exit: outputs and dtype never ran
    assert r.status == "failed" and r.points == 1         # 1 of 4, not 1 of 2
    assert [t.name for t in r.tests] == ["loads", "shape", "outputs", "dtype"]
    assert "not run" in r.tests[2].message


def test_structure_right_outputs_wrong_never_passes(toy):
    r = evaluate(toy, {"loads": 1, "shape": 1, "dtype": 1})   # skill test never yielded
    assert r.status == "failed" and r.points <= 2


def test_a_failed_skill_test_caps_at_half_whatever_its_kind(toy):
    r = evaluate(toy, {"loads": 1, "shape": 1, "outputs": 1, "dtype": 0})   # dtype is not a skill test here
    assert r.points == 3
    JUDGES[ID].skill = ("outputs", "dtype")                                   # ... and now it is
    r = evaluate(toy, {"loads": 1, "shape": 1, "outputs": 1, "dtype": 0})
    assert r.status == "failed" and r.points == SKILL_CAP * 4


def test_did_not_do_the_exercise_caps_at_a_quarter_even_when_every_test_passes(toy):
    r = evaluate(toy, {"loads": 1, "shape": 1, "outputs": 1, "dtype": 1, "skipped": 1})
    assert r.status == "failed" and r.points == SKIPPED_CAP * 4 == 1
    assert "does not do the exercise" in r.message and "input unchanged" in r.message
    r = evaluate(toy, {"loads": 0, "shape": 0, "outputs": 0, "dtype": 0, "skipped": 1})
    assert r.points == 0                     # the lower of the share of tests passed and the cap
    assert [t.name for t in r.tests] == ["loads", "shape", "outputs", "dtype"]  # no extra test row


def test_an_undeclared_test_is_a_broken_check_not_a_point(toy):
    r = evaluate(toy, {"loads": 1, "shape": 1, "outputs": 1, "dtype": 1, "bonus": 1})
    assert r.status == "error" and r.points == 0 and "does not declare" in r.message


def test_a_spec_without_tests_or_skill_is_refused():
    """`@exercise` itself enforces the scoring rule's inputs: a fixed, non-empty list of distinct tests and
    at least one skill test among them (a structure-only judge could score full without doing the work)."""
    spec = dict(title="toy", points=1, kind="value", hint=[])
    for tests, skill, why in [((), ("shape",), "tests="), (("shape", "shape"), ("shape",), "tests="),
                              (("shape",), (), "skill="), (("shape",), ("outputs",), "skill=")]:
        with pytest.raises(ValueError, match=why):
            exercise("99.toy_nogate", tests=tests, skill=skill, **spec)
    assert "99.toy_nogate" not in REGISTRY and "99.toy_nogate" not in JUDGES


def test_the_learners_check_also_judges_an_artifact_at_a_seed_it_has_never_seen():
    """An artifact judged on inputs drawn from the seed (a model run at batch sizes the seed picks...) is judged
    at a fresh seed in the panel too, as the grader judges it at its hidden one: a value right only for the
    notebook's seed fails both (the panel used to try seed 0 only, and passed it)."""
    from labkit.checks import check

    @exercise("99.toy_artifact", title="toy", points=2, kind="value", hint=[], tests=("right for the seed",),
              skill=("right for the seed",))
    def _verdict(answer, seed):
        yield TestResult("right for the seed", answer == seed or answer == "any", f"got {answer!r}")

    try:
        r = check("99.toy_artifact", 0)  # right at the notebook's seed 0 only
        assert r.status == "failed" and r.message.startswith("On new test inputs (seed "), r
        assert check("99.toy_artifact", "any").status == "passed"
    finally:
        REGISTRY.pop("99.toy_artifact", None)
        JUDGES.pop("99.toy_artifact", None)


def test_the_learners_check_also_runs_a_function_on_inputs_it_has_never_seen():
    """An answer that replays the outputs it saw at the notebook's seed passes `evaluate(seed=0)` but not the
    check a learner runs (`check()` adds a fresh seed), so the panel and the grade agree."""
    from labkit.checks import check, evaluate_unseen, expect_close

    def cases(seed):
        return [(float(seed * 10 + i),) for i in range(3)]

    @exercise("99.toy_unseen", title="toy", points=2, kind="function", hint=[], cases=cases, tests=("doubles",),
              skill=("doubles",))
    def _verdict(outputs, seed):
        yield expect_close("doubles", outputs, [2 * x for (x,) in cases(seed)])

    try:
        seen = {x: 2 * x for (x,) in cases(0)}
        replay = lambda x: seen.get(x, 0.0)  # noqa: E731 (the values of the notebook's inputs, learnt by heart)
        assert evaluate(REGISTRY["99.toy_unseen"], replay).status == "passed"
        r = check("99.toy_unseen", replay)
        assert r.status == "failed" and r.message.startswith("On new test inputs (seed "), r
        assert evaluate_unseen(REGISTRY["99.toy_unseen"], lambda x: 2 * x).status == "passed"
        right = check("99.toy_unseen", lambda x: 2 * x)
        assert right.status == "passed" and right.message == evaluate(REGISTRY["99.toy_unseen"], lambda x: 2 * x).message
    finally:
        REGISTRY.pop("99.toy_unseen", None)
        JUDGES.pop("99.toy_unseen", None)


def test_hints_are_steps_revealed_one_click_at_a_time():
    from labkit.checks.display import panel_html
    from labkit.checks.result import Result

    from labkit.checks.registry import make_exercise

    ex = make_exercise("99.toy_hint", title="toy", points=1, kind="value", hint=["the concept", "the API"])
    try:
        assert ex.hints == ["the concept", "the API"]
        html = panel_html(Result(ex.id, ex.title, "failed", 0, 1, "no", [], ex.hint))
        assert html.count("<details") == 2 and html.index("the concept") < html.index("the API")
        assert html.index("the API") > html.index("Another hint")  # the second step sits behind a second click
        assert "the concept" not in panel_html(Result(ex.id, ex.title, "passed", 1, 1, "ok", [], ex.hint))
        with pytest.raises(ValueError, match="one-line steps"):
            make_exercise("99.toy_hint", title="toy", points=1, kind="value", hint=["two\nlines"])
    finally:
        REGISTRY.pop("99.toy_hint", None)
