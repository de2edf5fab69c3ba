"""The one external-data guard (`labkit.external_data`): a learner's model that names a file for any
tensor, wherever the tensor sits, is refused before a checker or ONNX Runtime sees it (issue 31).
Fast tier: no kernel, a few milliseconds per model."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from labkit.checks import get, load_onnx, ort_session, run_judge
from labkit.external_data import ExternalDataError, external_tensors, refuse_external_data
from labkit.plain import OnnxBlob

SECRET = "judge-server.json"
X = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 4])
Y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 4])


def ext(name: str, location: str = SECRET) -> TensorProto:
    """A 4-float tensor whose bytes are in `location` at offset 25."""
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=[4], data_location=TensorProto.EXTERNAL)
    for k, v in (("location", location), ("offset", "25"), ("length", "16")):
        t.external_data.add(key=k, value=v)
    return t


def model(nodes, inits=(), **kw) -> onnx.ModelProto:
    kw.setdefault("opset_imports", [helper.make_opsetid("", 21)])
    return helper.make_model(helper.make_graph(nodes, "g", [X], [Y], list(inits)), ir_version=10, **kw)


def branch(name: str, tensor: TensorProto | None = None, node=None) -> onnx.GraphProto:
    out = helper.make_tensor_value_info(f"{name}_out", TensorProto.FLOAT, [4])
    nodes = [node] if node is not None else [helper.make_node("Identity", [tensor.name], [f"{name}_out"])]
    return helper.make_graph(nodes, name, [], [out], [tensor] if tensor is not None and node is None else [])


def _if(then: onnx.GraphProto, out: str = "B") -> onnx.NodeProto:
    return helper.make_node("If", ["C"], [out], then_branch=then, else_branch=branch("e", numpy_helper.from_array(
        np.zeros(4, np.float32), "Z")))


COND = numpy_helper.from_array(np.array(True), "C")
ADD = helper.make_node("Add", ["X", "B"], ["Y"])


def placements() -> dict[str, onnx.ModelProto]:
    sparse = helper.make_sparse_tensor(ext("vals"), numpy_helper.from_array(np.array([0], np.int64), "idx"), [4])
    sparse.values.name = "B"
    tensors_attr = helper.make_node("Identity", ["X"], ["Y"])
    tensors_attr.attribute.append(helper.make_attribute("extra", [ext("t0")]))  # a TENSORS attribute
    deep_const = helper.make_node("Constant", [], ["d_out"], value=ext("deep"))
    inner_if = helper.make_graph([_if(branch("d", node=deep_const), "in_out")], "inner", [],
                                 [helper.make_tensor_value_info("in_out", TensorProto.FLOAT, [4])], [COND])
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("If", ["cond"], ["v"], then_branch=inner_if, else_branch=inner_if)], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), helper.make_tensor_value_info("v", TensorProto.FLOAT, [4])])
    fn = helper.make_function("local", "AddB", ["x"], ["y"], [
        helper.make_node("Constant", [], ["b"], value=ext("fn_b")), helper.make_node("Add", ["x", "b"], ["y"])],
        [helper.make_opsetid("", 21)])
    trained = model([ADD], [numpy_helper.from_array(np.ones(4, np.float32), "B")])
    trained.training_info.add().initialization.CopyFrom(helper.make_graph([], "init", [], [], [ext("t_init")]))
    return {
        "initializer": model([ADD], [ext("B")]),
        "sparse initializer": helper.make_model(helper.make_graph([ADD], "g", [X], [Y], sparse_initializer=[sparse]),
                                                opset_imports=[helper.make_opsetid("", 21)], ir_version=10),
        "Constant value": model([helper.make_node("Constant", [], ["B"], value=ext("c")), ADD]),
        "ConstantOfShape value": model([helper.make_node("Shape", ["X"], ["s"]),
                                        helper.make_node("ConstantOfShape", ["s"], ["B"], value=ext("v")), ADD]),
        "tensors attribute": model([tensors_attr]),
        "If-branch initializer": model([_if(branch("t", ext("T"))), ADD], [COND]),
        "Constant three subgraphs deep (Loop > If > If)": model(
            [helper.make_node("Loop", ["n", "C"], ["B"], body=loop_body), ADD],
            [COND, numpy_helper.from_array(np.array(1, np.int64), "n")]),
        "function body": model([helper.make_node("AddB", ["X"], ["Y"], domain="local")], functions=[fn],
                               opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("local", 1)]),
        "training initializer": trained,
    }


@pytest.mark.parametrize("where", list(placements()))
def test_every_placement_is_found_and_refused(where):
    m = placements()[where]
    assert external_tensors(m), where
    with pytest.raises(ExternalDataError, match=r"keeps its data in another file \('judge-server.json'\)"):
        refuse_external_data(m.SerializeToString())
    got, why = load_onnx(OnnxBlob(m.SerializeToString()))
    assert got is None and SECRET in why and "\n" not in why
    with pytest.raises(ExternalDataError):
        ort_session(m.SerializeToString())
    with pytest.raises(ExternalDataError):
        ort_session(m)


def test_a_model_with_every_tensor_inside_passes():
    m = model([ADD], [numpy_helper.from_array(np.ones(4, np.float32), "B")])
    assert external_tensors(m) == []
    refuse_external_data(m.SerializeToString())
    x = np.zeros((2, 4), np.float32)
    assert np.array_equal(ort_session(m).run(None, {"X": x})[0], x + 1)
    refuse_external_data(b"not a model at all")  # the caller says "not a valid ONNX model" in its own words


def test_a_tensor_marked_external_without_a_location_is_refused_too():
    t = numpy_helper.from_array(np.ones(4, np.float32), "B")
    t.external_data.add(key="location", value=SECRET)  # data_location left DEFAULT
    assert external_tensors(model([ADD], [t])) == [("B", SECRET)]


def test_run_judge_refuses_before_the_judge_runs():
    """The verdict of a learner's model with external data: every test failed with the one-line reason,
    0 points, whatever the exercise's judge would have opened."""
    ex = get("01.sigmoid_model")
    for where, m in placements().items():
        r = run_judge(ex, OnnxBlob(m.SerializeToString()), 0)
        assert r.status == "failed" and r.points == 0, (where, r.message)
        assert all(not t.passed and "another file" in t.message for t in r.tests), where
    ex = get("09.export_dynamic")  # a function exercise: the model is one of its outputs
    r = run_judge(ex, [OnnxBlob(placements()["Constant value"].SerializeToString())], 0)
    assert r.points == 0 and "another file" in r.message
