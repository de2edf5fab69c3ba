"""Lesson 07: block counts, the .ort file check, the NNAPI coverage check, the quiz."""
from __future__ import annotations

import numpy as np
import onnx
import pytest

from labkit import android, plain
from labkit.checks import collect, evaluate, get, judge_saved
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
    for answer in (models["ort"], str(models["ort"]), models["ort"].read_bytes(), models["ort_dynamic"]):
        r = evaluate(ex, answer)
        assert r.status == "passed", r


def test_ort_file_onnx_instead_of_ort_fails(models):
    r = evaluate(get("07.ort_file"), models["b1"])
    assert r.status == "failed" and r.points == 0
    assert "ONNX (protobuf) file, not an ORT-format file" in messages(r)


def test_ort_file_other_weights_fail(models):
    import torch

    from labkit.models import DigitsCNN

    torch.manual_seed(99)
    d = models["dir"]
    other = android.export_baked(DigitsCNN().eval(), d / "other.onnx")
    ort_other = android.convert_to_ort(other, d / "other_ort")["ort"]
    r = evaluate(get("07.ort_file"), ort_other)
    assert r.status == "failed" and 0 < r.points < r.max_points
    assert [t.name for t in r.tests if not t.passed] == [r.tests[-1].name] and "matches the course CNN" in r.tests[-1].name
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


# ---------------------------------------------------------------- 07.nnapi_share


def test_reference_nnapi_shares_are_computed_from_the_lessons_int8_model():
    ref = l07.reference_nnapi_shares()
    assert ref["nodes"] > 12  # the int8 graph has QDQ nodes beyond the fp32 graph's
    assert 0 < ref["before"] < ref["after"] == 1.0


def test_nnapi_share():
    ex = get("07.nnapi_share")
    ref = l07.reference_nnapi_shares()
    assert evaluate(ex, {"before": ref["before"], "after": ref["after"]}).status == "passed"
    assert evaluate(ex, {"before": round(ref["before"], 3), "after": 1}).status == "passed"
    fp32_like = evaluate(ex, {"before": 0.0, "after": 1.0})
    assert fp32_like.status == "failed" and "fp32 model's share" in messages(fp32_like)
    assert fp32_like.points == pytest.approx(ex.points / 2)
    percent = evaluate(ex, {"before": 100 * ref["before"], "after": 100.0})
    assert percent.points == 0 and "a percentage or a node count" in messages(percent)
    swapped = evaluate(ex, {"before": 1.0, "after": ref["before"]})
    assert swapped.points == 0 and "expected" in messages(swapped)


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), ({"before": None, "after": None}, "failed"), ({"after": 1.0}, "failed"),
    ([0.2, 1.0], "failed"), ({"before": float("nan"), "after": "1"}, "failed"), ("0.24", "failed"),
    ({"before": True, "after": 1.0}, "failed"), (object(), "error"),
])
def test_nnapi_share_hostile(hostile, status, monkeypatch):
    monkeypatch.setattr(l07, "_share_cache", {"nodes": 33, "before": 8 / 33, "after": 1.0})
    r = evaluate(get("07.nnapi_share"), hostile)
    assert r.status == status and r.points < r.max_points


# ---------------------------------------------------------------- quiz and the grader round trip

QUIZ = {"q1": "a", "q2": "b", "q3": "b", "q4": "b"}


def test_quiz():
    ex = get("07.quiz")
    assert evaluate(ex, QUIZ).status == "passed"
    nnapi_everywhere = evaluate(ex, {**QUIZ, "q2": "a"})
    assert nnapi_everywhere.status == "failed" and "q2" in nnapi_everywhere.message
    assert evaluate(ex, {k: None for k in QUIZ}).status == "not_attempted"
    assert evaluate(ex, {"q1": 3}).points == 0


def test_answers_survive_the_grader_round_trip(models, tmp_path, monkeypatch):
    monkeypatch.setattr(l07, "_share_cache", {"nodes": 33, "before": 8 / 33, "after": 1.0})
    for id, answer in (("07.block_counts", block_counts), ("07.ort_file", models["ort"]),
                       ("07.nnapi_share", {"before": 8 / 33, "after": 1.0}), ("07.quiz", QUIZ)):
        ex = get(id)
        plain.save(collect(ex, answer, 7), tmp_path / id)
        assert judge_saved(ex, tmp_path / id, 7).status == "passed", id
    # and an ONNX file handed in for the .ort exercise still fails after the round trip
    ex = get("07.ort_file")
    plain.save(collect(ex, models["b1"], 7), tmp_path / "onnx")
    assert judge_saved(ex, tmp_path / "onnx", 7).status == "failed"


def test_is_ort_format(models):
    assert android.is_ort_format(models["ort"].read_bytes())
    assert not android.is_ort_format(onnx.load(models["b1"]).SerializeToString())
    assert not android.is_ort_format(b"")
