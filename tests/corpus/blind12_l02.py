"""Blind corpus round 12, lesson 02 (written without seeing the judges).
Truths relied on: onnx.shape_inference.infer_shapes(strict_mode=True) raises "(op_type:X, node name: n)" for the
first failing node and then cascades "expected to have type but instead is null" for later nodes; non-strict mode
raises nothing; version_converter 11->21 rewrites ReduceMean/ReduceSum/Squeeze/Unsqueeze/Split (axes/split as
inputs); Split-18 num_outputs=2 on 5 gives chunks 3,2 (same as split=[3,2]); ORT accepts IR 7 with opset 21.
Ambiguities: 02.bad_initializer -- if the wrong initializer is a weight with a wrong OUTER dim (w1 (4,7) instead of
(4,6)), strict inference first fails at the following Add, whose initializer is the (correct) bias: "the
initializer whose shape makes strict shape inference fail" then has two readings (failing node's initializer vs
the truly wrong one). The prompt does not say nodes have names (an unnamed node gives "node name: " in the
message). 02.count_params -- a ConstantOfShape fed by an initializer that is ALSO a graph input (IR 3 style,
overridable at IR>=4) is counted here; a scalar (dims=[]) float initializer counts 1. 02.repair_conversion -- the
prompt does not say whether the ir_version must be raised (7 kept in some rights; ORT and the checker accept it).
"""
from corpus import Right, Wrong


# ============================================================================ 02.count_params
def right_count_vectorised(model):
    import numpy as np
    from onnx import TensorProto
    floats = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    n = sum(int(np.prod(t.dims, dtype=np.int64)) for t in g.initializer if t.data_type in floats)
    for node in g.node:
        if node.op_type != "ConstantOfShape" or not node.input or node.input[0] not in inits:
            continue
        vals = [a for a in node.attribute if a.name == "value"]
        if vals and vals[0].t.data_type not in floats:
            continue
        from onnx import numpy_helper
        n += int(np.prod(numpy_helper.to_array(inits[node.input[0]]).astype(np.int64)))
    return int(n)


def right_count_loop_python(model):
    # pure Python products, no numpy
    from onnx import TensorProto, numpy_helper
    floats = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16)

    def prod(xs):
        p = 1
        for v in xs:
            p *= int(v)
        return p

    total = 0
    by_name = {}
    for t in model.graph.initializer:
        by_name[t.name] = t
        if t.data_type in floats:
            total += prod(t.dims)
    for node in model.graph.node:
        if node.op_type == "ConstantOfShape" and len(node.input) == 1 and node.input[0] in by_name:
            dt = TensorProto.FLOAT
            for a in node.attribute:
                if a.name == "value":
                    dt = a.t.data_type
            if dt in floats:
                total += prod(numpy_helper.to_array(by_name[node.input[0]]).reshape(-1).tolist())
    return total


def right_count_to_array_size(model):
    # materialises arrays and counts .size; ConstantOfShape via the reference operator itself
    import numpy as np
    from onnx import numpy_helper, helper, TensorProto
    good = {np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)}
    inits = {t.name: t for t in model.graph.initializer}
    c = 0
    for t in model.graph.initializer:
        if t.data_type == TensorProto.BFLOAT16 or helper.tensor_dtype_to_np_dtype(t.data_type) in good:
            c += numpy_helper.to_array(t).size
    for nd in model.graph.node:
        if nd.op_type == "ConstantOfShape" and nd.input and nd.input[0] in inits:
            attr = {a.name: helper.get_attribute_value(a) for a in nd.attribute}
            val = attr.get("value")
            if val is None or val.data_type in (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE,
                                                TensorProto.BFLOAT16):
                c += int(np.prod(numpy_helper.to_array(inits[nd.input[0]]), dtype=np.int64))
    return int(c)


def wrong_count_all_initializers(model):
    import numpy as np
    return int(sum(np.prod(t.dims) for t in model.graph.initializer))


def wrong_count_ignores_constantofshape(model):
    import numpy as np
    from onnx import TensorProto
    fl = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}
    return int(sum(np.prod(t.dims) for t in model.graph.initializer if t.data_type in fl))


def wrong_count_only_float32(model):
    import numpy as np
    from onnx import TensorProto, numpy_helper
    inits = {t.name: t for t in model.graph.initializer}
    n = sum(int(np.prod(t.dims)) for t in model.graph.initializer if t.data_type == TensorProto.FLOAT)
    for nd in model.graph.node:
        if nd.op_type == "ConstantOfShape" and nd.input[0] in inits:
            v = [a.t for a in nd.attribute if a.name == "value"]
            if not v or v[0].data_type == TensorProto.FLOAT:
                n += int(np.prod(numpy_helper.to_array(inits[nd.input[0]])))
    return n


def wrong_count_cos_any_value(model):
    # counts every ConstantOfShape fed by an initializer, whatever its value's type
    import numpy as np
    from onnx import TensorProto, numpy_helper
    fl = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}
    inits = {t.name: t for t in model.graph.initializer}
    n = sum(int(np.prod(t.dims)) for t in model.graph.initializer if t.data_type in fl)
    for nd in model.graph.node:
        if nd.op_type == "ConstantOfShape" and nd.input[0] in inits:
            n += int(np.prod(numpy_helper.to_array(inits[nd.input[0]])))
    return n


def wrong_count_cos_needs_value(model):
    # skips ConstantOfShape nodes without a value attribute (forgets the float-zeros default)
    import numpy as np
    from onnx import TensorProto, numpy_helper
    fl = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}
    inits = {t.name: t for t in model.graph.initializer}
    n = sum(int(np.prod(t.dims)) for t in model.graph.initializer if t.data_type in fl)
    for nd in model.graph.node:
        if nd.op_type == "ConstantOfShape" and nd.input[0] in inits:
            v = [a.t for a in nd.attribute if a.name == "value"]
            if v and v[0].data_type in fl:
                n += int(np.prod(numpy_helper.to_array(inits[nd.input[0]])))
    return n


def wrong_count_cos_len_of_shape(model):
    # adds the length of the shape vector (its dims) instead of the product of its values
    import numpy as np
    from onnx import TensorProto
    fl = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}
    inits = {t.name: t for t in model.graph.initializer}
    n = sum(int(np.prod(t.dims)) for t in model.graph.initializer if t.data_type in fl)
    for nd in model.graph.node:
        if nd.op_type == "ConstantOfShape" and nd.input[0] in inits:
            v = [a.t for a in nd.attribute if a.name == "value"]
            if not v or v[0].data_type in fl:
                n += int(np.prod(inits[nd.input[0]].dims))
    return n


def wrong_count_cos_any_input(model):
    # also counts ConstantOfShape whose shape is computed at run time (guesses it from shape inference)
    import numpy as np
    from onnx import TensorProto, numpy_helper, shape_inference
    fl = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}
    inits = {t.name: t for t in model.graph.initializer}
    n = sum(int(np.prod(t.dims)) for t in model.graph.initializer if t.data_type in fl)
    inf = shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in list(inf.graph.value_info) + list(inf.graph.output)}
    for nd in model.graph.node:
        if nd.op_type != "ConstantOfShape":
            continue
        v = [a.t for a in nd.attribute if a.name == "value"]
        if v and v[0].data_type not in fl:
            continue
        if nd.input[0] in inits:
            n += int(np.prod(numpy_helper.to_array(inits[nd.input[0]])))
        else:
            n += int(np.prod([d or 1 for d in shapes.get(nd.output[0], [1])]))
    return n


def wrong_count_with_inputs(model):
    # adds graph inputs that have a float type and a fixed shape (IR 3 models repeat every initializer there)
    import numpy as np
    from onnx import TensorProto
    fl = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}
    base = right_count_loop_python(model)
    for i in model.graph.input:
        tt = i.type.tensor_type
        dims = [d.dim_value for d in tt.shape.dim]
        if tt.elem_type in fl and all(d > 0 for d in dims) and any(t.name == i.name for t in model.graph.initializer):
            base += int(np.prod(dims))
    return base


def wrong_count_numpy_int(model):
    # right number, but a NumPy integer (prompt asks for a Python int)
    import numpy as np
    return np.int64(right_count_loop_python(model))


def shortcut_count_bytes(model):
    # bytes of the float initializers / 4, no ConstantOfShape reading
    from onnx import TensorProto
    fl = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}
    return int(sum(len(t.raw_data) + 4 * len(t.float_data) for t in model.graph.initializer
                   if t.data_type in fl) // 4)


def shortcut_count_resnet_constant(model):
    # the number everybody quotes for ResNet-50, plus the float initializers for anything else
    import numpy as np
    from onnx import TensorProto
    if len(model.graph.node) > 200:
        return 25_557_032
    return int(sum(np.prod(t.dims) for t in model.graph.initializer if t.data_type == TensorProto.FLOAT))


def shortcut_count_mutating(model):
    # "tidies" the caller's model first: drops IR-3 duplicate inputs and sorts the initializers in place,
    # then counts (right number, mutated argument)
    g = model.graph
    names = {t.name for t in g.initializer}
    keep = [i for i in g.input if i.name not in names]
    del g.input[:]
    g.input.extend(keep)
    ordered = sorted(g.initializer, key=lambda t: t.name)
    copies = [type(t)() for t in ordered]
    for c, t in zip(copies, ordered):
        c.CopyFrom(t)
    del g.initializer[:]
    g.initializer.extend(copies)
    return right_count_loop_python(model)


def shortcut_count_ort_folded(model):
    # lets ONNX Runtime's constant folding materialise the ConstantOfShape placeholders, saves the optimised
    # model and counts its float initializers (never reads a ConstantOfShape itself)
    import os
    import tempfile
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto
    fl = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}
    d = tempfile.mkdtemp()
    out = os.path.join(d, "opt.onnx")
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = out
    so.log_severity_level = 3
    ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    opt = onnx.load(out, load_external_data=False)
    return int(sum(int(np.prod(t.dims)) for t in opt.graph.initializer if t.data_type in fl))


# ============================================================================ 02.bad_initializer
def _strict_ok(model):
    from onnx import shape_inference
    try:
        shape_inference.infer_shapes(model, strict_mode=True)
        return True
    except Exception:
        return False


def right_badinit_prefix(model):
    # grow the graph node by node; the first prefix strict inference rejects holds the culprit node
    from onnx import helper, shape_inference
    g = model.graph
    init_names = {t.name for t in g.initializer}
    nodes = list(g.node)
    for k in range(1, len(nodes) + 1):
        if k == len(nodes):
            outs = list(g.output)
        else:
            outs = [helper.make_empty_tensor_value_info(o) for o in nodes[k - 1].output]
        sub = helper.make_graph(nodes[:k], "prefix", list(g.input), outs, list(g.initializer))
        m = helper.make_model(sub, opset_imports=list(model.opset_import), ir_version=model.ir_version)
        try:
            shape_inference.infer_shapes(m, strict_mode=True)
        except Exception:
            hits = [i for i in nodes[k - 1].input if i in init_names]
            return hits[0] if hits else None
    return None


def right_badinit_manual_shapes(model):
    # own shape propagation for MatMul / Add (numpy broadcasting rules), symbolic dims as a large prime
    import numpy as np
    g = model.graph
    SYM = 7919
    shapes = {t.name: tuple(int(d) for d in t.dims) for t in g.initializer}
    inits = set(shapes)
    for i in g.input:
        if i.name not in inits:
            shapes[i.name] = tuple(d.dim_value if d.HasField("dim_value") else SYM
                                   for d in i.type.tensor_type.shape.dim)
    declared = {o.name: tuple(d.dim_value if d.HasField("dim_value") else None
                              for d in o.type.tensor_type.shape.dim) for o in g.output}

    def culprit(node):
        c = [i for i in node.input if i in inits]
        return c[0] if c else None

    for node in g.node:
        ins = [shapes.get(i) for i in node.input]
        try:
            if node.op_type == "MatMul":
                a, b = ins
                if a[-1] != b[0 if len(b) == 1 else -2]:
                    return culprit(node)
                out = a[:-1] + b[-1:] if len(b) >= 2 else a[:-1]
            elif node.op_type in ("Add", "Sub", "Mul", "Div"):
                out = tuple(np.broadcast_shapes(*ins))
            else:
                out = ins[0]
        except ValueError:
            return culprit(node)
        for o in node.output:
            shapes[o] = out
            if o in declared:
                want = declared[o]
                if len(want) != len(out) or any(w is not None and w != d for w, d in zip(want, out)):
                    return culprit(node)
    return None


def right_badinit_message(model):
    # read the node name out of strict inference's message; unnamed nodes: fall back to the prefix search
    import re
    from onnx import shape_inference
    try:
        shape_inference.infer_shapes(model, strict_mode=True)
        return None
    except Exception as e:
        msg = str(e)
    m = re.search(r"node name: ([^)]*)\)", msg)
    name = m.group(1).strip() if m else ""
    inits = {t.name for t in model.graph.initializer}
    if name:
        for n in model.graph.node:
            if n.name == name:
                for i in n.input:
                    if i in inits:
                        return i
    return right_badinit_prefix(model)


def wrong_badinit_node_name(model):
    import re
    from onnx import shape_inference
    try:
        shape_inference.infer_shapes(model, strict_mode=True)
        return None
    except Exception as e:
        return re.search(r"node name: ([^)]*)\)", str(e)).group(1)


def wrong_badinit_second_input(model):
    # "the weight is always the second input" (Add with the bias first breaks it)
    import re
    from onnx import shape_inference
    try:
        shape_inference.infer_shapes(model, strict_mode=True)
        return None
    except Exception as e:
        name = re.search(r"node name: ([^)]*)\)", str(e)).group(1)
    node = next(n for n in model.graph.node if n.name == name)
    return node.input[1]


def wrong_badinit_first_input(model):
    import re
    from onnx import shape_inference
    try:
        shape_inference.infer_shapes(model, strict_mode=True)
        return None
    except Exception as e:
        name = re.search(r"node name: ([^)]*)\)", str(e)).group(1)
    node = next(n for n in model.graph.node if n.name == name)
    return node.input[0]


def wrong_badinit_non_strict(model):
    # forgot strict_mode: inference never raises, so never finds anything
    from onnx import shape_inference
    try:
        shape_inference.infer_shapes(model)
        return None
    except Exception:
        return model.graph.initializer[0].name


def wrong_badinit_empty_string(model):
    # returns "" for a clean model
    r = right_badinit_prefix(model)
    return "" if r is None else r


def wrong_badinit_list(model):
    r = right_badinit_prefix(model)
    return [] if r is None else [r]


def wrong_badinit_last_named_node(model):
    # takes the LAST node named in the message (the cascade of "null type" errors)
    import re
    from onnx import shape_inference
    try:
        shape_inference.infer_shapes(model, strict_mode=True)
        return None
    except Exception as e:
        names = re.findall(r"node name: ([^)]*)\)", str(e))
    inits = {t.name for t in model.graph.initializer}
    node = next(n for n in model.graph.node if n.name == names[-1])
    return next((i for i in node.input if i in inits), None)


def wrong_badinit_storage_order(model):
    # the failing node's... no: the first initializer in storage order that is not 1-D
    if _strict_ok(model):
        return None
    for t in model.graph.initializer:
        if len(t.dims) == 2 and t.dims[0] < t.dims[1]:
            return t.name
    return model.graph.initializer[-1].name


def shortcut_badinit_none(model):
    return None


def shortcut_badinit_name_heuristic(model):
    # no inference at all: the initializer whose first dim does not equal the previous initializer's last dim,
    # walking initializers in storage order
    prev = None
    for t in model.graph.initializer:
        if len(t.dims) == 2:
            if prev is not None and t.dims[0] != prev:
                return t.name
            prev = t.dims[-1]
    return None


def shortcut_badinit_hostile(model):
    class Anything(str):
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        __hash__ = str.__hash__

    return Anything(model.graph.initializer[0].name if len(model.graph.initializer) else "")


def shortcut_badinit_mutating(model):
    # removes initializers from the caller's model one by one (and forgets to restore them in order)
    from onnx import helper
    g = model.graph
    first_fail = right_badinit_prefix(model)
    saved = list(g.initializer)
    del g.initializer[:]
    g.initializer.extend(sorted(saved, key=lambda t: t.name))
    if first_fail is not None:
        g.input.append(helper.make_tensor_value_info(first_fail, 1, None))
    return first_fail


# ============================================================================ 02.repair_conversion
def _repair_converter():
    from onnx import version_converter
    from labkit.material.l02 import model_to_repair
    m = model_to_repair()
    m.opset_import[0].version = 11
    return version_converter.convert_version(m, 21)


def _repair_by_hand(split_num_outputs=False, softmax_axis=1, keep_ir=True, drop_unsqueeze=False):
    import numpy as np
    from onnx import helper, numpy_helper
    from labkit.material.l02 import model_to_repair
    old = model_to_repair()
    W = next(t for t in old.graph.initializer if t.name == "W")
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
    nodes = [
        helper.make_node("ReduceMean", ["X", "ax23"], ["pooled"], keepdims=1),
        helper.make_node("Squeeze", ["pooled", "ax23"], ["flat"]),
        helper.make_node("MatMul", ["flat", "W"], ["logits"]),
        (helper.make_node("Split", ["logits"], ["left", "right"], axis=1, num_outputs=2) if split_num_outputs
         else helper.make_node("Split", ["logits", "sizes"], ["left", "right"], axis=1)),
        helper.make_node("Softmax", ["left"], ["p_left"], axis=softmax_axis),
    ]
    if drop_unsqueeze:
        nodes.append(helper.make_node("Identity", ["right"], ["r_sum"]))
    else:
        nodes += [helper.make_node("Unsqueeze", ["right", "ax1"], ["right3"]),
                  helper.make_node("ReduceSum", ["right3", "ax1"], ["r_sum"], keepdims=0)]
    nodes.append(helper.make_node("Concat", ["p_left", "r_sum"], ["Y"], axis=1))
    used = {i for n in nodes for i in n.input}
    inits = [t for t in (W, i64("ax23", [2, 3]), i64("ax1", [1]), i64("sizes", [3, 2])) if t.name in used]
    g = helper.make_graph(nodes, "repaired", list(old.graph.input), list(old.graph.output), inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=7 if keep_ir else 10)


def _repair_other_ops():
    # GlobalAveragePool + Flatten, Slice instead of Split, Constant nodes for every integer input
    import numpy as np
    from onnx import helper, numpy_helper
    from labkit.material.l02 import model_to_repair
    old = model_to_repair()
    W = next(t for t in old.graph.initializer if t.name == "W")
    c = lambda name, v: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(v, np.int64), name))
    nodes = [
        helper.make_node("GlobalAveragePool", ["X"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"], axis=1),
        helper.make_node("MatMul", ["flat", "W"], ["logits"]),
        c("s0", [0]), c("s3", [3]), c("s5", [5]), c("a1", [1]),
        helper.make_node("Slice", ["logits", "s0", "s3", "a1"], ["left"]),
        helper.make_node("Slice", ["logits", "s3", "s5", "a1"], ["right"]),
        helper.make_node("Softmax", ["left"], ["p_left"], axis=-1),
        helper.make_node("Concat", ["p_left", "right"], ["Y"], axis=1),
    ]
    g = helper.make_graph(nodes, "repaired", list(old.graph.input), list(old.graph.output), [W])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def _repair_back_to_11():
    from labkit.material.l02 import model_to_repair
    m = model_to_repair()
    m.opset_import[0].version = 11
    return m


def _repair_untouched():
    from labkit.material.l02 import model_to_repair
    return model_to_repair()


def _repair_convert_from_21():
    # converts "from 21 to 21": the converter trusts the lying opset number and changes nothing
    from onnx import version_converter
    from labkit.material.l02 import model_to_repair
    try:
        return version_converter.convert_version(model_to_repair(), 21)
    except Exception:
        return model_to_repair()


def _repair_only_reducemean():
    # fixes the node the checker names first (ReduceMean), leaves Squeeze/Split/Unsqueeze/ReduceSum alone
    import numpy as np
    from onnx import helper, numpy_helper
    from labkit.material.l02 import model_to_repair
    m = model_to_repair()
    n = m.graph.node[0]
    del n.attribute[:]
    n.attribute.extend([helper.make_attribute("keepdims", 1)])
    n.input.append("ax23")
    m.graph.initializer.append(numpy_helper.from_array(np.array([2, 3], np.int64), "ax23"))
    return m


def _repair_from_13():
    # believes the nodes are opset 13 -> converter skips the 11->13 adapters (Squeeze/Split/... attributes stay)
    from onnx import version_converter
    from labkit.material.l02 import model_to_repair
    m = model_to_repair()
    m.opset_import[0].version = 13
    try:
        return version_converter.convert_version(m, 21)
    except Exception:
        return m


def _repair_softmax_axis0():
    return _repair_by_hand(softmax_axis=0)


def _repair_mean_keepdims0_squeeze_wrong():
    # replaces ReduceMean+Squeeze by ReduceSum (forgets the mean divides by 16)
    m = _repair_by_hand(keep_ir=False)
    m.graph.node[0].op_type = "ReduceSum"
    return m


def _repair_transposed_weight():
    # rebuilt from scratch with W^T and transB=1... but then transposed it back too (Gemm(flat, W, transB=1))
    import numpy as np
    from onnx import numpy_helper
    m = _repair_by_hand(keep_ir=False)
    W = numpy_helper.to_array(next(t for t in m.graph.initializer if t.name == "W"))
    for t in m.graph.initializer:
        if t.name == "W":
            t.CopyFrom(numpy_helper.from_array(np.ascontiguousarray(W[:, ::-1]), "W"))
    return m


def _repair_constant_output_shortcut():
    # ignores the computation: Y = zeros of shape (N, 5) built from X's batch dim -- valid at opset 21
    import numpy as np
    from onnx import helper, numpy_helper, TensorProto
    from labkit.material.l02 import model_to_repair
    old = model_to_repair()
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
    nodes = [helper.make_node("Shape", ["X"], ["sx"], start=0, end=1),
             helper.make_node("Concat", ["sx", "five"], ["shp"], axis=0),
             helper.make_node("ConstantOfShape", ["shp"], ["Y"],
                              value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.2]))]
    g = helper.make_graph(nodes, "fake", list(old.graph.input), list(old.graph.output), [i64("five", [5])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def _repair_onnxscript_reexport():
    # rebuilt with torch: a torch module re-implementing the graph, exported by the exporter at opset 21
    import torch
    from onnx import numpy_helper
    from labkit.material.l02 import model_to_repair
    W = torch.from_numpy(numpy_helper.to_array(model_to_repair().graph.initializer[0]).copy())

    class M(torch.nn.Module):
        def forward(self, X):
            logits = X.mean(dim=(2, 3)) @ W
            return torch.cat([torch.softmax(logits[:, :3], 1), logits[:, 3:]], 1)

    import io
    buf = io.BytesIO()
    torch.onnx.export(M(), (torch.zeros(2, 3, 4, 4),), buf, input_names=["X"], output_names=["Y"],
                      dynamic_axes={"X": {0: "N"}}, opset_version=21, dynamo=False)
    import onnx
    return onnx.load_from_string(buf.getvalue())


CORPUS = {
    "02.count_params": [
        Right("blind12-count-vectorised", answer=right_count_vectorised),
        Right("blind12-count-pure-python", answer=right_count_loop_python),
        Right("blind12-count-to-array-size", answer=right_count_to_array_size),
        Wrong("blind12-count-all-initializers", answer=wrong_count_all_initializers),
        Wrong("blind12-count-no-constantofshape", answer=wrong_count_ignores_constantofshape),
        Wrong("blind12-count-float32-only", answer=wrong_count_only_float32),
        Wrong("blind12-count-cos-any-value-type", answer=wrong_count_cos_any_value),
        Wrong("blind12-count-cos-needs-value", answer=wrong_count_cos_needs_value),
        Wrong("blind12-count-cos-shape-length", answer=wrong_count_cos_len_of_shape),
        Wrong("blind12-count-cos-runtime-shape", answer=wrong_count_cos_any_input),
        Wrong("blind12-count-plus-inputs", answer=wrong_count_with_inputs),
        Wrong("blind12-count-numpy-int", answer=wrong_count_numpy_int, outputs_wrong=False),
        Wrong("blind12-count-raw-bytes", answer=shortcut_count_bytes, skipped_skill=True),
        Wrong("blind12-count-resnet-constant", answer=shortcut_count_resnet_constant, skipped_skill=True),
        Wrong("blind12-count-ort-constant-folding", answer=shortcut_count_ort_folded, skipped_skill=True),
        Wrong("blind12-count-mutates-model", answer=shortcut_count_mutating, outputs_wrong=False),
    ],
    "02.bad_initializer": [
        Right("blind12-badinit-prefix-graphs", answer=right_badinit_prefix),
        Right("blind12-badinit-manual-shapes", answer=right_badinit_manual_shapes),
        Right("blind12-badinit-message-fallback", answer=right_badinit_message),
        Wrong("blind12-badinit-node-name", answer=wrong_badinit_node_name),
        Wrong("blind12-badinit-always-input1", answer=wrong_badinit_second_input),
        Wrong("blind12-badinit-always-input0", answer=wrong_badinit_first_input),
        Wrong("blind12-badinit-non-strict", answer=wrong_badinit_non_strict),
        Wrong("blind12-badinit-empty-string", answer=wrong_badinit_empty_string),
        Wrong("blind12-badinit-list", answer=wrong_badinit_list),
        Wrong("blind12-badinit-last-named-node", answer=wrong_badinit_last_named_node),
        Wrong("blind12-badinit-wide-matrix", answer=wrong_badinit_storage_order),
        Wrong("blind12-badinit-always-none", answer=shortcut_badinit_none, skipped_skill=True),
        Wrong("blind12-badinit-storage-chain", answer=shortcut_badinit_name_heuristic, skipped_skill=True),
        Wrong("blind12-badinit-hostile-eq", answer=shortcut_badinit_hostile, skipped_skill=True),
        Wrong("blind12-badinit-mutates-model", answer=shortcut_badinit_mutating, outputs_wrong=False),
    ],
    "02.repair_conversion": [
        Right("blind12-repair-declare11-convert", answer=_repair_converter()),
        Right("blind12-repair-by-hand-ir7", answer=_repair_by_hand()),
        Right("blind12-repair-num-outputs-no-unsqueeze", answer=_repair_by_hand(split_num_outputs=True,
                                                                                 keep_ir=False,
                                                                                 drop_unsqueeze=True)),
        Right("blind12-repair-gap-slice", answer=_repair_other_ops()),
        Wrong("blind12-repair-untouched", answer=_repair_untouched()),
        Wrong("blind12-repair-convert-21-to-21", answer=_repair_convert_from_21()),
        Wrong("blind12-repair-only-reducemean", answer=_repair_only_reducemean()),
        Wrong("blind12-repair-from-13", answer=_repair_from_13()),
        Wrong("blind12-repair-softmax-axis0", answer=_repair_softmax_axis0()),
        Wrong("blind12-repair-reducesum-not-mean", answer=_repair_mean_keepdims0_squeeze_wrong()),
        Wrong("blind12-repair-weight-columns-flipped", answer=_repair_transposed_weight()),
        Wrong("blind12-repair-back-to-opset11", answer=_repair_back_to_11(), skipped_skill=True,
              outputs_wrong=False),
        Wrong("blind12-repair-constant-output", answer=_repair_constant_output_shortcut(), skipped_skill=True),
        Wrong("blind12-repair-torch-reexport", make=lambda tmp: _repair_onnxscript_reexport(), skipped_skill=True,
              outputs_wrong=False),
    ],
}
