"""Blind corpus round 3, lesson 02 (written without seeing the judges)."""
import atexit as _atexit, shutil as _shutil, tempfile as _tempfile  # noqa: E401
_BLIND3_CACHE = __import__("pathlib").Path(_tempfile.mkdtemp(prefix="blind3-cache-"))  # per process: no race
_atexit.register(_shutil.rmtree, _BLIND3_CACHE, True)
import math
import re

import numpy as np

from corpus import Right, Wrong

_FLOATS = (1, 10, 11, 16)  # FLOAT, FLOAT16, DOUBLE, BFLOAT16


# ---------------------------------------------------------------- 02.count_params
def _cp_loops(model):
    from onnx import TensorProto, helper, numpy_helper
    floats = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}
    stored = {t.name: t for t in model.graph.initializer}
    total = 0
    for t in model.graph.initializer:
        if t.data_type in floats:
            total += math.prod(t.dims)
    for n in model.graph.node:
        if n.op_type != "ConstantOfShape" or not n.input or n.input[0] not in stored:
            continue
        value = next((helper.get_attribute_value(a) for a in n.attribute if a.name == "value"), None)
        if value is None or value.data_type in floats:
            total += math.prod(int(d) for d in numpy_helper.to_array(stored[n.input[0]]).reshape(-1))
    return total


def _cp_numpy(model):
    from onnx import numpy_helper
    arrays = {t.name: t for t in model.graph.initializer}
    sizes = [numpy_helper.to_array(t).size for t in arrays.values() if t.data_type in _FLOATS]
    for node in model.graph.node:
        if node.op_type == "ConstantOfShape" and node.input and node.input[0] in arrays:
            attrs = {a.name: a.t for a in node.attribute}
            if "value" in attrs and attrs["value"].data_type not in _FLOATS:
                continue
            shape = numpy_helper.to_array(arrays[node.input[0]])
            sizes.append(int(np.prod(shape.astype(object))) if shape.size else 1)
    return int(sum(sizes))


def _cp_generator(model):
    from onnx import numpy_helper
    g = model.graph
    init = {t.name: t for t in g.initializer}

    def made(node):
        vals = [a.t for a in node.attribute if a.name == "value"]
        if vals and vals[0].data_type not in _FLOATS:
            return 0
        dims = numpy_helper.to_array(init[node.input[0]]).tolist()
        return math.prod(dims if isinstance(dims, list) else [dims])

    return sum(math.prod(t.dims) for t in g.initializer if t.data_type in _FLOATS) + sum(
        made(n) for n in g.node if n.op_type == "ConstantOfShape" and n.input and n.input[0] in init)


def _cp_all_inits(model):  # integer shapes counted too
    return int(sum(math.prod(t.dims) for t in model.graph.initializer)) + _cos(model)


def _cos(model, need_init=True, check_type=True, no_value_counts=True):
    from onnx import numpy_helper
    init = {t.name: t for t in model.graph.initializer}
    total = 0
    for n in model.graph.node:
        if n.op_type != "ConstantOfShape":
            continue
        if n.input[0] not in init:
            continue
        vals = [a.t for a in n.attribute if a.name == "value"]
        if not vals and not no_value_counts:
            continue
        if vals and check_type and vals[0].data_type not in _FLOATS:
            continue
        total += int(np.prod(numpy_helper.to_array(init[n.input[0]])))
    return total


def _cp_floats_only(model):
    return int(sum(math.prod(t.dims) for t in model.graph.initializer if t.data_type in _FLOATS))


def _cp_no_value_skipped(model):
    return _cp_floats_only(model) + _cos(model, no_value_counts=False)


def _cp_value_type_ignored(model):
    return _cp_floats_only(model) + _cos(model, check_type=False)


def _cp_with_inputs(model):  # graph inputs that repeat the initializers counted again
    extra = 0
    inits = {t.name: t for t in model.graph.initializer}
    for i in model.graph.input:
        if i.name in inits and inits[i.name].data_type in _FLOATS:
            extra += math.prod(inits[i.name].dims)
    return _cp_loops(model) + extra


def _cp_numpy_int(model):  # np.int64 handed back
    total = np.int64(0)
    for t in model.graph.initializer:
        if t.data_type in _FLOATS:
            total += np.prod(t.dims, dtype=np.int64)
    return total + np.int64(_cos(model))


def _cp_float_result(model):
    return float(_cp_loops(model))


def _cp_tensor_count(model):  # number of weight tensors, not of numbers
    return sum(1 for t in model.graph.initializer if t.data_type in _FLOATS) + sum(
        1 for n in model.graph.node if n.op_type == "ConstantOfShape")


def _cp_float32_only(model):
    return int(sum(math.prod(t.dims) for t in model.graph.initializer if t.data_type == 1)) + _cos(model)


def _cp_shape_length(model):  # ConstantOfShape counted by the length of its shape vector
    inits = {t.name: t for t in model.graph.initializer}
    return _cp_floats_only(model) + sum(
        math.prod(inits[n.input[0]].dims) for n in model.graph.node if n.op_type == "ConstantOfShape" and n.input[0] in inits)


def _cp_computed_too(model):  # a ConstantOfShape fed by Shape(...) counted with shape inference's guess
    from onnx import shape_inference
    inferred = shape_inference.infer_shapes(model)
    shapes = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    extra = 0
    inits = {t.name for t in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "ConstantOfShape" and n.input[0] not in inits and n.output[0] in shapes:
            dims = shapes[n.output[0]].type.tensor_type.shape.dim
            extra += math.prod(d.dim_value if d.dim_value else 1 for d in dims)
    return _cp_loops(model) + extra


# ---------------------------------------------------------------- 02.bad_initializer
def _bi_prefix(model):
    """No message parsing: strict inference on the first k nodes, k = 1, 2, ...; the first failing prefix ends at
    the node to blame."""
    import onnx
    from onnx import shape_inference
    try:
        shape_inference.infer_shapes(model, strict_mode=True)
        return None
    except Exception:
        pass
    stored = {t.name for t in model.graph.initializer}
    for k in range(1, len(model.graph.node) + 1):
        trial = onnx.ModelProto()
        trial.CopyFrom(model)
        del trial.graph.node[k:]
        del trial.graph.output[:]
        last = trial.graph.node[-1]
        trial.graph.output.extend([onnx.helper.make_empty_tensor_value_info(o) for o in last.output])
        try:
            shape_inference.infer_shapes(trial, strict_mode=True)
        except Exception:
            culprits = [i for i in last.input if i in stored]
            return culprits[0] if culprits else None
    return None


def _bi_regex(model):
    from onnx.shape_inference import infer_shapes
    try:
        infer_shapes(model, check_type=True, strict_mode=True)
    except Exception as err:
        found = re.search(r"node name:\s*([^)]+?)\s*\)", str(err))
        if not found:
            return None
        node = {n.name: n for n in model.graph.node}[found.group(1)]
        weights = [t.name for t in model.graph.initializer]
        return next(i for i in node.input if i in weights)
    return None


def _bi_node_by_node(model):
    """ONNX's own per-node inference (infer_node_outputs), node after node, types carried along by hand."""
    import onnx
    from onnx import helper, shape_inference
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    types = {v.name: v.type for v in model.graph.input}
    for t in model.graph.initializer:
        types[t.name] = helper.make_tensor_type_proto(t.data_type, list(t.dims))
    stored = {t.name for t in model.graph.initializer}
    for node in model.graph.node:
        schema = onnx.defs.get_schema(node.op_type, opset, node.domain)
        try:
            out = shape_inference.infer_node_outputs(schema, node, {i: types[i] for i in node.input if i})
        except Exception:
            return next((i for i in node.input if i in stored), None)
        types.update(out)
    return None


def _bi_node_name(model):  # the node, not its initializer
    from onnx.shape_inference import infer_shapes
    try:
        infer_shapes(model, strict_mode=True)
    except Exception as err:
        return re.search(r"node name:\s*([^)]+?)\s*\)", str(err)).group(1)
    return None


def _bi_second_input(model):  # "the weight is the second input" - not when Add reads its bias first
    from onnx.shape_inference import infer_shapes
    try:
        infer_shapes(model, strict_mode=True)
    except Exception as err:
        name = re.search(r"node name:\s*([^)]+?)\s*\)", str(err)).group(1)
        return next(n for n in model.graph.node if n.name == name).input[1]
    return None


def _bi_not_strict(model):  # forgot strict_mode: nothing ever raises
    from onnx.shape_inference import infer_shapes
    try:
        infer_shapes(model)
    except Exception as err:
        name = re.search(r"node name:\s*([^)]+?)\s*\)", str(err)).group(1)
        node = next(n for n in model.graph.node if n.name == name)
        return next(i for i in node.input if i in {t.name for t in model.graph.initializer})
    return None


def _bi_never_none(model):  # the last initializer when nothing is named
    r = _bi_regex(model)
    return r if r is not None else model.graph.initializer[-1].name


def _bi_transposed_guess(model):  # no inference: "a 2-D weight whose rows do not match the previous columns"
    prev_cols = None
    {t.name: list(t.dims) for t in model.graph.initializer}
    for t in model.graph.initializer:  # stored order, not graph order
        d = list(t.dims)
        if len(d) == 2:
            if prev_cols is not None and d[0] != prev_cols:
                return t.name
            prev_cols = d[1]
    return None


def _bi_message(model):  # hands back the message
    from onnx.shape_inference import infer_shapes
    try:
        infer_shapes(model, strict_mode=True)
    except Exception as err:
        return str(err)
    return None


def _bi_last_init_order(model):  # of the failing node's initializers... picked from the stored list by position
    from onnx.shape_inference import infer_shapes
    try:
        infer_shapes(model, strict_mode=True)
    except Exception as err:
        name = re.search(r"node name:\s*([^)]+?)\s*\)", str(err)).group(1)
        idx = [n.name for n in model.graph.node].index(name)
        return model.graph.initializer[idx].name  # assumes one initializer per node, stored in node order
    return None


def _bi_computed_input(model):  # the failing node's input that is NOT stored
    from onnx.shape_inference import infer_shapes
    try:
        infer_shapes(model, strict_mode=True)
    except Exception as err:
        name = re.search(r"node name:\s*([^)]+?)\s*\)", str(err)).group(1)
        node = next(n for n in model.graph.node if n.name == name)
        stored = {t.name for t in model.graph.initializer}
        return next(i for i in node.input if i not in stored)
    return None


def _bi_in_place(model):  # the prefix search, done on the caller's model: its nodes are cut away
    from onnx import shape_inference
    try:
        shape_inference.infer_shapes(model, strict_mode=True)
        return None
    except Exception:
        pass
    stored = {t.name for t in model.graph.initializer}
    nodes = list(model.graph.node)
    del model.graph.output[:]
    for k in range(1, len(nodes) + 1):
        del model.graph.node[:]
        model.graph.node.extend(nodes[:k])
        try:
            shape_inference.infer_shapes(model, strict_mode=True)
        except Exception:
            return next(i for i in nodes[k - 1].input if i in stored)
    return None


# ---------------------------------------------------------------- 02.repair_conversion
def _broken():
    from labkit.material.l02 import model_to_repair
    return model_to_repair()


def _rc_from11():
    from onnx import version_converter
    m = _broken()
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = 11
    return version_converter.convert_version(m, 21)


def _rc_from12_ir10():
    import onnx
    from onnx import version_converter
    m = _broken()
    del m.opset_import[:]
    m.opset_import.append(onnx.helper.make_opsetid("", 12))
    out = version_converter.convert_version(m, 21)
    out.ir_version = 10
    return out


def _rc_by_hand():
    """Each node rewritten by hand in its opset-21 form: attributes that became inputs are now int64 initializers."""
    from onnx import helper, numpy_helper
    m = _broken()
    moved = {"ReduceMean": "axes", "Squeeze": "axes", "Unsqueeze": "axes", "ReduceSum": "axes", "Split": "split"}
    new_nodes, extra = [], []
    for n in m.graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        inputs = list(n.input)
        if n.op_type in moved and moved[n.op_type] in attrs:
            const = f"{n.name}_{moved[n.op_type]}"
            extra.append(numpy_helper.from_array(np.array(attrs.pop(moved[n.op_type]), dtype=np.int64), const))
            inputs.append(const)
        new_nodes.append(helper.make_node(n.op_type, inputs, list(n.output), name=n.name, **attrs))
    del m.graph.node[:]
    m.graph.node.extend(new_nodes)
    m.graph.initializer.extend(extra)
    m.ir_version = 10
    return m


def _rc_simplified():
    """By hand, and simpler: Unsqueeze on axis 1 then ReduceSum over axis 1 is the identity, so both go; GlobalAveragePool +
    Flatten replace ReduceMean + Squeeze."""
    import onnx
    from onnx import helper
    src = _broken()
    W = next(t for t in src.graph.initializer if t.name == "W")
    nodes = [
        helper.make_node("GlobalAveragePool", ["X"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["feat"], axis=1),
        helper.make_node("MatMul", ["feat", "W"], ["z"]),
        helper.make_node("Slice", ["z", "s0", "s3", "ax1"], ["a"]),
        helper.make_node("Slice", ["z", "s3", "s5", "ax1"], ["b"]),
        helper.make_node("Softmax", ["a"], ["pa"], axis=-1),
        helper.make_node("Concat", ["pa", "b"], ["Y"], axis=-1),
    ]
    ints = [onnx.numpy_helper.from_array(np.array([v], np.int64), n) for n, v in
            (("s0", 0), ("s3", 3), ("s5", 5), ("ax1", 1))]
    g = helper.make_graph(nodes, "repaired", list(src.graph.input), list(src.graph.output), [W, *ints])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def _rc_unchanged():
    return _broken()


def _rc_convert_in_place():  # convert_version(…, 21) on a model that already says 21: nothing to do
    from onnx import version_converter
    return version_converter.convert_version(_broken(), 21)


def _rc_left_at_11():  # valid again, but at opset 11, not 21
    m = _broken()
    m.opset_import[0].version = 11
    return m


def _rc_from17():  # went back only as far as ReduceMean needed
    from onnx import version_converter
    m = _broken()
    m.opset_import[0].version = 17
    return version_converter.convert_version(m, 21)


def _rc_attrs_deleted():  # "the checker rejects the attribute: delete it" (ReduceMean then averages everything)
    m = _broken()
    for n in m.graph.node:
        if n.op_type in ("ReduceMean", "ReduceSum", "Squeeze", "Unsqueeze", "Split"):
            keep = [a for a in n.attribute if a.name not in ("axes", "split")]
            del n.attribute[:]
            n.attribute.extend(keep)
    m.ir_version = 10
    return m


def _rc_by_hand_forgot_reducemean():  # the opset-13 moves done, ReduceMean (moved in 18) left with its attribute
    from onnx import helper
    m = _rc_by_hand()
    pool = next(n for n in m.graph.node if n.op_type == "ReduceMean")
    del pool.input[1:]
    pool.attribute.extend([helper.make_attribute("axes", [2, 3])])
    return m


def _rc_wrong_axes():  # by hand, but pooled over the channel axis
    from onnx import numpy_helper
    m = _rc_by_hand()
    for i, t in enumerate(m.graph.initializer):
        if t.name == "pool_axes":
            m.graph.initializer[i].CopyFrom(numpy_helper.from_array(np.array([1, 2], np.int64), "pool_axes"))
    return m


def _rc_no_softmax():  # simplified too far: the Softmax dropped
    m = _rc_simplified()
    for n in m.graph.node:
        if n.op_type == "Softmax":
            n.op_type = "Identity"
            del n.attribute[:]
    return m


def _rc_new_weights():  # rebuilt from the docstring, with new random weights
    from onnx import numpy_helper
    m = _rc_from11()
    w = np.random.default_rng(0).normal(size=(3, 5)).astype(np.float32)
    for t in m.graph.initializer:
        if t.name == "W":
            t.CopyFrom(numpy_helper.from_array(w, "W"))
    return m


def _rc_split_even():  # by hand, Split with num_outputs=2 and the split sizes swapped to [2, 3]
    from onnx import numpy_helper
    m = _rc_by_hand()
    for t in m.graph.initializer:
        if t.name == "split_split":
            t.CopyFrom(numpy_helper.from_array(np.array([2, 3], np.int64), "split_split"))
    return m


CORPUS = {
    "02.count_params": [
        Right("blind3-cp-loops", answer=_cp_loops),
        Right("blind3-cp-numpy", answer=_cp_numpy),
        Right("blind3-cp-generator", answer=_cp_generator),
        Wrong("blind3-cp-all-inits", answer=_cp_all_inits),
        Wrong("blind3-cp-floats-only", answer=_cp_floats_only),
        Wrong("blind3-cp-no-value-skipped", answer=_cp_no_value_skipped),
        Wrong("blind3-cp-value-type-ignored", answer=_cp_value_type_ignored),
        Wrong("blind3-cp-with-inputs", answer=_cp_with_inputs),
        Wrong("blind3-cp-numpy-int", answer=_cp_numpy_int, outputs_wrong=False),
        Wrong("blind3-cp-float-result", answer=_cp_float_result, outputs_wrong=False),
        Wrong("blind3-cp-tensor-count", answer=_cp_tensor_count),
        Wrong("blind3-cp-float32-only", answer=_cp_float32_only),
        Wrong("blind3-cp-shape-length", answer=_cp_shape_length),
        Wrong("blind3-cp-computed-too", answer=_cp_computed_too),
    ],
    "02.bad_initializer": [
        Right("blind3-bi-prefix", answer=_bi_prefix),
        Right("blind3-bi-regex", answer=_bi_regex),
        Right("blind3-bi-node-by-node", answer=_bi_node_by_node),
        Wrong("blind3-bi-node-name", answer=_bi_node_name),
        Wrong("blind3-bi-second-input", answer=_bi_second_input),
        Wrong("blind3-bi-not-strict", answer=_bi_not_strict),
        Wrong("blind3-bi-never-none", answer=_bi_never_none),
        Wrong("blind3-bi-transposed-guess", answer=_bi_transposed_guess),
        Wrong("blind3-bi-message", answer=_bi_message),
        Wrong("blind3-bi-init-position", answer=_bi_last_init_order),
        Wrong("blind3-bi-computed-input", answer=_bi_computed_input),
        Wrong("blind3-bi-in-place", answer=_bi_in_place, outputs_wrong=False),
    ],
    "02.repair_conversion": [
        Right("blind3-rc-from11", make=lambda tmp: _rc_from11()),
        Right("blind3-rc-from12-ir10", make=lambda tmp: _rc_from12_ir10()),
        Right("blind3-rc-by-hand", make=lambda tmp: _rc_by_hand()),
        Right("blind3-rc-simplified", make=lambda tmp: _rc_simplified()),
        Wrong("blind3-rc-unchanged", make=lambda tmp: _rc_unchanged(), skipped_skill=True),
        Wrong("blind3-rc-convert-noop", make=lambda tmp: _rc_convert_in_place(), skipped_skill=True),
        Wrong("blind3-rc-left-at-11", make=lambda tmp: _rc_left_at_11(), outputs_wrong=False),
        Wrong("blind3-rc-from17", make=lambda tmp: _rc_from17()),
        Wrong("blind3-rc-attrs-deleted", make=lambda tmp: _rc_attrs_deleted()),
        Wrong("blind3-rc-forgot-reducemean", make=lambda tmp: _rc_by_hand_forgot_reducemean()),
        Wrong("blind3-rc-wrong-axes", make=lambda tmp: _rc_wrong_axes()),
        Wrong("blind3-rc-no-softmax", make=lambda tmp: _rc_no_softmax()),
        Wrong("blind3-rc-new-weights", make=lambda tmp: _rc_new_weights()),
        Wrong("blind3-rc-split-swapped", make=lambda tmp: _rc_split_even()),
    ],
}
