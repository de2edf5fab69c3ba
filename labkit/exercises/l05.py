"""Lesson 05 exercises, learner side: what each exercise is (no answers, no test inputs).

The judges, references, test inputs and quiz keys are in `labkit_judges/l05.py`, which a graded
kernel cannot import (docs/authoring.md)."""
from __future__ import annotations

import numpy as np

from ..checks.registry import Question, declare, quiz

declare("05.fold_bn", title="Fold BatchNorm into Conv weights", points=3, kind="function",
        hint=[
            'BatchNormalization at inference is a per-output-channel scale and shift: the scale multiplies W, scale and shift together make the new bias (a missing bias is zeros).',
            "np.sqrt, and broadcasting the per-channel factor over W's other axes (reshape with -1 and ones).",
        ])

declare("05.fold_graph", title="Fold every Conv+BatchNormalization pair of a graph", points=4, kind="function",
        hint=[
            "Only a BatchNormalization fed by a Conv that nothing else reads folds; fold its parameters into that Conv's weights and bias, let the Conv write the BN's output, and leave every other node as it was (no optimizer: it does more than folding).",
            'model.graph.node and model.graph.initializer; onnx.numpy_helper.to_array / from_array; your fold_bn from above.',
        ])

quiz("05.quiz", title="Predict what each optimization level does", points=4, questions=[
    Question("q1", "Which operators disappear from the light ResNet-50 at the BASIC level?",
             {"a": "ConstantOfShape (folded into initializers) and BatchNormalization (folded into Conv)", "b": "Only Relu, merged into Conv", "c": "None: BASIC only checks the graph"}),
    Question("q2", "What does EXTENDED add on the CPU execution provider?",
             {"a": "Blocked NCHWc layouts for the CPU's vector width", "b": "8-bit quantization of the weights", "c": "Fusions into ONNX Runtime's own operators, e.g. Conv+Relu -> FusedConv, Gemm+Relu -> FusedGemm"}),
    Question("q3", "A script sets so.graph_optimization_level = ORT_ENABLE_ALL on a fresh SessionOptions(). What changes?",
             {"a": "Inference gets faster", "b": "Nothing: ORT_ENABLE_ALL is already the default", "c": "Model loading fails on ARM"}),
    Question("q4", "You optimize offline once and ship the file to many different CPUs. Which level do you save at?",
             {"a": "EXTENDED: ALL may add NCHWc layout operators whose block size fits only this CPU's vectors", "b": "ALL, because it is fastest everywhere", "c": "DISABLE, because optimized files never load elsewhere"}),
    Question("q5", "The EXTENDED file (with FusedConv nodes) is loaded on a phone with the NNAPI execution provider first in the list. What happens to the FusedConv nodes?",
             {"a": "NNAPI runs them: FusedConv is a standard ONNX operator", "b": "They stay on the CPU provider: FusedConv is a com.microsoft kernel of ORT's CPU provider, which NNAPI does not take", "c": "The file cannot load on an Arm CPU"}),
])

declare("05.portable", title="Save a portable optimized model", points=3, kind="onnx",
        hint=[
            'Pick the optimization level that fuses operators for the CPU provider but does not add this machine\'s blocked memory layout (the level above it does); the session that optimizes can also write the optimized model to a file.',
            'onnxruntime.SessionOptions: graph_optimization_level and optimized_model_filepath.',
        ])

declare("05.rewrite_rule", title="A rewrite rule with onnxscript: MatMul + Add -> Gemm", points=3, kind="function",
        hint=[
            'A rewrite rule has a pattern to find (MatMul then Add), a replacement (Gemm) and a condition: Gemm takes 2-D inputs only, so the rule must refuse other ranks; Add is commutative.',
            'onnxscript.rewriter.pattern: RewriteRule(target, replacement, condition), RewriteRuleSet(..., commute=True), then onnxscript.rewriter.rewrite(model, pattern_rewrite_rules=...).',
        ])


# ---------------------------------------------------------------- lesson material (handed to the learner)

#: the seed of the practice model: the notebook and the judge build the very same graph from it
PRACTICE_SEED = 5

#: (name, output channels, group, has bias, epsilon) of each Conv -> BatchNormalization pair
_PAIRS = (("conv1", 16, 1, True, 1e-5), ("conv2", 16, 1, False, 1e-3), ("conv3", 16, 16, True, 1e-2))
IN_CHANNELS = 8
SIZE = 10


def practice_model(seed: int = PRACTICE_SEED) -> bytes:
    """A small Conv+BN network built with onnx.helper, the same for everyone who uses the same seed.

    x [batch, 8, 10, 10] -> Conv+BN+Relu -> Conv(no bias)+BN+Relu -> depthwise Conv+BN -> y.
    The last BatchNormalization writes the graph output `y`, the epsilons differ per layer, and
    the variances are small enough that forgetting epsilon shows.
    """
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    nodes, inits = [], []

    def add(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name))
        return name

    prev, cin = "x", IN_CHANNELS
    for i, (name, cout, group, bias, eps) in enumerate(_PAIRS):
        fan_in = cin // group * 9
        w = add(f"{name}.weight", rng.normal(0, fan_in ** -0.5, size=(cout, cin // group, 3, 3)))
        inputs = [prev, w] + ([add(f"{name}.bias", rng.normal(0, 0.2, size=cout))] if bias else [])
        nodes.append(helper.make_node("Conv", inputs, [f"{name}_out"], name=name,
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=group))
        bn = f"bn{i + 1}"
        params = [add(f"{bn}.scale", rng.uniform(0.5, 1.5, cout)), add(f"{bn}.bias", rng.normal(0, 0.3, cout)),
                  add(f"{bn}.mean", rng.normal(0, 0.5, cout)), add(f"{bn}.var", rng.uniform(0.02, 2.0, cout))]
        last = i == len(_PAIRS) - 1
        out = "y" if last else f"{bn}_out"
        nodes.append(helper.make_node("BatchNormalization", [f"{name}_out"] + params, [out], name=bn, epsilon=eps))
        if not last:
            nodes.append(helper.make_node("Relu", [out], [f"relu{i + 1}_out"], name=f"relu{i + 1}"))
            out = f"relu{i + 1}_out"
        prev, cin = out, cout
    graph = helper.make_graph(
        nodes, "convbn_practice",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", IN_CHANNELS, SIZE, SIZE])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", _PAIRS[-1][1], SIZE, SIZE])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8,
                              producer_name="labkit.l05")
    return model.SerializeToString()
