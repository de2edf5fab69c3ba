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
        if qmin < 0:  # ONNX Runtime's symmetric signed range: [-qmax, qmax]
            qmin = -qmax
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
    return scale, int((qmin + qmax) / 2) if symmetric and qmin == 0 and scale != 1.0 else zp


def _full_signed_range(x, qmin, qmax, symmetric):  # 2m/255: the convention ORT does not use
    scale, zp = choose_qparams(x, qmin, qmax, symmetric)
    if symmetric and qmin < 0 and scale != 1.0:
        m = max(abs(min(float(x.min()), 0)), abs(max(float(x.max()), 0)))
        return 2 * m / (qmax - qmin), 0
    return scale, zp


@pytest.mark.parametrize("wrong, message", [
    (_no_zero, "expected scale"),
    (_truncating_zp, "expected zero_point 128, got 127"),
    (_full_signed_range, "symmetric signed ranges drop the lowest level"),
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


def test_symmetric_reference_is_onnxruntimes_convention():
    """choose_qparams_ref agrees with onnxruntime.quantization's own get_qmin_qmax_for_qType + compute_scale_zp."""
    from onnx import TensorProto
    from onnxruntime.quantization.quant_utils import compute_scale_zp, get_qmin_qmax_for_qType

    rng = np.random.default_rng(5)
    for qtype in (TensorProto.INT8, TensorProto.UINT8, TensorProto.INT16):
        full_min, full_max = get_qmin_qmax_for_qType(qtype)
        for symmetric in (True, False):
            qmin, qmax = get_qmin_qmax_for_qType(qtype, symmetric=symmetric)
            x = rng.normal(0.2, 1.0, 50).astype(np.float32)
            z, s = compute_scale_zp(np.array(min(x.min(), 0), np.float32), np.array(max(x.max(), 0), np.float32),
                                    qmin, qmax, symmetric=symmetric)
            scale, zp = l06.choose_qparams_ref(x, int(full_min), int(full_max), symmetric)
            assert np.isclose(scale, float(s), rtol=1e-6) and zp == int(z), (qtype, symmetric, scale, s, zp, z)
    assert get_qmin_qmax_for_qType(TensorProto.INT8, symmetric=True) == (-127, 127)


# ---------------------------------------------------------------- 06.calibration (a function on unseen models)

from corpus.l06 import _calib  # noqa: E402


def test_calibration_models_are_valid_and_differ_per_seed():
    for seed in (0, 4):
        for k in (0, 1):
            onnx.checker.check_model(onnx.load_from_string(l06.calibration_model(seed, k)), full_check=True)
    assert l06.calibration_model(0, 0) != l06.calibration_model(1, 0)
    assert not np.array_equal(l06.calibration_images(0, 0)[:5], l06.calibration_images(1, 0)[:5])


def test_calibration_reference_passes():
    for seed in (0, 7):
        r = evaluate(get("06.calibration"), _calib(), seed=seed)
        assert r.status == "passed" and r.points == 4, r


def test_calibration_useless_data_is_named():
    r = evaluate(get("06.calibration"), _calib(data=lambda images: np.zeros_like(images[:8])))
    failed = {t.name: t.message for t in r.tests if not t.passed}
    assert r.points <= 2 and any("hand out every given image" in m for m in failed.values()), failed


def test_calibration_dynamic_is_named():
    from onnxruntime.quantization import quantize_dynamic

    def dynamic(model_path, images):
        out = str(model_path) + ".dyn.onnx"
        quantize_dynamic(str(model_path), out)
        return onnx.load(out)
    r = evaluate(get("06.calibration"), dynamic)
    assert r.status == "failed" and "that is dynamic quantization" in r.message


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), (_stub, "not_attempted"), ("missing.onnx", "error"), (42, "error"),
    (lambda p, x: b"not a model", "failed"), (lambda p, x: onnx.ModelProto(), "failed"),
    (lambda p, x: 1 / 0, "failed"), (lambda p, x: str(p), "failed"), (lambda: 0, "failed"),
])
def test_calibration_hostile(hostile, status):
    r = evaluate(get("06.calibration"), hostile)
    assert r.status == status and r.points == 0, r


# ---------------------------------------------------------------- quiz and the grader round trip

QUIZ = {"q1": "a", "q2": "b", "q3": "c", "q4": "a", "q5": "b", "q6": "c"}


def test_quiz():
    ex = get("06.quiz")
    assert evaluate(ex, QUIZ).status == "passed"
    r = evaluate(ex, {**QUIZ, "q5": "a"})
    assert r.status == "failed" and r.points < r.max_points and "q5" in r.message
    for hostile in (None, "a", ["a"], {"q1": 1}):
        assert evaluate(ex, hostile).points == 0


def test_answers_survive_the_grader_round_trip(tmp_path):
    for id, answer in (("06.quantize", quantize), ("06.dequantize", dequantize),
                       ("06.choose_qparams", choose_qparams), ("06.calibration", _calib()), ("06.quiz", QUIZ)):
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
