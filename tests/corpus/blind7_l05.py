"""Blind corpus round 7, lesson 05 (written without seeing the judge)."""
from onnxscript.rewriter import RewriteRuleClassBase, pattern

from corpus import Right, Wrong

# converted to the rules form (matmul_add_rules()) at stop 46; measured in the old form as recorded in the note (issue 32)
# Each answer now returns the rules it handed to rewrite(model, ...) or apply_to_model(...); the check applies them.
# Dropped, not convertible (what they tested was done to the model, or no rule at all):
#   blind7-forgot-return: the model rewritten but never returned; the answer no longer returns a model.
#   blind7-returns-input-unchanged: thought rewrite() works in place and returned its input; no model to return now.
#   blind7-mutates-caller: the rewritten model copied into the caller's; the answer no longer sees a model.
#   blind7-returns-bytes: the rewritten model's bytes (counted right); no model to return now.
#   blind7-returns-path: the rewritten model saved, its path returned; no model to return now.
#   blind7-returns-ir-model: rewrite() applied to an onnx_ir model, which it returned; no model to return now.
#   blind7-sc-protobuf-pass: a pass by hand over the protobuf, subgraphs too, no rule: nothing to return.
#   blind7-sc-protobuf-main-graph-only: a pass by hand over model.graph.node only, no rule: nothing to return.
#   blind7-sc-onnx-ir-edit: a pass by hand with onnx_ir, no rule: nothing to return.
#   blind7-sc-ort-basic: ONNX Runtime's BASIC file instead of a rule: nothing to return.
#   blind7-sc-ort-extended: ONNX Runtime's EXTENDED file instead of a rule: nothing to return.
#   blind7-sc-onnxscript-optimizer: onnxscript's optimizer instead of a rule: nothing to return.


# ================================================================ Right answers
# R1: class-based rule (pattern / check / rewrite methods), commute through the rule set
def right_class_rule():
    class MatMulAddAsGemm(RewriteRuleClassBase):
        def pattern(self, op, a, b, c):
            return op.Add(op.MatMul(a, b), c)

        def check(self, context, a, b, c, **_):
            ranks = [None if v.shape is None else v.shape.rank() for v in (a, b, c)]
            return ranks == [2, 2, 1]

        def rewrite(self, op, a, b, c):
            return op.Gemm(a, b, c)

    rule = MatMulAddAsGemm.rule()
    return pattern.RewriteRuleSet([rule], commute=True)


# R2: no commute flag: both orders of Add written out as two rules; explicit alpha/beta defaults
def right_two_rules():
    def bias_first(op, x, w, b):
        return op.Add(b, op.MatMul(x, w))

    def bias_last(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def as_gemm(op, x, w, b):
        return op.Gemm(x, w, b, alpha=1.0, beta=1.0, transA=0, transB=0)

    def rank(v):
        return -1 if v is None or v.shape is None else len(v.shape)

    def ok(context, x, w, b):
        return (rank(x), rank(w), rank(b)) == (2, 2, 1)

    return [pattern.RewriteRule(bias_last, as_gemm, ok), pattern.RewriteRule(bias_first, as_gemm, ok)]


# R3: the rule applied to an onnx_ir model by hand (RewriteRule.apply_to_model(commute=True)), then back to proto
def right_ir_apply():
    def tgt(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def rep(op, x, w, b):
        return op.Gemm(x, w, b)

    def cond(context, x, w, b):
        shapes = [v.shape for v in (x, w, b)]
        if any(s is None for s in shapes):
            return False
        return [len(s) for s in shapes] == [2, 2, 1]

    # (was: RewriteRule(...).apply_to_model(ir_model, commute=True), which is this rule set's apply_to_model)
    return pattern.RewriteRuleSet([pattern.RewriteRule(tgt, rep, cond)], commute=True)


# R4: condition that reports why it refuses (MatchResult.fail); rules given as the list rule.commute() returns
def right_matchresult():
    def tgt(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def rep(op, x, w, b):
        return op.Gemm(x, w, b)

    def cond(context, x, w, b, **_):
        result = pattern.MatchResult()
        for v, want in ((x, 2), (w, 2), (b, 1)):
            if v.shape is None:
                return result.fail(f"{v.name}: rank unknown")
            if v.shape.rank() != want:
                return result.fail(f"{v.name}: rank {v.shape.rank()}, Gemm wants {want}")
        return result

    rule = pattern.RewriteRule(tgt, rep, cond, name="MatMulAddToGemm(blind7)")
    return list(rule.commute())


# R5: defensive learner: runs ONNX shape inference first so ranks are known where they can be
def right_infer_first():
    def tgt(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def rep(op, x, w, b):
        return op.Gemm(x, w, b)

    def cond(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    # (was: onnx.shape_inference.infer_shapes(model) first, then rewrite: the model is the check's now)
    return pattern.RewriteRuleSet([pattern.RewriteRule(tgt, rep, cond)], commute=True)


# R6: class-based, and named like the rule onnxscript ships (the exercise's own title): its Gemm nodes carry the
# same rule-name tag (pkg.onnxscript.rewriter.rule_name = MatMulAddToGemm), but the pattern/check/rewrite are the
# learner's own (with the rank-1 bias check the shipped rule lacks)
def right_named_like_shipped():
    class MatMulAddToGemm(RewriteRuleClassBase):
        def pattern(self, op, input_a, input_b, input_c):
            return op.Add(op.MatMul(input_a, input_b), input_c)

        def check(self, context, input_a, input_b, input_c, **_):
            def rank(v):
                return None if v.shape is None else len(v.shape)
            return rank(input_a) == 2 and rank(input_b) == 2 and rank(input_c) == 1

        def rewrite(self, op, input_a, input_b, input_c):
            return op.Gemm(input_a, input_b, input_c)

    return pattern.RewriteRuleSet([MatMulAddToGemm.rule()], commute=True)


# ================================================================ Wrong: ordinary mistakes
# (each function is self-contained, as a learner's cell would be)
def wrong_no_condition():
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    return pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement)], commute=True)


def wrong_condition_x_only():
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return x.shape is not None and x.shape.rank() == 2

    return pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)


def wrong_no_bias_rank():
    # x and w checked (as onnxscript's own rule does), b's rank never looked at
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == 2 for v in (x, w))

    return pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)


def wrong_no_commute():
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    return [pattern.RewriteRule(target, replacement, condition)]


def wrong_gemm_swapped():
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(w, x, b)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    return pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)


def wrong_transb():
    # "Gemm is the Linear layer, and Linear stores W transposed"
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b, transB=1)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    return pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)


def wrong_len_shape():
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return len(x.shape) == 2 and len(w.shape) == 2 and len(b.shape) == 1

    return pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)


def wrong_unknown_means_yes():
    # "if the rank is unknown it is probably a 2-D activation": let it through
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return all(v.shape is None or v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    return pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)


def wrong_static_only():
    # demands fully known dims: refuses the symbolic batch dimension
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.is_static() and v.shape.rank() == r
                   for v, r in ((x, 2), (w, 2), (b, 1)))

    return pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)


def wrong_rank_at_most_2():
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        if x.shape is None or w.shape is None or b.shape is None:
            return False
        return len(x.shape) <= 2 and len(w.shape) <= 2 and len(b.shape) <= 1

    return pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)


def wrong_condition_no_context():
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(x, w, b):  # forgot the context parameter the rewriter passes first
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    return pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)


def wrong_remove_nodes_false():
    # remove_nodes=False "to be safe": the rewriter then also fuses an Add whose MatMul has other readers
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    rule = pattern.RewriteRule(target, replacement, condition, remove_nodes=False)
    return pattern.RewriteRuleSet([rule], commute=True)


# ================================================================ Wrong: shortcuts (onnxscript's shipped rules)
def shortcut_shipped_rule():
    # onnxscript already ships this rule: use it instead of writing one
    from onnxscript.rewriter.rules.common import matmul_add_to_gemm_rule
    return pattern.RewriteRuleSet([matmul_add_to_gemm_rule], commute=True)


def shortcut_shipped_class():
    # the shipped class, instantiated again (a copy of the library's rule, not one of the learner's)
    from onnxscript.rewriter.rules.common._matmul_add_to_gemm import MatMulAddToGemm
    return pattern.RewriteRuleSet([MatMulAddToGemm().rule()], commute=True)


def shortcut_shipped_subclass():
    # a "new" rule that is the shipped one under another name: pattern, check and rewrite all inherited
    from onnxscript.rewriter.rules.common._matmul_add_to_gemm import MatMulAddToGemm

    class DenseToGemm(MatMulAddToGemm):
        pass

    return pattern.RewriteRuleSet([DenseToGemm.rule()], commute=True)


def shortcut_default_rules():
    # rewrite() with no rules of one's own: the default rule set
    # (was: rewrite(model), which applies these)
    from onnxscript.rewriter import _DEFAULT_REWRITE_RULES
    return list(_DEFAULT_REWRITE_RULES)


CORPUS = {"05.rewrite_rule": [
    Right("blind7-class-rule", answer=right_class_rule),
    Right("blind7-two-explicit-rules", answer=right_two_rules),
    Right("blind7-ir-apply-to-model", answer=right_ir_apply),
    Right("blind7-matchresult-commute-list", answer=right_matchresult),
    Right("blind7-infer-shapes-first", answer=right_infer_first),
    Right("blind7-class-named-like-shipped", answer=right_named_like_shipped),

    Wrong("blind7-no-condition", answer=wrong_no_condition),
    Wrong("blind7-condition-x-only", answer=wrong_condition_x_only),
    Wrong("blind7-no-bias-rank", answer=wrong_no_bias_rank),
    Wrong("blind7-no-commute", answer=wrong_no_commute),
    Wrong("blind7-gemm-swapped", answer=wrong_gemm_swapped),
    Wrong("blind7-transb", answer=wrong_transb),
    Wrong("blind7-len-shape-unknown", answer=wrong_len_shape),
    Wrong("blind7-unknown-rank-accepted", answer=wrong_unknown_means_yes),
    Wrong("blind7-static-dims-only", answer=wrong_static_only),
    Wrong("blind7-rank-at-most-2", answer=wrong_rank_at_most_2),
    Wrong("blind7-condition-no-context", answer=wrong_condition_no_context),
    Wrong("blind7-remove-nodes-false", answer=wrong_remove_nodes_false),

    Wrong("blind7-sc-shipped-rule", answer=shortcut_shipped_rule, skipped_skill=True),
    Wrong("blind7-sc-shipped-class", answer=shortcut_shipped_class, skipped_skill=True),
    Wrong("blind7-sc-shipped-subclass", answer=shortcut_shipped_subclass, skipped_skill=True),
    Wrong("blind7-sc-default-rules", answer=shortcut_default_rules, skipped_skill=True),
]}
