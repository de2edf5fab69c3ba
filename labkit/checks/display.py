"""How a verdict looks: the HTML panel, the display bundle a check cell outputs, the quiz widget."""
from __future__ import annotations

import html
from typing import Any

from .registry import REGISTRY, Exercise
from .result import LABELS, RESULT_MIME, Result

COLORS = {"passed": "#1a7f37", "failed": "#cf222e", "not_attempted": "#6e7781",
          "error": "#bc4c00", "timeout": "#bc4c00", "missing": "#6e7781"}


def panel_html(r: Result) -> str:
    """A compact HTML panel: status, points, each test with its message, a hint on demand."""
    e = html.escape
    color = COLORS.get(r.status, "#6e7781")
    rows = "".join(
        f"<li style='margin:1px 0'><span style='color:{COLORS['passed'] if t.passed else COLORS['failed']}'>"
        f"{'✔' if t.passed else '✘'}</span> <b>{e(t.name)}</b>: {e(t.message)}</li>"
        for t in r.tests)
    tests = f"<ul style='list-style:none;padding-left:0.5em;margin:4px 0'>{rows}</ul>" if rows else ""
    msg = "" if (r.status == "passed" and r.tests) else f"<div style='margin:4px 0'>{e(r.message)}</div>"
    hint = hint_html(r.hint) if r.status != "passed" else ""
    return (f"<div class='labkit-check labkit-{e(r.status)}' style='border-left:5px solid {color};"
            f"padding:6px 10px;margin:4px 0;background:#f6f8fa;font-family:sans-serif;font-size:13px;color:#24292f'>"
            f"<div><b style='color:{color}'>{LABELS.get(r.status, r.status)}</b> · <code>{e(r.exercise)}</code> "
            f"{e(r.title)} · <b>{r.points:g}/{r.max_points:g}</b> points</div>{msg}{tests}{hint}</div>")


def hint_html(hint: str) -> str:
    """The hint's steps (one per line) as nested <details>: each click reveals one more step."""
    from .registry import hint_steps

    html_ = ""
    steps = hint_steps(hint)
    for i, step in reversed(list(enumerate(steps))):
        label = "Hint" if i == 0 else "Another hint"
        html_ = (f"<details style='margin-top:4px'><summary style='cursor:pointer'>{label}"
                 f"{f' ({i + 1} of {len(steps)})' if len(steps) > 1 else ''}</summary>"
                 f"<div style='margin:2px 0 0 0.8em'>{html.escape(step)}{html_}</div></details>")
    return html_


def mimebundle(r: Result) -> dict:
    """What a check cell displays: HTML panel (a quiz widget for quizzes), text, and the verdict as JSON."""
    bundle = {"text/html": panel_html(r), "text/plain": repr(r), RESULT_MIME: r.to_dict()}
    ex = REGISTRY.get(r.exercise)
    if ex is not None and ex.kind == "quiz":
        try:
            bundle = {**quiz_widget(ex, r)._repr_mimebundle_(), RESULT_MIME: r.to_dict()}
        except Exception:  # ipywidgets missing: the static panel still shows the verdict
            pass
    return bundle


_last_quiz_answer: dict[str, dict] = {}


def remember_quiz(ex: Exercise, answer: Any) -> None:
    """Keep the learner's last quiz answer so the widget shows it selected."""
    if ex.kind == "quiz" and isinstance(answer, dict):
        _last_quiz_answer[ex.id] = {k: v.strip().lower() for k, v in answer.items() if isinstance(v, str)}


def quiz_widget(ex: Exercise, initial: Result):
    """Radio buttons per question, a Check button, the panel, and the dict to hand in."""
    import ipywidgets as w

    from .judging import INTERACTIVE_SEED, run_judge

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
        panel.value = panel_html(run_judge(ex, current(), INTERACTIVE_SEED))
        show_record()

    button = w.Button(description="Check my choices", button_style="primary")
    button.on_click(on_check)
    for rb in answers.values():
        rb.observe(show_record, names="value")
    show_record()
    items = []
    for q in ex.questions:
        items += [w.HTML(f"<b>{html.escape(q.key)}.</b> {html.escape(q.prompt)}"), answers[q.key]]
    return w.VBox(items + [button, panel, record], layout=w.Layout(border="1px solid #d0d7de", padding="6px"))
