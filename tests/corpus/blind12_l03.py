"""Blind corpus round 12, lesson 03 (written without seeing the judges).
Truths relied on: labkit.material.l03.make_net (mlp / branchy / prescaled test nets) exported by me with dynamo
(dynamic and fixed batch), the legacy exporter, other weights (random and +1 %), large outputs (weights x300),
prescaled nets exported without the /16; my four Right is_faithful agree with the truth on all 15 such cases.
File answers: each file run in ORT (optimizations off) on all 450 held-out digits, on training digits and on
random in-range pixels at batches 1, 7, 64, against trained_cnn() (on normalize()d pixels for 03.raw_input);
the course weights from labkit.models.read_weights for the hand-built graphs.
Ambiguities / holes: (1) 03.faithful says "at any batch size" but not how large a batch a branch may need:
a branch at batch > threshold is missed by any probe that stays at or below the example's batch
(wrong_faithful_two_sizes); the harness's closure (make_net's `kind`) is readable from net.forward
(shortcut_faithful_closure passes every case I built). (2) 03.faithful: onnx.reference does not enforce
declared input shapes, so a fixed-batch export "runs" there. (3) 03.faithful: "returns True/False" - a numpy.bool_
is == True; a judge comparing with == cannot tell. (4) 03.dynamic_batch / 03.raw_input are judged on the file only:
a hand-written onnx.helper graph of the course CNN, a fixed-batch export whose input dims were edited to a symbol
(works: the legacy export uses Flatten) and a nearest-neighbour lookup table of the 1,797 digits' logits (correct
on every dataset digit, wrong on other pixels) are indistinguishable from an export unless the judge feeds
non-dataset pixels or inspects the graph. (5) 03.raw_input: prepending Cast+Div to the float export with
onnx.compose bakes the preprocessing in without the nn.Module the prompt asks for; I count it Right (outcome), a
process judge may not. A per-image max scaling differs from /16 on only 6 of 450 held-out digits (max < 16).
(6) "Keep the weights inside the one file": an export with a .data companion runs when both files are copied.
"""
from corpus import Right, Wrong

# ============================================================== 03.faithful
def right_faithful_resample(onnx_model, net, example):
    import numpy as np
    import onnxruntime as ort
    import torch

    try:
        sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        ex = np.array(example, dtype=np.float32, copy=True)
        n = ex.shape[0]
        lo, hi = float(ex.min()), float(ex.max())
        rng = np.random.default_rng(12)
        for b in sorted({1, 2, 3, max(n - 1, 1), n, n + 1, 2 * n + 1, 17, 64, 257, 1025}):
            rows = ex[rng.integers(0, n, b)]
            noise = rng.uniform(lo, hi, size=rows.shape).astype(np.float32)
            pick = rng.random(b) < 0.5
            x = np.where(pick.reshape((b,) + (1,) * (ex.ndim - 1)), rows, noise).astype(np.float32)
            got = sess.run(None, {name: x})[0]
            with torch.no_grad():
                want = net(torch.from_numpy(x.copy())).numpy()
            if got.shape != want.shape:
                return False
            scale = float(np.abs(want).max()) if want.size else 0.0
            if not np.allclose(got, want, rtol=1e-3, atol=1e-5 + 1e-5 * scale):
                return False
        return True
    except Exception:
        return False


def right_faithful_relnorm(onnx_model, net, example):
    import os
    import tempfile

    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch

    # a file on disk and ORT without graph optimizations; a norm-based relative error per batch
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        onnx.save(onnx_model, path)
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        except Exception:
            return False
    feed = sess.get_inputs()[0].name
    base = np.asarray(example, dtype=np.float32)
    gen = torch.Generator().manual_seed(3)
    for batch in (1, base.shape[0], base.shape[0] + 1, 5, 33, 200, 700):
        reps = -(-batch // base.shape[0])
        tiled = np.concatenate([base] * reps)[:batch]
        jitter = torch.rand(tiled.shape, generator=gen).numpy() * (base.max() - base.min()) + base.min()
        x = np.concatenate([tiled[: batch // 2], jitter[batch // 2:]]).astype(np.float32)
        try:
            got = sess.run(None, {feed: x})[0]
        except Exception:
            return False
        with torch.inference_mode():
            want = net(torch.tensor(x)).numpy()
        if got.shape != want.shape:
            return False
        err = np.linalg.norm((got - want).ravel()) / max(np.linalg.norm(want.ravel()), 1e-12)
        if not err < 1e-4:
            return False
    return True


def right_faithful_one_big_run(onnx_model, net, example):
    import numpy as np
    import onnxruntime as ort
    import torch

    # runs one big random batch through torch, then the same rows through ORT in slices of many sizes
    try:
        sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        ex = np.asarray(example, dtype=np.float32)
        rs = np.random.RandomState(7)
        pool = np.concatenate([ex, rs.uniform(ex.min(), ex.max(), (600,) + ex.shape[1:]).astype(np.float32)])
        for size in (1, len(ex), 2, 9, 100, 600):
            x = pool[:size]
            with torch.no_grad():
                want = net(torch.from_numpy(np.ascontiguousarray(x))).numpy()
            got = sess.run(None, {name: np.ascontiguousarray(x)})[0]
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-6 * max(1.0, float(np.abs(want).max())) + 1e-5)
        return True
    except Exception:  # AssertionError included
        return False


def right_faithful_reference_cross(onnx_model, net, example):
    import numpy as np
    import onnxruntime as ort
    import torch

    # batch sizes on a doubling ladder up to 2048, inputs: the example's rows scaled and mixed
    try:
        sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception:
        return False
    inp = sess.get_inputs()[0].name
    ex = np.asarray(example, dtype=np.float32)
    k = 1
    r = np.random.default_rng(99)
    while k <= 2048:
        for b in {k, k + 1, ex.shape[0]}:
            w = r.dirichlet(np.ones(ex.shape[0]), size=b).astype(np.float32)  # convex mixes of example rows
            x = np.tensordot(w, ex, axes=1).astype(np.float32)
            if b % 2:
                x[0] = ex[b % ex.shape[0]]
            try:
                got = sess.run(None, {inp: x})[0]
            except Exception:
                return False
            want = net(torch.from_numpy(x)).detach().numpy()
            tol = 1e-5 + 1e-3 * np.abs(want) + 1e-6 * np.abs(want).max(initial=0.0)
            if got.shape != want.shape or np.any(np.abs(got - want) > tol):
                return False
        k *= 4
    return True


def wrong_faithful_example_only(onnx_model, net, example):
    import numpy as np
    import onnxruntime as ort
    import torch

    try:
        sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
        got = sess.run(None, {sess.get_inputs()[0].name: example})[0]
        with torch.no_grad():
            want = net(torch.from_numpy(example)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)
        return True
    except Exception:
        return False


def wrong_faithful_abs_tol(onnx_model, net, example):
    import numpy as np
    import onnxruntime as ort
    import torch

    try:
        sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        for b in (1, len(example), 2 * len(example) + 3, 64, 300):
            x = np.resize(np.asarray(example, np.float32), (b,) + example.shape[1:])
            got = sess.run(None, {name: x})[0]
            with torch.no_grad():
                want = net(torch.from_numpy(x)).numpy()
            if np.abs(got - want).max() > 1e-5:  # a fixed absolute bound
                return False
        return True
    except Exception:
        return False


def wrong_faithful_argmax(onnx_model, net, example):
    import numpy as np
    import onnxruntime as ort
    import torch

    try:
        sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        rng = np.random.default_rng(0)
        for b in (1, len(example), 2 * len(example) + 3, 64, 300):
            x = rng.uniform(example.min(), example.max(), (b,) + example.shape[1:]).astype(np.float32)
            got = sess.run(None, {name: x})[0]
            with torch.no_grad():
                want = net(torch.from_numpy(x)).numpy()
            if not np.array_equal(got.argmax(-1), want.argmax(-1)):  # "same predictions"
                return False
        return True
    except Exception:
        return False


def wrong_faithful_no_try(onnx_model, net, example):
    import numpy as np
    import onnxruntime as ort
    import torch

    sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    rng = np.random.default_rng(0)
    for b in (1, len(example), 2 * len(example) + 3, 64, 300):
        x = rng.uniform(example.min(), example.max(), (b,) + example.shape[1:]).astype(np.float32)
        got = sess.run(None, {name: x})[0]  # a fixed batch raises here, out of the function
        with torch.no_grad():
            want = net(torch.from_numpy(x)).numpy()
        if not np.allclose(got, want, rtol=1e-3, atol=1e-5):
            return False
    return True


def wrong_faithful_symbolic_plus_example(onnx_model, net, example):
    import numpy as np
    import onnxruntime as ort
    import torch

    dim0 = onnx_model.graph.input[0].type.tensor_type.shape.dim[0]
    if not dim0.dim_param:  # a fixed batch
        return False
    sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {sess.get_inputs()[0].name: example})[0]
    with torch.no_grad():
        want = net(torch.from_numpy(example)).numpy()
    return bool(np.allclose(got, want, rtol=1e-3, atol=1e-5))


def wrong_faithful_two_sizes(onnx_model, net, example):
    import numpy as np
    import onnxruntime as ort
    import torch

    # tries batch 1 and the example's batch: never a batch larger than the example's
    try:
        sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        for x in (example[:1], example):
            x = np.ascontiguousarray(x, dtype=np.float32)
            with torch.no_grad():
                want = net(torch.from_numpy(x)).numpy()
            np.testing.assert_allclose(sess.run(None, {name: x})[0], want, rtol=1e-3, atol=1e-5)
        return True
    except Exception:
        return False


def wrong_faithful_zeros(onnx_model, net, example):
    import numpy as np
    import onnxruntime as ort
    import torch

    # probes with zeros ("any input will do") at many batch sizes
    try:
        sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        for b in (1, 2, len(example), len(example) + 1, 64, 1000):
            x = np.zeros((b,) + tuple(example.shape[1:]), np.float32)
            with torch.no_grad():
                want = net(torch.from_numpy(x)).numpy()
            if not np.allclose(sess.run(None, {name: x})[0], want, rtol=1e-3, atol=1e-5):
                return False
        return True
    except Exception:
        return False


def wrong_faithful_reference_evaluator(onnx_model, net, example):
    import numpy as np
    import torch
    from onnx.reference import ReferenceEvaluator

    # onnx.reference instead of ONNX Runtime: it does not enforce the declared input shape
    try:
        ref = ReferenceEvaluator(onnx_model)
        name = onnx_model.graph.input[0].name
        rng = np.random.default_rng(0)
        for b in (1, len(example), 2 * len(example) + 3, 64, 1000):
            x = np.concatenate([example, rng.uniform(example.min(), example.max(),
                                                     (b,) + example.shape[1:]).astype(np.float32)])[:b]
            got = ref.run(None, {name: x})[0]
            with torch.no_grad():
                want = net(torch.from_numpy(x)).numpy()
            if not np.allclose(got, want, rtol=1e-3, atol=1e-5 + 1e-5 * np.abs(want).max()):
                return False
        return True
    except Exception:
        return False


def wrong_faithful_loose(onnx_model, net, example):
    import numpy as np
    import onnxruntime as ort
    import torch

    # "float32 is noisy": 5 % relative tolerance
    try:
        sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        rng = np.random.default_rng(5)
        for b in (1, 2, len(example), len(example) + 1, 64, 1000):
            x = rng.uniform(example.min(), example.max(), (b,) + example.shape[1:]).astype(np.float32)
            with torch.no_grad():
                want = net(torch.from_numpy(x)).numpy()
            if not np.allclose(sess.run(None, {name: x})[0], want, rtol=5e-2, atol=5e-2 * np.abs(want).max()):
                return False
        return True
    except Exception:
        return False


def wrong_faithful_shuffles_example(onnx_model, net, example):
    import numpy as np
    import onnxruntime as ort
    import torch

    try:
        sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        rng = np.random.default_rng(1)
        for b in (1, 2, len(example), len(example) + 1, 64, 1000):
            rng.shuffle(example)  # in place: reorders the caller's array
            x = np.concatenate([example, rng.uniform(example.min(), example.max(),
                                                     (b,) + example.shape[1:]).astype(np.float32)])[:b]
            with torch.no_grad():
                want = net(torch.from_numpy(x)).numpy()
            if not np.allclose(sess.run(None, {name: x})[0], want, rtol=1e-3, atol=1e-5 + 1e-5 * np.abs(want).max()):
                return False
        return True
    except Exception:
        return False


def wrong_faithful_net_double(onnx_model, net, example):
    import numpy as np
    import onnxruntime as ort
    import torch

    try:
        sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        net.double()  # "a float64 reference is more exact": converts the caller's module in place
        rng = np.random.default_rng(1)
        for b in (1, 2, len(example), len(example) + 1, 64, 1000):
            x = np.concatenate([example, rng.uniform(example.min(), example.max(),
                                                     (b,) + example.shape[1:]).astype(np.float32)])[:b]
            with torch.no_grad():
                want = net(torch.from_numpy(x.astype(np.float64))).numpy()
            if not np.allclose(sess.run(None, {name: x})[0], want, rtol=1e-3, atol=1e-5 + 1e-5 * np.abs(want).max()):
                return False
        return True
    except Exception:
        return False


def wrong_faithful_numpy_bool(onnx_model, net, example):
    import numpy as np
    import onnxruntime as ort
    import torch

    try:
        sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        rng = np.random.default_rng(1)
        verdict = np.True_
        for b in (1, 2, len(example), len(example) + 1, 64, 1000):
            x = np.concatenate([example, rng.uniform(example.min(), example.max(),
                                                     (b,) + example.shape[1:]).astype(np.float32)])[:b]
            with torch.no_grad():
                want = net(torch.from_numpy(x)).numpy()
            verdict = verdict & np.allclose(sess.run(None, {name: x})[0], want, rtol=1e-3,
                                            atol=1e-5 + 1e-5 * np.abs(want).max())
        return verdict  # numpy.bool_, not bool
    except Exception:
        return np.False_


def shortcut_faithful_true(onnx_model, net, example):
    return True


def shortcut_faithful_structure(onnx_model, net, example):
    dims = onnx_model.graph.input[0].type.tensor_type.shape.dim
    return bool(dims) and bool(dims[0].dim_param)


def shortcut_faithful_self_consistent(onnx_model, net, example):
    import numpy as np
    import onnxruntime as ort

    # only checks that the file answers every row the same whatever the batch: never asks `net`
    try:
        sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        ref = sess.run(None, {name: example})[0]
        for b in (1, 2, 64, 1000):
            x = np.resize(example, (b,) + example.shape[1:]).astype(np.float32)
            got = sess.run(None, {name: x})[0]
            if not np.allclose(got, np.resize(ref, got.shape), rtol=1e-4, atol=1e-6):
                return False
        return True
    except Exception:
        return False


def shortcut_faithful_weights(onnx_model, net, example):
    import numpy as np
    from onnx import numpy_helper

    # compares the stored weights with the module's parameters; runs nothing
    dims = onnx_model.graph.input[0].type.tensor_type.shape.dim
    if not dims[0].dim_param:
        return False
    stored = [numpy_helper.to_array(t) for t in onnx_model.graph.initializer]
    for p in net.parameters():
        a = p.detach().numpy()
        if not any(s.shape == a.shape and np.allclose(s, a) or s.shape == a.T.shape and np.allclose(s, a.T)
                   for s in stored):
            return False
    return True


def shortcut_faithful_closure(onnx_model, net, example):
    import numpy as np
    import onnxruntime as ort
    import torch

    # reads the test harness's hidden settings out of forward's closure
    fwd = type(net).forward
    cells = dict(zip(fwd.__code__.co_freevars, (c.cell_contents for c in (fwd.__closure__ or ()))))
    if cells.get("kind") == "branchy":
        return False
    try:
        sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        for x in (example[:1], example, np.concatenate([example, example])):
            with torch.no_grad():
                want = net(torch.from_numpy(np.ascontiguousarray(x))).numpy()
            got = sess.run(None, {name: np.ascontiguousarray(x)})[0]
            if not np.allclose(got, want, rtol=1e-3, atol=1e-5 + 1e-5 * np.abs(want).max()):
                return False
        return True
    except Exception:
        return False


def shortcut_faithful_hostile(onnx_model, net, example):
    class Agree:
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        def __bool__(self):
            return True

        __hash__ = None

    return Agree()


# ============================================================== file answers: 03.dynamic_batch and 03.raw_input
# Every builder takes a directory and writes its file there; `_made` builds each file once per process (a
# module-level temp dir) and copies it (with a .data companion if any) into the measurer's `tmp`.
_CACHE = {}


def _made(tmp, key, builder):
    import pathlib
    import shutil
    import tempfile

    if key not in _CACHE:
        d = pathlib.Path(tempfile.mkdtemp(prefix=f"blind12-{key}-"))
        _CACHE[key] = pathlib.Path(builder(d))
    src = _CACHE[key]
    dst_dir = pathlib.Path(tmp) / key
    dst_dir.mkdir(parents=True, exist_ok=True)
    for f in src.parent.iterdir():
        shutil.copy(f, dst_dir / f.name)
    return str(dst_dir / src.name)


def _quiet():
    import contextlib
    import io
    import logging
    import warnings

    @contextlib.contextmanager
    def cm():
        logging.disable(logging.CRITICAL)
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            try:
                yield
            finally:
                logging.disable(logging.NOTSET)

    return cm()


# ---------------------------------------------------------------- 03.dynamic_batch builders
def build_dyn_dim_object(d):
    import torch

    from labkit.data import digits
    from labkit.models import trained_cnn

    model = trained_cnn()
    x = torch.from_numpy(digits().x_test[:4])
    with _quiet():
        prog = torch.onnx.export(model, (x,), dynamo=True, dynamic_shapes={"input": {0: torch.export.Dim("n")}})
    path = d / "cnn_dynamic.onnx"
    prog.save(str(path))
    return path


def build_dyn_legacy(d):
    import torch

    from labkit.data import digits
    from labkit.models import trained_cnn

    path = d / "cnn_dynamic.onnx"
    with _quiet():
        torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:5]),), str(path), dynamo=False,
                          input_names=["pixels"], output_names=["logits"],
                          dynamic_axes={"pixels": {0: "N"}, "logits": {0: "N"}})
    return path


def build_dyn_tuple_unoptimized(d):
    import torch
    from torch.export import Dim

    from labkit.data import digits
    from labkit.models import trained_cnn

    with _quiet():
        prog = torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[10:17]),), dynamo=True,
                                 dynamic_shapes=({0: Dim.DYNAMIC},), optimize=False)
    path = d / "cnn_dynamic.onnx"
    prog.save(str(path))
    return path


def build_dyn_axes_inline(d):
    import torch

    from labkit.data import digits
    from labkit.models import trained_cnn

    path = d / "cnn_dynamic.onnx"
    with _quiet():
        torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:3]),), str(path), dynamo=True,
                          input_names=["images"], dynamic_axes={"images": {0: "batch"}}, external_data=False)
    return path


def build_dyn_fixed(d):
    import torch

    from labkit.data import digits
    from labkit.models import trained_cnn

    with _quiet():
        prog = torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:4]),), dynamo=True)
    path = d / "cnn_dynamic.onnx"
    prog.save(str(path))
    return path


def build_dyn_training_mode(d):
    import torch

    from labkit.data import digits
    from labkit.models import DigitsCNN, trained_cnn

    restored = DigitsCNN()
    restored.load_state_dict(trained_cnn().state_dict())  # still in training mode
    with _quiet():
        prog = torch.onnx.export(restored, (torch.from_numpy(digits().x_test[:4]),), dynamo=True,
                                 dynamic_shapes={"input": {0: "batch"}})
    path = d / "cnn_dynamic.onnx"
    prog.save(str(path))
    return path


def build_dyn_external_data(d):
    import torch

    from labkit.data import digits
    from labkit.models import trained_cnn

    path = d / "cnn_dynamic.onnx"
    with _quiet():  # a file name: the default external_data=True writes cnn_dynamic.onnx.data too
        torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:4]),), str(path), dynamo=True,
                          dynamic_shapes={"input": {0: "batch"}})
    return path


def build_dyn_own_model(d):
    import torch

    from labkit.data import digits
    from labkit.models import train

    data = digits()
    with _quiet():
        mine = train(data=data, progress=False)  # the learner's own CNN, not the course's copy
        prog = torch.onnx.export(mine, (torch.from_numpy(data.x_test[:4]),), dynamo=True,
                                 dynamic_shapes={"input": {0: "batch"}})
    path = d / "cnn_dynamic.onnx"
    prog.save(str(path))
    return path


def build_dyn_axes_wrong_key(d):
    import torch

    from labkit.data import digits
    from labkit.models import trained_cnn

    path = d / "cnn_dynamic.onnx"
    with _quiet():  # dynamic_axes names "input" but the input is called "pixels": the batch stays fixed
        torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:4]),), str(path), dynamo=False,
                          input_names=["pixels"], dynamic_axes={"input": {0: "batch"}})
    return path


def build_dyn_half(d):
    import torch

    from labkit.data import digits
    from labkit.models import trained_cnn

    with _quiet():
        prog = torch.onnx.export(trained_cnn().half(), (torch.from_numpy(digits().x_test[:4]).half(),),
                                 dynamo=True, dynamic_shapes={"input": {0: "batch"}})
    path = d / "cnn_dynamic.onnx"
    prog.save(str(path))
    return path


def build_dyn_softmax(d):
    import torch

    from labkit.data import digits
    from labkit.models import trained_cnn

    net = torch.nn.Sequential(trained_cnn(), torch.nn.Softmax(dim=1)).eval()  # probabilities, not logits
    with _quiet():
        prog = torch.onnx.export(net, (torch.from_numpy(digits().x_test[:4]),), dynamo=True,
                                 dynamic_shapes={"input": {0: "batch"}})
    path = d / "cnn_dynamic.onnx"
    prog.save(str(path))
    return path


def build_dyn_train_bn_legacy(d):
    import torch

    from labkit.data import digits
    from labkit.models import trained_cnn

    path = d / "cnn_dynamic.onnx"
    with _quiet():  # "training=TRAINING keeps every layer": BatchNorm on the batch's own statistics
        torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:4]),), str(path), dynamo=False,
                          input_names=["input"], dynamic_axes={"input": {0: "batch"}},
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    return path


def build_dyn_double_normalized(d):
    import torch

    from labkit.data import PIXEL_MAX, digits
    from labkit.models import trained_cnn

    class Scaled(torch.nn.Module):  # "the model wants normalized pixels": divides already-normalized ones
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, x):
            return self.net(x / PIXEL_MAX)

    with _quiet():
        prog = torch.onnx.export(Scaled(trained_cnn()).eval(), (torch.from_numpy(digits().x_test[:4]),),
                                 dynamo=True, dynamic_shapes={"x": {0: "batch"}})
    path = d / "cnn_dynamic.onnx"
    prog.save(str(path))
    return path


def _hand_graph(raw_input):
    """The course CNN written node by node with onnx.helper from its state dict (BatchNorm folded by hand)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from labkit.models import read_weights

    sd = read_weights()
    inits, nodes = [], []

    def fold(conv, bn):
        w, b = sd[f"{conv}.weight"], sd[f"{conv}.bias"]
        g, beta, mean, var = (sd[f"{bn}.{k}"] for k in ("weight", "bias", "running_mean", "running_var"))
        s = g / np.sqrt(var + 1e-5)
        return (w * s[:, None, None, None]).astype(np.float32), ((b - mean) * s + beta).astype(np.float32)

    for name, arr in [("w0", fold("0", "1")[0]), ("b0", fold("0", "1")[1]), ("w3", fold("3", "4")[0]),
                      ("b3", fold("3", "4")[1]), ("w8", sd["8.weight"]), ("b8", sd["8.bias"]),
                      ("w11", sd["11.weight"]), ("b11", sd["11.bias"])]:
        inits.append(numpy_helper.from_array(np.asarray(arr, np.float32), name))
    src = "input"
    if raw_input:
        inits.append(numpy_helper.from_array(np.array(16.0, np.float32), "sixteen"))
        nodes += [helper.make_node("Cast", ["input"], ["xf"], to=TensorProto.FLOAT),
                  helper.make_node("Div", ["xf", "sixteen"], ["xs"])]
        src = "xs"
    nodes += [
        helper.make_node("Conv", [src, "w0", "b0"], ["c0"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c0"], ["r0"]),
        helper.make_node("Conv", ["r0", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c3"], ["r3"]),
        helper.make_node("MaxPool", ["r3"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "w8", "b8"], ["h"], transB=1),
        helper.make_node("Relu", ["h"], ["hr"]),
        helper.make_node("Gemm", ["hr", "w11", "b11"], ["logits"], transB=1),
    ]
    elem = TensorProto.UINT8 if raw_input else TensorProto.FLOAT
    graph = helper.make_graph(nodes, "hand_cnn", [helper.make_tensor_value_info("input", elem, ["batch", 1, 8, 8])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    return model


def build_dyn_hand_graph(d):
    import onnx

    path = d / "cnn_dynamic.onnx"
    onnx.save(_hand_graph(raw_input=False), str(path))
    return path


def build_dyn_edit_dim(d):
    import onnx
    import torch

    from labkit.data import digits
    from labkit.models import trained_cnn

    # a fixed-batch export, then the batch made symbolic by editing the file's input and output shapes
    import io

    with _quiet():
        buf = io.BytesIO()
        torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:1]),), buf, dynamo=False,
                          input_names=["input"], output_names=["logits"])
    model = onnx.load_from_string(buf.getvalue())
    for vi in list(model.graph.input) + list(model.graph.output):
        vi.type.tensor_type.shape.dim[0].dim_param = "batch"
    del model.graph.value_info[:]
    path = d / "cnn_dynamic.onnx"
    onnx.save(model, str(path))
    return path


def _lookup_graph(raw_input, held_out_only):
    """No CNN at all: the course model's logits for the dataset's digits, stored, and a nearest-neighbour
    (or exact-match) lookup of the input among the stored images."""
    import numpy as np
    import torch
    from onnx import TensorProto, helper, numpy_helper

    from labkit.data import digits, normalize
    from labkit.models import trained_cnn

    raw = digits(raw=True)
    pix = raw.x_test if held_out_only else np.concatenate([raw.x_train, raw.x_test])
    with torch.no_grad():
        logits = trained_cnn()(torch.from_numpy(normalize(pix))).numpy()
    keys = pix.reshape(len(pix), 64).astype(np.float32) if raw_input else normalize(pix).reshape(len(pix), 64)
    if held_out_only:  # an extra "unknown" row: zeros
        keys = np.concatenate([keys, np.full((1, 64), 1e3, np.float32)])
        logits = np.concatenate([logits, np.zeros((1, 10), np.float32)])
    inits = [numpy_helper.from_array(keys.T.copy(), "keysT"),
             numpy_helper.from_array((keys ** 2).sum(1).astype(np.float32), "keys2"),
             numpy_helper.from_array(np.array(-2.0, np.float32), "m2"),
             numpy_helper.from_array(logits.astype(np.float32), "table"),
             numpy_helper.from_array(np.array([-1, 64], np.int64), "shape")]
    nodes = [helper.make_node("Cast", ["input"], ["xf"], to=TensorProto.FLOAT),
             helper.make_node("Reshape", ["xf", "shape"], ["x2"]),
             helper.make_node("MatMul", ["x2", "keysT"], ["dot"]),
             helper.make_node("Mul", ["dot", "m2"], ["dot2"]),
             helper.make_node("Add", ["dot2", "keys2"], ["dist"]),
             helper.make_node("ArgMin", ["dist"], ["idx"], axis=1, keepdims=0),
             helper.make_node("Gather", ["table", "idx"], ["logits"], axis=0)]
    elem = TensorProto.UINT8 if raw_input else TensorProto.FLOAT
    graph = helper.make_graph(nodes, "lookup", [helper.make_tensor_value_info("input", elem, ["batch", 1, 8, 8])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    return model


def build_dyn_lookup(d):
    import onnx

    path = d / "cnn_dynamic.onnx"
    onnx.save(_lookup_graph(raw_input=False, held_out_only=False), str(path))
    return path


# ---------------------------------------------------------------- 03.raw_input builders
def _raw_export(d, forward, dynamic=True, legacy=False, example_dtype=None, net=None, external=False,
                name="cnn_raw.onnx"):
    import torch

    from labkit.data import digits
    from labkit.models import trained_cnn

    class Wrapped(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.net = inner

        def forward(self, pixels):
            return forward(self, pixels)

    model = Wrapped(net if net is not None else trained_cnn()).eval()
    ex = torch.from_numpy(digits(raw=True).x_test[:4])
    if example_dtype is not None:
        ex = ex.to(example_dtype)
    path = d / name
    with _quiet():
        if legacy:
            torch.onnx.export(model, (ex,), str(path), dynamo=False, input_names=["raw"], output_names=["logits"],
                              dynamic_axes={"raw": {0: "n"}, "logits": {0: "n"}} if dynamic else None)
        elif external:
            torch.onnx.export(model, (ex,), str(path), dynamo=True,
                              dynamic_shapes={"pixels": {0: "batch"}} if dynamic else None)
        else:
            prog = torch.onnx.export(model, (ex,), dynamo=True,
                                     dynamic_shapes={"pixels": {0: "batch"}} if dynamic else None)
            prog.save(str(path))
    return path


def build_raw_to_div(d):
    import torch

    from labkit.data import PIXEL_MAX

    return _raw_export(d, lambda self, p: self.net(p.to(torch.float32) / PIXEL_MAX))


def build_raw_legacy_mul(d):
    return _raw_export(d, lambda self, p: self.net(p.float() * 0.0625), legacy=True)


def build_raw_folded_conv(d):
    import torch

    from labkit.models import trained_cnn

    net = trained_cnn()
    with torch.no_grad():  # the 1/16 folded into the first convolution's weights (a linear layer)
        net[0].weight.div_(16.0)
    return _raw_export(d, lambda self, p: self.net(p.type(torch.float32)), net=net)


def build_raw_compose(d):
    import numpy as np
    import onnx
    import torch
    from onnx import TensorProto, compose, helper, numpy_helper

    from labkit.data import digits
    from labkit.models import trained_cnn

    # the float model exported as in the lesson, then a Cast+Div graph composed in front of it
    with _quiet():
        prog = torch.onnx.export(trained_cnn(), (torch.from_numpy(digits().x_test[:4]),), dynamo=True,
                                 dynamic_shapes={"input": {0: "batch"}})
    body = prog.model_proto
    opset = next(o.version for o in body.opset_import if o.domain in ("", "ai.onnx"))
    pre = helper.make_graph(
        [helper.make_node("Cast", ["raw"], ["rawf"], to=TensorProto.FLOAT),
         helper.make_node("Div", ["rawf", "pmax"], ["scaled"])],
        "pre", [helper.make_tensor_value_info("raw", TensorProto.UINT8, ["batch", 1, 8, 8])],
        [helper.make_tensor_value_info("scaled", TensorProto.FLOAT, ["batch", 1, 8, 8])],
        [numpy_helper.from_array(np.array(16.0, np.float32), "pmax")])
    pre_model = helper.make_model(pre, opset_imports=[helper.make_opsetid("", opset)])
    pre_model.ir_version = body.ir_version
    merged = compose.merge_models(pre_model, body, io_map=[("scaled", body.graph.input[0].name)])
    path = d / "cnn_raw.onnx"
    onnx.save(merged, str(path))
    return path


def build_raw_no_cast(d):
    import torch

    from labkit.data import PIXEL_MAX

    # example given as float: the input of the file is float32, not uint8
    return _raw_export(d, lambda self, p: self.net(p / PIXEL_MAX), example_dtype=torch.float32)


def build_raw_no_divide(d):
    import torch

    return _raw_export(d, lambda self, p: self.net(p.to(torch.float32)))


def build_raw_div255(d):
    import torch

    return _raw_export(d, lambda self, p: self.net(p.to(torch.float32) / 255.0))


def build_raw_fixed(d):
    import torch

    return _raw_export(d, lambda self, p: self.net(p.to(torch.float32) / 16.0), dynamic=False)


def build_raw_floordiv(d):
    import torch

    return _raw_export(d, lambda self, p: self.net((p // 16).to(torch.float32)))


def build_raw_int64(d):
    import torch

    return _raw_export(d, lambda self, p: self.net(p.to(torch.float32) / 16), example_dtype=torch.int64)


def build_raw_external(d):
    import torch

    return _raw_export(d, lambda self, p: self.net(p.to(torch.float32) / 16), external=True)


def build_raw_standardized(d):
    import torch

    return _raw_export(d, lambda self, p: self.net((p.to(torch.float32) / 16 - 0.5) / 0.5))


def build_raw_minmax(d):
    import torch

    def fwd(self, p):
        x = p.to(torch.float32)
        top = x.amax(dim=(1, 2, 3), keepdim=True).clamp(min=1.0)
        return self.net(x / top)  # each image scaled by its own maximum ("min-max"), not by PIXEL_MAX

    return _raw_export(d, fwd)


def build_raw_hand_graph(d):
    import onnx

    path = d / "cnn_raw.onnx"
    onnx.save(_hand_graph(raw_input=True), str(path))
    return path


def build_raw_lookup_all(d):
    import onnx

    path = d / "cnn_raw.onnx"
    onnx.save(_lookup_graph(raw_input=True, held_out_only=False), str(path))
    return path


def build_raw_lookup_held_out(d):
    import onnx

    path = d / "cnn_raw.onnx"
    onnx.save(_lookup_graph(raw_input=True, held_out_only=True), str(path))
    return path


CORPUS = {
    "03.faithful": [
        Right("blind12-faithful-resample-mix", answer=right_faithful_resample),
        Right("blind12-faithful-relnorm-nooptim-file", answer=right_faithful_relnorm),
        Right("blind12-faithful-one-pool-slices", answer=right_faithful_one_big_run),
        Right("blind12-faithful-dirichlet-ladder", answer=right_faithful_reference_cross),
        Wrong("blind12-faithful-example-only", answer=wrong_faithful_example_only),
        Wrong("blind12-faithful-abs-tol", answer=wrong_faithful_abs_tol),
        Wrong("blind12-faithful-argmax", answer=wrong_faithful_argmax),
        Wrong("blind12-faithful-no-try", answer=wrong_faithful_no_try),
        Wrong("blind12-faithful-symbolic-plus-example", answer=wrong_faithful_symbolic_plus_example),
        Wrong("blind12-faithful-batch1-and-example", answer=wrong_faithful_two_sizes),
        Wrong("blind12-faithful-zeros", answer=wrong_faithful_zeros),
        Wrong("blind12-faithful-reference-evaluator", answer=wrong_faithful_reference_evaluator),
        Wrong("blind12-faithful-loose-5pct", answer=wrong_faithful_loose),
        Wrong("blind12-faithful-shuffles-example", answer=wrong_faithful_shuffles_example, outputs_wrong=False),
        Wrong("blind12-faithful-net-double", answer=wrong_faithful_net_double, outputs_wrong=False),
        Wrong("blind12-faithful-numpy-bool", answer=wrong_faithful_numpy_bool, outputs_wrong=False),
        Wrong("blind12-faithful-always-true", answer=shortcut_faithful_true, skipped_skill=True),
        Wrong("blind12-faithful-structure-only", answer=shortcut_faithful_structure, skipped_skill=True),
        Wrong("blind12-faithful-self-consistent", answer=shortcut_faithful_self_consistent, skipped_skill=True),
        Wrong("blind12-faithful-weights-only", answer=shortcut_faithful_weights, skipped_skill=True),
        Wrong("blind12-faithful-closure-peek", answer=shortcut_faithful_closure, skipped_skill=True),
        Wrong("blind12-faithful-hostile-eq", answer=shortcut_faithful_hostile, skipped_skill=True),
    ],
    "03.dynamic_batch": [
        Right("blind12-dyn-dim-object", make=lambda tmp: _made(tmp, "dyn_dim_object", build_dyn_dim_object)),
        Right("blind12-dyn-legacy-N", make=lambda tmp: _made(tmp, "dyn_legacy", build_dyn_legacy)),
        Right("blind12-dyn-tuple-dynamic-unoptimized",
              make=lambda tmp: _made(tmp, "dyn_tuple", build_dyn_tuple_unoptimized)),
        Right("blind12-dyn-dynamic-axes-one-file", make=lambda tmp: _made(tmp, "dyn_axes", build_dyn_axes_inline)),
        Wrong("blind12-dyn-fixed", make=lambda tmp: _made(tmp, "dyn_fixed", build_dyn_fixed)),
        Wrong("blind12-dyn-training-mode", make=lambda tmp: _made(tmp, "dyn_train", build_dyn_training_mode)),
        Wrong("blind12-dyn-external-data", make=lambda tmp: _made(tmp, "dyn_ext", build_dyn_external_data),
              outputs_wrong=False),
        Wrong("blind12-dyn-own-trained-model", make=lambda tmp: _made(tmp, "dyn_own", build_dyn_own_model)),
        Wrong("blind12-dyn-axes-wrong-key", make=lambda tmp: _made(tmp, "dyn_wrongkey", build_dyn_axes_wrong_key)),
        Wrong("blind12-dyn-half", make=lambda tmp: _made(tmp, "dyn_half", build_dyn_half)),
        Wrong("blind12-dyn-softmax", make=lambda tmp: _made(tmp, "dyn_softmax", build_dyn_softmax)),
        Wrong("blind12-dyn-legacy-training-bn", make=lambda tmp: _made(tmp, "dyn_trainbn", build_dyn_train_bn_legacy)),
        Wrong("blind12-dyn-double-normalized", make=lambda tmp: _made(tmp, "dyn_dbl", build_dyn_double_normalized)),
        Wrong("blind12-dyn-hand-graph", make=lambda tmp: _made(tmp, "dyn_hand", build_dyn_hand_graph),
              skipped_skill=True),
        Wrong("blind12-dyn-edit-dim-param", make=lambda tmp: _made(tmp, "dyn_edit", build_dyn_edit_dim),
              skipped_skill=True),
        Wrong("blind12-dyn-lookup-table", make=lambda tmp: _made(tmp, "dyn_lookup", build_dyn_lookup),
              skipped_skill=True),
    ],
    "03.raw_input": [
        Right("blind12-raw-to-div", make=lambda tmp: _made(tmp, "raw_div", build_raw_to_div)),
        Right("blind12-raw-legacy-mul-0625", make=lambda tmp: _made(tmp, "raw_mul", build_raw_legacy_mul)),
        Right("blind12-raw-folded-into-conv", make=lambda tmp: _made(tmp, "raw_fold", build_raw_folded_conv)),
        Right("blind12-raw-onnx-compose", make=lambda tmp: _made(tmp, "raw_compose", build_raw_compose)),
        Wrong("blind12-raw-no-cast-float-input", make=lambda tmp: _made(tmp, "raw_nocast", build_raw_no_cast)),
        Wrong("blind12-raw-no-divide", make=lambda tmp: _made(tmp, "raw_nodiv", build_raw_no_divide)),
        Wrong("blind12-raw-div255", make=lambda tmp: _made(tmp, "raw_255", build_raw_div255)),
        Wrong("blind12-raw-fixed", make=lambda tmp: _made(tmp, "raw_fixed", build_raw_fixed)),
        Wrong("blind12-raw-floordiv", make=lambda tmp: _made(tmp, "raw_floordiv", build_raw_floordiv)),
        Wrong("blind12-raw-int64-input", make=lambda tmp: _made(tmp, "raw_int64", build_raw_int64)),
        Wrong("blind12-raw-external-data", make=lambda tmp: _made(tmp, "raw_ext", build_raw_external),
              outputs_wrong=False),
        Wrong("blind12-raw-standardized", make=lambda tmp: _made(tmp, "raw_std", build_raw_standardized)),
        Wrong("blind12-raw-per-image-max", make=lambda tmp: _made(tmp, "raw_minmax", build_raw_minmax)),
        Wrong("blind12-raw-hand-graph", make=lambda tmp: _made(tmp, "raw_hand", build_raw_hand_graph),
              skipped_skill=True),
        Wrong("blind12-raw-lookup-all-digits", make=lambda tmp: _made(tmp, "raw_lookup", build_raw_lookup_all),
              skipped_skill=True),
        Wrong("blind12-raw-lookup-held-out", make=lambda tmp: _made(tmp, "raw_lookup450", build_raw_lookup_held_out),
              skipped_skill=True),
    ],
}
