"""Blind corpus round 15, lesson 03 (written without seeing the judges).

Truths relied on (each checked here with torch 2.13 / onnx 1.23 / onnxruntime 1.31, ORT optimizations OFF):
- The reference for both exercises is labkit.models.trained_cnn() (eval mode); 03.raw_input's reference is that
  model on labkit.data.normalize(raw) = float32(raw) / 16.
- dynamo export with dynamic_shapes={"input": {0: "batch"}} gives input ['batch', 1, 8, 8] even from an example of
  ONE image (no 0/1 specialisation with a string name); without dynamic_shapes the batch is fixed and the
  flatten becomes a Reshape to a constant [1, 512] (so editing the input's dim afterwards does not make it run).
- The legacy exporter names the input "input.1" unless input_names is given: dynamic_axes={"input": ...} without
  input_names silently keeps the batch fixed. Its default training=EVAL exports a model left in training mode as
  if in eval mode (no Dropout node): forgetting .eval() with dynamo=False is harmless.
- A wrapper Module built around the (eval) course model is itself in training mode, but its child stays in eval
  mode: exporting RawDigits(model) without .eval() gives the right graph (no Dropout).
- A DigitsCNN left in training mode exported with dynamo keeps a Dropout node that really drops with ORT
  optimizations off (nondeterministic, per-image results change with the batch).
- torch.onnx.export(model, args, path) (default external_data=True) puts the weights in path + ".data".
- Weights rounded to float16 move logits by up to ~6e-3, ~150x the rtol=1e-3/atol=1e-5 allowance.
- Of the 450 raw test digits, 444 have max pixel 16 and 6 have 15: dividing by the batch's max only differs from
  /16 on a batch made only of those digits; dividing by 15 changes every logit.
- 1/16 is a power of two: x * 0.0625 == x / 16 exactly, and folding the 1/16 into conv1's weights is exact up to
  float rounding.

Ambiguities / holes probed:
- dynamic_batch: the prompt asks to EXPORT with a symbolic batch; a file whose fixed input dim was edited to a
  symbol afterwards (legacy export with Flatten), a hand-built onnx.helper graph from the state dict, or a fixed
  batch-1 export wrapped in a Scan all compute the right logits at every batch: only the process is wrong. They are
  labelled shortcuts with outputs_wrong=False. A judge that looks only at the file cannot see them.
- dynamic_batch: "Keep the weights inside the one file" is a rule; an export with a .data side file still runs
  from its folder -> labelled outputs_wrong=False.  03.raw_input states no such rule, so no such entry there.
- raw_input: the check only uses the 450 held-out digits; an ONNX lookup table (nearest stored test digit ->
  stored logits) passes every stated test and is wrong on any other digit (e.g. the training set).
- raw_input: the prompt says "write a torch.nn.Module ... export it"; prepending Cast+Div to an exported float
  model by ONNX graph surgery, and folding the 1/16 into conv1's weights, both compute the right thing. Labelled
  Right (the preprocessing is baked into the file), but a process-minded reader could disagree.
- Input/output names are free in both prompts ("pixels", "images", "raw" here); a make that returns a pathlib.Path
  instead of a str is a path too (one Right per exercise does).
- Two shortcuts monkeypatch onnxruntime.InferenceSession.run in the calling process (only for sessions on their
  own file, by path or bytes, so other entries are not disturbed): they only fool a judge that runs in the
  process that built the file; the file itself is a fixed-batch-1 model / a float-input model.
- A float64 export does not even load in ONNX Runtime with optimizations off (no float64 kernel); a float16
  export rejects float32 feeds.
"""
import contextlib
import io
import shutil
import tempfile
from pathlib import Path

from corpus import Right, Wrong

_CACHE = Path(tempfile.mkdtemp(prefix="blind15_l03_cache_"))


# ----------------------------------------------------------------------------- helpers (module level)

@contextlib.contextmanager
def _quiet():
    import logging
    import warnings

    prev = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                yield
    finally:
        logging.disable(prev)


def _cached(tmp, name, build):
    """Build `name` once per process in the cache (build(dir) returns the file name), copy the folder's
    files (model and any side file) into tmp and return the model's path in tmp."""
    src = _CACHE / name
    marker = src / ".done"
    if not marker.exists():
        if src.exists():
            shutil.rmtree(src)
        src.mkdir(parents=True)
        with _quiet():
            fname = build(src)
        marker.write_text(fname)
    fname = marker.read_text()
    tmp = Path(tmp)
    tmp.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.name != ".done":
            shutil.copy2(f, tmp / f.name)
    return str(tmp / fname)


# ============================================================================= 03.dynamic_batch

# ---------------------------------------------------------------- right

def _build_right_legacy_pixels(d):
    import torch
    from labkit.data import digits
    from labkit.models import trained_cnn

    x = torch.from_numpy(digits().x_test[:5])
    torch.onnx.export(trained_cnn(), (x,), str(d / "cnn_dynamic_legacy.onnx"), dynamo=False,
                      input_names=["pixels"], output_names=["logits"],
                      dynamic_axes={"pixels": {0: "n"}, "logits": {0: "n"}})
    return "cnn_dynamic_legacy.onnx"


def _build_right_dim_tuple_onnxsave(d):
    import onnx
    import torch
    from torch.export import Dim
    from labkit.data import digits
    from labkit.models import trained_cnn

    x = torch.from_numpy(digits().x_test[10:13].copy())
    prog = torch.onnx.export(trained_cnn(), (x,), dynamo=True, optimize=False,
                             dynamic_shapes=({0: Dim("images", min=1, max=4096)},))
    onnx.save_model(prog.model_proto, str(d / "cnn_dynamic_dim.onnx"))
    return "cnn_dynamic_dim.onnx"


def _build_right_from_exported_program(d):
    import torch
    from labkit.data import digits
    from labkit.models import trained_cnn

    x = torch.from_numpy(digits().x_test[:4])
    ep = torch.export.export(trained_cnn(), (x,), dynamic_shapes={"input": {0: torch.export.Dim.DYNAMIC}})
    torch.onnx.export(ep, (x,), str(d / "cnn_dynamic_ep.onnx"), dynamo=True, external_data=False)
    return "cnn_dynamic_ep.onnx"


def _build_right_one_image_wrapper(d):
    import torch
    from labkit.data import digits
    from labkit.models import trained_cnn

    class Classifier(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.cnn = trained_cnn()

        def forward(self, images):
            return self.cnn(images)

    x = torch.from_numpy(digits().x_test[:1])  # one image only: the batch still stays symbolic
    torch.onnx.export(Classifier().eval(), (x,), dynamo=True,
                      dynamic_shapes={"images": {0: "batch"}}).save(str(d / "cnn_dynamic_wrap.onnx"))
    return "cnn_dynamic_wrap.onnx"


def _build_right_legacy_restored_no_eval(d):
    import torch
    from labkit.data import digits
    from labkit.models import DigitsCNN, trained_cnn

    net = DigitsCNN()
    net.load_state_dict(trained_cnn().state_dict())  # left in training mode: legacy exports in EVAL anyway
    x = torch.from_numpy(digits().x_test[:4])
    torch.onnx.export(net, (x,), str(d / "cnn_dynamic_noeval.onnx"), dynamo=False,
                      input_names=["input"], dynamic_axes={"input": [0]})
    return "cnn_dynamic_noeval.onnx"


def right_dyn_legacy_pixels(tmp):
    return _cached(tmp, "right_dyn_legacy_pixels", _build_right_legacy_pixels)


def right_dyn_dim_tuple_onnxsave(tmp):
    return Path(_cached(tmp, "right_dyn_dim_tuple_onnxsave", _build_right_dim_tuple_onnxsave))


def right_dyn_from_exported_program(tmp):
    return _cached(tmp, "right_dyn_from_exported_program", _build_right_from_exported_program)


def right_dyn_one_image_wrapper(tmp):
    return _cached(tmp, "right_dyn_one_image_wrapper", _build_right_one_image_wrapper)


def right_dyn_legacy_restored_no_eval(tmp):
    return _cached(tmp, "right_dyn_legacy_restored_no_eval", _build_right_legacy_restored_no_eval)


# ---------------------------------------------------------------- wrong

def _dynamo_save(net, x, d, fname, dynamic_shapes=None, **kw):
    import torch

    torch.onnx.export(net, (x,), dynamo=True, dynamic_shapes=dynamic_shapes, **kw).save(str(d / fname))
    return fname


def _build_wrong_fixed_one(d):
    import torch
    from labkit.data import digits
    from labkit.models import trained_cnn

    return _dynamo_save(trained_cnn(), torch.from_numpy(digits().x_test[:1]), d, "cnn_fixed1.onnx")


def _build_wrong_fixed_four(d):
    import torch
    from labkit.data import digits
    from labkit.models import trained_cnn

    return _dynamo_save(trained_cnn(), torch.from_numpy(digits().x_test[:4]), d, "cnn_fixed4.onnx")


def _build_wrong_legacy_axes_wrong_name(d):
    import torch
    from labkit.data import digits
    from labkit.models import trained_cnn

    torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:4]),), str(d / "cnn_axes_name.onnx"),
                      dynamo=False, dynamic_axes={"input": {0: "batch"}})  # the input is called "input.1"
    return "cnn_axes_name.onnx"


def _build_wrong_legacy_axis_one(d):
    import torch
    from labkit.data import digits
    from labkit.models import trained_cnn

    torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:4]),), str(d / "cnn_axis1.onnx"),
                      dynamo=False, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {1: "batch"}, "output": {1: "batch"}})  # off by one
    return "cnn_axis1.onnx"


def _build_wrong_train_mode(d):
    import torch
    from labkit.data import digits
    from labkit.models import DigitsCNN, trained_cnn

    net = DigitsCNN()
    net.load_state_dict(trained_cnn().state_dict())  # never .eval(): Dropout stays in the graph
    return _dynamo_save(net, torch.from_numpy(digits().x_test[:4]), d, "cnn_train.onnx",
                        {"input": {0: "batch"}})


def _build_wrong_softmax(d):
    import torch
    from labkit.data import digits
    from labkit.models import trained_cnn

    net = torch.nn.Sequential(trained_cnn(), torch.nn.Softmax(dim=1)).eval()
    return _dynamo_save(net, torch.from_numpy(digits().x_test[:4]), d, "cnn_probs.onnx",
                        {"input": {0: "batch"}})


def _build_wrong_retrained(d):
    import torch
    from labkit.data import digits
    from labkit.models import train

    data = digits()
    mine = train(data=data, progress=False)  # the learner's own CNN, not the course's copy
    return _dynamo_save(mine, torch.from_numpy(data.x_test[:4]), d, "cnn_mine.onnx", {"input": {0: "batch"}})


def _build_wrong_double(d):
    import torch
    from labkit.data import digits
    from labkit.models import trained_cnn

    return _dynamo_save(trained_cnn().double(), torch.from_numpy(digits().x_test[:4]).double(), d,
                        "cnn_f64.onnx", {"input": {0: "batch"}})


def _build_wrong_half(d):
    import torch
    from labkit.data import digits
    from labkit.models import trained_cnn

    return _dynamo_save(trained_cnn().half(), torch.from_numpy(digits().x_test[:4]).half(), d,
                        "cnn_f16.onnx", {"input": {0: "batch"}})


def _build_wrong_argmax(d):
    import torch
    from labkit.data import digits
    from labkit.models import trained_cnn

    class Predict(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = trained_cnn()

        def forward(self, input):
            return self.net(input).argmax(dim=1)

    return _dynamo_save(Predict().eval(), torch.from_numpy(digits().x_test[:4]), d, "cnn_argmax.onnx",
                        {"input": {0: "batch"}})


def _build_wrong_rescaled(d):
    import torch
    from labkit.data import digits
    from labkit.models import trained_cnn

    class Rescaled(torch.nn.Module):  # mixes up the two exercises: divides the [0, 1] images by 16 again
        def __init__(self):
            super().__init__()
            self.net = trained_cnn()

        def forward(self, input):
            return self.net(input / 16.0)

    return _dynamo_save(Rescaled().eval(), torch.from_numpy(digits().x_test[:4]), d, "cnn_rescaled.onnx",
                        {"input": {0: "batch"}})


def _build_wrong_external_data(d):
    import torch
    from labkit.data import digits
    from labkit.models import trained_cnn

    torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:4]),), str(d / "cnn_ext.onnx"),
                      dynamo=True, dynamic_shapes={"input": {0: "batch"}})  # default external_data=True
    return "cnn_ext.onnx"


def wrong_dyn_fixed_one(tmp):
    return _cached(tmp, "wrong_dyn_fixed_one", _build_wrong_fixed_one)


def wrong_dyn_fixed_four(tmp):
    return _cached(tmp, "wrong_dyn_fixed_four", _build_wrong_fixed_four)


def wrong_dyn_legacy_axes_wrong_name(tmp):
    return _cached(tmp, "wrong_dyn_legacy_axes_wrong_name", _build_wrong_legacy_axes_wrong_name)


def wrong_dyn_legacy_axis_one(tmp):
    return _cached(tmp, "wrong_dyn_legacy_axis_one", _build_wrong_legacy_axis_one)


def wrong_dyn_train_mode(tmp):
    return _cached(tmp, "wrong_dyn_train_mode", _build_wrong_train_mode)


def wrong_dyn_softmax(tmp):
    return _cached(tmp, "wrong_dyn_softmax", _build_wrong_softmax)


def wrong_dyn_retrained(tmp):
    return _cached(tmp, "wrong_dyn_retrained", _build_wrong_retrained)


def wrong_dyn_double(tmp):
    return _cached(tmp, "wrong_dyn_double", _build_wrong_double)


def wrong_dyn_half(tmp):
    return _cached(tmp, "wrong_dyn_half", _build_wrong_half)


def wrong_dyn_argmax(tmp):
    return _cached(tmp, "wrong_dyn_argmax", _build_wrong_argmax)


def wrong_dyn_rescaled(tmp):
    return _cached(tmp, "wrong_dyn_rescaled", _build_wrong_rescaled)


def wrong_dyn_external_data(tmp):
    return _cached(tmp, "wrong_dyn_external_data", _build_wrong_external_data)


# ---------------------------------------------------------------- shortcuts

def _build_short_patch_dim_legacy(d):
    import onnx
    import torch
    from labkit.data import digits
    from labkit.models import trained_cnn

    p = str(d / "cnn_patched.onnx")
    torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:1]),), p, dynamo=False,
                      input_names=["input"], output_names=["logits"])
    m = onnx.load(p)
    for v in (m.graph.input[0], m.graph.output[0]):
        dim = v.type.tensor_type.shape.dim[0]
        dim.ClearField("dim_value")
        dim.dim_param = "batch"
    onnx.save(m, p)
    return "cnn_patched.onnx"


def _build_short_patch_dim_dynamo(d):
    import onnx
    import torch
    from labkit.data import digits
    from labkit.models import trained_cnn

    prog = torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:1]),), dynamo=True)
    m = prog.model_proto
    for v in (m.graph.input[0], m.graph.output[0]):
        dim = v.type.tensor_type.shape.dim[0]
        dim.ClearField("dim_value")
        dim.dim_param = "batch"
    del m.graph.value_info[:]
    onnx.save(m, str(d / "cnn_patched_dynamo.onnx"))
    return "cnn_patched_dynamo.onnx"


def _cnn_nodes(prefix, x_name, y_name):
    """Nodes of the course CNN written by hand (inference form); initializer names start with prefix."""
    from onnx import helper

    P = prefix
    return [
        helper.make_node("Conv", [x_name, P + "0.weight", P + "0.bias"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", P + "1.weight", P + "1.bias", P + "1.running_mean",
                                                P + "1.running_var"], ["b1"], epsilon=1e-5),
        helper.make_node("Relu", ["b1"], ["r1"]),
        helper.make_node("Conv", ["r1", P + "3.weight", P + "3.bias"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c2", P + "4.weight", P + "4.bias", P + "4.running_mean",
                                                P + "4.running_var"], ["b2"], epsilon=1e-5),
        helper.make_node("Relu", ["b2"], ["r2"]),
        helper.make_node("MaxPool", ["r2"], ["mp"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["mp"], ["fl"], axis=1),
        helper.make_node("Gemm", ["fl", P + "8.weight", P + "8.bias"], ["g1"], transB=1),
        helper.make_node("Relu", ["g1"], ["r3"]),
        helper.make_node("Gemm", ["r3", P + "11.weight", P + "11.bias"], [y_name], transB=1),
    ]


def _build_short_handbuilt(d):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from labkit.models import read_weights

    w = read_weights()
    inits = [numpy_helper.from_array(np.asarray(v, np.float32), "w." + k) for k, v in w.items()
             if not k.endswith("num_batches_tracked")]
    g = helper.make_graph(
        _cnn_nodes("w.", "input", "logits"), "cnn_by_hand",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 1, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 9
    onnx.checker.check_model(m)
    onnx.save(m, str(d / "cnn_by_hand.onnx"))
    return "cnn_by_hand.onnx"


def _lookup_model(table_x, table_logits, in_dtype, scale, in_name):
    """An ONNX graph that returns the stored logits of the nearest stored image (no CNN at all)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    T = np.asarray(table_x, np.float32).reshape(len(table_x), -1)
    inits = [
        numpy_helper.from_array(T.T.copy(), "table_t"),
        numpy_helper.from_array((T * T).sum(1).astype(np.float32), "table_sq"),
        numpy_helper.from_array(np.asarray(table_logits, np.float32), "table_logits"),
        numpy_helper.from_array(np.array([0, -1], np.int64), "flat_shape"),
        numpy_helper.from_array(np.array([1], np.int64), "axis1"),
        numpy_helper.from_array(np.array(-2.0, np.float32), "minus_two"),
        numpy_helper.from_array(np.array(scale, np.float32), "scale"),
    ]
    nodes = [
        helper.make_node("Cast", [in_name], ["xf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["xf", "scale"], ["xs"]),
        helper.make_node("Reshape", ["xs", "flat_shape"], ["flat"]),
        helper.make_node("MatMul", ["flat", "table_t"], ["dot"]),
        helper.make_node("Mul", ["dot", "minus_two"], ["dot2"]),
        helper.make_node("Add", ["dot2", "table_sq"], ["dist"]),  # |x|^2 is the same for every row: skipped
        helper.make_node("ArgMin", ["dist"], ["idx"], axis=1, keepdims=0),
        helper.make_node("Gather", ["table_logits", "idx"], ["logits"], axis=0),
    ]
    g = helper.make_graph(nodes, "lookup",
                          [helper.make_tensor_value_info(in_name, in_dtype, ["batch", 1, 8, 8])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 9
    return m


def _build_short_lookup(d):
    import onnx
    import torch
    from onnx import TensorProto
    from labkit.data import digits
    from labkit.models import trained_cnn

    data = digits()
    with torch.no_grad():
        logits = trained_cnn()(torch.from_numpy(data.x_test)).numpy()
    onnx.save(_lookup_model(data.x_test, logits, TensorProto.FLOAT, 1.0, "input"), str(d / "cnn_lookup.onnx"))
    return "cnn_lookup.onnx"


def _build_short_scan(d):
    """A fixed batch-1 export, run once per image by an ONNX Scan: no symbolic batch asked of the exporter."""
    import onnx
    import torch
    from onnx import TensorProto, helper
    from labkit.data import digits
    from labkit.models import trained_cnn

    p = str(d / "one.onnx")
    torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:1]),), p, dynamo=False,
                      input_names=["one"], output_names=["one_logits"])
    one = onnx.load(p)
    (d / "one.onnx").unlink()
    ax0 = helper.make_tensor("ax0", TensorProto.INT64, [1], [0])
    body_nodes = [helper.make_node("Constant", [], ["ax0_c"], value=ax0),
                  helper.make_node("Unsqueeze", ["img", "ax0_c"], ["one"])]
    body_nodes += list(one.graph.node)
    body_nodes += [helper.make_node("Squeeze", ["one_logits", "ax0_c"], ["row"])]
    body = helper.make_graph(body_nodes, "per_image",
                             [helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 8, 8])],
                             [helper.make_tensor_value_info("row", TensorProto.FLOAT, [10])])
    scan = helper.make_node("Scan", ["input"], ["logits"], body=body, num_scan_inputs=1)
    g = helper.make_graph([scan], "scan_cnn",
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 1, 8, 8])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])],
                          list(one.graph.initializer))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 9
    onnx.save(m, str(d / "cnn_scan.onnx"))
    return "cnn_scan.onnx"


def _patch_ort_run(mode, path):
    """Monkeypatch onnxruntime in this process, for sessions on this one file only (by path or bytes):
    'split' runs a fixed-batch float model image by image; 'raw' turns a uint8 feed into float32 / 16."""
    import os

    import numpy as np
    import onnxruntime as ort

    target_path = os.path.realpath(path)
    target_bytes = Path(path).read_bytes()

    cls = ort.InferenceSession
    orig = getattr(cls, "_blind15_orig_run", None) or cls.run
    cls._blind15_orig_run = orig

    def run(self, output_names, input_feed, run_options=None):
        mp, mb = getattr(self, "_model_path", None), getattr(self, "_model_bytes", None)
        mine = mb is not None and bytes(mb) == target_bytes
        if mp is not None and not mine:
            try:
                mine = (os.path.realpath(os.fspath(mp)) == target_path
                        or Path(os.fspath(mp)).read_bytes() == target_bytes)
            except (OSError, TypeError):
                mine = False
        if not mine:
            return run._blind15_prev(self, output_names, input_feed, run_options)
        feed = dict(input_feed)
        try:
            info = self.get_inputs()[0]
        except Exception:
            return orig(self, output_names, input_feed, run_options)
        x = feed.get(info.name)
        if x is None:
            return orig(self, output_names, input_feed, run_options)
        x = np.asarray(x)
        if mode == "raw" and x.dtype == np.uint8 and info.type == "tensor(float)":
            x = x.astype(np.float32) / np.float32(16.0)
        fixed = info.shape[0] if isinstance(info.shape[0], int) else None
        if fixed and x.shape[0] != fixed and fixed == 1:
            outs = [orig(self, output_names, {info.name: x[i:i + 1]}, run_options) for i in range(len(x))]
            if not outs:
                return orig(self, output_names, {info.name: x}, run_options)
            return [np.concatenate([o[k] for o in outs]) for k in range(len(outs[0]))]
        feed[info.name] = x
        return orig(self, output_names, feed, run_options)

    run._blind15_prev = cls.run  # chain: several patched files may live in one process
    cls.run = run


def _build_short_monkey_fixed(d):
    import onnx

    _build_wrong_fixed_one(d)
    m = onnx.load(str(d / "cnn_fixed1.onnx"))
    m.doc_string = "batch one, made dynamic at run time"  # its own bytes: the patch only serves this file
    (d / "cnn_fixed1.onnx").unlink()
    onnx.save(m, str(d / "cnn_one.onnx"))
    return "cnn_one.onnx"


def _build_raw_short_monkey_float(d):
    import onnx

    _build_raw_short_plain_float(d)
    m = onnx.load(str(d / "raw_plain.onnx"))
    m.doc_string = "float model, uint8 scaled at run time"
    (d / "raw_plain.onnx").unlink()
    onnx.save(m, str(d / "raw_float_patched.onnx"))
    return "raw_float_patched.onnx"


def short_dyn_patch_dim_legacy(tmp):
    return _cached(tmp, "short_dyn_patch_dim_legacy", _build_short_patch_dim_legacy)


def short_dyn_patch_dim_dynamo(tmp):
    return _cached(tmp, "short_dyn_patch_dim_dynamo", _build_short_patch_dim_dynamo)


def short_dyn_handbuilt(tmp):
    return _cached(tmp, "short_dyn_handbuilt", _build_short_handbuilt)


def short_dyn_lookup(tmp):
    return _cached(tmp, "short_dyn_lookup", _build_short_lookup)


def short_dyn_scan(tmp):
    return _cached(tmp, "short_dyn_scan", _build_short_scan)


def short_dyn_monkeypatch(tmp):
    path = _cached(tmp, "short_dyn_monkeypatch", _build_short_monkey_fixed)  # a fixed batch-1 file ...
    _patch_ort_run("split", path)  # ... made to look dynamic in this process only
    return path


# ============================================================================= 03.raw_input

def _raw_example(n=4, start=0):
    import torch
    from labkit.data import digits

    return torch.from_numpy(digits(raw=True).x_test[start:start + n].copy())


def _raw_wrapper(fn, net=None):
    """A RawDigits-like module whose forward is fn(self, pixels)."""
    import torch
    from labkit.models import trained_cnn

    class RawDigits(torch.nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, pixels):
            return fn(self, pixels)

    return RawDigits(net if net is not None else trained_cnn())


# ---------------------------------------------------------------- right

def _build_raw_right_legacy_mul(d):
    import torch

    w = _raw_wrapper(lambda self, p: self.net(p.to(torch.float32) * 0.0625)).eval()
    torch.onnx.export(w, (_raw_example(6),), str(d / "cnn_raw_legacy.onnx"), dynamo=False,
                      input_names=["raw"], output_names=["logits"],
                      dynamic_axes={"raw": {0: "n"}, "logits": {0: "n"}})
    return "cnn_raw_legacy.onnx"


def _build_raw_right_truediv_no_eval(d):
    import torch
    from torch.export import Dim
    from labkit.data import PIXEL_MAX

    w = _raw_wrapper(lambda self, p: self.net(p / PIXEL_MAX))  # uint8 / float -> float32; wrapper not .eval()
    torch.onnx.export(w, (_raw_example(3, 20),), dynamo=True,
                      dynamic_shapes={"pixels": {0: Dim("count")}}).save(str(d / "cnn_raw_div.onnx"))
    return "cnn_raw_div.onnx"


def _build_raw_right_folded(d):
    import copy

    import torch
    from labkit.models import trained_cnn

    net = copy.deepcopy(trained_cnn())
    with torch.no_grad():
        net[0].weight.mul_(1.0 / 16.0)  # conv1(x / 16) == (W / 16) * x + b: the scale lives in the weights
    w = _raw_wrapper(lambda self, p: self.net(p.float()), net).eval()
    torch.onnx.export(w, (_raw_example(1),), dynamo=True,
                      dynamic_shapes={"pixels": {0: "batch"}}).save(str(d / "cnn_raw_folded.onnx"))
    return "cnn_raw_folded.onnx"


def _build_raw_right_surgery(d):
    import numpy as np
    import onnx
    import torch
    from onnx import TensorProto, helper, numpy_helper
    from labkit.data import digits
    from labkit.models import trained_cnn

    prog = torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:4]),), dynamo=True,
                             dynamic_shapes={"input": {0: "batch"}})
    m = prog.model_proto
    g = m.graph
    old = g.input[0].name
    for n in g.node:
        for i, name in enumerate(n.input):
            if name == old:
                n.input[i] = "scaled"
    pre = [helper.make_node("Cast", ["raw_pixels"], ["as_float"], to=TensorProto.FLOAT),
           helper.make_node("Div", ["as_float", "pixel_max"], ["scaled"])]
    g.initializer.append(numpy_helper.from_array(np.array(16.0, np.float32), "pixel_max"))
    nodes = pre + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    new_in = helper.make_tensor_value_info("raw_pixels", TensorProto.UINT8, ["batch", 1, 8, 8])
    del g.input[:]
    g.input.append(new_in)
    onnx.checker.check_model(m)
    onnx.save(m, str(d / "cnn_raw_surgery.onnx"))
    return "cnn_raw_surgery.onnx"


def right_raw_legacy_mul(tmp):
    return _cached(tmp, "right_raw_legacy_mul", _build_raw_right_legacy_mul)


def right_raw_truediv_no_eval(tmp):
    return Path(_cached(tmp, "right_raw_truediv_no_eval", _build_raw_right_truediv_no_eval))


def right_raw_folded(tmp):
    return _cached(tmp, "right_raw_folded", _build_raw_right_folded)


def right_raw_surgery(tmp):
    return _cached(tmp, "right_raw_surgery", _build_raw_right_surgery)


# ---------------------------------------------------------------- wrong

def _raw_dynamo(fn, d, fname, example=None, net=None, dynamic=True, train=False):
    import torch

    w = _raw_wrapper(fn, net)
    w = w.train() if train else w.eval()
    x = _raw_example() if example is None else example
    ds = {"pixels": {0: "batch"}} if dynamic else None
    torch.onnx.export(w, (x,), dynamo=True, dynamic_shapes=ds).save(str(d / fname))
    return fname


def _build_raw_wrong_cast_only(d):
    return _raw_dynamo(lambda self, p: self.net(p.float()), d, "raw_cast.onnx")


def _build_raw_wrong_div255(d):
    return _raw_dynamo(lambda self, p: self.net(p.float() / 255.0), d, "raw_255.onnx")


def _build_raw_wrong_div15(d):
    return _raw_dynamo(lambda self, p: self.net(p.float() / 15.0), d, "raw_15.onnx")


def _build_raw_wrong_float_input(d):
    return _raw_dynamo(lambda self, p: self.net(p.float() / 16.0), d, "raw_floatin.onnx",
                       example=_raw_example().float())


def _build_raw_wrong_int64_input(d):
    return _raw_dynamo(lambda self, p: self.net(p.float() / 16.0), d, "raw_int64.onnx",
                       example=_raw_example().long())


def _build_raw_wrong_fixed(d):
    return _raw_dynamo(lambda self, p: self.net(p.float() / 16.0), d, "raw_fixed.onnx", dynamic=False)


def _build_raw_wrong_batch_max(d):
    return _raw_dynamo(lambda self, p: self.net(p.float() / p.max().float()), d, "raw_batchmax.onnx")


def _build_raw_wrong_train_mode(d):
    from labkit.models import trained_cnn

    return _raw_dynamo(lambda self, p: self.net(p.float() / 16.0), d, "raw_train.onnx",
                       net=trained_cnn().train(), train=True)


def _build_raw_wrong_softmax(d):
    import torch

    return _raw_dynamo(lambda self, p: torch.softmax(self.net(p.float() / 16.0), dim=-1), d, "raw_softmax.onnx")


def _build_raw_wrong_standardize(d):
    from labkit.data import digits

    tr = digits().x_train
    mean, std = float(tr.mean()), float(tr.std())
    return _raw_dynamo(lambda self, p: self.net((p.float() / 16.0 - mean) / std), d, "raw_std.onnx")


def _build_raw_wrong_flat_input(d):
    import torch

    x = _raw_example().reshape(4, 64)
    return _raw_dynamo(lambda self, p: self.net(p.reshape(-1, 1, 8, 8).to(torch.float32) / 16.0), d,
                       "raw_flat.onnx", example=x)


def _build_raw_wrong_retrained(d):
    from labkit.data import digits
    from labkit.models import train

    mine = train(data=digits(), progress=False)
    return _raw_dynamo(lambda self, p: self.net(p.float() / 16.0), d, "raw_mine.onnx", net=mine)


def wrong_raw_cast_only(tmp):
    return _cached(tmp, "wrong_raw_cast_only", _build_raw_wrong_cast_only)


def wrong_raw_div255(tmp):
    return _cached(tmp, "wrong_raw_div255", _build_raw_wrong_div255)


def wrong_raw_div15(tmp):
    return _cached(tmp, "wrong_raw_div15", _build_raw_wrong_div15)


def wrong_raw_float_input(tmp):
    return _cached(tmp, "wrong_raw_float_input", _build_raw_wrong_float_input)


def wrong_raw_int64_input(tmp):
    return _cached(tmp, "wrong_raw_int64_input", _build_raw_wrong_int64_input)


def wrong_raw_fixed(tmp):
    return _cached(tmp, "wrong_raw_fixed", _build_raw_wrong_fixed)


def wrong_raw_batch_max(tmp):
    return _cached(tmp, "wrong_raw_batch_max", _build_raw_wrong_batch_max)


def wrong_raw_train_mode(tmp):
    return _cached(tmp, "wrong_raw_train_mode", _build_raw_wrong_train_mode)


def wrong_raw_softmax(tmp):
    return _cached(tmp, "wrong_raw_softmax", _build_raw_wrong_softmax)


def wrong_raw_standardize(tmp):
    return _cached(tmp, "wrong_raw_standardize", _build_raw_wrong_standardize)


def wrong_raw_flat_input(tmp):
    return _cached(tmp, "wrong_raw_flat_input", _build_raw_wrong_flat_input)


def wrong_raw_retrained(tmp):
    return _cached(tmp, "wrong_raw_retrained", _build_raw_wrong_retrained)


# ---------------------------------------------------------------- shortcuts

def _build_raw_short_plain_float(d):
    import torch
    from labkit.data import digits
    from labkit.models import trained_cnn

    return _dynamo_save(trained_cnn(), torch.from_numpy(digits().x_test[:4]), d, "raw_plain.onnx",
                        {"input": {0: "batch"}})


def _build_raw_short_retype(d):
    import onnx
    import torch
    from onnx import TensorProto
    from labkit.data import digits
    from labkit.models import trained_cnn

    prog = torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:4]),), dynamo=True,
                             dynamic_shapes={"input": {0: "batch"}})
    m = prog.model_proto
    m.graph.input[0].type.tensor_type.elem_type = TensorProto.UINT8  # "now it takes uint8"
    onnx.save(m, str(d / "raw_retyped.onnx"))
    return "raw_retyped.onnx"


def _build_raw_short_lookup(d):
    import onnx
    import torch
    from onnx import TensorProto
    from labkit.data import digits, normalize
    from labkit.models import trained_cnn

    raw = digits(raw=True)
    with torch.no_grad():
        logits = trained_cnn()(torch.from_numpy(normalize(raw.x_test))).numpy()
    onnx.save(_lookup_model(raw.x_test, logits, TensorProto.UINT8, 1.0, "pixels"), str(d / "raw_lookup.onnx"))
    return "raw_lookup.onnx"


def short_raw_plain_float(tmp):
    return _cached(tmp, "short_raw_plain_float", _build_raw_short_plain_float)


def short_raw_retype(tmp):
    return _cached(tmp, "short_raw_retype", _build_raw_short_retype)


def short_raw_lookup(tmp):
    return _cached(tmp, "short_raw_lookup", _build_raw_short_lookup)


def short_raw_monkeypatch(tmp):
    path = _cached(tmp, "short_raw_monkeypatch", _build_raw_short_monkey_float)  # a float model ...
    _patch_ort_run("raw", path)  # ... and ONNX Runtime taught, in this process, to scale uint8 feeds
    return path


CORPUS = {
    "03.dynamic_batch": [
        Right("blind15-dyn-legacy-pixels-logits", make=lambda tmp: right_dyn_legacy_pixels(tmp)),
        Right("blind15-dyn-dim-tuple-onnxsave-pathobj", make=lambda tmp: right_dyn_dim_tuple_onnxsave(tmp)),
        Right("blind15-dyn-from-exported-program", make=lambda tmp: right_dyn_from_exported_program(tmp)),
        Right("blind15-dyn-one-image-wrapper-images", make=lambda tmp: right_dyn_one_image_wrapper(tmp)),
        Right("blind15-dyn-legacy-restored-no-eval", make=lambda tmp: right_dyn_legacy_restored_no_eval(tmp)),
        Wrong("blind15-dyn-fixed-batch-one", make=lambda tmp: wrong_dyn_fixed_one(tmp)),
        Wrong("blind15-dyn-fixed-batch-four", make=lambda tmp: wrong_dyn_fixed_four(tmp)),
        Wrong("blind15-dyn-legacy-axes-wrong-name", make=lambda tmp: wrong_dyn_legacy_axes_wrong_name(tmp)),
        Wrong("blind15-dyn-legacy-axis-one", make=lambda tmp: wrong_dyn_legacy_axis_one(tmp)),
        Wrong("blind15-dyn-train-mode-dropout", make=lambda tmp: wrong_dyn_train_mode(tmp)),
        Wrong("blind15-dyn-softmax-probs", make=lambda tmp: wrong_dyn_softmax(tmp)),
        Wrong("blind15-dyn-retrained-weights", make=lambda tmp: wrong_dyn_retrained(tmp)),
        Wrong("blind15-dyn-float64", make=lambda tmp: wrong_dyn_double(tmp)),
        Wrong("blind15-dyn-float16", make=lambda tmp: wrong_dyn_half(tmp)),
        Wrong("blind15-dyn-argmax-labels", make=lambda tmp: wrong_dyn_argmax(tmp)),
        Wrong("blind15-dyn-divides-again", make=lambda tmp: wrong_dyn_rescaled(tmp)),
        Wrong("blind15-dyn-external-data-file", make=lambda tmp: wrong_dyn_external_data(tmp),
              outputs_wrong=False),
        Wrong("blind15-dyn-patched-dim-legacy", make=lambda tmp: short_dyn_patch_dim_legacy(tmp),
              skipped_skill=True, outputs_wrong=False),
        Wrong("blind15-dyn-patched-dim-dynamo", make=lambda tmp: short_dyn_patch_dim_dynamo(tmp),
              skipped_skill=True),
        Wrong("blind15-dyn-handbuilt-graph", make=lambda tmp: short_dyn_handbuilt(tmp),
              skipped_skill=True, outputs_wrong=False),
        Wrong("blind15-dyn-lookup-test-digits", make=lambda tmp: short_dyn_lookup(tmp), skipped_skill=True),
        Wrong("blind15-dyn-scan-over-fixed", make=lambda tmp: short_dyn_scan(tmp),
              skipped_skill=True, outputs_wrong=False),
        Wrong("blind15-dyn-monkeypatch-ort", make=lambda tmp: short_dyn_monkeypatch(tmp), skipped_skill=True),
    ],
    "03.raw_input": [
        Right("blind15-raw-legacy-mul-sixteenth", make=lambda tmp: right_raw_legacy_mul(tmp)),
        Right("blind15-raw-truediv-no-eval-pathobj", make=lambda tmp: right_raw_truediv_no_eval(tmp)),
        Right("blind15-raw-scale-folded-in-conv", make=lambda tmp: right_raw_folded(tmp)),
        Right("blind15-raw-graph-surgery", make=lambda tmp: right_raw_surgery(tmp)),
        Wrong("blind15-raw-cast-not-scaled", make=lambda tmp: wrong_raw_cast_only(tmp)),
        Wrong("blind15-raw-div-255", make=lambda tmp: wrong_raw_div255(tmp)),
        Wrong("blind15-raw-div-15", make=lambda tmp: wrong_raw_div15(tmp)),
        Wrong("blind15-raw-float-input", make=lambda tmp: wrong_raw_float_input(tmp)),
        Wrong("blind15-raw-int64-input", make=lambda tmp: wrong_raw_int64_input(tmp)),
        Wrong("blind15-raw-fixed-batch", make=lambda tmp: wrong_raw_fixed(tmp)),
        Wrong("blind15-raw-batch-max-scaling", make=lambda tmp: wrong_raw_batch_max(tmp)),
        Wrong("blind15-raw-train-mode", make=lambda tmp: wrong_raw_train_mode(tmp)),
        Wrong("blind15-raw-softmax", make=lambda tmp: wrong_raw_softmax(tmp)),
        Wrong("blind15-raw-standardized", make=lambda tmp: wrong_raw_standardize(tmp)),
        Wrong("blind15-raw-flat-input", make=lambda tmp: wrong_raw_flat_input(tmp)),
        Wrong("blind15-raw-retrained-weights", make=lambda tmp: wrong_raw_retrained(tmp)),
        Wrong("blind15-raw-plain-float-model", make=lambda tmp: short_raw_plain_float(tmp), skipped_skill=True),
        Wrong("blind15-raw-retyped-input", make=lambda tmp: short_raw_retype(tmp), skipped_skill=True),
        Wrong("blind15-raw-lookup-test-digits", make=lambda tmp: short_raw_lookup(tmp), skipped_skill=True),
        Wrong("blind15-raw-monkeypatch-ort", make=lambda tmp: short_raw_monkeypatch(tmp), skipped_skill=True),
    ],
}
