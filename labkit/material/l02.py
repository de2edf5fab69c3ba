"""Lesson 02 material, learner side: what the notebook hands out and the factories a graded kernel
builds test inputs with (`plain.Make("labkit.material.l02:name", ...)`). No answers, no test inputs.

Written by hand (the notebooks import it); the generated `labkit/exercises/lNN.py`
holds only declarations."""
from __future__ import annotations

import numpy as np

__all__ = ["OLD_OPSET", "small_cnn", "model_to_repair"]


# ---------------------------------------------------------------- lesson material (handed to the learner)

#: the opset the lesson's small CNN is written in
OLD_OPSET = 11


def small_cnn(opset: int = OLD_OPSET, seed: int = 2024):
    """An untrained CNN for 8x8 digits written in an old opset, built with onnx.helper (fixed weights).

    Conv-BatchNorm-Relu, MaxPool, Conv-Relu, ReduceMean over the pixels, Gemm, Softmax.
    Input `pixels` (batch, 1, 8, 8), output `probs` (batch, 10).
    """
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)

    def he(*shape):
        return (rng.normal(size=shape) * np.sqrt(2.0 / np.prod(shape[1:]))).astype(np.float32)

    def small(n, center=0.0, spread=0.1):
        return (center + spread * rng.normal(size=n)).astype(np.float32)

    weights = {
        "conv1.weight": he(8, 1, 3, 3), "conv1.bias": small(8),
        "bn1.scale": small(8, 1.0), "bn1.bias": small(8), "bn1.mean": small(8),
        "bn1.var": (1 + 0.2 * rng.random(8)).astype(np.float32),
        "conv2.weight": he(16, 8, 3, 3), "conv2.bias": small(16),
        "fc.weight": he(10, 16), "fc.bias": small(10),
    }
    nodes = [
        helper.make_node("Conv", ["pixels", "conv1.weight", "conv1.bias"], ["conv1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["conv1", "bn1.scale", "bn1.bias", "bn1.mean", "bn1.var"], ["bn1"],
                         name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["bn1"], ["relu1"], name="relu1"),
        helper.make_node("MaxPool", ["relu1"], ["pool1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["pool1", "conv2.weight", "conv2.bias"], ["conv2"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv2"], ["relu2"], name="relu2"),
        helper.make_node("ReduceMean", ["relu2"], ["features"], name="mean", axes=[2, 3], keepdims=0),
        helper.make_node("Gemm", ["features", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "digits_cnn",
        [helper.make_tensor_value_info("pixels", TensorProto.FLOAT, ["batch", 1, 8, 8])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=6,
                             producer_name="labkit", producer_version="lesson 02")


def model_to_repair():
    """A small model whose opset number was overwritten by hand ("converted" to 21 by editing opset_import):
    its nodes still have the form of the opset it was written in. Input X (N, 3, 4, 4), output Y (N, 5)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(1102)
    nodes = [
        helper.make_node("ReduceMean", ["X"], ["pooled"], axes=[2, 3], keepdims=1, name="pool"),
        helper.make_node("Squeeze", ["pooled"], ["flat"], axes=[2, 3], name="squeeze"),
        helper.make_node("MatMul", ["flat", "W"], ["logits"], name="fc"),
        helper.make_node("Split", ["logits"], ["left", "right"], axis=1, split=[3, 2], name="split"),
        helper.make_node("Softmax", ["left"], ["p_left"], axis=1, name="softmax"),
        helper.make_node("Unsqueeze", ["right"], ["right3"], axes=[1], name="unsqueeze"),
        helper.make_node("ReduceSum", ["right3"], ["r_sum"], axes=[1], keepdims=0, name="rsum"),
        helper.make_node("Concat", ["p_left", "r_sum"], ["Y"], axis=1, name="concat"),
    ]
    graph = helper.make_graph(nodes, "to_repair", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3, 4, 4])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 5])],
                              [numpy_helper.from_array(rng.normal(size=(3, 5)).astype(np.float32), "W")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=7)
