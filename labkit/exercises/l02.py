"""Lesson 02 exercises, learner side: what each exercise is (no answers, no test inputs).

The judges, references, test inputs and quiz keys are in `labkit_judges/l02.py`, which a graded
kernel cannot import (docs/authoring.md)."""
from __future__ import annotations

import numpy as np

from ..checks.registry import Question, declare, quiz

declare("02.count_params", title="Count the parameters in a graph", points=3, kind="function",
        hint="Add up np.prod(t.dims) over model.graph.initializer whose data_type is a float type (FLOAT, "
             "FLOAT16, DOUBLE, BFLOAT16). Then, for each ConstantOfShape node whose input is an initializer, "
             "add the product of the shape values stored in it (numpy_helper.to_array). Do not count graph "
             "inputs: in old models they repeat the initializers.")

declare("02.expose_output", title="Expose an intermediate tensor", points=3, kind="onnx",
        hint="Run onnx.shape_inference.infer_shapes on the model, find the ValueInfoProto whose name is the "
             "first Relu's output in graph.value_info, and append it to model.graph.output "
             "(model.graph.output.append(...)). Keep the original output.")

declare("02.add_metadata", title="Add metadata to a model", points=2, kind="onnx",
        hint="onnx.helper.set_model_props(model, {...}) writes metadata_props (strings only); "
             "model.model_version = 2 sets the version. Work on a copy of small_cnn() and change nothing else.")

declare("02.convert_opset", title="Convert a model to opset 21", points=3, kind="onnx",
        hint="onnx.version_converter.convert_version(model, target_version) rewrites every node whose "
             "definition changed (ReduceMean's axes become an input, for instance). Setting opset_import by "
             "hand does not convert anything.")

quiz("02.quiz", title="Reading a model's structure", points=4, questions=[
    Question("q1", "The light ResNet-50 file is tiny, yet the model has millions of parameters. Why?",
             {"a": "The weights are compressed with zip",
              "b": "Each weight is a ConstantOfShape node that fills a tensor of a stored shape with one value",
              "c": "The weights are downloaded when the model is loaded"}),
    Question("q2", "After onnx.shape_inference.infer_shapes, where are the shapes of intermediate tensors?",
             {"a": "In graph.value_info", "b": "In graph.initializer", "c": "In model.metadata_props"}),
    Question("q3", "When must a model keep its weights in external data?",
             {"a": "Always: it makes inference faster",
              "b": "When the single file would pass protobuf's 2 GB limit",
              "c": "Only on Android"}),
    Question("q4", "You converted a model to a newer opset with onnx.version_converter. What next?",
             {"a": "Nothing, the converter is always right",
              "b": "Run the checker and compare its outputs with the original model's on the same inputs",
              "c": "Retrain the model"}),
    Question("q5", "This old ResNet-50 lists every initializer in graph.input too. What must you feed at run time?",
             {"a": "Every graph input",
              "b": "Only the inputs that are not initializers (the image)",
              "c": "Nothing"}),
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
