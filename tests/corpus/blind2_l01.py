"""Blind entries, copied from /work/blind2/l01.py (issue 32): written by a helper who never read the judges or this corpus
(their README: /work/blind2/README.md). tests/corpus/l01.py adds them to its CORPUS.

Blind corpus, lesson 01 (written without seeing the judges).
"""
import os
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from corpus import Right, Wrong

# the lesson's weights
W = np.array([[0.5, -1.0, 0.25],
              [1.5, 0.0, -0.5],
              [-0.75, 0.5, 1.0],
              [0.2, 0.3, -0.4]], dtype=np.float32)
B = np.array([0.1, -0.2, 0.3], dtype=np.float32)


def _model(nodes, *, inits=(W, B), names=("W", "B"), x_shape=("batch", 4), y_name="Y", y_shape=("batch", 3),
           opset=21, ir=10, extra_inputs=()):
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x_shape)), *extra_inputs],
        [helper.make_tensor_value_info(y_name, TensorProto.FLOAT, None if y_shape is None else list(y_shape))],
        [numpy_helper.from_array(a, n) for a, n in zip(inits, names)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir)


def _mm_add_sig(y="Y", act="Sigmoid"):
    return [helper.make_node("MatMul", ["X", "W"], ["xw"]), helper.make_node("Add", ["xw", "B"], ["z"]),
            helper.make_node(act, ["z"], [y])]


# ---------------------------------------------------------------- sigmoid_model rights

def _gemm_model():
    return _model([helper.make_node("Gemm", ["X", "W", "B"], ["z"]), helper.make_node("Sigmoid", ["z"], ["Y"])],
                  opset=13, ir=7, y_shape=("batch", 3))


def _parsed_model():
    w = ", ".join(f"{v:g}" for v in W.ravel())
    b = ", ".join(f"{v:g}" for v in B.ravel())
    text = f"""
    <ir_version: 8, opset_import: ["" : 17]>
    sig (float[N, 4] X) => (float[N, 3] Y)
    <float[4, 3] W = {{{w}}}, float[3] B = {{{b}}}>
    {{
        H = MatMul(X, W)
        Z = Add(H, B)
        Y = Sigmoid(Z)
    }}
    """
    return onnx.parser.parse_model(text)


def _constant_nodes_model():
    nodes = [helper.make_node("Constant", [], ["Wc"], value=numpy_helper.from_array(W, "Wc")),
             helper.make_node("Constant", [], ["Bc"], value=numpy_helper.from_array(B, "Bc")),
             helper.make_node("MatMul", ["X", "Wc"], ["xw"]), helper.make_node("Add", ["Bc", "xw"], ["z"]),
             helper.make_node("Sigmoid", ["z"], ["Y"])]
    return _model(nodes, inits=(), names=())


def _explicit_sigmoid_model():
    one = np.array(1.0, np.float32)
    nodes = [helper.make_node("MatMul", ["X", "W"], ["xw"]), helper.make_node("Add", ["xw", "B"], ["z"]),
             helper.make_node("Neg", ["z"], ["nz"]), helper.make_node("Exp", ["nz"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["den"]), helper.make_node("Reciprocal", ["den"], ["Y"])]
    return _model(nodes, inits=(W, B, one), names=("W", "B", "one"))


def _saved_path(tmp):
    p = os.path.join(tmp, "sigmoid.onnx")
    onnx.save(_model(_mm_add_sig(), opset=18, ir=8), p)
    return p


def _saved_str_path_gemm(tmp):
    from pathlib import Path
    p = Path(tmp) / "models" / "sig_gemm.onnx"
    p.parent.mkdir(parents=True, exist_ok=True)
    onnx.save_model(_gemm_model(), p)
    return p


# ---------------------------------------------------------------- sigmoid_model wrongs

def _lesson_linear():
    return _model([helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Add", ["XW", "B"], ["Y"])],
                  x_shape=(2, 4), y_shape=(2, 3))


def _weights_as_inputs():
    return _model(_mm_add_sig(), inits=(), names=(),
                  extra_inputs=[helper.make_tensor_value_info("W", TensorProto.FLOAT, [4, 3]),
                                helper.make_tensor_value_info("B", TensorProto.FLOAT, [3])])


def _bias_after_sigmoid():
    return _model([helper.make_node("MatMul", ["X", "W"], ["xw"]), helper.make_node("Sigmoid", ["xw"], ["s"]),
                   helper.make_node("Add", ["s", "B"], ["Y"])])


def _typo_w():
    w = W.copy()
    w[1, 0] = 0.15
    return _model(_mm_add_sig(), inits=(w, B))


def _float64_weights():
    return _model(_mm_add_sig(), inits=(W.astype(np.float64), B.astype(np.float64)))


def _no_bias():
    return _model([helper.make_node("MatMul", ["X", "W"], ["xw"]), helper.make_node("Sigmoid", ["xw"], ["Y"])],
                  inits=(W,), names=("W",))


def _sub_bias():
    return _model([helper.make_node("MatMul", ["X", "W"], ["xw"]), helper.make_node("Sub", ["xw", "B"], ["z"]),
                   helper.make_node("Sigmoid", ["z"], ["Y"])])


def _default_ir():
    graph = _model(_mm_add_sig()).graph
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])   # onnx's newest IR version


def _numpy_answer():
    x = np.array([[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 0.0, 2.0]], dtype=np.float32)
    return 1 / (1 + np.exp(-(x @ W + B)))


# ---------------------------------------------------------------- run_both

def _both_loaded(model_bytes, x):
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    model = onnx.load_from_string(model_bytes)
    sess = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    out = sess.get_outputs()[0].name
    return {"ort": sess.run([out], {"X": x})[0],
            "reference": ReferenceEvaluator(model).run([model.graph.output[0].name], {"X": x})[0]}


def _both_via_file(model_bytes, x):
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "m.onnx")
        with open(p, "wb") as f:
            f.write(model_bytes)
        ref = ReferenceEvaluator(p).run(None, {"X": x})
        got = ort.InferenceSession(p, providers=["CPUExecutionProvider"]).run(None, {"X": x})
    result = {}
    result["reference"], = ref[:1]
    result["ort"], = got[:1]
    return result


def _both_bytes_direct(model_bytes, x):
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    feeds = dict(X=x)
    outs = [e.run(None, feeds) for e in (ReferenceEvaluator(model_bytes),
                                         ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]))]
    return dict(zip(["reference", "ort"], (o[0] for o in outs)))


def _swapped(model_bytes, x):
    d = _both_loaded(model_bytes, x)
    return {"reference": d["ort"], "ort": d["reference"]}


def _ort_twice(model_bytes, x):
    import onnxruntime as ort
    y = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    return {"reference": y, "ort": y}


def _reference_twice(model_bytes, x):
    from onnx.reference import ReferenceEvaluator
    y = ReferenceEvaluator(model_bytes).run(None, {"X": x})[0]
    return {"reference": y, "ort": y.copy()}


def _ort_unoptimized_as_reference(model_bytes, x):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    plain = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    fast = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    return {"reference": plain.run(None, {"X": x})[0], "ort": fast.run(None, {"X": x})[0]}


def _whole_lists(model_bytes, x):
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    return {"reference": ReferenceEvaluator(model_bytes).run(None, {"X": x}),
            "ort": ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})}


def _tuple(model_bytes, x):
    d = _both_loaded(model_bytes, x)
    return d["reference"], d["ort"]


def _other_keys(model_bytes, x):
    d = _both_loaded(model_bytes, x)
    return {"ref": d["reference"], "onnxruntime": d["ort"]}


_SESSIONS = {}


def _cached_sessions(model_bytes, x):
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    if not _SESSIONS:                       # "build once, it is faster": the first model forever
        _SESSIONS["ref"] = ReferenceEvaluator(model_bytes)
        _SESSIONS["ort"] = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    return {"reference": _SESSIONS["ref"].run(None, {"X": x})[0], "ort": _SESSIONS["ort"].run(None, {"X": x})[0]}


def _lesson_model(model_bytes, x):
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    linear = _model([helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Add", ["XW", "B"], ["Y"])],
                    y_shape=None)
    return {"reference": ReferenceEvaluator(linear).run(None, {"X": x})[0],
            "ort": ort.InferenceSession(linear.SerializeToString(),
                                        providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]}


def _numpy_both(model_bytes, x):
    y = x @ W + B
    return {"reference": y, "ort": y}


def _float64_input(model_bytes, x):
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    x = np.asarray(x, dtype=np.float64)
    return {"reference": ReferenceEvaluator(model_bytes).run(None, {"X": x})[0],
            "ort": ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]}


# ---------------------------------------------------------------- versions

def _v_dict(model_bytes):
    m = onnx.load_from_string(model_bytes)
    by_domain = {o.domain: o.version for o in m.opset_import}
    opset = by_domain.get("", by_domain.get("ai.onnx"))
    return {"ir_version": int(m.ir_version), "opset": int(opset)}


def _v_loop(model_bytes):
    m = onnx.ModelProto()
    m.ParseFromString(model_bytes)
    for entry in m.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return {"opset": entry.version, "ir_version": m.ir_version}
    raise ValueError("no default domain")


def _v_next(model_bytes):
    import io
    m = onnx.load_model(io.BytesIO(model_bytes))
    return dict(ir_version=m.ir_version,
                opset=next(o.version for o in m.opset_import if (o.domain or "ai.onnx") == "ai.onnx"))


def _v_first(model_bytes):
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version, "opset": m.opset_import[0].version}


def _v_last(model_bytes):
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version, "opset": m.opset_import[-1].version}


def _v_max(model_bytes):
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version, "opset": max(o.version for o in m.opset_import)}


def _v_min(model_bytes):
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version, "opset": min(o.version for o in m.opset_import)}


def _v_empty_only(model_bytes):
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version, "opset": next((o.version for o in m.opset_import if o.domain == ""), None)}


def _v_library(model_bytes):
    return {"ir_version": onnx.IR_VERSION, "opset": onnx.defs.onnx_opset_version()}


def _v_tuple(model_bytes):
    d = _v_dict(model_bytes)
    return d["ir_version"], d["opset"]


def _v_keys(model_bytes):
    d = _v_dict(model_bytes)
    return {"ir": d["ir_version"], "opset_version": d["opset"]}


def _v_strings(model_bytes):
    d = _v_dict(model_bytes)
    return {k: str(v) for k, v in d.items()}


def _v_attr_on_bytes(model_bytes):
    return {"ir_version": model_bytes.ir_version,
            "opset": [o.version for o in model_bytes.opset_import if o.domain == ""][0]}


def _v_hardcoded(model_bytes):
    return {"ir_version": 10, "opset": 21}


def _v_min_ir(model_bytes):
    m = onnx.load_from_string(model_bytes)
    d = _v_dict(model_bytes)
    return {"ir_version": helper.find_min_ir_version_for(m.opset_import), "opset": d["opset"]}


def _v_domain_ml(model_bytes):
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version,
            "opset": next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx", "ai.onnx.ml"))}


CORPUS = {
    "01.sigmoid_model": [
        Right("blind2-sig-gemm-opset13", answer=_gemm_model()),
        Right("blind2-sig-parser-text", answer=_parsed_model()),
        Right("blind2-sig-constant-nodes", answer=_constant_nodes_model()),
        Right("blind2-sig-explicit-exp", answer=_explicit_sigmoid_model()),
        Right("blind2-sig-path-str", make=_saved_path),
        Right("blind2-sig-path-pathlib", make=_saved_str_path_gemm),
        Wrong("blind2-sig-lesson-linear", answer=_lesson_linear(), skipped_skill=True),
        Wrong("blind2-sig-fixed-batch", answer=_model(_mm_add_sig(), x_shape=(2, 4), y_shape=(2, 3))),
        Wrong("blind2-sig-output-named-out", answer=_model(_mm_add_sig(y="out"), y_name="out"), outputs_wrong=False),
        Wrong("blind2-sig-weights-as-inputs", answer=_weights_as_inputs()),
        Wrong("blind2-sig-relu", answer=_model(_mm_add_sig(act="Relu"))),
        Wrong("blind2-sig-bias-after-sigmoid", answer=_bias_after_sigmoid()),
        Wrong("blind2-sig-typo-weight", answer=_typo_w()),
        Wrong("blind2-sig-float64-weights", answer=_float64_weights()),
        Wrong("blind2-sig-no-bias", answer=_no_bias()),
        Wrong("blind2-sig-sub-bias", answer=_sub_bias()),
        Wrong("blind2-sig-reshaped-not-transposed-w", answer=_model(_mm_add_sig(), inits=(W.reshape(3, 4).T.copy(), B))),
        Wrong("blind2-sig-default-ir-too-new", answer=_default_ir()),
        Wrong("blind2-sig-numpy-array", answer=_numpy_answer(), skipped_skill=True),
        Wrong("blind2-sig-bytes-of-linear", answer=_lesson_linear().SerializeToString(), skipped_skill=True),
    ],
    "01.run_both": [
        Right("blind2-both-named-outputs", answer=_both_loaded),
        Right("blind2-both-via-tempfile", answer=_both_via_file),
        Right("blind2-both-bytes-zip", answer=_both_bytes_direct),
        Wrong("blind2-both-swapped", answer=_swapped),
        Wrong("blind2-both-ort-twice", answer=_ort_twice, skipped_skill=True),
        Wrong("blind2-both-reference-twice", answer=_reference_twice, skipped_skill=True),
        Wrong("blind2-both-ort-noopt-as-reference", answer=_ort_unoptimized_as_reference, skipped_skill=True),
        Wrong("blind2-both-whole-lists", answer=_whole_lists, outputs_wrong=False),
        Wrong("blind2-both-tuple", answer=_tuple, outputs_wrong=False),
        Wrong("blind2-both-other-keys", answer=_other_keys, outputs_wrong=False),
        Wrong("blind2-both-cached-first-model", answer=_cached_sessions),
        Wrong("blind2-both-lesson-model", answer=_lesson_model),
        Wrong("blind2-both-numpy", answer=_numpy_both, skipped_skill=True),
        Wrong("blind2-both-float64-input", answer=_float64_input),
    ],
    "01.versions": [
        Right("blind2-ver-domain-dict", answer=_v_dict),
        Right("blind2-ver-parse-loop", answer=_v_loop),
        Right("blind2-ver-bytesio-next", answer=_v_next),
        Wrong("blind2-ver-first-entry", answer=_v_first),
        Wrong("blind2-ver-last-entry", answer=_v_last),
        Wrong("blind2-ver-max", answer=_v_max),
        Wrong("blind2-ver-min", answer=_v_min),
        Wrong("blind2-ver-empty-domain-only", answer=_v_empty_only),
        Wrong("blind2-ver-library-constants", answer=_v_library, skipped_skill=True),
        Wrong("blind2-ver-tuple", answer=_v_tuple, outputs_wrong=False),
        Wrong("blind2-ver-other-keys", answer=_v_keys, outputs_wrong=False),
        Wrong("blind2-ver-strings", answer=_v_strings, outputs_wrong=False),
        Wrong("blind2-ver-attr-on-bytes", answer=_v_attr_on_bytes),
        Wrong("blind2-ver-hardcoded", answer=_v_hardcoded, skipped_skill=True),
        Wrong("blind2-ver-min-ir", answer=_v_min_ir),
        Wrong("blind2-ver-ml-domain-too", answer=_v_domain_ml),
    ],
}
