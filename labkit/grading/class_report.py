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
    """The class report (templates/report.html.j2); with a roster (exports.Roster) it also lists who
    handed nothing in. Escaped by default: the template gets plain data only."""
    from .templating import render

    return render("report.html.j2", **report_data(run, roster))


def report_data(run: Run, roster=None) -> dict:
    """What the class report shows, as plain data (names, messages, numbers as text)."""
    n = len(run.learners)
    totals = sorted(l.points for l in run.learners)
    names = {l.student: l.name for l in run.learners}
    whole = file_problems(run)
    return {
        "lesson_name": run.lesson_name, "n": n, "mean": f"{sum(totals) / max(1, n):.2f}",
        "median": f"{(totals[(n - 1) // 2] + totals[n // 2]) / 2 if n else 0:g}", "max_points": f"{run.max_points:g}",
        "n_overrides": sum(ex.overridden for l in run.learners for ex in l.exercises), "figures": figures(run),
        "problem_files": [{"file": Path(p["submission"]).name, "why": p["why"]} for p in run.problem_files],
        "exercises": _exercises(run), "mistakes": _mistakes(run),
        "nobody": [i for i, _, _ in run.exercises
                   if all(not l.get(i) or l.get(i).status in ("not_attempted", "missing") for l in run.learners)],
        "whole_file": [(names[s], m) for s, m in sorted(whole.items())],
        "trouble": [(l.name, ex.exercise, ex.status, ex.message) for l in run.learners for ex in l.exercises
                    if ex.status in ("error", "timeout") and l.student not in whole],
        "roster": _absent(run, roster) if roster is not None else None,
        "notes": [str(x) for x in run.manifest.get("notes", [])], "stale": run.stale,
        "learners": [{"name": l.name, "student": l.student, "source": l.identity.get("source", ""),
                      "points": f"{l.points:g}", "max_points": f"{l.max_points:g}", "file": Path(l.submission).name,
                      "older": len(l.other_files)} for l in sorted(run.learners, key=lambda l: l.name.casefold())],
        "overrides": [(l.name, x.exercise, f"{x.graded_points:g}", f"{x.points:g}", x.override_reason)
                      for l in run.learners for x in l.exercises if x.overridden]}


def _exercises(run: Run) -> list[dict]:
    """Per exercise: its worth, mean points, pass rate and attempts."""
    n = len(run.learners)
    rows = []
    for i, title, most in run.exercises:
        got = [l.get(i) for l in run.learners]
        attempted = [g for g in got if g and g.status not in ("not_attempted", "missing")]
        rows.append({"id": i, "title": title, "worth": f"+{most:g} bonus" if is_bonus(i) else f"{most:g}",
                     "mean": f"{sum(g.points for g in got if g) / max(1, n):.2f}",
                     "rate": f"{100 * pass_rate(run, i):.0f}%", "attempted": len(attempted)})
    return rows


def _mistakes(run: Run) -> list[dict]:
    """The most common failing tests of each exercise that has any: (learners, tests, one example)."""
    out = []
    for i, title, _ in run.exercises:
        found = common_mistakes(run, i)
        if found:
            out.append({"id": i, "title": title, "rows": [(cnt, name, example) for name, _, cnt, example in found]})
    return out


def _absent(run: Run, roster) -> dict:
    """Who is on the roster but handed nothing in, and who was graded but matches no roster line."""
    from .exports import match

    m = match([run], roster)
    return {"absent": [x.label for x in m.no_submission],
            "unmatched": [f"{l.name} [{l.student}]" for _, l in m.not_on_roster] + m.ambiguous}


def write_report(run: Run, out: Path | None = None, roster=None) -> Path:
    from ..fsutil import atomic_write

    out = out or run.folder / "report.html"
    atomic_write(out, report_html(run, roster))
    return out
