"""Lesson 07: block counts, the .ort file check, fixing the batch for a phone, the quiz."""
from __future__ import annotations

import numpy as np
import onnx
import pytest

from labkit import android, plain
from labkit.checks import collect_answer, evaluate, get, judge_saved
from labkit_judges import l07


def messages(r):
    return " ".join(t.message for t in r.tests) + " " + r.message


# ---------------------------------------------------------------- 07.block_counts


def block_counts(grid):
    return np.asarray(grid).astype(bool).reshape(8, 4, 8, 4).sum(axis=(1, 3))


def test_block_counts_reference_passes():
    r = evaluate(get("07.block_counts"), block_counts)
    assert r.status == "passed" and r.points == r.max_points


@pytest.mark.parametrize("wrong, text", [
    (lambda g: block_counts(g).T, "transposed"),
    (lambda g: np.asarray(g).astype(bool).reshape(8, 4, 8, 4).mean(axis=(1, 3)), "not a mean"),
    (lambda g: np.asarray(g).astype(bool).reshape(4, 8, 4, 8).sum(axis=(1, 3)), "expected"),
    (lambda g: block_counts(g)[:4], "expected shape (8, 8)"),
])
def test_block_counts_wrong_answers_fail(wrong, text):
    r = evaluate(get("07.block_counts"), wrong)
    assert r.status == "failed" and r.points < r.max_points
    assert text in messages(r)


def stub(g):
    raise NotImplementedError


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), (stub, "not_attempted"), (42, "error"),
    (lambda g: 1 / 0, "failed"), (lambda g: np.full((8, 8), np.nan), "failed"), (lambda g: object(), "failed"),
    (lambda g: "eight", "failed"),
])
def test_block_counts_hostile(hostile, status):
    r = evaluate(get("07.block_counts"), hostile)
    assert r.status == status and r.points == 0


# ---------------------------------------------------------------- 07.ort_file


@pytest.fixture(scope="module")
def fast_reference():
    """An untrained, seeded CNN stands in for trained_cnn() so the tests take seconds, not a training run."""
    import torch

    from labkit.models import DigitsCNN

    torch.manual_seed(3)
    cnn = DigitsCNN().eval()
    mp = pytest.MonkeyPatch()
    mp.setattr(l07, "reference_cnn", lambda: cnn)
    yield cnn
    mp.undo()


@pytest.fixture(scope="module")
def models(fast_reference, tmp_path_factory):
    d = tmp_path_factory.mktemp("l07")
    fp32 = android.export_baked(fast_reference, d / "digits_fp32.onnx")
    b1 = android.fix_batch_python(fp32, d / "digits_fp32_b1.onnx")
    return {"fp32": fp32, "b1": b1, "ort": android.convert_to_ort(b1, d / "ort")["ort"],
            "ort_dynamic": android.convert_to_ort(fp32, d / "ort_dyn", style="Fixed")["ort"], "dir": d}


def test_ort_file_reference_passes(models):
    ex = get("07.ort_file")
    for answer in (models["ort"], str(models["ort"]), models["ort"].read_bytes()):
        r = evaluate(ex, answer)
        assert r.status == "passed", r
    dynamic = evaluate(ex, models["ort_dynamic"])  # right outputs, but NNAPI/CoreML need the batch fixed
    assert dynamic.status == "failed" and "expected [1, 1, 8, 8]" in messages(dynamic)


def test_ort_file_saved_at_all_for_this_cpu_is_not_portable(models, tmp_path):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.optimized_model_filepath = str(tmp_path / "all.ort")
    so.add_session_config_entry("session.save_model_format", "ORT")
    ort.InferenceSession(str(models["b1"]), so, providers=["CPUExecutionProvider"])
    ops = android.ort_operators(tmp_path / "all.ort")
    if not any(op.startswith("com.microsoft.nchwc:") for op in ops):
        pytest.skip("ONNX Runtime adds no NCHWc operators on this CPU")
    r = evaluate(get("07.ort_file"), tmp_path / "all.ort")
    assert r.status == "failed" and "x86-only operators" in messages(r)


def test_ort_file_onnx_instead_of_ort_fails(models):
    r = evaluate(get("07.ort_file"), models["b1"])
    assert r.status == "failed" and r.points == 0
    assert "ONNX (protobuf) file, not an ORT-format file" in messages(r)


def test_ort_file_other_weights_fail(models):
    import torch

    from labkit.models import DigitsCNN

    torch.manual_seed(99)
    d = models["dir"]
    other = android.fix_batch_python(android.export_baked(DigitsCNN().eval(), d / "other.onnx"), d / "other_b1.onnx")
    ort_other = android.convert_to_ort(other, d / "other_ort")["ort"]
    r = evaluate(get("07.ort_file"), ort_other)
    assert r.status == "failed" and 0 < r.points < r.max_points
    assert [t.name for t in r.tests if not t.passed] == [l07.ORT_STEPS[3]]
    assert "same prediction for" in messages(r)


def test_ort_file_without_baked_preprocessing_fails(models, fast_reference):
    import torch

    d = models["dir"]
    with torch.no_grad():
        plain_path = d / "plain.onnx"
        from labkit import quiet

        with quiet():
            torch.onnx.export(fast_reference, (torch.zeros(1, 1, 8, 8),), dynamo=True).save(str(plain_path))
    ort_plain = android.convert_to_ort(plain_path, d / "plain_ort")["ort"]
    r = evaluate(get("07.ort_file"), ort_plain)
    assert r.status == "failed" and "expected a uint8 input" in messages(r)


@pytest.mark.parametrize("hostile, status, text", [
    (None, "not_attempted", ""),
    ("artifacts/nothing.ort", "error", "no ONNX file"),
    (b"ORT? no", "failed", "neither an ORT-format file"),
    (b"\x14\x00\x00\x00ORTMgarbage-garbage", "failed", "cannot load it"),
    (42, "error", ""),
    (["a.ort"], "error", ""),
])
def test_ort_file_hostile(hostile, status, text):
    r = evaluate(get("07.ort_file"), hostile)
    assert r.status == status and r.points == 0
    assert text in messages(r)


# ---------------------------------------------------------------- 07.fix_batch

from corpus.l07 import _fix, _fix_reference_like  # noqa: E402


def test_mobile_models_have_the_three_kinds_of_batch():
    dims = [l07.mobile_model(0, k).graph.input[0].type.tensor_type.shape.dim[0] for k in range(3)]
    assert dims[0].dim_param == "batch" and dims[1].dim_param not in ("", "batch") and not dims[2].dim_param
    assert not dims[2].HasField("dim_value")


def test_fix_batch_reference_passes_on_many_seeds():
    for seed in (0, 1, 5):
        r = evaluate(get("07.fix_batch"), _fix_reference_like, seed=seed)
        assert r.status == "passed" and r.points == 3, r


@pytest.mark.parametrize("wrong, text", [
    (_fix(), "still dynamic"),
    (_fix(param=None, value=64), "expected the input shape [1, 1, 8, 8]"),
    (_fix(param=None, outputs=False), "fixed shapes everywhere, outputs too"),
    (lambda m: m, "still dynamic"),
])
def test_fix_batch_wrong_answers_are_named(wrong, text):
    r = evaluate(get("07.fix_batch"), wrong)
    assert r.status == "failed" and r.points <= r.max_points / 2 and text in messages(r), r


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), (_stub := (lambda m: (_ for _ in ()).throw(NotImplementedError())), "not_attempted"),
    ("fixed.onnx", "error"), (lambda m: None, "failed"), (lambda m: 1 / 0, "failed"),
    (lambda m: b"junk", "failed"), (lambda: 0, "failed"),
])
def test_fix_batch_hostile(hostile, status):
    r = evaluate(get("07.fix_batch"), hostile)
    assert r.status == status and r.points == 0, r


# ---------------------------------------------------------------- quiz and the grader round trip

QUIZ = {"q1": "a", "q2": "c", "q3": "b", "q4": "a", "q5": "b"}


def test_quiz():
    ex = get("07.quiz")
    assert evaluate(ex, QUIZ).status == "passed"
    nnapi_everywhere = evaluate(ex, {**QUIZ, "q2": "a"})
    assert nnapi_everywhere.status == "failed" and "q2" in nnapi_everywhere.message
    assert evaluate(ex, {k: None for k in QUIZ}).status == "not_attempted"
    assert evaluate(ex, {"q1": 3}).points == 0


def test_answers_survive_the_grader_round_trip(models, tmp_path):
    for id, answer in (("07.block_counts", block_counts), ("07.ort_file", models["ort"]),
                       ("07.fix_batch", _fix_reference_like), ("07.quiz", QUIZ)):
        ex = get(id)
        plain.save(collect_answer(ex, answer, 7), tmp_path / id)
        assert judge_saved(ex, tmp_path / id, 7).status == "passed", id
    # and an ONNX file handed in for the .ort exercise still fails after the round trip
    ex = get("07.ort_file")
    plain.save(collect_answer(ex, models["b1"], 7), tmp_path / "onnx")
    assert judge_saved(ex, tmp_path / "onnx", 7).status == "failed"


def test_is_ort_format(models):
    assert android.is_ort_format(models["ort"].read_bytes())
    assert not android.is_ort_format(onnx.load(models["b1"]).SerializeToString())
    assert not android.is_ort_format(b"")
