"""Lesson 07 exercise specs (what the learner sees, references, test inputs, quiz answers): the app's block counts, an
.ort file that matches, NNAPI coverage, choosing a backend."""
from __future__ import annotations

import numpy as np

from labkit import android
from labkit.checks import Question, TestResult, error_line, exercise, expect_close, quiz
from labkit.checks.differential import promised_form, same
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
        (np.asfortranarray(rng.random((32, 32)) < 0.5),),   # column-major memory: the same grid (blind round 12)
    ]


_BLOCK_NAMES = ["one ink pixel at row 5, column 30", "random drawing", "all ink", "vertical stripes",
                "0/1 integers instead of booleans", "a grid stored column by column"]


@exercise('07.block_counts', title='Count the ink in 4×4 blocks', points=2, kind='function',
          hint=[
              'Each output cell counts the ink in its 4×4 block: split each axis into (block index, position in the block) and sum over the positions.',
              'ndarray.reshape into four axes and .sum(axis=...) over two of them.',
          ],
          cases=_block_cases, tests=_BLOCK_NAMES, skill=_BLOCK_NAMES)
def _block_counts(outputs, seed):
    from labkit.android import downsample
    from labkit.checks import DidNotDo

    cases = _block_cases(seed)
    app = [downsample(np.asarray(grid, np.uint8) * 255)[0, 0] for (grid,) in cases]
    answered = [(a, got, grid) for a, got, (grid,) in zip(app, outputs, cases) if not isinstance(got, Raised)]
    try:
        copied = bool(answered) and all(np.array_equal(np.asarray(got, np.float64), a) for a, got, _ in answered)
    except (TypeError, ValueError):
        copied = False
    if copied and any(not np.array_equal(a, reference_block_counts(grid)) for a, _, grid in answered):
        yield DidNotDo("it gives the app's downsample, which crops the drawing to its ink first: the exercise is "
                       "the 4×4 blocks of the whole grid, counted by you")
    for name, (grid,), got in zip(_BLOCK_NAMES, cases, outputs):
        # counts: integers (the prompt; the model's input is uint8), each exact and in its place
        t = same(name, got, reference_block_counts(grid), integer=True)
        if not t.passed and not isinstance(got, Raised):
            try:
                arr = np.asarray(got, dtype=np.float64)
                if arr.shape == (8, 8) and np.array_equal(arr, reference_block_counts(grid).T):
                    t.message += " (your result is transposed: rows and columns are swapped)"
                elif arr.shape == (8, 8) and arr.max() <= 1.0 and reference_block_counts(grid).max() > 1:
                    t.message += " (expected counts 0..16 per block, not a mean)"
            except (TypeError, ValueError):
                pass
        yield t


# ---------------------------------------------------------------- 07.ort_file

#: how many test digits the .ort file is compared on (one at a time: the batch may be fixed to 1)
N_COMPARE = 24


def reference_cnn():
    """The course CNN the lesson converts (tests replace this with an untrained one to stay fast)."""
    from labkit.models import trained_cnn

    return trained_cnn()


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


ORT_STEPS = ("ORT file loads", "raw pixels in", "probabilities out", f"matches the course CNN on {N_COMPARE} test digits",
             "fixed batch 1, portable operators")
#: operator domains that only x86 CPUs run (NCHWc blocked layouts, written at level ALL for amd64)
X86_ONLY_DOMAINS = ("com.microsoft.nchwc",)
#: the domain of ONNX Runtime's own fused kernels (FusedConv, FusedGemm...): only its CPU provider runs them. The
#: fp32 model has none; style Fixed writes them into the graph, style Runtime saves them to be replayed at load time
CPU_FUSION_DOMAIN = "com.microsoft"


#: the skill: the fp32 model's answers, in a file a phone can run (fixed batch, no x86-only operators)
ORT_SKILL = ORT_STEPS[3:5]


@exercise('07.ort_file', title='Convert the fp32 model to ORT format', points=4, kind='onnx',
          hint=[
              "A phone gets an ORT-format file converted from the model whose batch is fixed to 1, with optimizations that run on any CPU (not ones saved for this machine's x86 layout).",
              'python -m onnxruntime.tools.convert_onnx_models_to_ort and its --optimization_style and --output_dir options; hand in the .ort path it writes.',
          ],
          tests=ORT_STEPS, skill=ORT_SKILL)
def _ort_file(answer, seed):
    steps = list(ORT_STEPS[:4])
    yield from _ort_portable(answer)

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
                         "this is an ONNX (protobuf) file, not an ORT-format file" if is_onnx else
                         "this is neither an ORT-format file (it does not carry the 'ORTM' identifier) nor ONNX")
        yield from rest(steps[0], "not an ORT-format file")
        return
    try:
        sess = android.session(data)
    except Exception as e:
        yield TestResult(steps[0], False, f"it has the ORT-format identifier but ONNX Runtime cannot load it: "
                                          f"{error_line(e)}")
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
        yield TestResult(steps[2], False, f"running it failed: {error_line(e)}")
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


def _ort_portable(answer):
    """The phone gets this file: batch fixed to 1 and no x86-only operators."""
    name = ORT_STEPS[4]
    if not isinstance(answer, OnnxBlob) or not android.is_ort_format(answer.data):
        yield TestResult(name, False, "not checked: no ORT-format file")
        return
    try:
        ops = android.ort_operators(answer.data)
        shape = android.model_io(answer.data)["input_shape"]
    except Exception as e:
        yield TestResult(name, False, f"could not read the file's operators: {error_line(e)}")
        return
    x86 = [op for op in ops if op.split(":")[0] in X86_ONLY_DOMAINS]
    fused = [op for op in ops if op.split(":")[0] == CPU_FUSION_DOMAIN]
    problems = []
    if list(shape) != [1, 1, 8, 8]:
        problems.append(f"the input shape is {list(shape)}, expected [1, 1, 8, 8]: the batch fixed to 1, "
                        "which NNAPI and CoreML need")
    if x86:
        problems.append(f"it holds x86-only operators {x86} (NCHWc layouts, saved at level ALL for this CPU): a phone "
                        "cannot run them; expected only operators that run on any CPU")
    if fused:
        problems.append(f"its graph holds ONNX Runtime's CPU-only fused operators {fused} (fusions applied "
                        "at conversion): NNAPI and XNNPACK cannot take those nodes; expected a portable graph, "
                        "with the fusions left for load time")
    yield TestResult(name, not problems, "; ".join(problems) if problems else
                     f"batch fixed to 1; operators {', '.join(o.split(':')[1] for o in ops)} run on any CPU")


# ---------------------------------------------------------------- 07.fix_batch
#
# The learner writes fix_for_mobile(model) -> onnx.ModelProto: read the checker's complaint (a dynamic input
# shape), find the batch dimension of *this* model (a dim_param of any name, or an unnamed dimension), fix it to
# 1 and fix the output shapes too. The check calls it on models it never saw.

FIX_MODELS = ("named batch", "another dim_param name", "unnamed batch dimension")
FIX_KINDS = ("every input and output dimension fixed", "batch is 1", "same outputs at batch 1")
FIX_TESTS = tuple(f"{m}: {k}" for m in FIX_MODELS for k in FIX_KINDS)
#: the prompt's form: a ModelProto (its bytes cross as the same OnnxBlob, so the learner side records which it was)
FIX_FORM = "returns an onnx.ModelProto"


def mobile_model(seed: int, k: int):
    """A small classifier with a dynamic batch: k=0 dim_param 'batch', k=1 another name, k=2 no name at all;
    10 classes for k=0, fewer for the others."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed * 23 + 7070 + k)
    dim = ["batch", str(rng.choice(["N", "batch_size", "unk__12", "s0", "images_dynamic_axes_1"])), None][k]
    in_name, out_name = [("pixels", "probabilities"), ("input", "output"), ("x", "scores")][(seed + k) % 3]
    c = int(rng.integers(3, 7))
    classes = 10 if k == 0 else int(rng.integers(3, 9))  # not always the digits' 10 (blind round 12)
    inits = [numpy_helper.from_array(rng.normal(0, 0.4, (c, 1, 3, 3)).astype(np.float32), "conv.w"),
             numpy_helper.from_array(rng.normal(0, 0.3, (classes, c * 16)).astype(np.float32), "fc.w"),
             numpy_helper.from_array(np.array([1.0 / 16], np.float32), "inv16")]
    nodes = [helper.make_node("Cast", [in_name], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["f", "inv16"], ["x01"]),
             helper.make_node("Conv", ["x01", "conv.w"], ["t"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["t"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["fl"], axis=1),
             helper.make_node("Gemm", ["fl", "fc.w"], ["logits"], transB=1),
             helper.make_node("Softmax", ["logits"], [out_name], axis=1)]
    x = helper.make_tensor_value_info(in_name, TensorProto.UINT8, [dim, 1, 8, 8])
    y = helper.make_tensor_value_info(out_name, TensorProto.FLOAT, [dim if k != 1 else "out_batch", classes])
    graph = helper.make_graph(nodes, f"mobile_{k}", [x], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    return onnx.shape_inference.infer_shapes(model)


def _fix_cases(seed: int) -> list[tuple]:
    return [(mobile_model(seed, k),) for k in range(len(FIX_MODELS))]


def _dims(vi) -> list:
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return [None]
    return [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else (d.dim_param or None) for d in t.shape.dim]


@exercise('07.fix_batch', title='Fix the batch dimension the checker complains about', points=3, kind='function',
          hint=[
              'The batch dimension may have a name or no name at all; fix it to 1 on the input, then let the output shapes follow; work on a copy.',
              "onnxruntime.tools.onnx_model_utils: make_dim_param_fixed, make_input_shape_fixed, fix_output_shapes; the input's type.tensor_type.shape.dim.",
          ],
          cases=_fix_cases, tests=(*FIX_TESTS, FIX_FORM), skill=FIX_TESTS)
def _fix_batch(outputs, seed):
    from labkit.checks import load_onnx
    from labkit.runtime import ort_session

    for k, (label, got) in enumerate(zip(FIX_MODELS, outputs)):
        names = [f"{label}: {kind}" for kind in FIX_KINDS]
        model, why = load_onnx(got)
        if model is None:
            for name in names:
                yield TestResult(name, False, why if "your function" in why else
                                 f"fix_for_mobile should return an onnx.ModelProto; {why}")
            continue
        original = mobile_model(seed, k)
        raw = np.random.default_rng(seed + 7171 + k).integers(0, 17, size=(1, 1, 8, 8)).astype(np.uint8)
        in_name = original.graph.input[0].name
        want_out = ort_session(original).run(None, {in_name: raw})[0]
        io = [*model.graph.input, *model.graph.output]
        loose = {vi.name: _dims(vi) for vi in io if not all(isinstance(d, int) for d in _dims(vi))}
        # fixed, and fixed to what the graph computes: a shape written without asking the graph can be wrong
        declared = _dims(model.graph.output[0]) if model.graph.output else None
        if not loose and declared != list(want_out.shape):
            yield TestResult(names[0], False, f"the output is declared {declared}, but the model computes "
                                              f"{list(want_out.shape)} for one drawing: let the graph say the shapes")
        else:
            yield TestResult(names[0], not loose,
                             "every input and output shape is fixed" if not loose else
                             f"still dynamic: {loose} — NNAPI and CoreML need fixed shapes everywhere, outputs too")
        inp = model.graph.input[0] if model.graph.input else None
        want = [1, 1, 8, 8]
        got_dims = _dims(inp) if inp is not None else None
        yield TestResult(names[1], got_dims == want,
                         f"input {inp.name!r} is {want}" if got_dims == want else
                         f"expected the input shape {want} (the app classifies one drawing at a time), got {got_dims}")
        try:
            sess = ort_session(model)
            out = sess.run(None, {in_name: raw})[0]
        except Exception as e:
            yield TestResult(names[2], False, f"ONNX Runtime cannot run it on one digit fed as {in_name!r}: "
                                              f"{error_line(e)}")
            continue
        yield expect_close(names[2], out, want_out, rtol=1e-5, atol=1e-6)
    yield promised_form(FIX_FORM, outputs, ("onnx.ModelProto",), "an onnx.ModelProto (a copy of the model)",
                        "onnx.load_from_string(...) turns bytes back into one")


# ---------------------------------------------------------------- 07.quiz

quiz('07.quiz', title='Pick the execution provider', points=4, questions=[
    Question('q1', 'Phone A runs Android 12 and its vendor ships an NNAPI driver for its NPU. Your uint8-activation model has a fixed batch and the checker reports one NNAPI partition covering every node. What do you try?', {
        'a': 'NNAPI timed against the CPU baseline on that same phone',
        'b': 'CPU only: NNAPI accelerators never help small models',
        'c': 'NNAPI without timing it: a single partition is always fastest',
    }, answer='a', why=(
        "One partition covering everything is NNAPI's best case, but only a measurement on the phone "
        'says whether it beats the CPU: accelerators often help (b), and the checker predicts '
        'coverage, not speed (c).')),
    Question('q2', 'Phone B is new and runs Android 15. Which backend do you make the default?', {
        'a': 'NNAPI, since newer phones ship much better NNAPI drivers',
        'b': 'None: ONNX Runtime has no build for Android 15',
        'c': 'XNNPACK or the CPU: NNAPI is deprecated from 15',
    }, answer='c', why=(
        'Google deprecated NNAPI from Android 15; XNNPACK and the CPU provider keep working everywhere '
        '(take whichever measures faster; QNN targets Qualcomm NPUs directly). Newer phones do not get '
        'better NNAPI drivers (a), and ONNX Runtime runs on Android 15 (b).')),
    Question('q3', 'Phone C: your model keeps a dynamic input size you cannot fix, and the checker says NNAPI would split it into 9 small partitions. What do you ship?', {
        'a': 'NNAPI: more partitions means more of it runs in parallel',
        'b': 'The CPU provider, maybe XNNPACK: boundaries copy data',
        'c': 'NNAPI with the CPU fallback disabled, to force it all',
    }, answer='b', why=(
        'Every partition boundary copies data between NNAPI and the CPU, so nine small partitions cost '
        'more than they gain (a) (and the session runs them one after another). Disabling the CPU '
        'fallback (c) makes the session fail on the unsupported nodes.')),
    Question('q4', 'What is required_operators.config, written by convert_onnx_models_to_ort, for?', {
        'a': 'The operators a reduced custom ORT build must keep',
        'b': 'A file ORT reads at run time to load the .ort model',
        'c': 'The list of operators that NNAPI supports on phones',
    }, answer='a', why=(
        'A custom build with --include_ops_by_config keeps only those kernels: a smaller app. ORT does '
        'not read it at run time (b), and it lists what the model needs, not what NNAPI supports (c).')),
    Question('q5', 'quantize_static with its defaults (QInt8 activations), batch fixed to 1: the checker reports every node supported by NNAPI. What does that mean?', {
        'a': 'It holds: the checker ran every node through NNAPI on a phone',
        'b': 'Little: it matches operator names, not the int8 element types',
        'c': 'Fixing the batch already turned activations to uint8',
    }, answer='b', why=(
        "The checker matches operator names (QuantizeLinear, Conv...) against NNAPI's list; it does "
        "not look at element types, and ONNX Runtime's NNAPI provider takes uint8 activations only: "
        'quantize with QUInt8. It never runs the model (a), and fixing the batch (c) does not change '
        'the types.')),
])
