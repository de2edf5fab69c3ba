"""Blind entries, copied from /work/blind2/l02.py (issue 32): written by a helper who never read the judges or this corpus
(their README: /work/blind2/README.md). tests/corpus/l02.py adds them to its CORPUS.

Blind corpus, lesson 02 (written without seeing the judges).
"""
import math
import os
import re

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference, version_converter

from corpus import Right, Wrong

FLOATS = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}


# ================================================================ 02.count_params

def _cos_value_is_float(node):
    for a in node.attribute:
        if a.name == "value":
            return a.t.data_type in FLOATS
    return True                               # no value: float zeros


def _count_loop(model):
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    total = 0
    for t in g.initializer:
        if t.data_type in FLOATS:
            total += math.prod(t.dims)
    for n in g.node:
        if n.op_type == "ConstantOfShape" and n.input and n.input[0] in inits and _cos_value_is_float(n):
            total += math.prod(int(v) for v in numpy_helper.to_array(inits[n.input[0]]).ravel())
    return int(total)


def _count_generators(model):
    inits = {t.name: t for t in model.graph.initializer}
    stored = sum(int(np.prod(t.dims, dtype=np.int64)) for t in inits.values()
                 if TensorProto.DataType.Name(t.data_type) in ("FLOAT", "FLOAT16", "DOUBLE", "BFLOAT16"))

    def value_type(n):
        vals = [helper.get_attribute_value(a) for a in n.attribute if a.name == "value"]
        return vals[0].data_type if vals else TensorProto.FLOAT

    made = sum(int(np.prod(numpy_helper.to_array(inits[n.input[0]]).astype(np.int64)))
               for n in model.graph.node
               if n.op_type == "ConstantOfShape" and n.input[0] in inits and value_type(n) in FLOATS)
    return int(stored + made)


def _count_via_np_dtype(model):
    """Floating-point test through numpy's dtype kind (bfloat16 has no numpy dtype: by name)."""
    inits = {t.name: t for t in model.graph.initializer}

    def is_float(dt):
        if dt == TensorProto.BFLOAT16:
            return True
        try:
            return np.dtype(helper.tensor_dtype_to_np_dtype(dt)).kind == "f"
        except Exception:
            return False

    n = 0
    for t in inits.values():
        if is_float(t.data_type):
            n += int(np.prod(list(t.dims) or [1]))
    for node in model.graph.node:
        if node.op_type != "ConstantOfShape" or len(node.input) == 0 or node.input[0] not in inits:
            continue
        value = next((a.t for a in node.attribute if a.name == "value"), None)
        if value is None or is_float(value.data_type):
            shape = numpy_helper.to_array(inits[node.input[0]])
            n += int(np.prod(shape.astype(np.int64))) if shape.size else 1
    return n


def _count_all_inits(model):
    inits = {t.name: t for t in model.graph.initializer}
    total = sum(math.prod(t.dims) for t in model.graph.initializer)     # int shapes counted too
    for n in model.graph.node:
        if n.op_type == "ConstantOfShape" and n.input[0] in inits and _cos_value_is_float(n):
            total += math.prod(numpy_helper.to_array(inits[n.input[0]]).tolist())
    return int(total)


def _count_no_cos(model):
    return int(sum(math.prod(t.dims) for t in model.graph.initializer if t.data_type in FLOATS))


def _count_cos_any_type(model):
    inits = {t.name: t for t in model.graph.initializer}
    total = _count_no_cos(model)
    for n in model.graph.node:
        if n.op_type == "ConstantOfShape" and n.input[0] in inits:
            total += math.prod(numpy_helper.to_array(inits[n.input[0]]).tolist())
    return int(total)


def _count_cos_needs_value(model):
    inits = {t.name: t for t in model.graph.initializer}
    total = _count_no_cos(model)
    for n in model.graph.node:
        if n.op_type == "ConstantOfShape" and n.input[0] in inits and n.attribute \
                and n.attribute[0].t.data_type in FLOATS:
            total += math.prod(numpy_helper.to_array(inits[n.input[0]]).tolist())
    return int(total)


def _count_with_inputs(model):
    total = _count_loop(model)
    for v in model.graph.input:                 # old models list every initializer again
        dims = [d.dim_value for d in v.type.tensor_type.shape.dim]
        if v.type.tensor_type.elem_type in FLOATS and all(dims):
            total += math.prod(dims)
    return int(total)


def _count_tensors(model):
    return len([t for t in model.graph.initializer if t.data_type in FLOATS]) + \
        len([n for n in model.graph.node if n.op_type == "ConstantOfShape"])


def _count_numpy_int(model):
    inits = {t.name: t for t in model.graph.initializer}
    total = np.int64(0)
    for t in inits.values():
        if t.data_type in FLOATS:
            total += np.prod(t.dims, dtype=np.int64)
    for n in model.graph.node:
        if n.op_type == "ConstantOfShape" and n.input[0] in inits and _cos_value_is_float(n):
            total += np.prod(numpy_helper.to_array(inits[n.input[0]]))
    return total                                   # numpy.int64, not int


def _count_float32_only(model):
    inits = {t.name: t for t in model.graph.initializer}
    total = sum(math.prod(t.dims) for t in model.graph.initializer if t.data_type == TensorProto.FLOAT)
    for n in model.graph.node:
        if n.op_type == "ConstantOfShape" and n.input[0] in inits and _cos_value_is_float(n):
            total += math.prod(numpy_helper.to_array(inits[n.input[0]]).tolist())
    return int(total)


def _count_no_bf16(model):
    ok = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE}
    inits = {t.name: t for t in model.graph.initializer}
    total = sum(math.prod(t.dims) for t in model.graph.initializer if t.data_type in ok)
    for n in model.graph.node:
        if n.op_type == "ConstantOfShape" and n.input[0] in inits:
            v = next((a.t for a in n.attribute if a.name == "value"), None)
            if v is None or v.data_type in ok:
                total += math.prod(numpy_helper.to_array(inits[n.input[0]]).tolist())
    return int(total)


def _count_bytes(model):
    return int(sum(len(numpy_helper.to_array(t).tobytes()) for t in model.graph.initializer
                   if t.data_type in FLOATS))


def _count_cos_rank(model):
    inits = {t.name: t for t in model.graph.initializer}
    total = _count_no_cos(model)
    for n in model.graph.node:
        if n.op_type == "ConstantOfShape" and n.input[0] in inits and _cos_value_is_float(n):
            total += math.prod(inits[n.input[0]].dims)          # the rank, not the product of the shape
    return int(total)


def _count_dedup_shapes(model):
    inits = {t.name: t for t in model.graph.initializer}
    total = _count_no_cos(model)
    seen = set()
    for n in model.graph.node:
        if n.op_type == "ConstantOfShape" and n.input[0] in inits and _cos_value_is_float(n) \
                and n.input[0] not in seen:
            seen.add(n.input[0])                                # one shape, counted once
            total += math.prod(numpy_helper.to_array(inits[n.input[0]]).tolist())
    return int(total)


def _count_hardcoded(model):
    return 25_610_153          # the light ResNet-50, counted once in the notebook


def _count_nodes_as_initializers(model):
    """Counts every ConstantOfShape, also one fed by a computed shape (guessing its size as 1)."""
    inits = {t.name: t for t in model.graph.initializer}
    total = _count_no_cos(model)
    for n in model.graph.node:
        if n.op_type == "ConstantOfShape" and _cos_value_is_float(n):
            total += math.prod(numpy_helper.to_array(inits[n.input[0]]).tolist()) if n.input[0] in inits else 1
    return int(total)


# ================================================================ 02.bad_initializer

def _strict_error(model):
    try:
        shape_inference.infer_shapes(model, strict_mode=True)
        return None
    except Exception as e:   # noqa: BLE001
        return str(e)


def _bad_parse(model):
    msg = _strict_error(model)
    if msg is None:
        return None
    node_name = re.search(r"node name:\s*([^)]*)\)", msg).group(1).strip()
    inits = {t.name for t in model.graph.initializer}
    node = next(n for n in model.graph.node if n.name == node_name)
    return next(i for i in node.input if i in inits)


def _bad_prefix(model):
    """No message parsing: grow the graph one node at a time until strict inference fails."""
    g = model.graph
    if _strict_error(model) is None:
        return None
    inits = {t.name for t in g.initializer}
    declared = {o.name: o for o in g.output}
    for k in range(1, len(g.node) + 1):
        nodes = list(g.node[:k])
        outs = [declared.get(o) or helper.make_empty_tensor_value_info(o) for n in nodes for o in n.output
                if o in declared or n is nodes[-1]]
        sub = helper.make_graph(nodes, "prefix", list(g.input), outs, list(g.initializer))
        m = helper.make_model(sub, opset_imports=list(model.opset_import), ir_version=model.ir_version)
        if _strict_error(m) is not None:
            return [i for i in nodes[-1].input if i in inits][0]
    return None


def _bad_per_node_probe(model):
    """Probe each node alone, its non-initializer inputs typed by (non-strict) inference of the whole graph."""
    if _strict_error(model) is None:
        return None
    inferred = shape_inference.infer_shapes(model)
    known = {v.name: v for v in list(inferred.graph.value_info) + list(model.graph.input) + list(model.graph.output)}
    inits = {t.name: t for t in model.graph.initializer}
    for node in model.graph.node:
        ins = [known[i] for i in node.input if i not in inits and i in known]
        if len(ins) + sum(i in inits for i in node.input) < len(node.input):
            continue
        outs = [known.get(o) or helper.make_empty_tensor_value_info(o) for o in node.output]
        g = helper.make_graph([node], "one", ins, outs, [inits[i] for i in node.input if i in inits])
        m = helper.make_model(g, opset_imports=list(model.opset_import), ir_version=model.ir_version)
        if _strict_error(m) is not None:
            return next(i for i in node.input if i in inits)
    return _bad_parse(model)


def _bad_node_name(model):
    msg = _strict_error(model)
    return None if msg is None else re.search(r"node name:\s*([^)]*)\)", msg).group(1).strip()


def _bad_first_init(model):
    return None if _strict_error(model) is None else model.graph.initializer[0].name


def _bad_last_init(model):
    return None if _strict_error(model) is None else model.graph.initializer[-1].name


def _bad_first_node_init(model):
    if _strict_error(model) is None:
        return None
    inits = {t.name for t in model.graph.initializer}
    return next(i for n in model.graph.node for i in n.input if i in inits)


def _bad_non_strict(model):
    try:
        shape_inference.infer_shapes(model)            # non-strict: never raises here
    except Exception as e:   # noqa: BLE001
        return str(e)
    return None


def _bad_second_input(model):
    msg = _strict_error(model)
    if msg is None:
        return None
    node_name = re.search(r"node name:\s*([^)]*)\)", msg).group(1).strip()
    node = next(n for n in model.graph.node if n.name == node_name)
    return node.input[1]                              # assumes the weight always comes second


def _bad_empty_string(model):
    r = _bad_parse(model)
    return "" if r is None else r


def _bad_message(model):
    return _strict_error(model)


def _bad_chain_by_stored_order(model):
    """Walks the initializers in stored order, expecting each matrix to start where the last one ended."""
    cols = None
    for t in model.graph.initializer:
        if len(t.dims) != 2:
            continue
        if cols is not None and t.dims[0] != cols:
            return t.name
        cols = t.dims[1]
    return None


def _bad_always_none(model):
    return None


def _bad_largest(model):
    if _strict_error(model) is None:
        return None
    return max(model.graph.initializer, key=lambda t: math.prod(t.dims)).name


# ================================================================ 02.repair_conversion

def _to_repair():
    from labkit.material.l02 import model_to_repair
    return model_to_repair()


def _relabel(model, opset):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = opset
    return m


def _repair_from_11():
    return version_converter.convert_version(_relabel(_to_repair(), 11), 21)


def _repair_from_12():
    back = _to_repair()
    del back.opset_import[:]
    back.opset_import.append(helper.make_opsetid("", 12))
    return version_converter.convert_version(back, 21)


def _repair_by_hand():
    src = _to_repair()
    inits = list(src.graph.initializer)
    ax = lambda name, vals: numpy_helper.from_array(np.array(vals, np.int64), name)   # noqa: E731
    inits += [ax("axes_23", [2, 3]), ax("axes_1", [1]), ax("split_32", [3, 2])]
    nodes = [
        helper.make_node("ReduceMean", ["X", "axes_23"], ["pooled"], keepdims=1, name="pool"),
        helper.make_node("Squeeze", ["pooled", "axes_23"], ["flat"], name="squeeze"),
        helper.make_node("MatMul", ["flat", "W"], ["logits"], name="fc"),
        helper.make_node("Split", ["logits", "split_32"], ["left", "right"], axis=1, name="split"),
        helper.make_node("Softmax", ["left"], ["p_left"], axis=1, name="softmax"),
        helper.make_node("Unsqueeze", ["right", "axes_1"], ["right3"], name="unsqueeze"),
        helper.make_node("ReduceSum", ["right3", "axes_1"], ["r_sum"], keepdims=0, name="rsum"),
        helper.make_node("Concat", ["p_left", "r_sum"], ["Y"], axis=1, name="concat"),
    ]
    g = helper.make_graph(nodes, src.graph.name, list(src.graph.input), list(src.graph.output), inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def _repair_saved(tmp):
    p = os.path.join(tmp, "repaired.onnx")
    onnx.save(_repair_from_11(), p)
    return p


def _repair_relabel_only():
    return _relabel(_to_repair(), 11)                 # valid, but opset 11, not 21


def _repair_convert_as_is():
    try:
        return version_converter.convert_version(_to_repair(), 21)
    except Exception:   # noqa: BLE001
        return _to_repair()


def _repair_to_18():
    return version_converter.convert_version(_relabel(_to_repair(), 11), 18)


def _repair_strip_attrs():
    m = _to_repair()
    for n in m.graph.node:
        keep = [a for a in n.attribute if a.name not in ("axes", "split")]
        del n.attribute[:]
        n.attribute.extend(keep)
        if n.op_type == "Split":
            n.attribute.append(helper.make_attribute("num_outputs", 2))
    return m


def _repair_hand_off_by_one():
    m = _repair_by_hand()
    for t in m.graph.initializer:
        if t.name == "axes_1":
            t.CopyFrom(numpy_helper.from_array(np.array([2], np.int64), "axes_1"))  # reduces the wrong axis
    for n in m.graph.node:
        if n.op_type == "Unsqueeze":
            n.input[1] = "axes_23"
    return m


def _repair_hand_forgot_keepdims():
    m = _repair_by_hand()
    for n in m.graph.node:
        if n.op_type == "ReduceSum":
            del n.attribute[:]                            # keepdims now defaults to 1: (N, 1, 2), not (N, 2)
    return m


def _repair_hand_softmax_axis0():
    m = _repair_by_hand()
    for n in m.graph.node:
        if n.op_type == "Softmax":
            del n.attribute[:]
            n.attribute.append(helper.make_attribute("axis", 0))    # "opset 13 changed axis": over the batch
    return m


def _repair_identity_nodes():
    m = version_converter.convert_version(_relabel(_to_repair(), 11), 21)
    for n in m.graph.node:
        if n.op_type == "Softmax":
            n.op_type = "Identity"
            del n.attribute[:]
    return m


def _repair_from_13():
    try:
        return version_converter.convert_version(_relabel(_to_repair(), 13), 21)
    except Exception:   # noqa: BLE001
        return _relabel(_to_repair(), 13)


def _repair_softmax_last_only():
    """Fixes only the node the checker names first (ReduceMean), leaving the rest old-style."""
    m = _to_repair()
    m.graph.initializer.append(numpy_helper.from_array(np.array([2, 3], np.int64), "ax"))
    n = m.graph.node[0]
    del n.attribute[:]
    n.input.append("ax")
    n.attribute.append(helper.make_attribute("keepdims", 1))
    return m


CORPUS = {
    "02.count_params": [
        Right("blind2-count-math-prod-loop", answer=_count_loop),
        Right("blind2-count-generator-sums", answer=_count_generators),
        Right("blind2-count-numpy-dtype-kind", answer=_count_via_np_dtype),
        Wrong("blind2-count-all-initializers", answer=_count_all_inits),
        Wrong("blind2-count-no-constantofshape", answer=_count_no_cos),
        Wrong("blind2-count-cos-any-value-type", answer=_count_cos_any_type),
        Wrong("blind2-count-cos-needs-value-attr", answer=_count_cos_needs_value),
        Wrong("blind2-count-plus-graph-inputs", answer=_count_with_inputs),
        Wrong("blind2-count-tensors-not-elements", answer=_count_tensors),
        Wrong("blind2-count-numpy-int64", answer=_count_numpy_int, outputs_wrong=False),
        Wrong("blind2-count-float32-only", answer=_count_float32_only),
        Wrong("blind2-count-no-bfloat16", answer=_count_no_bf16),
        Wrong("blind2-count-bytes", answer=_count_bytes),
        Wrong("blind2-count-cos-rank", answer=_count_cos_rank),
        Wrong("blind2-count-dedup-shape-inits", answer=_count_dedup_shapes),
        Wrong("blind2-count-hardcoded-resnet", answer=_count_hardcoded, skipped_skill=True),
        Wrong("blind2-count-computed-cos-as-one", answer=_count_nodes_as_initializers),
    ],
    "02.bad_initializer": [
        Right("blind2-bad-parse-node-name", answer=_bad_parse),
        Right("blind2-bad-grow-prefix", answer=_bad_prefix),
        Right("blind2-bad-probe-each-node", answer=_bad_per_node_probe),
        Wrong("blind2-bad-node-name", answer=_bad_node_name),
        Wrong("blind2-bad-first-stored", answer=_bad_first_init),
        Wrong("blind2-bad-last-stored", answer=_bad_last_init),
        Wrong("blind2-bad-first-node-weight", answer=_bad_first_node_init),
        Wrong("blind2-bad-non-strict", answer=_bad_non_strict),
        Wrong("blind2-bad-second-input", answer=_bad_second_input),
        Wrong("blind2-bad-empty-string", answer=_bad_empty_string, outputs_wrong=False),
        Wrong("blind2-bad-message", answer=_bad_message),
        Wrong("blind2-bad-stored-order-chain", answer=_bad_chain_by_stored_order),
        Wrong("blind2-bad-always-none", answer=_bad_always_none, skipped_skill=True),
        Wrong("blind2-bad-largest", answer=_bad_largest),
    ],
    "02.repair_conversion": [
        Right("blind2-repair-relabel11-convert", answer=_repair_from_11()),
        Right("blind2-repair-relabel12-convert", answer=_repair_from_12()),
        Right("blind2-repair-by-hand", answer=_repair_by_hand()),
        Right("blind2-repair-saved-path", make=_repair_saved),
        Wrong("blind2-repair-relabel-only", answer=_repair_relabel_only(), outputs_wrong=False),
        Wrong("blind2-repair-convert-as-is", answer=_repair_convert_as_is(), skipped_skill=True),
        Wrong("blind2-repair-untouched", answer=_to_repair(), skipped_skill=True),
        Wrong("blind2-repair-stops-at-18", answer=_repair_to_18(), outputs_wrong=False),
        Wrong("blind2-repair-strip-attributes", answer=_repair_strip_attrs()),
        Wrong("blind2-repair-hand-wrong-axis", answer=_repair_hand_off_by_one()),
        Wrong("blind2-repair-hand-keepdims-patch", answer=_repair_hand_forgot_keepdims()),
        Wrong("blind2-repair-hand-softmax-axis0", answer=_repair_hand_softmax_axis0()),
        Wrong("blind2-repair-softmax-dropped", answer=_repair_identity_nodes()),
        Wrong("blind2-repair-relabel13", answer=_repair_from_13()),
        Wrong("blind2-repair-first-node-only", answer=_repair_softmax_last_only()),
    ],
}
