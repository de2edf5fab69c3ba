"""What a check cell shows, without a browser: quiz outputs that survive a reopen, Markdown prompts,
messages cut at a word, an engine's error once per panel, beginner-directed NumPy advice."""
from __future__ import annotations

import numpy as np
import pytest

import labkit
from labkit.checks import RESULT_MIME, TestResult, evaluate, get, lesson_exercises
from labkit.checks import display
from labkit.checks.display import QUIZ_CSS, inline_markdown, once_per_panel, panel_html, quiz_widget
from labkit.checks.judging import not_attempted
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


def test_quiz_check_shows_a_static_copy_then_the_widget():
    pytest.importorskip("ipywidgets")
    ex = get("00.quiz")
    shown = _published(labkit.check("00.quiz", {q.key: "a" for q in ex.questions}))
    assert len(shown) == 2, [list(b) for b in shown]
    static, live = shown
    # the verdict travels in exactly one output (the grader reads it there)
    assert RESULT_MIME in static and RESULT_MIME not in live
    assert "application/vnd.jupyter.widget-view+json" in live and "text/html" not in live
    page = static["text/html"]
    assert "labkit-quiz-static" in page and "labkit-check" in page
    for q in ex.questions:
        assert inline_markdown(q.prompt) in page
        for text in q.options.values():
            assert inline_markdown(text) in page
    assert page.count("◉") == len(ex.questions)          # the learner's choices are marked
    assert "<em>Not attempted</em>" in page               # the prompt's Markdown is rendered
    assert ":has(.labkit-live)" in page and "display: none" in page


def test_quiz_widget_is_one_radio_group_per_question_with_wrapping_css():
    w = pytest.importorskip("ipywidgets")
    for lesson in ("00", "01", "02"):
        for ex in (e for e in lesson_exercises(lesson) if e.kind == "quiz"):
            display._last_quiz_answer.pop(ex.id, None)   # nothing chosen yet
            box = quiz_widget(ex, not_attempted(ex), lambda choices: evaluate(ex, choices))
            assert "labkit-quiz" in box._dom_classes
            radios = [c for c in box.children if isinstance(c, w.RadioButtons)]
            assert [len(r.options) for r in radios] == [len(q.options) for q in ex.questions]
            assert all(r.value is None for r in radios)
            assert box.children[0].value == QUIZ_CSS and "white-space: normal" in QUIZ_CSS


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
