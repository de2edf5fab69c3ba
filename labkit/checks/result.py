"""What a check decides: one status type, a test's verdict, an exercise's verdict."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal, get_args

from .display import LABELS, RESULT_MIME, mimebundle, panel_html, show  # noqa: F401 (LABELS, RESULT_MIME re-exported)

#: the one status type of the course: a check panel, results.json and grades.csv all use it
Status = Literal["passed", "failed", "not_attempted", "error", "timeout", "missing"]
STATUSES: tuple[str, ...] = get_args(Status)


@dataclass
class TestResult:
    """One test of an exercise: its name, verdict and a precise message."""

    __test__ = False  # not a pytest class

    name: str
    passed: bool
    message: str = ""

    def said(self) -> str:
        """"name: message", as a verdict's summary quotes its first failed test (and a panel leaves out)."""
        return f"{self.name}: {self.message}"


@dataclass
class Result:
    """The verdict on one exercise, shown as a panel in a notebook."""

    exercise: str
    title: str
    status: Status
    points: float
    max_points: float
    message: str
    tests: list[TestResult] = field(default_factory=list)
    hint: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Result":
        """Rebuild a verdict from `to_dict()` output (the verdict process's JSON line; results.json has its own reader)."""
        tests = [TestResult(str(t.get("name", "")), bool(t.get("passed")), str(t.get("message", "")))
                 for t in d.get("tests", []) if isinstance(t, dict)]
        status = d.get("status") if d.get("status") in STATUSES else "error"
        return cls(str(d.get("exercise", "")), str(d.get("title", "")), status, float(d.get("points") or 0.0),
                   float(d.get("max_points") or 0.0), str(d.get("message", "")), tests, str(d.get("hint", "")))

    def _repr_html_(self) -> str:
        return panel_html(self)

    def __repr__(self) -> str:
        return f"[{self.status}] {self.exercise} {self.points:g}/{self.max_points:g} points: {self.message}"

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return mimebundle(self)

    def _ipython_display_(self) -> None:
        show(self)
