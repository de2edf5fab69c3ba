"""Blind corpus round 12, lesson 07 (written without seeing the judges).

Truths relied on (checked here with onnxruntime 1.31.1, onnx 1.23.2):
- onnxruntime.tools.onnx_model_utils: make_dim_param_fixed replaces a dim_param in graph inputs, outputs and
  value_info; make_input_shape_fixed also accepts a named dim (it then calls make_dim_param_fixed itself);
  fix_output_shapes copies inferred shapes only into outputs that are not fixed already, and treats an output
  with NO shape at all as "fixed" (is_fixed_size_tensor), so clearing an output's shape passes its own test.
- convert_onnx_models_to_ort, style Runtime = level ALL minus NchwcTransformer, session.save_model_format=ORT and
  optimization.minimal_build_optimizations=save; style Fixed writes com.microsoft FusedConv; an ORT file starts
  with b'ORTM' at bytes 4..8; a session at level ALL saving ORT format writes com.microsoft.nchwc ops (avx2 here).
- block counts = grid.reshape(8,4,8,4).sum((1,3)).
Ambiguities found in the prompts:
- 07.ort_file: "set ort_fp32 to the path": a str is a path too (the notebook's own cell 61 tests
  isinstance(ort_fp32, Path), so a str path silently drops out of the size table). I used a str in one Right.
  An ORT file saved at BASIC level with no saved runtime optimizations is not "style Runtime" yet meets every
  check listed (I called it Right: blind12-of-basic-ort-no-saved-opts, debatable).
- 07.fix_batch: the prompt says "[?, 1, 8, 8]" - an answer hard-coding [1,1,8,8] is right on such models.
  Nothing says what to do with value_info / intermediate shapes.
- 07.block_counts: input may be booleans or 0/1 of any integer/float dtype; "any integer dtype" for the result,
  so uint8/int8/int64 results are all right; a float result with integral values is not.
Holes I expect a judge to miss:
- block_counts: labkit.android.downsample(grid*255)[0,0] equals the block counts whenever the ink's bounding box
  is the whole 32x32 (any dense random grid, or ink touching all four borders); it is wrong for a drawing that
  fills only part of the grid. as_strided with C-order strides is wrong only on non-contiguous inputs.
- fix_batch: hard-coding the output shape [1, 10] is right on every [?,10] model; a judge needs another class
  count to see it. Removing the output shapes leaves no symbolic dim at all.
- ort_file: an int8 .ort (the app's) agrees with the CNN in predictions; only a probability tolerance catches it.
"""
from corpus import Right, Wrong

# ============================================================================ 07.fix_batch


def right_fix_library(model):
    import copy

    from onnxruntime.tools.onnx_model_utils import fix_output_shapes, make_dim_param_fixed, make_input_shape_fixed

    m = copy.deepcopy(model)
    inp = m.graph.input[0]
    dim0 = inp.type.tensor_type.shape.dim[0]
    if dim0.HasField("dim_param") and dim0.dim_param:
        make_dim_param_fixed(m.graph, dim0.dim_param, 1)
    elif not dim0.HasField("dim_value"):
        make_input_shape_fixed(m.graph, inp.name, [1, 1, 8, 8])
    fix_output_shapes(m)
    return m


def right_fix_input_shape_always(model):
    import onnx
    from onnxruntime.tools.onnx_model_utils import fix_output_shapes, make_input_shape_fixed

    m = onnx.ModelProto.FromString(model.SerializeToString())
    inp = m.graph.input[0]
    rest = [d.dim_value for d in inp.type.tensor_type.shape.dim[1:]]
    make_input_shape_fixed(m.graph, inp.name, [1] + rest)  # handles a dim_param through the whole graph too
    fix_output_shapes(m)
    return m


def right_fix_by_hand(model):
    """No onnx_model_utils: rewrite the dims by hand, then shape inference for the outputs."""
    import onnx

    m = onnx.ModelProto()
    m.CopyFrom(model)
    d0 = m.graph.input[0].type.tensor_type.shape.dim[0]
    name = d0.dim_param if d0.HasField("dim_param") else None
    d0.Clear()
    d0.dim_value = 1
    if name:
        for vi in list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info):
            if vi.type.HasField("tensor_type"):
                for d in vi.type.tensor_type.shape.dim:
                    if d.HasField("dim_param") and d.dim_param == name:
                        d.Clear()
                        d.dim_value = 1
    inferred = onnx.shape_inference.infer_shapes(m)
    for out, inf in zip(m.graph.output, inferred.graph.output):
        dims = inf.type.tensor_type.shape.dim
        if inf.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            out.type.tensor_type.shape.CopyFrom(inf.type.tensor_type.shape)
    return m


def right_fix_cli(model):
    """The command-line tool, in a subprocess, on temporary files."""
    import os
    import subprocess
    import sys
    import tempfile

    import onnx

    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "in.onnx"), os.path.join(d, "out.onnx")
        onnx.save(model, src)
        inp = model.graph.input[0]
        d0 = inp.type.tensor_type.shape.dim[0]
        if d0.HasField("dim_param") and d0.dim_param:
            args = ["--dim_param", d0.dim_param, "--dim_value", "1"]
        else:
            args = ["--input_name", inp.name, "--input_shape", "1,1,8,8"]
        subprocess.run([sys.executable, "-m", "onnxruntime.tools.make_dynamic_shape_fixed", *args, src, dst],
                       check=True, capture_output=True)
        return onnx.load(dst)


def wrong_fix_hardcoded_batch(model):
    import copy

    from onnxruntime.tools.onnx_model_utils import fix_output_shapes, make_dim_param_fixed

    m = copy.deepcopy(model)
    make_dim_param_fixed(m.graph, "batch", 1)
    fix_output_shapes(m)
    return m


def wrong_fix_no_outputs(model):
    import copy

    from onnxruntime.tools.onnx_model_utils import make_dim_param_fixed, make_input_shape_fixed

    m = copy.deepcopy(model)
    d0 = m.graph.input[0].type.tensor_type.shape.dim[0]
    if d0.dim_param:
        make_dim_param_fixed(m.graph, d0.dim_param, 1)
    else:
        make_input_shape_fixed(m.graph, m.graph.input[0].name, [1, 1, 8, 8])
    return m


def wrong_fix_dim_param_only(model):
    import copy

    from onnxruntime.tools.onnx_model_utils import fix_output_shapes, make_dim_param_fixed

    m = copy.deepcopy(model)
    make_dim_param_fixed(m.graph, m.graph.input[0].type.tensor_type.shape.dim[0].dim_param, 1)
    fix_output_shapes(m)
    return m


def wrong_fix_returns_bytes(model):
    import copy

    from onnxruntime.tools.onnx_model_utils import fix_output_shapes, make_input_shape_fixed

    m = copy.deepcopy(model)
    make_input_shape_fixed(m.graph, m.graph.input[0].name, [1, 1, 8, 8])
    fix_output_shapes(m)
    return m.SerializeToString()


def wrong_fix_in_place(model):
    from onnxruntime.tools.onnx_model_utils import fix_output_shapes, make_dim_param_fixed, make_input_shape_fixed

    d0 = model.graph.input[0].type.tensor_type.shape.dim[0]
    if d0.dim_param:
        make_dim_param_fixed(model.graph, d0.dim_param, 1)
    else:
        make_input_shape_fixed(model.graph, model.graph.input[0].name, [1, 1, 8, 8])
    fix_output_shapes(model)
    return model


def wrong_fix_input_dim_only(model):
    import copy

    m = copy.deepcopy(model)
    d0 = m.graph.input[0].type.tensor_type.shape.dim[0]
    d0.dim_value = 1  # input only: outputs keep their symbolic batch
    return m


def wrong_fix_dim_param_string_one(model):
    import copy

    m = copy.deepcopy(model)
    d0 = m.graph.input[0].type.tensor_type.shape.dim[0]
    old = d0.dim_param
    for vi in list(m.graph.input) + list(m.graph.output):
        dims = vi.type.tensor_type.shape.dim
        if len(dims) and (dims[0].dim_param == old or not dims[0].HasField("dim_value")):
            dims[0].dim_param = "1"  # a NAME "1", still symbolic
    return m


def wrong_fix_outputs_first(model):
    import copy

    from onnxruntime.tools.onnx_model_utils import fix_output_shapes, make_input_shape_fixed

    m = copy.deepcopy(model)
    fix_output_shapes(m)  # too early: the input is still symbolic
    make_input_shape_fixed(m.graph, m.graph.input[0].name, [1, 1, 8, 8])
    return m


def shortcut_fix_course_helper(model):
    """labkit's own fix_batch_python (dim_param 'batch') on temporary files."""
    import os
    import tempfile

    import onnx

    from labkit.android import fix_batch_python

    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "a.onnx"), os.path.join(d, "b.onnx")
        onnx.save(model, src)
        fix_batch_python(src, dst)
        return onnx.load(dst)


def shortcut_fix_hardcode_io(model):
    """Writes [1,1,8,8] and [1,10] into the declared shapes without asking the graph."""
    import copy

    m = copy.deepcopy(model)
    for vi, shape in ((m.graph.input[0], [1, 1, 8, 8]), (m.graph.output[0], [1, 10])):
        s = vi.type.tensor_type.shape
        del s.dim[:]
        for v in shape:
            s.dim.add().dim_value = v
    return m


def shortcut_fix_strip_output_shapes(model):
    """Input fixed; output shapes simply removed (no dims left, so none symbolic)."""
    import copy

    from onnxruntime.tools.onnx_model_utils import make_input_shape_fixed

    m = copy.deepcopy(model)
    make_input_shape_fixed(m.graph, m.graph.input[0].name, [1, 1, 8, 8])
    for o in m.graph.output:
        o.type.tensor_type.ClearField("shape")
    return m


# ============================================================================ 07.block_counts


def right_blocks_reduceat(grid):
    import numpy as np

    g = np.asarray(grid).astype(np.int64)
    starts = np.arange(0, 32, 4)
    return np.add.reduceat(np.add.reduceat(g, starts, axis=0), starts, axis=1)


def right_blocks_loops(grid):
    import numpy as np

    out = np.zeros((8, 8), dtype=np.uint8)
    for r in range(32):
        for c in range(32):
            if grid[r][c]:
                out[r // 4, c // 4] += 1
    return out


def right_blocks_matmul(grid):
    import numpy as np

    P = np.kron(np.eye(8, dtype=np.int32), np.ones((1, 4), dtype=np.int32))  # (8, 32)
    return P @ np.asarray(grid, dtype=np.int32) @ P.T


def right_blocks_windows(grid):
    import numpy as np
    from numpy.lib.stride_tricks import sliding_window_view

    g = np.asarray(grid, dtype=np.int16)
    return sliding_window_view(g, (4, 4))[::4, ::4].sum(axis=(2, 3)).astype(np.int16)


def right_blocks_avgpool(grid):
    import numpy as np
    import torch

    t = torch.as_tensor(np.asarray(grid, dtype=np.float32))[None, None]
    return torch.round(torch.nn.functional.avg_pool2d(t, 4) * 16).to(torch.int64)[0, 0].numpy()


def wrong_blocks_reshape_8844(grid):
    import numpy as np

    return np.asarray(grid).reshape(8, 8, 4, 4).sum(axis=(2, 3)).astype(np.int64)


def wrong_blocks_reshape_4848(grid):
    import numpy as np

    return np.asarray(grid).reshape(4, 8, 4, 8).sum(axis=(0, 2)).astype(np.int64)


def wrong_blocks_transposed(grid):
    import numpy as np

    return np.asarray(grid, dtype=np.int64).reshape(8, 4, 8, 4).sum(axis=(1, 3)).T


def wrong_blocks_float_mean(grid):
    import numpy as np

    return np.asarray(grid, dtype=float).reshape(8, 4, 8, 4).mean(axis=(1, 3)) * 16


def wrong_blocks_any(grid):
    import numpy as np

    return np.asarray(grid).reshape(8, 4, 8, 4).any(axis=(1, 3)).astype(np.uint8)


def wrong_blocks_model_shape(grid):
    import numpy as np

    return np.asarray(grid).reshape(8, 4, 8, 4).sum(axis=(1, 3)).astype(np.uint8)[None, None]


def wrong_blocks_off_by_one(grid):
    import numpy as np

    g = np.asarray(grid)
    out = np.zeros((8, 8), dtype=np.int64)
    for i in range(8):
        for j in range(8):
            out[i, j] = np.count_nonzero(g[4 * i:4 * i + 3, 4 * j:4 * j + 3])
    return out


def wrong_blocks_shape_assign(grid):
    grid.shape = (8, 4, 8, 4)  # reshapes the caller's array in place
    return grid.sum(axis=(1, 3)).astype("int64")


def wrong_blocks_as_strided_c_order(grid):
    import numpy as np
    from numpy.lib.stride_tricks import as_strided

    g = np.asarray(grid)
    isz = g.itemsize  # assumes a C-contiguous 32x32 array
    v = as_strided(g, shape=(8, 8, 4, 4), strides=(4 * 32 * isz, 4 * isz, 32 * isz, isz))
    return v.sum(axis=(2, 3)).astype(np.int64)


def wrong_blocks_sample(grid):
    import numpy as np

    return (np.asarray(grid)[::4, ::4].astype(np.int64)) * 16


def wrong_blocks_uint8_overflow_input(grid):
    import numpy as np

    g = np.asarray(grid)
    # sums the raw values: fine for 0/1, but booleans summed with dtype=bool stay booleans
    return g.reshape(8, 4, 8, 4).sum(axis=(1, 3), dtype=g.dtype)


def shortcut_blocks_course_downsample(grid):
    import numpy as np

    from labkit.android import downsample

    return downsample(np.asarray(grid, dtype=np.uint8) * 255)[0, 0]


def shortcut_blocks_zeros(grid):
    import numpy as np

    return np.zeros((8, 8), dtype=np.int64)


def shortcut_blocks_hostile_eq(grid):
    import numpy as np

    class Agree(np.ndarray):
        def __eq__(self, other):
            return np.ones(np.broadcast(self, other).shape, dtype=bool)

        def __ne__(self, other):
            return np.zeros(np.broadcast(self, other).shape, dtype=bool)

    return np.zeros((8, 8), dtype=np.int64).view(Agree)


def shortcut_blocks_patch_numpy(grid):
    import numpy as np

    np.array_equal = lambda *a, **k: True
    np.testing.assert_array_equal = lambda *a, **k: None
    np.testing.assert_equal = lambda *a, **k: None
    return np.zeros((8, 8), dtype=np.int64)


# ============================================================================ 07.ort_file

import tempfile as _tempfile
from pathlib import Path as _Path

_CACHE_DIR = _Path(_tempfile.mkdtemp(prefix="blind12_l07_"))
_BUILT = {}


def _fp32(kind="b1"):
    """The lesson's files, built once per process: 'sym' (digits_fp32.onnx, symbolic batch), 'b1' (batch fixed),
    'int8_b1' (the app's int8 model), 'untrained_b1', 'nopre_b1' (the CNN without the preprocessing wrapper)."""
    if kind in _BUILT:
        return _BUILT[kind]
    import torch

    import labkit
    from labkit import android
    from labkit.models import DigitsCNN, trained_cnn

    def export(module, path, dtype):
        example = torch.zeros(2, 1, 8, 8, dtype=dtype)
        with labkit.quiet():
            prog = torch.onnx.export(module, (example,), dynamo=True, input_names=["pixels"],
                                     output_names=["probabilities"],
                                     dynamic_shapes=({0: torch.export.Dim("batch")},))
            prog.save(str(path))
        return path

    if kind == "sym":
        p = export(android.with_preprocessing(trained_cnn()), _CACHE_DIR / "digits_fp32.onnx", torch.uint8)
    elif kind == "b1":
        p = android.fix_batch_python(_fp32("sym"), _CACHE_DIR / "digits_fp32_b1.onnx")
    elif kind == "int8_b1":
        raw = labkit.digits(raw=True)
        q = android.quantize_int8(_fp32("sym"), _CACHE_DIR / "digits_int8.onnx", raw.x_train[:200])
        p = android.fix_batch_python(q, _CACHE_DIR / "digits_int8_b1.onnx")
    elif kind == "untrained_b1":
        torch.manual_seed(0)
        s = export(android.with_preprocessing(DigitsCNN().eval()), _CACHE_DIR / "untrained.onnx", torch.uint8)
        p = android.fix_batch_python(s, _CACHE_DIR / "untrained_b1.onnx")
    elif kind == "nopre_b1":
        s = export(trained_cnn(), _CACHE_DIR / "nopre.onnx", torch.float32)
        p = android.fix_batch_python(s, _CACHE_DIR / "nopre_b1.onnx")
    _BUILT[kind] = p
    return p


def _save_ort(src, out, level="ORT_ENABLE_ALL", runtime_save=True, no_nchwc=True):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    so.optimized_model_filepath = str(out)
    so.log_severity_level = 3
    so.add_session_config_entry("session.save_model_format", "ORT")
    if runtime_save:
        so.add_session_config_entry("optimization.minimal_build_optimizations", "save")
    ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"],
                         disabled_optimizers=["NchwcTransformer"] if no_nchwc else None)
    return out


def make_ort_right_helper(tmp):
    from labkit import android

    return android.convert_to_ort(_fp32("b1"), tmp / "ort_fp32")["ort"]


def make_ort_right_cli_str(tmp):
    import shutil
    import subprocess
    import sys

    work = tmp / "one"
    work.mkdir()
    shutil.copyfile(_fp32("b1"), work / "digits_fp32_b1.onnx")
    subprocess.run([sys.executable, "-m", "onnxruntime.tools.convert_onnx_models_to_ort",
                    "--optimization_style", "Runtime", "--output_dir", str(tmp / "ort_fp32"),
                    str(work / "digits_fp32_b1.onnx")], check=True, capture_output=True)
    return str(next((tmp / "ort_fp32").glob("*.ort")))


def make_ort_right_python_api(tmp):
    import shutil

    from onnxruntime.tools.convert_onnx_models_to_ort import OptimizationStyle, convert_onnx_models_to_ort

    src = tmp / "src" / "digits_fp32_b1.onnx"
    src.parent.mkdir()
    shutil.copyfile(_fp32("b1"), src)
    convert_onnx_models_to_ort(src, output_dir=tmp / "ort_fp32", optimization_styles=[OptimizationStyle.Runtime],
                               target_platform="arm")
    return tmp / "ort_fp32" / "digits_fp32_b1.with_runtime_opt.ort"


def make_ort_right_session_by_hand(tmp):
    (tmp / "ort_fp32").mkdir()
    return _save_ort(_fp32("b1"), tmp / "ort_fp32" / "digits_fp32_b1.ort")


def make_ort_right_basic_no_saved_opts(tmp):
    (tmp / "ort_fp32").mkdir()
    return _save_ort(_fp32("b1"), tmp / "ort_fp32" / "digits.ort", level="ORT_ENABLE_BASIC", runtime_save=False)


def make_ort_wrong_fixed_style(tmp):
    from labkit import android

    return android.convert_to_ort(_fp32("b1"), tmp / "ort_fp32", style="Fixed")["ort"]


def make_ort_wrong_symbolic_batch(tmp):
    from labkit import android

    return android.convert_to_ort(_fp32("sym"), tmp / "ort_fp32")["ort"]


def make_ort_wrong_level_all_nchwc(tmp):
    (tmp / "ort_fp32").mkdir()
    return _save_ort(_fp32("b1"), tmp / "ort_fp32" / "digits.ort", runtime_save=False, no_nchwc=False)


def make_ort_wrong_extended_saved(tmp):
    (tmp / "ort_fp32").mkdir()
    return _save_ort(_fp32("b1"), tmp / "ort_fp32" / "digits.ort", level="ORT_ENABLE_EXTENDED", runtime_save=False)


def make_ort_wrong_config_path(tmp):
    from labkit import android

    return android.convert_to_ort(_fp32("b1"), tmp / "ort_fp32")["config"]


def make_ort_wrong_folder(tmp):
    from labkit import android

    android.convert_to_ort(_fp32("b1"), tmp / "ort_fp32")
    return tmp / "ort_fp32"


def make_ort_wrong_untrained(tmp):
    from labkit import android

    return android.convert_to_ort(_fp32("untrained_b1"), tmp / "ort_fp32")["ort"]


def make_ort_wrong_no_preprocessing(tmp):
    from labkit import android

    return android.convert_to_ort(_fp32("nopre_b1"), tmp / "ort_fp32")["ort"]


def make_ort_shortcut_onnx_path(tmp):
    import shutil

    out = tmp / "ort_fp32" / "digits_fp32_b1.onnx"
    out.parent.mkdir()
    shutil.copyfile(_fp32("b1"), out)
    return out


def make_ort_shortcut_renamed_onnx(tmp):
    import shutil

    out = tmp / "ort_fp32" / "digits_fp32_b1.with_runtime_opt.ort"
    out.parent.mkdir()
    shutil.copyfile(_fp32("b1"), out)
    return out


def make_ort_shortcut_app_int8(tmp):
    """Reuses the app's int8 .ort (converted earlier in the lesson) instead of converting the fp32 model."""
    from labkit import android

    return android.convert_to_ort(_fp32("int8_b1"), tmp / "ort_fp32", target_platform="arm")["ort"]


CORPUS = {
    "07.fix_batch": [
        Right("blind12-fx-library-branches", answer=right_fix_library),
        Right("blind12-fx-input-shape-fixed-always", answer=right_fix_input_shape_always),
        Right("blind12-fx-by-hand-infer-shapes", answer=right_fix_by_hand),
        Right("blind12-fx-cli-subprocess", answer=right_fix_cli),
        Wrong("blind12-fx-hardcoded-batch-name", answer=wrong_fix_hardcoded_batch),
        Wrong("blind12-fx-no-fix-output-shapes", answer=wrong_fix_no_outputs),
        Wrong("blind12-fx-dim-param-only", answer=wrong_fix_dim_param_only),
        Wrong("blind12-fx-returns-bytes", answer=wrong_fix_returns_bytes, outputs_wrong=False),
        Wrong("blind12-fx-in-place", answer=wrong_fix_in_place, outputs_wrong=False),
        Wrong("blind12-fx-input-dim-only", answer=wrong_fix_input_dim_only),
        Wrong("blind12-fx-dim-param-string-1", answer=wrong_fix_dim_param_string_one),
        Wrong("blind12-fx-outputs-fixed-first", answer=wrong_fix_outputs_first),
        Wrong("blind12-fx-course-helper-batch", answer=shortcut_fix_course_helper, skipped_skill=True),
        Wrong("blind12-fx-hardcoded-io-shapes", answer=shortcut_fix_hardcode_io, skipped_skill=True),
        Wrong("blind12-fx-strip-output-shapes", answer=shortcut_fix_strip_output_shapes, skipped_skill=True),
    ],
    "07.block_counts": [
        Right("blind12-bc-reduceat", answer=right_blocks_reduceat),
        Right("blind12-bc-python-loops-uint8", answer=right_blocks_loops),
        Right("blind12-bc-matmul-kron", answer=right_blocks_matmul),
        Right("blind12-bc-sliding-window-int16", answer=right_blocks_windows),
        Right("blind12-bc-torch-avgpool", answer=right_blocks_avgpool),
        Wrong("blind12-bc-reshape-8844", answer=wrong_blocks_reshape_8844),
        Wrong("blind12-bc-reshape-4848", answer=wrong_blocks_reshape_4848),
        Wrong("blind12-bc-transposed", answer=wrong_blocks_transposed),
        Wrong("blind12-bc-float-mean", answer=wrong_blocks_float_mean, outputs_wrong=False),
        Wrong("blind12-bc-any", answer=wrong_blocks_any),
        Wrong("blind12-bc-model-shape-11", answer=wrong_blocks_model_shape),
        Wrong("blind12-bc-off-by-one-3x3", answer=wrong_blocks_off_by_one),
        Wrong("blind12-bc-shape-assign-mutates", answer=wrong_blocks_shape_assign, outputs_wrong=False),
        Wrong("blind12-bc-as-strided-c-order", answer=wrong_blocks_as_strided_c_order),
        Wrong("blind12-bc-sample-corner", answer=wrong_blocks_sample),
        Wrong("blind12-bc-sum-in-input-dtype", answer=wrong_blocks_uint8_overflow_input),
        Wrong("blind12-bc-course-downsample", answer=shortcut_blocks_course_downsample, skipped_skill=True),
        Wrong("blind12-bc-zeros", answer=shortcut_blocks_zeros, skipped_skill=True),
        Wrong("blind12-bc-hostile-eq", answer=shortcut_blocks_hostile_eq, skipped_skill=True),
        Wrong("blind12-bc-patch-numpy", answer=shortcut_blocks_patch_numpy, skipped_skill=True),
    ],
    "07.ort_file": [
        Right("blind12-of-course-helper", make=make_ort_right_helper),
        Right("blind12-of-cli-str-path", make=make_ort_right_cli_str),
        Right("blind12-of-python-api-arm", make=make_ort_right_python_api),
        Right("blind12-of-session-by-hand-runtime", make=make_ort_right_session_by_hand),
        Right("blind12-of-basic-ort-no-saved-opts", make=make_ort_right_basic_no_saved_opts),
        Wrong("blind12-of-fixed-style", make=make_ort_wrong_fixed_style),
        Wrong("blind12-of-symbolic-batch", make=make_ort_wrong_symbolic_batch),
        Wrong("blind12-of-level-all-nchwc", make=make_ort_wrong_level_all_nchwc),
        Wrong("blind12-of-extended-fusedconv", make=make_ort_wrong_extended_saved),
        Wrong("blind12-of-config-path", make=make_ort_wrong_config_path),
        Wrong("blind12-of-folder-path", make=make_ort_wrong_folder),
        Wrong("blind12-of-untrained-cnn", make=make_ort_wrong_untrained),
        Wrong("blind12-of-no-preprocessing", make=make_ort_wrong_no_preprocessing),
        Wrong("blind12-of-onnx-not-converted", make=make_ort_shortcut_onnx_path, skipped_skill=True),
        Wrong("blind12-of-onnx-renamed-ort", make=make_ort_shortcut_renamed_onnx, skipped_skill=True),
        Wrong("blind12-of-app-int8-ort", make=make_ort_shortcut_app_int8, skipped_skill=True),
    ],
}
