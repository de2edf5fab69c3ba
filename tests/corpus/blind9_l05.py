"""Blind corpus round 9, lesson 05 (written without seeing the judge).

Exercise 05.rewrite_rule: `matmul_add_rules()` returns onnxscript rewrite rules that turn every
2-D `MatMul` + `Add(bias)` (either Add order) into one `Gemm`, refusing when x / w are not rank 2,
b is not rank 1, or any rank is unknown.  Each answer below is the value the learner's
`matmul_add_rules` would be (a zero-argument function returning what is handed to
`rewrite(model, pattern_rewrite_rules=...)`).
"""
from __future__ import annotations

import importlib

from onnxscript import ir
from onnxscript.rewriter import pattern, rewrite  # noqa: F401  (rewrite: as in the learner's cell)

from corpus import Right, Wrong


# --------------------------------------------------------------------------------------------
# small helpers shared by several answers (a learner would inline these)
# --------------------------------------------------------------------------------------------
def _rank(value):
    """Static rank of an ir.Value, or None when unknown (value or shape missing)."""
    if value is None or value.shape is None:
        return None
    return len(value.shape)


def _ranks_ok(x, w, b):
    return _rank(x) == 2 and _rank(w) == 2 and _rank(b) == 1


def _hand_fuse(graph) -> int:
    """Fuse MatMul+Add -> Gemm by direct onnx_ir surgery (no pattern).  Used by shortcuts only."""
    count = 0
    for node in list(graph):
        for attr in node.attributes.values():
            if attr.type == ir.AttributeType.GRAPH:
                count += _hand_fuse(attr.value)
            elif attr.type == ir.AttributeType.GRAPHS:
                for g in attr.value:
                    count += _hand_fuse(g)
        if node.op_type != "Add" or node.domain != "" or node.graph is None:
            continue
        for i in (0, 1):
            mm, bias = node.inputs[i], node.inputs[1 - i]
            prod = mm.producer() if mm is not None else None
            if prod is None or prod.op_type != "MatMul" or prod.domain != "":
                continue
            if mm.is_graph_output() or len(mm.uses()) != 1:
                continue
            x, w = prod.inputs
            if not _ranks_ok(x, w, bias):
                continue
            gemm = ir.Node("", "Gemm", [x, w, bias])
            ir.convenience.replace_nodes_and_values(
                graph, node, [node, prod], [gemm], [node.outputs[0]], [gemm.outputs[0]]
            )
            count += 1
            break
    return count


# ============================================================================================
# RIGHT answers
# ============================================================================================

# R1: class-based RewriteRuleClassBase; check() returns a MatchResult with a reason per failure;
#     one .rule() expanded to both Add orders by RewriteRuleSet(commute=True).
def right_class_commute():
    class MatMulBiasToGemm(pattern.RewriteRuleClassBase):
        def pattern(self, op, x, w, b):
            return op.Add(op.MatMul(x, w), b)

        def check(self, context, x, w, b, **_):
            result = pattern.MatchResult()
            for value, want, label in ((x, 2, "x"), (w, 2, "w"), (b, 1, "b")):
                if value is None or value.shape is None:
                    return result.fail(f"{label}: rank unknown", value)
                if value.shape.rank() != want:
                    return result.fail(f"{label}: rank {value.shape.rank()} != {want}", value)
            return result

        def rewrite(self, op, x, w, b):
            return op.Gemm(x, w, b)

    return pattern.RewriteRuleSet([MatMulBiasToGemm.rule()], commute=True)


# R2: two explicit function rules, one per Add order, returned as a plain list; the condition
#     compares the tuple of ranks (len(shape)) in one go.
def right_two_explicit_rules():
    def bias_right(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def bias_left(op, x, w, b):
        return op.Add(b, op.MatMul(x, w))

    def to_gemm(op, x, w, b):
        return op.Gemm(x, w, b)

    def two_d(context, x, w, b):
        shapes = (x.shape, w.shape, b.shape)
        if any(s is None for s in shapes):
            return False
        return tuple(len(s) for s in shapes) == (2, 2, 1)

    return [
        pattern.RewriteRule(bias_right, to_gemm, two_d, name="MatMulAdd->Gemm"),
        pattern.RewriteRule(bias_left, to_gemm, two_d, name="AddMatMul->Gemm"),
    ]


# R3: no condition function at all: the *replacement* refuses (returns None) when the ranks are
#     wrong, which onnxscript treats as "no rewrite" (documented failure convention).
def right_replacement_refuses():
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        if not _ranks_ok(x, w, b):
            return None
        return op.Gemm(x, w, b)

    return pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement)], commute=True)


# R4: the condition lives on the pattern *nodes*: node-level _check callbacks (check(context, node))
#     -- the MatMul checks its two inputs are rank 2, the Add checks one of its inputs is rank 1
#     (the MatMul(2-D, 2-D) side is rank 2, so the rank-1 input can only be b). No condition_function.
def right_node_checks():
    def known_rank(value, k):
        return value is not None and value.shape is not None and value.shape.rank() == k

    def matmul_2d(context, node):
        return all(known_rank(v, 2) for v in node.inputs)

    def add_has_1d_bias(context, node):
        return any(known_rank(v, 1) for v in node.inputs)

    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w, _check=matmul_2d), b, _check=add_has_1d_bias)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    return pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement)], commute=True)


# R5: two RewriteRuleClassBase subclasses (one per order) sharing a check mixin that raises
#     onnxscript's MatchFailureError; returned as a RewriteRuleSet without commute.
def right_two_classes_raise():
    from onnxscript.rewriter._basics import MatchFailureError

    class _Check:
        def check(self, context, x, w, b, **_):
            for value, want in ((x, 2), (w, 2), (b, 1)):
                shape = None if value is None else value.shape
                if shape is None or shape.rank() != want:
                    raise MatchFailureError(f"need rank {want}", value)
            return True

        def rewrite(self, op, x, w, b):
            return op.Gemm(x, w, b, alpha=1.0, beta=1.0)  # explicit defaults: same Gemm

    class MatMulThenBias(_Check, pattern.RewriteRuleClassBase):
        def pattern(self, op, x, w, b):
            return op.Add(op.MatMul(x, w), b)

    class BiasThenMatMul(_Check, pattern.RewriteRuleClassBase):
        def pattern(self, op, x, w, b):
            return op.Add(b, op.MatMul(x, w))

    return pattern.RewriteRuleSet([MatMulThenBias.rule(), BiasThenMatMul.rule()])


# R6: rule.commute() called by hand (returns the list of both-order rules), condition written with
#     ir.Shape objects and a walrus; returned as a tuple.
def right_manual_commute_tuple():
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, **bound):
        want = {"x": 2, "w": 2, "b": 1}
        for key, rank in want.items():
            if not isinstance(shape := getattr(bound[key], "shape", None), ir.Shape):
                return False
            if shape.rank() != rank:
                return False
        return True

    rule = pattern.RewriteRule(target, replacement, condition)
    return tuple(rule.commute())


# R7: ONE rule whose target is the bare Add(a, c); the condition finds which input a 2-D MatMul
#     produced (used only by this Add, not a graph output) and the replacement builds the Gemm from
#     that MatMul's inputs.  remove_nodes=False so the rule set itself drops the dead nodes.
#     Covers both orders with a single pattern.RewriteRule, returned bare (the prompt allows it).
def right_single_generic_add_rule():
    def split(a, c):
        for mm, bias in ((a, c), (c, a)):
            prod = mm.producer() if mm is not None else None
            if prod is None or prod.op_type != "MatMul" or prod.domain not in ("", "ai.onnx"):
                continue
            if mm.is_graph_output() or len(mm.uses()) != 1:
                continue
            x, w = prod.inputs
            if _ranks_ok(x, w, bias):
                return x, w, bias
        return None

    def target(op, a, c):
        return op.Add(a, c)

    def condition(context, a, c):
        return split(a, c) is not None

    def replacement(op, a, c):
        x, w, bias = split(a, c)
        return op.Gemm(x, w, bias)

    return pattern.RewriteRule(target, replacement, condition, remove_nodes=False)


# ============================================================================================
# WRONG answers: genuine mistakes
# ============================================================================================

# W1: no condition at all -> 3-D / 1-D / rank-3-addend pairs become invalid Gemms. A check must
#     see ORT refuse (or counts differ) on the pairs that must stay.
def wrong_no_condition():
    return pattern.RewriteRuleSet(
        [pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b),
                             lambda op, x, w, b: op.Gemm(x, w, b))],
        commute=True,
    )


# W2: condition checks x and w but forgets b (exactly what the shipped rule does) -> rank-2 addend
#     fused (numerically OK by Gemm broadcasting) and rank-3 addend fused into an invalid Gemm.
def wrong_forgets_bias_rank():
    def cond(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == 2 for v in (x, w))

    return pattern.RewriteRuleSet(
        [pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b),
                             lambda op, x, w, b: op.Gemm(x, w, b), cond)],
        commute=True,
    )


# W3: only one Add order (no commute, no second rule): every Add(b, MatMul) stays unfused.
#     Numerical outputs are still right; operator counts are wrong on the reversed pairs.
def wrong_no_commute():
    def cond(context, x, w, b):
        return _ranks_ok(x, w, b)

    return [pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b),
                                lambda op, x, w, b: op.Gemm(x, w, b), cond)]


# W4: inverted None-guard: "unknown rank is fine" (x.shape is None or rank 2) -> the unknown-rank
#     pair is fused; ORT then fails when the runtime shape is not 2-D.
def wrong_unknown_rank_accepted():
    def ok(v, k):
        return v.shape is None or v.shape.rank() == k

    def cond(context, x, w, b):
        return ok(x, 2) and ok(w, 2) and ok(b, 1)

    return pattern.RewriteRuleSet(
        [pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b),
                             lambda op, x, w, b: op.Gemm(x, w, b), cond)],
        commute=True,
    )


# W5: no None-guard at all: x.shape.rank() on an unknown-rank value raises AttributeError out of
#     rewrite() (the rewriter only swallows MatchFailureError). A check must count the crash.
def wrong_crashes_on_unknown_rank():
    def cond(context, x, w, b):
        return x.shape.rank() == 2 and w.shape.rank() == 2 and b.shape.rank() == 1

    return pattern.RewriteRuleSet(
        [pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b),
                             lambda op, x, w, b: op.Gemm(x, w, b), cond)],
        commute=True,
    )


# W6: checks x and b but not w -> a 3-D (batched) weight is fused into an invalid Gemm.
def wrong_forgets_weight_rank():
    def cond(context, x, w, b):
        return _rank(x) == 2 and _rank(b) == 1

    return pattern.RewriteRuleSet(
        [pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b),
                             lambda op, x, w, b: op.Gemm(x, w, b), cond)],
        commute=True,
    )


# W7: any() instead of all(): rewrites as soon as one of x / w is 2-D (3-D x with 2-D w fused).
def wrong_any_instead_of_all():
    def cond(context, x, w, b):
        return _rank(b) == 1 and any(_rank(v) == 2 for v in (x, w))

    return pattern.RewriteRuleSet(
        [pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b),
                             lambda op, x, w, b: op.Gemm(x, w, b), cond)],
        commute=True,
    )


# W8: Gemm operands swapped (Gemm(w, x, b)) -> shape error / wrong numbers on every fused pair.
def wrong_swapped_gemm_inputs():
    return pattern.RewriteRuleSet(
        [pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b),
                             lambda op, x, w, b: op.Gemm(w, x, b),
                             lambda context, x, w, b: _ranks_ok(x, w, b))],
        commute=True,
    )


# W9: transB=1 copied from nn.Linear-style Gemms -> multiplies by w^T: wrong shapes / numbers.
def wrong_transb():
    return pattern.RewriteRuleSet(
        [pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b),
                             lambda op, x, w, b: op.Gemm(x, w, b, transB=1),
                             lambda context, x, w, b: _ranks_ok(x, w, b))],
        commute=True,
    )


# W10: condition function written without the context parameter -> TypeError ("multiple values
#      for argument 'x'") on the first match: rewrite() crashes on every graph with a pair.
def wrong_condition_missing_context():
    def cond(x, w, b):
        return _ranks_ok(x, w, b)

    return pattern.RewriteRuleSet(
        [pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b),
                             lambda op, x, w, b: op.Gemm(x, w, b), cond)],
        commute=True,
    )


# W11: `rank` compared without calling it (x.shape.rank == 2 is always False) -> nothing is ever
#      rewritten. Outputs identical, but no pair is fused: a check must fail the MLP / If graphs.
def wrong_rank_not_called():
    def cond(context, x, w, b):
        if x.shape is None or w.shape is None or b.shape is None:
            return False
        return x.shape.rank == 2 and w.shape.rank == 2 and b.shape.rank == 1

    return pattern.RewriteRuleSet(
        [pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b),
                             lambda op, x, w, b: op.Gemm(x, w, b), cond)],
        commute=True,
    )


# W12: bias rank allowed up to 2 ("Gemm's C broadcasts") -> rank-2 addend fused. Numerically OK
#      (Gemm does broadcast C) but the prompt says b rank 1: counts differ on the rank-2 addend.
def wrong_bias_rank_le_2():
    def cond(context, x, w, b):
        return _rank(x) == 2 and _rank(w) == 2 and _rank(b) in (1, 2)

    return pattern.RewriteRuleSet(
        [pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b),
                             lambda op, x, w, b: op.Gemm(x, w, b), cond)],
        commute=True,
    )


# W13: remove_nodes=False (copied from a tutorial) -> the MatMul that another node also reads is
#      fused too (Gemm added, MatMul kept): outputs right, operator counts wrong on that graph.
def wrong_remove_nodes_false():
    return pattern.RewriteRuleSet(
        [pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b),
                             lambda op, x, w, b: op.Gemm(x, w, b),
                             lambda context, x, w, b: _ranks_ok(x, w, b),
                             remove_nodes=False)],
        commute=True,
    )


# W14: the bias is "made 2-D for Gemm" with an Unsqueeze in the replacement: numerically right,
#      but every fused pair now costs Gemm + Unsqueeze (counts wrong everywhere it fires).
def wrong_unsqueeze_bias():
    def replacement(op, x, w, b):
        return op.Gemm(x, w, op.Unsqueeze(b, op.Constant(value_ints=[0])))

    return pattern.RewriteRuleSet(
        [pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b), replacement,
                             lambda context, x, w, b: _ranks_ok(x, w, b))],
        commute=True,
    )


# W16: the rank conditions are attached to *named* pattern.Var(..., check=...) objects. onnxscript
#      binds named variables by name only and runs value-level checks only for unnamed value
#      patterns, so these checks are silently never called: behaves like no condition at all.
def wrong_named_var_checks_ignored():
    def rank_is(k):
        def check(context, value):
            return value is not None and value.shape is not None and value.shape.rank() == k

        return check

    def target(op, x, w, b):
        xv = pattern.Var("x", check=rank_is(2))
        wv = pattern.Var("w", check=rank_is(2))
        bv = pattern.Var("b", check=rank_is(1))
        return op.Add(op.MatMul(xv, wv), bv)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    return pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement)], commute=True)


# W15: RewriteRuleSet given the rule itself instead of a list -> TypeError when the set is built
#      (commute iterates it): the function raises before anything is rewritten.
def wrong_ruleset_not_list():
    rule = pattern.RewriteRule(lambda op, x, w, b: op.Add(op.MatMul(x, w), b),
                               lambda op, x, w, b: op.Gemm(x, w, b),
                               lambda context, x, w, b: _ranks_ok(x, w, b))
    return pattern.RewriteRuleSet(rule, commute=True)


# ============================================================================================
# WRONG answers: shortcuts (try to get the points without writing the rule)
# ============================================================================================

# S1: onnxscript's shipped rule, made commutative. It never checks b's rank, so the rank-3 addend
#     becomes an invalid Gemm (and the rank-2 addend is fused). Shipped rules do not count anyway.
def shortcut_shipped_rule_commuted():
    from onnxscript.rewriter.rules.common import matmul_add_to_gemm_rule

    return pattern.RewriteRuleSet([matmul_add_to_gemm_rule], commute=True)


# S2: shipped rule's own target & replacement objects (fetched through importlib with a built-up
#     module name) re-wrapped in a new RewriteRule with the learner's bias-rank condition:
#     correct results, but the target/replacement were not written.
def shortcut_shipped_internals_rewrapped():
    mod = importlib.import_module(".".join(["onnxscript", "rewriter", "rules", "common"]))
    shipped = getattr(mod, "matmul_add" + "_to_gemm_rule")

    def cond(context, input_a, input_b, input_c, **_):
        return _ranks_ok(input_a, input_b, input_c)

    mine = pattern.RewriteRule(shipped._target_pattern, shipped._replacement_pattern, cond)
    return pattern.RewriteRuleSet([mine], commute=True)


# S3: subclass of the shipped MatMulAddToGemm class, adding only the bias-rank test to its check:
#     correct results, rule not written by the learner.
def shortcut_shipped_subclass():
    from onnxscript.rewriter.rules.common._matmul_add_to_gemm import MatMulAddToGemm

    class MyGemm(MatMulAddToGemm):
        def check(self, context, input_a, input_b, input_c=None, **kw):
            result = super().check(context, input_a, input_b, **kw)
            if result and _rank(input_c) != 1:
                return result.fail("bias must be 1-D")
            return result

    return pattern.RewriteRuleSet([MyGemm.rule()], commute=True)


# S4: a RewriteRuleSet subclass whose apply_to_model does the fusion by hand-written onnx_ir graph
#     surgery (no pattern, no condition, no replacement is ever used).
def shortcut_ruleset_subclass_hand_fusion():
    class HandFusion(pattern.RewriteRuleSet):
        def apply_to_model(self, model, *, verbose=None, tracer=None):
            return _hand_fuse(model.graph)

    dummy = pattern.RewriteRule(lambda op, x: op.Identity(x), lambda op, x: op.Identity(x),
                                lambda context, x: False)
    return HandFusion([dummy])


# S5: side effect inside a condition: pattern is just op.MatMul(x, w); the condition never accepts
#     a match, but when it sees a MatMul it fuses the whole graph by hand through context.graph.
def shortcut_condition_side_effect():
    def target(op, x, w):
        return op.MatMul(x, w)

    def cond(context, x, w):
        _hand_fuse(context.graph_or_function)
        return False

    return [pattern.RewriteRule(target, lambda op, x, w: op.MatMul(x, w), cond)]


# S6: monkeypatch: returns an inert rule, but patches RewriteRuleSet.apply_to_model globally so
#     that every rule-set application (including the check's rewrite()) hand-fuses the model.
def shortcut_monkeypatch_apply():
    original = pattern.RewriteRuleSet.apply_to_model
    if not getattr(original, "_blind9_patched", False):
        def patched(self, model, *, verbose=None, tracer=None):
            return original(self, model, verbose=verbose, tracer=tracer) + _hand_fuse(model.graph)

        patched._blind9_patched = True
        pattern.RewriteRuleSet.apply_to_model = patched
    return [pattern.RewriteRule(lambda op, x: op.Identity(x), lambda op, x: op.Identity(x),
                                lambda context, x: False)]


# S7: returns None: rewrite() then applies onnxscript's DEFAULT rule list (which has no
#     MatMul+Add fusion) -- nothing gets fused; "pairs that must stay" trivially stay.
def shortcut_return_none():
    return None


# S8: returns an empty list: rewrite() returns the model untouched ("elif not rules: return model").
def shortcut_empty_list():
    return []


# S9: lets ONNX Runtime do the fusion: a RewriteRuleSet subclass whose apply_to_model serialises
#     the model, runs ORT's basic graph optimisations (MatMulAddFusion) to a file, and swaps the
#     optimised graph in. No rule written. Numerically right everywhere, but ORT's fusion also
#     fuses 3-D / 1-D pairs (Reshape+Gemm+Reshape) and rank-2 addends, so counts differ there.
def shortcut_ort_optimizer():
    import os
    import tempfile

    import onnx
    import onnxruntime as ort

    class OrtDoesIt(pattern.RewriteRuleSet):
        def apply_to_model(self, model, *, verbose=None, tracer=None):
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "opt.onnx")
                so = ort.SessionOptions()
                so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
                so.optimized_model_filepath = path
                ort.InferenceSession(ir.serde.serialize_model(model).SerializeToString(), so,
                                     providers=["CPUExecutionProvider"])
                new = ir.serde.deserialize_model(onnx.load(path))
            g = model.graph
            for node in list(g):
                g.remove(node, safe=False)
            g.initializers.clear()
            value_map = {}
            for old, nv in zip(g.inputs, new.graph.inputs):
                value_map[nv] = old
            for name, init in list(new.graph.initializers.items()):
                new.graph.initializers.pop(name)
                g.initializers[name] = init
            moved = list(new.graph)
            new_outputs = list(new.graph.outputs)
            new.graph.outputs.clear()
            for node in moved:
                new.graph.remove(node, safe=False)
                for i, inp in enumerate(node.inputs):
                    if inp in value_map:
                        node.replace_input_with(i, value_map[inp])
                g.append(node)
            g.outputs.clear()
            g.outputs.extend(value_map.get(v, v) for v in new_outputs)
            for domain, version in new.opset_imports.items():
                model.opset_imports.setdefault(domain, version)
            return 1

    dummy = pattern.RewriteRule(lambda op, x: op.Identity(x), lambda op, x: op.Identity(x),
                                lambda context, x: False)
    return OrtDoesIt([dummy])


CORPUS = {"05.rewrite_rule": [
    Right("blind9-class-commute", answer=right_class_commute),
    Right("blind9-two-explicit-rules", answer=right_two_explicit_rules),
    Right("blind9-replacement-refuses", answer=right_replacement_refuses),
    Right("blind9-node-checks", answer=right_node_checks),
    Right("blind9-two-classes-raise", answer=right_two_classes_raise),
    Right("blind9-manual-commute-tuple", answer=right_manual_commute_tuple),
    Right("blind9-single-generic-add-rule", answer=right_single_generic_add_rule),

    Wrong("blind9-no-condition", answer=wrong_no_condition),
    Wrong("blind9-forgets-bias-rank", answer=wrong_forgets_bias_rank),
    Wrong("blind9-no-commute", answer=wrong_no_commute, outputs_wrong=False),
    Wrong("blind9-unknown-rank-accepted", answer=wrong_unknown_rank_accepted),
    Wrong("blind9-crashes-on-unknown-rank", answer=wrong_crashes_on_unknown_rank),
    Wrong("blind9-forgets-weight-rank", answer=wrong_forgets_weight_rank),
    Wrong("blind9-any-instead-of-all", answer=wrong_any_instead_of_all),
    Wrong("blind9-swapped-gemm-inputs", answer=wrong_swapped_gemm_inputs),
    Wrong("blind9-transb", answer=wrong_transb),
    Wrong("blind9-condition-missing-context", answer=wrong_condition_missing_context),
    Wrong("blind9-rank-not-called", answer=wrong_rank_not_called, outputs_wrong=False),
    Wrong("blind9-bias-rank-le-2", answer=wrong_bias_rank_le_2, outputs_wrong=False),
    Wrong("blind9-remove-nodes-false", answer=wrong_remove_nodes_false, outputs_wrong=False),
    Wrong("blind9-unsqueeze-bias", answer=wrong_unsqueeze_bias, outputs_wrong=False),
    Wrong("blind9-ruleset-not-list", answer=wrong_ruleset_not_list),
    Wrong("blind9-named-var-checks-ignored", answer=wrong_named_var_checks_ignored),

    Wrong("blind9-shipped-rule-commuted", answer=shortcut_shipped_rule_commuted,
          skipped_skill=True),
    Wrong("blind9-shipped-internals-rewrapped", answer=shortcut_shipped_internals_rewrapped,
          outputs_wrong=False, skipped_skill=True),
    Wrong("blind9-shipped-subclass", answer=shortcut_shipped_subclass,
          outputs_wrong=False, skipped_skill=True),
    Wrong("blind9-ruleset-subclass-hand-fusion", answer=shortcut_ruleset_subclass_hand_fusion,
          outputs_wrong=False, skipped_skill=True),
    Wrong("blind9-condition-side-effect", answer=shortcut_condition_side_effect,
          outputs_wrong=False, skipped_skill=True),
    Wrong("blind9-monkeypatch-apply", answer=shortcut_monkeypatch_apply,
          outputs_wrong=False, skipped_skill=True),
    Wrong("blind9-return-none", answer=shortcut_return_none, outputs_wrong=False,
          skipped_skill=True),
    Wrong("blind9-empty-list", answer=shortcut_empty_list, outputs_wrong=False,
          skipped_skill=True),
    Wrong("blind9-ort-optimizer", answer=shortcut_ort_optimizer, outputs_wrong=False,
          skipped_skill=True),
]}
