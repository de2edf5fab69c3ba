"""labkit's data, model, bench, doctor and quiet helpers."""
import importlib
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import labkit
from labkit.bench import bench
from labkit.data import digits, normalize
from labkit.doctor import cpu_features, doctor, pinned_versions


def test_digits_split_is_fixed_and_stratified():
    a, b = digits(), digits()
    assert a.x_train.shape == (1347, 1, 8, 8) and a.x_test.shape == (450, 1, 8, 8)
    np.testing.assert_array_equal(a.y_test, b.y_test)
    assert a.x_train.dtype == np.float32 and 0 <= a.x_train.min() and a.x_train.max() <= 1
    raw = digits(raw=True)
    assert raw.x_train.dtype == np.uint8 and raw.x_train.max() == 16
    np.testing.assert_array_equal(normalize(raw.x_test), a.x_test)
    assert np.bincount(a.y_test).min() >= 43 and np.bincount(a.y_test).max() <= 46  # stratified: ~45 each


def test_digits_split_is_cached_and_equal_to_scikit_learns(tmp_path, monkeypatch):
    from labkit import data

    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path))
    fresh = data._sklearn_split()
    first = digits(raw=True)                       # computes and writes the cache
    assert [p.name for p in tmp_path.iterdir()] == [data._split_file().name]
    for a, b in zip(first, fresh):
        np.testing.assert_array_equal(a, b)
    first.x_train[:] = 0                           # a learner's edit must not reach the next call
    monkeypatch.setattr(data, "_sklearn_split", lambda: pytest.fail("the cache was not used"))
    again = digits(raw=True)
    np.testing.assert_array_equal(again.x_train, fresh.x_train)
    data._split_file().write_bytes(b"not an npz")  # a corrupt cache is recomputed, not trusted
    monkeypatch.setattr(data, "_sklearn_split", lambda: fresh)
    np.testing.assert_array_equal(digits().x_test, normalize(fresh.x_test))
    assert np.load(data._split_file())["x_test"].shape == (450, 1, 8, 8)


def test_trained_cnn_weights_are_cached(tmp_path, monkeypatch):
    from labkit import models

    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path))
    monkeypatch.setattr(models, "_cache", {})
    a = models.trained_cnn(epochs=1, progress=False)
    assert any(p.suffix == ".pt" for p in tmp_path.iterdir())
    monkeypatch.setattr(models, "_cache", {})
    monkeypatch.setattr(models, "train", lambda **k: pytest.fail("the cached weights were not used"))
    b = models.trained_cnn(epochs=1, progress=False)
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ka == kb and bool((va == vb).all())
    assert not b.training


def test_cnn_trains_to_98_percent_in_seconds():
    from labkit.models import accuracy, train

    t = time.perf_counter()
    d = digits()
    model = train(data=d, progress=False)
    seconds = time.perf_counter() - t
    assert accuracy(model, d.x_test, d.y_test) >= 0.98
    assert not model.training
    assert seconds < 60


def test_bench_measures_median_and_spread():
    t = bench(time.sleep, 0.002, label="sleep", warmup=1, repeat=5)
    assert t.runs >= 5 and 2 <= t.median_ms < 50 and t.p10_ms <= t.median_ms <= t.p90_ms
    assert t.spread_ms >= 0 and "sleep" in repr(t)
    calls = []
    bench(lambda: calls.append(1), warmup=3, repeat=4)
    assert len(calls) == 7


def test_doctor_reports_this_machine():
    rep = doctor()
    assert rep.ok, str(rep)
    assert rep.value("torch").startswith("2.13.0")
    assert "CPUExecutionProvider" in rep.value("ORT providers")
    assert pinned_versions()["onnxruntime"] == labkit.doctor().value("onnxruntime")
    assert "<table" in rep._repr_html_()


def test_doctor_flags_wrong_versions(monkeypatch):
    d = importlib.import_module("labkit.doctor")

    real = d._version
    monkeypatch.setattr(d, "_version", lambda name: "0.1" if name == "onnx" else real(name))
    rep = d.doctor()
    assert not rep.ok
    row = next(r for r in rep.problems() if r.item == "onnx")
    assert "course tested" in row.value and "make lab" in row.fix


def test_cpu_features_parsing():
    arm = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes sve sve2 sme\n"
    assert cpu_features("aarch64", arm) == ["NEON (asimd)", "SVE (sve)", "SVE2 (sve2)", "SME (sme)"]
    x86 = "flags\t\t: fpu sse4_2 avx avx2 fma avx512f\n"
    assert cpu_features("x86_64", x86) == ["sse4_2", "avx", "avx2", "fma", "avx512f"]


def test_doctor_cli():
    out = subprocess.run([sys.executable, "-m", "labkit.cli", "doctor"], capture_output=True, text=True)
    assert out.returncode == 0 and "ORT providers" in out.stdout and "ready" in out.stdout


def test_quiet_swallows_prints_and_warnings():
    with labkit.quiet() as log:
        print("chatter")
        warnings.warn("noise")
    assert "chatter" in log.getvalue()
    with pytest.raises(ZeroDivisionError):
        with labkit.quiet():
            1 / 0
