"""Blind corpus round 14, lesson 05 (written without seeing the judges).
Truths relied on (each proved on graphs of my own, run in ONNX Runtime 1.31 with ORT_DISABLE_ALL against the
unfolded original): BN(z) = gamma*(z-mean)/sqrt(var+eps)+beta per output channel (axis 0 of W, any rank of W:
1-D, 2-D, depthwise); epsilon defaults to 1e-5 when the attribute is absent; a Conv with no bias gains one; a
float64 initializer makes ORT refuse the float Conv; a Conv whose output also feeds another node or is a graph
output must not be folded (the other reader would lose its input); a BN after Relu/Identity is not a Conv pair;
a weight shared by two Convs must not be overwritten in place (the other Conv would get folded weights).
Ambiguities: (1) the prompt says "use your fold_bn" and "finish with drop_unused_initializers", but the function
runs in a separate process: whether those notebook helpers exist there is unsaid, so every answer here defines its
own (self-contained). (2) Conv -> BN -> BN: after the first fold the Conv feeds a BN again; a single pass with the
starting `producer` map folds one, a fixed-point loop folds both: both seem to fit "every Conv -> BN pair", none
of my labels depends on it. (3) Leaving the now-unused initializers in the file keeps outputs and nodes right;
the prompt asks to drop them but the check's stated criteria (nodes, outputs) do not: not used as a label.
(4) Replacing each BN by a 1x1 depthwise Conv (or Mul+Add) removes every BN and keeps outputs and every other
node: a node-count judge that only counts BatchNormalization and "other nodes still there" may pass it; labelled
a skipped-skill shortcut (nothing is folded into the Conv before it; the node count does not drop).
Measured: onnxscript.optimizer.optimize and ORT's BASIC-level file both pass the practice model fully (BN gone,
outputs equal); they differ only by removing the Identity (and onnxscript leaves the BNs of Convs that share a
weight): a judge must look at the Identity, or refuse the imports, to catch them.
"""
from corpus import Right, Wrong


# ----------------------------------------------------------------------------------------------- Right answers

def right_rebuild_graph(model):
    """Builds a brand-new node list (fresh Conv nodes carrying every attribute over), einsum for the
    per-channel scale, float64 arithmetic cast back to the weight's dtype, unique names from a counter."""
    import copy
    from collections import Counter

    import numpy as np
    from onnx import helper, numpy_helper

    out_model = copy.deepcopy(model)
    g = out_model.graph
    inits = {t.name: t for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    readers = Counter(i for n in g.node for i in n.input) + Counter(o.name for o in g.output)
    taken = set(inits) | {o for n in g.node for o in n.output} | {i for n in g.node for i in n.input} \
        | {v.name for v in g.input}

    def fresh(base):
        k = 0
        while f"{base}__bnfold{k}" in taken:
            k += 1
        taken.add(f"{base}__bnfold{k}")
        return f"{base}__bnfold{k}"

    folded_conv = {}  # id(conv) -> new conv node
    skip = set()
    for n in g.node:
        if n.op_type != "BatchNormalization" or n.domain not in ("", "ai.onnx"):
            continue
        conv = producer.get(n.input[0])
        if conv is None or conv.op_type != "Conv" or conv.domain not in ("", "ai.onnx"):
            continue
        if readers[n.input[0]] != 1 or id(conv) in folded_conv:
            continue
        if any(o for o in list(n.output)[1:]):
            continue
        params = list(conv.input[1:]) + list(n.input[1:5])
        params = [p for p in params if p]
        if not all(p in inits for p in params):
            continue
        W = numpy_helper.to_array(inits[conv.input[1]])
        has_b = len(conv.input) > 2 and conv.input[2] != ""
        b = numpy_helper.to_array(inits[conv.input[2]]).astype(np.float64) if has_b else 0.0
        gam, bet, mu, var = (numpy_helper.to_array(inits[p]).astype(np.float64) for p in n.input[1:5])
        eps = 1e-5
        for a in n.attribute:
            if a.name == "epsilon":
                eps = a.f
        s = gam / np.sqrt(var + eps)
        letters = "abcdefgh"[: W.ndim - 1]
        W2 = np.einsum(f"o{letters},o->o{letters}", W.astype(np.float64), s).astype(W.dtype)
        b2 = ((b - mu) * s + bet).astype(W.dtype)
        wn, bn_ = fresh(conv.input[1]), fresh(conv.name or "conv_bias")
        g.initializer.extend([numpy_helper.from_array(W2, wn), numpy_helper.from_array(b2, bn_)])
        new = helper.make_node("Conv", [conv.input[0], wn, bn_], [n.output[0]], name=conv.name)
        new.attribute.extend(conv.attribute)
        new.domain = conv.domain
        new.doc_string = conv.doc_string
        folded_conv[id(conv)] = new
        skip.add(id(n))
    nodes = []
    for n in g.node:
        if id(n) in skip:
            continue
        nodes.append(folded_conv.get(id(n), n))
    nodes = [copy.deepcopy(n) for n in nodes]
    del g.node[:]
    g.node.extend(nodes)
    used = {i for n in g.node for i in n.input}
    kept = [copy.deepcopy(t) for t in g.initializer if t.name in used]
    gone = {t.name for t in g.initializer} - used
    del g.initializer[:]
    g.initializer.extend(kept)
    ins = [copy.deepcopy(v) for v in g.input if v.name not in gone]
    del g.input[:]
    g.input.extend(ins)
    return out_model


def right_bytes_roundtrip_loop(model):
    """Copies through serialization, folds with an explicit loop over output channels (no broadcasting at all),
    edits the Conv in place inside the copy, removes BNs by index from the back."""
    import math

    import numpy as np
    import onnx
    from onnx import numpy_helper

    m = onnx.ModelProto()
    m.ParseFromString(model.SerializeToString())
    g = m.graph
    arrays = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    prod = {}
    for n in g.node:
        for o in n.output:
            prod[o] = n
    nreads = {}
    for n in g.node:
        for i in n.input:
            nreads[i] = nreads.get(i, 0) + 1
    for o in g.output:
        nreads[o.name] = nreads.get(o.name, 0) + 1
    names = set(arrays) | set(nreads) | set(prod)
    drop = []
    for idx, bn in enumerate(g.node):
        if bn.op_type != "BatchNormalization":
            continue
        c = prod.get(bn.input[0])
        if c is None or c.op_type != "Conv" or nreads.get(bn.input[0], 0) != 1:
            continue
        need = [c.input[1]] + ([c.input[2]] if len(c.input) > 2 and c.input[2] else []) + list(bn.input[1:5])
        if any(x not in arrays for x in need):
            continue
        eps = next((onnx.helper.get_attribute_value(a) for a in bn.attribute if a.name == "epsilon"), 1e-5)
        W = arrays[c.input[1]]
        cout = W.shape[0]
        bias = arrays[c.input[2]] if len(c.input) > 2 and c.input[2] else np.zeros(cout, W.dtype)
        gamma, beta, mean, var = (arrays[x] for x in bn.input[1:5])
        Wf = np.empty_like(W)
        bf = np.empty(cout, dtype=W.dtype)
        for ch in range(cout):
            f = float(gamma[ch]) / math.sqrt(float(var[ch]) + eps)
            Wf[ch] = W[ch] * np.asarray(f, dtype=W.dtype)
            bf[ch] = (float(bias[ch]) - float(mean[ch])) * f + float(beta[ch])
        k = len(names)
        while f"W_folded_{k}" in names or f"B_folded_{k}" in names:
            k += 1
        wname, bname = f"W_folded_{k}", f"B_folded_{k}"
        names |= {wname, bname}
        g.initializer.append(numpy_helper.from_array(Wf, wname))
        g.initializer.append(numpy_helper.from_array(bf, bname))
        arrays[wname], arrays[bname] = Wf, bf
        c.input[1] = wname
        if len(c.input) > 2:
            c.input[2] = bname
        else:
            c.input.append(bname)
        c.output[0] = bn.output[0]
        drop.append(idx)
    for idx in reversed(drop):
        del g.node[idx]
    live = {i for n in g.node for i in n.input}
    for j in reversed(range(len(g.initializer))):
        if g.initializer[j].name not in live:
            nm = g.initializer[j].name
            del g.initializer[j]
            for q in reversed(range(len(g.input))):
                if g.input[q].name == nm:
                    del g.input[q]
    return m


def right_fixed_point(model):
    """Folds one pair at a time and recomputes every lookup after each fold, until no pair is left; the
    scale is applied with reshape((-1,) + (1,) * (ndim - 1)) and the arithmetic stays in float32."""
    import copy
    from collections import Counter

    import numpy as np
    from onnx import numpy_helper

    model = copy.deepcopy(model)
    graph = model.graph
    serial = [0]

    while True:
        weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        producer = {out: node for node in graph.node for out in node.output}
        uses = Counter(name for node in graph.node for name in node.input)
        uses.update(out.name for out in graph.output)
        target = None
        for node in graph.node:
            if node.op_type != "BatchNormalization":
                continue
            conv = producer.get(node.input[0])
            if conv is None or conv.op_type != "Conv" or uses[node.input[0]] != 1:
                continue
            params = [conv.input[1]] + [x for x in conv.input[2:3] if x] + list(node.input[1:5])
            if all(p in weights for p in params):
                target = (conv, node)
                break
        if target is None:
            break
        conv, bn = target
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 and conv.input[2] else np.zeros(W.shape[0], W.dtype)
        g_, be, mu, var = (weights[p].astype(np.float32) for p in bn.input[1:5])
        eps = 1e-5
        for a in bn.attribute:
            if a.name == "epsilon":
                eps = a.f
        s = (g_ / np.sqrt(var + np.float32(eps))).astype(np.float32)
        Wf = (W * s.reshape((-1,) + (1,) * (W.ndim - 1))).astype(W.dtype)
        bf = ((b - mu) * s + be).astype(W.dtype)
        existing = set(weights) | set(producer) | set(uses)
        while f"fold{serial[0]}_w" in existing or f"fold{serial[0]}_b" in existing:
            serial[0] += 1
        wn, bnm = f"fold{serial[0]}_w", f"fold{serial[0]}_b"
        serial[0] += 1
        graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bnm)])
        conv.input[1] = wn
        if len(conv.input) > 2:
            conv.input[2] = bnm
        else:
            conv.input.append(bnm)
        conv.output[0] = bn.output[0]
        graph.node.remove(bn)
    used = {name for node in graph.node for name in node.input}
    keep = [t for t in graph.initializer if t.name in used]
    dropped = {t.name for t in graph.initializer} - used
    del graph.initializer[:]
    graph.initializer.extend(keep)
    keep_inputs = [i for i in graph.input if i.name not in dropped]
    del graph.input[:]
    graph.input.extend(keep_inputs)
    return model


# --------------------------------------------------------------------------- the template, filled in obviously
# Every Wrong below is this body with one mistake; written out in full so each answer stands alone.

def wrong_no_reshape(model):
    """W * s broadcasts s against the LAST axis (the kernel width), not the output channels."""
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
        if conv is None or conv.op_type != "Conv" or uses[bn.input[0]] != 1:
            continue
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 else np.zeros(W.shape[0], W.dtype)
        gamma, beta, mean, var = (weights[p] for p in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        s = gamma / np.sqrt(var + eps)
        Wf = (W * s).astype(W.dtype)
        bf = ((b - mean) * s + beta).astype(W.dtype)
        graph.initializer.extend([numpy_helper.from_array(Wf, conv.input[1] + "_f"),
                                  numpy_helper.from_array(bf, conv.name + "_bias_f")])
        conv.input[1] = conv.input[1] + "_f"
        if len(conv.input) > 2:
            conv.input[2] = conv.name + "_bias_f"
        else:
            conv.input.append(conv.name + "_bias_f")
        conv.output[0] = bn.output[0]
        graph.node.remove(bn)
    return model


def wrong_no_epsilon(model):
    """Divides by sqrt(var) and forgets epsilon (the practice variances are small enough for it to show)."""
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
    for k, bn in enumerate([n for n in graph.node if n.op_type == "BatchNormalization"]):
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or uses[bn.input[0]] != 1:
            continue
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 else np.zeros(W.shape[0], W.dtype)
        gamma, beta, mean, var = (weights[p] for p in bn.input[1:5])
        s = gamma / np.sqrt(var)
        Wf = (W * s.reshape(-1, *[1] * (W.ndim - 1))).astype(W.dtype)
        bf = ((b - mean) * s + beta).astype(W.dtype)
        wn, bnm = f"folded_W_{k}", f"folded_B_{k}"
        graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bnm)])
        conv.input[1] = wn
        if len(conv.input) > 2:
            conv.input[2] = bnm
        else:
            conv.input.append(bnm)
        conv.output[0] = bn.output[0]
        graph.node.remove(bn)
    used = {i for n in graph.node for i in n.input}
    keep = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(keep)
    return model


def wrong_default_epsilon(model):
    """Uses 1e-5 for every BN (reads the notebook's text, not the node's `epsilon` attribute)."""
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
    for k, bn in enumerate([n for n in graph.node if n.op_type == "BatchNormalization"]):
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or uses[bn.input[0]] != 1:
            continue
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 else np.zeros(W.shape[0], W.dtype)
        gamma, beta, mean, var = (weights[p] for p in bn.input[1:5])
        s = gamma / np.sqrt(var + 1e-5)
        Wf = (W * s.reshape(-1, *[1] * (W.ndim - 1))).astype(W.dtype)
        bf = ((b - mean) * s + beta).astype(W.dtype)
        wn, bnm = f"folded_W_{k}", f"folded_B_{k}"
        graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bnm)])
        conv.input[1] = wn
        if len(conv.input) > 2:
            conv.input[2] = bnm
        else:
            conv.input.append(bnm)
        conv.output[0] = bn.output[0]
        graph.node.remove(bn)
    return model


def wrong_ignores_conv_bias(model):
    """b' = beta - mean * s: drops the Conv's own bias when it has one."""
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
    for k, bn in enumerate([n for n in graph.node if n.op_type == "BatchNormalization"]):
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or uses[bn.input[0]] != 1:
            continue
        W = weights[conv.input[1]]
        gamma, beta, mean, var = (weights[p] for p in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        s = gamma / np.sqrt(var + eps)
        Wf = (W * s.reshape(-1, *[1] * (W.ndim - 1))).astype(W.dtype)
        bf = (beta - mean * s).astype(W.dtype)
        wn, bnm = f"folded_W_{k}", f"folded_B_{k}"
        graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bnm)])
        conv.input[1] = wn
        if len(conv.input) > 2:
            conv.input[2] = bnm
        else:
            conv.input.append(bnm)
        conv.output[0] = bn.output[0]
        graph.node.remove(bn)
    return model


def wrong_no_uses_check(model):
    """Folds even when the Conv's output also feeds an Add (that Add loses its input)."""
    import copy

    import numpy as np
    from onnx import numpy_helper

    model = copy.deepcopy(model)
    graph = model.graph
    weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    for k, bn in enumerate([n for n in graph.node if n.op_type == "BatchNormalization"]):
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv":
            continue
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 else np.zeros(W.shape[0], W.dtype)
        gamma, beta, mean, var = (weights[p] for p in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        s = gamma / np.sqrt(var + eps)
        Wf = (W * s.reshape(-1, *[1] * (W.ndim - 1))).astype(W.dtype)
        bf = ((b - mean) * s + beta).astype(W.dtype)
        wn, bnm = f"folded_W_{k}", f"folded_B_{k}"
        graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bnm)])
        conv.input[1] = wn
        if len(conv.input) > 2:
            conv.input[2] = bnm
        else:
            conv.input.append(bnm)
        conv.output[0] = bn.output[0]
        graph.node.remove(bn)
    return model


def wrong_nodes_only_uses(model):
    """Counts readers among nodes only: a Conv output that is ALSO a graph output gets folded away."""
    import copy
    from collections import Counter

    import numpy as np
    from onnx import numpy_helper

    model = copy.deepcopy(model)
    graph = model.graph
    weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    uses = Counter(name for node in graph.node for name in node.input)
    for k, bn in enumerate([n for n in graph.node if n.op_type == "BatchNormalization"]):
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or uses[bn.input[0]] != 1:
            continue
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 else np.zeros(W.shape[0], W.dtype)
        gamma, beta, mean, var = (weights[p] for p in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        s = gamma / np.sqrt(var + eps)
        Wf = (W * s.reshape(-1, *[1] * (W.ndim - 1))).astype(W.dtype)
        bf = ((b - mean) * s + beta).astype(W.dtype)
        wn, bnm = f"folded_W_{k}", f"folded_B_{k}"
        graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bnm)])
        conv.input[1] = wn
        if len(conv.input) > 2:
            conv.input[2] = bnm
        else:
            conv.input.append(bnm)
        conv.output[0] = bn.output[0]
        graph.node.remove(bn)
    return model


def wrong_any_producer(model):
    """Never checks that the producer is a Conv: a BN after a Relu or an Identity crashes (no input[1])."""
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
    for k, bn in enumerate([n for n in graph.node if n.op_type == "BatchNormalization"]):
        conv = producer.get(bn.input[0])
        if conv is None or uses[bn.input[0]] != 1:
            continue
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 else np.zeros(W.shape[0], W.dtype)
        gamma, beta, mean, var = (weights[p] for p in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        s = gamma / np.sqrt(var + eps)
        Wf = (W * s.reshape(-1, *[1] * (W.ndim - 1))).astype(W.dtype)
        bf = ((b - mean) * s + beta).astype(W.dtype)
        wn, bnm = f"folded_W_{k}", f"folded_B_{k}"
        graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bnm)])
        conv.input[1] = wn
        if len(conv.input) > 2:
            conv.input[2] = bnm
        else:
            conv.input.append(bnm)
        conv.output[0] = bn.output[0]
        graph.node.remove(bn)
    return model


def wrong_overwrite_shared_weight(model):
    """Writes the folded weight back under the OLD initializer name: a second Conv that shares the weight
    silently gets the first BN's scale too (and a weight shared by two folded Convs is scaled twice)."""
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
    for k, bn in enumerate([n for n in graph.node if n.op_type == "BatchNormalization"]):
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or uses[bn.input[0]] != 1:
            continue
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 else np.zeros(W.shape[0], W.dtype)
        gamma, beta, mean, var = (weights[p] for p in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        s = gamma / np.sqrt(var + eps)
        Wf = (W * s.reshape(-1, *[1] * (W.ndim - 1))).astype(W.dtype)
        bf = ((b - mean) * s + beta).astype(W.dtype)
        weights[conv.input[1]] = Wf
        for t in graph.initializer:
            if t.name == conv.input[1]:
                t.CopyFrom(numpy_helper.from_array(Wf, t.name))
        bnm = f"{bn.output[0]}__folded_bias_{k}"
        graph.initializer.append(numpy_helper.from_array(bf, bnm))
        if len(conv.input) > 2:
            conv.input[2] = bnm
        else:
            conv.input.append(bnm)
        conv.output[0] = bn.output[0]
        graph.node.remove(bn)
    return model


def wrong_float64(model):
    """Does the arithmetic in float64 and never casts back: DOUBLE initializers that a float Conv refuses."""
    import copy
    from collections import Counter

    import numpy as np
    from onnx import numpy_helper

    model = copy.deepcopy(model)
    graph = model.graph
    weights = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    uses = Counter(name for node in graph.node for name in node.input)
    uses.update(out.name for out in graph.output)
    for k, bn in enumerate([n for n in graph.node if n.op_type == "BatchNormalization"]):
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or uses[bn.input[0]] != 1:
            continue
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 else np.zeros(W.shape[0])
        gamma, beta, mean, var = (weights[p] for p in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        s = gamma / np.sqrt(var + eps)
        Wf = W * s.reshape(-1, *[1] * (W.ndim - 1))
        bf = (b - mean) * s + beta
        wn, bnm = f"folded_W_{k}", f"folded_B_{k}"
        graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bnm)])
        conv.input[1] = wn
        if len(conv.input) > 2:
            conv.input[2] = bnm
        else:
            conv.input.append(bnm)
        conv.output[0] = bn.output[0]
        graph.node.remove(bn)
    return model


def wrong_4d_only(model):
    """Reshapes the scale to (C_out, 1, 1, 1) always, as the lesson text shows: a 1-D Conv weight
    (C_out, C_in, k) broadcasts into a 4-D array and the Conv refuses it."""
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
    for k, bn in enumerate([n for n in graph.node if n.op_type == "BatchNormalization"]):
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or uses[bn.input[0]] != 1:
            continue
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 else np.zeros(W.shape[0], W.dtype)
        gamma, beta, mean, var = (weights[p] for p in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        s = gamma / np.sqrt(var + eps)
        Wf = (W * s.reshape(-1, 1, 1, 1)).astype(W.dtype)
        bf = ((b - mean) * s + beta).astype(W.dtype)
        wn, bnm = f"folded_W_{k}", f"folded_B_{k}"
        graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bnm)])
        conv.input[1] = wn
        if len(conv.input) > 2:
            conv.input[2] = bnm
        else:
            conv.input.append(bnm)
        conv.output[0] = bn.output[0]
        graph.node.remove(bn)
    return model


def wrong_rewire_consumers(model):
    """Keeps the Conv's output name and points the BN's readers at it instead: when the BN wrote a graph
    output, nothing produces that output any more."""
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
    for k, bn in enumerate([n for n in graph.node if n.op_type == "BatchNormalization"]):
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or uses[bn.input[0]] != 1:
            continue
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 else np.zeros(W.shape[0], W.dtype)
        gamma, beta, mean, var = (weights[p] for p in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        s = gamma / np.sqrt(var + eps)
        Wf = (W * s.reshape(-1, *[1] * (W.ndim - 1))).astype(W.dtype)
        bf = ((b - mean) * s + beta).astype(W.dtype)
        wn, bnm = f"folded_W_{k}", f"folded_B_{k}"
        graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bnm)])
        conv.input[1] = wn
        if len(conv.input) > 2:
            conv.input[2] = bnm
        else:
            conv.input.append(bnm)
        for other in graph.node:
            for j, name in enumerate(other.input):
                if name == bn.output[0]:
                    other.input[j] = conv.output[0]
        graph.node.remove(bn)
    return model


def wrong_bias_not_appended(model):
    """Computes b' but only sets it when the Conv already had a bias input: a bias-less Conv loses b'."""
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
    for k, bn in enumerate([n for n in graph.node if n.op_type == "BatchNormalization"]):
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or uses[bn.input[0]] != 1:
            continue
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 else np.zeros(W.shape[0], W.dtype)
        gamma, beta, mean, var = (weights[p] for p in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        s = gamma / np.sqrt(var + eps)
        Wf = (W * s.reshape(-1, *[1] * (W.ndim - 1))).astype(W.dtype)
        bf = ((b - mean) * s + beta).astype(W.dtype)
        wn, bnm = f"folded_W_{k}", f"folded_B_{k}"
        graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bnm)])
        conv.input[1] = wn
        if len(conv.input) > 2:
            conv.input[2] = bnm
        conv.output[0] = bn.output[0]
        graph.node.remove(bn)
    return model


def wrong_mutates_caller(model):
    """Folds correctly but in the caller's own model (no copy), and returns it: outputs right, the
    prompt's "returns a copy" broken (the caller's graph lost its BatchNormalizations)."""
    from collections import Counter

    import numpy as np
    from onnx import numpy_helper

    graph = model.graph
    weights = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    uses = Counter(name for node in graph.node for name in node.input)
    uses.update(out.name for out in graph.output)
    for k, bn in enumerate([n for n in graph.node if n.op_type == "BatchNormalization"]):
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or uses[bn.input[0]] != 1:
            continue
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 else np.zeros(W.shape[0], W.dtype)
        gamma, beta, mean, var = (weights[p] for p in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        s = gamma / np.sqrt(var + eps)
        Wf = (W * s.reshape(-1, *[1] * (W.ndim - 1))).astype(W.dtype)
        bf = ((b - mean) * s + beta).astype(W.dtype)
        taken = {t.name for t in graph.initializer} | set(producer) | set(uses)
        wn, bnm = f"folded_W_{k}", f"folded_B_{k}"
        while wn in taken or bnm in taken:
            wn, bnm = wn + "_", bnm + "_"
        graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bnm)])
        conv.input[1] = wn
        if len(conv.input) > 2:
            conv.input[2] = bnm
        else:
            conv.input.append(bnm)
        conv.output[0] = bn.output[0]
        graph.node.remove(bn)
    return model


def wrong_drops_identity(model):
    """Folds correctly, then 'cleans up' like ORT's optimizer: every Identity is bypassed and removed.
    Outputs right, but a node that is not a Conv -> BN pair is gone (the prompt: every other node stays)."""
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
    taken = set(weights) | set(producer) | set(uses)
    for k, bn in enumerate([n for n in graph.node if n.op_type == "BatchNormalization"]):
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or uses[bn.input[0]] != 1:
            continue
        W = weights[conv.input[1]]
        b = weights[conv.input[2]] if len(conv.input) > 2 else np.zeros(W.shape[0], W.dtype)
        gamma, beta, mean, var = (weights[p] for p in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        s = gamma / np.sqrt(var + eps)
        Wf = (W * s.reshape(-1, *[1] * (W.ndim - 1))).astype(W.dtype)
        bf = ((b - mean) * s + beta).astype(W.dtype)
        wn, bnm = f"folded_W_{k}", f"folded_B_{k}"
        while wn in taken or bnm in taken:
            wn, bnm = wn + "_", bnm + "_"
        graph.initializer.extend([numpy_helper.from_array(Wf, wn), numpy_helper.from_array(bf, bnm)])
        conv.input[1] = wn
        if len(conv.input) > 2:
            conv.input[2] = bnm
        else:
            conv.input.append(bnm)
        conv.output[0] = bn.output[0]
        graph.node.remove(bn)
    outs = {o.name for o in graph.output}
    for ident in [n for n in graph.node if n.op_type == "Identity"]:
        src, dst = ident.input[0], ident.output[0]
        if dst in outs:
            prod = next((n for n in graph.node if src in n.output), None)
            if prod is None:
                continue
            prod.output[list(prod.output).index(src)] = dst
            for n in graph.node:
                for j, name in enumerate(n.input):
                    if name == src:
                        n.input[j] = dst
        else:
            for n in graph.node:
                for j, name in enumerate(n.input):
                    if name == dst:
                        n.input[j] = src
        graph.node.remove(ident)
    used = {i for n in graph.node for i in n.input}
    keep = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(keep)
    return model


# ------------------------------------------------------------------------------------------------- shortcuts

def shortcut_copy_unchanged(model):
    """Returns a copy and folds nothing."""
    import copy

    return copy.deepcopy(model)


def shortcut_bn_to_pointwise_conv(model):
    """Leaves every Conv alone and turns each foldable BN (right after a Conv read by nothing else) into its
    own 1x1 depthwise Conv (weights s, bias beta - mean*s). The foldable BNs are gone, outputs match, every
    other node stays; but nothing was folded into the Conv before it: the node count does not drop."""
    import copy
    from collections import Counter

    import numpy as np
    from onnx import helper, numpy_helper

    model = copy.deepcopy(model)
    graph = model.graph
    w = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    uses = Counter(name for node in graph.node for name in node.input)
    uses.update(out.name for out in graph.output)
    new_nodes = []
    for k, n in enumerate(graph.node):
        prod = producer.get(n.input[0]) if n.op_type == "BatchNormalization" else None
        if (prod is None or prod.op_type != "Conv" or uses[n.input[0]] != 1
                or not all(p in w for p in list(n.input[1:5]) + [prod.input[1]])):
            new_nodes.append(n)
            continue
        gamma, beta, mean, var = (w[p] for p in n.input[1:5])
        eps = next((a.f for a in n.attribute if a.name == "epsilon"), 1e-5)
        s = (gamma / np.sqrt(var + eps)).astype(np.float32)
        c = len(s)
        spatial = w[prod.input[1]].ndim - 2
        wn, bn_ = f"{n.name or 'bn'}_pw_W_{k}", f"{n.name or 'bn'}_pw_B_{k}"
        graph.initializer.extend([
            numpy_helper.from_array(s.reshape((c, 1) + (1,) * spatial), wn),
            numpy_helper.from_array((beta - mean * s).astype(np.float32), bn_)])
        new_nodes.append(helper.make_node("Conv", [n.input[0], wn, bn_], [n.output[0]], name=n.name,
                                          group=c, kernel_shape=[1] * spatial))
    del graph.node[:]
    graph.node.extend(new_nodes)
    return model


def shortcut_bn_to_mul_add(model):
    """Replaces each foldable BN by Mul(s) + Add(shift) with broadcastable constants: the foldable BNs are
    gone and outputs are right, but nothing is folded (two nodes instead of one)."""
    import copy
    from collections import Counter

    import numpy as np
    from onnx import helper, numpy_helper

    model = copy.deepcopy(model)
    graph = model.graph
    w = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    uses = Counter(name for node in graph.node for name in node.input)
    uses.update(out.name for out in graph.output)
    new_nodes = []
    for k, n in enumerate(graph.node):
        prod = producer.get(n.input[0]) if n.op_type == "BatchNormalization" else None
        if (prod is None or prod.op_type != "Conv" or uses[n.input[0]] != 1
                or not all(p in w for p in list(n.input[1:5]) + [prod.input[1]])):
            new_nodes.append(n)
            continue
        gamma, beta, mean, var = (w[p] for p in n.input[1:5])
        eps = next((a.f for a in n.attribute if a.name == "epsilon"), 1e-5)
        s = (gamma / np.sqrt(var + eps)).astype(np.float32)
        shape = (len(s),) + (1,) * (w[prod.input[1]].ndim - 2)
        sn, tn, mid = f"bnmul_s_{k}", f"bnadd_t_{k}", f"bnmul_out_{k}"
        graph.initializer.extend([numpy_helper.from_array(s.reshape(shape), sn),
                                  numpy_helper.from_array((beta - mean * s).astype(np.float32).reshape(shape), tn)])
        new_nodes.append(helper.make_node("Mul", [n.input[0], sn], [mid], name=f"bn_mul_{k}"))
        new_nodes.append(helper.make_node("Add", [mid, tn], [n.output[0]], name=f"bn_add_{k}"))
    del graph.node[:]
    graph.node.extend(new_nodes)
    return model


def shortcut_onnxscript_optimizer(model):
    """Hands the graph to onnxscript's optimizer (which folds BN itself, and constant-folds / drops Identity).
    In the check's process onnxscript is not importable, and it is not the learner's folding anyway."""
    import onnxscript.optimizer

    return onnxscript.optimizer.optimize(model)


def shortcut_ort_basic(model):
    """Has ONNX Runtime write its BASIC-level optimized graph and hands that in (the prompt names this one)."""
    import os
    import tempfile

    import onnx
    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as d:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.optimized_model_filepath = os.path.join(d, "o.onnx")
        ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return onnx.load(so.optimized_model_filepath)


def shortcut_delete_bn(model):
    """Deletes each BN after a Conv and gives the Conv its output name, weights untouched."""
    import copy

    model = copy.deepcopy(model)
    g = model.graph
    prod = {o: n for n in g.node for o in n.output}
    for bn in [n for n in g.node if n.op_type == "BatchNormalization"]:
        c = prod.get(bn.input[0])
        if c is not None and c.op_type == "Conv":
            c.output[0] = bn.output[0]
            g.node.remove(bn)
    return model


CORPUS = {"05.fold_graph": [
    Right("blind14-fold-rebuild-einsum", answer=right_rebuild_graph),
    Right("blind14-fold-bytes-loop-per-channel", answer=right_bytes_roundtrip_loop),
    Right("blind14-fold-fixed-point", answer=right_fixed_point),
    Wrong("blind14-fold-no-reshape", answer=wrong_no_reshape),
    Wrong("blind14-fold-no-epsilon", answer=wrong_no_epsilon),
    Wrong("blind14-fold-default-epsilon", answer=wrong_default_epsilon),
    Wrong("blind14-fold-ignores-conv-bias", answer=wrong_ignores_conv_bias),
    Wrong("blind14-fold-no-uses-check", answer=wrong_no_uses_check),
    Wrong("blind14-fold-graph-output-uses", answer=wrong_nodes_only_uses),
    Wrong("blind14-fold-any-producer", answer=wrong_any_producer),
    Wrong("blind14-fold-overwrite-shared-weight", answer=wrong_overwrite_shared_weight),
    Wrong("blind14-fold-float64", answer=wrong_float64),
    Wrong("blind14-fold-4d-only", answer=wrong_4d_only),
    Wrong("blind14-fold-rewire-consumers", answer=wrong_rewire_consumers),
    Wrong("blind14-fold-bias-not-appended", answer=wrong_bias_not_appended),
    Wrong("blind14-fold-mutates-caller", answer=wrong_mutates_caller, outputs_wrong=False),
    Wrong("blind14-fold-drops-identity", answer=wrong_drops_identity, outputs_wrong=False),
    Wrong("blind14-fold-copy-unchanged", answer=shortcut_copy_unchanged, skipped_skill=True),
    Wrong("blind14-fold-bn-to-pointwise-conv", answer=shortcut_bn_to_pointwise_conv, skipped_skill=True,
          outputs_wrong=False),
    Wrong("blind14-fold-bn-to-mul-add", answer=shortcut_bn_to_mul_add, skipped_skill=True, outputs_wrong=False),
    Wrong("blind14-fold-onnxscript-optimizer", answer=shortcut_onnxscript_optimizer, skipped_skill=True),
    Wrong("blind14-fold-ort-basic", answer=shortcut_ort_basic, skipped_skill=True),
    Wrong("blind14-fold-delete-bn", answer=shortcut_delete_bn, skipped_skill=True),
]}
