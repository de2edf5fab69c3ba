"""labkit's data, model, bench, doctor and quiet helpers."""
import hashlib
import importlib
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import labkit
from labkit.bench import bench
from labkit.data import Digits, digits, normalize
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
    assert data.split_sha256(fresh) == data.SPLIT_SHA256
    first = digits(raw=True)                       # computes and writes the cache
    assert [p.name for p in tmp_path.iterdir()] == [data._split_file().name]
    for a, b in zip(first, fresh):
        np.testing.assert_array_equal(a, b)
    first.x_train[:] = 0                           # a learner's edit must not reach the next call
    monkeypatch.setattr(data, "_sklearn_split", lambda: pytest.fail("the cache was not used"))
    again = digits(raw=True)
    np.testing.assert_array_equal(again.x_train, fresh.x_train)


@pytest.mark.parametrize("poison", ["garbage", "labels", "pixels", "dtype"])
def test_a_cache_that_does_not_verify_is_rebuilt_never_used(tmp_path, monkeypatch, capsys, poison):
    """A split rewritten in the cache (a well-formed .npz with other labels, say) is never used."""
    from labkit import data

    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path))
    good = data._sklearn_split()
    bad = {k: v.copy() for k, v in good._asdict().items()}
    if poison == "labels":
        bad["y_test"] = (bad["y_test"] + 1) % 10
    elif poison == "pixels":
        bad["x_test"][0, 0, 0, 0] ^= 1
    elif poison == "dtype":
        bad["y_test"] = bad["y_test"].astype(np.int32)
    path = data._split_file()
    if poison == "garbage":
        path.write_bytes(b"not an npz")
    else:
        np.savez(path, **bad)
    rebuilt = []
    monkeypatch.setattr(data, "_sklearn_split", lambda: rebuilt.append(1) or good)
    got = digits(raw=True)
    assert rebuilt == [1], "the poisoned cache was used"
    np.testing.assert_array_equal(got.y_test, good.y_test)
    np.testing.assert_array_equal(got.x_test, good.x_test)
    note = capsys.readouterr().err.strip().splitlines()
    assert len(note) == 1 and "rebuilding" in note[0], note
    assert data.split_sha256(Digits(*(np.load(path)[k] for k in Digits._fields))) == data.SPLIT_SHA256


def test_a_split_scikit_learn_computes_differently_is_refused(tmp_path, monkeypatch):
    from labkit import data

    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path))
    good = data._sklearn_split()
    other = Digits(good.x_train, good.y_train, good.x_test, good.y_test[::-1].copy())
    monkeypatch.setattr(data, "_sklearn_split", lambda: other)
    with pytest.raises(RuntimeError, match="pinned scikit-learn"):
        digits()
    assert not list(tmp_path.iterdir()), "an unverified split was cached"


#: logits of the shipped course model on the first three test digits (any CPU, any thread count)
COURSE_LOGITS = [
    [-7.481396, -2.525432, 8.744771, -2.043808, -9.414864, -9.20208, -7.383891, -0.985443, -1.067256, -3.390855],
    [13.21263, -11.14695, -9.852571, -10.45323, -4.785199, -3.371932, 2.394313, -11.48905, 3.508786, -2.311919],
    [-6.455341, 3.689629, -11.78637, -10.1292, 11.83109, -5.597219, -2.332984, 0.2934893, -4.49944, -2.586685],
]


def test_trained_cnn_is_the_shipped_model_and_never_trains(monkeypatch):
    import torch

    from labkit import models

    monkeypatch.setattr(models, "_state", None)
    monkeypatch.setattr(models, "train", lambda *a, **k: pytest.fail("trained_cnn() trained"))
    monkeypatch.setattr(models, "_train", lambda *a, **k: pytest.fail("trained_cnn() trained"))
    t = time.perf_counter()
    model = models.trained_cnn()
    assert time.perf_counter() - t < 2, "loading the shipped weights must be quick"
    assert not model.training
    with torch.no_grad():
        logits = model(torch.from_numpy(digits().x_test[:3])).numpy()
    np.testing.assert_allclose(logits, COURSE_LOGITS, rtol=1e-5, atol=1e-5)
    a, b = models.trained_cnn(), models.trained_cnn()
    next(a.parameters()).data.zero_()             # one caller's edit must not reach the next
    assert bool(next(b.parameters()).abs().sum() > 0)


def test_trained_cnn_refuses_weights_that_do_not_verify(tmp_path, monkeypatch):
    from labkit import models

    tampered = tmp_path / "digits_cnn.npz"
    blob = bytearray(models.WEIGHTS_FILE.read_bytes())
    blob[-100] ^= 1
    tampered.write_bytes(bytes(blob))
    with pytest.raises(models.CourseModelError, match="not the course model"):
        models.read_weights(tampered)
    with pytest.raises(models.CourseModelError, match="missing"):
        models.read_weights(tmp_path / "absent.npz")
    assert models.read_weights()["0.weight"].shape == (16, 1, 3, 3)


def test_course_model_command_regenerates_weights_and_hash(tmp_path, monkeypatch):
    """`labkit course-model` trains, writes the weights and records their SHA-256 in models.py."""
    import shutil

    from labkit import models

    pkg = tmp_path / "labkit"
    shutil.copytree(Path(models.__file__).parent, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    out = subprocess.run([sys.executable, "-c", "from labkit.cli import main; raise SystemExit(main(['course-model', '--epochs', '1']))"],
                         cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    sha = hashlib.sha256((pkg / "assets" / "digits_cnn.npz").read_bytes()).hexdigest()
    assert sha != models.WEIGHTS_SHA256 and f'WEIGHTS_SHA256 = "{sha}"' in (pkg / "models.py").read_text()
    assert sha[:12] in out.stdout and "make solutions" in out.stdout


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
    with warnings.catch_warnings(record=True) as outside:
        warnings.simplefilter("always")
        with labkit.quiet() as log:
            print("chatter")
            warnings.warn("noise")
    assert "chatter" in log.getvalue() and outside == []
    with pytest.raises(ZeroDivisionError):
        with labkit.quiet():
            1 / 0


TRAIN_MODE = ("Exporting a model while it is in training mode. Please ensure that this is intended, as it may lead "
              "to different behavior during inference. Calling model.eval() before export is recommended.")


def _exporter_chatter():
    print("[torch.onnx] Obtain model graph...")
    warnings.warn("`isinstance(treespec, LeafSpec)` is deprecated", FutureWarning)
    warnings.warn(TRAIN_MODE, UserWarning)
    warnings.warn("The feature will be removed.", DeprecationWarning)


def test_quiet_records_every_warning():
    for _ in range(2):  # the second time too: Python's once-per-location registry must not hide it
        with labkit.quiet() as log:
            _exporter_chatter()
        assert [w.category for w in log.warnings] == [FutureWarning, UserWarning, DeprecationWarning]
    assert log.summary("training mode") == [f"UserWarning: {TRAIN_MODE}"]
    assert [w.category for w in log.about(DeprecationWarning, "treespec")] == [FutureWarning, DeprecationWarning]
    assert "Obtain model graph" in log.getvalue()


def test_quiet_reshows_the_warnings_it_is_told_about():
    with warnings.catch_warnings(record=True) as outside:
        warnings.simplefilter("always")
        with labkit.quiet(show=["TRAINING MODE"]):
            _exporter_chatter()
    assert [(w.category, str(w.message)) for w in outside] == [(UserWarning, TRAIN_MODE)]
    with pytest.warns(DeprecationWarning, match="will be removed"):
        with labkit.quiet(show=DeprecationWarning):
            _exporter_chatter()


def test_quiet_reshown_warning_names_the_package_not_the_clone():
    with warnings.catch_warnings(record=True) as outside:
        warnings.simplefilter("always")
        with labkit.quiet(show=[UserWarning]):
            warnings.warn_explicit("in training mode", UserWarning,
                                   "/home/me/clone/.venv/lib/python3.11/site-packages/torch/onnx/_internal/x.py", 7)
    assert [(w.filename, w.lineno) for w in outside] == [("torch/onnx/_internal/x.py", 7)]


def test_quiet_reshows_before_an_error_and_restores_logging():
    import logging

    with pytest.warns(UserWarning, match="training mode"), pytest.raises(RuntimeError):
        with labkit.quiet(show=["training mode"]):
            warnings.warn(TRAIN_MODE)
            raise RuntimeError("export failed")
    assert logging.Logger.callHandlers is not None and "quiet" not in repr(logging.Logger.callHandlers)


def test_quiet_keeps_log_records_and_tracebacks():
    import logging

    logger = logging.getLogger("labkit.test.exporter")
    with labkit.quiet() as log:
        print("progress")
        logger.warning("Setting ONNX exporter to use operator set version 18")
        try:
            raise RuntimeError("No Adapter From Version $16 for Identity")
        except RuntimeError:
            logger.warning("Failed to convert the model", exc_info=True)
        warnings.warn("noise", FutureWarning)
    assert [r.getMessage() for r in log.records] == ["Setting ONNX exporter to use operator set version 18",
                                                     "Failed to convert the model"]
    text = log.transcript()
    assert text.startswith("progress\nWARNING labkit.test.exporter: Setting ONNX")
    assert "Traceback (most recent call last)" in text and text.endswith("FutureWarning: noise")


def test_files_written_for_calls_are_removed_when_the_process_ends():
    """A check's `File` inputs go in one folder per process (each call's in a folder of its own), removed at
    exit: a learner's kernel that checks many times leaves nothing in /tmp. A forked child gets its own
    folder and leaves its parent's in place."""
    import subprocess
    import sys

    code = (
        "import os\n"
        "from labkit import plain\n"
        "a = plain.materialize(plain.File('m.onnx', b'x'))\n"
        "b = plain.materialize(plain.File('m.onnx', b'y'))\n"
        "assert a != b and open(a, 'rb').read() == b'x' and open(b, 'rb').read() == b'y'\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    c = plain.materialize(plain.File('m.onnx', b'z'))\n"
        "    os._exit(0 if open(c, 'rb').read() == b'z' and not c.startswith(os.path.dirname(os.path.dirname(a)))"
        " else 1)\n"
        "assert os.waitpid(pid, 0)[1] == 0\n"
        "assert open(a, 'rb').read() == b'x', 'the child removed its parent folder'\n"
        "print(os.path.dirname(os.path.dirname(a)))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    folder = proc.stdout.strip()
    assert "labkit-inputs-" in folder and not os.path.exists(folder), f"{folder} was left behind"
