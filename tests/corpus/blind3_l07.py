"""Blind corpus round 3, lesson 07 (written without seeing the judges).

Classes changed by the lead after reading the prompt: blind3-ortfile-bytes (Right: the file's bytes are the
file: an answer may be the path or its contents).
"""
import atexit as _atexit, shutil as _shutil, tempfile as _tempfile  # noqa: E401
_BLIND3_CACHE = __import__("pathlib").Path(_tempfile.mkdtemp(prefix="blind3-cache-"))  # per process: no race
_atexit.register(_shutil.rmtree, _BLIND3_CACHE, True)
import copy
import shutil
from pathlib import Path

import numpy as np
import onnx

from corpus import Right, Wrong

_CACHE = _BLIND3_CACHE / "l07"


def _models():
    """The lesson's fp32 models, exported once into the cache (dynamo exporter, as the notebook does)."""
    from labkit import android
    need = ["digits_fp32.onnx", "digits_fp32_b1.onnx", "digits_fp32_b4.onnx", "untrained_fp32_b1.onnx"]
    if not all((_CACHE / n).is_file() for n in need):
        import torch
        from labkit.models import DigitsCNN, trained_cnn
        _CACHE.mkdir(parents=True, exist_ok=True)
        android.export_baked(trained_cnn(), _CACHE / "digits_fp32.onnx")
        android.fix_batch_python(_CACHE / "digits_fp32.onnx", _CACHE / "digits_fp32_b1.onnx")
        android.fix_batch_python(_CACHE / "digits_fp32.onnx", _CACHE / "digits_fp32_b4.onnx", value=4)
        torch.manual_seed(0)
        android.export_baked(DigitsCNN().eval(), _CACHE / "untrained_fp32.onnx")
        android.fix_batch_python(_CACHE / "untrained_fp32.onnx", _CACHE / "untrained_fp32_b1.onnx")
    return _CACHE


def _art(tmp, src="digits_fp32_b1.onnx"):
    art = Path(tmp) / "artifacts"
    art.mkdir(parents=True, exist_ok=True)
    dst = art / "digits_fp32_b1.onnx"
    shutil.copyfile(_models() / src, dst)
    return dst


# ------------------------------------------------------------------ 07.ort_file
def _tool(tmp, *args, src="digits_fp32_b1.onnx"):
    """The converter's own Python entry point (what `python -m onnxruntime.tools.convert_onnx_models_to_ort`
    runs), called in-process with the command line's arguments."""
    from onnxruntime.tools.convert_onnx_models_to_ort import OptimizationStyle, convert_onnx_models_to_ort
    model = _art(tmp, src)
    out = Path(tmp) / "artifacts" / "ort_fp32"
    opts = dict(a.split("=", 1) if "=" in a else (a, None) for a in args if a.startswith("--") and "=" in a)
    it = iter(args)
    for a in it:
        if "=" not in a:
            opts[a] = next(it)
    style = OptimizationStyle[opts.get("--optimization_style", "Fixed")]
    convert_onnx_models_to_ort(model, output_dir=out, optimization_styles=[style],
                               target_platform=opts.get("--target_platform"))
    return out


def _ort_runtime_cli(tmp):
    out = _tool(tmp, "--optimization_style", "Runtime")
    return str(next(out.glob("*.ort")))


def _ort_runtime_arm(tmp):
    out = _tool(tmp, "--optimization_style=Runtime", "--target_platform", "arm")
    return next(out.glob("*.ort"))


def _ort_inprocess(tmp):
    """What the converter does for style Runtime, as session options: save the CPU optimizations as
    runtime records in an ORT-format file."""
    import onnxruntime as ort
    model = _art(tmp)
    out = Path(tmp) / "artifacts" / "ort_fp32"
    out.mkdir(exist_ok=True)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.add_session_config_entry("optimization.minimal_build_optimizations", "save")
    so.add_session_config_entry("session.save_model_format", "ORT")
    so.optimized_model_filepath = str(out / "digits_fp32_b1.ort")
    ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    return str(out / "digits_fp32_b1.ort")


def _ort_fixed(tmp):
    out = _tool(tmp, "--optimization_style", "Fixed")
    return str(next(out.glob("*.ort")))


def _ort_dynamic(tmp):
    out = _tool(tmp, "--optimization_style", "Runtime", src="digits_fp32.onnx")
    return str(next(out.glob("*.ort")))


def _ort_b4(tmp):
    out = _tool(tmp, "--optimization_style", "Runtime", src="digits_fp32_b4.onnx")
    return str(next(out.glob("*.ort")))


def _ort_untrained(tmp):
    out = _tool(tmp, "--optimization_style", "Runtime", src="untrained_fp32_b1.onnx")
    return str(next(out.glob("*.ort")))


def _ort_onnx_path(tmp):
    return str(_art(tmp))


def _ort_config(tmp):
    out = _tool(tmp, "--optimization_style", "Runtime")
    return str(next(out.glob("*.config")))


def _ort_folder(tmp):
    return str(_tool(tmp, "--optimization_style", "Runtime"))


def _ort_level_all(tmp):
    import onnxruntime as ort
    model = _art(tmp)
    out = Path(tmp) / "artifacts" / "ort_fp32"
    out.mkdir(exist_ok=True)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.add_session_config_entry("session.save_model_format", "ORT")
    so.optimized_model_filepath = str(out / "digits_fp32_b1.ort")
    ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    return str(out / "digits_fp32_b1.ort")


def _ort_extended(tmp):
    import onnxruntime as ort
    model = _art(tmp)
    out = Path(tmp) / "artifacts" / "ort_fp32"
    out.mkdir(exist_ok=True)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = str(out / "digits_fp32_b1.ort")  # the .ort suffix picks the ORT format
    ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    return str(out / "digits_fp32_b1.ort")


def _ort_bytes(tmp):
    return Path(_ort_runtime_cli(tmp)).read_bytes()


def _ort_renamed_onnx(tmp):
    """The .onnx file copied under a .ort name: not ORT format at all."""
    out = Path(tmp) / "artifacts" / "ort_fp32"
    out.mkdir(parents=True, exist_ok=True)
    dst = out / "digits_fp32_b1.ort"
    shutil.copyfile(_art(tmp), dst)
    return str(dst)


CORPUS = {
    "07.ort_file": [
        Right("blind3-ortfile-converter-runtime", make=_ort_runtime_cli),
        Right("blind3-ortfile-arm-pathlib", make=_ort_runtime_arm),
        Right("blind3-ortfile-session-options", make=_ort_inprocess),
        Wrong("blind3-ortfile-style-fixed", make=_ort_fixed),
        Wrong("blind3-ortfile-dynamic-batch", make=_ort_dynamic),
        Wrong("blind3-ortfile-batch4", make=_ort_b4),
        Wrong("blind3-ortfile-untrained-model", make=_ort_untrained),
        Wrong("blind3-ortfile-onnx-path", make=_ort_onnx_path, outputs_wrong=False, skipped_skill=True),
        Wrong("blind3-ortfile-config-path", make=_ort_config),
        Wrong("blind3-ortfile-folder-path", make=_ort_folder),
        Wrong("blind3-ortfile-level-all-nchwc", make=_ort_level_all),
        Wrong("blind3-ortfile-extended-fusedconv", make=_ort_extended),
        Right("blind3-ortfile-bytes", make=_ort_bytes),
        Wrong("blind3-ortfile-renamed-onnx", make=_ort_renamed_onnx, outputs_wrong=False, skipped_skill=True),
    ],
}


# ------------------------------------------------------------------ 07.fix_batch
def _first_dim(model):
    return model.graph.input[0].type.tensor_type.shape.dim[0]


def _fix_ref_like(model):
    from onnxruntime.tools.onnx_model_utils import fix_output_shapes, make_dim_param_fixed, make_input_shape_fixed
    m = onnx.ModelProto.FromString(model.SerializeToString())
    inp = m.graph.input[0]
    d = _first_dim(m)
    which = d.WhichOneof("value")
    if which == "dim_param":
        make_dim_param_fixed(m.graph, d.dim_param, 1)
    elif which is None:
        make_input_shape_fixed(m.graph, inp.name, [1, 1, 8, 8])
    fix_output_shapes(m)
    return m


def _fix_by_hand_unnamed(model):
    from onnxruntime.tools import onnx_model_utils as u
    m = copy.deepcopy(model)
    d = _first_dim(m)
    if d.dim_param:
        u.make_dim_param_fixed(m.graph, d.dim_param, 1)
    elif not d.HasField("dim_value"):
        shape = [1] + [x.dim_value for x in m.graph.input[0].type.tensor_type.shape.dim[1:]]
        u.make_input_shape_fixed(m.graph, m.graph.input[0].name, shape)
    u.fix_output_shapes(m)
    return m


def _fix_generic(model, *, copy_=True, hard_name=None, outputs=True, unnamed=True, as_bytes=False,
                 bad_shape=None, hard_input=None, every_param=False):
    from onnxruntime.tools.onnx_model_utils import fix_output_shapes, make_dim_param_fixed, make_input_shape_fixed
    m = copy.deepcopy(model) if copy_ else model
    d = _first_dim(m)
    name = hard_input or m.graph.input[0].name
    if hard_name is not None:
        make_dim_param_fixed(m.graph, hard_name, 1)
    elif every_param:
        for vi in list(m.graph.input):
            for dd in vi.type.tensor_type.shape.dim:
                if dd.dim_param:
                    make_dim_param_fixed(m.graph, dd.dim_param, 1)
        if not d.dim_param and not d.dim_value:
            make_input_shape_fixed(m.graph, name, [1, 1, 8, 8])
    elif d.dim_param:
        make_dim_param_fixed(m.graph, d.dim_param, 1)
    elif unnamed and not d.dim_value:
        make_input_shape_fixed(m.graph, name, bad_shape or [1, 1, 8, 8])
    if outputs:
        fix_output_shapes(m)
    return m.SerializeToString() if as_bytes else m


def _fix_unchanged(model):
    return copy.deepcopy(model)


def _fix_setvalue_only(model):
    """Sets dim_value on the input only; intermediate/outputs keep the symbolic name, no output fix."""
    m = copy.deepcopy(model)
    _first_dim(m).dim_value = 1
    return m


CORPUS["07.fix_batch"] = [
    Right("blind3-fixbatch-fromstring-whichoneof", answer=_fix_ref_like),
    Right("blind3-fixbatch-module-alias-shape-read", answer=_fix_by_hand_unnamed),
    Right("blind3-fixbatch-every-input-param", answer=lambda m: _fix_generic(m, every_param=True)),
    Wrong("blind3-fixbatch-hardcoded-batch-name", answer=lambda m: _fix_generic(m, hard_name="batch")),
    Wrong("blind3-fixbatch-mutates-caller", answer=lambda m: _fix_generic(m, copy_=False), outputs_wrong=False),
    Wrong("blind3-fixbatch-no-output-fix", answer=lambda m: _fix_generic(m, outputs=False)),
    Wrong("blind3-fixbatch-ignores-unnamed", answer=lambda m: _fix_generic(m, unnamed=False)),
    Wrong("blind3-fixbatch-returns-bytes", answer=lambda m: _fix_generic(m, as_bytes=True), outputs_wrong=False),
    Wrong("blind3-fixbatch-shape-missing-channel", answer=lambda m: _fix_generic(m, bad_shape=[1, 8, 8])),
    Wrong("blind3-fixbatch-hardcoded-input-name", answer=lambda m: _fix_generic(m, hard_input="pixels")),
    Wrong("blind3-fixbatch-unchanged-copy", answer=_fix_unchanged, skipped_skill=True),
    Wrong("blind3-fixbatch-set-input-dim-only", answer=_fix_setvalue_only),
]


# ------------------------------------------------------------------ 07.block_counts
def _bc_reshape(grid):
    g = np.asarray(grid).astype(np.int64)
    return g.reshape(8, 4, 8, 4).transpose(0, 2, 1, 3).reshape(8, 8, 16).sum(-1)


def _bc_loops(grid):
    out = [[0] * 8 for _ in range(8)]
    for y in range(32):
        for x in range(32):
            if grid[y][x]:
                out[y // 4][x // 4] += 1
    return np.array(out, dtype=np.uint8)


def _bc_cumsum(grid):
    c = np.asarray(grid, dtype=np.int32).cumsum(0).cumsum(1)
    c = np.pad(c, ((1, 0), (1, 0)))
    i = np.arange(0, 33, 4)
    s = c[np.ix_(i, i)]
    return s[1:, 1:] - s[:-1, 1:] - s[1:, :-1] + s[:-1, :-1]


def _bc_torch_pool(grid):
    import torch
    t = torch.as_tensor(np.asarray(grid, dtype=np.float32))[None, None]
    return (torch.nn.functional.avg_pool2d(t, 4) * 16).round().to(torch.int16)[0, 0].numpy()


def _bc_window3(grid):
    g = np.asarray(grid, dtype=int)
    return np.array([[g[4 * y:4 * y + 3, 4 * x:4 * x + 3].sum() for x in range(8)] for y in range(8)])


def _bc_inplace(grid):
    g = grid if isinstance(grid, np.ndarray) and grid.dtype.kind in "iu" else np.asarray(grid, np.int64)
    np.cumsum(g, axis=0, out=g)
    np.cumsum(g, axis=1, out=g)
    c = np.pad(g, ((1, 0), (1, 0)))
    i = np.arange(0, 33, 4)
    s = c[np.ix_(i, i)]
    return s[1:, 1:] - s[:-1, 1:] - s[1:, :-1] + s[:-1, :-1]


CORPUS["07.block_counts"] = [
    Right("blind3-blocks-transpose-reshape", answer=_bc_reshape),
    Right("blind3-blocks-two-loops-uint8", answer=_bc_loops),
    Right("blind3-blocks-integral-image", answer=_bc_cumsum),
    Right("blind3-blocks-avgpool-int16", answer=_bc_torch_pool),
    Wrong("blind3-blocks-wrong-axes", answer=lambda g: np.asarray(g).reshape(8, 4, 8, 4).sum(axis=(0, 2))),
    Wrong("blind3-blocks-4x8-split", answer=lambda g: np.asarray(g, int).reshape(4, 8, 4, 8).sum(axis=(1, 3))),
    Wrong("blind3-blocks-mean", answer=lambda g: np.asarray(g, float).reshape(8, 4, 8, 4).mean(axis=(1, 3))),
    Wrong("blind3-blocks-subsample", answer=lambda g: np.asarray(g, int)[::4, ::4]),
    Wrong("blind3-blocks-any", answer=lambda g: np.asarray(g, bool).reshape(8, 4, 8, 4).any(axis=(1, 3)).astype(int)),
    Wrong("blind3-blocks-float-counts", answer=lambda g: np.asarray(g, np.float32).reshape(8, 4, 8, 4).sum(axis=(1, 3)),
          outputs_wrong=False),
    Wrong("blind3-blocks-transposed", answer=lambda g: np.asarray(g, int).reshape(8, 4, 8, 4).sum(axis=(1, 3)).T),
    Wrong("blind3-blocks-flat", answer=lambda g: np.asarray(g, int).reshape(8, 4, 8, 4).sum(axis=(1, 3)).ravel()),
    Wrong("blind3-blocks-bool-dtype-sum",
          answer=lambda g: np.add.reduce(np.asarray(g, bool).reshape(8, 4, 8, 4), axis=(1, 3), dtype=bool)),
    Wrong("blind3-blocks-3x3-window", answer=_bc_window3),
    Wrong("blind3-blocks-inplace-cumsum", answer=_bc_inplace, outputs_wrong=False),
]
