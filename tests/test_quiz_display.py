"""What a check cell shows, without a browser: quiz buttons whose clicks become the answer cell's code,
a static copy that survives a reopen, Markdown rendered in prompts, messages and hints,
messages cut at a word, an engine's error once per panel, beginner-directed NumPy advice."""
from __future__ import annotations

import numpy as np
import pytest

import labkit
from labkit.checks import RESULT_MIME, TestResult, evaluate, get, lesson_exercises
from labkit.checks.display import inline_markdown, once_per_panel, panel_html
from labkit.checks.result import Result
from labkit.text import for_beginners, shorten


def _published(result) -> list[dict]:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shown: list[dict] = []
    old = shell.display_pub.publish
    shell.display_pub.publish = lambda data, metadata=None, **kw: shown.append(data)
    try:
        result._ipython_display_()
    finally:
        shell.display_pub.publish = old
    return shown


def _shown(fn, *args) -> list[tuple[dict, dict]]:
    """(data, kwargs) of every display `fn(*args)` publishes (updates included)."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shown: list[tuple[dict, dict]] = []
    old = shell.display_pub.publish
    shell.display_pub.publish = lambda data, metadata=None, **kw: shown.append((data, kw))
    try:
        fn(*args)
    finally:
        shell.display_pub.publish = old
    return shown


def _radios(box):
    import ipywidgets as w

    return [c for c in box.children if isinstance(c, w.RadioButtons)]


def test_quiz_buttons_show_every_question_with_how_to_answer():
    """The answer cell shows a static copy (what a reopened notebook shows) and the live widget: every
    question, its options as radio buttons, and how answering works."""
    w = pytest.importorskip("ipywidgets")
    for ex in (e for lesson in ("00", "06", "09") for e in lesson_exercises(lesson) if e.kind == "quiz"):
        answers = {q.key: None for q in ex.questions}
        (static, kw), (live, _) = _shown(labkit.quiz_buttons, ex.id, answers)
        assert "display_id" in kw.get("transient", {}), "the static copy must be updatable"
        page = static["text/html"]
        assert "labkit-quiz-static" in page and "◉ <b>" not in page and f"quiz_{ex.lesson} = {{…}}" in page
        for q in ex.questions:
            assert inline_markdown(q.prompt) in page and all(inline_markdown(t) in page for t in q.options.values())
        assert "application/vnd.jupyter.widget-view+json" in live
        box = w.Widget.widgets[live["application/vnd.jupyter.widget-view+json"]["model_id"]]
        assert {"labkit-quiz", "labkit-live"} <= set(box._dom_classes)
        assert [len(r.options) for r in _radios(box)] == [len(q.options) for q in ex.questions]
        assert all(r.value is None for r in _radios(box))
        text = " ".join(getattr(c, "value", "") for c in box.children if isinstance(c, w.HTML))
        assert "Click one option per question" in text and "graded answer" in text
        assert all(inline_markdown(q.prompt) in text for q in ex.questions)


def test_a_click_changes_the_dict_the_static_copy_and_the_cell_source():
    w = pytest.importorskip("ipywidgets")
    ex = get("00.quiz")
    answers = {q.key: None for q in ex.questions}
    answers["q2"] = " A "              # typed by hand: shown selected
    (static, kw), (live, _) = _shown(labkit.quiz_buttons, ex.id, answers)
    assert static["text/html"].count("◉ <b>") == 1
    box = w.Widget.widgets[live["application/vnd.jupyter.widget-view+json"]["model_id"]]
    radios = _radios(box)
    assert radios[1].value == "a"
    updates = _shown(setattr, radios[0], "value", "b")
    assert answers == {**{q.key: None for q in ex.questions}, "q1": "b", "q2": "a"}   # the kernel's dict, in place
    (data, ukw), = updates
    assert ukw.get("update") and ukw["transient"]["display_id"] == kw["transient"]["display_id"]
    assert data["text/html"].count("◉ <b>") == 2
    assert data["text/plain"] == 'quiz_00 = {"q1": "b", "q2": "a", "q3": null, "q4": null, "q5": null}'.replace("null", "None")
    writer = next(c for c in box.children if isinstance(c, w.Output))
    js = writer.outputs[0]["data"]["application/javascript"]
    import json

    assert json.dumps('{"q1": "b", "q2": "a", "q3": None, "q4": None, "q5": None}') in js
    assert "cmTile" in js and "cmView" in js and "view.dispatch" in js


def test_answer_line_is_the_code_the_grader_runs():
    from labkit.checks.quizbox import answer_line

    line = answer_line({"q2": "c", "q1": "a", "extra": "x"}, ["q1", "q2", "q3"])
    assert line == '{"q1": "a", "q2": "c", "q3": None}' and eval(line) == {"q1": "a", "q2": "c", "q3": None}


def test_quiz_buttons_show_nothing_in_a_graded_kernel(monkeypatch):
    from labkit.checks.collect import COLLECT_ENV

    monkeypatch.setenv(COLLECT_ENV, "/nonexistent")
    assert _shown(labkit.quiz_buttons, "00.quiz", {"q1": "a"}) == []


def test_quiz_check_shows_the_verdict_only_with_markdown_rendered():
    ex = get("00.quiz")
    shown = _published(labkit.check("00.quiz", {q.key: "a" for q in ex.questions}))
    assert len(shown) == 1 and RESULT_MIME in shown[0]
    page = shown[0]["text/html"]
    assert "labkit-check" in page and "labkit-quiz" not in page
    wrong = panel_html(evaluate(ex, {"q1": "a", "q2": "a", "q3": "c", "q4": "b", "q5": "c"}))
    assert "think again about: A check cell shows <em>Not attempted</em>" in wrong and "*Not" not in wrong
    right = evaluate(ex, {"q1": "b", "q2": "a", "q3": "c", "q4": "b", "q5": "c"})
    assert "`" not in panel_html(right) and "<code>quiz_00 = {...}</code>" in panel_html(right)


def test_hints_and_messages_render_markdown():
    r = Result("99.x", "x", "failed", 0.0, 1.0, "Use `np.maximum`, *not* a loop",
               [TestResult("t", False, "expected **3**")], hint="Think of `Relu`\nThen *np.clip*")
    page = panel_html(r)
    assert "<code>np.maximum</code>, <em>not</em> a loop" in page and "expected <b>3</b>" in page
    assert "<code>Relu</code>" in page and "<em>np.clip</em>" in page and "`" not in page


def test_inline_markdown_escapes_and_renders():
    assert inline_markdown("`if x < 4:` *really* **now** <b>") == \
        "<code>if x &lt; 4:</code> <em>really</em> <b>now</b> &lt;b&gt;"
    assert inline_markdown("2*3 and a*b*c") == "2*3 and a*b*c"


def test_shorten_cuts_at_a_word_with_an_ellipsis():
    text = "Please fix either the inputs/outputs or the model path you gave"
    cut = shorten(text, 40)
    assert cut == "Please fix either the inputs/outputs…" and len(cut) <= 40
    assert shorten("short  text\n", 40) == "short text"
    assert shorten("x" * 50, 10) == "x" * 9 + "…"


def test_an_engine_error_is_printed_once_per_panel():
    err = ("Got invalid dimensions for input: X for the following indices index: 0 Got: 3 Expected: 1 "
           "Please fix either the inputs/outputs or the model path")
    r = Result("99.x", "x", "failed", 0.0, 1.0, "0/3 tests passed",
               [TestResult("batch 1", False, f"ONNX Runtime failed at batch size 1: {err}"),
                TestResult("batch 3", False, f"ONNX Runtime failed at batch size 3: {err}"),
                TestResult("short", False, "no"), TestResult("short again", False, "no")])
    page = panel_html(r)
    assert page.count("Please fix either") == 1 and "(the same error as above)" in page
    assert page.count(": no</li>") == 2       # short messages are not replaced
    assert once_per_panel("", ["a", "b"]) == ["a", "b"]


def test_a_panel_says_its_first_failure_once_in_its_row():
    """The verdict's message quotes the first failed test (for grades.csv); the panel's summary leaves that
    to the test's own row, which shows it whole (issue 36: "restates its first test, then lists it again
    as (the same error as above)")."""
    err = "the logits differ from PyTorch's at batch 3, length 7: largest difference 0.41 at position 5"
    r = Result("99.x", "x", "failed", 1.0, 3.0, f"1/3 tests passed. batch 3: {err}",
               [TestResult("batch 1", True, "matches"), TestResult("batch 3", False, err),
                TestResult("length 1", False, "not run (after 'batch 3' failed)")])
    page = panel_html(r)
    assert page.count("largest difference 0.41") == 1 and "(the same error as above)" not in page
    assert "1/3 tests passed." in page and "batch 3</b>: the logits differ" in page
    assert r.message.endswith(err), "the message itself keeps the first failure for text output"


def test_an_engine_error_keeps_which_indices_and_its_end():
    from labkit.checks.judging import error_line

    e = RuntimeError("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Got invalid dimensions for input: x for the "
                     "following indices\n index: 0 Got: 2 Expected: 1\n index: 1 Got: 7 Expected: 5\n Please fix "
                     "either the inputs/outputs or the model.")
    assert error_line(e) == ("Got invalid dimensions for input: x for the following indices: "
                             "index: 0 Got: 2 Expected: 1; index: 1 Got: 7 Expected: 5")
    long = ValueError("the start of a long error " + "filler " * 60 + "and its end: expected 5, got 7")
    cut = error_line(long, 120)
    assert len(cut) <= 120 and cut.startswith("the start of a long error") and cut.endswith("expected 5, got 7")
    assert "… " in cut
    assert shorten("x" * 50, 10, keep_end=True) == "x" * 9 + "…"  # too short to keep both ends


def test_passing_tests_keep_their_whole_message():
    same = "matches scikit-learn on every test digit, largest difference well below the tolerance of 1e-5"
    r = Result("99.x", "x", "passed", 2.0, 2.0, "2/2 tests passed",
               [TestResult("pipeline", True, same), TestResult("forest", True, same)])
    assert panel_html(r).count(same) == 2 and "(the same error as above)" not in panel_html(r)


def test_numpy_truth_value_advice_is_replaced_for_beginners():
    try:
        max(np.array([1.0, -1.0]), 0)
    except ValueError as e:
        said = for_beginners(e, f"ValueError: {e}")
    assert "element by element" in said and "not with a.any() or a.all()" in said
    r = evaluate(get("00.relu"), lambda x: max(x, 0))
    assert r.status == "failed" and "element by element" in r.tests[0].message
    assert for_beginners(KeyError("k"), "KeyError: 'k'") == "KeyError: 'k'"


def test_a_course_widget_is_shown_with_a_static_copy():
    """labkit.viz.op_diff_explorer (lesson 05): the widget and, beside it, a static copy for a reopened notebook."""
    pytest.importorskip("ipywidgets")
    from collections import Counter

    from labkit.viz import op_diff_explorer

    box = op_diff_explorer({"DISABLE": Counter(Conv=2, Relu=2), "ALL": Counter(FusedConv=2)}, base="DISABLE")
    shown = _published(box)
    assert len(shown) == 2
    static, live = shown
    assert "labkit-static" in static["text/html"] and "FusedConv" in static["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in live and "labkit-live" in box._dom_classes
