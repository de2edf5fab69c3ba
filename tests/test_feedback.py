"""Feedback that teaches (issue 36): a failure message says what is wrong and what was expected; how to fix
it (the API call, the argument, the code) is the hint's job, revealed one step per click.

The patterns live in tests/feedback_fixes.py; tests/test_corpus.py scans the panel's messages for every
wrong answer of the mutation corpus at the notebook's seed (the evaluation it makes anyway).
"""
from __future__ import annotations

import pytest

from feedback_fixes import fixes_in


def test_the_fixes_judges_used_to_print_are_caught():
    """The messages reviewers found giving the answer before any hint was opened, as they were."""
    old = ["the model still ends with ZipMap (probabilities as a list of dicts): "
           "pass options={id(classifier): {'zipmap': False}}",
           "input 'ids' has shape [1, 5]: sequence = 5 was fixed by the example input; "
           "pass dynamic_shapes with a torch.export.Dim for it",
           "the weights have one scale per tensor: pass per_channel=True",
           "the graph has Dropout 'd' in training mode: export the model after model.eval()"]
    assert all(fixes_in(m) for m in old), [m for m in old if not fixes_in(m)]
    assert not fixes_in("the model still ends with ZipMap: its probabilities come out as a list of dicts, "
                        "expected a float tensor (rows, classes)")


def test_a_model_with_external_data_is_told_what_is_expected():
    """The shared refusal of a model whose weights sit in a .data file (08.web_model's skill, every model
    exercise's input), which once named onnx.load and external_data=False."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from labkit.external_data import ExternalDataError, refuse_external_data

    w = numpy_helper.from_array(np.ones(4, np.float32), "w")
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value="m.onnx.data")
    w.ClearField("raw_data")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    model = helper.make_model(helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g", [x],
                                                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w]))
    with pytest.raises(ExternalDataError) as e:
        refuse_external_data(model)
    assert "every tensor inside it" in str(e.value) and not fixes_in(str(e.value)), str(e.value)
