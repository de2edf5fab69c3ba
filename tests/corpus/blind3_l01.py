"""Blind corpus round 3, lesson 01 (written without seeing the judges).

Classes changed by the lead after reading the prompt: blind3-sig-gemm-transb (Wrong, form only: Y declared
with no shape at all: onnx.checker refuses the model).
"""
import atexit as _atexit, shutil as _shutil, tempfile as _tempfile  # noqa: E401
_BLIND3_CACHE = __import__("pathlib").Path(_tempfile.mkdtemp(prefix="blind3-cache-"))  # per process: no race
_atexit.register(_shutil.rmtree, _BLIND3_CACHE, True)
import numpy as np

from corpus import Right, Wrong

W = np.array([[0.5, -1.0, 0.25], [1.5, 0.0, -0.5], [-0.75, 0.5, 1.0], [0.2, 0.3, -0.4]], dtype=np.float32)
B = np.array([0.1, -0.2, 0.3], dtype=np.float32)


# ---------------------------------------------------------------- 01.sigmoid_model
def _sig(nodes, inits, x_shape=("batch", 4), y_shape=("batch", 3), opset=21, ir=10, x_type=1, xname="X", yname="Y",
         inputs_extra=()):
    from onnx import helper
    g = helper.make_graph(nodes, "sig", [helper.make_tensor_value_info(xname, x_type, list(x_shape)), *inputs_extra],
                          [helper.make_tensor_value_info(yname, x_type, None if y_shape is None else list(y_shape))],
                          inits)
    kw = {} if ir is None else {"ir_version": ir}
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], **kw)


def _sig_gemm_transb():
    from onnx import helper, numpy_helper
    return _sig([helper.make_node("Gemm", ["X", "Wt", "bias"], ["z"], transB=1),
                 helper.make_node("Sigmoid", ["z"], ["Y"])],
                [numpy_helper.from_array(np.ascontiguousarray(W.T), "Wt"), numpy_helper.from_array(B, "bias")],
                x_shape=("rows", 4), y_shape=None)


def _sig_path_opset13(tmp):
    import onnx
    from onnx import helper, numpy_helper
    m = _sig([helper.make_node("MatMul", ["X", "weight"], ["mm"], name="mm"),
              helper.make_node("Add", ["bias2d", "mm"], ["pre"], name="add"),   # bias first, shape (1, 3)
              helper.make_node("Sigmoid", ["pre"], ["Y"], name="act")],
             [numpy_helper.from_array(B.reshape(1, 3), "bias2d"), numpy_helper.from_array(W.copy(), "weight")],
             y_shape=("batch", 3), opset=13, ir=7)
    p = tmp / "sigmoid.onnx"
    onnx.save(m, str(p))
    return str(p)


def _sig_constant_nodes():
    # W and B stored in Constant nodes instead of the initializer list
    from onnx import helper, numpy_helper
    return _sig([helper.make_node("Constant", [], ["W"], value=numpy_helper.from_array(W, "W")),
                 helper.make_node("Constant", [], ["B"], value=numpy_helper.from_array(B, "B")),
                 helper.make_node("MatMul", ["X", "W"], ["XW"]),
                 helper.make_node("Add", ["XW", "B"], ["Z"]),
                 helper.make_node("Sigmoid", ["Z"], ["Y"])], [], y_shape=("batch", None))


def _sig_pathlib(tmp):
    import onnx
    from onnx import helper, numpy_helper
    m = _sig([helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Add", ["XW", "B"], ["Z"]),
              helper.make_node("Sigmoid", ["Z"], ["Y"])],
             [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")], x_shape=("N", 4), y_shape=("N", 3),
             opset=19, ir=9)
    p = tmp / "models" / "sig.onnx"
    p.parent.mkdir(exist_ok=True)  # the corpus test builds an entry twice in one folder
    onnx.save_model(m, p)
    return p


def _std(**kw):
    from onnx import helper, numpy_helper
    nodes = kw.pop("nodes", None) or [helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Add", ["XW", "B"], ["Z"]),
                                       helper.make_node("Sigmoid", ["Z"], [kw.get("yname", "Y")])]
    inits = kw.pop("inits", None)
    if inits is None:
        inits = [numpy_helper.from_array(kw.pop("w", W), "W"), numpy_helper.from_array(kw.pop("b", B), "B")]
    return _sig(nodes, inits, **kw)


def _sig_fixed_batch():
    return _std(x_shape=(2, 4), y_shape=(2, 3))


def _sig_weights_as_inputs():
    from onnx import helper
    return _std(inits=[], inputs_extra=[helper.make_tensor_value_info("W", 1, [4, 3]),
                                         helper.make_tensor_value_info("B", 1, [3])])


def _sig_no_sigmoid():
    from onnx import helper
    return _std(nodes=[helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Add", ["XW", "B"], ["Y"])])


def _sig_bias_after():
    from onnx import helper
    return _std(nodes=[helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Sigmoid", ["XW"], ["S"]),
                       helper.make_node("Add", ["S", "B"], ["Y"])])


def _sig_output_name():
    return _std(yname="output")


def _sig_default_ir():
    return _std(ir=None)


def _sig_double():
    from onnx import TensorProto
    return _std(w=W.astype(np.float64), b=B.astype(np.float64), x_type=TensorProto.DOUBLE)


def _sig_hard():
    from onnx import helper
    return _std(nodes=[helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Add", ["XW", "B"], ["Z"]),
                       helper.make_node("HardSigmoid", ["Z"], ["Y"])])


def _sig_w_reshaped():  # W.T.reshape(4, 3): right shape, wrong layout
    return _std(w=np.ascontiguousarray(W.T).reshape(4, 3))


def _sig_rounded_weights():  # weights typed by hand, one decimal
    return _std(w=np.round(W, 1), b=np.round(B, 1))


def _sig_constant_output():  # Y = sigmoid(B) for every row: X only feeds the shape
    from onnx import helper, numpy_helper
    return _std(nodes=[helper.make_node("Shape", ["X"], ["sx"], end=1),
                       helper.make_node("Concat", ["sx", "three"], ["shape"], axis=0),
                       helper.make_node("Sigmoid", ["B"], ["sb"]),
                       helper.make_node("Expand", ["sb", "shape"], ["Y"])],
                inits=[numpy_helper.from_array(B, "B"), numpy_helper.from_array(np.array([3], np.int64), "three")])


def _sig_lower_x():
    from onnx import helper, numpy_helper
    return _sig([helper.make_node("MatMul", ["x", "W"], ["XW"]), helper.make_node("Add", ["XW", "B"], ["Z"]),
                 helper.make_node("Sigmoid", ["Z"], ["Y"])],
                [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")], xname="x")


# ---------------------------------------------------------------- 01.run_both
def _rb_loaded(model_bytes, x):
    import onnx
    import onnxruntime
    from onnx.reference import ReferenceEvaluator
    proto = onnx.load_from_string(model_bytes)
    first = proto.graph.output[0].name
    sess = onnxruntime.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    out = {}
    out["ort"] = sess.run([first], {"X": x})[0]
    out["reference"] = ReferenceEvaluator(proto).run([first], {"X": x})[0]
    return out


_RB_DIR = str(_BLIND3_CACHE / "run_both")


def _rb_via_file(model_bytes, x):
    import hashlib
    import os
    import onnxruntime as rt
    from onnx import reference
    os.makedirs(_RB_DIR, exist_ok=True)
    path = os.path.join(_RB_DIR, hashlib.sha1(model_bytes).hexdigest() + ".onnx")
    with open(path, "wb") as fh:
        fh.write(model_bytes)
    so = rt.SessionOptions()
    so.graph_optimization_level = rt.GraphOptimizationLevel.ORT_DISABLE_ALL
    o = rt.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    name = o.get_outputs()[0].name
    r = reference.ReferenceEvaluator(path)
    return dict(reference=r.run(None, {"X": x})[0], ort=o.run([name], {o.get_inputs()[0].name: x})[0])


def _rb_bytes_direct(model_bytes, x):
    from onnx.reference import ReferenceEvaluator
    from onnxruntime import InferenceSession
    engines = {"reference": ReferenceEvaluator(model_bytes),
               "ort": InferenceSession(model_bytes, providers=["CPUExecutionProvider"])}
    return {k: e.run(None, {"X": x})[0] for k, e in engines.items()}


def _rb_both_ort(model_bytes, x):
    import onnxruntime as rt
    y = rt.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    return {"reference": y, "ort": y}


def _rb_both_ref(model_bytes, x):
    from onnx.reference import ReferenceEvaluator
    y = ReferenceEvaluator(model_bytes).run(None, {"X": x})[0]
    return {"reference": y, "ort": y.copy()}


def _rb_swapped(model_bytes, x):
    import onnxruntime as rt
    from onnx.reference import ReferenceEvaluator
    return {"ort": ReferenceEvaluator(model_bytes).run(None, {"X": x})[0],
            "reference": rt.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]}


def _rb_all_outputs(model_bytes, x):
    import onnxruntime as rt
    from onnx.reference import ReferenceEvaluator
    return {"reference": ReferenceEvaluator(model_bytes).run(None, {"X": x}),
            "ort": rt.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})}


def _rb_tuple(model_bytes, x):
    import onnxruntime as rt
    from onnx.reference import ReferenceEvaluator
    return (ReferenceEvaluator(model_bytes).run(None, {"X": x})[0],
            rt.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0])


def _rb_numpy(model_bytes, x):  # "both engines" replaced by numpy on the weights it finds
    import onnx
    from onnx import numpy_helper
    m = onnx.load_from_string(model_bytes)
    ws = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    mats = [a for a in ws.values() if a.ndim == 2]
    vecs = [a for a in ws.values() if a.ndim == 1]
    y = x @ mats[0] if mats else x
    if vecs:
        y = y + vecs[0]
    y = 1 / (1 + np.exp(-y))
    return {"reference": y, "ort": y.copy()}


_RB_CACHE = {}


def _rb_cached_session(model_bytes, x):  # one session per process: the first model is reused for every later one
    import onnxruntime as rt
    from onnx.reference import ReferenceEvaluator
    if "ort" not in _RB_CACHE:
        _RB_CACHE["ort"] = rt.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
        _RB_CACHE["ref"] = ReferenceEvaluator(model_bytes)
    return {"reference": _RB_CACHE["ref"].run(None, {"X": x})[0], "ort": _RB_CACHE["ort"].run(None, {"X": x})[0]}


def _rb_rounded(model_bytes, x):
    import onnxruntime as rt
    from onnx.reference import ReferenceEvaluator
    return {"reference": np.round(ReferenceEvaluator(model_bytes).run(None, {"X": x})[0], 3),
            "ort": np.round(rt.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0], 3)}


def _rb_ref_twice_seeded(model_bytes, x):  # ORT for "ort", but "reference" = ORT again with a fresh session
    import onnxruntime as rt
    s1 = rt.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    s2 = rt.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    return {"reference": s2.run(None, {"X": x})[0], "ort": s1.run(None, {"X": x})[0]}


def _rb_float64(model_bytes, x):  # casts the input "to be safe"
    import onnxruntime as rt
    from onnx.reference import ReferenceEvaluator
    x = np.asarray(x, dtype=np.float64)
    return {"reference": ReferenceEvaluator(model_bytes).run(None, {"X": x})[0],
            "ort": rt.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]}


# ---------------------------------------------------------------- 01.versions
def _ver_parse(model_bytes):
    import onnx
    m = onnx.ModelProto()
    m.ParseFromString(model_bytes)
    default = {o.domain: o.version for o in m.opset_import}
    v = default.get("", default.get("ai.onnx"))
    return {"opset": int(v), "ir_version": int(m.ir_version)}


def _ver_reversed(model_bytes):
    import onnx
    m = onnx.load_from_string(model_bytes)
    opset = None
    for entry in reversed(m.opset_import):
        if entry.domain.strip() in {"", "ai.onnx"}:
            opset = entry.version
    return dict(ir_version=m.ir_version, opset=opset)


def _ver_printer(model_bytes):
    import onnx
    m = onnx.load_model_from_string(model_bytes)
    (v,) = [o.version for o in m.opset_import if (o.domain or "ai.onnx") == "ai.onnx"]
    return {"ir_version": m.ir_version, "opset": v}


def _ver_first(model_bytes):
    import onnx
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version, "opset": m.opset_import[0].version}


def _ver_last(model_bytes):
    import onnx
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version, "opset": m.opset_import[-1].version}


def _ver_max(model_bytes):
    import onnx
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version, "opset": max(o.version for o in m.opset_import)}


def _ver_min(model_bytes):
    import onnx
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version, "opset": min(o.version for o in m.opset_import)}


def _ver_empty_only(model_bytes):
    import onnx
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version, "opset": next((o.version for o in m.opset_import if o.domain == ""), None)}


def _ver_package(model_bytes):
    import onnx
    return {"ir_version": onnx.IR_VERSION, "opset": onnx.defs.onnx_opset_version()}


def _ver_min_ir(model_bytes):
    import onnx
    from onnx import helper
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": helper.find_min_ir_version_for(list(m.opset_import)),
            "opset": next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))}


def _ver_strings(model_bytes):
    import onnx
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": str(m.ir_version),
            "opset": str(next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx")))}


def _ver_proto(model_bytes):  # the OperatorSetIdProto itself
    import onnx
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version, "opset": next(o for o in m.opset_import if o.domain in ("", "ai.onnx"))}


def _ver_keys(model_bytes):
    import onnx
    m = onnx.load_from_string(model_bytes)
    return {"ir": m.ir_version, "opset_version": next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))}


def _ver_sum(model_bytes):  # "the opset" as all versions added up
    import onnx
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version, "opset": sum(o.version for o in m.opset_import)}


CORPUS = {
    "01.sigmoid_model": [
        Wrong("blind3-sig-gemm-transb", make=lambda tmp: _sig_gemm_transb(), outputs_wrong=False),
        Right("blind3-sig-path-opset13", make=_sig_path_opset13),
        Right("blind3-sig-constant-nodes", make=lambda tmp: _sig_constant_nodes()),
        Right("blind3-sig-pathlib", make=_sig_pathlib),
        Wrong("blind3-sig-fixed-batch", make=lambda tmp: _sig_fixed_batch()),
        Wrong("blind3-sig-weights-as-inputs", make=lambda tmp: _sig_weights_as_inputs()),
        Wrong("blind3-sig-no-sigmoid", make=lambda tmp: _sig_no_sigmoid()),
        Wrong("blind3-sig-bias-after", make=lambda tmp: _sig_bias_after()),
        Wrong("blind3-sig-output-name", make=lambda tmp: _sig_output_name(), outputs_wrong=False),
        Wrong("blind3-sig-default-ir", make=lambda tmp: _sig_default_ir(), outputs_wrong=False),
        Wrong("blind3-sig-double", make=lambda tmp: _sig_double()),
        Wrong("blind3-sig-hard", make=lambda tmp: _sig_hard()),
        Wrong("blind3-sig-w-reshaped", make=lambda tmp: _sig_w_reshaped()),
        Wrong("blind3-sig-rounded-weights", make=lambda tmp: _sig_rounded_weights()),
        Wrong("blind3-sig-constant-output", make=lambda tmp: _sig_constant_output(), skipped_skill=True),
        Wrong("blind3-sig-lower-x", make=lambda tmp: _sig_lower_x(), outputs_wrong=False),
    ],
    "01.run_both": [
        Right("blind3-rb-loaded", answer=_rb_loaded),
        Right("blind3-rb-via-file", answer=_rb_via_file),
        Right("blind3-rb-bytes-direct", answer=_rb_bytes_direct),
        Wrong("blind3-rb-both-ort", answer=_rb_both_ort),
        Wrong("blind3-rb-both-ref", answer=_rb_both_ref),
        Wrong("blind3-rb-swapped", answer=_rb_swapped),
        Wrong("blind3-rb-all-outputs", answer=_rb_all_outputs, outputs_wrong=False),
        Wrong("blind3-rb-tuple", answer=_rb_tuple, outputs_wrong=False),
        Wrong("blind3-rb-numpy", answer=_rb_numpy, skipped_skill=True),
        Wrong("blind3-rb-cached-session", answer=_rb_cached_session),
        Wrong("blind3-rb-rounded", answer=_rb_rounded),
        Wrong("blind3-rb-ort-twice", answer=_rb_ref_twice_seeded),
        Wrong("blind3-rb-float64", answer=_rb_float64),
    ],
    "01.versions": [
        Right("blind3-ver-parse", answer=_ver_parse),
        Right("blind3-ver-reversed", answer=_ver_reversed),
        Right("blind3-ver-printer", answer=_ver_printer),
        Wrong("blind3-ver-first", answer=_ver_first),
        Wrong("blind3-ver-last", answer=_ver_last),
        Wrong("blind3-ver-max", answer=_ver_max),
        Wrong("blind3-ver-min", answer=_ver_min),
        Wrong("blind3-ver-empty-only", answer=_ver_empty_only),
        Wrong("blind3-ver-package", answer=_ver_package, skipped_skill=True),
        Wrong("blind3-ver-min-ir", answer=_ver_min_ir),
        Wrong("blind3-ver-strings", answer=_ver_strings, outputs_wrong=False),
        Wrong("blind3-ver-proto", answer=_ver_proto, outputs_wrong=False),
        Wrong("blind3-ver-keys", answer=_ver_keys, outputs_wrong=False),
        Wrong("blind3-ver-sum", answer=_ver_sum),
    ],
}
