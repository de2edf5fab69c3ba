"""Blind entries, copied from /work/blind2/l05.py (issue 32): written by a helper who never read the judges or this corpus
(their README: /work/blind2/README.md). tests/corpus/l05.py adds them to its CORPUS.

Blind corpus, lesson 05 (held-out round, written without seeing the judges).
"""
import copy
from collections import Counter

import numpy as np
import onnx
from onnx import helper, numpy_helper

from corpus import Right, Wrong


def _fold_bn(W, b, gamma, beta, mean, var, eps):
    s = (gamma / np.sqrt(var + eps)).astype(np.float32)
    Wf = (W * s.reshape((-1,) + (1,) * (W.ndim - 1))).astype(np.float32)
    b0 = np.zeros_like(gamma) if b is None else b
    return Wf, ((b0 - mean) * s + beta).astype(np.float32)


def _drop_unused_initializers(graph):
    used = {name for node in graph.node for name in node.input}
    keep = [t for t in graph.initializer if t.name in used]
    dropped = {t.name for t in graph.initializer} - used
    del graph.initializer[:]
    graph.initializer.extend(keep)
    keep_inputs = [i for i in graph.input if i.name not in dropped]
    del graph.input[:]
    graph.input.extend(keep_inputs)


def _eps(bn):
    return next((helper.get_attribute_value(a) for a in bn.attribute if a.name == "epsilon"), 1e-5)


def _generic_fold(model, *, check_producer=True, check_uses=True, use_eps=True, reshape=True, add_bias=True,
                  rename_output=True, remove_bn=True, copy_model=True, drop_identity=False, fold=_fold_bn):
    model = copy.deepcopy(model) if copy_model else model
    graph = model.graph
    weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    uses = Counter(name for node in graph.node for name in node.input)
    uses.update(out.name for out in graph.output)
    gone = []
    for bn in [n for n in graph.node if n.op_type == "BatchNormalization"]:
        conv = producer.get(bn.input[0])
        if check_producer and (conv is None or conv.op_type != "Conv"):
            continue
        if check_uses and uses[bn.input[0]] != 1:
            continue
        if conv is None:
            continue
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 and conv.input[2] else None
        gamma, beta, mean, var = (weights[n] for n in bn.input[1:5])
        eps = _eps(bn) if use_eps else 0.0
        if reshape:
            Wf, bf = fold(W, b, gamma, beta, mean, var, eps)
        else:
            s = gamma / np.sqrt(var + eps)
            Wf = (W * s[:, None, None, None]).astype(np.float32)       # 2-D convolutions only
            bf = (((b if b is not None else 0) - mean) * s + beta).astype(np.float32)
        wn, bn_name = conv.name + "_folded_W" + str(len(gone)), conv.name + "_folded_b" + str(len(gone))
        graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bn_name)])
        conv.input[1] = wn
        if len(conv.input) > 2:
            conv.input[2] = bn_name
        elif add_bias:
            conv.input.append(bn_name)
        if rename_output:
            conv.output[0] = bn.output[0]
        if remove_bn:
            gone.append(bn)
    for bn in gone:
        graph.node.remove(bn)
    if drop_identity:
        ident = [n for n in graph.node if n.op_type == "Identity"]
        for n in ident:
            for other in graph.node:
                for i, name in enumerate(other.input):
                    if name == n.output[0]:
                        other.input[i] = n.input[0]
            for o in graph.output:
                if o.name == n.output[0]:
                    o.name = n.input[0]
            graph.node.remove(n)
    _drop_unused_initializers(graph)
    return model


# ---------------------------------------------------------------- rights

def fold_graph_rebuild(model):
    """Builds a fresh node list; the folded Conv takes the BN's place and output name."""
    m = copy.deepcopy(model)
    g = m.graph
    w = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    readers = Counter(i for n in g.node for i in n.input) + Counter(o.name for o in g.output)
    by_output = {o: n for n in g.node for o in n.output}
    folded_into = {}                 # conv output name -> bn node
    for n in g.node:
        if n.op_type != "BatchNormalization":
            continue
        src = by_output.get(n.input[0])
        if src is None or src.op_type != "Conv" or readers[n.input[0]] != 1:
            continue
        if not all(x in w for x in list(src.input[1:]) + list(n.input[1:5])):
            continue
        folded_into[n.input[0]] = n
    new_nodes, new_inits = [], []
    for n in g.node:
        if n.op_type == "BatchNormalization" and n.input[0] in folded_into:
            continue
        if n.op_type == "Conv" and n.output[0] in folded_into:
            bn = folded_into[n.output[0]]
            gamma, beta, mean, var = (w[x].astype(np.float64) for x in bn.input[1:5])
            eps = helper.get_node_attr_value(bn, "epsilon") if any(a.name == "epsilon" for a in bn.attribute) \
                else 1e-5
            scale = gamma / np.sqrt(var + eps)
            W = w[n.input[1]].astype(np.float64)
            b = w[n.input[2]].astype(np.float64) if len(n.input) > 2 and n.input[2] else np.zeros_like(gamma)
            Wn = np.einsum("o...,o->o...", W, scale).astype(np.float32)
            bn_b = (beta + (b - mean) * scale).astype(np.float32)
            tag = bn.output[0]
            new_inits += [numpy_helper.from_array(Wn, f"{tag}::W"), numpy_helper.from_array(bn_b, f"{tag}::b")]
            c = onnx.NodeProto()
            c.CopyFrom(n)
            del c.input[1:]
            c.input.extend([f"{tag}::W", f"{tag}::b"])
            c.output[0] = bn.output[0]
            new_nodes.append(c)
        else:
            new_nodes.append(n)
    del g.node[:]
    g.node.extend(new_nodes)
    g.initializer.extend(new_inits)
    _drop_unused_initializers(g)
    return m


def fold_graph_helper_loop(model):
    return _generic_fold(model)


def fold_graph_float64(model):
    def fold64(W, b, gamma, beta, mean, var, eps):
        W, gamma, beta, mean, var = (np.asarray(a, np.float64) for a in (W, gamma, beta, mean, var))
        inv = gamma / np.sqrt(var + eps)
        bb = np.zeros_like(inv) if b is None else np.asarray(b, np.float64)
        return ((W.T * inv).T.astype(np.float32) if W.ndim > 0 else W), ((bb - mean) * inv + beta).astype(np.float32)
    return _generic_fold(model, fold=fold64)


# ---------------------------------------------------------------- wrongs

def fold_graph_ort_optimizer(model):
    import os
    import tempfile

    import onnxruntime as ort
    with tempfile.TemporaryDirectory() as d:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.optimized_model_filepath = os.path.join(d, "opt.onnx")
        ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return onnx.load(so.optimized_model_filepath)


def fold_graph_any_producer(model):
    return _generic_fold(model, check_producer=False)


def fold_graph_ignores_uses(model):
    return _generic_fold(model, check_uses=False)


def fold_graph_no_eps(model):
    return _generic_fold(model, use_eps=False)


def fold_graph_default_eps(model):
    def fold_default(W, b, gamma, beta, mean, var, eps):
        return _fold_bn(W, b, gamma, beta, mean, var, 1e-5)
    return _generic_fold(model, fold=fold_default)


def fold_graph_last_axis(model):
    return _generic_fold(model, reshape=False)


def fold_graph_forgets_bias(model):
    return _generic_fold(model, add_bias=False)


def fold_graph_keeps_conv_output(model):
    return _generic_fold(model, rename_output=False)


def fold_graph_keeps_bn(model):
    return _generic_fold(model, remove_bn=False)


def fold_graph_mutates(model):
    return _generic_fold(model, copy_model=False)


def fold_graph_drops_identity(model):
    return _generic_fold(model, drop_identity=True)


def fold_graph_unchanged(model):
    return copy.deepcopy(model)


def fold_graph_first_pair_only(model):
    m = copy.deepcopy(model)
    first = next(n for n in m.graph.node if n.op_type == "BatchNormalization")
    others = [n for n in m.graph.node if n.op_type == "BatchNormalization" and n is not first]
    for n in others:
        n.op_type = "BatchNormalization_hidden"
    out = _generic_fold(m, copy_model=False)
    for n in out.graph.node:
        if n.op_type == "BatchNormalization_hidden":
            n.op_type = "BatchNormalization"
    return out


CORPUS = {
    "05.fold_graph": [
        Right("blind2-fold-rebuild-node-list", answer=fold_graph_rebuild),
        Right("blind2-fold-four-steps-loop", answer=fold_graph_helper_loop),
        Right("blind2-fold-float64-transpose", answer=fold_graph_float64),
        Wrong("blind2-fold-ort-optimizer", answer=fold_graph_ort_optimizer, skipped_skill=True),
        Wrong("blind2-fold-any-producer", answer=fold_graph_any_producer),
        Wrong("blind2-fold-ignores-other-readers", answer=fold_graph_ignores_uses),
        Wrong("blind2-fold-no-epsilon", answer=fold_graph_no_eps),
        Wrong("blind2-fold-default-epsilon", answer=fold_graph_default_eps),
        Wrong("blind2-fold-4d-kernels-only", answer=fold_graph_last_axis),
        Wrong("blind2-fold-forgets-new-bias", answer=fold_graph_forgets_bias),
        Wrong("blind2-fold-keeps-conv-output-name", answer=fold_graph_keeps_conv_output),
        Wrong("blind2-fold-keeps-bn-node", answer=fold_graph_keeps_bn),
        Wrong("blind2-fold-mutates-caller", answer=fold_graph_mutates, outputs_wrong=False),
        Wrong("blind2-fold-drops-identity", answer=fold_graph_drops_identity, outputs_wrong=False),
        Wrong("blind2-fold-unchanged", answer=fold_graph_unchanged, skipped_skill=True),
        Wrong("blind2-fold-first-pair-only", answer=fold_graph_first_pair_only),
    ],
}
