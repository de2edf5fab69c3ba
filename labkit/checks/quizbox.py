"""A quiz answered by clicking: the buttons write the learner's choices into the answer cell's code.

The answer cell of quiz NN is

    quiz_NN = {"q1": None, "q2": None, ...}
    labkit.quiz_buttons("NN.quiz", quiz_NN)

Run, it shows every question with one radio button per option. A click changes the dict in the kernel
(the check cell below judges it at once) and rewrites the `quiz_NN = {...}` line of the cell's source in
the editor, so the saved notebook holds the choices as code: the grader, which runs only the learner's
answer cells (grading/rebuild.py), grades them with no frontend, and a reopened notebook shows them.

The rewrite is a small `application/javascript` output inside the widget (an ipywidgets Output, whose
outputs JupyterLab trusts): it finds the cell's CodeMirror editor from the DOM and replaces that one line.
A static copy of the quiz with the current choices marked (a display kept up to date on every click)
is what a reopened notebook shows until the cell runs again. Learner side: no judge, no key here.
"""
from __future__ import annotations

import html
import json
import os
from typing import Any

from .display import QUIZ_CSS, inline_markdown, plain_markdown, widget_bundle
from .registry import Exercise, get

HOW = ("Click one option per question. Each click is written into the code of this cell "
       "(<code>{var} = {{…}}</code>): that line is your graded answer, kept when you save the notebook. "
       "Run the check cell below to see which answers are right.")


def answer_line(answers: dict[str, Any], keys: list[str]) -> str:
    """The dict literal of the answer cell: `{"q1": "a", "q2": None}` (keys in question order)."""
    def lit(v: Any) -> str:
        return json.dumps(v) if isinstance(v, str) else "None"
    return "{" + ", ".join(f'"{k}": {lit(answers.get(k))}' for k in keys) + "}"


def static_html(ex: Exercise, answers: dict[str, Any], var: str) -> str:
    """The quiz as static HTML (a reopened notebook): questions, options, the saved choices marked."""
    parts = []
    for q in ex.questions:
        chosen = answers.get(q.key)
        chosen = chosen.strip().lower() if isinstance(chosen, str) else chosen
        opts = "".join(
            f"<li style='margin:1px 0'>{'◉' if chosen == k else '○'} <b>{html.escape(k)})</b> "
            f"{inline_markdown(v)}</li>" for k, v in q.options.items())
        parts.append(f"<div style='margin:6px 0 2px'><b>{html.escape(q.key)}.</b> {inline_markdown(q.prompt)}</div>"
                     f"<ul style='list-style:none;padding-left:1em;margin:0'>{opts}</ul>")
    return (f"{QUIZ_CSS}<div class='labkit-quiz-static labkit-static' style='border:1px solid #d0d7de;padding:6px;"
            f"font-family:sans-serif;font-size:13px;color:#24292f'>"
            f"<div style='color:#6e7781;font-size:12px'>Your saved answers are in the line <code>{html.escape(var)} = "
            f"{{…}}</code> above (◉ below). Run this cell to change them with buttons.</div>{''.join(parts)}</div>")


# Runs in the frontend each time the choices change: `element` is this output's node (JupyterLab's
# JavaScript renderer), inside the quiz widget, inside the answer cell. It waits until the output is on
# the page, finds the cell's CodeMirror 6 view (`cmTile` in current CodeMirror, `cmView` before) and
# replaces the first assignment (on one line or several) of a dict holding the first question's key.
REWRITE_JS = """(function () {
  var want = %(want)s, key = %(key)s, tries = 0;
  function say(text, ok) {
    var cell = element.closest('.jp-Cell');
    var s = cell && cell.querySelector('.labkit-quiz-saved');
    if (s) { s.textContent = text; s.style.color = ok ? '#1a7f37' : '#cf222e'; }
  }
  function run() {
    var cell = element.closest('.jp-Cell');
    if (!cell) { if (++tries < 40) setTimeout(run, 50); return; }
    var content = cell.querySelector('.jp-InputArea-editor .cm-content');
    var tile = content && (content.cmTile || content.cmView);
    var view = tile && ((tile.root && tile.root.view) || (tile.rootView && tile.rootView.view));
    if (!view || !view.state) {
      say('Your clicks could not be written into the code of this cell: type them there instead.', false);
      return;
    }
    var doc = view.state.doc.toString(), at = 0;
    var re = /^([ \\t]*)([A-Za-z_]\\w*)([ \\t]*=[ \\t]*)\\{[^{}]*\\}[ \\t]*$/gm, m;  // one line or several
    while ((m = re.exec(doc)) !== null) {
      if (m[0].indexOf('"' + key + '"') >= 0 || m[0].indexOf("'" + key + "'") >= 0) {
        var line = m[1] + m[2] + m[3] + want;
        if (line !== m[0]) view.dispatch({changes: {from: m.index, to: m.index + m[0].length, insert: line}});
        say('Saved in the code above: ' + m[2] + ' = ' + want, true);
        return;
      }
    }
    say('No line like ' + key + ' = {...} in this cell: put the dict back, or type your answers there.', false);
  }
  setTimeout(run, 0);
})();"""


def quiz_buttons(id: str, answers: Any) -> None:
    """Show quiz `id` as radio buttons whose clicks are written into the answer cell (see the module).
    In a graded kernel it shows nothing: there the answer cell's code is the answer."""
    from .collect import COLLECT_ENV

    if os.environ.get(COLLECT_ENV):
        return
    from IPython.display import display

    try:
        ex = get(id)
    except Exception:
        display({"text/plain": f"There is no quiz {id!r}."}, raw=True)
        return
    var = f"quiz_{ex.lesson}"
    if ex.kind != "quiz" or not isinstance(answers, dict):
        display({"text/plain": f"quiz_buttons({id!r}, ...) needs a quiz and its dict {var} = {{...}}"}, raw=True)
        return
    keys = [q.key for q in ex.questions]
    handle = display({"text/html": static_html(ex, answers, var), "text/plain": f"{var} = {answer_line(answers, keys)}"},
                     raw=True, display_id=True)
    try:
        box = _widget(ex, answers, keys, var, handle)
    except ImportError:   # no ipywidgets: the static copy and the code stay the way to answer
        return
    display(widget_bundle(box), raw=True)


def _widget(ex: Exercise, answers: dict, keys: list[str], var: str, handle: Any):
    import ipywidgets as w

    radios = {}
    for q in ex.questions:
        typed = answers.get(q.key)   # a letter typed by hand ("B ") is shown selected
        value = typed.strip().lower() if isinstance(typed, str) and typed.strip().lower() in q.options else None
        radios[q.key] = w.RadioButtons(options=[(f"{k}) {plain_markdown(v)}", k) for k, v in q.options.items()],
                                       value=value, layout=w.Layout(width="auto"))
    chosen = [k for k in keys if radios[k].value is not None]
    first = (f"{len(chosen)} of {len(keys)} answered, as the code above says." if chosen
             else "Nothing chosen yet: each click is saved in the code above.")
    saved = w.HTML(f"<span class='labkit-quiz-saved' style='font-size:12px;color:#57606a'>{first}</span>")
    writer = w.Output(layout=w.Layout(height="0px", overflow="hidden"))

    def on_change(change: dict) -> None:
        for k, rb in radios.items():
            answers[k] = rb.value
        line = answer_line(answers, keys)
        handle.update({"text/html": static_html(ex, answers, var), "text/plain": f"{var} = {line}"}, raw=True)
        js = REWRITE_JS % {"want": json.dumps(line), "key": json.dumps(keys[0])}
        writer.outputs = ({"output_type": "display_data", "data": {"application/javascript": js}, "metadata": {}},)

    for rb in radios.values():
        rb.observe(on_change, names="value")
    items = [w.HTML(QUIZ_CSS), w.HTML(f"<div style='font-size:12px;color:#57606a'>{HOW.format(var=html.escape(var))}</div>")]
    for q in ex.questions:
        items += [w.HTML(f"<b>{html.escape(q.key)}.</b> {inline_markdown(q.prompt)}", layout=w.Layout(width="100%")),
                  radios[q.key]]
    box = w.VBox(items + [saved, writer], layout=w.Layout(border="1px solid #d0d7de", padding="6px"))
    box.add_class("labkit-quiz")
    box.add_class("labkit-live")
    return box
