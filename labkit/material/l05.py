"""Lesson 05 material, learner side: what the notebook hands out and the factories a graded kernel
builds test inputs with (`plain.Make("labkit.material.l05:name", ...)`). No answers, no test inputs.

Written by hand (the notebooks import it); the generated `labkit/exercises/lNN.py`
holds only declarations."""
from __future__ import annotations

import numpy as np

__all__ = ["PRACTICE_SEED", "IN_CHANNELS", "SIZE", "practice_model"]


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
