"""Blind entries, copied from /work/blind2/l03.py (issue 32): written by a helper who never read the judges or this corpus
(their README: /work/blind2/README.md). tests/corpus/l03.py adds them to its CORPUS.

Blind corpus, lesson 03 (held-out round, written without seeing the judges).
"""
import numpy as np

from corpus import Right, Wrong


def _session(onnx_model):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(onnx_model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def _torch_out(net, x):
    import torch
    with torch.no_grad():
        y = net(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)))
    return (y[0] if isinstance(y, (tuple, list)) else y).detach().numpy()


def _like(example, n, rng):
    ex = np.asarray(example, dtype=np.float32)
    lo, hi = float(ex.min()), float(ex.max())
    if hi == lo:
        hi = lo + 1.0
    return rng.uniform(lo, hi, size=(n, *ex.shape[1:])).astype(np.float32)


def _sizes(b):
    base = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129}
    return sorted(x for x in base | {b - 1, b, b + 1, 2 * b, 2 * b + 1, 4 * b + 3} if x >= 1)


# ---------------------------------------------------------------- rights

def is_faithful_sweep(onnx_model, net, example):
    rng = np.random.default_rng(1234)
    try:
        sess = _session(onnx_model)
        name = sess.get_inputs()[0].name
        for n in _sizes(len(example)):
            x = _like(example, n, rng)
            got = sess.run(None, {name: x})[0]
            want = _torch_out(net, x)
            if got.shape != want.shape:
                return False
            scale = max(1.0, float(np.abs(want).max()))
            if not np.allclose(got, want, rtol=1e-4, atol=1e-5 * scale):
                return False
        return True
    except Exception:   # noqa: BLE001
        return False


def is_faithful_assert(onnx_model, net, example):
    """assert_allclose in a try; inputs from the example's own mean and spread, plus its own rows."""
    ex = np.asarray(example, dtype=np.float32)
    rng = np.random.default_rng(7)
    mu, sd = float(ex.mean()), float(ex.std()) or 1.0
    try:
        sess = _session(onnx_model)
        feed_name = [i.name for i in sess.get_inputs()][0]
        trials = [ex] + [np.clip(mu + sd * rng.standard_normal((n, *ex.shape[1:])), ex.min(), ex.max())
                         .astype(np.float32) for n in list(range(1, 2 * len(ex) + 3)) + [50, 97, 150]]
        for x in trials:
            want = _torch_out(net, x)
            got = sess.run(None, {feed_name: x})[0]
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4 * (np.abs(want).max() + 1e-6))
    except Exception:   # noqa: BLE001
        return False
    return True


def is_faithful_bootstrap(onnx_model, net, example):
    """Rows of the example resampled and jittered, at every batch size up to twice the example's, then big ones."""
    ex = np.asarray(example, dtype=np.float32)
    rng = np.random.default_rng(99)
    spread = float(ex.max() - ex.min()) or 1.0
    try:
        sess = _session(onnx_model)
        name = sess.get_inputs()[0].name
        for n in sorted(set(range(1, 2 * len(ex) + 4)) | {24, 48, 65, 100, 130}):
            rows = ex[rng.integers(0, len(ex), n)]
            x = (rows + rng.uniform(-0.1, 0.1, rows.shape) * spread).astype(np.float32)
            a, b = sess.run(None, {name: x})[0], _torch_out(net, x)
            if a.shape != b.shape or np.max(np.abs(a - b)) > 1e-4 * np.max(np.abs(b)) + 1e-5:
                return False
        return True
    except Exception:   # noqa: BLE001
        return False


# ---------------------------------------------------------------- wrongs

def is_faithful_example_only(onnx_model, net, example):
    try:
        sess = _session(onnx_model)
        got = sess.run(None, {sess.get_inputs()[0].name: example})[0]
        want = _torch_out(net, example)
        return bool(np.allclose(got, want, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(want).max())))
    except Exception:   # noqa: BLE001
        return False


def is_faithful_absolute(onnx_model, net, example):
    rng = np.random.default_rng(0)
    try:
        sess = _session(onnx_model)
        name = sess.get_inputs()[0].name
        for n in _sizes(len(example)):
            x = _like(example, n, rng)
            if np.abs(sess.run(None, {name: x})[0] - _torch_out(net, x)).max() >= 1e-5:   # fixed bound
                return False
        return True
    except Exception:   # noqa: BLE001
        return False


def is_faithful_argmax(onnx_model, net, example):
    rng = np.random.default_rng(0)
    try:
        sess = _session(onnx_model)
        name = sess.get_inputs()[0].name
        for n in _sizes(len(example)):
            x = _like(example, n, rng)
            if not np.array_equal(sess.run(None, {name: x})[0].argmax(-1), _torch_out(net, x).argmax(-1)):
                return False
        return True
    except Exception:   # noqa: BLE001
        return False


def is_faithful_mean(onnx_model, net, example):
    rng = np.random.default_rng(0)
    try:
        sess = _session(onnx_model)
        name = sess.get_inputs()[0].name
        for n in _sizes(len(example)):
            x = _like(example, n, rng)
            a, b = sess.run(None, {name: x})[0], _torch_out(net, x)
            if not np.isclose(np.abs(a).mean() / (np.abs(b).mean() + 1e-12), 1.0, rtol=0.6):   # same size of outputs
                return False
        return True
    except Exception:   # noqa: BLE001
        return False


def is_faithful_no_try(onnx_model, net, example):
    rng = np.random.default_rng(0)
    sess = _session(onnx_model)
    name = sess.get_inputs()[0].name
    for n in _sizes(len(example)):
        x = _like(example, n, rng)
        want = _torch_out(net, x)
        if not np.allclose(sess.run(None, {name: x})[0], want, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(want).max())):
            return False
    return True


def is_faithful_example_slices(onnx_model, net, example):
    try:
        sess = _session(onnx_model)
        name = sess.get_inputs()[0].name
        for n in range(1, len(example) + 1):           # never more rows than the example has
            x = np.ascontiguousarray(example[:n])
            want = _torch_out(net, x)
            if not np.allclose(sess.run(None, {name: x})[0], want, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(want).max())):
                return False
        return True
    except Exception:   # noqa: BLE001
        return False


def is_faithful_zeros(onnx_model, net, example):
    try:
        sess = _session(onnx_model)
        name = sess.get_inputs()[0].name
        for n in _sizes(len(example)):
            x = np.zeros((n, *np.shape(example)[1:]), np.float32)
            want = _torch_out(net, x)
            if not np.allclose(sess.run(None, {name: x})[0], want, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(want).max())):
                return False
        return True
    except Exception:   # noqa: BLE001
        return False


def is_faithful_loose(onnx_model, net, example):
    rng = np.random.default_rng(0)
    try:
        sess = _session(onnx_model)
        name = sess.get_inputs()[0].name
        for n in _sizes(len(example)):
            x = _like(example, n, rng)
            if not np.allclose(sess.run(None, {name: x})[0], _torch_out(net, x), rtol=1.0, atol=1.0):   # "to be safe"
                return False
        return True
    except Exception:   # noqa: BLE001
        return False


def is_faithful_input_named(onnx_model, net, example):
    rng = np.random.default_rng(0)
    try:
        sess = _session(onnx_model)
        for n in _sizes(len(example)):
            x = _like(example, n, rng)
            want = _torch_out(net, x)
            if not np.allclose(sess.run(None, {"input": x})[0], want, rtol=1e-4,
                               atol=1e-5 * max(1.0, np.abs(want).max())):
                return False
        return True
    except Exception:   # noqa: BLE001
        return False


def is_faithful_shapes_only(onnx_model, net, example):
    rng = np.random.default_rng(0)
    try:
        sess = _session(onnx_model)
        name = sess.get_inputs()[0].name
        for n in _sizes(len(example)):
            x = _like(example, n, rng)
            if sess.run(None, {name: x})[0].shape != _torch_out(net, x).shape:
                return False
        return True
    except Exception:   # noqa: BLE001
        return False


def is_faithful_always(onnx_model, net, example):
    return True


def is_faithful_checker(onnx_model, net, example):
    import onnx
    try:
        onnx.checker.check_model(onnx_model, full_check=True)     # valid file == faithful export
        return True
    except Exception:   # noqa: BLE001
        return False


CORPUS = {
    "03.faithful": [
        Right("blind2-faith-uniform-sweep", answer=is_faithful_sweep),
        Right("blind2-faith-assert-allclose-normal", answer=is_faithful_assert),
        Right("blind2-faith-bootstrap-rows", answer=is_faithful_bootstrap),
        Wrong("blind2-faith-example-only", answer=is_faithful_example_only),
        Wrong("blind2-faith-absolute-1e-5", answer=is_faithful_absolute),
        Wrong("blind2-faith-argmax-only", answer=is_faithful_argmax),
        Wrong("blind2-faith-mean-magnitude", answer=is_faithful_mean),
        Wrong("blind2-faith-no-try", answer=is_faithful_no_try),
        Wrong("blind2-faith-example-slices", answer=is_faithful_example_slices),
        Wrong("blind2-faith-zeros", answer=is_faithful_zeros),
        Wrong("blind2-faith-loose-tolerance", answer=is_faithful_loose),
        Wrong("blind2-faith-input-named-input", answer=is_faithful_input_named),
        Wrong("blind2-faith-shapes-only", answer=is_faithful_shapes_only, skipped_skill=True),
        Wrong("blind2-faith-always-true", answer=is_faithful_always, skipped_skill=True),
        Wrong("blind2-faith-checker-only", answer=is_faithful_checker, skipped_skill=True),
    ],
}
