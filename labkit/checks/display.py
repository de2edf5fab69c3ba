"""How a verdict looks: the HTML panel and the display bundle a check cell outputs (Markdown rendered).

Learner side: nothing here imports the judges. A quiz's buttons are in `quizbox`."""
from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

from .registry import REGISTRY, hint_steps

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
    summary = panel_summary(r.message, failed)
    said = dict(zip(map(id, failed), once_per_panel(summary, [t.message for t in failed])))
    rows = "".join(
        f"<li style='margin:1px 0'><span style='color:{COLORS['passed'] if t.passed else COLORS['failed']}'>"
        f"{'✔' if t.passed else '✘'}</span> <b>{e(t.name)}</b>: {inline_markdown(said.get(id(t), t.message))}</li>"
        for t in r.tests)
    tests = f"<ul style='list-style:none;padding-left:0.5em;margin:4px 0'>{rows}</ul>" if rows else ""
    msg = "" if (r.status == "passed" and r.tests) else f"<div style='margin:4px 0'>{inline_markdown(summary)}</div>"
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
                 f"<div style='margin:2px 0 0 0.8em'>{inline_markdown(step)}{html_}</div></details>")
    return html_


LONG_ERROR = 60   # a message part this long, seen again in the same panel, is said once


def panel_summary(message: str, failed: list) -> str:
    """A verdict's message without the first failed test's "name: message", which its own row shows (the
    message keeps it for grades.csv and text output, where no rows follow)."""
    clause = f" {failed[0].said()}" if failed else ""
    return message.replace(clause, "", 1) if clause and clause in message else message


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
    """What a check cell displays, one static output: the HTML panel, text, and the verdict as JSON.
    (A quiz is answered with the buttons of its answer cell, `quizbox.quiz_buttons`; its check cell
    shows the verdict only.)"""
    return {"text/html": panel_html(r), "text/plain": repr(r), RESULT_MIME: r.to_dict()}


def show(r: Result) -> None:
    """Display a verdict (the static output stays readable in a saved notebook reopened later)."""
    from IPython.display import display

    display(mimebundle(r), raw=True)


def inline_markdown(text: str) -> str:
    """The inline Markdown of a quiz prompt, option, test message or hint as HTML: `code`, **bold**,
    *emphasis* (all else escaped)."""
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


def plain_markdown(text: str) -> str:
    """Inline Markdown as plain text (a radio button's label cannot hold HTML): marks dropped."""
    text = re.sub(r"`([^`]+)`", r"\1", text)
    text = re.sub(r"\*\*(\S(?:.*?\S)?)\*\*", r"\1", text)
    return re.sub(r"(?<![\w*])\*(\S(?:[^*]*?\S)?)\*(?![\w*])", r"\1", text)


# Options wrap as normal text beside their radio circle (ipywidgets draws each option one line high, so a
# long option would spill over the next one). The :has() rules pick what a reader sees: the live widget,
# or, in a reopened notebook whose kernel no longer knows the widget, the static copy. In JupyterLab a
# widget output gets the class `jupyter-widgets` on its output node only when it failed ("Error
# displaying widget: model not found"): any such output in the lesson says instead that it is a widget to
# re-run. (JupyterLab drops <style> from untrusted outputs: there both copies show.)
QUIZ_CSS = """<style>
.labkit-quiz .widget-radio { width: auto; max-width: 100%; height: auto; }
.labkit-quiz .widget-radio-box { width: 100%; margin-bottom: 4px; }
.labkit-quiz .widget-radio-box label { display: flex; align-items: flex-start; height: auto; line-height: 1.35;
  white-space: normal; overflow-wrap: anywhere; padding: 2px 0; margin: 0; }
.labkit-quiz .widget-radio-box input { order: -1; float: none; flex: none; height: 1.35em; margin: 0 0.6em 0 2px; }
.labkit-quiz .widget-html-content { white-space: normal; line-height: 1.4; height: auto; }
.labkit-quiz .widget-html { height: auto; }
.labkit-quiz .widget-output { height: 0; min-height: 0; overflow: hidden; }
.jp-OutputArea:has(.labkit-live) .labkit-static { display: none; }
.jp-OutputArea:has(.labkit-static) .jp-OutputArea-output.jupyter-widgets:not(:has(.labkit-live)) { display: none; }
.jp-OutputArea-output.jupyter-widgets:not(:has(*)) { font-size: 0; }
.jp-OutputArea-output.jupyter-widgets:not(:has(*))::after { content: "(an interactive widget: run this cell again to see it)";
  font-size: var(--jp-content-font-size1, 13px); font-style: italic; color: var(--jp-content-font-color2, #6e7781); }
</style>"""


def show_with_fallback(widget, static_html: str) -> None:
    """Display `widget` with a static HTML copy beside it (see QUIZ_CSS): the copy shows only where the
    widget cannot, e.g. in a saved notebook reopened before its cell runs again."""
    from IPython.display import display

    note = ("<div style='color:#6e7781;font-size:12px'>A static copy: run this cell to use the widget.</div>")
    display({"text/html": f"{QUIZ_CSS}<div class='labkit-static'>{note}{static_html}</div>",
             "text/plain": "(a widget: run this cell to use it)"}, raw=True)
    widget.add_class("labkit-live")
    display(widget_bundle(widget), raw=True)   # not display(widget): it may be the caller


def widget_bundle(widget) -> dict:
    """`widget`'s display data with a one-line text/plain: a saved notebook keeps the text beside the
    widget's view, and a reopened one without the widget's state shows it (ipywidgets' repr would spell
    out every child, CSS and all)."""
    from ..clean import WIDGET_NOTE

    bundle = dict(widget._repr_mimebundle_())
    bundle["text/plain"] = WIDGET_NOTE
    return bundle
