"""`labkit grades report DIR`: what the class got wrong, as one HTML file (figures inlined, no server).

Score distribution, per exercise the pass rate and mean points, the most common failing tests and
messages (numbers masked so that "expected 0, got 2" and "expected 1, got 3" count as one mistake),
exercises nobody attempted, and learners whose submissions errored or timed out.
"""
from __future__ import annotations

import base64
import collections
import html
import io
import re
from pathlib import Path

from .results import Run

TOP_MISTAKES = 8
_NUMBER = re.compile(r"-?\d+(\.\d+)?(e[-+]?\d+)?")


def mistake_key(message: str) -> str:
    """A failing test's message with its numbers masked, so the same mistake groups across learners."""
    return _NUMBER.sub("#", " ".join(message.split()))[:200]


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def figures(run: Run) -> dict[str, str]:
    """Inline PNGs: the score histogram and the pass rate per exercise."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = {}
    fig, ax = plt.subplots(figsize=(6, 3), constrained_layout=True)
    totals = [l.points for l in run.learners]
    ax.hist(totals, bins=min(20, max(5, int(run.max_points) * 2)), range=(0, run.max_points or 1),
            color="#0969da", edgecolor="white")
    ax.set_xlabel(f"points (out of {run.max_points:g})")
    ax.set_ylabel("learners")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_title(f"{run.lesson_name}: {len(totals)} learners")
    out["scores"] = _png(fig)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 0.45 * len(run.exercises) + 1), constrained_layout=True)
    ids = [i for i, _, _ in run.exercises]
    rates = [pass_rate(run, i) for i in ids]
    ax.barh(ids[::-1], [100 * r for r in rates[::-1]], color="#1a7f37")
    ax.set_xlim(0, 100)
    ax.set_xlabel("learners with full points (%)")
    ax.set_title("pass rate per exercise")
    out["pass_rate"] = _png(fig)
    plt.close(fig)
    return out


def pass_rate(run: Run, exercise: str) -> float:
    got = [l.get(exercise) for l in run.learners]
    return sum(bool(e and e.points >= e.max_points) for e in got) / max(1, len(got))


def common_mistakes(run: Run, exercise: str, top: int = TOP_MISTAKES) -> list[tuple[str, str, int, str]]:
    """[(test name, masked message, learners, one real example)] most frequent first."""
    seen: collections.Counter = collections.Counter()
    example: dict[tuple[str, str], str] = {}
    for learner in run.learners:
        ex = learner.get(exercise)
        if not ex or ex.status in ("not_attempted", "missing"):
            continue
        keys = set()
        for t in ex.tests:
            if not t.get("passed"):
                k = (str(t.get("name", "")), mistake_key(str(t.get("message", ""))))
                keys.add(k)
                example.setdefault(k, str(t.get("message", "")))
        if not ex.tests and ex.status in ("error", "timeout"):
            k = (ex.status, mistake_key(ex.message))
            keys.add(k)
            example.setdefault(k, ex.message)
        seen.update(keys)
    return [(name, msg, n, example[(name, msg)]) for (name, msg), n in seen.most_common(top)]


def report_html(run: Run) -> str:
    e = html.escape
    figs = figures(run)
    n = len(run.learners)
    totals = sorted(l.points for l in run.learners)
    median = (totals[(n - 1) // 2] + totals[n // 2]) / 2 if n else 0
    rows = []
    for i, title, most in run.exercises:
        got = [l.get(i) for l in run.learners]
        attempted = [g for g in got if g and g.status not in ("not_attempted", "missing")]
        mean = sum(g.points for g in got if g) / max(1, n)
        rows.append(f"<tr><td><code>{e(i)}</code></td><td>{e(title)}</td><td>{most:g}</td>"
                    f"<td>{mean:.2f}</td><td>{100 * pass_rate(run, i):.0f}%</td><td>{len(attempted)}/{n}</td></tr>")
    nobody = [i for i, _, _ in run.exercises
              if all(not l.get(i) or l.get(i).status in ("not_attempted", "missing") for l in run.learners)]
    mistakes = []
    for i, title, _ in run.exercises:
        found = common_mistakes(run, i)
        if not found:
            continue
        items = "".join(f"<tr><td>{cnt}</td><td>{e(name)}</td><td>{e(example)}</td></tr>" for name, _, cnt, example in found)
        mistakes.append(f"<h3><code>{e(i)}</code> {e(title)}</h3><table><tr><th>learners</th><th>test</th>"
                        f"<th>message (one example)</th></tr>{items}</table>")
    trouble = [(l.student, ex.exercise, ex.status, ex.message) for l in run.learners for ex in l.exercises
               if ex.status in ("error", "timeout")]
    trouble_rows = "".join(f"<tr><td>{e(s)}</td><td><code>{e(x)}</code></td><td>{e(st)}</td><td>{e(m)}</td></tr>"
                           for s, x, st, m in trouble)
    overrides = [(l.student, ex) for l in run.learners for ex in l.exercises if ex.overridden]
    override_rows = "".join(f"<tr><td>{e(s)}</td><td><code>{e(x.exercise)}</code></td><td>{x.graded_points:g} → "
                            f"{x.points:g}</td><td>{e(x.override_reason)}</td></tr>" for s, x in overrides)
    style = ("body{font-family:sans-serif;max-width:980px;margin:2em auto;color:#24292f}table{border-collapse:collapse;"
             "margin:.5em 0 1.5em}td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left;font-size:13px;"
             "vertical-align:top}h2{margin-top:1.6em}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Class report · {e(run.lesson_name)}</title>"
            f"<style>{style}</style></head><body><h1>Class report · {e(run.lesson_name)}</h1>"
            f"<p>{n} learners · mean {sum(totals) / max(1, n):.2f} · median {median:g} of {run.max_points:g} points"
            f"{f' · {len(overrides)} overrides applied' if overrides else ''}</p>"
            f"<h2 id='scores'>Score distribution</h2><img alt='score histogram' src='{figs['scores']}'>"
            f"<h2 id='exercises'>Per exercise</h2><img alt='pass rate per exercise' src='{figs['pass_rate']}'>"
            f"<table><tr><th>exercise</th><th>title</th><th>max</th><th>mean points</th><th>full points</th>"
            f"<th>attempted</th></tr>{''.join(rows)}</table>"
            f"<h2 id='nobody'>Exercises nobody attempted</h2><p>{', '.join(f'<code>{e(i)}</code>' for i in nobody) or 'none'}</p>"
            f"<h2 id='mistakes'>Most common failing tests</h2>{''.join(mistakes) or '<p>none</p>'}"
            f"<h2 id='trouble'>Submissions that errored or timed out</h2>"
            + (f"<table><tr><th>learner</th><th>exercise</th><th>status</th><th>message</th></tr>{trouble_rows}</table>"
               if trouble else "<p>none</p>")
            + (f"<h2 id='overrides'>Overrides</h2><table><tr><th>learner</th><th>exercise</th><th>points</th>"
               f"<th>reason</th></tr>{override_rows}</table>" if overrides else "")
            + "</body></html>\n")


def write_report(run: Run, out: Path | None = None) -> Path:
    from ..fsutil import atomic_write

    out = out or run.folder / "report.html"
    atomic_write(out, report_html(run))
    return out
