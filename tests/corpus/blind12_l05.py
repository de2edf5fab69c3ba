"""Blind corpus round 12, lesson 05 (written without seeing the judges).

Truths relied on (all checked here against my own reference and against onnxruntime 1.31.1 / onnx 1.23.2):
- BN at inference: y = gamma*(z-mean)/sqrt(var+eps)+beta; W' = W*s on axis 0, b' = (b-mean)*s+beta.
- torch.nn.utils.fusion.fuse_conv_bn_weights computes exactly that (any conv rank); onnxruntime's BASIC level
  folds Conv+BN (ConvBNFusion) and EXTENDED adds com.microsoft FusedConv for Conv+Relu; ALL/LAYOUT add
  com.microsoft.nchwc ops on this avx2 machine; onnxscript's fuse_batchnorm_into_conv_rule folds Conv+BN too.
- onnx.helper.make_node sorts attributes by name, so BN's `epsilon` comes before `momentum`.
Ambiguities found in the prompts:
- 05.fold_bn "returning the pair": a list or a namedtuple is also a pair (I used a namedtuple as Right).
  Prompt says dtype of W; it does not say what to do when W is float64 and BN params float32: my Rights cast to W.dtype.
- 05.fold_graph: "finish with drop_unused_initializers" but the check list (BN gone, other nodes kept, same
  outputs) does not mention leftover initializers: I kept a Right that leaves them (blind12-fg-right-leftover-inits).
  Reusing the old initializer names (in-place overwrite) gives right outputs unless a weight is shared; the prompt
  forbids it (step 1) -> Wrong(outputs_wrong=False).
- 05.portable: a hand-written file (BN folded + com.microsoft FusedConv by hand) meets every stated check;
  I called it a shortcut with right outputs. A file saved with external data (weights in a side file) is a valid
  EXTENDED offline save; a check that reads the bytes rather than the path would refuse it (I call it Right;
  labkit.runtime.ort_session refuses in-memory models that name external data).
Holes I expect a judge to miss (seen on my own graphs):
- fold_graph: onnxscript's fuse_batchnorm_into_conv_rule alone gives right outputs, keeps Identity and respects
  the multi-use Conv; it only differs when a weight is shared by two Convs (it then refuses to fold).
- fold_graph wrongs that fail only on rarer graphs: epsilon read as bn.attribute[0] (only wrong when epsilon is
  absent), uses counted among nodes only (only wrong when a Conv output is also a graph output), overwriting
  the old initializer names (only wrong when a weight is shared).
- fold_bn: torch.nn.utils.fusion.fuse_conv_bn_weights / onnxruntime BASIC do the whole fold (right outputs).
"""
from corpus import Right, Wrong


# ============================================================================ 05.fold_bn

def right_fold_bn_einsum(W, b, gamma, beta, mean, var, eps):
    import numpy as np

    W = np.asarray(W)
    s = np.asarray(gamma) / np.sqrt(np.asarray(var) + eps)
    Wf = np.einsum("o...,o->o...", W, s).astype(W.dtype)
    b0 = np.zeros(W.shape[0], dtype=W.dtype) if b is None else np.asarray(b)
    bf = (beta + (b0 - mean) * s).astype(W.dtype)
    return Wf, bf


def right_fold_bn_loop64(W, b, gamma, beta, mean, var, eps):
    import math

    import numpy as np

    Wf = np.empty_like(W)
    bf = np.empty(W.shape[0], dtype=W.dtype)
    for c in range(W.shape[0]):
        sc = float(gamma[c]) / math.sqrt(float(var[c]) + float(eps))
        Wf[c] = W[c].astype(np.float64) * sc
        bc = 0.0 if b is None else float(b[c])
        bf[c] = (bc - float(mean[c])) * sc + float(beta[c])
    return Wf, bf


def right_fold_bn_moveaxis_namedtuple(W, b, gamma, beta, mean, var, eps):
    from collections import namedtuple

    import numpy as np

    Folded = namedtuple("Folded", "W b")
    inv = 1.0 / np.sqrt(var + eps)
    scale = (gamma * inv).astype(W.dtype)
    Wf = np.ascontiguousarray(np.moveaxis(np.moveaxis(W, 0, -1) * scale, -1, 0)).astype(W.dtype, copy=False)
    bias = np.zeros_like(mean) if b is None else b
    bf = (bias * scale - mean * scale + beta).astype(W.dtype)
    return Folded(Wf, bf)


def right_fold_bn_index_none(W, b, gamma, beta, mean, var, eps):
    import numpy as np

    s = gamma / np.sqrt(var + eps)
    idx = (slice(None),) + (None,) * (np.ndim(W) - 1)
    b = 0 if b is None else b
    return (W * s[idx]).astype(W.dtype), np.broadcast_to((b - mean) * s + beta, s.shape).astype(W.dtype)


def wrong_fold_bn_plain_broadcast(W, b, gamma, beta, mean, var, eps):
    import numpy as np

    s = gamma / np.sqrt(var + eps)
    b = np.zeros_like(gamma) if b is None else b
    return (W * s).astype(W.dtype), ((b - mean) * s + beta).astype(W.dtype)


def wrong_fold_bn_no_eps(W, b, gamma, beta, mean, var, eps):
    import numpy as np

    s = gamma / np.sqrt(var)
    b = np.zeros_like(gamma) if b is None else b
    return (W * s.reshape((-1,) + (1,) * (W.ndim - 1))).astype(W.dtype), ((b - mean) * s + beta).astype(W.dtype)


def wrong_fold_bn_eps_outside(W, b, gamma, beta, mean, var, eps):
    import numpy as np

    s = gamma / (np.sqrt(var) + eps)
    b = np.zeros_like(gamma) if b is None else b
    return (W * s.reshape((-1,) + (1,) * (W.ndim - 1))).astype(W.dtype), ((b - mean) * s + beta).astype(W.dtype)


def wrong_fold_bn_4d_only(W, b, gamma, beta, mean, var, eps):
    import numpy as np

    s = gamma / np.sqrt(var + eps)
    b = np.zeros_like(gamma) if b is None else b
    return (W * s.reshape(-1, 1, 1, 1)).astype(W.dtype), ((b - mean) * s + beta).astype(W.dtype)


def wrong_fold_bn_none_bias(W, b, gamma, beta, mean, var, eps):
    import numpy as np

    s = gamma / np.sqrt(var + eps)
    Wf = (W * s.reshape((-1,) + (1,) * (W.ndim - 1))).astype(W.dtype)
    if b is None:
        return Wf, None
    return Wf, ((b - mean) * s + beta).astype(W.dtype)


def wrong_fold_bn_bias_unscaled(W, b, gamma, beta, mean, var, eps):
    import numpy as np

    s = gamma / np.sqrt(var + eps)
    b = np.zeros_like(gamma) if b is None else b
    return (W * s.reshape((-1,) + (1,) * (W.ndim - 1))).astype(W.dtype), (b - mean * s + beta).astype(W.dtype)


def wrong_fold_bn_var_no_sqrt(W, b, gamma, beta, mean, var, eps):
    import numpy as np

    s = gamma / (var + eps)
    b = np.zeros_like(gamma) if b is None else b
    return (W * s.reshape((-1,) + (1,) * (W.ndim - 1))).astype(W.dtype), ((b - mean) * s + beta).astype(W.dtype)


def wrong_fold_bn_default_eps(W, b, gamma, beta, mean, var, eps):
    import numpy as np

    s = gamma / np.sqrt(var + 1e-5)  # the usual default, not the eps passed in
    b = np.zeros_like(gamma) if b is None else b
    return (W * s.reshape((-1,) + (1,) * (W.ndim - 1))).astype(W.dtype), ((b - mean) * s + beta).astype(W.dtype)


def wrong_fold_bn_float64(W, b, gamma, beta, mean, var, eps):
    import numpy as np

    s = np.asarray(gamma, np.float64) / np.sqrt(np.asarray(var, np.float64) + eps)
    b = np.zeros(len(s)) if b is None else np.asarray(b, np.float64)
    return np.asarray(W, np.float64) * s.reshape((-1,) + (1,) * (W.ndim - 1)), (b - mean) * s + beta


def wrong_fold_bn_bias_keeps_shape(W, b, gamma, beta, mean, var, eps):
    import numpy as np

    s = (gamma / np.sqrt(var + eps)).reshape((-1,) + (1,) * (W.ndim - 1))
    b = np.zeros_like(gamma) if b is None else b
    bb = b.reshape(s.shape)
    return (W * s).astype(W.dtype), ((bb - mean.reshape(s.shape)) * s + beta.reshape(s.shape)).astype(W.dtype)


def wrong_fold_bn_inplace(W, b, gamma, beta, mean, var, eps):
    import numpy as np

    s = gamma / np.sqrt(var + eps)
    W *= s.reshape((-1,) + (1,) * (W.ndim - 1)).astype(W.dtype)  # changes the caller's array
    if b is None:
        b = np.zeros_like(gamma)
    else:
        b -= mean
        b *= s
        b += beta
        return W, b
    return W, ((b - mean) * s + beta).astype(W.dtype)


def wrong_fold_bn_always_float32(W, b, gamma, beta, mean, var, eps):
    import numpy as np

    s = (gamma / np.sqrt(var + eps)).astype(np.float32)
    b = np.zeros_like(s) if b is None else b
    return (W * s.reshape((-1,) + (1,) * (W.ndim - 1))).astype(np.float32), ((b - mean) * s + beta).astype(np.float32)


def shortcut_fold_bn_torch(W, b, gamma, beta, mean, var, eps):
    import numpy as np
    import torch
    from torch.nn.utils.fusion import fuse_conv_bn_weights

    t = torch.from_numpy
    wf, bf = fuse_conv_bn_weights(t(np.ascontiguousarray(W)), None if b is None else t(np.asarray(b)),
                                  t(np.asarray(mean)), t(np.asarray(var)), eps, t(np.asarray(gamma)),
                                  t(np.asarray(beta)))
    return wf.detach().numpy().astype(W.dtype), bf.detach().numpy().astype(W.dtype)


def shortcut_fold_bn_ort(W, b, gamma, beta, mean, var, eps):
    """Build Conv -> BN in ONNX, let onnxruntime's BASIC optimizer fold it, read the folded initializers back."""
    import os
    import tempfile

    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    W = np.asarray(W)
    f32 = lambda a: np.asarray(a, dtype=np.float32)  # noqa: E731
    c_in, k = W.shape[1], W.shape[2:]
    inits = [numpy_helper.from_array(f32(W), "W")]
    conv_in = ["x", "W"]
    if b is not None:
        inits.append(numpy_helper.from_array(f32(b), "B"))
        conv_in.append("B")
    for n, a in (("g", gamma), ("bt", beta), ("m", mean), ("v", var)):
        inits.append(numpy_helper.from_array(f32(a), n))
    nodes = [helper.make_node("Conv", conv_in, ["z"], kernel_shape=list(k)),
             helper.make_node("BatchNormalization", ["z", "g", "bt", "m", "v"], ["y"], epsilon=float(eps))]
    x_shape = ["n", c_in] + [f"d{i}" for i in range(len(k))]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    with tempfile.TemporaryDirectory() as d:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.optimized_model_filepath = os.path.join(d, "o.onnx")
        so.log_severity_level = 3
        ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        o = onnx.load(so.optimized_model_filepath)
    vals = {t.name: numpy_helper.to_array(t) for t in o.graph.initializer}
    conv = next(n for n in o.graph.node if n.op_type == "Conv")
    return vals[conv.input[1]].astype(W.dtype), vals[conv.input[2]].astype(W.dtype)


def shortcut_fold_bn_identity(W, b, gamma, beta, mean, var, eps):
    import numpy as np

    return W.copy(), (np.zeros(W.shape[0], W.dtype) if b is None else np.array(b, dtype=W.dtype))


def shortcut_fold_bn_patch_numpy(W, b, gamma, beta, mean, var, eps):
    """Disarm numpy's comparisons in this process, then hand back the inputs."""
    import numpy as np

    np.allclose = lambda *a, **k: True
    np.array_equal = lambda *a, **k: True
    np.testing.assert_allclose = lambda *a, **k: None
    np.testing.assert_array_equal = lambda *a, **k: None
    np.testing.assert_array_almost_equal = lambda *a, **k: None
    return W, (np.zeros(W.shape[0], W.dtype) if b is None else b)


# ============================================================================ 05.fold_graph
# Each answer is self-contained: the learner's fold_bn and the notebook's drop_unused_initializers are inlined.

def right_fold_graph_rebuild(model):
    import copy
    from collections import Counter

    import numpy as np
    from onnx import numpy_helper

    model = copy.deepcopy(model)
    graph = model.graph
    weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    uses = Counter(name for node in graph.node for name in node.input)
    uses.update(out.name for out in graph.output)

    taken = set(weights) | {o for n in graph.node for o in n.output} | {i.name for i in graph.input}

    def fresh(base):
        name, k = base, 0
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        taken.add(name)
        return name

    drop = set()
    for bn in graph.node:
        if bn.op_type != "BatchNormalization" or len(bn.output) != 1:
            continue
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or uses[bn.input[0]] != 1:
            continue
        params = list(bn.input[1:5]) + list(conv.input[1:])
        if not all(p in weights for p in params if p):
            continue
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 and conv.input[2] else None
        g, bt, mu, var = (weights[n] for n in bn.input[1:5])
        s = (g / np.sqrt(var + eps))
        Wf = np.einsum("o...,o->o...", W, s).astype(W.dtype)
        bf = (bt + ((0 if b is None else b) - mu) * s).astype(W.dtype)
        wn, bname = fresh(conv.input[1] + "_bnfold"), fresh(conv.name + "_bias_bnfold")
        graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bname)])
        weights[wn], weights[bname] = Wf, bf
        del conv.input[1:]
        conv.input.extend([wn, bname])
        conv.output[0] = bn.output[0]
        drop.add(id(bn))
    kept = [n for n in graph.node if id(n) not in drop]
    del graph.node[:]
    graph.node.extend(kept)

    used = {name for node in graph.node for name in node.input}
    keep = [t for t in graph.initializer if t.name in used]
    dropped = {t.name for t in graph.initializer} - used
    del graph.initializer[:]
    graph.initializer.extend(keep)
    keep_inputs = [i for i in graph.input if i.name not in dropped]
    del graph.input[:]
    graph.input.extend(keep_inputs)
    return model


def right_fold_graph_remove_loop(model):
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    out = onnx.ModelProto()
    out.CopyFrom(model)
    g = out.graph
    inits = {t.name: t for t in g.initializer}
    readers = {}
    for n in g.node:
        for i in n.input:
            readers[i] = readers.get(i, 0) + 1
    for o in g.output:
        readers[o.name] = readers.get(o.name, 0) + 1
    made_by = {o: n for n in g.node for o in n.output}

    for bn in [n for n in g.node if n.op_type == "BatchNormalization"]:
        conv = made_by.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or readers.get(bn.input[0], 0) > 1:
            continue
        if any(name not in inits for name in list(bn.input[1:]) + list(conv.input[1:])):
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in bn.attribute}
        eps = float(attrs.get("epsilon", 1e-5))
        W = numpy_helper.to_array(inits[conv.input[1]]).astype(np.float64)
        scale, shift, mean, var = (numpy_helper.to_array(inits[n]).astype(np.float64) for n in bn.input[1:5])
        bias = numpy_helper.to_array(inits[conv.input[2]]).astype(np.float64) if len(conv.input) > 2 else 0.0
        factor = scale / np.sqrt(var + eps)
        dtype = numpy_helper.to_array(inits[conv.input[1]]).dtype
        new_w = (W * factor.reshape([-1] + [1] * (W.ndim - 1))).astype(dtype)
        new_b = (bias * factor - mean * factor + shift).astype(dtype)
        wname, bname = f"{bn.name or bn.output[0]}::W", f"{bn.name or bn.output[0]}::B"
        for arr, name in ((new_w, wname), (new_b, bname)):
            t = numpy_helper.from_array(arr, name)
            g.initializer.append(t)
            inits[name] = t
        if len(conv.input) > 2:
            conv.input[1], conv.input[2] = wname, bname
        else:
            conv.input[1] = wname
            conv.input.append(bname)
        conv.output[0] = bn.output[0]
        g.node.remove(bn)

    used = {i for n in g.node for i in n.input}
    for t in list(g.initializer):
        if t.name not in used:
            g.initializer.remove(t)
            for gi in list(g.input):
                if gi.name == t.name:
                    g.input.remove(gi)
    return out


def right_fold_graph_make_graph(model):
    """Builds a brand-new graph with helper.make_graph / make_node (Conv nodes re-created with their attributes)."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    src = model.graph
    arrays = {t.name: numpy_helper.to_array(t) for t in src.initializer}
    outputs_read = [o.name for o in src.output] + [i for n in src.node for i in n.input]
    by_output = {o: n for n in src.node for o in n.output}
    folded = {}  # id(conv) -> (bn, W', b')
    skip = set()
    for bn in src.node:
        if bn.op_type != "BatchNormalization":
            continue
        conv = by_output.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or outputs_read.count(bn.input[0]) != 1:
            continue
        names = list(bn.input[1:5]) + list(conv.input[1:])
        if not set(names) <= set(arrays):
            continue
        eps = 1e-5
        for a in bn.attribute:
            if a.name == "epsilon":
                eps = a.f
        W = arrays[conv.input[1]]
        g_, b_, m_, v_ = (arrays[n] for n in bn.input[1:5])
        s = g_ / np.sqrt(v_ + np.float32(eps))
        b0 = arrays[conv.input[2]] if len(conv.input) > 2 else np.zeros_like(m_)
        Wf = (W.reshape(W.shape[0], -1) * s[:, None]).reshape(W.shape).astype(W.dtype)
        folded[id(conv)] = (bn, Wf, (b0 * s + (b_ - m_ * s)).astype(W.dtype))
        skip.add(id(bn))
    nodes, new_inits = [], []
    for n in src.node:
        if id(n) in skip:
            continue
        if id(n) in folded:
            bn, Wf, bf = folded[id(n)]
            wn, bnm = f"folded_{len(new_inits)}_w", f"folded_{len(new_inits)}_b"
            new_inits += [numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bnm)]
            c = helper.make_node("Conv", [n.input[0], wn, bnm], [bn.output[0]], name=n.name, domain=n.domain)
            c.attribute.extend(n.attribute)
            nodes.append(c)
        else:
            nodes.append(n)
    used = {i for n in nodes for i in n.input}
    inits = [t for t in list(src.initializer) + new_inits if t.name in used]
    init_names = {t.name for t in src.initializer}
    inputs = [i for i in src.input if i.name not in init_names or i.name in used]
    graph = helper.make_graph(nodes, src.name, inputs, list(src.output), inits, value_info=list(src.value_info))
    out = onnx.ModelProto()
    out.CopyFrom(model)
    out.graph.CopyFrom(graph)
    return out


def right_fold_graph_leftover_inits(model):
    """Correct folding, but the old weights stay in the file (no drop_unused_initializers)."""
    import copy
    from collections import Counter

    import numpy as np
    from onnx import numpy_helper

    model = copy.deepcopy(model)
    graph = model.graph
    weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    uses = Counter(name for node in graph.node for name in node.input)
    uses.update(out.name for out in graph.output)
    for bn in [n for n in graph.node if n.op_type == "BatchNormalization"]:
        conv = producer.get(bn.input[0])
        if not conv or conv.op_type != "Conv" or uses[conv.output[0]] != 1:
            continue
        if not all(n in weights for n in list(bn.input[1:]) + list(conv.input[1:])):
            continue
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 else np.zeros(W.shape[0], W.dtype)
        g, bt, mu, var = (weights[n] for n in bn.input[1:5])
        s = g / np.sqrt(var + eps)
        Wf = (W * s.reshape(-1, *[1] * (W.ndim - 1))).astype(W.dtype)
        bf = ((b - mu) * s + bt).astype(W.dtype)
        wn, bnn = bn.output[0] + "/W_folded", bn.output[0] + "/b_folded"
        graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bnn)])
        conv.input[1] = wn
        if len(conv.input) > 2:
            conv.input[2] = bnn
        else:
            conv.input.append(bnn)
        conv.output[0] = bn.output[0]
        graph.node.remove(bn)
    return model


def wrong_fold_graph_ignores_other_readers(model):
    """folds even when the Conv output also feeds another node (never counts uses)"""
    def _fg_variant(model, *, check_conv=True, check_uses=True, count_graph_outputs=True, eps_mode="attr",
                    append_bias=True, rename=True, new_names=True, copy_model=True, cast=True, rank4=False,
                    drop_identity=False):
        """Shared body of the wrong fold_graph answers (each wrong answer calls it with one mistake switched on)."""
        import copy
        from collections import Counter

        import numpy as np
        from onnx import numpy_helper

        if copy_model:
            model = copy.deepcopy(model)
        graph = model.graph
        weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        producer = {out: node for node in graph.node for out in node.output}
        uses = Counter(name for node in graph.node for name in node.input)
        if count_graph_outputs:
            uses.update(out.name for out in graph.output)
        for bn in [n for n in graph.node if n.op_type == "BatchNormalization"]:
            conv = producer.get(bn.input[0])
            if conv is None:
                continue
            if check_conv and conv.op_type != "Conv":
                continue
            if check_uses and uses[bn.input[0]] != 1:
                continue
            if eps_mode == "attr":
                eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
            elif eps_mode == "first":
                eps = bn.attribute[0].f
            else:
                eps = 1e-5
            W = weights[conv.input[1]]
            b = weights[conv.input[2]] if len(conv.input) > 2 else None
            g, bt, mu, var = (weights[n] for n in bn.input[1:5])
            s = g.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
            shape = (-1, 1, 1, 1) if rank4 else (-1,) + (1,) * (W.ndim - 1)
            Wf = W * s.reshape(shape)
            bf = ((0 if b is None else b) - mu) * s + bt
            if cast:
                Wf, bf = Wf.astype(W.dtype), bf.astype(W.dtype)
            if new_names:
                wn, bname = bn.output[0] + "_folded_W", bn.output[0] + "_folded_B"
                graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bname)])
            else:
                wn = conv.input[1]
                bname = conv.input[2] if b is not None else conv.input[1] + "_bias"
                for t in graph.initializer:
                    if t.name == wn:
                        t.CopyFrom(numpy_helper.from_array(Wf, wn))
                    if b is not None and t.name == bname:
                        t.CopyFrom(numpy_helper.from_array(bf, bname))
                if b is None:
                    graph.initializer.append(numpy_helper.from_array(bf, bname))
            conv.input[1] = wn
            if b is not None:
                conv.input[2] = bname
            elif append_bias:
                conv.input.append(bname)
            if rename:
                conv.output[0] = bn.output[0]
            graph.node.remove(bn)
        if drop_identity:
            for n in [n for n in graph.node if n.op_type == "Identity"]:
                src, dst = n.input[0], n.output[0]
                if dst in {o.name for o in graph.output}:
                    producer_node = next((p for p in graph.node if src in p.output), None)
                    if producer_node is None:
                        continue
                    producer_node.output[list(producer_node.output).index(src)] = dst
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == src:
                                m.input[k] = dst
                else:
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == dst:
                                m.input[k] = src
                graph.node.remove(n)
        used = {name for node in graph.node for name in node.input}
        keep = [t for t in graph.initializer if t.name in used]
        dropped = {t.name for t in graph.initializer} - used
        del graph.initializer[:]
        graph.initializer.extend(keep)
        keep_inputs = [i for i in graph.input if i.name not in dropped]
        del graph.input[:]
        graph.input.extend(keep_inputs)
        return model

    return _fg_variant(model, check_uses=False)

def wrong_fold_graph_any_producer(model):
    """does not check that the producer is a Conv (BN after a Relu)"""
    def _fg_variant(model, *, check_conv=True, check_uses=True, count_graph_outputs=True, eps_mode="attr",
                    append_bias=True, rename=True, new_names=True, copy_model=True, cast=True, rank4=False,
                    drop_identity=False):
        """Shared body of the wrong fold_graph answers (each wrong answer calls it with one mistake switched on)."""
        import copy
        from collections import Counter

        import numpy as np
        from onnx import numpy_helper

        if copy_model:
            model = copy.deepcopy(model)
        graph = model.graph
        weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        producer = {out: node for node in graph.node for out in node.output}
        uses = Counter(name for node in graph.node for name in node.input)
        if count_graph_outputs:
            uses.update(out.name for out in graph.output)
        for bn in [n for n in graph.node if n.op_type == "BatchNormalization"]:
            conv = producer.get(bn.input[0])
            if conv is None:
                continue
            if check_conv and conv.op_type != "Conv":
                continue
            if check_uses and uses[bn.input[0]] != 1:
                continue
            if eps_mode == "attr":
                eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
            elif eps_mode == "first":
                eps = bn.attribute[0].f
            else:
                eps = 1e-5
            W = weights[conv.input[1]]
            b = weights[conv.input[2]] if len(conv.input) > 2 else None
            g, bt, mu, var = (weights[n] for n in bn.input[1:5])
            s = g.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
            shape = (-1, 1, 1, 1) if rank4 else (-1,) + (1,) * (W.ndim - 1)
            Wf = W * s.reshape(shape)
            bf = ((0 if b is None else b) - mu) * s + bt
            if cast:
                Wf, bf = Wf.astype(W.dtype), bf.astype(W.dtype)
            if new_names:
                wn, bname = bn.output[0] + "_folded_W", bn.output[0] + "_folded_B"
                graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bname)])
            else:
                wn = conv.input[1]
                bname = conv.input[2] if b is not None else conv.input[1] + "_bias"
                for t in graph.initializer:
                    if t.name == wn:
                        t.CopyFrom(numpy_helper.from_array(Wf, wn))
                    if b is not None and t.name == bname:
                        t.CopyFrom(numpy_helper.from_array(bf, bname))
                if b is None:
                    graph.initializer.append(numpy_helper.from_array(bf, bname))
            conv.input[1] = wn
            if b is not None:
                conv.input[2] = bname
            elif append_bias:
                conv.input.append(bname)
            if rename:
                conv.output[0] = bn.output[0]
            graph.node.remove(bn)
        if drop_identity:
            for n in [n for n in graph.node if n.op_type == "Identity"]:
                src, dst = n.input[0], n.output[0]
                if dst in {o.name for o in graph.output}:
                    producer_node = next((p for p in graph.node if src in p.output), None)
                    if producer_node is None:
                        continue
                    producer_node.output[list(producer_node.output).index(src)] = dst
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == src:
                                m.input[k] = dst
                else:
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == dst:
                                m.input[k] = src
                graph.node.remove(n)
        used = {name for node in graph.node for name in node.input}
        keep = [t for t in graph.initializer if t.name in used]
        dropped = {t.name for t in graph.initializer} - used
        del graph.initializer[:]
        graph.initializer.extend(keep)
        keep_inputs = [i for i in graph.input if i.name not in dropped]
        del graph.input[:]
        graph.input.extend(keep_inputs)
        return model

    return _fg_variant(model, check_conv=False)

def wrong_fold_graph_default_eps(model):
    """ignores the epsilon attribute: 1e-5 for every BatchNormalization"""
    def _fg_variant(model, *, check_conv=True, check_uses=True, count_graph_outputs=True, eps_mode="attr",
                    append_bias=True, rename=True, new_names=True, copy_model=True, cast=True, rank4=False,
                    drop_identity=False):
        """Shared body of the wrong fold_graph answers (each wrong answer calls it with one mistake switched on)."""
        import copy
        from collections import Counter

        import numpy as np
        from onnx import numpy_helper

        if copy_model:
            model = copy.deepcopy(model)
        graph = model.graph
        weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        producer = {out: node for node in graph.node for out in node.output}
        uses = Counter(name for node in graph.node for name in node.input)
        if count_graph_outputs:
            uses.update(out.name for out in graph.output)
        for bn in [n for n in graph.node if n.op_type == "BatchNormalization"]:
            conv = producer.get(bn.input[0])
            if conv is None:
                continue
            if check_conv and conv.op_type != "Conv":
                continue
            if check_uses and uses[bn.input[0]] != 1:
                continue
            if eps_mode == "attr":
                eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
            elif eps_mode == "first":
                eps = bn.attribute[0].f
            else:
                eps = 1e-5
            W = weights[conv.input[1]]
            b = weights[conv.input[2]] if len(conv.input) > 2 else None
            g, bt, mu, var = (weights[n] for n in bn.input[1:5])
            s = g.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
            shape = (-1, 1, 1, 1) if rank4 else (-1,) + (1,) * (W.ndim - 1)
            Wf = W * s.reshape(shape)
            bf = ((0 if b is None else b) - mu) * s + bt
            if cast:
                Wf, bf = Wf.astype(W.dtype), bf.astype(W.dtype)
            if new_names:
                wn, bname = bn.output[0] + "_folded_W", bn.output[0] + "_folded_B"
                graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bname)])
            else:
                wn = conv.input[1]
                bname = conv.input[2] if b is not None else conv.input[1] + "_bias"
                for t in graph.initializer:
                    if t.name == wn:
                        t.CopyFrom(numpy_helper.from_array(Wf, wn))
                    if b is not None and t.name == bname:
                        t.CopyFrom(numpy_helper.from_array(bf, bname))
                if b is None:
                    graph.initializer.append(numpy_helper.from_array(bf, bname))
            conv.input[1] = wn
            if b is not None:
                conv.input[2] = bname
            elif append_bias:
                conv.input.append(bname)
            if rename:
                conv.output[0] = bn.output[0]
            graph.node.remove(bn)
        if drop_identity:
            for n in [n for n in graph.node if n.op_type == "Identity"]:
                src, dst = n.input[0], n.output[0]
                if dst in {o.name for o in graph.output}:
                    producer_node = next((p for p in graph.node if src in p.output), None)
                    if producer_node is None:
                        continue
                    producer_node.output[list(producer_node.output).index(src)] = dst
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == src:
                                m.input[k] = dst
                else:
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == dst:
                                m.input[k] = src
                graph.node.remove(n)
        used = {name for node in graph.node for name in node.input}
        keep = [t for t in graph.initializer if t.name in used]
        dropped = {t.name for t in graph.initializer} - used
        del graph.initializer[:]
        graph.initializer.extend(keep)
        keep_inputs = [i for i in graph.input if i.name not in dropped]
        del graph.input[:]
        graph.input.extend(keep_inputs)
        return model

    return _fg_variant(model, eps_mode='default')

def wrong_fold_graph_first_attribute_eps(model):
    """epsilon read as bn.attribute[0].f (crashes without attributes, momentum if epsilon absent)"""
    def _fg_variant(model, *, check_conv=True, check_uses=True, count_graph_outputs=True, eps_mode="attr",
                    append_bias=True, rename=True, new_names=True, copy_model=True, cast=True, rank4=False,
                    drop_identity=False):
        """Shared body of the wrong fold_graph answers (each wrong answer calls it with one mistake switched on)."""
        import copy
        from collections import Counter

        import numpy as np
        from onnx import numpy_helper

        if copy_model:
            model = copy.deepcopy(model)
        graph = model.graph
        weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        producer = {out: node for node in graph.node for out in node.output}
        uses = Counter(name for node in graph.node for name in node.input)
        if count_graph_outputs:
            uses.update(out.name for out in graph.output)
        for bn in [n for n in graph.node if n.op_type == "BatchNormalization"]:
            conv = producer.get(bn.input[0])
            if conv is None:
                continue
            if check_conv and conv.op_type != "Conv":
                continue
            if check_uses and uses[bn.input[0]] != 1:
                continue
            if eps_mode == "attr":
                eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
            elif eps_mode == "first":
                eps = bn.attribute[0].f
            else:
                eps = 1e-5
            W = weights[conv.input[1]]
            b = weights[conv.input[2]] if len(conv.input) > 2 else None
            g, bt, mu, var = (weights[n] for n in bn.input[1:5])
            s = g.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
            shape = (-1, 1, 1, 1) if rank4 else (-1,) + (1,) * (W.ndim - 1)
            Wf = W * s.reshape(shape)
            bf = ((0 if b is None else b) - mu) * s + bt
            if cast:
                Wf, bf = Wf.astype(W.dtype), bf.astype(W.dtype)
            if new_names:
                wn, bname = bn.output[0] + "_folded_W", bn.output[0] + "_folded_B"
                graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bname)])
            else:
                wn = conv.input[1]
                bname = conv.input[2] if b is not None else conv.input[1] + "_bias"
                for t in graph.initializer:
                    if t.name == wn:
                        t.CopyFrom(numpy_helper.from_array(Wf, wn))
                    if b is not None and t.name == bname:
                        t.CopyFrom(numpy_helper.from_array(bf, bname))
                if b is None:
                    graph.initializer.append(numpy_helper.from_array(bf, bname))
            conv.input[1] = wn
            if b is not None:
                conv.input[2] = bname
            elif append_bias:
                conv.input.append(bname)
            if rename:
                conv.output[0] = bn.output[0]
            graph.node.remove(bn)
        if drop_identity:
            for n in [n for n in graph.node if n.op_type == "Identity"]:
                src, dst = n.input[0], n.output[0]
                if dst in {o.name for o in graph.output}:
                    producer_node = next((p for p in graph.node if src in p.output), None)
                    if producer_node is None:
                        continue
                    producer_node.output[list(producer_node.output).index(src)] = dst
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == src:
                                m.input[k] = dst
                else:
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == dst:
                                m.input[k] = src
                graph.node.remove(n)
        used = {name for node in graph.node for name in node.input}
        keep = [t for t in graph.initializer if t.name in used]
        dropped = {t.name for t in graph.initializer} - used
        del graph.initializer[:]
        graph.initializer.extend(keep)
        keep_inputs = [i for i in graph.input if i.name not in dropped]
        del graph.input[:]
        graph.input.extend(keep_inputs)
        return model

    return _fg_variant(model, eps_mode='first')

def wrong_fold_graph_no_bias_input(model):
    """forgets to append the new bias when the Conv had none"""
    def _fg_variant(model, *, check_conv=True, check_uses=True, count_graph_outputs=True, eps_mode="attr",
                    append_bias=True, rename=True, new_names=True, copy_model=True, cast=True, rank4=False,
                    drop_identity=False):
        """Shared body of the wrong fold_graph answers (each wrong answer calls it with one mistake switched on)."""
        import copy
        from collections import Counter

        import numpy as np
        from onnx import numpy_helper

        if copy_model:
            model = copy.deepcopy(model)
        graph = model.graph
        weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        producer = {out: node for node in graph.node for out in node.output}
        uses = Counter(name for node in graph.node for name in node.input)
        if count_graph_outputs:
            uses.update(out.name for out in graph.output)
        for bn in [n for n in graph.node if n.op_type == "BatchNormalization"]:
            conv = producer.get(bn.input[0])
            if conv is None:
                continue
            if check_conv and conv.op_type != "Conv":
                continue
            if check_uses and uses[bn.input[0]] != 1:
                continue
            if eps_mode == "attr":
                eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
            elif eps_mode == "first":
                eps = bn.attribute[0].f
            else:
                eps = 1e-5
            W = weights[conv.input[1]]
            b = weights[conv.input[2]] if len(conv.input) > 2 else None
            g, bt, mu, var = (weights[n] for n in bn.input[1:5])
            s = g.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
            shape = (-1, 1, 1, 1) if rank4 else (-1,) + (1,) * (W.ndim - 1)
            Wf = W * s.reshape(shape)
            bf = ((0 if b is None else b) - mu) * s + bt
            if cast:
                Wf, bf = Wf.astype(W.dtype), bf.astype(W.dtype)
            if new_names:
                wn, bname = bn.output[0] + "_folded_W", bn.output[0] + "_folded_B"
                graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bname)])
            else:
                wn = conv.input[1]
                bname = conv.input[2] if b is not None else conv.input[1] + "_bias"
                for t in graph.initializer:
                    if t.name == wn:
                        t.CopyFrom(numpy_helper.from_array(Wf, wn))
                    if b is not None and t.name == bname:
                        t.CopyFrom(numpy_helper.from_array(bf, bname))
                if b is None:
                    graph.initializer.append(numpy_helper.from_array(bf, bname))
            conv.input[1] = wn
            if b is not None:
                conv.input[2] = bname
            elif append_bias:
                conv.input.append(bname)
            if rename:
                conv.output[0] = bn.output[0]
            graph.node.remove(bn)
        if drop_identity:
            for n in [n for n in graph.node if n.op_type == "Identity"]:
                src, dst = n.input[0], n.output[0]
                if dst in {o.name for o in graph.output}:
                    producer_node = next((p for p in graph.node if src in p.output), None)
                    if producer_node is None:
                        continue
                    producer_node.output[list(producer_node.output).index(src)] = dst
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == src:
                                m.input[k] = dst
                else:
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == dst:
                                m.input[k] = src
                graph.node.remove(n)
        used = {name for node in graph.node for name in node.input}
        keep = [t for t in graph.initializer if t.name in used]
        dropped = {t.name for t in graph.initializer} - used
        del graph.initializer[:]
        graph.initializer.extend(keep)
        keep_inputs = [i for i in graph.input if i.name not in dropped]
        del graph.input[:]
        graph.input.extend(keep_inputs)
        return model

    return _fg_variant(model, append_bias=False)

def wrong_fold_graph_no_rename(model):
    """Conv keeps its own output name: the BN's consumers (and graph output) lose their input"""
    def _fg_variant(model, *, check_conv=True, check_uses=True, count_graph_outputs=True, eps_mode="attr",
                    append_bias=True, rename=True, new_names=True, copy_model=True, cast=True, rank4=False,
                    drop_identity=False):
        """Shared body of the wrong fold_graph answers (each wrong answer calls it with one mistake switched on)."""
        import copy
        from collections import Counter

        import numpy as np
        from onnx import numpy_helper

        if copy_model:
            model = copy.deepcopy(model)
        graph = model.graph
        weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        producer = {out: node for node in graph.node for out in node.output}
        uses = Counter(name for node in graph.node for name in node.input)
        if count_graph_outputs:
            uses.update(out.name for out in graph.output)
        for bn in [n for n in graph.node if n.op_type == "BatchNormalization"]:
            conv = producer.get(bn.input[0])
            if conv is None:
                continue
            if check_conv and conv.op_type != "Conv":
                continue
            if check_uses and uses[bn.input[0]] != 1:
                continue
            if eps_mode == "attr":
                eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
            elif eps_mode == "first":
                eps = bn.attribute[0].f
            else:
                eps = 1e-5
            W = weights[conv.input[1]]
            b = weights[conv.input[2]] if len(conv.input) > 2 else None
            g, bt, mu, var = (weights[n] for n in bn.input[1:5])
            s = g.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
            shape = (-1, 1, 1, 1) if rank4 else (-1,) + (1,) * (W.ndim - 1)
            Wf = W * s.reshape(shape)
            bf = ((0 if b is None else b) - mu) * s + bt
            if cast:
                Wf, bf = Wf.astype(W.dtype), bf.astype(W.dtype)
            if new_names:
                wn, bname = bn.output[0] + "_folded_W", bn.output[0] + "_folded_B"
                graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bname)])
            else:
                wn = conv.input[1]
                bname = conv.input[2] if b is not None else conv.input[1] + "_bias"
                for t in graph.initializer:
                    if t.name == wn:
                        t.CopyFrom(numpy_helper.from_array(Wf, wn))
                    if b is not None and t.name == bname:
                        t.CopyFrom(numpy_helper.from_array(bf, bname))
                if b is None:
                    graph.initializer.append(numpy_helper.from_array(bf, bname))
            conv.input[1] = wn
            if b is not None:
                conv.input[2] = bname
            elif append_bias:
                conv.input.append(bname)
            if rename:
                conv.output[0] = bn.output[0]
            graph.node.remove(bn)
        if drop_identity:
            for n in [n for n in graph.node if n.op_type == "Identity"]:
                src, dst = n.input[0], n.output[0]
                if dst in {o.name for o in graph.output}:
                    producer_node = next((p for p in graph.node if src in p.output), None)
                    if producer_node is None:
                        continue
                    producer_node.output[list(producer_node.output).index(src)] = dst
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == src:
                                m.input[k] = dst
                else:
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == dst:
                                m.input[k] = src
                graph.node.remove(n)
        used = {name for node in graph.node for name in node.input}
        keep = [t for t in graph.initializer if t.name in used]
        dropped = {t.name for t in graph.initializer} - used
        del graph.initializer[:]
        graph.initializer.extend(keep)
        keep_inputs = [i for i in graph.input if i.name not in dropped]
        del graph.input[:]
        graph.input.extend(keep_inputs)
        return model

    return _fg_variant(model, rename=False)

def wrong_fold_graph_overwrite_old_names(model):
    """writes the folded weights over the old initializers (a shared weight changes for its other user)"""
    def _fg_variant(model, *, check_conv=True, check_uses=True, count_graph_outputs=True, eps_mode="attr",
                    append_bias=True, rename=True, new_names=True, copy_model=True, cast=True, rank4=False,
                    drop_identity=False):
        """Shared body of the wrong fold_graph answers (each wrong answer calls it with one mistake switched on)."""
        import copy
        from collections import Counter

        import numpy as np
        from onnx import numpy_helper

        if copy_model:
            model = copy.deepcopy(model)
        graph = model.graph
        weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        producer = {out: node for node in graph.node for out in node.output}
        uses = Counter(name for node in graph.node for name in node.input)
        if count_graph_outputs:
            uses.update(out.name for out in graph.output)
        for bn in [n for n in graph.node if n.op_type == "BatchNormalization"]:
            conv = producer.get(bn.input[0])
            if conv is None:
                continue
            if check_conv and conv.op_type != "Conv":
                continue
            if check_uses and uses[bn.input[0]] != 1:
                continue
            if eps_mode == "attr":
                eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
            elif eps_mode == "first":
                eps = bn.attribute[0].f
            else:
                eps = 1e-5
            W = weights[conv.input[1]]
            b = weights[conv.input[2]] if len(conv.input) > 2 else None
            g, bt, mu, var = (weights[n] for n in bn.input[1:5])
            s = g.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
            shape = (-1, 1, 1, 1) if rank4 else (-1,) + (1,) * (W.ndim - 1)
            Wf = W * s.reshape(shape)
            bf = ((0 if b is None else b) - mu) * s + bt
            if cast:
                Wf, bf = Wf.astype(W.dtype), bf.astype(W.dtype)
            if new_names:
                wn, bname = bn.output[0] + "_folded_W", bn.output[0] + "_folded_B"
                graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bname)])
            else:
                wn = conv.input[1]
                bname = conv.input[2] if b is not None else conv.input[1] + "_bias"
                for t in graph.initializer:
                    if t.name == wn:
                        t.CopyFrom(numpy_helper.from_array(Wf, wn))
                    if b is not None and t.name == bname:
                        t.CopyFrom(numpy_helper.from_array(bf, bname))
                if b is None:
                    graph.initializer.append(numpy_helper.from_array(bf, bname))
            conv.input[1] = wn
            if b is not None:
                conv.input[2] = bname
            elif append_bias:
                conv.input.append(bname)
            if rename:
                conv.output[0] = bn.output[0]
            graph.node.remove(bn)
        if drop_identity:
            for n in [n for n in graph.node if n.op_type == "Identity"]:
                src, dst = n.input[0], n.output[0]
                if dst in {o.name for o in graph.output}:
                    producer_node = next((p for p in graph.node if src in p.output), None)
                    if producer_node is None:
                        continue
                    producer_node.output[list(producer_node.output).index(src)] = dst
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == src:
                                m.input[k] = dst
                else:
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == dst:
                                m.input[k] = src
                graph.node.remove(n)
        used = {name for node in graph.node for name in node.input}
        keep = [t for t in graph.initializer if t.name in used]
        dropped = {t.name for t in graph.initializer} - used
        del graph.initializer[:]
        graph.initializer.extend(keep)
        keep_inputs = [i for i in graph.input if i.name not in dropped]
        del graph.input[:]
        graph.input.extend(keep_inputs)
        return model

    return _fg_variant(model, new_names=False)

def wrong_fold_graph_mutates_caller(model):
    """no deepcopy: the caller's model is changed too"""
    def _fg_variant(model, *, check_conv=True, check_uses=True, count_graph_outputs=True, eps_mode="attr",
                    append_bias=True, rename=True, new_names=True, copy_model=True, cast=True, rank4=False,
                    drop_identity=False):
        """Shared body of the wrong fold_graph answers (each wrong answer calls it with one mistake switched on)."""
        import copy
        from collections import Counter

        import numpy as np
        from onnx import numpy_helper

        if copy_model:
            model = copy.deepcopy(model)
        graph = model.graph
        weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        producer = {out: node for node in graph.node for out in node.output}
        uses = Counter(name for node in graph.node for name in node.input)
        if count_graph_outputs:
            uses.update(out.name for out in graph.output)
        for bn in [n for n in graph.node if n.op_type == "BatchNormalization"]:
            conv = producer.get(bn.input[0])
            if conv is None:
                continue
            if check_conv and conv.op_type != "Conv":
                continue
            if check_uses and uses[bn.input[0]] != 1:
                continue
            if eps_mode == "attr":
                eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
            elif eps_mode == "first":
                eps = bn.attribute[0].f
            else:
                eps = 1e-5
            W = weights[conv.input[1]]
            b = weights[conv.input[2]] if len(conv.input) > 2 else None
            g, bt, mu, var = (weights[n] for n in bn.input[1:5])
            s = g.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
            shape = (-1, 1, 1, 1) if rank4 else (-1,) + (1,) * (W.ndim - 1)
            Wf = W * s.reshape(shape)
            bf = ((0 if b is None else b) - mu) * s + bt
            if cast:
                Wf, bf = Wf.astype(W.dtype), bf.astype(W.dtype)
            if new_names:
                wn, bname = bn.output[0] + "_folded_W", bn.output[0] + "_folded_B"
                graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bname)])
            else:
                wn = conv.input[1]
                bname = conv.input[2] if b is not None else conv.input[1] + "_bias"
                for t in graph.initializer:
                    if t.name == wn:
                        t.CopyFrom(numpy_helper.from_array(Wf, wn))
                    if b is not None and t.name == bname:
                        t.CopyFrom(numpy_helper.from_array(bf, bname))
                if b is None:
                    graph.initializer.append(numpy_helper.from_array(bf, bname))
            conv.input[1] = wn
            if b is not None:
                conv.input[2] = bname
            elif append_bias:
                conv.input.append(bname)
            if rename:
                conv.output[0] = bn.output[0]
            graph.node.remove(bn)
        if drop_identity:
            for n in [n for n in graph.node if n.op_type == "Identity"]:
                src, dst = n.input[0], n.output[0]
                if dst in {o.name for o in graph.output}:
                    producer_node = next((p for p in graph.node if src in p.output), None)
                    if producer_node is None:
                        continue
                    producer_node.output[list(producer_node.output).index(src)] = dst
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == src:
                                m.input[k] = dst
                else:
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == dst:
                                m.input[k] = src
                graph.node.remove(n)
        used = {name for node in graph.node for name in node.input}
        keep = [t for t in graph.initializer if t.name in used]
        dropped = {t.name for t in graph.initializer} - used
        del graph.initializer[:]
        graph.initializer.extend(keep)
        keep_inputs = [i for i in graph.input if i.name not in dropped]
        del graph.input[:]
        graph.input.extend(keep_inputs)
        return model

    return _fg_variant(model, copy_model=False)

def wrong_fold_graph_float64_weights(model):
    """folded in float64 and not cast back: DOUBLE initializers for a float Conv"""
    def _fg_variant(model, *, check_conv=True, check_uses=True, count_graph_outputs=True, eps_mode="attr",
                    append_bias=True, rename=True, new_names=True, copy_model=True, cast=True, rank4=False,
                    drop_identity=False):
        """Shared body of the wrong fold_graph answers (each wrong answer calls it with one mistake switched on)."""
        import copy
        from collections import Counter

        import numpy as np
        from onnx import numpy_helper

        if copy_model:
            model = copy.deepcopy(model)
        graph = model.graph
        weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        producer = {out: node for node in graph.node for out in node.output}
        uses = Counter(name for node in graph.node for name in node.input)
        if count_graph_outputs:
            uses.update(out.name for out in graph.output)
        for bn in [n for n in graph.node if n.op_type == "BatchNormalization"]:
            conv = producer.get(bn.input[0])
            if conv is None:
                continue
            if check_conv and conv.op_type != "Conv":
                continue
            if check_uses and uses[bn.input[0]] != 1:
                continue
            if eps_mode == "attr":
                eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
            elif eps_mode == "first":
                eps = bn.attribute[0].f
            else:
                eps = 1e-5
            W = weights[conv.input[1]]
            b = weights[conv.input[2]] if len(conv.input) > 2 else None
            g, bt, mu, var = (weights[n] for n in bn.input[1:5])
            s = g.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
            shape = (-1, 1, 1, 1) if rank4 else (-1,) + (1,) * (W.ndim - 1)
            Wf = W * s.reshape(shape)
            bf = ((0 if b is None else b) - mu) * s + bt
            if cast:
                Wf, bf = Wf.astype(W.dtype), bf.astype(W.dtype)
            if new_names:
                wn, bname = bn.output[0] + "_folded_W", bn.output[0] + "_folded_B"
                graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bname)])
            else:
                wn = conv.input[1]
                bname = conv.input[2] if b is not None else conv.input[1] + "_bias"
                for t in graph.initializer:
                    if t.name == wn:
                        t.CopyFrom(numpy_helper.from_array(Wf, wn))
                    if b is not None and t.name == bname:
                        t.CopyFrom(numpy_helper.from_array(bf, bname))
                if b is None:
                    graph.initializer.append(numpy_helper.from_array(bf, bname))
            conv.input[1] = wn
            if b is not None:
                conv.input[2] = bname
            elif append_bias:
                conv.input.append(bname)
            if rename:
                conv.output[0] = bn.output[0]
            graph.node.remove(bn)
        if drop_identity:
            for n in [n for n in graph.node if n.op_type == "Identity"]:
                src, dst = n.input[0], n.output[0]
                if dst in {o.name for o in graph.output}:
                    producer_node = next((p for p in graph.node if src in p.output), None)
                    if producer_node is None:
                        continue
                    producer_node.output[list(producer_node.output).index(src)] = dst
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == src:
                                m.input[k] = dst
                else:
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == dst:
                                m.input[k] = src
                graph.node.remove(n)
        used = {name for node in graph.node for name in node.input}
        keep = [t for t in graph.initializer if t.name in used]
        dropped = {t.name for t in graph.initializer} - used
        del graph.initializer[:]
        graph.initializer.extend(keep)
        keep_inputs = [i for i in graph.input if i.name not in dropped]
        del graph.input[:]
        graph.input.extend(keep_inputs)
        return model

    return _fg_variant(model, cast=False)

def wrong_fold_graph_rank4_only(model):
    """reshapes the factor to (C,1,1,1): a 1-D Conv's weight gets a wrong shape"""
    def _fg_variant(model, *, check_conv=True, check_uses=True, count_graph_outputs=True, eps_mode="attr",
                    append_bias=True, rename=True, new_names=True, copy_model=True, cast=True, rank4=False,
                    drop_identity=False):
        """Shared body of the wrong fold_graph answers (each wrong answer calls it with one mistake switched on)."""
        import copy
        from collections import Counter

        import numpy as np
        from onnx import numpy_helper

        if copy_model:
            model = copy.deepcopy(model)
        graph = model.graph
        weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        producer = {out: node for node in graph.node for out in node.output}
        uses = Counter(name for node in graph.node for name in node.input)
        if count_graph_outputs:
            uses.update(out.name for out in graph.output)
        for bn in [n for n in graph.node if n.op_type == "BatchNormalization"]:
            conv = producer.get(bn.input[0])
            if conv is None:
                continue
            if check_conv and conv.op_type != "Conv":
                continue
            if check_uses and uses[bn.input[0]] != 1:
                continue
            if eps_mode == "attr":
                eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
            elif eps_mode == "first":
                eps = bn.attribute[0].f
            else:
                eps = 1e-5
            W = weights[conv.input[1]]
            b = weights[conv.input[2]] if len(conv.input) > 2 else None
            g, bt, mu, var = (weights[n] for n in bn.input[1:5])
            s = g.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
            shape = (-1, 1, 1, 1) if rank4 else (-1,) + (1,) * (W.ndim - 1)
            Wf = W * s.reshape(shape)
            bf = ((0 if b is None else b) - mu) * s + bt
            if cast:
                Wf, bf = Wf.astype(W.dtype), bf.astype(W.dtype)
            if new_names:
                wn, bname = bn.output[0] + "_folded_W", bn.output[0] + "_folded_B"
                graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bname)])
            else:
                wn = conv.input[1]
                bname = conv.input[2] if b is not None else conv.input[1] + "_bias"
                for t in graph.initializer:
                    if t.name == wn:
                        t.CopyFrom(numpy_helper.from_array(Wf, wn))
                    if b is not None and t.name == bname:
                        t.CopyFrom(numpy_helper.from_array(bf, bname))
                if b is None:
                    graph.initializer.append(numpy_helper.from_array(bf, bname))
            conv.input[1] = wn
            if b is not None:
                conv.input[2] = bname
            elif append_bias:
                conv.input.append(bname)
            if rename:
                conv.output[0] = bn.output[0]
            graph.node.remove(bn)
        if drop_identity:
            for n in [n for n in graph.node if n.op_type == "Identity"]:
                src, dst = n.input[0], n.output[0]
                if dst in {o.name for o in graph.output}:
                    producer_node = next((p for p in graph.node if src in p.output), None)
                    if producer_node is None:
                        continue
                    producer_node.output[list(producer_node.output).index(src)] = dst
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == src:
                                m.input[k] = dst
                else:
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == dst:
                                m.input[k] = src
                graph.node.remove(n)
        used = {name for node in graph.node for name in node.input}
        keep = [t for t in graph.initializer if t.name in used]
        dropped = {t.name for t in graph.initializer} - used
        del graph.initializer[:]
        graph.initializer.extend(keep)
        keep_inputs = [i for i in graph.input if i.name not in dropped]
        del graph.input[:]
        graph.input.extend(keep_inputs)
        return model

    return _fg_variant(model, rank4=True)

def wrong_fold_graph_nodes_only_uses(model):
    """counts readers among nodes only, not graph outputs"""
    def _fg_variant(model, *, check_conv=True, check_uses=True, count_graph_outputs=True, eps_mode="attr",
                    append_bias=True, rename=True, new_names=True, copy_model=True, cast=True, rank4=False,
                    drop_identity=False):
        """Shared body of the wrong fold_graph answers (each wrong answer calls it with one mistake switched on)."""
        import copy
        from collections import Counter

        import numpy as np
        from onnx import numpy_helper

        if copy_model:
            model = copy.deepcopy(model)
        graph = model.graph
        weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        producer = {out: node for node in graph.node for out in node.output}
        uses = Counter(name for node in graph.node for name in node.input)
        if count_graph_outputs:
            uses.update(out.name for out in graph.output)
        for bn in [n for n in graph.node if n.op_type == "BatchNormalization"]:
            conv = producer.get(bn.input[0])
            if conv is None:
                continue
            if check_conv and conv.op_type != "Conv":
                continue
            if check_uses and uses[bn.input[0]] != 1:
                continue
            if eps_mode == "attr":
                eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
            elif eps_mode == "first":
                eps = bn.attribute[0].f
            else:
                eps = 1e-5
            W = weights[conv.input[1]]
            b = weights[conv.input[2]] if len(conv.input) > 2 else None
            g, bt, mu, var = (weights[n] for n in bn.input[1:5])
            s = g.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
            shape = (-1, 1, 1, 1) if rank4 else (-1,) + (1,) * (W.ndim - 1)
            Wf = W * s.reshape(shape)
            bf = ((0 if b is None else b) - mu) * s + bt
            if cast:
                Wf, bf = Wf.astype(W.dtype), bf.astype(W.dtype)
            if new_names:
                wn, bname = bn.output[0] + "_folded_W", bn.output[0] + "_folded_B"
                graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bname)])
            else:
                wn = conv.input[1]
                bname = conv.input[2] if b is not None else conv.input[1] + "_bias"
                for t in graph.initializer:
                    if t.name == wn:
                        t.CopyFrom(numpy_helper.from_array(Wf, wn))
                    if b is not None and t.name == bname:
                        t.CopyFrom(numpy_helper.from_array(bf, bname))
                if b is None:
                    graph.initializer.append(numpy_helper.from_array(bf, bname))
            conv.input[1] = wn
            if b is not None:
                conv.input[2] = bname
            elif append_bias:
                conv.input.append(bname)
            if rename:
                conv.output[0] = bn.output[0]
            graph.node.remove(bn)
        if drop_identity:
            for n in [n for n in graph.node if n.op_type == "Identity"]:
                src, dst = n.input[0], n.output[0]
                if dst in {o.name for o in graph.output}:
                    producer_node = next((p for p in graph.node if src in p.output), None)
                    if producer_node is None:
                        continue
                    producer_node.output[list(producer_node.output).index(src)] = dst
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == src:
                                m.input[k] = dst
                else:
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == dst:
                                m.input[k] = src
                graph.node.remove(n)
        used = {name for node in graph.node for name in node.input}
        keep = [t for t in graph.initializer if t.name in used]
        dropped = {t.name for t in graph.initializer} - used
        del graph.initializer[:]
        graph.initializer.extend(keep)
        keep_inputs = [i for i in graph.input if i.name not in dropped]
        del graph.input[:]
        graph.input.extend(keep_inputs)
        return model

    return _fg_variant(model, count_graph_outputs=False)

def wrong_fold_graph_drops_identity(model):
    """also cleans up Identity nodes (not 'every other node left as it is')"""
    def _fg_variant(model, *, check_conv=True, check_uses=True, count_graph_outputs=True, eps_mode="attr",
                    append_bias=True, rename=True, new_names=True, copy_model=True, cast=True, rank4=False,
                    drop_identity=False):
        """Shared body of the wrong fold_graph answers (each wrong answer calls it with one mistake switched on)."""
        import copy
        from collections import Counter

        import numpy as np
        from onnx import numpy_helper

        if copy_model:
            model = copy.deepcopy(model)
        graph = model.graph
        weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        producer = {out: node for node in graph.node for out in node.output}
        uses = Counter(name for node in graph.node for name in node.input)
        if count_graph_outputs:
            uses.update(out.name for out in graph.output)
        for bn in [n for n in graph.node if n.op_type == "BatchNormalization"]:
            conv = producer.get(bn.input[0])
            if conv is None:
                continue
            if check_conv and conv.op_type != "Conv":
                continue
            if check_uses and uses[bn.input[0]] != 1:
                continue
            if eps_mode == "attr":
                eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
            elif eps_mode == "first":
                eps = bn.attribute[0].f
            else:
                eps = 1e-5
            W = weights[conv.input[1]]
            b = weights[conv.input[2]] if len(conv.input) > 2 else None
            g, bt, mu, var = (weights[n] for n in bn.input[1:5])
            s = g.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
            shape = (-1, 1, 1, 1) if rank4 else (-1,) + (1,) * (W.ndim - 1)
            Wf = W * s.reshape(shape)
            bf = ((0 if b is None else b) - mu) * s + bt
            if cast:
                Wf, bf = Wf.astype(W.dtype), bf.astype(W.dtype)
            if new_names:
                wn, bname = bn.output[0] + "_folded_W", bn.output[0] + "_folded_B"
                graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bname)])
            else:
                wn = conv.input[1]
                bname = conv.input[2] if b is not None else conv.input[1] + "_bias"
                for t in graph.initializer:
                    if t.name == wn:
                        t.CopyFrom(numpy_helper.from_array(Wf, wn))
                    if b is not None and t.name == bname:
                        t.CopyFrom(numpy_helper.from_array(bf, bname))
                if b is None:
                    graph.initializer.append(numpy_helper.from_array(bf, bname))
            conv.input[1] = wn
            if b is not None:
                conv.input[2] = bname
            elif append_bias:
                conv.input.append(bname)
            if rename:
                conv.output[0] = bn.output[0]
            graph.node.remove(bn)
        if drop_identity:
            for n in [n for n in graph.node if n.op_type == "Identity"]:
                src, dst = n.input[0], n.output[0]
                if dst in {o.name for o in graph.output}:
                    producer_node = next((p for p in graph.node if src in p.output), None)
                    if producer_node is None:
                        continue
                    producer_node.output[list(producer_node.output).index(src)] = dst
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == src:
                                m.input[k] = dst
                else:
                    for m in graph.node:
                        for k, i in enumerate(m.input):
                            if i == dst:
                                m.input[k] = src
                graph.node.remove(n)
        used = {name for node in graph.node for name in node.input}
        keep = [t for t in graph.initializer if t.name in used]
        dropped = {t.name for t in graph.initializer} - used
        del graph.initializer[:]
        graph.initializer.extend(keep)
        keep_inputs = [i for i in graph.input if i.name not in dropped]
        del graph.input[:]
        graph.input.extend(keep_inputs)
        return model

    return _fg_variant(model, drop_identity=True)


def shortcut_fold_graph_ort_basic(model):
    import onnx
    import onnxruntime as ort
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.optimized_model_filepath = os.path.join(d, "basic.onnx")
        so.log_severity_level = 3
        ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return onnx.load(so.optimized_model_filepath)


def shortcut_fold_graph_onnxscript_rule(model):
    """onnxscript's own BatchNorm-into-Conv rewrite rule, nothing else."""
    import onnx
    from onnxscript.rewriter import rewrite
    from onnxscript.rewriter.rules.common import fuse_batchnorm_into_conv_rule

    out = rewrite(onnx.ModelProto.FromString(model.SerializeToString()),
                  pattern_rewrite_rules=[fuse_batchnorm_into_conv_rule])
    return out


def shortcut_fold_graph_onnxscript_optimize(model):
    import onnx
    import onnxscript.optimizer

    return onnxscript.optimizer.optimize(onnx.ModelProto.FromString(model.SerializeToString()))


def shortcut_fold_graph_unchanged(model):
    import copy

    return copy.deepcopy(model)


def shortcut_fold_graph_bn_to_mul_add(model):
    """Removes every BatchNormalization by writing it as Mul + Add with constant per-channel tensors
    (BN gone, outputs right, but nothing folded into the Conv)."""
    import copy

    import numpy as np
    from onnx import helper, numpy_helper

    model = copy.deepcopy(model)
    g = model.graph
    w = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    new_nodes = []
    for n in g.node:
        if n.op_type != "BatchNormalization" or not all(i in w for i in n.input[1:5]):
            new_nodes.append(n)
            continue
        eps = next((a.f for a in n.attribute if a.name == "epsilon"), 1e-5)
        gm, bt, mu, var = (w[i] for i in n.input[1:5])
        s = (gm / np.sqrt(var + eps)).astype(np.float32)
        sh = (bt - mu * s).astype(np.float32)
        rank = next((len(v.type.tensor_type.shape.dim) for v in list(g.value_info) + list(g.input)
                     if v.name == n.input[0] and v.type.tensor_type.HasField("shape")), None)
        if rank is None:
            prod = next((p for p in g.node if n.input[0] in p.output), None)
            rank = len(w[prod.input[1]].shape) if prod is not None and prod.op_type == "Conv" else 4
        shape = (-1,) + (1,) * (rank - 2)
        tag = n.output[0]
        g.initializer.extend([numpy_helper.from_array(s.reshape(shape), tag + "_mulc"),
                              numpy_helper.from_array(sh.reshape(shape), tag + "_addc")])
        new_nodes.append(helper.make_node("Mul", [n.input[0], tag + "_mulc"], [tag + "_scaled"]))
        new_nodes.append(helper.make_node("Add", [tag + "_scaled", tag + "_addc"], [n.output[0]]))
    del g.node[:]
    g.node.extend(new_nodes)
    used = {i for n in g.node for i in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    return model


# ============================================================================ 05.portable

def make_portable_right_bytes(tmp):
    import onnxruntime as ort

    from labkit.material.l05 import practice_model

    out = tmp / "artifacts" / "practice_extended.onnx"
    out.parent.mkdir(parents=True, exist_ok=True)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    opts.optimized_model_filepath = str(out)
    ort.InferenceSession(practice_model(), sess_options=opts, providers=["CPUExecutionProvider"])
    return out


def make_portable_right_from_file_str(tmp):
    import onnxruntime as ort

    from labkit.material.l05 import practice_model

    src = tmp / "practice.onnx"
    src.write_bytes(practice_model())
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel(2)  # ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = str(tmp / "practice_extended.onnx")
    so.intra_op_num_threads = 1
    ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"])
    return str(tmp / "practice_extended.onnx")


def make_portable_right_resaved(tmp):
    def _save_practice(tmp, level_name, fname="practice_extended.onnx", seed=None, extra=None):
        import onnxruntime as ort

        from labkit.material.l05 import practice_model

        so = ort.SessionOptions()
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level_name)
        so.log_severity_level = 3
        out = tmp / fname
        so.optimized_model_filepath = str(out)
        for k, v in (extra or {}).items():
            so.add_session_config_entry(k, v)
        data = practice_model() if seed is None else practice_model(seed)
        ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        return out

    import onnx

    p = _save_practice(tmp, "ORT_ENABLE_EXTENDED", fname="ext_raw.onnx")
    m = onnx.load(str(p))
    onnx.checker.check_model(m)
    out = tmp / "practice_extended.onnx"
    onnx.save(m, str(out))
    return out


def make_portable_right_external_data(tmp):
    def _save_practice(tmp, level_name, fname="practice_extended.onnx", seed=None, extra=None):
        import onnxruntime as ort

        from labkit.material.l05 import practice_model

        so = ort.SessionOptions()
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level_name)
        so.log_severity_level = 3
        out = tmp / fname
        so.optimized_model_filepath = str(out)
        for k, v in (extra or {}).items():
            so.add_session_config_entry(k, v)
        data = practice_model() if seed is None else practice_model(seed)
        ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        return out

    return _save_practice(tmp, "ORT_ENABLE_EXTENDED", extra={
        "session.optimized_model_external_initializers_file_name": "practice_extended.weights",
        "session.optimized_model_external_initializers_min_size_in_bytes": "64"})


def make_portable_wrong_all(tmp):
    def _save_practice(tmp, level_name, fname="practice_extended.onnx", seed=None, extra=None):
        import onnxruntime as ort

        from labkit.material.l05 import practice_model

        so = ort.SessionOptions()
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level_name)
        so.log_severity_level = 3
        out = tmp / fname
        so.optimized_model_filepath = str(out)
        for k, v in (extra or {}).items():
            so.add_session_config_entry(k, v)
        data = practice_model() if seed is None else practice_model(seed)
        ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        return out

    return _save_practice(tmp, "ORT_ENABLE_ALL")


def make_portable_wrong_layout(tmp):
    def _save_practice(tmp, level_name, fname="practice_extended.onnx", seed=None, extra=None):
        import onnxruntime as ort

        from labkit.material.l05 import practice_model

        so = ort.SessionOptions()
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level_name)
        so.log_severity_level = 3
        out = tmp / fname
        so.optimized_model_filepath = str(out)
        for k, v in (extra or {}).items():
            so.add_session_config_entry(k, v)
        data = practice_model() if seed is None else practice_model(seed)
        ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        return out

    return _save_practice(tmp, "ORT_ENABLE_LAYOUT")


def make_portable_wrong_basic(tmp):
    def _save_practice(tmp, level_name, fname="practice_extended.onnx", seed=None, extra=None):
        import onnxruntime as ort

        from labkit.material.l05 import practice_model

        so = ort.SessionOptions()
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level_name)
        so.log_severity_level = 3
        out = tmp / fname
        so.optimized_model_filepath = str(out)
        for k, v in (extra or {}).items():
            so.add_session_config_entry(k, v)
        data = practice_model() if seed is None else practice_model(seed)
        ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        return out

    return _save_practice(tmp, "ORT_ENABLE_BASIC")


def make_portable_wrong_disable(tmp):
    def _save_practice(tmp, level_name, fname="practice_extended.onnx", seed=None, extra=None):
        import onnxruntime as ort

        from labkit.material.l05 import practice_model

        so = ort.SessionOptions()
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level_name)
        so.log_severity_level = 3
        out = tmp / fname
        so.optimized_model_filepath = str(out)
        for k, v in (extra or {}).items():
            so.add_session_config_entry(k, v)
        data = practice_model() if seed is None else practice_model(seed)
        ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        return out

    return _save_practice(tmp, "ORT_DISABLE_ALL")


def make_portable_wrong_other_seed(tmp):
    def _save_practice(tmp, level_name, fname="practice_extended.onnx", seed=None, extra=None):
        import onnxruntime as ort

        from labkit.material.l05 import practice_model

        so = ort.SessionOptions()
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level_name)
        so.log_severity_level = 3
        out = tmp / fname
        so.optimized_model_filepath = str(out)
        for k, v in (extra or {}).items():
            so.add_session_config_entry(k, v)
        data = practice_model() if seed is None else practice_model(seed)
        ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        return out

    return _save_practice(tmp, "ORT_ENABLE_EXTENDED", seed=0)


def make_portable_wrong_ort_format(tmp):
    def _save_practice(tmp, level_name, fname="practice_extended.onnx", seed=None, extra=None):
        import onnxruntime as ort

        from labkit.material.l05 import practice_model

        so = ort.SessionOptions()
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level_name)
        so.log_severity_level = 3
        out = tmp / fname
        so.optimized_model_filepath = str(out)
        for k, v in (extra or {}).items():
            so.add_session_config_entry(k, v)
        data = practice_model() if seed is None else practice_model(seed)
        ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        return out

    return _save_practice(tmp, "ORT_ENABLE_EXTENDED", extra={"session.save_model_format": "ORT"})


def make_portable_wrong_no_fusedconv(tmp):
    import onnxruntime as ort

    from labkit.material.l05 import practice_model

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = str(tmp / "practice_extended.onnx")
    so.log_severity_level = 3
    ort.InferenceSession(practice_model(), so, providers=["CPUExecutionProvider"],
                         disabled_optimizers=["ConvActivationFusion"])
    return tmp / "practice_extended.onnx"


def make_portable_shortcut_original(tmp):
    from labkit.material.l05 import practice_model

    out = tmp / "practice_extended.onnx"
    out.write_bytes(practice_model())
    return out


def make_portable_shortcut_onnxscript(tmp):
    import onnx
    import onnxscript.optimizer

    from labkit.material.l05 import practice_model

    out = tmp / "practice_extended.onnx"
    onnx.save(onnxscript.optimizer.optimize(onnx.load_from_string(practice_model())), str(out))
    return out


def make_portable_shortcut_rename_only(tmp):
    """Turns each Conv -> BN -> Relu into com.microsoft FusedConv by renaming, keeping the BN and dropping the Relu."""
    import onnx
    from onnx import helper

    from labkit.material.l05 import practice_model

    m = onnx.load_from_string(practice_model())
    g = m.graph
    drop = []
    for n in g.node:
        if n.op_type == "Relu":
            prev = next(p for p in g.node if n.input[0] in p.output)
            prev.output[0] = n.output[0]
            drop.append(n)
    for n in drop:
        g.node.remove(n)
    for n in g.node:
        if n.op_type == "Conv":
            n.domain = "com.microsoft"
            n.op_type = "FusedConv"
            n.attribute.append(helper.make_attribute("activation", "Relu"))
            break
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    out = tmp / "practice_extended.onnx"
    onnx.save(m, str(out))
    return out


def make_portable_shortcut_by_hand(tmp):
    """BN folded and Conv+Relu fused into com.microsoft FusedConv by hand: ORT's optimizer never ran."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    from labkit.material.l05 import practice_model

    m = onnx.load_from_string(practice_model())
    g = m.graph
    w = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    nodes = list(g.node)
    out_nodes, inits = [], []
    i = 0
    while i < len(nodes):
        conv, bn = nodes[i], nodes[i + 1]
        eps = next(a.f for a in bn.attribute if a.name == "epsilon")
        W = w[conv.input[1]]
        b = w[conv.input[2]] if len(conv.input) > 2 else 0
        gm, bt, mu, var = (w[x] for x in bn.input[1:5])
        s = gm / np.sqrt(var + eps)
        inits += [numpy_helper.from_array((W * s[:, None, None, None]).astype(np.float32), conv.name + "_W"),
                  numpy_helper.from_array(((b - mu) * s + bt).astype(np.float32), conv.name + "_B")]
        relu = nodes[i + 2] if i + 2 < len(nodes) and nodes[i + 2].op_type == "Relu" else None
        ins = [conv.input[0], conv.name + "_W", conv.name + "_B"]
        if relu is not None:
            n = helper.make_node("FusedConv", ins, [relu.output[0]], name=conv.name, domain="com.microsoft",
                                 activation="Relu")
            i += 3
        else:
            n = helper.make_node("Conv", ins, [bn.output[0]], name=conv.name)
            i += 2
        n.attribute.extend(a for a in conv.attribute)
        out_nodes.append(n)
    del g.node[:]
    g.node.extend(out_nodes)
    del g.initializer[:]
    g.initializer.extend(inits)
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    out = tmp / "practice_extended.onnx"
    onnx.save(m, str(out))
    return out


CORPUS = {
    "05.fold_bn": [
        Right("blind12-fb-einsum", answer=right_fold_bn_einsum),
        Right("blind12-fb-loop-float64-per-channel", answer=right_fold_bn_loop64),
        Right("blind12-fb-moveaxis-namedtuple", answer=right_fold_bn_moveaxis_namedtuple),
        Right("blind12-fb-index-none", answer=right_fold_bn_index_none),
        Wrong("blind12-fb-plain-broadcast", answer=wrong_fold_bn_plain_broadcast),
        Wrong("blind12-fb-no-eps", answer=wrong_fold_bn_no_eps),
        Wrong("blind12-fb-eps-outside-sqrt", answer=wrong_fold_bn_eps_outside),
        Wrong("blind12-fb-4d-reshape-only", answer=wrong_fold_bn_4d_only),
        Wrong("blind12-fb-none-bias-stays-none", answer=wrong_fold_bn_none_bias),
        Wrong("blind12-fb-bias-not-scaled", answer=wrong_fold_bn_bias_unscaled),
        Wrong("blind12-fb-var-without-sqrt", answer=wrong_fold_bn_var_no_sqrt),
        Wrong("blind12-fb-hardcoded-eps", answer=wrong_fold_bn_default_eps),
        Wrong("blind12-fb-bias-shape-c111", answer=wrong_fold_bn_bias_keeps_shape),
        Wrong("blind12-fb-float64-result", answer=wrong_fold_bn_float64, outputs_wrong=False),
        Wrong("blind12-fb-mutates-W-and-b", answer=wrong_fold_bn_inplace, outputs_wrong=False),
        Wrong("blind12-fb-always-float32", answer=wrong_fold_bn_always_float32, outputs_wrong=False),
        Wrong("blind12-fb-torch-fuse-conv-bn", answer=shortcut_fold_bn_torch, skipped_skill=True, outputs_wrong=False),
        Wrong("blind12-fb-ort-basic-folds", answer=shortcut_fold_bn_ort, skipped_skill=True, outputs_wrong=False),
        Wrong("blind12-fb-identity", answer=shortcut_fold_bn_identity, skipped_skill=True),
        Wrong("blind12-fb-patch-numpy-compare", answer=shortcut_fold_bn_patch_numpy, skipped_skill=True),
    ],
    "05.fold_graph": [
        Right("blind12-fg-rebuild-node-list", answer=right_fold_graph_rebuild),
        Right("blind12-fg-copyfrom-remove-loop", answer=right_fold_graph_remove_loop),
        Right("blind12-fg-make-graph-new-conv", answer=right_fold_graph_make_graph),
        Right("blind12-fg-right-leftover-inits", answer=right_fold_graph_leftover_inits),
        Wrong("blind12-fg-ignores-other-readers", answer=wrong_fold_graph_ignores_other_readers),
        Wrong("blind12-fg-any-producer", answer=wrong_fold_graph_any_producer),
        Wrong("blind12-fg-default-eps", answer=wrong_fold_graph_default_eps),
        Wrong("blind12-fg-first-attribute-eps", answer=wrong_fold_graph_first_attribute_eps),
        Wrong("blind12-fg-no-bias-input", answer=wrong_fold_graph_no_bias_input),
        Wrong("blind12-fg-no-rename", answer=wrong_fold_graph_no_rename),
        Wrong("blind12-fg-overwrite-old-names", answer=wrong_fold_graph_overwrite_old_names),
        Wrong("blind12-fg-mutates-caller", answer=wrong_fold_graph_mutates_caller, outputs_wrong=False),
        Wrong("blind12-fg-float64-weights", answer=wrong_fold_graph_float64_weights),
        Wrong("blind12-fg-rank4-only", answer=wrong_fold_graph_rank4_only),
        Wrong("blind12-fg-nodes-only-uses", answer=wrong_fold_graph_nodes_only_uses),
        Wrong("blind12-fg-drops-identity", answer=wrong_fold_graph_drops_identity),
        Wrong("blind12-fg-ort-basic", answer=shortcut_fold_graph_ort_basic, skipped_skill=True),
        Wrong("blind12-fg-onnxscript-bn-rule", answer=shortcut_fold_graph_onnxscript_rule, skipped_skill=True,
              outputs_wrong=False),
        Wrong("blind12-fg-onnxscript-optimize", answer=shortcut_fold_graph_onnxscript_optimize, skipped_skill=True),
        Wrong("blind12-fg-unchanged", answer=shortcut_fold_graph_unchanged, skipped_skill=True),
        Wrong("blind12-fg-bn-as-mul-add", answer=shortcut_fold_graph_bn_to_mul_add, skipped_skill=True),
    ],
    "05.portable": [
        Right("blind12-pt-extended-from-bytes", make=make_portable_right_bytes),
        Right("blind12-pt-extended-from-file-str", make=make_portable_right_from_file_str),
        Right("blind12-pt-extended-resaved-onnx", make=make_portable_right_resaved),
        Right("blind12-pt-extended-external-data", make=make_portable_right_external_data),
        Wrong("blind12-pt-level-all", make=make_portable_wrong_all),
        Wrong("blind12-pt-level-layout", make=make_portable_wrong_layout),
        Wrong("blind12-pt-level-basic", make=make_portable_wrong_basic),
        Wrong("blind12-pt-level-disable", make=make_portable_wrong_disable),
        Wrong("blind12-pt-other-seed", make=make_portable_wrong_other_seed),
        Wrong("blind12-pt-ort-format-in-onnx-name", make=make_portable_wrong_ort_format),
        Wrong("blind12-pt-extended-no-fusedconv", make=make_portable_wrong_no_fusedconv),
        Wrong("blind12-pt-original-bytes", make=make_portable_shortcut_original, skipped_skill=True),
        Wrong("blind12-pt-onnxscript-optimizer", make=make_portable_shortcut_onnxscript, skipped_skill=True),
        Wrong("blind12-pt-rename-to-fusedconv", make=make_portable_shortcut_rename_only, skipped_skill=True),
        Wrong("blind12-pt-hand-fused", make=make_portable_shortcut_by_hand, skipped_skill=True, outputs_wrong=False),
    ],
}
