"""The mutation corpus: for every graded exercise, answers learners really write, as data.

`tests/corpus/lNN.py` holds `CORPUS = {"NN.name": [Right(...), Wrong(...), ...]}`. tests/test_corpus.py
runs every entry through the learner-side check and enforces the scoring rule of docs/authoring.md:

* a `Right` answer (written unlike the reference) scores full marks;
* a `Wrong` answer scores below full; one with `outputs_wrong=True` (it fails a test that is the
  exercise's skill) scores at most half the points; one with `skipped_skill=True` (it did not do the
  exercise: its input handed back unchanged, a constant, a library doing the very thing asked) at
  most a quarter;
* every graded exercise has at least `MIN_WRONG` wrong and `MIN_RIGHT` right answers, so an exercise
  cannot land without its corpus.

An entry gives its answer directly (`answer=`: a function, a dict, a number...) or builds it
(`make=lambda tmp: ...`, called with a fresh temporary folder: for files, exported models...).
Answers written blind (by someone who never read the judges) live in their own modules and join a lesson's
corpus with `add_blind(CORPUS, module, slow=..., holes=...)`.
"""
from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

MIN_WRONG = 6
MIN_RIGHT = 2
_UNSET = object()


@dataclass(frozen=True)
class Entry:
    name: str
    answer: Any = _UNSET
    make: Callable[[Path], Any] | None = None
    #: a known hole: why this wrong answer still scores by another rule (a strict xfail until a judge sees it)
    hole: str = ""
    #: written blind (`add_blind`): judged by its rule once, as graded (the hidden seed, the grader's data
    #: path); the notebook's seed and the panel/grader agreement are the team's entries' to test
    blind: bool = False
    #: the blind module it came from ("blind12_l03"), "" for the team's own
    round: str = ""

    def build(self, tmp: Path) -> Any:
        if (self.answer is _UNSET) == (self.make is None):
            raise ValueError(f"corpus entry {self.name!r}: give exactly one of answer= and make=")
        return self.make(tmp) if self.make is not None else self.answer


@dataclass(frozen=True)
class Right(Entry):
    """A correct answer written differently from the reference: must score full marks."""


@dataclass(frozen=True)
class Wrong(Entry):
    """A plausible wrong answer: below full marks; at most half when `outputs_wrong`, at most a quarter
    when `skipped_skill`."""

    outputs_wrong: bool = True
    skipped_skill: bool = False


def ruled_out(entry: Entry) -> Wrong:
    """A `Right` entry that a prompt now rules out (it uses a library the exercise's confined run leaves out,
    `tools=`): a wrong answer that skipped the skill, under the same name and answer."""
    return Wrong(entry.name, entry.answer, entry.make, skipped_skill=True)


#: how a blind entry may be reclassified after reading its prompt again (`add_blind(reclassify=...)`)
RECLASSIFY = {
    "right": lambda e: Right(e.name, e.answer, e.make),
    "attempt": lambda e: Wrong(e.name, e.answer, e.make, outputs_wrong=True, skipped_skill=False),
    "rule": lambda e: Wrong(e.name, e.answer, e.make, outputs_wrong=False, skipped_skill=False),
    "ruled_out": ruled_out,
}


def add_blind(corpus: dict[str, list[Entry]], blind: Any, *, slow: Iterable[str] = (),
              holes: dict[str, str] | None = None, reclassify: dict[str, tuple[str, str]] | None = None) -> None:
    """Add a blind module's entries (`blind.CORPUS`, answers written by someone who never read the judges) to a
    lesson's `corpus`, exercise by exercise, after its own: those named in `slow` (measured too slow for the fast
    tier, scored by hand) left out, each named in `holes` carrying its reason (a known hole: a strict xfail), each
    named in `reclassify` (name -> (kind of `RECLASSIFY`, why)) judged again from its prompt. A name no entry has
    is an error (a renamed entry would silently drop out)."""
    slow, holes, reclassify = set(slow), dict(holes or {}), dict(reclassify or {})
    names = {e.name for entries in blind.CORPUS.values() for e in entries}
    unknown = sorted((slow | set(holes) | set(reclassify)) - names)
    if unknown:
        raise ValueError(f"{blind.__name__}: no entry named {', '.join(unknown)}")

    def entry(e: Entry) -> Entry:
        if e.name in reclassify:
            e = RECLASSIFY[reclassify[e.name][0]](e)
        return dataclasses.replace(e, hole=holes.get(e.name, e.hole), blind=True, round=blind.__name__.rsplit(".", 1)[-1])

    for exercise, entries in blind.CORPUS.items():
        corpus[exercise] = corpus[exercise] + [entry(e) for e in entries if e.name not in slow]


def load(lesson: str) -> dict[str, list[Entry]]:
    """The corpus of lesson `lesson` ("03"), or {} when it has none yet."""
    try:
        module = importlib.import_module(f"corpus.l{lesson}")
    except ModuleNotFoundError as e:
        if e.name == f"corpus.l{lesson}":
            return {}
        raise
    return module.CORPUS
