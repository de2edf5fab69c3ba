"""Lesson 06: the quantization functions, the calibration exercise (a real int8 model) and the quiz."""
import numpy as np
import onnx
import pytest

from labkit import plain
from labkit.checks import collect, evaluate, get, judge_saved
from labkit_judges import l06


def quantize(x, scale, zero_point, qmin, qmax):
    return np.clip(np.round(x / scale) + zero_point, qmin, qmax).astype(np.int32)


def dequantize(q, scale, zero_point):
    return ((q.astype(np.int32) - zero_point) * scale).astype(np.float32)


def choose_qparams(x, qmin, qmax, symmetric):
    rmin, rmax = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    if symmetric:
        m = max(-rmin, rmax)
        rmin, rmax = -m, m
    scale = (rmax - rmin) / (qmax - qmin)
    if scale == 0:
        return 1.0, 0
    zp = np.round((qmin + qmax) / 2) if symmetric else np.round(qmin - rmin / scale)
    return float(scale), int(zp)


def _stub(*args):
    raise NotImplementedError("write your solution here")


# ---------------------------------------------------------------- the three functions


@pytest.mark.parametrize("id, fn", [("06.quantize", quantize), ("06.dequantize", dequantize),
                                    ("06.choose_qparams", choose_qparams)])
def test_references_pass_on_many_seeds(id, fn):
    for seed in (0, 1, 7, 123, 2024):
        r = evaluate(get(id), fn, seed=seed)
        assert r.status == "passed" and r.points == r.max_points, (seed, r)


def test_quantize_variants_pass():
    ex = get("06.quantize")
    in_float64 = lambda x, s, z, a, b: np.clip(np.round(x.astype(np.float64) / np.float64(s)) + z, a, b).astype(np.int32)
    clip_twice = lambda x, s, z, a, b: np.minimum(np.maximum(np.rint(x / s) + z, a), b).astype("int32")
    for fn in (in_float64, clip_twice):
        assert evaluate(ex, fn).status == "passed"


@pytest.mark.parametrize("wrong, message", [
    (l06.wrong_quantize, "that is round((x - z) / s)"),
    (lambda x, s, z, a, b: (np.round(x / s) + z).astype(np.int32), "not clamped to [0, 255]"),
    (lambda x, s, z, a, b: np.clip(np.floor(x / s + 0.5) + z, a, b).astype(np.int32), "expected 0, got 1"),
    (lambda x, s, z, a, b: np.clip(np.round(x / s) + z, a, b), "expected dtype int32, got float32"),
    (lambda x, s, z, a, b: np.clip(np.round(x / s) + z, -128, 127).astype(np.int32), "expected"),
])
def test_quantize_wrong_answers(wrong, message):
    r = evaluate(get("06.quantize"), wrong)
    assert r.status == "failed" and r.points < r.max_points
    assert any(message in t.message for t in r.tests if not t.passed), [t.message for t in r.tests]


def test_quantize_half_away_from_zero_is_named():
    away = lambda x, s, z, a, b: np.clip(np.sign(x) * np.floor(np.abs(x / s) + 0.5) + z, a, b).astype(np.int32)
    r = evaluate(get("06.quantize"), away)
    assert r.status == "failed" and "round to even" in r.tests[0].message


@pytest.mark.parametrize("wrong, message", [
    (lambda q, s, z: (q - z) * s, "wraps around"),
    (lambda q, s, z: (q.astype(np.int32) - z) * np.float64(s), "expected dtype float32, got float64"),
    (lambda q, s, z: (q.astype(np.float32) + z) * s, "expected"),
    (lambda q, s, z: q.astype(np.float32) * s, "expected"),
])
def test_dequantize_wrong_answers(wrong, message):
    r = evaluate(get("06.dequantize"), wrong)
    assert r.status == "failed" and r.points < r.max_points
    assert any(message in t.message for t in r.tests if not t.passed), [t.message for t in r.tests]


def _no_zero(x, qmin, qmax, symmetric):       # forgets to include 0 in the range
    scale = float(x.max() - x.min()) / (qmax - qmin) or 1.0
    return scale, int(np.round(qmin - float(x.min()) / scale))


def _truncating_zp(x, qmin, qmax, symmetric):  # int() instead of round for the symmetric zero point
    scale, zp = choose_qparams(x, qmin, qmax, symmetric)
    return scale, int((qmin + qmax) / 2) if symmetric and scale != 1.0 else zp


@pytest.mark.parametrize("wrong, message", [
    (_no_zero, "expected scale"),
    (_truncating_zp, "expected zero_point 128, got 127"),
    (lambda x, a, b, s: (choose_qparams(x, a, b, s)[0], float(choose_qparams(x, a, b, s)[1])),
     "zero_point must be an int"),
    (lambda x, a, b, s: (max(abs(x.min()), abs(x.max())) / (b - a) * 2, 0), "(an all-zero tensor needs scale 1.0)"),
    (lambda x, a, b, s: {"scale": 1.0, "zero_point": 0}, "expected a tuple (scale, zero_point)"),
])
def test_choose_qparams_wrong_answers(wrong, message):
    r = evaluate(get("06.choose_qparams"), wrong)
    assert r.status == "failed" and r.points < r.max_points
    assert any(message in t.message for t in r.tests if not t.passed), [t.message for t in r.tests]


def test_choose_qparams_accepts_numpy_scalars():
    np_scalars = lambda x, a, b, s: (np.float32(choose_qparams(x, a, b, s)[0]), np.int64(choose_qparams(x, a, b, s)[1]))
    assert evaluate(get("06.choose_qparams"), np_scalars).status == "passed"


@pytest.mark.parametrize("id", ["06.quantize", "06.dequantize", "06.choose_qparams"])
@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), (_stub, "not_attempted"), ("np.round", "error"), (3, "error"),
    (lambda *a: 1 / 0, "failed"), (lambda *a: np.full((2, 2), np.nan), "failed"), (lambda: 0, "failed"),
    (lambda *a: object(), "failed"), (lambda *a: "text", "failed"),
])
def test_hostile_answers_give_a_panel(id, hostile, status):
    r = evaluate(get(id), hostile)
    assert r.status == status and r.points == 0, r


def test_nan_values_fail_precisely():
    r = evaluate(get("06.dequantize"), lambda q, s, z: np.full(np.shape(q), np.nan, np.float32))
    assert r.status == "failed" and "nan" in r.tests[0].message


# ---------------------------------------------------------------- 06.calibration (real models)


class Reader:
    def __init__(self, images, batch_size=64):
        self.batches = [images[i:i + batch_size] for i in range(0, len(images), batch_size)]
        self.i = 0

    def get_next(self):
        if self.i >= len(self.batches):
            return None
        self.i += 1
        return {"image": self.batches[self.i - 1]}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    import torch
    from onnxruntime.quantization import QuantFormat, quant_pre_process, quantize_dynamic, quantize_static

    import labkit
    from labkit.models import trained_cnn

    folder = tmp_path_factory.mktemp("l06")
    d = labkit.digits()
    with labkit.quiet():
        program = torch.onnx.export(trained_cnn(), (torch.from_numpy(d.x_train[:2]),), dynamo=True,
                                    input_names=["image"], output_names=["logits"],
                                    dynamic_shapes=({0: torch.export.Dim("batch")},))
        fp32 = folder / "fp32.onnx"
        model = program.model_proto
        for node in model.graph.node:  # as the notebook does: drop the exporter's debugging notes
            node.doc_string = ""
            del node.metadata_props[:]
        onnx.save(model, fp32)
        prep = folder / "prep.onnx"
        quant_pre_process(fp32, prep)
        paths = {"fp32": fp32}
        for name, images in (("static", d.x_train), ("zeros", np.zeros_like(d.x_train[:64]))):
            paths[name] = folder / f"{name}.onnx"
            quantize_static(prep, paths[name], Reader(images), quant_format=QuantFormat.QDQ, per_channel=True)
        paths["dynamic"] = folder / "dynamic.onnx"
        quantize_dynamic(prep, paths["dynamic"])
    return paths


def test_calibration_reference_passes(models):
    r = evaluate(get("06.calibration"), str(models["static"]))
    assert r.status == "passed" and r.points == 4, r
    assert evaluate(get("06.calibration"), onnx.load(models["static"])).status == "passed"


def test_calibration_rejects_dynamic_and_fp32(models):
    ex = get("06.calibration")
    dyn = evaluate(ex, models["dynamic"])
    assert dyn.status == "failed" and "that is dynamic quantization" in dyn.message
    fp32 = evaluate(ex, models["fp32"])
    messages = " ".join(t.message for t in fp32.tests if not t.passed)
    assert fp32.status == "failed" and "this model is not quantized" in messages and "above the limit" in messages


def test_calibration_with_useless_data_loses_accuracy(models):
    r = evaluate(get("06.calibration"), models["zeros"])
    failed = {t.name: t.message for t in r.tests if not t.passed}
    assert r.status == "failed" and "accuracy" in failed and "did the reader feed" in failed["accuracy"]


def test_calibration_fixed_batch_model_is_reported(models):
    m = onnx.load(models["static"])
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1
    r = evaluate(get("06.calibration"), m)
    assert r.status == "failed" and "dynamic batch" in " ".join(t.message for t in r.tests)


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), ("missing.onnx", "error"), (b"not a model", "failed"), (42, "error"),
    (onnx.ModelProto(), "failed"), (np.zeros(3), "error"),
])
def test_calibration_hostile(hostile, status):
    r = evaluate(get("06.calibration"), hostile)
    assert r.status == status and r.points == 0, r


# ---------------------------------------------------------------- quiz and the grader round trip


def test_quiz():
    ex = get("06.quiz")
    assert evaluate(ex, {"q1": "a", "q2": "b", "q3": "b", "q4": "b"}).status == "passed"
    r = evaluate(ex, {"q1": "b", "q2": "b", "q3": "a", "q4": "b"})
    assert r.status == "failed" and r.points == 2
    for hostile in (None, "a", ["a"], {"q1": 1}):
        assert evaluate(ex, hostile).points == 0


def test_answers_survive_the_grader_round_trip(tmp_path, models):
    for id, answer in (("06.quantize", quantize), ("06.dequantize", dequantize),
                       ("06.choose_qparams", choose_qparams), ("06.calibration", models["static"]),
                       ("06.quiz", {"q1": "a", "q2": "b", "q3": "b", "q4": "b"})):
        ex = get(id)
        plain.save(collect(ex, answer, 11), tmp_path / id)
        assert judge_saved(ex, tmp_path / id, 11).status == "passed", id
    plain.save(collect(get("06.quantize"), l06.wrong_quantize, 11), tmp_path / "wrong")
    assert judge_saved(get("06.quantize"), tmp_path / "wrong", 11).status == "failed"


def test_reference_matches_onnx_quantize_linear():
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    for args in l06._quantize_cases(3)[:3] + l06._quantize_cases(3)[4:5]:
        x, s, z, qmin, qmax = args
        dtype = np.uint8 if qmin == 0 else np.int8
        g = helper.make_graph([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                              [helper.make_tensor_value_info("q", helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), None)],
                              [numpy_helper.from_array(np.array(s, np.float32), "s"),
                               numpy_helper.from_array(np.array(z, dtype), "z")])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
        np.testing.assert_array_equal(ReferenceEvaluator(m).run(None, {"x": x})[0], l06.quantize_ref(*args))
