"""Lesson 06: the quantization functions, the calibration exercise (a real int8 model) and the quiz."""
from pathlib import Path

import numpy as np
import onnx
import pytest

from labkit import plain
from labkit.checks import collect_answer, evaluate, get, judge_saved, judge_spec, ort_session
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
     "expected zero_point as an int"),
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


def test_calibration_never_writes_into_the_grader_inputs(tmp_path):
    """In the grader the inputs folder is read-only, and quantize_static writes `<model>-inferred.onnx`
    beside the model it is given: each call must get its model file in a fresh, writable folder."""
    ex = get("06.calibration")
    plain.save_inputs(judge_spec(ex.id).cases(3), tmp_path / "inputs")
    cases = plain.load_inputs(tmp_path / "inputs")
    given, answer = [], _calib()

    def recording(model_path, images):
        given.append(Path(model_path).resolve())
        return answer(model_path, images)

    plain.save(collect_answer(ex, recording, 3, cases=cases), tmp_path / "answer")
    assert judge_saved(ex, tmp_path / "answer", 3).status == "passed"
    assert len(given) == 2 and len(set(p.parent for p in given)) == 2, given  # a fresh folder per call
    assert not any((tmp_path / "inputs") in p.parents for p in given), given


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


def test_calibration_seven_bit_weights_fail_on_any_cpu():
    """`reduce_range=True` halves the weights' int8 range. Whether that moves the outputs past the tolerance
    depends on the CPU's int8 kernels (on an AVX512-VNNI Xeon it did not), so the weights themselves are
    read: the per-channel test fails, whatever CPU grades it."""
    import tempfile

    from onnxruntime.quantization import QuantFormat, quantize_static
    from onnxruntime.quantization.calibrate import CalibrationDataReader

    class Reader(CalibrationDataReader):
        def __init__(self, name, images):
            self.batches = iter([{name: images}])

        def get_next(self):
            return next(self.batches, None)

    def seven_bit(model_path, images):
        out = Path(tempfile.mkdtemp()) / "q.onnx"
        name = onnx.load(str(model_path)).graph.input[0].name
        quantize_static(str(model_path), str(out), Reader(name, np.asarray(images, np.float32)),
                        quant_format=QuantFormat.QDQ, per_channel=True, reduce_range=True)
        return onnx.load(str(out))
    r = evaluate(get("06.calibration"), seven_bit)
    failed = {t.name: t.message for t in r.tests if not t.passed}
    assert r.status == "failed" and r.points < 4, r
    assert any(n.endswith("per-channel weights") and "largest |q|" in m for n, m in failed.items()), failed


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), (_stub, "not_attempted"), ("missing.onnx", "error"), (42, "error"),
    (lambda p, x: b"not a model", "failed"), (lambda p, x: onnx.ModelProto(), "failed"),
    (lambda p, x: 1 / 0, "failed"), (lambda p, x: str(p), "failed"), (lambda: 0, "failed"),
])
def test_calibration_hostile(hostile, status):
    r = evaluate(get("06.calibration"), hostile)
    assert r.status == status and r.points == 0, r


# ---------------------------------------------------------------- 06.int4_blocks (block-wise int4, as MatMulNBits stores it)


def int4_blocks(w, block_size):
    k, n = w.shape
    n_blocks = -(-k // block_size)
    padded = np.zeros((n_blocks * block_size, n), np.float32)
    padded[:k] = w
    blocks = padded.reshape(n_blocks, block_size, n).transpose(2, 0, 1)
    rmin, rmax = np.minimum(blocks.min(axis=2), 0), np.maximum(blocks.max(axis=2), 0)
    scales = ((rmax - rmin) / 15).astype(np.float32)
    safe = np.where(scales > 0, scales, 1)
    zero_points = np.round(-rmin / safe)
    q = np.clip(np.round(blocks / safe[..., None] + zero_points[..., None]), 0, 15)
    return q.astype(np.uint8), scales, zero_points.astype(np.uint8)


def test_int4_reference_passes_on_many_seeds():
    for seed in (0, 1, 7, 123, 2024, 99999):
        r = evaluate(get("06.int4_blocks"), int4_blocks, seed=seed)
        assert r.status == "passed" and r.points == 3, (seed, r)


def test_int4_numpy_reference_is_onnxruntimes_quantizer():
    """int4_blocks_ref (the convention the prompt states) is what MatMulNBitsQuantizer stores, also on weights the
    cases would redraw (near ties), for several shapes and block sizes; padding codes are not compared."""
    rng = np.random.default_rng(11)
    shapes = [(w.shape, bs) for seed in (0, 3) for w, bs in l06._int4_cases(seed)
              if bs >= 16] + [((200, 16), 32), ((130, 5), 128)]  # ORT's quantizer takes 16, 32, ..., 256
    for (k, n), bs in shapes:
        w = (rng.normal(0, 0.05, (k, n)) * rng.uniform(0.3, 3, n)).astype(np.float32)
        w[:, 0] = np.abs(w[:, 0])
        w[:, 1] = 0
        q, s, z, model = l06.ort_int4_blocks(w, bs)
        rq, rs, rz = l06.int4_blocks_ref(w, bs)
        _, used = l06._blocks(w, bs)
        np.testing.assert_array_equal(s, rs)
        np.testing.assert_array_equal(z, rz)
        np.testing.assert_array_equal(q[:, used], rq[:, used])
        attrs = {a.name: a.i for a in model.graph.node[0].attribute}
        assert attrs == {"K": k, "N": n, "bits": 4, "block_size": bs}
        assert z[1].tolist() == [0] * z.shape[1] and s[1].tolist() == [0] * s.shape[1]   # a column of zeros


def test_int4_onnxruntime_rounds_halves_away_from_zero():
    """What the prompt says about ties: ORT's roundf, not np.round (halves to even)."""
    w = np.zeros((16, 3), np.float32)
    w[:3, 0] = [0, 2.5, 15]        # scale 1, zero point 0: 2.5 -> 3 (np.round: 2)
    w[:3, 1] = [0, -2.5, -15]      # scale 1, zero point 15: 12.5 -> 13
    w[:3, 2] = [-7.5, 0, 7.5]      # scale 1, zero point 7.5 -> 8; -7.5 -> 0.5 -> 1
    q, s, z, _ = l06.ort_int4_blocks(w, 16)
    assert s.ravel().tolist() == [1, 1, 1] and z.ravel().tolist() == [0, 15, 8]
    assert q[:, 0, :3].tolist() == [[0, 3, 15], [15, 13, 0], [1, 8, 15]]
    rq, _, rz = l06.int4_blocks_ref(w, 16)
    assert np.array_equal(rq[:, 0, :3], q[:, 0, :3]) and np.array_equal(rz, z)


def test_int4_cases_have_no_ties_and_vary():
    """The cases keep np.round, w / scale and float64 on ORT's codes; they change with the seed."""
    a, b = l06._int4_cases(0), l06._int4_cases(1)
    assert not np.array_equal(a[0][0][:3, :3], b[0][0][:3, :3])
    for seed in (0, 5, 20250):
        for w, bs in l06._int4_cases(seed):
            assert not l06._near_tie(w, bs)
            assert w.shape[0] != w.shape[1] and bs in (8, 12, 16, 24, 32, 64)
    shapes = [(w.shape[0] % bs == 0) for w, bs in l06._int4_cases(0)]
    assert shapes == [True, False, False, False, False]


def test_int4_padding_codes_are_never_read():
    """MatMulNBits reads K rows only: any codes in the padding of the last block give the same outputs and pass."""
    def noisy_padding(w, block_size):
        q, s, z = int4_blocks(w, block_size)
        used = (np.arange(q.shape[1] * block_size) < w.shape[0]).reshape(q.shape[1], block_size)
        q[:, ~used] = 15
        return q, s, z
    assert evaluate(get("06.int4_blocks"), noisy_padding).status == "passed"


def test_int4_all_zero_block_may_use_any_finite_scale():
    def scale_one(w, block_size):
        q, s, z = int4_blocks(w, block_size)
        return q, np.where(s > 0, s, np.float32(1)), z
    assert evaluate(get("06.int4_blocks"), scale_one).status == "passed"


from corpus.l06 import _int4  # noqa: E402


@pytest.mark.parametrize("wrong, message", [
    (_int4(symmetric=True), "that is symmetric quantization"),
    (_int4(no_zp=True), "without the zero point"),
    (_int4(trunc=True), "were truncated"),
    (_int4(no_zero=True), "the range of a block must include 0"),
    (_int4(floor_blocks=True), "n_blocks = ceil(K / block_size)"),
    (_int4(signed=True), "not -8..7"),
    (_int4(scrambled=True), "expected each block cut from one column"),
    (_int4(per_column=True), "each block of block_size rows has its own range"),
    (_int4(levels=16), "that is 15 steps"),
    (_int4(scales_t=True), "(N, n_blocks), not (n_blocks, N)"),
    (_int4(float_codes=True), "the prompt asks uint8"),
    (lambda w, b: int4_blocks(w, b)[:2], "expected a tuple of three arrays"),
    (lambda w, b: tuple(a.transpose(1, 2, 0) if a.ndim == 3 else a for a in int4_blocks(w, b)),
     "the columns are not first"),
])
def test_int4_wrong_answers(wrong, message):
    r = evaluate(get("06.int4_blocks"), wrong)
    assert r.status == "failed" and r.points < r.max_points
    assert any(message in t.message for t in r.tests if not t.passed), [t.message for t in r.tests]


def test_int4_nan_scales_are_named():
    def no_guard(w, block_size):      # divides by the zero scale of a block of zeros
        q, s, z = int4_blocks(w, block_size)
        return q, np.where(s > 0, s, np.float32(np.nan)), z
    r = evaluate(get("06.int4_blocks"), no_guard)
    failed = {t.name: t.message for t in r.tests if not t.passed}
    assert r.points <= 1.5 and "must dequantize to 0" in failed["all-positive, all-negative and all-zero columns"]
    assert "scales must be finite" in failed[l06.INT4_RUN], failed


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), (_stub, "not_attempted"), ("np.round", "error"), (3, "error"),
    (lambda *a: 1 / 0, "failed"), (lambda w, b: (np.full((2, 2), np.nan),) * 3, "failed"),
    (lambda w, b: tuple(np.full(a.shape, np.nan) for a in int4_blocks(w, b)), "failed"),
    (lambda w, b: (None, None, None), "failed"), (lambda: 0, "failed"), (lambda *a: object(), "failed"),
    (lambda *a: "text", "failed"), (lambda w, b: {"q": 1}, "failed"),
])
def test_int4_hostile_answers_give_a_panel(hostile, status):
    r = evaluate(get("06.int4_blocks"), hostile)
    assert r.status == status and r.points == 0, r


def test_int4_right_shapes_alone_earn_only_the_structure_test():
    r = evaluate(get("06.int4_blocks"), lambda w, b: tuple(np.full(a.shape, 99, a.dtype) for a in int4_blocks(w, b)))
    assert r.status == "failed" and r.points == round(3 / 7, 2), r   # 1 of 7 tests
    assert "integers 0..15 (found values from 99 to 99)" in r.tests[-1].message


def test_matmul_nbits_model_says_what_does_not_fit():
    from labkit.material.l06 import matmul_nbits_model

    w = np.random.default_rng(0).normal(size=(40, 6)).astype(np.float32)
    q, s, z = int4_blocks(w, 16)
    y = ort_session(matmul_nbits_model(q, s, z, 40)).run(None, {"x": np.eye(40, dtype=np.float32)})[0]
    deq = ((q.astype(np.float32) - z[..., None]) * s[..., None]).transpose(1, 2, 0).reshape(-1, 6)[:40]
    np.testing.assert_allclose(y, deq, rtol=1e-6, atol=1e-7)
    for args, message in (((q.astype(np.int32) - 8, s, z, 40), "integers 0..15"), ((q, s.T, z, 40), "(N, n_blocks)"),
                          ((q[:, :2], s[:, :2], z[:, :2], 40), "ceil(K / block_size) = 3"),
                          ((q, np.full_like(s, np.nan), z, 40), "finite"), ((q[:, :, :12], s, z, 40), "power of 2")):
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            matmul_nbits_model(*args)


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
                       ("06.choose_qparams", choose_qparams), ("06.calibration", _calib()),
                       ("06.int4_blocks", int4_blocks), ("06.quiz", QUIZ)):
        ex = get(id)
        plain.save(collect_answer(ex, answer, 11), tmp_path / id)
        assert judge_saved(ex, tmp_path / id, 11).status == "passed", id
    plain.save(collect_answer(get("06.quantize"), l06.wrong_quantize, 11), tmp_path / "wrong")
    assert judge_saved(get("06.quantize"), tmp_path / "wrong", 11).status == "failed"


def test_int4_inputs_survive_the_grader_files(tmp_path):
    """What a graded kernel gets: the cases as files the grader wrote (float32 weights, an int block size)."""
    ex = get("06.int4_blocks")
    plain.save_inputs(judge_spec(ex.id).cases(13), tmp_path / "inputs")
    cases = plain.load_inputs(tmp_path / "inputs")
    for (w, bs), (w2, bs2) in zip(judge_spec(ex.id).cases(13), cases):
        assert w2.dtype == np.float32 and np.array_equal(w, w2) and bs2 == bs and isinstance(bs2, int)
    plain.save(collect_answer(ex, int4_blocks, 13, cases=cases), tmp_path / "answer")
    assert judge_saved(ex, tmp_path / "answer", 13).status == "passed"


def test_reference_matches_onnx_quantize_linear():
    """ONNX Runtime's QuantizeLinear, which the learners' models run on (onnx.reference's saturates wrongly once
    x / scale passes 2**31: it returns the lowest code for 1e8)."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    for args in l06._quantize_cases(3)[:3] + l06._quantize_cases(3)[4:5]:
        x, s, z, qmin, qmax = args
        dtype = np.uint8 if qmin == 0 else np.int8
        g = helper.make_graph([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                              [helper.make_tensor_value_info("q", helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), None)],
                              [numpy_helper.from_array(np.array(s, np.float32), "s"),
                               numpy_helper.from_array(np.array(z, dtype), "z")])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
        sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        np.testing.assert_array_equal(sess.run(None, {"x": x})[0], l06.quantize_ref(*args))


def test_int4_a_block_size_ort_refuses_tells_the_quantizer_shortcut_apart():
    """The arithmetic works for any block size; ORT's MatMulNBitsQuantizer refuses a block of 12 rows. The case of
    such a size is judged by the numpy arithmetic, and an answer that fails there with ORT's error did not do the
    exercise (at most a quarter of the points)."""
    cases = l06._int4_cases(0)
    w, bs = cases[l06.INT4_ANY_CASE]
    assert bs not in (16, 32, 64, 128, 256)
    with pytest.raises(RuntimeError, match="block sizes"):
        l06.ort_int4_blocks(w, bs)
    ex = get("06.int4_blocks")
    def by_hand(w, block_size, reference=l06.int4_blocks_ref):
        q, scales, zero_points = reference(w, block_size)
        return q.astype(np.uint8), scales.astype(np.float32), zero_points.astype(np.uint8)

    import cloudpickle

    cloudpickle.register_pickle_by_value(l06)  # the answer runs where the judges cannot be imported: send its code
    try:
        r = evaluate(ex, by_hand)
    finally:
        cloudpickle.unregister_pickle_by_value(l06)
    assert r.status == "passed", [t.message for t in r.tests]
