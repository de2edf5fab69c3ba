"""Lesson 07 helpers: mobile-ready digits models, ONNX Runtime's mobile tools, and an Android project.

The pieces, in the order the lesson uses them:

* `with_preprocessing(cnn)` wraps the course CNN so the model takes the raw 0..16 pixels as uint8
  and returns probabilities: the app cannot disagree with Python about preprocessing.
* `export_baked`, `quantize_int8`: the fp32 ONNX file (torch.onnx.export, dynamo) and a static
  int8 QDQ version.
* `run_tool(...)` runs a tool that ships with onnxruntime (`python -m onnxruntime.tools.NAME`) in a
  subprocess; `fix_batch`, `convert_to_ort` and `mobile_usability` wrap the three the lesson uses
  and turn their logs into short summaries.
* `downsample(alpha)` turns a finger drawing (the alpha channel of the app's bitmap) into the
  model's 8x8 input. The app's Kotlin `Downsample.toModelInput` is the same algorithm line by line
  (tests/test_android.py translates the Kotlin function to Python and checks both agree).
* `create_project(dest, model, labels)` writes a complete Android Studio project around an `.ort`
  file; everything in it that depends on the model is read from the model.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any, Sequence

import numpy as np

#: the drawing is scaled into a GRID x GRID binary image, then CELLS x CELLS blocks are counted:
#: the same recipe that made scikit-learn's digits (32x32 bitmaps, 4x4 blocks, counts 0..16)
GRID = 32
CELLS = 8
BLOCK = GRID // CELLS
#: a pixel of the drawing is ink when its alpha is at least this (0..255)
INK_ALPHA = 128
INPUT_NAME = "pixels"
OUTPUT_NAME = "probabilities"
#: the ORT session option that replays the optimizations a "Runtime"-style .ort file saved
RUNTIME_OPT_KEY = "session.enable_saved_runtime_optimizations"
TEMPLATE_DIR = Path(__file__).with_name("android_template")

# Versions of the Android build tools the generated project uses (one place to update them).
ANDROID_GRADLE_PLUGIN = "8.13.2"
KOTLIN = "2.3.0"
GRADLE = "8.14.3"
COMPILE_SDK = 36
MIN_SDK = 24


# ---------------------------------------------------------------- models


def with_preprocessing(cnn):
    """The course CNN with its preprocessing inside: uint8 pixels 0..16 (N,1,8,8) in, probabilities out.

    Same arithmetic as `labkit.data.normalize` (x / 16 as float32), then the CNN, then softmax.
    """
    import torch

    from .data import PIXEL_MAX

    class RawPixelsCNN(torch.nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, pixels):
            x = pixels.to(torch.float32) / PIXEL_MAX  # labkit.data.normalize, inside the model
            return torch.softmax(self.net(x), dim=1)

    return RawPixelsCNN(cnn).eval()


def export_baked(cnn, path: str | os.PathLike) -> Path:
    """Export `with_preprocessing(cnn)` to ONNX (dynamo exporter, symbolic batch dimension)."""
    import torch

    from .quiet import quiet

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    model = with_preprocessing(cnn)
    example = torch.zeros(2, 1, CELLS, CELLS, dtype=torch.uint8)
    with quiet():
        program = torch.onnx.export(model, (example,), dynamo=True, input_names=[INPUT_NAME],
                                    output_names=[OUTPUT_NAME],
                                    dynamic_shapes=({0: torch.export.Dim("batch")},))
        program.save(str(path))
    return path


def calibration_reader(raw_pixels: np.ndarray, input_name: str = INPUT_NAME):
    """A CalibrationDataReader feeding raw uint8 digits one at a time (for quantize_static)."""
    from onnxruntime.quantization import CalibrationDataReader

    class Reader(CalibrationDataReader):
        def __init__(self):
            x = np.asarray(raw_pixels, dtype=np.uint8).reshape(-1, 1, CELLS, CELLS)
            self._it = (x[i:i + 1] for i in range(len(x)))

        def get_next(self):
            x = next(self._it, None)
            return None if x is None else {input_name: x}

    return Reader()


def quantize_int8(src: str | os.PathLike, dst: str | os.PathLike, raw_pixels: np.ndarray,
                  activations: str = "QUInt8") -> Path:
    """Static quantization (QDQ, per-channel int8 weights) of the baked model, calibrated on `raw_pixels`
    (N,1,8,8). Activations are uint8 by default: NNAPI's quantized operators take uint8 activations only
    (quantize_static's own default is QInt8). Weights use 7 bits (`reduce_range`): x86 CPUs without VNNI
    multiply uint8 by int8 with an instruction that saturates, so 8-bit weights give other results there
    than on VNNI, Arm or WebAssembly (the course's digits: 97.78% instead of 98.89%, and 0.19 apart from the
    browser); with 7 bits every CPU computes the same integers."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    from .quiet import quiet

    dst = Path(dst)
    with quiet():
        quantize_static(str(src), str(dst), calibration_reader(raw_pixels), quant_format=QuantFormat.QDQ,
                        per_channel=True, activation_type=QuantType[activations], weight_type=QuantType.QInt8,
                        reduce_range=True)
    return dst


# ---------------------------------------------------------------- onnxruntime's mobile tools


def run_tool(tool: str, *args: Any, cwd: str | os.PathLike | None = None) -> str:
    """Run `python -m onnxruntime.tools.<tool> ARGS` with this Python; return its log (stdout+stderr).

    The tool runs exactly as with `-m`, except that torch is kept out of its imports: the
    `onnxruntime.tools` package imports torch for a PyTorch helper no mobile tool uses, which alone
    takes seconds per call.
    """
    boot = ("import runpy, sys; sys.modules['torch'] = None; "
            f"sys.argv[0] = {tool!r}; runpy.run_module({'onnxruntime.tools.' + tool!r}, run_name='__main__', alter_sys=True)")
    cmd = [sys.executable, "-c", boot, *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        tail = "\n".join(log.strip().splitlines()[-8:])
        raise RuntimeError(f"{tool} failed (exit code {proc.returncode}):\n{tail}")
    return log


def fix_batch(src: str | os.PathLike, dst: str | os.PathLike, dim_param: str = "batch", value: int = 1) -> Path:
    """make_dynamic_shape_fixed: give the symbolic dimension `dim_param` the fixed size `value`."""
    run_tool("make_dynamic_shape_fixed", "--dim_param", dim_param, "--dim_value", value, src, dst)
    return Path(dst)


def fix_batch_python(src: str | os.PathLike, dst: str | os.PathLike, dim_param: str = "batch",
                     value: int = 1) -> Path:
    """What make_dynamic_shape_fixed does, as Python calls (no subprocess): the same two functions."""
    import onnx
    from onnxruntime.tools.onnx_model_utils import fix_output_shapes, make_dim_param_fixed

    model = onnx.load(str(src))
    make_dim_param_fixed(model.graph, dim_param, value)
    fix_output_shapes(model)
    onnx.save(model, str(dst))
    return Path(dst)


_PART_RE = re.compile(r"(\d+) partitions with a total of (\d+)/(\d+) nodes can be handled by the (.+?) EP")
_DYN_RE = re.compile(r"Unsupported nodes due to input having a dynamic shape=(\d+)")
_OP_RE = re.compile(r"Unsupported nodes due to operator=(\d+)")


def parse_usability(log: str) -> list[dict]:
    """The numbers in check_onnx_model_mobile_usability's log: one dict per execution provider."""
    rows: list[dict] = []
    for section in re.split(r"Checking (?=NNAPI|CoreML)", log)[1:]:
        ep = section.splitlines()[0].strip()
        parts = _PART_RE.findall(section)
        if not parts:
            continue
        now, fixed = parts[0], (parts[1] if len(parts) > 1 else None)
        dyn = _DYN_RE.search(section.split("Partition information if")[0])
        ops = _OP_RE.search(section)
        rows.append({
            "ep": ep,
            "nodes": int(now[2]),
            "supported": int(now[1]),
            "partitions": int(now[0]),
            "blocked_by_dynamic_shape": int(dyn.group(1)) if dyn else 0,
            "blocked_by_operator": int(ops.group(1)) if ops else 0,
            "supported_if_fixed": int(fixed[1]) if fixed else int(now[1]),
        })
    return rows


def mobile_usability(model: str | os.PathLike) -> list[dict]:
    """Run check_onnx_model_mobile_usability on `model` and return `parse_usability` of its log."""
    return parse_usability(run_tool("check_onnx_model_mobile_usability", model))


def format_rows(rows: Sequence[dict], columns: Sequence[str] | None = None) -> str:
    """A plain-text table of dicts (what a notebook prints instead of a wall of logs)."""
    if not rows:
        return "(nothing)"
    cols = list(columns or rows[0])
    cells = [[str(r.get(c, "")) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    line = lambda vals: "  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(vals, widths)))
    return "\n".join([line(cols), line(["-" * w for w in widths])] + [line(r) for r in cells])


def convert_to_ort(src: str | os.PathLike, out_dir: str | os.PathLike, style: str = "Runtime",
                   target_platform: str | None = None) -> dict:
    """convert_onnx_models_to_ort on one model; returns the .ort path, the operator config and the ops.

    `style` "Runtime" keeps the graph portable across execution providers (NNAPI, XNNPACK, CPU) and
    saves the CPU optimizations to be replayed at load time; "Fixed" applies them now.
    `target_platform` "arm" lets the saved optimizations fuse int8 (s8) QDQ patterns into QLinear* kernels
    (session.qdqisint8allowed=1), which ONNX Runtime does on Arm; without it the converter assumes x86.
    """
    src, out_dir = Path(src), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:  # the tool converts every .onnx in a folder: give it one
        one = Path(tmp) / src.name
        shutil.copyfile(src, one)
        extra = ["--target_platform", target_platform] if target_platform else []
        run_tool("convert_onnx_models_to_ort", "--optimization_style", style, *extra, "--output_dir", out_dir, one)
    suffix = ".with_runtime_opt" if style == "Runtime" else ""
    ort_path = out_dir / f"{src.stem}{suffix}.ort"
    config = out_dir / f"{src.stem}.required_operators{suffix}.config"  # named so for a single model
    if not config.is_file():
        config = out_dir / f"required_operators{suffix}.config"
    ops = [line for line in config.read_text().splitlines() if line and not line.startswith("#")]
    return {"ort": ort_path, "config": config, "operators": ops}


def ort_operators(model: str | os.PathLike | bytes) -> list[str]:
    """The operators of an ORT-format file's graph (subgraphs included), as "domain:op", read with onnxruntime's
    own ORT-format model processor. Saved runtime optimizations are not among them: they are replayed at load
    time (a Runtime-style file of the course CNN lists Conv and Relu, the Fixed-style one FusedConv)."""
    from onnxruntime.tools.ort_format_model.utils import _extract_ops_and_types_from_ort_models

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.ort"
        path.write_bytes(model if isinstance(model, (bytes, bytearray)) else Path(model).read_bytes())
        required, _ = _extract_ops_and_types_from_ort_models([path], False)
    return sorted({f"{domain or 'ai.onnx'}:{op}" for domain, opsets in required.items()
                   for ops in opsets.values() for op in ops})


def is_ort_format(data: bytes) -> bool:
    """ORT-format files are FlatBuffers whose file identifier (bytes 4..8) is b'ORTM'."""
    return len(data) >= 8 and data[4:8] == b"ORTM"


def session(model: str | os.PathLike | bytes, *, runtime_optimizations: bool = True, threads: int = 1):
    """A CPU InferenceSession configured like the app's (saved runtime optimizations replayed)."""
    from .runtime import ort_session

    return ort_session(model, threads=threads, config={RUNTIME_OPT_KEY: "1"} if runtime_optimizations else None)


def model_io(model: str | os.PathLike | bytes) -> dict:
    """Input and output name, element type and shape, read from an .onnx or .ort model by ORT."""
    sess = session(model, runtime_optimizations=False)
    (inp,), (out,) = sess.get_inputs(), sess.get_outputs()
    if len(sess.get_inputs()) != 1 or len(sess.get_outputs()) != 1:
        raise ValueError("the app expects a model with one input and one output")
    return {"input_name": inp.name, "input_type": inp.type, "input_shape": list(inp.shape),
            "output_name": out.name, "output_type": out.type, "output_shape": list(out.shape)}


# ---------------------------------------------------------------- the drawing -> 8x8 input


def downsample(alpha: np.ndarray) -> np.ndarray:
    """A drawing's alpha channel (H, W), values 0..255, to the model input: uint8 (1, 1, 8, 8), 0..16.

    1. ink = alpha >= INK_ALPHA; take the bounding box of the ink;
    2. make it square (the longer side, centred) and sample it at GRID x GRID pixel centres;
    3. count the ink pixels in each BLOCK x BLOCK block: CELLS x CELLS counts, each 0..BLOCK**2 = 16.

    Integer arithmetic only, so the Kotlin twin (`Downsample.toModelInput`) gives the same bits.
    """
    a = np.asarray(alpha)
    if a.ndim != 2:
        raise ValueError(f"expected a 2-D alpha image, got shape {a.shape}")
    height, width = a.shape
    ink = a.astype(np.int64) >= INK_ALPHA
    counts = np.zeros((CELLS, CELLS), dtype=np.uint8)
    if not ink.any():
        return counts[None, None]
    ys, xs = np.nonzero(ink)
    top, bottom, left, right = int(ys.min()), int(ys.max()), int(xs.min()), int(xs.max())
    box_w, box_h = right - left + 1, bottom - top + 1
    side = max(box_w, box_h)
    x0 = left - (side - box_w) // 2
    y0 = top - (side - box_h) // 2
    g = np.arange(GRID)
    src = ((2 * g + 1) * side) // (2 * GRID)  # all terms >= 0: Kotlin's / and Python's // agree
    sy, sx = y0 + src, x0 + src
    vy, vx = (sy >= 0) & (sy < height), (sx >= 0) & (sx < width)
    grid = np.zeros((GRID, GRID), dtype=bool)
    grid[np.ix_(vy, vx)] = ink[np.ix_(sy[vy], sx[vx])]
    counts = grid.reshape(CELLS, BLOCK, CELLS, BLOCK).sum(axis=(1, 3)).astype(np.uint8)
    return counts[None, None]


def draw_strokes(strokes: Sequence[Sequence[tuple[float, float]]], size: int = 280,
                 width: float | None = None) -> np.ndarray:
    """Rasterize finger strokes (lists of (x, y) points in 0..1) into a (size, size) alpha image.

    The same round-capped thick lines the app's canvas draws (its stroke width is size / 8: thick, like
    the pen strokes of the scanned digits once scaled to 32x32).
    """
    width = width if width is not None else size / 8
    r2 = (width / 2) ** 2
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64) + 0.5
    alpha = np.zeros((size, size), dtype=np.uint8)
    for stroke in strokes:
        pts = np.asarray(stroke, dtype=np.float64) * size
        if len(pts) == 1:
            pts = np.vstack([pts, pts])
        for (ax, ay), (bx, by) in zip(pts[:-1], pts[1:]):
            dx, dy = bx - ax, by - ay
            L2 = dx * dx + dy * dy
            t = np.clip(((xx - ax) * dx + (yy - ay) * dy) / L2, 0, 1) if L2 > 0 else 0.0
            d2 = (xx - ax - t * dx) ** 2 + (yy - ay - t * dy) ** 2
            alpha[d2 <= r2] = 255
    return alpha


# ---------------------------------------------------------------- the Android Studio project


def onnxruntime_version() -> str:
    """The installed onnxruntime's version: the app depends on the same onnxruntime-android."""
    return metadata.version("onnxruntime").split("+")[0]


def _kotlin_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace("\n", "\\n") + '"'


def _xml_text(s: str) -> str:
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return s.replace("'", "\\'").replace('"', '\\"')


def _substitutions(io: dict, labels: Sequence[str], asset: str, package: str, app_name: str) -> dict[str, str]:
    types = {"tensor(uint8)": ("UINT8", "1"), "tensor(float)": ("FLOAT", "4")}
    if io["input_type"] not in types:
        raise ValueError(f"the app feeds uint8 or float pixels; the model's input is {io['input_type']}")
    if io["output_type"] != "tensor(float)":
        raise ValueError(f"the app reads float probabilities; the model's output is {io['output_type']}")
    shape = [d if isinstance(d, int) and d > 0 else 1 for d in io["input_shape"]]  # symbolic dims: 1
    if int(np.prod(shape)) != CELLS * CELLS:
        raise ValueError(f"the app draws one {CELLS}x{CELLS} digit; the model's input shape is {io['input_shape']}")
    n_out = io["output_shape"][-1] if io["output_shape"] else None
    if isinstance(n_out, int) and n_out != len(labels):
        raise ValueError(f"the model outputs {n_out} scores but {len(labels)} labels were given")
    java_type, nbytes = types[io["input_type"]]
    return {
        "PACKAGE": package,
        "APP_NAME_XML": _xml_text(app_name),
        "MODEL_ASSET": _kotlin_string(asset),
        "INPUT_NAME": _kotlin_string(io["input_name"]),
        "OUTPUT_NAME": _kotlin_string(io["output_name"]),
        "INPUT_SHAPE": ", ".join(f"{d}L" for d in shape),
        "INPUT_SHAPE_TEXT": str(io["input_shape"]),
        "INPUT_JAVA_TYPE": java_type,
        "INPUT_BYTES_PER_VALUE": nbytes,
        "INPUT_IS_FLOAT": "true" if java_type == "FLOAT" else "false",
        "LABELS": ", ".join(_kotlin_string(str(x)) for x in labels),
        "GRID": str(GRID),
        "CELLS": str(CELLS),
        "INK_ALPHA": str(INK_ALPHA),
        "RUNTIME_OPT_KEY": _kotlin_string(RUNTIME_OPT_KEY),
        "ORT_VERSION": onnxruntime_version(),
        "AGP_VERSION": ANDROID_GRADLE_PLUGIN,
        "KOTLIN_VERSION": KOTLIN,
        "GRADLE_VERSION": GRADLE,
        "COMPILE_SDK": str(COMPILE_SDK),
        "MIN_SDK": str(MIN_SDK),
        "ASSET_FILE": asset,
        "APP_NAME": app_name,
        "INPUT_NAME_PLAIN": io["input_name"],
        "OUTPUT_NAME_PLAIN": io["output_name"],
        "INPUT_TYPE_PLAIN": io["input_type"],
    }


def _render(text: str, subs: dict[str, str]) -> str:
    out = re.sub(r"@@([A-Z_]+)@@", lambda m: subs[m.group(1)], text)
    if "@@" in out:
        raise ValueError("unfilled placeholder in the Android template")
    return out


def create_project(dest: str | os.PathLike, model: str | os.PathLike, labels: Sequence[str], *,
                   package: str = "org.onnxlab.digits", app_name: str = "ONNX Digits") -> Path:
    """Write a complete Android Studio project (Gradle Kotlin DSL) that runs `model` on a drawn digit.

    `model` is an `.ort` file (an `.onnx` file is converted first). Input/output names, element type
    and shape are read from the model; the onnxruntime-android version is the installed onnxruntime's.
    Writing the same model twice gives byte-identical files (no dates, sorted, fixed line endings).
    Returns the project folder.
    """
    model, dest = Path(model), Path(dest)
    if not re.fullmatch(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+", package):
        raise ValueError(f"{package!r} is not a valid Android package name (like org.example.app)")
    labels = [str(x) for x in labels]
    with tempfile.TemporaryDirectory() as tmp:
        if model.suffix == ".onnx":
            model = convert_to_ort(model, tmp)["ort"]
        data = model.read_bytes()
        if not is_ort_format(data):
            raise ValueError(f"{model} is not an ORT-format file (convert it with convert_onnx_models_to_ort)")
        io = model_io(data)
    asset = re.sub(r"[^A-Za-z0-9_.]", "_", model.name.replace(".with_runtime_opt", ""))
    subs = _substitutions(io, labels, asset, package, app_name)
    if dest.exists():
        shutil.rmtree(dest)
    for src in sorted(p for p in TEMPLATE_DIR.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        rel = src.relative_to(TEMPLATE_DIR).as_posix().replace("PACKAGE_DIR", package.replace(".", "/"))
        rel = re.sub(r"(^|/)dot\.", r"\1.", rel)  # dot.gitignore -> .gitignore (no hidden template files)
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(_render(src.read_text(encoding="utf-8"), subs).encode("utf-8"))
    assets = dest / "app" / "src" / "main" / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    (assets / asset).write_bytes(data)
    return dest


def project_files(dest: str | os.PathLike) -> list[dict]:
    """Every file of a generated project: relative path, size and a short SHA-256."""
    dest = Path(dest)
    return [{"file": p.relative_to(dest).as_posix(), "bytes": p.stat().st_size,
             "sha256": hashlib.sha256(p.read_bytes()).hexdigest()[:12]}
            for p in sorted(dest.rglob("*")) if p.is_file()]


def kotlin_downsample_source(dest_or_template: str | os.PathLike | None = None) -> str:
    """The Kotlin `Downsample` object (from a generated project, or the template)."""
    root = Path(dest_or_template) if dest_or_template else TEMPLATE_DIR
    (path,) = [p for p in root.rglob("Downsample.kt*")]
    return path.read_text(encoding="utf-8")
