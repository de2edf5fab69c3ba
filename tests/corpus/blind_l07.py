"""Blind entries, copied from /work/blind/l07.py (issue 32): written by a helper who never read the judges or this corpus
(their README: /work/blind/README.md). tests/corpus/l07.py adds them to its CORPUS.

Blind corpus for lesson 07: block_counts, fix_batch, ort_file.
"""
import copy
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx

from corpus import Right, Wrong


# ---------------------------------------------------------------- 07.block_counts

# Right: two loops over blocks, like Downsample.kt.
def blocks_loops(grid):
    g = np.asarray(grid).astype(np.int64)
    out = np.zeros((8, 8), np.int64)
    for by in range(8):
        for bx in range(8):
            out[by, bx] = int(g[4 * by:4 * by + 4, 4 * bx:4 * bx + 4].sum())
    return out


# Right: np.add.reduceat along both axes.
def blocks_reduceat(grid):
    g = np.asarray(grid, dtype=np.int32)
    rows = np.add.reduceat(g, np.arange(0, 32, 4), axis=0)
    return np.add.reduceat(rows, np.arange(0, 32, 4), axis=1)


# Right: a 2-D cumulative sum (integral image) differenced at block corners.
def blocks_integral(grid):
    g = np.asarray(grid).astype(np.int64)
    c = np.zeros((33, 33), np.int64)
    c[1:, 1:] = g.cumsum(0).cumsum(1)
    i = np.arange(0, 33, 4)
    return c[i[1:]][:, i[1:]] - c[i[:-1]][:, i[1:]] - c[i[1:]][:, i[:-1]] + c[i[:-1]][:, i[:-1]]


# Right: swapaxes to (8, 8, 4, 4) then sum over the last two axes.
def blocks_swapaxes(grid):
    return np.asarray(grid).astype(int).reshape(8, 4, 8, 4).swapaxes(1, 2).sum(axis=(2, 3))


# Wrong: sums over the wrong axes of the (8, 4, 8, 4) view.
def blocks_wrong_axes(grid):
    return np.asarray(grid).astype(int).reshape(8, 4, 8, 4).sum(axis=(2, 3))


# Wrong: reshape(8, 8, 16): 16 consecutive pixels of a row-major walk, not 4x4 blocks.
def blocks_flat16(grid):
    return np.asarray(grid).astype(int).reshape(8, 8, 16).sum(-1)


# Wrong: mean per block instead of the count.
def blocks_mean(grid):
    return np.asarray(grid).astype(float).reshape(8, 4, 8, 4).mean(axis=(1, 3))


# Wrong: any() per block: 1 if there is ink, not how much.
def blocks_any(grid):
    return np.asarray(grid).astype(bool).reshape(8, 4, 8, 4).any(axis=(1, 3)).astype(int)


# Wrong: samples every fourth pixel instead of counting.
def blocks_stride(grid):
    return np.asarray(grid)[::4, ::4].astype(int)


# Wrong: transposed result.
def blocks_transposed(grid):
    return np.asarray(grid).astype(int).reshape(8, 4, 8, 4).sum(axis=(1, 3)).T


# Wrong: 8x8 blocks (reshape(4, 8, 4, 8)): a (4, 4) result.
def blocks_size8(grid):
    return np.asarray(grid).astype(int).reshape(4, 8, 4, 8).sum(axis=(1, 3))


# Wrong: loops with range(0, 28, 4) ... off by one block: last row/column of blocks left at zero.
def blocks_off_by_one(grid):
    g = np.asarray(grid).astype(int)
    out = np.zeros((8, 8), int)
    for y in range(0, 28, 4):
        for x in range(0, 28, 4):
            out[y // 4, x // 4] = g[y:y + 4, x:x + 4].sum()
    return out


# Wrong: the counts as float32 (mean * 16).
def blocks_float(grid):
    return (np.asarray(grid).astype(np.float32).reshape(8, 4, 8, 4).mean(axis=(1, 3)) * 16).astype(np.float32)


# Wrong: boolean sum with dtype=bool keeps booleans.
def blocks_bool_dtype(grid):
    return np.asarray(grid).reshape(8, 4, 8, 4).sum(axis=(1, 3), dtype=bool)


# ---------------------------------------------------------------- 07.fix_batch

def _utils():
    from onnxruntime.tools import onnx_model_utils as u
    return u


def _first_dim(model):
    return model.graph.input[0].type.tensor_type.shape.dim[0]


# Right: ModelProto.CopyFrom copy, branches on HasField.
def fix_copyfrom(model):
    u = _utils()
    m = onnx.ModelProto()
    m.CopyFrom(model)
    d = _first_dim(m)
    if d.HasField("dim_param") and d.dim_param:
        u.make_dim_param_fixed(m.graph, d.dim_param, 1)
    elif not d.HasField("dim_value"):
        inp = m.graph.input[0]
        shape = [1] + [x.dim_value for x in inp.type.tensor_type.shape.dim[1:]]
        u.make_input_shape_fixed(m.graph, inp.name, shape)
    u.fix_output_shapes(m)
    return m


# Right: serialize/parse copy, whole input shape fixed in both cases when no dim_value.
def fix_serialize(model):
    u = _utils()
    m = onnx.load_from_string(model.SerializeToString())
    inp = m.graph.input[0]
    d = inp.type.tensor_type.shape.dim[0]
    if d.dim_param:
        u.make_dim_param_fixed(m.graph, d.dim_param, 1)
    else:
        u.make_input_shape_fixed(m.graph, inp.name, [1, 1, 8, 8])
    u.fix_output_shapes(m)
    return m


# Right: deepcopy, dims read through a list comprehension; the symbolic name may be on any input.
def fix_deepcopy(model):
    u = _utils()
    m = copy.deepcopy(model)
    for inp in m.graph.input:
        dims = inp.type.tensor_type.shape.dim
        if not len(dims):
            continue
        first = dims[0]
        if first.dim_param:
            u.make_dim_param_fixed(m.graph, first.dim_param, 1)
        elif first.dim_value == 0:
            u.make_input_shape_fixed(m.graph, inp.name, [1] + [d.dim_value for d in dims[1:]])
    u.fix_output_shapes(m)
    return m


# Wrong: works in place on the caller's model (no copy).
def fix_in_place(model):
    u = _utils()
    d = _first_dim(model)
    if d.dim_param:
        u.make_dim_param_fixed(model.graph, d.dim_param, 1)
    else:
        u.make_input_shape_fixed(model.graph, model.graph.input[0].name, [1, 1, 8, 8])
    u.fix_output_shapes(model)
    return model


# Wrong: always assumes the dimension is called "batch".
def fix_hardcoded_batch(model):
    u = _utils()
    m = copy.deepcopy(model)
    u.make_dim_param_fixed(m.graph, "batch", 1)
    u.fix_output_shapes(m)
    return m


# Wrong: only handles a named dimension: an unnamed one is left dynamic.
def fix_named_only(model):
    u = _utils()
    m = copy.deepcopy(model)
    d = _first_dim(m)
    if d.dim_param:
        u.make_dim_param_fixed(m.graph, d.dim_param, 1)
    u.fix_output_shapes(m)
    return m


# Wrong: forgets fix_output_shapes: the outputs stay symbolic.
def fix_no_outputs(model):
    u = _utils()
    m = copy.deepcopy(model)
    d = _first_dim(m)
    if d.dim_param:
        u.make_dim_param_fixed(m.graph, d.dim_param, 1)
    else:
        u.make_input_shape_fixed(m.graph, m.graph.input[0].name, [1, 1, 8, 8])
    return m


# Wrong: sets dim_value = 1 on the input by hand and stops there (outputs and value_info keep the symbol).
def fix_input_dim_only(model):
    m = copy.deepcopy(model)
    d = _first_dim(m)
    d.Clear()
    d.dim_value = 1
    return m


# Wrong: mutates a copy but returns None (like the helpers it calls).
def fix_returns_none(model):
    u = _utils()
    m = copy.deepcopy(model)
    d = _first_dim(m)
    if d.dim_param:
        u.make_dim_param_fixed(m.graph, d.dim_param, 1)
    else:
        u.make_input_shape_fixed(m.graph, m.graph.input[0].name, [1, 1, 8, 8])
    u.fix_output_shapes(m)


# Wrong: unchanged copy.
def fix_unchanged(model):
    return copy.deepcopy(model)


# Wrong: fixes the batch to 8 (the image size) instead of 1.
def fix_to_eight(model):
    u = _utils()
    m = copy.deepcopy(model)
    d = _first_dim(m)
    if d.dim_param:
        u.make_dim_param_fixed(m.graph, d.dim_param, 8)
    else:
        u.make_input_shape_fixed(m.graph, m.graph.input[0].name, [8, 1, 8, 8])
    u.fix_output_shapes(m)
    return m


# Wrong: runs the command-line tool with --dim_param batch through files (name hard-coded).
def fix_cli(model):
    import tempfile
    d = Path(tempfile.mkdtemp())
    onnx.save(model, str(d / "in.onnx"))
    subprocess.run([sys.executable, "-m", "onnxruntime.tools.make_dynamic_shape_fixed", "--dim_param", "batch",
                    "--dim_value", "1", str(d / "in.onnx"), str(d / "out.onnx")], capture_output=True)
    if not (d / "out.onnx").exists():
        return copy.deepcopy(model)
    return onnx.load(str(d / "out.onnx"))


# ---------------------------------------------------------------- 07.ort_file (files)

def _fp32(tmp, fixed=True, name="digits_fp32.onnx"):
    from labkit import android
    from labkit.models import trained_cnn
    src = android.export_baked(trained_cnn(), tmp / name)
    if not fixed:
        return src
    return android.fix_batch_python(src, tmp / "digits_fp32_b1.onnx")


def _convert(src, out_dir, *extra):
    out_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "onnxruntime.tools.convert_onnx_models_to_ort", *extra,
                    "--output_dir", str(out_dir), str(src)], check=True, capture_output=True)
    return sorted(out_dir.glob("*.ort"))


# Right: the converter run as a subprocess with --optimization_style Runtime; pathlib.Path handed in.
def ort_subprocess(tmp):
    src = _fp32(tmp)
    return _convert(src, tmp / "ort_fp32", "--optimization_style", "Runtime")[0]


# Right: labkit's convert_to_ort helper (the same tool), a str path.
def ort_helper(tmp):
    from labkit import android
    return str(android.convert_to_ort(_fp32(tmp), tmp / "ort_fp32", style="Runtime")["ort"])


# Right: batch fixed with the command-line make_dynamic_shape_fixed, converted with --target_platform arm.
def ort_arm(tmp):
    from labkit import android
    src = _fp32(tmp, fixed=False)
    b1 = android.fix_batch(src, tmp / "digits_fp32_b1.onnx")
    return str(_convert(b1, tmp / "ort_fp32", "--optimization_style", "Runtime", "--target_platform", "arm")[0])


# Wrong: converts the model whose batch is still symbolic.
def ort_dynamic(tmp):
    return str(_convert(_fp32(tmp, fixed=False), tmp / "ort_fp32", "--optimization_style", "Runtime")[0])


# Wrong: optimization style Fixed (optimizations applied now, for this x86 machine).
def ort_fixed_style(tmp):
    return str(_convert(_fp32(tmp), tmp / "ort_fp32", "--optimization_style", "Fixed")[0])


# Wrong: hands in the .onnx file instead of an ORT-format file.
def ort_onnx_file(tmp):
    return str(_fp32(tmp))


# Wrong: a session at level ALL saving an .ort file (NCHWc layout for this CPU).
def ort_session_all(tmp):
    import onnxruntime as ort
    src = _fp32(tmp)
    out = tmp / "ort_fp32" / "digits_fp32_b1.ort"
    out.parent.mkdir(parents=True, exist_ok=True)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.optimized_model_filepath = str(out)
    so.add_session_config_entry("session.save_model_format", "ORT")
    ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"])
    return str(out)


# Wrong: returns the required_operators.config file next to the .ort.
def ort_config(tmp):
    from labkit import android
    return str(android.convert_to_ort(_fp32(tmp), tmp / "ort_fp32")["config"])


# Wrong: returns the output folder rather than the .ort file.
def ort_folder(tmp):
    from labkit import android
    android.convert_to_ort(_fp32(tmp), tmp / "ort_fp32")
    return str(tmp / "ort_fp32")


# Wrong: converts the bare CNN (float input, logits, no preprocessing) instead of the app's fp32 model.
def ort_bare_cnn(tmp):
    import torch
    import labkit
    from labkit import android
    from labkit.data import digits
    from labkit.models import trained_cnn
    p = tmp / "bare.onnx"
    with labkit.quiet():
        torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:2]),), dynamo=True,
                          dynamic_shapes={"input": {0: "batch"}}).save(str(p))
    b1 = android.fix_batch_python(p, tmp / "bare_b1.onnx")
    return str(_convert(b1, tmp / "ort_fp32", "--optimization_style", "Runtime")[0])


# Wrong: batch fixed to 4 instead of 1.
def ort_batch4(tmp):
    from labkit import android
    src = _fp32(tmp, fixed=False)
    b4 = android.fix_batch_python(src, tmp / "digits_fp32_b4.onnx", value=4)
    return str(_convert(b4, tmp / "ort_fp32", "--optimization_style", "Runtime")[0])


# Wrong: converts the int8 model (what the app ships) instead of the fp32 one.
def ort_int8(tmp):
    from labkit import android
    from labkit.data import digits
    src = _fp32(tmp, fixed=False)
    q = tmp / "digits_int8.onnx"
    android.quantize_int8(src, q, digits(raw=True).x_train[:200])
    b1 = android.fix_batch_python(q, tmp / "digits_int8_b1.onnx")
    return str(_convert(b1, tmp / "ort_int8", "--optimization_style", "Runtime")[0])


CORPUS = {
    "07.block_counts": [
        Right("blind-two-loops", answer=blocks_loops),
        Right("blind-reduceat", answer=blocks_reduceat),
        Right("blind-integral-image", answer=blocks_integral),
        Right("blind-swapaxes", answer=blocks_swapaxes),
        Wrong("blind-wrong-axes", answer=blocks_wrong_axes, outputs_wrong=True),
        Wrong("blind-flat16", answer=blocks_flat16, outputs_wrong=True),
        Wrong("blind-mean", answer=blocks_mean, outputs_wrong=True),
        Wrong("blind-any", answer=blocks_any, outputs_wrong=True),
        Wrong("blind-stride-sample", answer=blocks_stride, outputs_wrong=True, skipped_skill=True),
        Wrong("blind-transposed", answer=blocks_transposed, outputs_wrong=True),
        Wrong("blind-8x8-blocks", answer=blocks_size8, outputs_wrong=True),
        Wrong("blind-loop-off-by-one", answer=blocks_off_by_one, outputs_wrong=True),
        Wrong("blind-float-counts", answer=blocks_float, outputs_wrong=False),
        Wrong("blind-bool-dtype", answer=blocks_bool_dtype, outputs_wrong=True),
    ],
    "07.fix_batch": [
        Right("blind-copyfrom-hasfield", answer=fix_copyfrom),
        Right("blind-serialize-fixed-shape", answer=fix_serialize),
        Right("blind-deepcopy-all-inputs", answer=fix_deepcopy),
        Wrong("blind-in-place", answer=fix_in_place, outputs_wrong=False),
        Wrong("blind-hardcoded-batch", answer=fix_hardcoded_batch, outputs_wrong=True),
        Wrong("blind-named-only", answer=fix_named_only, outputs_wrong=True),
        Wrong("blind-no-fix-outputs", answer=fix_no_outputs, outputs_wrong=True),
        Wrong("blind-input-dim-only", answer=fix_input_dim_only, outputs_wrong=True),
        Wrong("blind-returns-none", answer=fix_returns_none, outputs_wrong=True),
        Wrong("blind-unchanged", answer=fix_unchanged, outputs_wrong=True, skipped_skill=True),
        Wrong("blind-batch-8", answer=fix_to_eight, outputs_wrong=True),
        Wrong("blind-cli-batch-name", answer=fix_cli, outputs_wrong=True),
    ],
    "07.ort_file": [
        Right("blind-subprocess-pathlib", make=ort_subprocess),
        Right("blind-labkit-helper", make=ort_helper),
        Right("blind-cli-fix-arm", make=ort_arm),
        Wrong("blind-dynamic-batch", make=ort_dynamic, outputs_wrong=True),
        Wrong("blind-fixed-style", make=ort_fixed_style, outputs_wrong=False),
        Wrong("blind-onnx-not-ort", make=ort_onnx_file, outputs_wrong=False, skipped_skill=True),
        Wrong("blind-session-all-ort", make=ort_session_all, outputs_wrong=False),
        Wrong("blind-config-file", make=ort_config, outputs_wrong=True),
        Wrong("blind-folder", make=ort_folder, outputs_wrong=True),
        Wrong("blind-bare-cnn", make=ort_bare_cnn, outputs_wrong=True),
        Wrong("blind-batch-4", make=ort_batch4, outputs_wrong=True),
        Wrong("blind-int8-model", make=ort_int8, outputs_wrong=True),
    ],
}
