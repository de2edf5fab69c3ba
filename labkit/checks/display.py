"""How a verdict looks: the HTML panel, the display bundle a check cell outputs, the quiz widget.

Learner side: nothing here imports the judges; the quiz widget's Check button gets its judge from the
`check()` facade (`remember_quiz`)."""
from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Any, Callable

from .registry import REGISTRY, Exercise, hint_steps

if TYPE_CHECKING:
    from .result import Result

LABELS = {"passed": "Passed", "failed": "Not yet", "not_attempted": "Not attempted", "error": "Error",
          "timeout": "Timed out", "missing": "Missing"}
#: mimetype of the machine-readable verdict a check cell outputs beside its HTML panel
RESULT_MIME = "application/vnd.labkit.result+json"

COLORS = {"passed": "#1a7f37", "failed": "#cf222e", "not_attempted": "#6e7781",
          "error": "#bc4c00", "timeout": "#bc4c00", "missing": "#6e7781"}


def panel_html(r: Result) -> str:
    """A compact HTML panel: status, points, each test with its message, a hint on demand."""
    e = html.escape
    color = COLORS.get(r.status, "#6e7781")
    failed = [t for t in r.tests if not t.passed]   # errors are said once; a passing test's message stays whole
    said = dict(zip(map(id, failed), once_per_panel(r.message, [t.message for t in failed])))
    rows = "".join(
        f"<li style='margin:1px 0'><span style='color:{COLORS['passed'] if t.passed else COLORS['failed']}'>"
        f"{'✔' if t.passed else '✘'}</span> <b>{e(t.name)}</b>: {e(said.get(id(t), t.message))}</li>"
        for t in r.tests)
    tests = f"<ul style='list-style:none;padding-left:0.5em;margin:4px 0'>{rows}</ul>" if rows else ""
    msg = "" if (r.status == "passed" and r.tests) else f"<div style='margin:4px 0'>{e(r.message)}</div>"
    hint = hint_html(r.hint) if r.status != "passed" else ""
    ex = REGISTRY.get(r.exercise)
    unit = "bonus points (outside the lesson's maximum)" if ex is not None and ex.bonus else "points"
    score = f"<b>{r.points:g}/{r.max_points:g}</b> {unit}" if r.max_points else "points when graded"  # a release
    return (f"<div class='labkit-check labkit-{e(r.status)}' style='border-left:5px solid {color};"
            f"padding:6px 10px;margin:4px 0;background:#f6f8fa;font-family:sans-serif;font-size:13px;color:#24292f'>"
            f"<div><b style='color:{color}'>{LABELS.get(r.status, r.status)}</b> · <code>{e(r.exercise)}</code> "
            f"{e(r.title)} · {score}</div>{msg}{tests}{hint}</div>")


def hint_html(hint: str) -> str:
    """The hint's steps (one per line) as nested <details>: each click reveals one more step."""
    html_ = ""
    steps = hint_steps(hint)
    for i, step in reversed(list(enumerate(steps))):
        label = "Hint" if i == 0 else "Another hint"
        html_ = (f"<details style='margin-top:4px'><summary style='cursor:pointer'>{label}"
                 f"{f' ({i + 1} of {len(steps)})' if len(steps) > 1 else ''}</summary>"
                 f"<div style='margin:2px 0 0 0.8em'>{html.escape(step)}{html_}</div></details>")
    return html_


LONG_ERROR = 60   # a message part this long, seen again in the same panel, is said once


def once_per_panel(first: str, messages: list[str]) -> list[str]:
    """`messages` with every long part already shown (in `first` or an earlier message) replaced by a
    pointer to it: an engine's error that three tests ran into is printed once, not three times."""
    seen = [first] if first else []
    out = []
    for m in messages:
        shown = m
        for earlier in seen:
            for part in _parts(earlier):
                if len(part) >= LONG_ERROR and part in shown:
                    shown = shown.replace(part, "(the same error as above)")
        out.append(shown)
        seen.append(m)
    return out


def _parts(message: str) -> list[str]:
    """A message and its pieces after a colon ("your model: <engine error>" -> the engine error too)."""
    pieces = [message]
    i = message.find(": ")
    while i != -1:
        pieces.append(message[i + 2:])
        i = message.find(": ", i + 2)
    return pieces


def mimebundle(r: Result) -> dict:
    """What a check cell displays as one static output: HTML panel (for a quiz, its questions too), text,
    and the verdict as JSON. A quiz's live widget is a second output (see `show`)."""
    ex = REGISTRY.get(r.exercise)
    html_ = quiz_static_html(ex, r) if ex is not None and ex.kind == "quiz" else panel_html(r)
    return {"text/html": html_, "text/plain": repr(r), RESULT_MIME: r.to_dict()}


def show(r: Result) -> None:
    """Display a verdict: the static output, then (quizzes) the live widget.

    The static output stays readable in a saved notebook reopened later (a widget's model lives in the
    kernel only, so a reopened widget output says "model not found"); CSS hides whichever of the two is
    not wanted: the static copy while the widget is alive, the widget's error once it is gone."""
    from IPython.display import display

    display(mimebundle(r), raw=True)
    ex = REGISTRY.get(r.exercise)
    judge = _quiz_judges.get(r.exercise)
    if ex is not None and ex.kind == "quiz" and judge is not None:
        try:
            display(quiz_widget(ex, r, judge))
        except ImportError:  # ipywidgets missing: the static output still shows the verdict
            pass


_last_quiz_answer: dict[str, dict] = {}
_quiz_judges: dict[str, Callable[[dict], Result]] = {}


def remember_quiz(ex: Exercise, answer: Any, judge: Callable[[dict], Result]) -> None:
    """Keep the learner's last quiz answer (the widget shows it selected) and `judge`, what the widget's
    Check button runs on the choices (given by the `check()` facade: this module never imports judges)."""
    if ex.kind != "quiz":
        return
    _quiz_judges[ex.id] = judge
    if isinstance(answer, dict):
        _last_quiz_answer[ex.id] = {k: v.strip().lower() for k, v in answer.items() if isinstance(v, str)}


def inline_markdown(text: str) -> str:
    """The inline Markdown of a quiz prompt or option as HTML: `code`, **bold**, *emphasis* (all else escaped)."""
    out = []
    for i, part in enumerate(re.split(r"(`[^`]+`)", text)):
        if i % 2:
            out.append(f"<code>{html.escape(part[1:-1])}</code>")
            continue
        part = html.escape(part, quote=False)
        part = re.sub(r"\*\*(\S(?:.*?\S)?)\*\*", r"<b>\1</b>", part)
        part = re.sub(r"(?<![\w*])\*(\S(?:[^*]*?\S)?)\*(?![\w*])", r"<em>\1</em>", part)
        out.append(part)
    return "".join(out)


# Options wrap as normal text beside their radio circle (ipywidgets draws each option one line high, so a
# long option would spill over the next one). The :has() rules pick what a reader sees: the live widget,
# or, in a reopened notebook whose kernel no longer knows the widget, the static copy of the quiz. In
# JupyterLab a widget output gets the class `jupyter-widgets` on its output node only when it failed
# ("Error displaying widget: model not found"): any such output in the lesson says instead that it is a
# widget to re-run. (JupyterLab drops <style> from untrusted outputs: there both copies show.)
QUIZ_CSS = """<style>
.labkit-quiz .widget-radio { width: auto; max-width: 100%; height: auto; }
.labkit-quiz .widget-radio-box { width: 100%; margin-bottom: 4px; }
.labkit-quiz .widget-radio-box label { display: flex; align-items: flex-start; height: auto; line-height: 1.35;
  white-space: normal; overflow-wrap: anywhere; padding: 2px 0; margin: 0; }
.labkit-quiz .widget-radio-box input { order: -1; float: none; flex: none; height: 1.35em; margin: 0 0.6em 0 2px; }
.labkit-quiz .widget-html-content { white-space: normal; line-height: 1.4; height: auto; }
.labkit-quiz .widget-html { height: auto; }
.jp-OutputArea:has(.labkit-live) .labkit-static { display: none; }
.jp-OutputArea:has(.labkit-static) .jp-OutputArea-output.jupyter-widgets:not(:has(.labkit-live)) { display: none; }
.jp-OutputArea-output.jupyter-widgets:not(:has(*)) { font-size: 0; }
.jp-OutputArea-output.jupyter-widgets:not(:has(*))::after { content: "(an interactive widget: run this cell again to see it)";
  font-size: var(--jp-content-font-size1, 13px); font-style: italic; color: var(--jp-content-font-color2, #6e7781); }
</style>"""


def quiz_static_html(ex: Exercise, r: Result) -> str:
    """The quiz as static HTML: questions, options (the learner's last choice marked) and the panel."""
    given = _last_quiz_answer.get(ex.id, {})
    parts = []
    for q in ex.questions:
        opts = "".join(
            f"<li style='margin:1px 0'>{'◉' if given.get(q.key) == k else '○'} <b>{html.escape(k)})</b> "
            f"{inline_markdown(v)}</li>" for k, v in q.options.items())
        parts.append(f"<div style='margin:6px 0 2px'><b>{html.escape(q.key)}.</b> {inline_markdown(q.prompt)}</div>"
                     f"<ul style='list-style:none;padding-left:1em;margin:0'>{opts}</ul>")
    return (f"{QUIZ_CSS}<div class='labkit-quiz-static labkit-static' style='border:1px solid #d0d7de;padding:6px;"
            f"font-family:sans-serif;font-size:13px;color:#24292f'>"
            f"<div style='color:#6e7781;font-size:12px'>Run this cell to answer the quiz with buttons "
            f"(this copy of it is not clickable).</div>{''.join(parts)}{panel_html(r)}</div>")


def quiz_widget(ex: Exercise, initial: Result, judge: Callable[[dict], Result]):
    """Radio buttons per question, a Check button (it runs `judge` on the choices), the panel, and the
    dict to hand in."""
    import ipywidgets as w

    answers = {}
    given = _last_quiz_answer.get(ex.id, {})
    for q in ex.questions:
        opts = [(f"{k}) {v}", k) for k, v in q.options.items()]
        value = given.get(q.key) if given.get(q.key) in q.options else None
        answers[q.key] = w.RadioButtons(options=opts, value=value, layout=w.Layout(width="auto"))
    panel = w.HTML(panel_html(initial))
    record = w.HTML()

    def current() -> dict:
        return {k: rb.value for k, rb in answers.items()}

    def show_record(*_):
        record.value = ("<div style='font-size:12px'>Graded answer — put this in the answer cell above: "
                        f"<code>{html.escape(repr(current()))}</code></div>")

    def on_check(_):
        panel.value = panel_html(judge(current()))
        show_record()

    button = w.Button(description="Check my choices", button_style="primary")
    button.on_click(on_check)
    for rb in answers.values():
        rb.observe(show_record, names="value")
    show_record()
    items = [w.HTML(QUIZ_CSS)]
    for q in ex.questions:
        items += [w.HTML(f"<b>{html.escape(q.key)}.</b> {inline_markdown(q.prompt)}", layout=w.Layout(width="100%")),
                  answers[q.key]]
    box = w.VBox(items + [button, panel, record], layout=w.Layout(border="1px solid #d0d7de", padding="6px"))
    box.add_class("labkit-quiz")
    box.add_class("labkit-live")
    return box


def show_with_fallback(widget, static_html: str) -> None:
    """Display `widget` with a static HTML copy beside it (see QUIZ_CSS): the copy shows only where the
    widget cannot, e.g. in a saved notebook reopened before its cell runs again."""
    from IPython.display import display

    note = ("<div style='color:#6e7781;font-size:12px'>A static copy: run this cell to use the widget.</div>")
    display({"text/html": f"{QUIZ_CSS}<div class='labkit-static'>{note}{static_html}</div>",
             "text/plain": "(a widget: run this cell to use it)"}, raw=True)
    widget.add_class("labkit-live")
    display(widget._repr_mimebundle_(), raw=True)   # not display(widget): it may be the caller
