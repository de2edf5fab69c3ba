"""Lesson 05: answers learners write for BatchNorm folding (by formula, in a graph) and the portable file."""
import copy
from collections import Counter

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

from corpus import Right, Wrong
from labkit.material.l05 import practice_model

# ---------------------------------------------------------------- 05.fold_bn


def _fold_einsum(W, b, gamma, beta, mean, var, eps):
    s = gamma / np.sqrt(var + eps)
    W2 = np.einsum("o...,o->o...", W, s)
    return W2, (0 if b is None else b) * s - mean * s + beta


def _fold_moveaxis(W, b, gamma, beta, mean, var, eps):
    s = (gamma.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps))
    W2 = np.moveaxis(np.moveaxis(W, 0, -1) * s, -1, 0)
    b = np.zeros(len(gamma)) if b is None else b
    return W2.astype(np.float32), ((b - mean) * s + beta).astype(np.float32)


def _fold(axis_last=False, no_eps=False, no_sqrt=False, no_beta=False, bias_first=False):
    def fold_bn(W, b, gamma, beta, mean, var, eps):
        v = var if no_eps else var + eps
        s = gamma / (v if no_sqrt else np.sqrt(v))
        W2 = W * s if axis_last else W * s.reshape((-1,) + (1,) * (W.ndim - 1))
        b = np.zeros_like(mean) if b is None else b
        b2 = (b * s - mean) + beta if bias_first else (b - mean) * s + (0 if no_beta else beta)
        return W2, b2
    return fold_bn


def _fold_needs_bias(W, b, gamma, beta, mean, var, eps):
    s = gamma / np.sqrt(var + eps)
    return W * s.reshape((-1,) + (1,) * (W.ndim - 1)), (b - mean) * s + beta


def _fold_4d_only(W, b, gamma, beta, mean, var, eps):
    s = gamma / np.sqrt(var + eps)
    b = np.zeros_like(mean) if b is None else b
    return W * s[:, None, None, None], (b - mean) * s + beta


# ---------------------------------------------------------------- 05.fold_graph


def _fold_model(model, *, check_uses=True, eps=None, rewire_only=False, keep_bias=False, rename=True,
                only_first=False, names=None):
    """A Conv+BN folding pass with switches for the mistakes learners make."""
    model = copy.deepcopy(model)
    g = model.graph
    w = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    uses = Counter(i for n in g.node for i in n.input) + Counter(o.name for o in g.output)
    drop = []
    for bn in list(g.node):
        if bn.op_type != "BatchNormalization":
            continue
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or (check_uses and uses[conv.output[0]] != 1):
            continue
        if names is not None and conv.name not in names:
            continue
        if not rewire_only:
            e = eps if eps is not None else next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
            gamma, beta, mean, var = (w[n] for n in bn.input[1:5])
            s = gamma / np.sqrt(var + e)
            W = w[conv.input[1]]
            b = w[conv.input[2]] if len(conv.input) > 2 else np.zeros_like(mean)
            W_f = W * s.reshape((-1,) + (1,) * (W.ndim - 1))  # any number of kernel axes (1-D, 2-D convolutions)
            g.initializer.append(numpy_helper.from_array(W_f.astype(np.float32), bn.name + "_W"))
            conv.input[1] = bn.name + "_W"
            if len(conv.input) > 2 or not keep_bias:
                g.initializer.append(numpy_helper.from_array(((b - mean) * s + beta).astype(np.float32), bn.name + "_B"))
                if len(conv.input) > 2:
                    conv.input[2] = bn.name + "_B"
                else:
                    conv.input.append(bn.name + "_B")
        if rename:
            conv.output[0] = bn.output[0]
        drop.append(bn)
        if only_first:
            break
    for bn in drop:
        g.node.remove(bn)
    return model


def _fold_rebuild(model):
    """Right, written differently: build a new node list and a new initializer list."""
    from onnx import helper

    g = model.graph
    w = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    readers = Counter(i for n in g.node for i in n.input) + Counter(o.name for o in g.output)
    by_out = {n.output[0]: n for n in g.node}
    replace, skip = {}, set()
    for n in g.node:
        if n.op_type == "BatchNormalization":
            c = by_out.get(n.input[0])
            if c is not None and c.op_type == "Conv" and readers[c.output[0]] == 1:
                replace[id(c)] = n
                skip.add(id(n))
    nodes, inits = [], {k: v for k, v in w.items()}
    for n in g.node:
        if id(n) in skip:
            continue
        if id(n) in replace:
            bn = replace[id(n)]
            eps = onnx.helper.get_node_attr_value(bn, "epsilon") if any(a.name == "epsilon" for a in bn.attribute) else 1e-5
            gamma, beta, mean, var = (w[i].astype(np.float64) for i in bn.input[1:5])
            s = gamma / np.sqrt(var + eps)
            W = w[n.input[1]].astype(np.float64)
            b = w[n.input[2]].astype(np.float64) if len(n.input) > 2 else 0.0
            inits[f"folded/{bn.output[0]}/W"] = (W.T * s).T.astype(np.float32)
            inits[f"folded/{bn.output[0]}/B"] = (s * (b - mean) + beta).astype(np.float32)
            nodes.append(helper.make_node("Conv", [n.input[0], f"folded/{bn.output[0]}/W", f"folded/{bn.output[0]}/B"],
                                          [bn.output[0]], name=n.name,
                                          **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
        else:
            nodes.append(n)
    used = {i for n in nodes for i in n.input}
    graph = helper.make_graph(nodes, g.name, g.input, g.output,
                              [numpy_helper.from_array(v, k) for k, v in inits.items() if k in used])
    return helper.make_model(graph, opset_imports=model.opset_import, ir_version=model.ir_version)


def _ort_shortcut(model, level=ort.GraphOptimizationLevel.ORT_ENABLE_BASIC):
    """Not folding at all: let ONNX Runtime optimize the graph and hand in the file it writes."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        so = ort.SessionOptions()
        so.graph_optimization_level = level
        so.optimized_model_filepath = str(Path(tmp) / "opt.onnx")
        ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return onnx.load(so.optimized_model_filepath)


_BASIC_PRACTICE = []


def _practice_basic_file():
    if not _BASIC_PRACTICE:
        _BASIC_PRACTICE.append(_ort_shortcut(onnx.load_from_string(practice_model())))
    return _BASIC_PRACTICE[0]


# ---------------------------------------------------------------- 05.portable


def _saved(tmp, level, model_bytes=None, **kw):
    tmp.mkdir(parents=True, exist_ok=True)
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.optimized_model_filepath = str(tmp / "saved.onnx")
    ort.InferenceSession(model_bytes or practice_model(), so, providers=["CPUExecutionProvider"], **kw)
    return tmp / "saved.onnx"


def _other_weights():
    m = onnx.load_from_string(practice_model(seed=6))
    return m.SerializeToString()


L = ort.GraphOptimizationLevel


# ---------------------------------------------------------------- 05.rewrite_rule


def _rule_rewriter(condition=True, commute=True, gemm_attrs=None):
    """The rules answer (matmul_add_rules()), with a mistake switched on."""
    from onnxscript.rewriter import pattern

    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b, **(gemm_attrs or {}))

    def rank2(context, x, w, b, **_):
        return all(v.shape is not None for v in (x, w, b)) and len(x.shape) == len(w.shape) == 2 and len(b.shape) == 1

    rule = pattern.RewriteRule(target, replacement, rank2 if condition else None)
    return lambda: pattern.RewriteRuleSet([rule], commute=commute)


def _two_rules():
    """Right, written differently: two explicit patterns instead of commute=True, a class-free condition on rank."""
    from onnxscript.rewriter import pattern

    def ok(context, x, w, b, **_):
        try:
            return len(x.shape) == 2 and len(w.shape) == 2 and len(b.shape) == 1
        except TypeError:
            return False

    return [pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b), lambda op, x, w, b: op.Gemm(x, w, b), ok),
            pattern.RewriteRule(lambda op, x, w, b: op.Add(b, op.MatMul(x, w)), lambda op, x, w, b: op.Gemm(x, w, b), ok)]


def _rewrite_by_hand_everything(model):
    """The old answer form (a function of the model, a pass by hand): the check now asks for the rules."""
    return model


def _shipped_rule():
    """onnxscript's own rule, not one written: the check refuses it."""
    from onnxscript.rewriter.rules.common import matmul_add_to_gemm_rule

    return [matmul_add_to_gemm_rule]


def _rule_and_identity():
    """The right rule plus one that removes Identity nodes: outputs stay right, other nodes change."""
    from onnxscript.rewriter import pattern

    return [*_rule_rewriter()().rules, pattern.RewriteRule(lambda op, x: op.Identity(x), lambda op, x: op.Neg(op.Neg(x)))]


def _onnxscript_optimized(model):
    """Not folding at all: onnxscript's optimizer (constant folding, Identity removal) on the graph."""
    import onnxscript.optimizer

    return onnxscript.optimizer.optimize(model)


def _fold_in_place(model):
    """Right folding, but into the model it was given: the caller's model is changed too."""
    folded = _fold_model(model)
    model.CopyFrom(folded)
    return model


CORPUS = {
    "05.fold_bn": [
        Right("einsum, b=0 by default", answer=_fold_einsum),
        Right("moveaxis in float64", answer=_fold_moveaxis),
        Wrong("W and b handed back unchanged", answer=lambda W, b, *rest: (W, b), skipped_skill=True),
        Wrong("epsilon forgotten", answer=_fold(no_eps=True)),
        Wrong("variance instead of standard deviation", answer=_fold(no_sqrt=True)),
        Wrong("scale broadcast on the last axis", answer=_fold(axis_last=True)),
        Wrong("beta forgotten", answer=_fold(no_beta=True)),
        Wrong("mean not scaled", answer=_fold(bias_first=True)),
        Wrong("b=None crashes", answer=_fold_needs_bias),
        Wrong("only 4-D kernels", answer=_fold_4d_only),
    ],
    "05.fold_graph": [
        Right("rebuilt node and initializer lists", answer=_fold_rebuild),
        Right("in-place pass on a copy", answer=lambda m: _fold_model(m)),
        Wrong("ORT BASIC file instead of folding", answer=_ort_shortcut, skipped_skill=True),
        Wrong("onnxscript's optimizer instead of folding", answer=_onnxscript_optimized, skipped_skill=True),
        Wrong("ORT EXTENDED file instead of folding",
              answer=lambda m: _ort_shortcut(m, ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED), skipped_skill=True),
        Wrong("the practice model's BASIC file for every graph", answer=lambda m: _practice_basic_file(), skipped_skill=True),
        Wrong("folds a Conv whose output is also read elsewhere", answer=lambda m: _fold_model(m, check_uses=False)),
        Wrong("epsilon 1e-5 everywhere", answer=lambda m: _fold_model(m, eps=1e-5)),
        Wrong("BN removed, not folded", answer=lambda m: _fold_model(m, rewire_only=True)),
        Wrong("bias not added to a Conv without one", answer=lambda m: _fold_model(m, keep_bias=True)),
        Wrong("output names not taken over", answer=lambda m: _fold_model(m, rename=False)),
        Wrong("only the first pair", answer=lambda m: _fold_model(m, only_first=True)),
        Wrong("folds the caller's model in place (and returns it)", answer=_fold_in_place),
        Wrong("names of the practice model hard-coded",
              answer=lambda m: _fold_model(m, names={"conv1", "conv2", "conv3"})),
        Wrong("returns the model unchanged", answer=lambda m: m, skipped_skill=True),
    ],
    "05.rewrite_rule": [
        Right("one rule, commute=True, rank condition", answer=_rule_rewriter()),
        Right("two explicit patterns", answer=_two_rules),
        Wrong("no condition: a 3-D MatMul becomes Gemm", answer=_rule_rewriter(condition=False)),
        Wrong("Add(bias, MatMul) not matched", answer=_rule_rewriter(commute=False)),
        Wrong("Gemm with transB=1", answer=_rule_rewriter(gemm_attrs={"transB": 1})),
        Wrong("the old form: a function of the model, rewritten by hand", answer=_rewrite_by_hand_everything,
              skipped_skill=True),
        Wrong("onnxscript's shipped MatMulAddToGemm rule", answer=_shipped_rule, skipped_skill=True),
        Wrong("a rule that also rewrites Identity", answer=_rule_and_identity, outputs_wrong=False),
        Wrong("returns no rule", answer=lambda: None, skipped_skill=True),
    ],
    "05.portable": [
        Right("EXTENDED, written by the session", make=lambda tmp: _saved(tmp, L.ORT_ENABLE_EXTENDED)),
        Right("ALL without the NCHWc transformer, as a ModelProto",
              make=lambda tmp: onnx.load(_saved(tmp, L.ORT_ENABLE_ALL, disabled_optimizers=["NchwcTransformer"]))),
        Wrong("ALL level (NCHWc on x86)", make=lambda tmp: _saved(tmp, L.ORT_ENABLE_ALL)),
        Wrong("BASIC level", make=lambda tmp: _saved(tmp, L.ORT_ENABLE_BASIC)),
        Wrong("DISABLE level", make=lambda tmp: _saved(tmp, L.ORT_DISABLE_ALL), skipped_skill=True),
        Wrong("the original practice model", answer=practice_model(), skipped_skill=True),
        Wrong("folded by hand, no fusions", answer=_fold_model(onnx.load_from_string(practice_model()))),
        Wrong("EXTENDED file of another practice seed", make=lambda tmp: _saved(tmp, L.ORT_ENABLE_EXTENDED, _other_weights())),
        Wrong("a path that does not exist yet", answer="artifacts/practice_extended_typo.onnx"),
    ],
}


# Blind entries (issue 32), measured by this corpus's rule before and after the fixes: tests/corpus/blind_l05.py.
# Left out of the fast tier: the 24 of 46 measured above 0.15 s an evaluation (they scored by the rule when measured).
# The 8 of 05.rewrite_rule, converted to the rules form (matmul_add_rules()) at stop 46, take 0.02-0.07 s and run.
from corpus import add_blind, blind_l05  # noqa: E402

add_blind(CORPUS, blind_l05, slow={
    'blind-default-eps', 'blind-default-level', 'blind-disable-all', 'blind-drop-all-bn',
    'blind-enum-value-2', 'blind-expand-dims-float64', 'blind-extended-then-all',
    'blind-from-file-pathlib', 'blind-ignore-uses', 'blind-keep-bn', 'blind-last-axis', 'blind-level-all',
    'blind-level-basic', 'blind-make-node', 'blind-no-copy',
    'blind-no-rename', 'blind-onnxscript', 'blind-onnxscript-optimizer', 'blind-original', 'blind-ort-basic',
    'blind-rebuild', 'blind-same-init-names', 'blind-str-two-threads', 'blind-unchanged'
})


# Second-round blind entries (issue 32), measured by this corpus's rule before and after the fixes: tests/corpus/blind2_l05.py.
# Left out of the fast tier: the 14 of 16 measured above 0.15 s an evaluation (they scored by the rule when measured).
from corpus import blind2_l05  # noqa: E402

add_blind(CORPUS, blind2_l05, slow={
    'blind2-fold-any-producer', 'blind2-fold-default-epsilon', 'blind2-fold-drops-identity',
    'blind2-fold-first-pair-only', 'blind2-fold-float64-transpose', 'blind2-fold-forgets-new-bias',
    'blind2-fold-four-steps-loop', 'blind2-fold-ignores-other-readers', 'blind2-fold-keeps-bn-node',
    'blind2-fold-keeps-conv-output-name', 'blind2-fold-no-epsilon', 'blind2-fold-ort-optimizer',
    'blind2-fold-rebuild-node-list', 'blind2-fold-unchanged'
})

# Blind round 3 (tests/corpus/blind3_lNN.py): measured first, then added; slow ones scored by hand.
from corpus import add_blind, blind3_l05  # noqa: E402

# Its two holes of round 3 are caught since the check holds a graph of unknown rank and pairs inside an If
# (a pass by hand over model.graph.node leaves those: at most a quarter). Its 05.rewrite_rule answers were converted
# to the rules form (matmul_add_rules()) at stop 46: 9 remain; the pass by hand, ONNX Runtime's file and the
# unchanged model have no rules to return (listed in the file).
add_blind(CORPUS, blind3_l05, reclassify={
    "blind3-foldbn-torch-rsqrt": ("ruled_out", "05.fold_bn runs where only NumPy imports since blind round 12 "
                                  "(PyTorch's own fuse_conv_bn_weights scored full)"),
    "blind3-foldgraph-loop": ("ruled_out", "05.fold_graph runs where only NumPy and onnx import since blind round "
                                           "12 (onnxscript's BN rule scored half); this one folds with PyTorch")})

# Blind round 7 (tests/corpus/blind7_l05.py, 34 answers to 05.rewrite_rule by a writer who read only the prompt):
# measured first — 9 full marks for wrong answers and 2 over-credits with the check of round 3, 3 and 5 after
# the graph of pairs that are no Gemm and the nothing-rewritten verdict (counted in the note of issue 32).
# Converted to the rules form (matmul_add_rules()) at stop 46: 22 remain (the other 12, passes by hand, optimizers
# and what was done to the model around the rules, are listed in the file); the shipped-rule shortcuts, holes in
# the old form, are refused by name now (a quarter at most).
from corpus import blind7_l05  # noqa: E402

add_blind(CORPUS, blind7_l05)

# Blind round 9 (tests/corpus/blind9_l05.py, 32 answers to the rules form by a writer who read only the prompt):
# measured first against the rules-form check of b3a10b3 — 3 full marks for wrong answers (a RewriteRuleSet
# subclass fusing by hand in apply_to_model, a condition that edits the graph through its context, a patch of
# RewriteRuleSet.apply_to_model) and 1 over-credit (ONNX Runtime's optimizer run from a rule's side), no false
# reject; after only onnxscript's own classes are taken, what a rule runs is watched for edits to the graph and
# the rewriter's code is checked unchanged: 0, 0, 0 at seeds 0 and 20250.
from corpus import blind9_l05  # noqa: E402

add_blind(CORPUS, blind9_l05)

# Blind round 12 (tests/corpus/blind12_l05.py): measured first — 6 full marks for wrong answers (PyTorch's and ONNX
# Runtime's folding in 05.fold_bn, epsilon read as the first attribute, uses counted among nodes only, a hand-fused
# file) and 4 over-credits; 05.fold_bn now runs where only NumPy imports and the unseen graphs hold both traps.
# Known holes left (strict xfails): onnxscript's own BN rule and BN rewritten as Mul+Add in 05.fold_graph, and
# BatchNormalization renamed in 05.portable, score a third to a half where a quarter is the rule.
from corpus import add_blind, blind12_l05  # noqa: E402

add_blind(CORPUS, blind12_l05, reclassify={
    "blind12-fb-always-float32": ("right", "the prompt gives float32 weights only (\"float32 here\")"),
    "blind12-pt-hand-fused": ("right", "the file is what the prompt asks, whoever fused it"),
    "blind12-pt-onnxscript-optimizer": ("attempt", "another optimizer: no FusedConv, a wrong file"),
    "blind12-pt-extended-external-data": ("rule", "the prompt asks one file with every weight inside it"),
})
# Closed after: 05.fold_graph runs where only NumPy, onnx and the standard library import (onnxscript's BN rule
# cannot be imported), and a BatchNormalization gone while every Conv kept its weights did not fold (Mul+Add); in
# 05.portable a FusedConv counts as the EXTENDED level's only in a graph with no BatchNormalization left.

# Blind round 14 (tests/corpus/blind14_l05.py, 23 answers to 05.fold_graph by a writer who read only the prompt, after
# the changes of round 12's holes): measured first — no full marks for a wrong answer, no over-credit, no false
# reject (the optimizers cannot be imported; BatchNormalization turned into Mul+Add or a 1x1 Conv is named).
from corpus import blind14_l05  # noqa: E402

add_blind(CORPUS, blind14_l05)
