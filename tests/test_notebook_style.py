"""Notebook code fits the width of [tool.ruff] in pyproject.toml (88): readable at 1024x768 without
sideways scrolling. No kernel: reads the JSON only (under a second for all notebooks).
`make format` (ruff format) then `make assign` fixes most long lines; strings and comments by hand."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT

WIDTH = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]["line-length"]

# Notebooks held to WIDTH, in solutions/ and in lessons/ (generated from them).
FORMATTED = {
    "00_setup_check",
    "01_onnx_concepts",
    "02_model_structure",
    "03_export_pytorch",
    "04_ort_inference",
    "05_fusion",
    "06_quantization",
    "07_android",
    "08_browser",
    "09_transformer",
    "09b_generation",
    "10_beyond",
    "11_gpu",
    "11b_device_data",
}
# Pending the formatter pass (`make format`, then wrap by hand); then they move to FORMATTED.
TO_DO: set[str] = set()


def long_lines(path: Path, width: int = WIDTH) -> list[str]:
    """Each code line of the notebook at `path` longer than `width`, as 'cell i line j (n chars)'."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    found = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        for j, line in enumerate("".join(cell["source"]).splitlines(), start=1):
            if len(line) > width:
                found.append(f"{path.name} cell {i} line {j} ({len(line)} chars): {line[:40]}...")
    return found


def too_wide(folder: Path) -> list[str]:
    """The long code lines of the FORMATTED notebooks in `folder`."""
    return [hit for name in sorted(FORMATTED) for hit in long_lines(folder / f"{name}.ipynb")]


def test_every_notebook_is_formatted_or_to_do():
    for folder in ("solutions", "lessons"):
        stems = {p.stem for p in (ROOT / folder).glob("*.ipynb")}
        assert stems == FORMATTED | TO_DO, f"{folder}/: classify {sorted(stems ^ (FORMATTED | TO_DO))}"
    assert not FORMATTED & TO_DO


@pytest.mark.parametrize("folder", ["solutions", "lessons"])
def test_formatted_notebooks_fit_the_width(folder):
    hits = too_wide(ROOT / folder)
    assert not hits, f"code lines over {WIDTH} characters (`make format`, then wrap by hand):\n" + "\n".join(hits)


def _write(path: Path, *sources: str, markdown: str = "") -> None:
    cells = [nbformat.v4.new_code_cell(s) for s in sources]
    if markdown:
        cells.append(nbformat.v4.new_markdown_cell(markdown))
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)


def test_a_long_line_in_a_formatted_notebook_is_found(tmp_path):
    for name in FORMATTED | TO_DO:
        _write(tmp_path / f"{name}.ipynb", "x = 1\n" + "y = 2  # " + "#" * (WIDTH - 9),
               markdown="a long sentence " * 20)
    assert too_wide(tmp_path) == []  # exactly WIDTH characters fit; markdown is not code
    _write(tmp_path / "01_onnx_concepts.ipynb", "x = 1\nprint('" + "a" * WIDTH + "')")
    hits = too_wide(tmp_path)
    assert len(hits) == 1 and hits[0].startswith("01_onnx_concepts.ipynb cell 0 line 2 (97 chars)"), hits
