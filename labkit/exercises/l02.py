"""Lesson 02 exercises, learner side: what each exercise is (no answers, no test inputs).

The judges, references, test inputs and quiz keys are in `labkit_judges/l02.py`, which a graded
kernel cannot import (docs/authoring.md)."""
from __future__ import annotations

import numpy as np

from ..checks.registry import Question, declare, quiz

declare("02.count_params", title="Count the parameters in a graph", points=3, kind="function",
        hint=[
            'Count the stored float weights; old exporters also list them as graph inputs (do not count twice), and some weights are made at load time from a stored shape.',
            'model.graph.initializer (dims, data_type), ConstantOfShape nodes and onnx.numpy_helper.to_array.',
        ])

declare("02.bad_initializer", title="Find the initializer that breaks shape inference", points=3, kind="function",
        hint=[
            "Strict shape inference stops at the first node whose inputs do not fit, and its message names that node; one of the node's inputs is a stored weight with the wrong shape.",
            "onnx.shape_inference.infer_shapes(model, strict_mode=True) in a try block; model.graph.node and model.graph.initializer to go from the node's name to its initializer.",
        ])

declare("02.repair_conversion", title="Repair a broken opset conversion", points=3, kind="onnx",
        hint=[
            'Writing a new opset number converts nothing: the nodes still have the form of the old opset (attributes that later opsets moved to inputs). Go back to an opset where they are valid, then convert for real.',
            'onnx.checker.check_model(model, full_check=True) names the node it rejects; onnx.version_converter.convert_version does the conversion.',
        ])

quiz("02.quiz", title="Reading a model's structure", points=4, questions=[
    Question("q1", "The light ResNet-50 file is 78 KiB, yet the model has 25 million parameters. Why?",
             {"a": "ONNX compresses the weights when it saves a model",
              "b": "The weights are downloaded the first time the model is loaded",
              "c": "Each weight is a ConstantOfShape node that fills a tensor of a stored shape with one value"}),
    Question("q2", "After onnx.shape_inference.infer_shapes, where are the shapes of intermediate tensors?",
             {"a": "In graph.value_info", "b": "In graph.initializer", "c": "In graph.output, next to the real outputs"}),
    Question("q3", "When must a model keep its weights in external data?",
             {"a": "Always: ONNX Runtime loads external weights faster",
              "b": "When the single file would pass protobuf's 2 GB limit",
              "c": "Whenever the model is quantized"}),
    Question("q4", "You wrote opset_import[0].version = 21 on an opset-11 model and saved it. What did you get?",
             {"a": "A converted model: the runtime adapts old nodes to the new opset",
              "b": "A file that lies: old-style nodes (ReduceMean's axes attribute...) under a new opset number, which the checker rejects",
              "c": "The same model, now faster, because newer opsets have faster kernels"}),
    Question("q5", "This IR 3 ResNet-50 lists its initializers in graph.input too. Can you feed new values for them at run time?",
             {"a": "Yes: an initializer listed as an input is a default you may override",
              "b": "Yes, but only by editing the file, because inputs are read-only",
              "c": "No: before IR 4 they are constants, get_overridable_initializers() is empty and feeding one is an 'Invalid input name'"}),
    Question("q6", "Strict shape inference fails with '(op_type:MatMul, node name: fc2): Incompatible dimensions'. Where is the bad tensor?",
             {"a": "Among the inputs of node fc2: the one with a stored shape (an initializer) that does not fit",
              "b": "In the graph's declared output shape",
              "c": "In the opset: MatMul needs a newer opset"}),
])


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
