"""Clean imports: no import circle at import time, no learner-side import of judge code, and the
sandboxed grading processes import only what they run.

Static checks read every module's `import` statements (ast): module-level ones run at import time,
so a circle among them is a real circle. Imports inside a function run on first call: they may not
close a circle either, and the learner-side check modules reach no judge code through any import at all.
ruff's pyflakes rules find unused imports and undefined names in the packages, the tests and the bench.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGES = ("labkit", "labkit_judges")
#: instructor-side packages: they may import judge code; everything else in labkit is learner-side
JUDGE_SIDE = ("labkit_judges", "labkit.grading")
CHECKS = "labkit.checks"
#: the check modules a graded kernel runs: they never import judging or labkit_judges, not even lazily
LEARNER_CHECKS = ("labkit.checks.registry", "labkit.checks.collect", "labkit.checks.display", "labkit.checks.result")
TEMPLATES = ("android_template", "web_template")


def _modules() -> dict[str, Path]:
    mods = {}
    for pkg in PACKAGES:
        for p in sorted((ROOT / pkg).rglob("*.py")):
            if any(t in p.parts for t in TEMPLATES):
                continue
            parts = list(p.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = p
    return mods


MODULES = _modules()


def _imports(mod: str, path: Path, *, module_level: bool) -> list[tuple[str, int]]:
    """(imported module, line) for every import of a course module in `mod`; `from pkg import name`
    counts as importing `pkg.name` when that is a module. TYPE_CHECKING blocks never run."""
    is_pkg = path.name == "__init__.py"
    found: list[tuple[str, int]] = []

    def resolve(level: int, name: str | None) -> str:
        if level == 0:
            return name or ""
        base = mod.split(".") if is_pkg else mod.split(".")[:-1]
        base = base[: len(base) - (level - 1)]
        return ".".join(base + ([name] if name else []))

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and module_level:
                continue
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.extend((a.name, child.lineno) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = resolve(child.level, child.module)
                for a in child.names:
                    full = f"{base}.{a.name}"
                    found.append((full if full in MODULES else base, child.lineno))
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return [(t, line) for t, line in found if t.split(".")[0] in PACKAGES]


def _graph(module_level: bool) -> dict[str, set[str]]:
    """Module -> the course modules importing it runs (a submodule import runs its packages' __init__
    too, except the packages the importer itself lives in: those are already being imported)."""
    graph: dict[str, set[str]] = {}
    for mod, path in MODULES.items():
        edges = set()
        for target, _ in _imports(mod, path, module_level=module_level):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                x = ".".join(parts[:i])
                if x in MODULES and x != mod and not mod.startswith(x + "."):
                    edges.add(x)
        graph[mod] = edges
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def function_level_circles() -> list[list[str]]:
    """Circles that close only through imports inside functions (lazy, so they do not break imports)."""
    return _circles(_graph(module_level=False))


def test_the_analysis_finds_a_circle_and_a_judge_import():
    """The checks below would pass on an empty graph: prove the analysis sees what it looks for."""
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []
    graph = _graph(module_level=True)
    assert "labkit.checks.registry" in graph["labkit.checks"], "labkit/checks/__init__.py imports .registry"
    assert "labkit.grading.forkserver" in _graph(module_level=True)["labkit.grading.run"]
    lessons = [m for m in MODULES if m.startswith("labkit_judges.l")]
    assert lessons, "labkit_judges has lesson modules"


def test_no_import_circle_at_import_time():
    circles = _circles(_graph(module_level=True))
    assert not circles, f"module-level import circles: {circles}"


def test_no_circle_even_through_function_imports():
    """No circle anywhere in the packages, counting imports inside functions too (they run on first
    call): every dependency goes one way (forkserver owns what run needs, judging what checks need)."""
    lazy = _graph(module_level=False)
    assert "labkit.sandbox" in lazy["labkit.grading.forkserver"], "the analysis sees imports inside functions"
    assert "labkit.sandbox" not in _graph(module_level=True)["labkit.grading.forkserver"]
    assert set(LEARNER_CHECKS) < set(lazy), "the learner-side check modules are where they were"
    circles = function_level_circles()
    assert not circles, f"import circles (imports inside functions counted): {circles}"


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module importing `start` may run, through any chain of imports."""
    seen, todo = set(), [start]
    while todo:
        for nxt in graph[todo.pop()] - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


def test_learner_side_checks_reach_no_judge_code():
    """registry, collect, display and result run in a graded kernel: no chain of imports (lazy ones too)
    leads from them to the judge machinery or the judges."""
    graph = _graph(module_level=False)
    assert "labkit.checks.judging" in _reachable(graph, CHECKS), "the analysis follows chains of imports"
    for mod in LEARNER_CHECKS:
        bad = sorted(m for m in _reachable(graph, mod) if m == "labkit.checks.judging" or m.startswith("labkit_judges"))
        assert not bad, f"{mod} reaches {bad}"


def test_learner_side_never_imports_judge_code():
    """Only labkit.grading and labkit_judges may name labkit_judges in an import statement (anywhere:
    the learner's `check()` reaches its judge through the registry, by name, never by import)."""
    bad = [f"{mod}:{line} imports {target}" for mod, path in MODULES.items() if not mod.startswith(JUDGE_SIDE)
           for target, line in _imports(mod, path, module_level=False) if target.startswith("labkit_judges")]
    assert not bad, bad


def _loaded(code: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c",
                           code + "\nimport sys; print(' '.join(sorted(m for m in sys.modules if m.startswith(('labkit', 'torch', 'onnxruntime')))))"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.split()


def test_learner_imports_load_no_judge_and_no_grader():
    exercises = " ".join(f"import {m};" for m in sorted(MODULES) if m.startswith("labkit.exercises.l"))
    loaded = _loaded(f"import labkit; from labkit import check; import labkit.checks; {exercises}")
    assert not [m for m in loaded if m.startswith(("labkit_judges", "labkit.grading"))], loaded


@pytest.mark.parametrize("stage", ["forkserver", "judge"])
def test_sandboxed_processes_import_only_what_they_run(stage):
    """The kernel server and the verdict process start as `python -m labkit.grading.<stage>`: the
    package's __init__ loads no other stage (and runpy warns of nothing)."""
    loaded = _loaded(f"import labkit.grading.{stage}")
    others = [m for m in loaded if m.startswith("labkit.grading.") and m != f"labkit.grading.{stage}"]
    assert not others, f"importing labkit.grading.{stage} also loads {others}"
    # a bad argument makes the module exit at once; runpy's warning would come before that
    proc = subprocess.run([sys.executable, "-m", f"labkit.grading.{stage}", "not-json"], capture_output=True,
                          text=True, cwd=ROOT, timeout=60, stdin=subprocess.DEVNULL)
    assert "RuntimeWarning" not in proc.stderr, proc.stderr[-1500:]


def test_grading_package_names_load_on_first_use():
    loaded = _loaded("import labkit.grading as g; assert callable(g.load_lesson) and g.COLUMNS; import sys; "
                     "assert 'labkit.grading.batch' not in sys.modules")
    assert "labkit.grading.lesson" in loaded and "labkit.grading.reports" in loaded


def _flakes(*paths: Path) -> list[str]:
    """Pyflakes' findings (ruff's F rules: unused imports and variables, undefined names, redefinitions)
    in `paths`, one `file:line: code message` each; a line marked `# noqa` is a deliberate re-export."""
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--select", "F",
                           "--output-format", "concise", *map(str, paths)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return [line for line in proc.stdout.splitlines() if re.match(r".+:\d+:\d+: ", line)]  # syntax errors too


def test_the_flake_check_sees_what_it_looks_for(tmp_path):
    """The check below would pass on a tool that finds nothing: an unused import, an undefined name and a
    syntax error are found, a `# noqa` line is not."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nimport sys  # noqa\nprint(undefined_name)\n")
    found = _flakes(bad)
    assert [f.split(": ", 1)[1].split()[0] for f in found] == ["F401", "F821"], found
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    assert any("broken.py:1:" in f and "invalid-syntax" in f for f in _flakes(tmp_path / "broken.py"))


def test_no_unused_import_or_undefined_name():
    """Pyflakes' checks (by ruff) over the packages, the tests and the bench: an unused import or variable
    is dead code, an undefined name a crash waiting for its line. ~0.1 s (pyflakes itself took ~7 s)."""
    found = _flakes(*(ROOT / folder for folder in ("labkit", "labkit_judges", "tests", "bench")))
    assert not found, "\n".join(found)
