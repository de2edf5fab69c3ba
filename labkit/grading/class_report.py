"""`labkit grades report DIR`: what the class got wrong, as one HTML file (figures inlined, no server).

Counted in learners (one graded file each), not files. Score distribution, per exercise the pass rate
and mean points, the most common failing tests grouped by root cause (numbers masked so that "expected 0,
got 2" and "expected 1, got 3" count as one mistake), exercises nobody attempted, files that could not be
graded (once per learner, not per exercise), exercises that errored or timed out, the roster's no-shows
(with --roster), and a table linking each learner's feedback page.
"""
from __future__ import annotations

import base64
import collections
import html
import io
import re
from pathlib import Path

from ..checks.registry import is_bonus
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
    top = max([run.max_points, *totals]) or 1   # bonus points can take a total past the maximum
    ax.hist(totals, bins=min(20, max(5, int(run.max_points) * 2)), range=(0, top),
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


def file_problems(run: Run) -> dict[str, str]:
    """{learner id: message} for learners whose file could not be graded at all (every exercise has the
    same error or missing message): reported once per learner, never once per exercise."""
    out = {}
    for l in run.learners:
        msgs = {(e.status, e.message) for e in l.exercises}
        if len(msgs) == 1 and next(iter(msgs))[0] in ("error", "missing") and l.exercises and \
                not any(e.tests for e in l.exercises) and not any(e.overridden for e in l.exercises):
            out[l.student] = next(iter(msgs))[1]
    return out


def common_mistakes(run: Run, exercise: str, top: int = TOP_MISTAKES) -> list[tuple[str, str, int, str]]:
    """[(failing tests, masked message, learners, one real example)] most frequent first.

    One root cause is one row: failing tests whose messages differ only in numbers ("expected shape (7, 10)",
    "expected shape (64, 10)") are grouped, and a learner counts once per cause."""
    skip = file_problems(run)
    seen: collections.Counter = collections.Counter()
    example: dict[str, str] = {}
    tests: dict[str, set[str]] = {}
    for learner in run.learners:
        ex = learner.get(exercise)
        if not ex or ex.status in ("not_attempted", "missing") or learner.student in skip:
            continue
        keys = set()
        for t in ex.tests:
            if not t.passed:
                k = mistake_key(t.message)
                keys.add(k)
                example.setdefault(k, t.message)
                tests.setdefault(k, set()).add(t.name)
        if not ex.tests and ex.status in ("error", "timeout"):
            k = mistake_key(ex.message)
            keys.add(k)
            example.setdefault(k, ex.message)
            tests.setdefault(k, set()).add(ex.status)
        seen.update(keys)
    return [(", ".join(sorted(tests[k])[:6]), k, n, example[k]) for k, n in seen.most_common(top)]


def report_html(run: Run, roster=None) -> str:
    """The class report; with a roster (exports.Roster) it also lists who handed nothing in."""
    figs = figures(run)
    overrides = [(l.name, ex) for l in run.learners for ex in l.exercises if ex.overridden]
    return (_summary(run, figs, len(overrides)) + _per_exercise(run, figs) + _mistakes(run) + _problems(run)
            + (_absent(run, roster) if roster is not None else "") + _notes(run) + _learners(run)
            + _overrides(overrides) + "</body></html>\n")


def _summary(run: Run, figs: dict[str, str], n_overrides: int) -> str:
    """The page head, the class's size, mean and median, and the score histogram."""
    e = html.escape
    n = len(run.learners)
    totals = sorted(l.points for l in run.learners)
    median = (totals[(n - 1) // 2] + totals[n // 2]) / 2 if n else 0
    style = ("body{font-family:sans-serif;max-width:980px;margin:2em auto;color:#24292f}table{border-collapse:collapse;"
             "margin:.5em 0 1.5em}td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left;font-size:13px;"
             "vertical-align:top}h2{margin-top:1.6em}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Class report · {e(run.lesson_name)}</title>"
            f"<style>{style}</style></head><body><h1>Class report · {e(run.lesson_name)}</h1>"
            f"<p>{n} learners (one graded file each) · mean {sum(totals) / max(1, n):.2f} · median {median:g} of "
            f"{run.max_points:g} points{f' · {n_overrides} overrides applied' if n_overrides else ''}"
            f"{f' · {len(run.problem_files)} problem file(s), not notebooks, not counted' if run.problem_files else ''}</p>"
            f"<h2 id='scores'>Score distribution</h2><img alt='score histogram' src='{figs['scores']}'>")


def _per_exercise(run: Run, figs: dict[str, str]) -> str:
    """Per exercise: pass rates, mean points and attempts; then the exercises nobody attempted."""
    e = html.escape
    n = len(run.learners)
    rows = []
    for i, title, most in run.exercises:
        got = [l.get(i) for l in run.learners]
        attempted = [g for g in got if g and g.status not in ("not_attempted", "missing")]
        mean = sum(g.points for g in got if g) / max(1, n)
        worth = f"+{most:g} bonus" if is_bonus(i) else f"{most:g}"   # outside the lesson's maximum
        rows.append(f"<tr><td><code>{e(i)}</code></td><td>{e(title)}</td><td>{worth}</td>"
                    f"<td>{mean:.2f}</td><td>{100 * pass_rate(run, i):.0f}%</td><td>{len(attempted)}/{n}</td></tr>")
    nobody = [i for i, _, _ in run.exercises
              if all(not l.get(i) or l.get(i).status in ("not_attempted", "missing") for l in run.learners)]
    return (f"<h2 id='exercises'>Per exercise</h2><img alt='pass rate per exercise' src='{figs['pass_rate']}'>"
            f"<table><tr><th>exercise</th><th>title</th><th>max</th><th>mean points</th><th>full points</th>"
            f"<th>attempted</th></tr>{''.join(rows)}</table>"
            f"<h2 id='nobody'>Exercises nobody attempted</h2>"
            f"<p>{', '.join(f'<code>{e(i)}</code>' for i in nobody) or 'none'}</p>")


def _mistakes(run: Run) -> str:
    """The most common failing tests of each exercise, with one example message each."""
    e = html.escape
    mistakes = []
    for i, title, _ in run.exercises:
        found = common_mistakes(run, i)
        if not found:
            continue
        items = "".join(f"<tr><td>{cnt}</td><td>{e(name)}</td><td>{e(example)}</td></tr>" for name, _, cnt, example in found)
        mistakes.append(f"<h3><code>{e(i)}</code> {e(title)}</h3><table><tr><th>learners</th><th>failing tests</th>"
                        f"<th>message (one example)</th></tr>{items}</table>")
    return f"<h2 id='mistakes'>Most common failing tests</h2>{''.join(mistakes) or '<p>none</p>'}"


def _problems(run: Run) -> str:
    """Files that could not be graded at all, then the exercises that errored or timed out elsewhere."""
    e = html.escape
    whole = file_problems(run)
    names = {l.student: l.name for l in run.learners}
    trouble = [(l.student, ex.exercise, ex.status, ex.message) for l in run.learners for ex in l.exercises
               if ex.status in ("error", "timeout") and l.student not in whole]
    trouble_rows = "".join(f"<tr><td>{e(names[s])}</td><td><code>{e(x)}</code></td><td>{e(st)}</td><td>{e(m)}</td></tr>"
                           for s, x, st, m in trouble)
    file_rows = "".join(f"<tr><td>{e(names[s])}</td><td>{e(m)}</td></tr>" for s, m in sorted(whole.items()))
    pf_rows = "".join(f"<tr><td>{e(Path(p['submission']).name)}</td><td>{e(p['why'])}</td></tr>" for p in run.problem_files)
    return ((f"<h2 id='problem-files'>Problem files (not notebooks, not counted as learners)</h2><table><tr><th>file"
             f"</th><th>why</th></tr>{pf_rows}</table>" if pf_rows else "")
            + "<h2 id='files'>Files that could not be graded</h2>"
            + (f"<table><tr><th>learner</th><th>why (one message for the whole file)</th></tr>{file_rows}</table>"
               if whole else "<p>none</p>")
            + "<h2 id='trouble'>Exercises that errored or timed out</h2>"
            + (f"<table><tr><th>learner</th><th>exercise</th><th>status</th><th>message</th></tr>{trouble_rows}</table>"
               if trouble else "<p>none</p>"))


def _absent(run: Run, roster) -> str:
    """Who is on the roster but handed nothing in, and who was graded but matches no roster line."""
    from .exports import match

    e = html.escape
    m = match([run], roster)
    absent = [x.label for x in m.no_submission]
    unmatched = [f"{l.name} [{l.student}]" for _, l in m.not_on_roster] + m.ambiguous
    return (f"<h2 id='absent'>On the roster, nothing handed in</h2><p>{e(', '.join(absent)) or 'none'}</p>"
            + (f"<p>Graded but not matched to the roster: {e('; '.join(unmatched))}</p>" if unmatched else ""))


def _notes(run: Run) -> str:
    """The grader's notes on files and names, and the stale learner folders this run does not count."""
    e = html.escape
    manifest_notes = [str(x) for x in run.manifest.get("notes", [])]
    return ((f"<h2 id='notes'>Files and names</h2><ul>{''.join(f'<li>{e(x)}</li>' for x in manifest_notes)}</ul>"
             if manifest_notes else "")
            + (f"<p>{len(run.stale)} learner folder(s) from an earlier grading are not part of this run and are not "
               f"counted: {e(', '.join(run.stale[:20]))}</p>" if run.stale else ""))


def _learners(run: Run) -> str:
    """Every learner by name: id, how they were named, points, feedback link and the file graded."""
    e = html.escape
    learner_rows = "".join(
        f"<tr><td>{e(l.name)}</td><td><code>{e(l.student)}</code></td><td>{e(l.identity.get('source', ''))}</td>"
        f"<td>{l.points:g} / {l.max_points:g}</td><td><a href='students/{e(l.student)}/feedback.html'>feedback</a></td>"
        f"<td>{e(Path(l.submission).name)}" + (f" ({len(l.other_files)} older file(s) not graded)" if l.other_files else "")
        + "</td></tr>" for l in sorted(run.learners, key=lambda l: l.name.casefold()))
    return (f"<h2 id='learners'>Learners</h2><table><tr><th>name</th><th>id</th><th>named by</th><th>points</th>"
            f"<th>feedback</th><th>file graded</th></tr>{learner_rows}</table>")


def _overrides(overrides: list) -> str:
    """The instructor's overrides: learner, exercise, graded → given points and the reason ('' if none)."""
    e = html.escape
    override_rows = "".join(f"<tr><td>{e(s)}</td><td><code>{e(x.exercise)}</code></td><td>{x.graded_points:g} → "
                            f"{x.points:g}</td><td>{e(x.override_reason)}</td></tr>" for s, x in overrides)
    return (f"<h2 id='overrides'>Overrides</h2><table><tr><th>learner</th><th>exercise</th><th>points</th>"
            f"<th>reason</th></tr>{override_rows}</table>" if overrides else "")


def write_report(run: Run, out: Path | None = None, roster=None) -> Path:
    from ..fsutil import atomic_write

    out = out or run.folder / "report.html"
    atomic_write(out, report_html(run, roster))
    return out
