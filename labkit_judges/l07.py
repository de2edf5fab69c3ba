"""Lesson 07 exercises, judge side (references, test inputs, quiz keys): the app's block counts, an
.ort file that matches, NNAPI coverage, choosing a backend."""
from __future__ import annotations

import labkit.exercises.l07  # noqa: F401 (declares the exercises judged here)

import tempfile
from pathlib import Path

import numpy as np

from labkit import android
from labkit.checks import TestResult, expect_close, judge, quiz_key
from labkit.plain import OnnxBlob, Raised, describe

# ---------------------------------------------------------------- 07.block_counts


def reference_block_counts(grid: np.ndarray) -> np.ndarray:
    """(32, 32) ink image (bool or 0/1) -> (8, 8) number of ink pixels per 4x4 block."""
    g = np.asarray(grid).astype(bool)
    return g.reshape(android.CELLS, android.BLOCK, android.CELLS, android.BLOCK).sum(axis=(1, 3)).astype(np.uint8)


def _block_cases(seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed + 707)
    one = np.zeros((32, 32), dtype=bool)
    one[5, 30] = True  # a single ink pixel: block (1, 7)
    stripes = np.zeros((32, 32), dtype=bool)
    stripes[:, ::3] = True
    return [
        (one,),
        (rng.random((32, 32)) < 0.3,),
        (np.ones((32, 32), dtype=bool),),
        (stripes,),
        ((rng.random((32, 32)) < 0.6).astype(np.uint8),),  # 0/1 integers work too
    ]


_BLOCK_NAMES = ["one ink pixel at row 5, column 30", "random drawing", "all ink", "vertical stripes",
                "0/1 integers instead of booleans"]


@judge("07.block_counts", cases=_block_cases)
def _block_counts(outputs, seed):
    for name, (grid,), got in zip(_BLOCK_NAMES, _block_cases(seed), outputs):
        t = expect_close(name, got, reference_block_counts(grid).astype(np.float64), rtol=0, atol=0)
        if not t.passed and not isinstance(got, Raised):
            try:
                arr = np.asarray(got, dtype=np.float64)
                if arr.shape == (8, 8) and np.array_equal(arr, reference_block_counts(grid).T):
                    t.message += " (your result is transposed: rows and columns are swapped)"
                elif arr.shape == (8, 8) and arr.max() <= 1.0 and reference_block_counts(grid).max() > 1:
                    t.message += " (expected counts 0..16, not a mean: sum the pixels of each block)"
            except (TypeError, ValueError):
                pass
        yield t


# ---------------------------------------------------------------- 07.ort_file

#: how many test digits the .ort file is compared on (one at a time: the batch may be fixed to 1)
N_COMPARE = 24


def reference_cnn():
    """The course CNN the lesson converts (tests replace this with an untrained one to stay fast)."""
    from labkit.models import trained_cnn

    return trained_cnn(progress=False)


def reference_probabilities(raw: np.ndarray) -> np.ndarray:
    """Probabilities of the baked course CNN (torch) on raw uint8 digits (N, 1, 8, 8)."""
    import torch

    model = android.with_preprocessing(reference_cnn())
    with torch.no_grad():
        return model(torch.from_numpy(np.asarray(raw, dtype=np.uint8))).numpy()


def _compare_digits(seed: int) -> np.ndarray:
    from labkit.data import digits

    x = digits(raw=True).x_test
    idx = np.random.default_rng(seed + 717).choice(len(x), N_COMPARE, replace=False)
    return x[np.sort(idx)]


@judge("07.ort_file")
def _ort_file(answer, seed):
    steps = ["ORT file loads", "raw pixels in", "probabilities out", f"matches the course CNN on {N_COMPARE} test digits"]

    def rest(after: str, why: str):
        for name in steps[steps.index(after) + 1:]:
            yield TestResult(name, False, f"not checked: {why}")

    if isinstance(answer, Raised) or not isinstance(answer, OnnxBlob):
        msg = (f"your function {answer.message}" if isinstance(answer, Raised)
               else f"expected the path of an .ort file, got {describe(answer)}")
        yield TestResult(steps[0], False, msg)
        yield from rest(steps[0], "no .ort file")
        return
    data = answer.data
    if not android.is_ort_format(data):
        try:
            import onnx

            is_onnx = bool(onnx.load_from_string(data).graph.node)
        except Exception:
            is_onnx = False
        yield TestResult(steps[0], False,
                         "this is an ONNX (protobuf) file, not an ORT-format file: convert it with "
                         "convert_onnx_models_to_ort" if is_onnx else
                         "this is neither an ORT-format file (it does not carry the 'ORTM' identifier) nor ONNX")
        yield from rest(steps[0], "not an ORT-format file")
        return
    try:
        sess = android.session(data)
    except Exception as e:
        yield TestResult(steps[0], False, f"it has the ORT-format identifier but ONNX Runtime cannot load it: "
                                          f"{str(e).strip().splitlines()[0][:200]}")
        yield from rest(steps[0], "the file does not load")
        return
    yield TestResult(steps[0], True, f"an ORT-format (FlatBuffers) file of {len(data):,} bytes; ONNX Runtime loads it")
    inputs, outputs = sess.get_inputs(), sess.get_outputs()
    if len(inputs) != 1 or len(outputs) != 1:
        yield TestResult(steps[1], False, f"expected one input and one output, got {len(inputs)} and {len(outputs)}")
        yield from rest(steps[1], "the model's interface is not the lesson's")
        return
    inp = inputs[0]
    ok = inp.type == "tensor(uint8)" and len(inp.shape) == 4 and list(inp.shape[1:]) == [1, 8, 8]
    yield TestResult(steps[1], ok,
                     f"input '{inp.name}' {inp.type} {inp.shape}" if ok else
                     f"expected a uint8 input of shape [batch, 1, 8, 8] (raw pixels 0..16, preprocessing baked in), "
                     f"got {inp.type} {inp.shape}")
    if not ok:
        yield from rest(steps[1], "the input is not raw uint8 pixels")
        return
    x = _compare_digits(seed)
    want = reference_probabilities(x)
    try:
        got = np.concatenate([sess.run(None, {inp.name: x[i:i + 1]})[0] for i in range(len(x))])
    except Exception as e:
        yield TestResult(steps[2], False, f"running it failed: {str(e).strip().splitlines()[0][:200]}")
        yield from rest(steps[2], "the model does not run")
        return
    sums_ok = got.shape == want.shape and bool(np.allclose(got.sum(axis=1), 1, atol=1e-3))
    yield TestResult(steps[2], sums_ok,
                     f"shape {got.shape}, each row sums to 1" if sums_ok else
                     f"expected probabilities of shape {want.shape} summing to 1 per row, got shape {got.shape}"
                     + (f" with row sums like {got.sum(axis=1)[:3].round(3).tolist()}" if got.ndim == 2 else ""))
    if not sums_ok:
        yield from rest(steps[2], "the output is not probabilities")
        return
    t = expect_close(steps[3], got, want, rtol=0, atol=1e-4)
    if not t.passed:
        diff = float(np.abs(got - want).max())
        agree = float((got.argmax(1) == want.argmax(1)).mean())
        t.message += (f"; largest difference {diff:.3g}, same prediction for {agree:.0%} of digits"
                      + (" — is this the int8 model? This exercise asks for the fp32 one" if diff < 0.1 else ""))
    yield t


# ---------------------------------------------------------------- 07.nnapi_share

_share_cache: dict[str, float] = {}


def reference_nnapi_shares() -> dict[str, float]:
    """NNAPI-supported node share of the lesson's int8 model, with its dynamic batch and with batch 1.

    Node support depends on the graph's structure and shapes, not on the weights, so an untrained
    DigitsCNN exported and quantized exactly like in the lesson gives the same answer.
    """
    if not _share_cache:
        import torch

        from labkit.data import digits
        from labkit.models import DigitsCNN

        torch.manual_seed(0)
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            android.export_baked(DigitsCNN().eval(), tmp / "fp32.onnx")
            android.quantize_int8(tmp / "fp32.onnx", tmp / "int8.onnx", digits(raw=True).x_train[:32])
            android.fix_batch_python(tmp / "int8.onnx", tmp / "int8_b1.onnx")
            before = next(r for r in android.mobile_usability_python(tmp / "int8.onnx") if r["ep"] == "NNAPI")
            after = next(r for r in android.mobile_usability_python(tmp / "int8_b1.onnx") if r["ep"] == "NNAPI")
        _share_cache.update(nodes=before["nodes"], before=before["supported"] / before["nodes"],
                            after=after["supported"] / after["nodes"])
    return dict(_share_cache)


@judge("07.nnapi_share")
def _nnapi_share(answer, seed):
    if not isinstance(answer, dict) or not {"before", "after"} <= set(answer):
        keys = sorted(answer) if isinstance(answer, dict) else None
        yield TestResult("answer", False, "expected a dict {'before': share, 'after': share} with two fractions "
                                          "between 0 and 1, got " + (f"keys {keys}" if keys is not None else describe(answer)))
        return
    ref = reference_nnapi_shares()
    for key, label in (("before", "dynamic batch"), ("after", "batch fixed to 1")):
        got, want = answer[key], ref[key]
        name = f"{key} ({label})"
        if isinstance(got, bool) or not isinstance(got, (int, float)) or not np.isfinite(got):
            yield TestResult(name, False, f"expected a number between 0 and 1, got {got!r}")
        elif got > 1:
            yield TestResult(name, False, f"a share is a fraction between 0 and 1, got {got!r} "
                                          "(a percentage or a node count?): divide supported nodes by all nodes")
        elif abs(got - want) <= 0.01:
            yield TestResult(name, True, f"{got:.0%} of the {ref['nodes']} nodes can run on NNAPI")
        else:
            msg = f"expected {want:.3f}, got {got:.3f}"
            if key == "before" and got == 0:
                msg += (" — 0 is the fp32 model's share; the int8 model has nodes whose inputs have fixed shapes "
                        "(the quantized weights), so some of them already qualify")
            yield TestResult(name, False, msg)


# ---------------------------------------------------------------- 07.quiz

quiz_key("07.quiz", {
    "q1": ("a", "One partition covering everything is NNAPI's best case, but only a measurement on the phone says whether it beats the CPU."),
    "q2": ("b", "Google deprecated NNAPI from Android 15; XNNPACK and the CPU provider keep working everywhere."),
    "q3": ("b", "Many small partitions cost more in hand-over than they gain; dynamic shapes keep NNAPI out anyway."),
    "q4": ("b", "A custom build with --include_ops_by_config keeps only those kernels: a smaller app."),
})
