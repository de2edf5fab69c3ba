"""Shared pytest setup: course paths. (nbval's comparison rules are in the root conftest.py.)"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
#: lesson number -> its solution notebooks (two for a split lesson: 09_transformer, 09b_generation)
LESSON_NOTEBOOKS: dict[str, list[Path]] = {}
for _p in SOLUTIONS:
    LESSON_NOTEBOOKS.setdefault(_p.name[:2], []).append(_p)
LESSONS = sorted((ROOT / "lessons").glob("*.ipynb"))


#: the marks a test of test_corpus.py can carry (`heavy` and `thorough` from the root conftest.py, `xfail` for a
#: known hole)
CORPUS_MARKS = ("heavy", "thorough", "xfail", "parametrize", "usefixtures")


def corpus_deselected(markexpr: str) -> bool:
    """Does `-m markexpr` leave out every test of test_corpus.py, whatever subset of CORPUS_MARKS it carries?"""
    import itertools

    from _pytest.mark.expression import Expression

    expr = Expression.compile(markexpr)
    return not any(expr.evaluate(lambda name, /, **kw: not kw and name in marks)
                   for n in range(len(CORPUS_MARKS) + 1) for marks in itertools.combinations(CORPUS_MARKS, n))


def pytest_ignore_collect(collection_path, config):
    """test_corpus.py names its tests by importing the whole corpus (torch, scikit-learn: ~4.5 s in each
    worker): a session whose `-m` selects none of them (the notebooks, network and browser tiers) skips it."""
    if collection_path.name == "test_corpus.py" and config.getoption("markexpr") \
            and corpus_deselected(config.getoption("markexpr")):
        return True
    return None


def _one_ort_thread_per_worker() -> None:
    """`-n 2` runs a worker per core: ONNX Runtime sessions left at ORT's default (a thread per core, which
    spin while they wait) would put two pools on each core. In a worker, a session that chooses no count
    gets one thread, as in nbval's kernels (tests/cpu_path/one_ort_thread.py). Measured on the corpora of
    03.raw_input, 06.calibration, 10.io_binding and 11.device_decode: 123 s, then 104 s."""
    import os
    import runpy

    if os.environ.get("PYTEST_XDIST_WORKER"):
        runpy.run_path(str(ROOT / "tests" / "cpu_path" / "one_ort_thread.py"))


_one_ort_thread_per_worker()
