"""What the committed solution notebooks show fits a 1024x768 JupyterLab with the file browser open.

No kernel and no browser: reads the JSON only (about a second for every lesson). Code lines are held
to 88 by tests/test_notebook_style.py; here the outputs, which a reader sees as committed:

- TEXT_WIDTH = 88 characters per line of text output (stream, and text/plain where it is what
  JupyterLab renders: no HTML or image beside it). JupyterLab's defaults (a 250 px file browser, a 13 px
  code font) fit 74; the layout `make lab` and Binder install (binder/: a 180 px file browser, a 12 px
  font for code and printed output alike) fits them: the browser tier finds no printed line of 88
  characters wrapped in any lesson.
  Code already uses 88 columns ([tool.ruff] line-length), so outputs get the same width: one rule.
- IMAGE_WIDTH = 592 px: at most the output area's width in that window (the same at any font size). A
  wider PNG is shrunk to fit (a 1287 px figure shows at 46 %: its labels become unreadable);
  matplotlib's figsize=(6, ...) at the inline backend's 100 dpi gives at most 600 px before
  bbox_inches="tight" trims it.

An overflow that is not cheap to fix is listed in TEXT_ALLOWED / IMAGE_ALLOWED with its reason; an
entry that no longer overflows fails too, so the lists only shrink. What stays listed wraps as prose does,
at a space (binder/custom.css): an error or warning as raised, a list or dict of names, quoted source. A table (rows of
aligned columns) is never listed: a wrapped row breaks its columns, so it is printed narrower. The browser
tier (tests/test_browser.py, `fits_1024`) measures every lesson at 1024 px against these same lists.
"""
from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import pytest

from conftest import ROOT

TEXT_WIDTH = 88
IMAGE_WIDTH = 592
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))

# lesson -> (cell ids whose printed lines may pass TEXT_WIDTH, why)
TEXT_ALLOWED: dict[str, tuple[set[str], str]] = {
    "01_onnx_concepts": ({"5d383fd5", "b328764e", "404a322e", "5c2fbb26"},
                         "onnx.printer text and ONNX Runtime's error message, printed whole"),
    "02_model_structure": ({"dc3b113a", "overridable", "849170a1", "c91276ef", "e94aeb49",
                            "ec0489e9", "badinit-demo", "0b145759", "75df5377", "7b8f7e78"},
                           "ResNet-50's tensor names and op-count lists; ONNX errors as raised"),
    "03_export_pytorch": ({"export-fixed", "trap-batch", "colleague", "colleague-parity",
                           "flow-dynamo", "flow-legacy", "optimize", "data-bytes", "opset14",
                           "dynamic-axes", "legacy", "pre-trap", "d734087c", "40cafffa",
                           "custom-op", "custom-domain", "ex4-after"},
                          "exporter warnings and errors as torch prints them (the lesson's subject), op counts"),
    "04_ort_inference": ({"l04-09", "l04-29", "l04-18", "l04-34"},
                         "a profile event and provider warnings as ONNX Runtime writes them"),
    "05_fusion": ({"25db1ed4", "dd59eec3", "702a2055", "506e2934", "c7479840",
                   "26b4fbaf", "815eebc5", "97da8110"},
                  "onnx.printer graphs and op-count dicts before/after fusion"),
    "06_quantization": ({"q06-27-code", "q06-29-code", "q06-41-code", "6da1a1d9"},
                        "node lists of quantized graphs"),
    "08_browser": ({"q08-06-code", "q08-08-code", "q08-18-code", "q08-20-code",
                    "q08-25c-code", "q08-27-code", "q08-31-code"},
                   "JavaScript source and onnxruntime-web warnings quoted as written"),
    "09_transformer": ({"l09-04", "l09-05", "l09-09b"},
                       "held-out and generated text, ONNX Runtime's error as raised"),
    "09b_generation": ({"l09b-02", "l09-30", "l09-34", "l09-42b", "l09-47", "l09-genai-b", "l09-genai-i"},
                       "generated text, op-count dicts of the transformer, genai config JSON and error"),
    "10_beyond": ({"l10-05", "l10-07", "l10-09", "l10-27", "l10-31", "l10-37",
                   "l10-15", "l10-33", "l10-35", "l10-57"},
                  "converter and ONNX Runtime errors as raised, node and provider lists"),
    "11_gpu": ({"l11-07", "l11-13", "l11-20", "l11-22"},
               "per-provider node lists and WebGPU errors as raised"),
    "11b_device_data": ({"l11-28", "l11-50"}, "generated token ids, timings labelled with the adapter"),
}
# lesson -> {cell id: why its figure may be wider than IMAGE_WIDTH}
IMAGE_ALLOWED: dict[str, dict[str, str]] = {}


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value


def png_width(output: dict) -> int | None:
    """The width a PNG output is displayed at: its metadata width if set, else the PNG header's."""
    data = output.get("data", {})
    if "image/png" not in data:
        return None
    shown = output.get("metadata", {}).get("image/png", {}).get("width")
    if shown:
        return int(shown)
    header = base64.b64decode(_text(data["image/png"])[:44])   # signature, IHDR length and type, size
    assert header[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">I", header[16:20])[0]


def shown_text(output: dict) -> str:
    """The text JupyterLab renders for an output ('' when it renders HTML, an image or a widget)."""
    if output["output_type"] == "stream":
        return _text(output["text"])
    data = output.get("data", {})
    if set(data) & {"text/html", "image/png", "image/svg+xml", "application/vnd.jupyter.widget-view+json"}:
        return ""
    return _text(data.get("text/plain", ""))


def overflow(path: Path) -> tuple[dict[str, list[str]], dict[str, int]]:
    """The output lines over TEXT_WIDTH, by cell id, and the images over IMAGE_WIDTH (id -> px)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    lines: dict[str, list[str]] = {}
    images: dict[str, int] = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            long = [f"({len(t)} chars) {t[:50]}..." for t in shown_text(out).splitlines() if len(t) > TEXT_WIDTH]
            if long:
                lines.setdefault(cell["id"], []).extend(long)
            width = png_width(out)
            if width and width > IMAGE_WIDTH:
                images[cell["id"]] = max(width, images.get(cell["id"], 0))
    return lines, images


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_outputs_fit_1024_px(path):
    lines, images = overflow(path)
    allowed_text = TEXT_ALLOWED.get(path.stem, (set(), ""))[0]
    allowed_images = IMAGE_ALLOWED.get(path.stem, {})
    new_text = [f"cell {c} {t}" for c, found in lines.items() if c not in allowed_text for t in found]
    new_images = [f"cell {c}: {w} px" for c, w in images.items() if c not in allowed_images]
    assert not new_text, (f"{path.name}: printed lines over {TEXT_WIDTH} characters (wrap them, print fewer "
                          "fields a line, or a table of fewer columns):\n" + "\n".join(new_text))
    assert not new_images, (f"{path.name}: figures wider than {IMAGE_WIDTH} px are shrunk at 1024 px "
                            "(figsize width <= 6 in at 100 dpi):\n" + "\n".join(new_images))
    stale = sorted((allowed_text - set(lines)) | (set(allowed_images) - set(images)))
    assert not stale, f"{path.name}: these cells fit now: remove them from the allow-lists: {stale}"


def test_allow_lists_name_lessons_that_exist():
    stems = {p.stem for p in SOLUTIONS}
    assert set(TEXT_ALLOWED) <= stems and set(IMAGE_ALLOWED) <= stems
    assert all(reason for _, reason in TEXT_ALLOWED.values())
    assert all(reason for d in IMAGE_ALLOWED.values() for reason in d.values())


def _png(width: int, height: int = 10) -> str:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\0" * 8).decode()


def test_overflow_finds_long_lines_and_wide_images(tmp_path):
    import nbformat

    cell = nbformat.v4.new_code_cell("print(...)", id="c1")
    fits, wide = "a" * TEXT_WIDTH, "b" * (TEXT_WIDTH + 1)
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text=f"{fits}\n{wide}\n"),
        nbformat.v4.new_output("display_data", data={"text/plain": wide, "text/html": "<b>x</b>"}),  # HTML shown
        nbformat.v4.new_output("display_data", data={"text/plain": "a widget's view",
                                                     "application/vnd.jupyter.widget-view+json": {}}),
        nbformat.v4.new_output("execute_result", data={"text/plain": "c" * 100}, execution_count=1),
        nbformat.v4.new_output("display_data", data={"image/png": _png(IMAGE_WIDTH), "text/plain": "<Figure>"}),
    ]
    other = nbformat.v4.new_code_cell("plot()", id="c2")
    other.outputs = [nbformat.v4.new_output("display_data", data={"image/png": _png(IMAGE_WIDTH + 1)}),
                     nbformat.v4.new_output("display_data", data={"image/png": _png(1200)},
                                            metadata={"image/png": {"width": 500}})]  # shown at 500 px
    path = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell, other]), path)
    lines, images = overflow(path)
    assert list(lines) == ["c1"] and [t[:11] for t in lines["c1"]] == ["(89 chars) ", "(100 chars)"], lines
    assert images == {"c2": IMAGE_WIDTH + 1}


def test_png_width_reads_a_real_matplotlib_png():
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(6.5, 2), dpi=100)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    assert png_width({"data": {"image/png": base64.b64encode(buf.getvalue()).decode()}}) == 650
