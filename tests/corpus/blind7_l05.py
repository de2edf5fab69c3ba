"""Blind corpus round 7, lesson 05 (written without seeing the judge)."""
import copy
import os
import tempfile
from collections import Counter

import onnx
import onnx_ir as ir
import onnxruntime as ort
import onnxscript.optimizer
from onnxscript.rewriter import RewriteRuleClassBase, pattern, rewrite

from corpus import Right, Wrong


# ================================================================ Right answers
# R1: class-based rule (pattern / check / rewrite methods), commute through the rule set
def right_class_rule(model):
    class MatMulAddAsGemm(RewriteRuleClassBase):
        def pattern(self, op, a, b, c):
            return op.Add(op.MatMul(a, b), c)

        def check(self, context, a, b, c, **_):
            ranks = [None if v.shape is None else v.shape.rank() for v in (a, b, c)]
            return ranks == [2, 2, 1]

        def rewrite(self, op, a, b, c):
            return op.Gemm(a, b, c)

    rule = MatMulAddAsGemm.rule()
    return rewrite(model, pattern_rewrite_rules=pattern.RewriteRuleSet([rule], commute=True))


# R2: no commute flag: both orders of Add written out as two rules; explicit alpha/beta defaults
def right_two_rules(model):
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

    return rewrite(model, pattern_rewrite_rules=[pattern.RewriteRule(bias_last, as_gemm, ok),
                                                 pattern.RewriteRule(bias_first, as_gemm, ok)])


# R3: the rule applied to an onnx_ir model by hand (RewriteRule.apply_to_model(commute=True)), then back to proto
def right_ir_apply(model):
    def tgt(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def rep(op, x, w, b):
        return op.Gemm(x, w, b)

    def cond(context, x, w, b):
        shapes = [v.shape for v in (x, w, b)]
        if any(s is None for s in shapes):
            return False
        return [len(s) for s in shapes] == [2, 2, 1]

    m = ir.serde.deserialize_model(model)
    pattern.RewriteRule(tgt, rep, cond).apply_to_model(m, commute=True)
    return ir.serde.serialize_model(m)


# R4: condition that reports why it refuses (MatchResult.fail); rules given as the list rule.commute() returns
def right_matchresult(model):
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
    return rewrite(model, pattern_rewrite_rules=list(rule.commute()))


# R5: defensive learner: runs ONNX shape inference first so ranks are known where they can be
def right_infer_first(model):
    def tgt(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def rep(op, x, w, b):
        return op.Gemm(x, w, b)

    def cond(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    typed = onnx.shape_inference.infer_shapes(model)
    return rewrite(typed, pattern_rewrite_rules=pattern.RewriteRuleSet([pattern.RewriteRule(tgt, rep, cond)],
                                                                       commute=True))


# R6: class-based, and named like the rule onnxscript ships (the exercise's own title): its Gemm nodes carry the
# same rule-name tag (pkg.onnxscript.rewriter.rule_name = MatMulAddToGemm), but the pattern/check/rewrite are the
# learner's own (with the rank-1 bias check the shipped rule lacks)
def right_named_like_shipped(model):
    class MatMulAddToGemm(RewriteRuleClassBase):
        def pattern(self, op, input_a, input_b, input_c):
            return op.Add(op.MatMul(input_a, input_b), input_c)

        def check(self, context, input_a, input_b, input_c, **_):
            def rank(v):
                return None if v.shape is None else len(v.shape)
            return rank(input_a) == 2 and rank(input_b) == 2 and rank(input_c) == 1

        def rewrite(self, op, input_a, input_b, input_c):
            return op.Gemm(input_a, input_b, input_c)

    return rewrite(model, pattern_rewrite_rules=pattern.RewriteRuleSet([MatMulAddToGemm.rule()], commute=True))


# ================================================================ Wrong: ordinary mistakes
# (each function is self-contained, as a learner's cell would be)
def wrong_no_condition(model):
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    rules = pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement)], commute=True)
    return rewrite(model, pattern_rewrite_rules=rules)


def wrong_condition_x_only(model):
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return x.shape is not None and x.shape.rank() == 2

    rules = pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)
    return rewrite(model, pattern_rewrite_rules=rules)


def wrong_no_bias_rank(model):
    # x and w checked (as onnxscript's own rule does), b's rank never looked at
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == 2 for v in (x, w))

    rules = pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)
    return rewrite(model, pattern_rewrite_rules=rules)


def wrong_no_commute(model):
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    return rewrite(model, pattern_rewrite_rules=[pattern.RewriteRule(target, replacement, condition)])


def wrong_gemm_swapped(model):
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(w, x, b)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    rules = pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)
    return rewrite(model, pattern_rewrite_rules=rules)


def wrong_transb(model):
    # "Gemm is the Linear layer, and Linear stores W transposed"
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b, transB=1)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    rules = pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)
    return rewrite(model, pattern_rewrite_rules=rules)


def wrong_len_shape(model):
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return len(x.shape) == 2 and len(w.shape) == 2 and len(b.shape) == 1

    rules = pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)
    return rewrite(model, pattern_rewrite_rules=rules)


def wrong_unknown_means_yes(model):
    # "if the rank is unknown it is probably a 2-D activation": let it through
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return all(v.shape is None or v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    rules = pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)
    return rewrite(model, pattern_rewrite_rules=rules)


def wrong_static_only(model):
    # demands fully known dims: refuses the symbolic batch dimension
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.is_static() and v.shape.rank() == r
                   for v, r in ((x, 2), (w, 2), (b, 1)))

    rules = pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)
    return rewrite(model, pattern_rewrite_rules=rules)


def wrong_rank_at_most_2(model):
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        if x.shape is None or w.shape is None or b.shape is None:
            return False
        return len(x.shape) <= 2 and len(w.shape) <= 2 and len(b.shape) <= 1

    rules = pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)
    return rewrite(model, pattern_rewrite_rules=rules)


def wrong_condition_no_context(model):
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(x, w, b):  # forgot the context parameter the rewriter passes first
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    rules = pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)
    return rewrite(model, pattern_rewrite_rules=rules)


def wrong_remove_nodes_false(model):
    # remove_nodes=False "to be safe": the rewriter then also fuses an Add whose MatMul has other readers
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    rule = pattern.RewriteRule(target, replacement, condition, remove_nodes=False)
    return rewrite(model, pattern_rewrite_rules=pattern.RewriteRuleSet([rule], commute=True))


def wrong_forgot_return(model):
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    rules = pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)
    result = rewrite(model, pattern_rewrite_rules=rules)  # noqa: F841  (computed, never returned)


def wrong_thinks_in_place(model):
    # believes rewrite() edits its argument, hands the (untouched) input back
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    rewrite(model, pattern_rewrite_rules=pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)],
                                                                commute=True))
    return model


def wrong_in_place(model):
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    rules = pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)
    model.CopyFrom(rewrite(model, pattern_rewrite_rules=rules))  # "in place": the caller's model changes
    return model


def wrong_returns_bytes(model):
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    rules = pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)
    return rewrite(model, pattern_rewrite_rules=rules).SerializeToString()


def wrong_returns_path(model):
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    rules = pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)
    # (edited when added: one fixed folder, not a new one per call, so the test suite leaves no clutter)
    folder = os.path.join(tempfile.gettempdir(), "onnx-lab-blind7")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "gemm.onnx")
    onnx.save(rewrite(model, pattern_rewrite_rules=rules), path)
    return path


def wrong_returns_ir(model):
    def target(op, x, w, b):
        return op.Add(op.MatMul(x, w), b)

    def replacement(op, x, w, b):
        return op.Gemm(x, w, b)

    def condition(context, x, w, b):
        return all(v.shape is not None and v.shape.rank() == r for v, r in ((x, 2), (w, 2), (b, 1)))

    rules = pattern.RewriteRuleSet([pattern.RewriteRule(target, replacement, condition)], commute=True)
    return rewrite(ir.serde.deserialize_model(model), pattern_rewrite_rules=rules)


# ================================================================ Wrong: shortcuts without a rewrite rule
def shortcut_protobuf_pass(model):
    """onnx.helper by hand: every Add fed by a 2-D MatMul nothing else reads becomes a Gemm, subgraphs too."""
    model = copy.deepcopy(model)
    ranks = {}  # tensor name -> rank, after ONNX shape inference

    def collect(g):
        for v in list(g.input) + list(g.output) + list(g.value_info):
            if v.type.tensor_type.HasField("shape"):
                ranks[v.name] = len(v.type.tensor_type.shape.dim)
        for t in g.initializer:
            ranks[t.name] = len(t.dims)
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    collect(a.g)
    collect(onnx.shape_inference.infer_shapes(model).graph)

    readers = Counter()

    def count(g):
        readers.update(o.name for o in g.output)
        for n in g.node:
            readers.update(n.input)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    count(a.g)
    count(model.graph)

    def fuse(g):
        producer = {o: n for n in g.node for o in n.output}
        new, dead = [], set()
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    fuse(a.g)
            if n.op_type == "Add" and n.domain in ("", "ai.onnx"):
                for mm_out, b in ((n.input[0], n.input[1]), (n.input[1], n.input[0])):
                    mm = producer.get(mm_out)
                    if (mm is not None and mm.op_type == "MatMul" and readers[mm_out] == 1
                            and ranks.get(mm.input[0]) == 2 and ranks.get(mm.input[1]) == 2
                            and ranks.get(b) == 1):
                        new.append(onnx.helper.make_node("Gemm", [mm.input[0], mm.input[1], b], list(n.output),
                                                         name=n.name + "_gemm" if n.name else ""))
                        dead.add(id(mm))
                        break
                else:
                    new.append(n)
                continue
            new.append(n)
        keep = [n for n in new if id(n) not in dead]
        del g.node[:]
        g.node.extend(keep)
    fuse(model.graph)
    return model


def shortcut_protobuf_main_graph(model):
    """The tired version of the hand pass: only model.graph.node, the If branches are never looked at."""
    model = copy.deepcopy(model)
    typed = onnx.shape_inference.infer_shapes(model).graph
    ranks = {v.name: len(v.type.tensor_type.shape.dim) for v in list(typed.input) + list(typed.value_info)
             if v.type.tensor_type.HasField("shape")}
    ranks.update({t.name: len(t.dims) for t in typed.initializer})
    graph = model.graph
    producer = {o: n for n in graph.node for o in n.output}
    uses = Counter(i for n in graph.node for i in n.input) + Counter(o.name for o in graph.output)
    out, drop = [], []
    for n in graph.node:
        if n.op_type == "Add":
            for m_name, b in ((n.input[0], n.input[1]), (n.input[1], n.input[0])):
                mm = producer.get(m_name)
                if mm is not None and mm.op_type == "MatMul" and uses[m_name] == 1 and \
                        (ranks.get(mm.input[0]), ranks.get(mm.input[1]), ranks.get(b)) == (2, 2, 1):
                    out.append(onnx.helper.make_node("Gemm", [mm.input[0], mm.input[1], b], [n.output[0]]))
                    drop.append(mm)
                    break
            else:
                out.append(n)
        else:
            out.append(n)
    del graph.node[:]
    graph.node.extend(n for n in out if all(n is not d for d in drop))
    return model


def shortcut_onnx_ir_edit(model):
    """onnx_ir by hand, no rewrite rule: walk every node (subgraphs too), splice in Gemm nodes."""
    m = ir.serde.deserialize_model(model)
    for add in list(ir.traversal.RecursiveGraphIterator(m.graph)):
        if add.op_type != "Add" or add.domain != "":
            continue
        for mm_val, b in ((add.inputs[0], add.inputs[1]), (add.inputs[1], add.inputs[0])):
            mm = mm_val.producer() if mm_val is not None else None
            if mm is None or mm.op_type != "MatMul" or mm.graph is not add.graph:
                continue
            if len(mm_val.uses()) != 1 or mm_val.is_graph_output():
                continue
            x, w = mm.inputs
            if any(v.shape is None for v in (x, w, b)) or [len(v.shape) for v in (x, w, b)] != [2, 2, 1]:
                continue
            gemm = ir.node("Gemm", [x, w, b])
            ir.convenience.replace_nodes_and_values(add.graph, add, [mm, add], [gemm], add.outputs, gemm.outputs)
            break
    return ir.serde.serialize_model(m)


def shortcut_ort_basic(model):
    # ONNX Runtime's MatMulAddFusion does exactly this: let it, at the lowest level that runs it
    with tempfile.TemporaryDirectory(prefix="blind7_") as folder:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.optimized_model_filepath = os.path.join(folder, "basic.onnx")
        so.log_severity_level = 3
        ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return onnx.load(so.optimized_model_filepath)


def shortcut_ort_extended(model):
    # the portable level of the lesson's exercise 05.portable, reused
    with tempfile.TemporaryDirectory(prefix="blind7_") as folder:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        so.optimized_model_filepath = os.path.join(folder, "extended.onnx")
        so.log_severity_level = 3
        ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return onnx.load(so.optimized_model_filepath)


def shortcut_shipped_rule(model):
    # onnxscript already ships this rule: use it instead of writing one
    from onnxscript.rewriter.rules.common import matmul_add_to_gemm_rule
    return rewrite(model, pattern_rewrite_rules=pattern.RewriteRuleSet([matmul_add_to_gemm_rule], commute=True))


def shortcut_shipped_class(model):
    # the shipped class, instantiated again (a copy of the library's rule, not one of the learner's)
    from onnxscript.rewriter.rules.common._matmul_add_to_gemm import MatMulAddToGemm
    return rewrite(model, pattern_rewrite_rules=pattern.RewriteRuleSet([MatMulAddToGemm().rule()], commute=True))


def shortcut_shipped_subclass(model):
    # a "new" rule that is the shipped one under another name: pattern, check and rewrite all inherited
    from onnxscript.rewriter.rules.common._matmul_add_to_gemm import MatMulAddToGemm

    class DenseToGemm(MatMulAddToGemm):
        pass

    return rewrite(model, pattern_rewrite_rules=pattern.RewriteRuleSet([DenseToGemm.rule()], commute=True))


def shortcut_onnxscript_optimizer(model):
    # "onnxscript has an optimizer with rewrite rules": its defaults
    return onnxscript.optimizer.optimize(copy.deepcopy(model))


def shortcut_default_rules(model):
    # rewrite() with no rules of one's own: the default rule set
    return rewrite(model)


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
    Wrong("blind7-forgot-return", answer=wrong_forgot_return),
    Wrong("blind7-returns-input-unchanged", answer=wrong_thinks_in_place, skipped_skill=True),
    Wrong("blind7-mutates-caller", answer=wrong_in_place, outputs_wrong=False),
    Wrong("blind7-returns-bytes", answer=wrong_returns_bytes, outputs_wrong=False),
    Wrong("blind7-returns-path", answer=wrong_returns_path, outputs_wrong=False),
    Wrong("blind7-returns-ir-model", answer=wrong_returns_ir, outputs_wrong=False),

    Wrong("blind7-sc-protobuf-pass", answer=shortcut_protobuf_pass, outputs_wrong=False, skipped_skill=True),
    Wrong("blind7-sc-protobuf-main-graph-only", answer=shortcut_protobuf_main_graph, skipped_skill=True),
    Wrong("blind7-sc-onnx-ir-edit", answer=shortcut_onnx_ir_edit, outputs_wrong=False, skipped_skill=True),
    Wrong("blind7-sc-ort-basic", answer=shortcut_ort_basic, skipped_skill=True),
    Wrong("blind7-sc-ort-extended", answer=shortcut_ort_extended, skipped_skill=True),
    Wrong("blind7-sc-shipped-rule", answer=shortcut_shipped_rule, skipped_skill=True),
    Wrong("blind7-sc-shipped-class", answer=shortcut_shipped_class, skipped_skill=True),
    Wrong("blind7-sc-shipped-subclass", answer=shortcut_shipped_subclass, skipped_skill=True),
    Wrong("blind7-sc-onnxscript-optimizer", answer=shortcut_onnxscript_optimizer, skipped_skill=True),
    Wrong("blind7-sc-default-rules", answer=shortcut_default_rules, skipped_skill=True),
]}
