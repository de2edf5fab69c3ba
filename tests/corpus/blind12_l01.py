"""Blind corpus round 12, lesson 01 (written without seeing the judges).
Truths relied on: onnx 1.23 writes IR 14 by default and ORT 1.31 refuses IR > 13 (so make_model without ir_version
fails in ORT); Gemm == MatMul+Add for 2-D X; Sigmoid(z) == 1/(1+exp(-z)) == 0.5*(1+tanh(z/2)); ReferenceEvaluator
accepts a ModelProto, bytes or a path; ORT takes bytes or a path; the two engines give different numbers for
RandomUniformLike with a seed (checked locally); opset_import domain "" and "ai.onnx" both name the default domain.
Ambiguities: 01.sigmoid_model -- is X shape [None, 4] (unnamed dynamic dim) "symbolic"? is a Gemm model, a model
whose W/B are Constant nodes, or a decomposed sigmoid still "the model Y = Sigmoid(X.W+B)"? (treated as Right,
except [None,4] not included). A model whose X is ["batch", "features"] runs at any batch (classified as rule-broken:
X must be ["batch", 4]); a model with X/Y declared with no shape fails onnx.checker (not included).
01.run_both -- "fed to the input named X": a learner feeding sess.get_inputs()[0].name is identical on one-input
models (not included). Returning numpy arrays vs lists of floats is not specified (list form not included).
01.versions -- int vs numpy/other int types not specified; str values classified as wrong type.
"""
from corpus import Right, Wrong

import tempfile
from pathlib import Path

_CACHE = Path(tempfile.mkdtemp(prefix="blind12_l01_"))


# ----------------------------------------------------------------------------- 01.sigmoid_model helpers
def _wb():
    import numpy as np
    W = np.array(
        [[0.5, -1.0, 0.25], [1.5, 0.0, -0.5], [-0.75, 0.5, 1.0], [0.2, 0.3, -0.4]],
        dtype=np.float32,
    )
    B = np.array([0.1, -0.2, 0.3], dtype=np.float32)
    return W, B


def _sig(nodes, inits, x_shape=("batch", 4), y_shape=("batch", 3), opset=21, ir=10, xname="X", yname="Y",
         extra_outputs=(), x_type=None):
    from onnx import TensorProto, helper
    xt = TensorProto.FLOAT if x_type is None else x_type
    g = helper.make_graph(
        nodes, "sig",
        [helper.make_tensor_value_info(xname, xt, list(x_shape) if x_shape is not None else None)],
        [helper.make_tensor_value_info(yname, xt, list(y_shape) if y_shape is not None else None)]
        + list(extra_outputs),
        inits,
    )
    kw = {"opset_imports": [helper.make_opsetid("", opset)]}
    if ir is not None:
        kw["ir_version"] = ir
    return helper.make_model(g, **kw)


def right_gemm_model():
    # one Gemm node (X is 2-D), opset 13, IR 7, weights stored transposed and transB=1
    from onnx import helper, numpy_helper
    W, B = _wb()
    nodes = [helper.make_node("Gemm", ["X", "Wt", "B"], ["z"], transB=1),
             helper.make_node("Sigmoid", ["z"], ["Y"])]
    return _sig(nodes, [numpy_helper.from_array(W.T.copy(), "Wt"), numpy_helper.from_array(B, "B")],
                opset=13, ir=7)


def right_constant_nodes_tanh():
    # weights as Constant nodes, sigmoid written as 0.5 * (1 + tanh(z / 2)); output shape left unknown
    from onnx import helper, numpy_helper
    import numpy as np
    W, B = _wb()
    c = lambda name, arr: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(arr, name))
    nodes = [c("W", W), c("B", B), c("half", np.array(0.5, np.float32)), c("one", np.array(1.0, np.float32)),
             helper.make_node("MatMul", ["X", "W"], ["xw"]),
             helper.make_node("Add", ["B", "xw"], ["z"]),
             helper.make_node("Mul", ["z", "half"], ["zh"]),
             helper.make_node("Tanh", ["zh"], ["t"]),
             helper.make_node("Add", ["t", "one"], ["t1"]),
             helper.make_node("Mul", ["t1", "half"], ["Y"])]
    return _sig(nodes, [], y_shape=("batch", 3), opset=17, ir=8)


def right_parser_text():
    # the ONNX text format, parsed; batch dimension named "N"; reciprocal form of the sigmoid
    import onnx.parser
    from onnx import numpy_helper
    W, B = _wb()
    txt = """
    < ir_version: 9, opset_import: ["" : 20] >
    sig (float[N, 4] X) => (float[N, 3] Y) {
        xw = MatMul(X, W)
        z = Add(xw, B)
        nz = Neg(z)
        e = Exp(nz)
        one = Constant <value = float {1.0}> ()
        d = Add(one, e)
        Y = Reciprocal(d)
    }
    """
    m = onnx.parser.parse_model(txt)
    m.graph.initializer.extend([numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")])
    return m


def _make_saved_path(tmp):
    import onnx
    from onnx import helper, numpy_helper
    W, B = _wb()
    nodes = [helper.make_node("MatMul", ["X", "W"], ["xw"]), helper.make_node("Add", ["xw", "B"], ["z"]),
             helper.make_node("Sigmoid", ["z"], ["Y"])]
    m = _sig(nodes, [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")], x_shape=("rows", 4),
             y_shape=("rows", 3))
    p = Path(tmp) / "sigmoid.onnx"
    onnx.save(m, p)
    return str(p)


def _std_nodes(W, B, act="Sigmoid"):
    from onnx import helper, numpy_helper
    nodes = [helper.make_node("MatMul", ["X", "W"], ["xw"]), helper.make_node("Add", ["xw", "B"], ["z"]),
             helper.make_node(act, ["z"], ["Y"])]
    return nodes, [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")]


def wrong_fixed_batch():
    W, B = _wb()
    return _sig(*_std_nodes(W, B), x_shape=(2, 4), y_shape=(2, 3))


def wrong_default_ir():
    # forgot ir_version: onnx writes IR 14, which this ONNX Runtime refuses
    W, B = _wb()
    return _sig(*_std_nodes(W, B), ir=None)


def wrong_no_bias():
    from onnx import helper, numpy_helper
    W, B = _wb()
    nodes = [helper.make_node("MatMul", ["X", "W"], ["xw"]), helper.make_node("Sigmoid", ["xw"], ["Y"])]
    return _sig(nodes, [numpy_helper.from_array(W, "W")])


def wrong_transposed_w_square_trick():
    # X.W^T is impossible (3x4 vs 4 columns) so this learner computed (W^T X^T)^T... but forgot the final transpose
    # and used Gemm with transA on the wrong operand: Gemm(W, X, transA=1, transB=1) -> (3, batch)
    from onnx import helper, numpy_helper
    W, B = _wb()
    nodes = [helper.make_node("Gemm", ["W", "X"], ["z"], transA=1, transB=1),
             helper.make_node("Sigmoid", ["z"], ["Y"])]
    return _sig(nodes, [numpy_helper.from_array(W, "W")], y_shape=(3, "batch"))


def wrong_softmax():
    W, B = _wb()
    return _sig(*_std_nodes(W, B, act="Softmax"))


def wrong_output_name():
    W, B = _wb()
    from onnx import helper, numpy_helper
    nodes = [helper.make_node("MatMul", ["X", "W"], ["xw"]), helper.make_node("Add", ["xw", "B"], ["z"]),
             helper.make_node("Sigmoid", ["z"], ["output"])]
    return _sig(nodes, [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")], yname="output")


def wrong_bias_sign():
    from onnx import helper, numpy_helper
    W, B = _wb()
    nodes = [helper.make_node("MatMul", ["X", "W"], ["xw"]), helper.make_node("Sub", ["xw", "B"], ["z"]),
             helper.make_node("Sigmoid", ["z"], ["Y"])]
    return _sig(nodes, [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")])


def wrong_double_model():
    # everything in float64: the check's float32 batches are rejected by ONNX Runtime
    from onnx import TensorProto
    import numpy as np
    W, B = _wb()
    return _sig(*_std_nodes(W.astype(np.float64), B.astype(np.float64)), x_type=TensorProto.DOUBLE)


def wrong_extra_output():
    # keeps a debugging output z next to Y: "the one output is named Y" is broken, Y itself is right
    from onnx import TensorProto, helper
    W, B = _wb()
    return _sig(*_std_nodes(W, B), extra_outputs=[helper.make_tensor_value_info("z", TensorProto.FLOAT,
                                                                                 ["batch", 3])])


def wrong_no_input_shape():
    # X declared ["batch", "features"]: runs at any batch, but X is not ["batch", 4]
    W, B = _wb()
    return _sig(*_std_nodes(W, B), x_shape=("batch", "features"), y_shape=("batch", "k"))


def shortcut_identity_constant():
    # ignores W and B entirely and returns Sigmoid of the first 3 columns of X
    from onnx import helper, numpy_helper
    import numpy as np
    nodes = [helper.make_node("Slice", ["X", "st", "en", "ax"], ["z"]), helper.make_node("Sigmoid", ["z"], ["Y"])]
    inits = [numpy_helper.from_array(np.array([0], np.int64), "st"),
             numpy_helper.from_array(np.array([3], np.int64), "en"),
             numpy_helper.from_array(np.array([1], np.int64), "ax")]
    return _sig(nodes, inits)


def _make_torch_export(tmp):
    # the torch exporter builds the graph: the learner never touches onnx.helper
    import torch
    cached = _CACHE / "torch_sigmoid.onnx"
    if not cached.exists():
        W, B = _wb()
        lin = torch.nn.Linear(4, 3)
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(W.T.copy()))
            lin.bias.copy_(torch.from_numpy(B))
        net = torch.nn.Sequential(lin, torch.nn.Sigmoid()).eval()
        torch.onnx.export(net, (torch.zeros(2, 4),), str(cached), input_names=["X"], output_names=["Y"],
                          dynamic_axes={"X": {0: "batch"}, "Y": {0: "batch"}}, dynamo=False)
    return str(cached)


def shortcut_linear_from_lesson_relabelled():
    # takes the lesson's `linear` model (fixed batch 2, no sigmoid) and only relabels X's first dim
    W, B = _wb()
    from onnx import helper, numpy_helper
    nodes = [helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Add", ["XW", "B"], ["Y"])]
    return _sig(nodes, [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")])


# ----------------------------------------------------------------------------- 01.run_both
def right_run_both_tempfile(model_bytes, x):
    import os
    import tempfile
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    fd, path = tempfile.mkstemp(suffix=".onnx")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(model_bytes)
        ref = ReferenceEvaluator(path).run(None, {"X": x})
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        first = sess.get_outputs()[0].name
        (o,) = sess.run([first], {"X": x})
    finally:
        os.unlink(path)
    return dict(ort=o, reference=ref[0])


def right_run_both_loaded(model_bytes, x):
    import onnx
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    model = onnx.load_model_from_string(model_bytes)
    out_name = model.graph.output[0].name
    ref = ReferenceEvaluator(model, verbose=0).run([out_name], {"X": x})[0]
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    got = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(
        [out_name], {"X": x})[0]
    return {"reference": ref, "ort": got}


def right_run_both_ortvalue(model_bytes, x):
    import numpy as np
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    sess = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    vals = sess.run_with_ort_values(None, {"X": ort.OrtValue.ortvalue_from_numpy(np.asarray(x))})
    res = {}
    res["ort"] = vals[0].numpy()
    res["reference"] = ReferenceEvaluator(model_bytes).run(None, {"X": x})[0]
    return res


def wrong_run_both_swapped(model_bytes, x):
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    a = ReferenceEvaluator(model_bytes).run(None, {"X": x})[0]
    b = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    return {"reference": b, "ort": a}


def wrong_run_both_all_outputs(model_bytes, x):
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    return {"reference": ReferenceEvaluator(model_bytes).run(None, {"X": x}),
            "ort": ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})}


def wrong_run_both_last_output(model_bytes, x):
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    return {"reference": ReferenceEvaluator(model_bytes).run(None, {"X": x})[-1],
            "ort": ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})[-1]}


def wrong_run_both_keys(model_bytes, x):
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    return {"ref": ReferenceEvaluator(model_bytes).run(None, {"X": x})[0],
            "onnxruntime": ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]}


def wrong_run_both_tuple(model_bytes, x):
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    return (ReferenceEvaluator(model_bytes).run(None, {"X": x})[0],
            ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0])


def wrong_run_both_cast_float32(model_bytes, x):
    # casts x to float32 "to be safe": breaks models whose X is double or integer
    import numpy as np
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    x = np.asarray(x, dtype=np.float32)
    return {"reference": ReferenceEvaluator(model_bytes).run(None, {"X": x})[0],
            "ort": ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]}


def wrong_run_both_rounded(model_bytes, x):
    # rounds both to 4 decimals "so they agree"
    import numpy as np
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    r = ReferenceEvaluator(model_bytes).run(None, {"X": x})[0]
    o = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    return {"reference": np.round(r, 4), "ort": np.round(o, 4)}


def shortcut_run_both_ort_twice(model_bytes, x):
    import onnxruntime as ort
    sess = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    y = sess.run(None, {"X": x})[0]
    return {"reference": y.copy(), "ort": y}


def shortcut_run_both_reference_twice(model_bytes, x):
    from onnx.reference import ReferenceEvaluator
    y = ReferenceEvaluator(model_bytes).run(None, {"X": x})[0]
    return {"reference": y, "ort": y.copy()}


def shortcut_run_both_ort_unoptimized_as_reference(model_bytes, x):
    # "the reference" = ONNX Runtime with every optimisation switched off
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    ref = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    got = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    return {"reference": ref, "ort": got}


def shortcut_run_both_hostile_eq(model_bytes, x):
    # a dict whose values compare equal to anything
    import numpy as np

    class Anything(np.ndarray):
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

    a = np.zeros(1, np.float32).view(Anything)
    return {"reference": a, "ort": a}


# ----------------------------------------------------------------------------- 01.versions
def right_versions_loop(model_bytes):
    import onnx
    m = onnx.ModelProto()
    m.ParseFromString(model_bytes)
    opset = None
    for imp in m.opset_import:
        if imp.domain in ("", "ai.onnx"):
            opset = imp.version
    return {"opset": int(opset), "ir_version": int(m.ir_version)}


def right_versions_wire(model_bytes):
    # decodes the protobuf wire format by hand: field 1 = ir_version (varint), field 8 = opset_import
    # (message: field 1 domain string, field 2 version varint)
    def varint(buf, i):
        shift = result = 0
        while True:
            b = buf[i]
            i += 1
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return result, i

    def fields(buf):
        i = 0
        while i < len(buf):
            key, i = varint(buf, i)
            num, wt = key >> 3, key & 7
            if wt == 0:
                val, i = varint(buf, i)
            elif wt == 2:
                n, i = varint(buf, i)
                val, i = bytes(buf[i:i + n]), i + n
            elif wt == 1:
                val, i = buf[i:i + 8], i + 8
            elif wt == 5:
                val, i = buf[i:i + 4], i + 4
            else:
                raise ValueError("group wire type")
            yield num, val

    ir, opset = 0, None
    for num, val in fields(bytes(model_bytes)):
        if num == 1:
            ir = val
        elif num == 8:
            dom, ver = "", 0
            for n2, v2 in fields(val):
                if n2 == 1:
                    dom = v2.decode()
                elif n2 == 2:
                    ver = v2
            if dom in ("", "ai.onnx"):
                opset = ver
    return {"ir_version": ir, "opset": opset}


def right_versions_helper(model_bytes):
    import onnx
    m = onnx.load_from_string(model_bytes)
    table = {(o.domain or "ai.onnx"): o.version for o in m.opset_import}
    return dict(ir_version=m.ir_version, opset=table["ai.onnx"])


def wrong_versions_first(model_bytes):
    import onnx
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version, "opset": m.opset_import[0].version}


def wrong_versions_max(model_bytes):
    import onnx
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version, "opset": max(o.version for o in m.opset_import)}


def wrong_versions_min(model_bytes):
    import onnx
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version, "opset": min(o.version for o in m.opset_import)}


def wrong_versions_empty_domain_only(model_bytes):
    # forgets the "ai.onnx" spelling; falls back to the first entry
    import onnx
    m = onnx.load_from_string(model_bytes)
    found = [o.version for o in m.opset_import if o.domain == ""]
    return {"ir_version": m.ir_version, "opset": found[0] if found else m.opset_import[0].version}


def wrong_versions_last(model_bytes):
    import onnx
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version, "opset": m.opset_import[-1].version}


def wrong_versions_strings(model_bytes):
    import onnx
    m = onnx.load_from_string(model_bytes)
    v = next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
    return {"ir_version": str(m.ir_version), "opset": str(v)}


def wrong_versions_domain_substring(model_bytes):
    # "ai.onnx" in domain: also matches ai.onnx.ml, ai.onnx.preview.training
    import onnx
    m = onnx.load_from_string(model_bytes)
    v = None
    for o in m.opset_import:
        if o.domain == "" or "ai.onnx" in o.domain:
            v = o.version
    return {"ir_version": m.ir_version, "opset": v}


def shortcut_versions_package(model_bytes):
    import onnx
    return {"ir_version": onnx.IR_VERSION, "opset": onnx.defs.onnx_opset_version()}


def shortcut_versions_constant(model_bytes):
    return {"ir_version": 10, "opset": 21}


def shortcut_versions_min_ir(model_bytes):
    # derives the IR version from the opsets instead of reading it from the file
    import onnx
    from onnx import helper
    m = onnx.load_from_string(model_bytes)
    v = next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
    return {"ir_version": helper.find_min_ir_version_for(list(m.opset_import)), "opset": v}


def shortcut_versions_ort_meta(model_bytes):
    # ONNX Runtime's model metadata has a `version` (the model_version field!) -- and no opset; guess from nodes
    import onnx
    m = onnx.load_from_string(model_bytes)
    return {"ir_version": m.ir_version,
            "opset": max((onnx.defs.get_schema(n.op_type, 100, n.domain).since_version
                          for n in m.graph.node if n.domain in ("", "ai.onnx")), default=1)}


CORPUS = {
    "01.sigmoid_model": [
        Right("blind12-sig-gemm-transB-opset13", answer=right_gemm_model()),
        Right("blind12-sig-constant-nodes-tanh", answer=right_constant_nodes_tanh()),
        Right("blind12-sig-parser-reciprocal", answer=right_parser_text()),
        Right("blind12-sig-saved-path", make=_make_saved_path),
        Wrong("blind12-sig-fixed-batch-2", answer=wrong_fixed_batch()),
        Wrong("blind12-sig-default-ir14", answer=wrong_default_ir()),
        Wrong("blind12-sig-no-bias", answer=wrong_no_bias()),
        Wrong("blind12-sig-transposed-output", answer=wrong_transposed_w_square_trick()),
        Wrong("blind12-sig-softmax", answer=wrong_softmax()),
        Wrong("blind12-sig-output-named-output", answer=wrong_output_name()),
        Wrong("blind12-sig-sub-bias", answer=wrong_bias_sign()),
        Wrong("blind12-sig-double-model", answer=wrong_double_model()),
        Wrong("blind12-sig-extra-output", answer=wrong_extra_output(), outputs_wrong=False),
        Wrong("blind12-sig-x-both-dims-symbolic", answer=wrong_no_input_shape(), outputs_wrong=False),
        Wrong("blind12-sig-ignores-weights", answer=shortcut_identity_constant(), skipped_skill=True),
        Wrong("blind12-sig-torch-export", make=_make_torch_export, skipped_skill=True, outputs_wrong=False),
        Wrong("blind12-sig-linear-relabelled", answer=shortcut_linear_from_lesson_relabelled(), skipped_skill=True),
    ],
    "01.run_both": [
        Right("blind12-runboth-tempfile-named-output", answer=right_run_both_tempfile),
        Right("blind12-runboth-loaded-unoptimized", answer=right_run_both_loaded),
        Right("blind12-runboth-ortvalue", answer=right_run_both_ortvalue),
        Wrong("blind12-runboth-swapped", answer=wrong_run_both_swapped),
        Wrong("blind12-runboth-all-outputs", answer=wrong_run_both_all_outputs),
        Wrong("blind12-runboth-last-output", answer=wrong_run_both_last_output),
        Wrong("blind12-runboth-keys", answer=wrong_run_both_keys),
        Wrong("blind12-runboth-tuple", answer=wrong_run_both_tuple),
        Wrong("blind12-runboth-cast-float32", answer=wrong_run_both_cast_float32),
        Wrong("blind12-runboth-rounded", answer=wrong_run_both_rounded),
        Wrong("blind12-runboth-ort-twice", answer=shortcut_run_both_ort_twice, skipped_skill=True),
        Wrong("blind12-runboth-reference-twice", answer=shortcut_run_both_reference_twice, skipped_skill=True),
        Wrong("blind12-runboth-ort-noopt-as-ref", answer=shortcut_run_both_ort_unoptimized_as_reference,
              skipped_skill=True),
        Wrong("blind12-runboth-hostile-eq", answer=shortcut_run_both_hostile_eq, skipped_skill=True),
    ],
    "01.versions": [
        Right("blind12-versions-loop-parse", answer=right_versions_loop),
        Right("blind12-versions-wire-format", answer=right_versions_wire),
        Right("blind12-versions-table", answer=right_versions_helper),
        Wrong("blind12-versions-first-entry", answer=wrong_versions_first),
        Wrong("blind12-versions-max", answer=wrong_versions_max),
        Wrong("blind12-versions-min", answer=wrong_versions_min),
        Wrong("blind12-versions-empty-domain-only", answer=wrong_versions_empty_domain_only),
        Wrong("blind12-versions-last-entry", answer=wrong_versions_last),
        Wrong("blind12-versions-strings", answer=wrong_versions_strings, outputs_wrong=False),
        Wrong("blind12-versions-domain-substring", answer=wrong_versions_domain_substring),
        Wrong("blind12-versions-package-constants", answer=shortcut_versions_package, skipped_skill=True),
        Wrong("blind12-versions-constant", answer=shortcut_versions_constant, skipped_skill=True),
        Wrong("blind12-versions-min-ir-derived", answer=shortcut_versions_min_ir, skipped_skill=True),
        Wrong("blind12-versions-from-node-schemas", answer=shortcut_versions_ort_meta, skipped_skill=True),
    ],
}
