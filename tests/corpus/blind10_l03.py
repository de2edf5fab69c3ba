"""Blind corpus round 10, lesson 03 (written without seeing the judge)."""
import numpy as np
import onnx
import onnxscript
from onnxscript import opset18 as op
from onnxscript import opset9
from corpus import Right, Wrong


# ---------------------------------------------------------------- right answers

# R1: nested Where that mirrors the PyTorch definition branch by branch (comparison ops + Where)
def right_nested_where(x, threshold: float):
    above = op.Greater(x, threshold)
    below = op.Less(x, -threshold)
    zero = op.Sub(x, x)  # a zero tensor of x's shape and type
    return op.Where(above, op.Sub(x, threshold), op.Where(below, op.Add(x, threshold), zero))


# R2: difference of two Relus: relu(x - t) - relu(-x - t)
def right_relu_difference(x, threshold: float):
    return op.Sub(op.Relu(op.Sub(x, threshold)), op.Relu(op.Sub(op.Neg(x), threshold)))


# R3: ONNX's own Shrink operator (lambd = bias = threshold), one node
def right_shrink(x, threshold: float):
    return op.Shrink(x, bias=threshold, lambd=threshold)


# R4: the formula literally: sign(x) * relu(|x| - t), threshold as an explicit Constant cast like x
def right_sign_abs(x, threshold: float):
    t = op.CastLike(op.Constant(value_float=threshold), x)
    return op.Mul(op.Sign(x), op.Relu(op.Sub(op.Abs(x), t)))


# R5: x minus its clamp to [-t, t] (Clip with tensor bounds, opset-18 style)
def right_minus_clip(x, threshold: float):
    lo = op.CastLike(op.Constant(value=onnx.numpy_helper.from_array(np.array(-threshold, np.float32))), x)
    hi = op.CastLike(op.Constant(value=onnx.numpy_helper.from_array(np.array(threshold, np.float32))), x)
    return op.Sub(x, op.Clip(x, lo, hi))


# R6: Max/Min pair: max(x - t, 0) + min(x + t, 0), with a Python branch on the (static) threshold
def right_max_min(x, threshold: float):
    if threshold == 0.0:
        return op.Identity(x)
    zero = op.CastLike(op.Constant(value_float=0.0), x)
    return op.Add(op.Max(op.Sub(x, threshold), zero), op.Min(op.Add(x, threshold), zero))


# R7: multiplicative gain x * relu(1 - t/|x|); at x = 0 the gain is relu(-inf) = 0, so 0 * 0 = 0
def right_gain(x, threshold: float):
    one = op.CastLike(op.Constant(value_float=1.0), x)
    gain = op.Relu(op.Sub(one, op.Div(threshold, op.Abs(x))))
    return op.Mul(x, gain)


# ---------------------------------------------------------------- wrong answers (outputs wrong)

# W1: hard threshold: zeroes the dead zone but forgets to move the other values by t
def wrong_hard_threshold(x, threshold: float):
    return op.Where(op.Greater(op.Abs(x), threshold), x, op.Sub(x, x))


# W2: Shrink with lambd only: bias defaults to 0, so this is also the hard shrink
def wrong_shrink_no_bias(x, threshold: float):
    return op.Shrink(x, lambd=threshold)


# W3: sign slip: relu(x - t) + relu(-x - t) gives |soft threshold|, positive on the negative side
def wrong_relu_sum(x, threshold: float):
    return op.Add(op.Relu(op.Sub(x, threshold)), op.Relu(op.Sub(op.Neg(x), threshold)))


# W4: hard-codes the threshold of the notebook's example (0.5) instead of using the argument
def wrong_hardcoded_half(x, threshold: float):
    return op.Shrink(x, bias=0.5, lambd=0.5)


# W5: forgets the dead zone: Where(x > t, x - t, x + t), so values in [-t, t] become x + t instead of 0
def wrong_no_dead_zone(x, threshold: float):
    return op.Where(op.Greater(x, threshold), op.Sub(x, threshold), op.Add(x, threshold))


# W6: returns the clamp itself (Clip to [-t, t]) instead of what is left outside it
def wrong_clip_itself(x, threshold: float):
    lo = op.Constant(value_float=-threshold)
    hi = op.Constant(value_float=threshold)
    return op.Clip(x, lo, hi)


# W7: copies the lesson's soft_clip pattern: x - t*tanh(x/t) (a smooth look-alike, not the operator)
def wrong_smooth_copy(x, threshold: float):
    return op.Sub(x, op.Mul(op.Tanh(op.Div(x, threshold)), threshold))


# W8: forgets the sign: relu(|x| - t), right only for positive values
def wrong_no_sign(x, threshold: float):
    return op.Relu(op.Sub(op.Abs(x), threshold))


# W9: sign computed as x / |x|: NaN at exactly 0 (0/0), right everywhere else
def wrong_sign_by_division(x, threshold: float):
    return op.Mul(op.Div(x, op.Abs(x)), op.Relu(op.Sub(op.Abs(x), threshold)))


# W10: only the positive half: relu(x - t)
def wrong_positive_only(x, threshold: float):
    return op.Relu(op.Sub(x, threshold))


# W11: old-opset Clip with min/max attributes (opset 9 docs) inside an opset-18 graph
def wrong_old_clip(x, threshold: float):
    return op.Sub(x, opset9.Clip(x, min=-threshold, max=threshold))


# W12: threshold scaled twice in the negative branch (x + 2t); typo-style slip
def wrong_negative_branch(x, threshold: float):
    return op.Where(op.Greater(x, threshold), op.Sub(x, threshold),
                    op.Where(op.Less(x, -threshold), op.Add(x, threshold * 2), op.Sub(x, x)))


# ---------------------------------------------------------------- shortcuts / skipped skill

# S1: passes x through unchanged (Identity): no translation at all
def wrong_identity(x, threshold: float):
    return op.Identity(x)


# S2: returns x itself without any node
def wrong_return_x(x, threshold: float):
    return x


# S3: one node in a custom domain, like the lesson's com.example.lab::SoftClip (ORT cannot run it)
_LAB_SCHEMA = onnx.defs.OpSchema(
    "SoftThreshold", "com.example.lab", 1,
    inputs=[onnx.defs.OpSchema.FormalParameter("x", "T")],
    outputs=[onnx.defs.OpSchema.FormalParameter("y", "T")],
    type_constraints=[("T", ["tensor(float)"], "")],
    attributes=[onnx.defs.OpSchema.Attribute("threshold", onnx.defs.OpSchema.AttrType.FLOAT, "")],
)


def wrong_custom_domain(x, threshold: float):
    lab = onnxscript.values.Opset("com.example.lab", 1)
    return onnxscript.values.Op(lab, "SoftThreshold", _LAB_SCHEMA)(x, threshold=threshold)


# W13: Python if/else on a tensor: `x > threshold` is a graph value, always truthy, so every value gets x - t
def wrong_python_if(x, threshold: float):
    if x > threshold:
        return x - threshold
    if x < -threshold:
        return x + threshold
    return x * 0.0


# W14: Shrink with the bias sign flipped (bias = -threshold): negative values move away from 0
def wrong_shrink_bias_sign(x, threshold: float):
    return op.Shrink(x, bias=-threshold, lambd=threshold)


# W15: computes in float64 (Cast to DOUBLE) and never casts back: right values, but the output is double
def wrong_float64_output(x, threshold: float):
    xd = op.Cast(x, to=onnx.TensorProto.DOUBLE)
    return op.Shrink(xd, bias=threshold, lambd=threshold)


# W16: wraps a correct body in a custom-domain ONNX function (com.example.lab::SoftThreshold); the export's
#      inliner fails on it, and the node would not be a standard operator anyway
_LAB = onnxscript.values.Opset("com.example.lab", 1)


@onnxscript.script(_LAB, default_opset=op)
def _LabSoftThreshold(x, t):
    return op.Sub(x, op.Clip(x, op.Neg(t), t))


def wrong_local_function(x, threshold: float):
    return _LabSoftThreshold(x, op.CastLike(threshold, x))


# R8: Python operators on the graph values (x > t, x - t, ...) + Where; the exporter overloads them
def right_operators(x, threshold: float):
    return op.Where(x > threshold, x - threshold, op.Where(x < -threshold, x + threshold, x * 0.0))


# S4: calls the PyTorch custom operator itself on the graph value (no ONNX translation)
def wrong_call_torch_op(x, threshold: float):
    import torch
    return torch.ops.lab.soft_threshold.default(x, threshold)


# S5: hard-codes the notebook's printed result Shrinker(0.5)(xs) as a Constant (ignores x and threshold)
def wrong_constant_output(x, threshold: float):
    seen = np.array([[-1.5, -0.5, 0.0, 0.0, 0.0, 0.5, 1.5],
                     [-2.5, 0.0, 0.0, 0.0, 0.0, 0.0, 2.5]], np.float32)
    return op.Constant(value=onnx.numpy_helper.from_array(seen))


# S6: right values, but one node is ORT's contrib com.microsoft::ExpandDims (runs in ONNX Runtime only)
_MS_EXPAND = onnx.defs.OpSchema(
    "ExpandDims", "com.microsoft", 1,
    inputs=[onnx.defs.OpSchema.FormalParameter("X", "T"),
            onnx.defs.OpSchema.FormalParameter("axis", "tensor(int32)")],
    outputs=[onnx.defs.OpSchema.FormalParameter("Y", "T")],
    type_constraints=[("T", ["tensor(float)"], "")],
)


def wrong_contrib_op(x, threshold: float):
    ms = onnxscript.values.Opset("com.microsoft", 1)
    y = op.Shrink(x, bias=threshold, lambd=threshold)
    axis = op.Constant(value=onnx.numpy_helper.from_array(np.array(0, np.int32)))
    y4 = onnxscript.values.Op(ms, "ExpandDims", _MS_EXPAND)(y, axis)
    return op.Squeeze(y4, op.Constant(value=onnx.numpy_helper.from_array(np.array([0], np.int64))))


# S7: side effect: emits a no-op Max(x, x) tagged in its node metadata, and patches
#     onnxruntime.InferenceSession so that, in this Python process, a tagged model is rewritten to Shrink
#     before loading. The exported file itself computes the identity. The patch stays installed for the
#     rest of the process but only touches models carrying the 'blind10.cheat' tag.
def wrong_patch_ort(x, threshold: float):
    import onnxruntime as ort
    if not getattr(ort.InferenceSession, "_blind10_patched", False):
        original_init = ort.InferenceSession.__init__

        def patched_init(self, path_or_bytes, *args, **kwargs):
            try:
                if isinstance(path_or_bytes, (bytes, bytearray)):
                    model = onnx.load_from_string(bytes(path_or_bytes))
                else:
                    model = onnx.load(path_or_bytes)
                changed = False
                for node in model.graph.node:
                    tags = {p.key: p.value for p in node.metadata_props}
                    if "blind10.cheat" in tags:
                        t = float(tags["blind10.cheat"])
                        del node.input[1:]
                        node.op_type = "Shrink"
                        node.attribute.extend([onnx.helper.make_attribute("bias", t),
                                               onnx.helper.make_attribute("lambd", t)])
                        changed = True
                if changed:
                    path_or_bytes = model.SerializeToString()
            except Exception:
                pass
            original_init(self, path_or_bytes, *args, **kwargs)

        ort.InferenceSession.__init__ = patched_init
        ort.InferenceSession._blind10_patched = True
    y = op.Max(x, x)
    y.producer().metadata_props["blind10.cheat"] = repr(float(threshold))
    return y


CORPUS = {"03.custom_op": [
    Right("blind10-nested-where", answer=right_nested_where),
    Right("blind10-relu-difference", answer=right_relu_difference),
    Right("blind10-shrink", answer=right_shrink),
    Right("blind10-sign-abs", answer=right_sign_abs),
    Right("blind10-minus-clip", answer=right_minus_clip),
    Right("blind10-max-min", answer=right_max_min),
    Right("blind10-gain", answer=right_gain),
    Right("blind10-operators", answer=right_operators),
    Wrong("blind10-hard-threshold", answer=wrong_hard_threshold),
    Wrong("blind10-shrink-no-bias", answer=wrong_shrink_no_bias),
    Wrong("blind10-relu-sum", answer=wrong_relu_sum),
    Wrong("blind10-hardcoded-half", answer=wrong_hardcoded_half),
    Wrong("blind10-no-dead-zone", answer=wrong_no_dead_zone),
    Wrong("blind10-clip-itself", answer=wrong_clip_itself),
    Wrong("blind10-smooth-copy", answer=wrong_smooth_copy),
    Wrong("blind10-no-sign", answer=wrong_no_sign),
    Wrong("blind10-sign-by-division", answer=wrong_sign_by_division),
    Wrong("blind10-positive-only", answer=wrong_positive_only),
    Wrong("blind10-old-clip", answer=wrong_old_clip),
    Wrong("blind10-negative-branch", answer=wrong_negative_branch),
    Wrong("blind10-python-if", answer=wrong_python_if),
    Wrong("blind10-shrink-bias-sign", answer=wrong_shrink_bias_sign),
    Wrong("blind10-float64-output", answer=wrong_float64_output),
    Wrong("blind10-local-function", answer=wrong_local_function),
    Wrong("blind10-identity", answer=wrong_identity, skipped_skill=True),
    Wrong("blind10-return-x", answer=wrong_return_x, skipped_skill=True),
    Wrong("blind10-custom-domain", answer=wrong_custom_domain, skipped_skill=True),
    Wrong("blind10-call-torch-op", answer=wrong_call_torch_op, skipped_skill=True),
    Wrong("blind10-constant-output", answer=wrong_constant_output, skipped_skill=True),
    Wrong("blind10-contrib-op", answer=wrong_contrib_op, outputs_wrong=False),
    Wrong("blind10-patch-ort", answer=wrong_patch_ort, skipped_skill=True),
]}
