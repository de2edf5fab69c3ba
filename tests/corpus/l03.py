"""Lesson 03: answers learners write when exporting the course CNN, judging exports, baking in preprocessing,
translating a custom operator.

Real exports of the course model are made once per test session (cached), with the legacy exporter
where the exporter does not matter (it takes a fraction of a second) and with dynamo where it does
(its own behaviour in training mode, its ONNXProgram); variants of one export are made by editing the
exported graph, which is what the file would hold anyway.
"""
from __future__ import annotations

import io
from functools import lru_cache

import numpy as np
import onnx
from onnx import TensorProto

from corpus import Right, Wrong

# ---------------------------------------------------------------- exports of the course CNN (cached)


def _torch():
    import torch

    return torch


def _example(n=4, raw=False):
    from labkit.data import digits

    d = digits(raw=raw)
    return _torch().from_numpy(d.x_test[:n])


def _legacy(module, example, *, dynamic=True, names=("pixels", "logits"), **kw) -> bytes:
    import labkit

    buf = io.BytesIO()
    axes = {names[0]: {0: "batch"}, names[1]: {0: "batch"}} if dynamic else None
    with labkit.quiet():
        _torch().onnx.export(module, (example,), buf, dynamo=False, input_names=[names[0]], output_names=[names[1]],
                             dynamic_axes=axes, **kw)
    return buf.getvalue()


def _dynamo(module, example, dynamic_shapes, **kw) -> onnx.ModelProto:
    import labkit

    with labkit.quiet():
        program = _torch().onnx.export(module, (example,), dynamo=True, dynamic_shapes=dynamic_shapes, **kw)
    return program.model_proto


def _course():
    from labkit.models import trained_cnn

    return trained_cnn()


@lru_cache(maxsize=None)
def dynamo_dynamic() -> bytes:
    """The notebook's way, with the batch named N."""
    return _dynamo(_course(), _example(4), {"input": {0: "N"}}).SerializeToString()


@lru_cache(maxsize=None)
@lru_cache(maxsize=None)
def dynamo_train_mode() -> bytes:
    """A fresh DigitsCNN given the course weights, never put in eval mode, exported with dynamo."""
    from labkit.models import DigitsCNN

    net = DigitsCNN()
    net.load_state_dict(_course().state_dict())
    return _dynamo(net, _example(4), {"input": {0: "batch"}}).SerializeToString()


@lru_cache(maxsize=None)
def legacy(kind: str = "course", dynamic: bool = True) -> bytes:
    torch = _torch()
    from labkit.models import DigitsCNN

    if kind == "course":
        net = _course()
    elif kind == "untrained":
        torch.manual_seed(0)
        net = DigitsCNN().eval()
    elif kind == "retrained":  # what a model trained on this CPU is to the course model: other weights
        net = _course()
        gen = torch.Generator().manual_seed(1)
        with torch.no_grad():
            for p in net.parameters():
                p.add_(0.05 * p.std() * torch.randn(p.shape, generator=gen))
    elif kind == "softmax":
        net = torch.nn.Sequential(_course(), torch.nn.Softmax(dim=1)).eval()
    elif kind == "double":
        return _legacy(_course().double(), _example(4).double(), dynamic=dynamic)
    elif kind == "train-mode":
        net = _course().train()
        return _legacy(net, _example(4), dynamic=dynamic, training=torch.onnx.TrainingMode.TRAINING)
    else:
        raise ValueError(kind)
    return _legacy(net, _example(4), dynamic=dynamic)


class _Raw:
    """Raw uint8 pixels in: cast to float32, then `scale`, then the CNN."""

    def __new__(cls, scale, net=None):
        torch = _torch()

        class RawDigits(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.net = net if net is not None else _course()

            def forward(self, pixels):
                return self.net(scale(pixels.to(torch.float32)))

        return RawDigits().eval()


@lru_cache(maxsize=None)
def dynamo_raw() -> bytes:
    return _dynamo(_Raw(lambda x: x / 16), _example(4, raw=True), {"pixels": {0: "batch"}}).SerializeToString()


@lru_cache(maxsize=None)
def legacy_raw(kind: str, dynamic: bool = True) -> bytes:
    torch = _torch()
    scale = {"times 1/16": lambda x: x * 0.0625, "/255": lambda x: x / 255, "cast only": lambda x: x,
             "/16 twice": lambda x: x / 16 / 16, "centred": lambda x: (x - 8) / 16, "/16": lambda x: x / 16}
    if kind == "folded":  # the 1/16 folded into the first convolution's weights: same function
        net = _course()
        with torch.no_grad():
            net[0].weight.mul_(1 / 16)
        return _legacy(_Raw(lambda x: x, net), _example(4, raw=True), dynamic=dynamic)
    return _legacy(_Raw(scale[kind]), _example(4, raw=True), dynamic=dynamic)


def _external(tmp, blob: bytes) -> str:
    """What a path argument writes: the graph in the .onnx file, the weights in a .data file beside it."""
    tmp.mkdir(parents=True, exist_ok=True)
    onnx.save(onnx.load_from_string(blob), tmp / "cnn.onnx", save_as_external_data=True,
              all_tensors_to_one_file=True, location="cnn.onnx.data", size_threshold=0)
    return str(tmp / "cnn.onnx")


def _saved(tmp, blob: bytes) -> str:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "m.onnx").write_bytes(blob)
    return str(tmp / "m.onnx")


def _float64_out(blob: bytes) -> bytes:
    """The same export with a Cast to float64 after the last node: the right numbers, in the wrong dtype."""
    m = onnx.load_from_string(blob)
    out = m.graph.output[0]
    for n in m.graph.node:
        n.output[:] = [o + "_f32" if o == out.name else o for o in n.output]
    m.graph.node.append(onnx.helper.make_node("Cast", [out.name + "_f32"], [out.name], to=onnx.TensorProto.DOUBLE))
    out.type.tensor_type.elem_type = onnx.TensorProto.DOUBLE
    return m.SerializeToString()


CORPUS_DYNAMIC = [
    Right("dynamo, batch named N, the ModelProto", make=lambda tmp: onnx.load_from_string(dynamo_dynamic())),
    Right("legacy exporter with dynamic_axes, saved to a path", make=lambda tmp: _saved(tmp, legacy())),
    Right("legacy exporter, bytes", make=lambda tmp: legacy()),
    Wrong("no dynamic shapes: batch fixed at 4", make=lambda tmp: legacy(dynamic=False), outputs_wrong=False),
    Wrong("training mode: DigitsCNN + load_state_dict, no eval()", make=lambda tmp: dynamo_train_mode()),
    Wrong("an untrained DigitsCNN (seed 0)", make=lambda tmp: legacy("untrained")),
    Wrong("a CNN trained on this CPU (other weights)", make=lambda tmp: legacy("retrained")),
    Wrong("Softmax added: probabilities, not logits", make=lambda tmp: legacy("softmax")),
    Wrong("path argument: weights in a .data file, .onnx handed in", make=lambda tmp: _external(tmp, dynamo_dynamic())),
    Wrong("model.double(): float64 input", make=lambda tmp: legacy("double")),
    Wrong("the raw-input model handed in", make=lambda tmp: legacy_raw("/16")),
    Wrong("logits cast to float64 at the end", make=lambda tmp: _float64_out(legacy())),
]

CORPUS_RAW = [
    Right("dynamo, pixels / 16", make=lambda tmp: dynamo_raw()),
    Right("legacy, pixels * 0.0625", make=lambda tmp: _saved(tmp, legacy_raw("times 1/16"))),
    Right("1/16 folded into the first Conv's weights", make=lambda tmp: legacy_raw("folded")),
    Wrong("divides by 255 instead of 16", make=lambda tmp: legacy_raw("/255")),
    Wrong("casts but does not scale", make=lambda tmp: legacy_raw("cast only")),
    Wrong("divides by 16 twice", make=lambda tmp: legacy_raw("/16 twice")),
    Wrong("centres the pixels: (x - 8) / 16", make=lambda tmp: legacy_raw("centred")),
    Wrong("float input: the scaling left outside", make=lambda tmp: legacy()),
    Wrong("no dynamic batch", make=lambda tmp: legacy_raw("/16", dynamic=False), outputs_wrong=False),
    Wrong("path argument: weights in a .data file", make=lambda tmp: _external(tmp, dynamo_raw())),
    Wrong("logits cast to float64 at the end", make=lambda tmp: _float64_out(dynamo_raw())),
]


# ---------------------------------------------------------------- 03.faithful


def _session(model):
    import onnxruntime as ort

    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _torch_out(net, x):
    with _torch().no_grad():
        return net(_torch().from_numpy(x)).numpy()


def _sizes_checker(sizes, *, rtol=1e-3, atol=1e-5, catch=True, compare=None):
    """Run both on rows of example at each batch size in `sizes(example)`; False on the first disagreement."""

    def is_faithful(onnx_model, net, example):
        sess = _session(onnx_model)
        name = sess.get_inputs()[0].name
        rng = np.random.default_rng(1)
        for n in sizes(example):
            x = example[rng.integers(0, len(example), size=n)]
            try:
                got = sess.run(None, {name: x})[0]
            except Exception:
                if not catch:
                    raise
                return False
            want = _torch_out(net, x)
            if compare is not None:
                if not compare(got, want):
                    return False
            elif got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol):
                return False
        return True

    return is_faithful


def _every_size(engine):
    """Every batch size from 1 to 12 (rows of example repeated), assert_allclose inside one try."""

    def is_faithful(onnx_model, net, example):
        if engine == "reference":  # onnx.reference ignores the declared input shape
            from onnx.reference import ReferenceEvaluator

            ref = ReferenceEvaluator(onnx_model)
            run = lambda x: ref.run(None, {onnx_model.graph.input[0].name: x})[0]  # noqa: E731
        else:
            sess = _session(onnx_model)
            run = lambda x: sess.run(None, {sess.get_inputs()[0].name: x})[0]  # noqa: E731
        try:
            for n in range(1, 13):
                x = np.resize(example, (n, example.shape[1])).astype(np.float32)
                np.testing.assert_allclose(run(x), _torch_out(net, x), rtol=1e-4, atol=1e-6)
        except Exception:
            return False
        return True

    return is_faithful


def _symbolic_only(onnx_model, net, example):
    dim = onnx_model.graph.input[0].type.tensor_type.shape.dim[0]
    return bool(dim.dim_param)


def _calls():
    count = [0]

    def by_call_order(onnx_model, net, example):  # the order of the notebook's cases, remembered
        count[0] += 1
        return count[0] <= 4

    return by_call_order


CORPUS_FAITHFUL = [
    Right("batch sizes 1, 2, 3, 5, 8, 17 and the example's, np.allclose",
          answer=_sizes_checker(lambda e: (1, 2, 3, 5, 8, 17, len(e)))),
    Right("ONNX Runtime, batch 1..12, assert_allclose in one try", answer=_every_size("ort")),
    Wrong("only the example", answer=_sizes_checker(lambda e: (len(e),))),
    Wrong("the example and batch 1 (misses a branch baked in at a small batch)",
          answer=_sizes_checker(lambda e: (len(e), 1))),
    Wrong("the example and twice its size (misses a branch baked in at a large batch)",
          answer=_sizes_checker(lambda e: (len(e), 2 * len(e)))),
    Wrong("a fixed absolute tolerance: atol=1e-5, rtol=0",
          answer=_sizes_checker(lambda e: (1, 2, 3, 5, 8, 17), rtol=0.0, atol=1e-5)),
    Wrong("compares the predicted class only (argmax)",
          answer=_sizes_checker(lambda e: (1, 2, 3, 5, 8, 17),
                                compare=lambda g, w: g.shape == w.shape and (g.argmax(1) == w.argmax(1)).all())),
    Wrong("lets ONNX Runtime's error through", answer=_sizes_checker(lambda e: (1, 2, 3, 5, 8, 17), catch=False)),
    Wrong("checks that the batch is symbolic, runs nothing", answer=_symbolic_only),
    Wrong("onnx.reference instead of ONNX Runtime (ignores the fixed batch)", answer=_every_size("reference")),
    Wrong("a relative-only tolerance: rtol=1e-3, atol=0 (a logit of 0 fails)",
          answer=_sizes_checker(lambda e: (1, 2, 3, 5, 8, 17, len(e)), rtol=1e-3, atol=0.0)),
    Wrong("compares the mean of the outputs, not each value",
          answer=_sizes_checker(lambda e: (1, 2, 3, 5, 8, 17, len(e)),
                                compare=lambda g, w: g.shape == w.shape and np.isclose(g.mean(), w.mean(), rtol=1e-3))),
    Wrong("compares each row's sorted values (the class order lost)",
          answer=_sizes_checker(lambda e: (1, 2, 3, 5, 8, 17, len(e)),
                                compare=lambda g, w: g.shape == w.shape and np.allclose(np.sort(g, 1), np.sort(w, 1),
                                                                                         rtol=1e-3, atol=1e-5))),
    Wrong("always True", answer=lambda m, net, e: True, skipped_skill=True),
    Wrong("always False", answer=lambda m, net, e: False, skipped_skill=True),
    Wrong("answers by the order of the notebook's cases", make=lambda tmp: _calls()),
]



# ---------------------------------------------------------------- 03.custom_op
# An answer is the translation soft_threshold_onnx(x, threshold: float); the check exports a model of its own with
# it in custom_translation_table (labkit/material/l03_translate.py: ~1-3 s an entry, so these run in the heavy tier).
# Converted to the translation form (soft_threshold_onnx) at stop 46; dropped, their mistake was in the export:
# - "no dynamic_shapes: batch fixed at 2": the check exports with a symbolic batch itself.
# - "exported with xs.double(): float64 in and out": the check's example is float32 (a Cast in the translation stays).
# - "returns the path of the saved file, not the model": the answer no longer exports or saves.
# The Right "ONNX's own Shrink operator, written with onnx.helper" became its translation with op.Shrink.


def _st_shrink(x, threshold: float):
    from onnxscript import opset18 as op
    return op.Shrink(x, bias=threshold, lambd=threshold)


def _st_relu_difference(x, threshold: float):
    """relu(x - t) - relu(-x - t)."""
    from onnxscript import opset18 as op
    return op.Sub(op.Relu(op.Sub(x, threshold)), op.Relu(op.Sub(op.Neg(x), threshold)))


def _st_where(x, threshold: float):
    """The three cases picked with op.Where; the middle one is the Python constant 0.0."""
    from onnxscript import opset18 as op
    inside = op.Where(op.Less(x, -threshold), op.Add(x, threshold), 0.0)
    return op.Where(op.Greater(x, threshold), op.Sub(x, threshold), inside)


def _st_custom_node(x, threshold: float):
    """Fix 2's custom node emitted by the translation: com.example.lab::SoftThreshold."""
    from onnxscript.values import Opset
    return Opset("com.example.lab", 1).SoftThreshold(x, threshold=threshold)


def _st_onnx_domain_node(x, threshold: float):
    """A SoftThreshold node asked of the standard opset, which has none."""
    from onnxscript import opset18 as op
    return op.SoftThreshold(x, threshold=threshold)


def _st_relu_shift(x, threshold: float):
    from onnxscript import opset18 as op
    return op.Relu(op.Sub(x, threshold))


def _st_no_sign(x, threshold: float):
    from onnxscript import opset18 as op
    return op.Relu(op.Sub(op.Abs(x), threshold))


def _st_divide_for_sign(x, threshold: float):
    from onnxscript import opset18 as op
    return op.Mul(op.Div(x, op.Abs(x)), op.Relu(op.Sub(op.Abs(x), threshold)))


def _st_half(x, threshold: float):
    from onnxscript import opset18 as op
    return op.Mul(op.Sign(x), op.Relu(op.Sub(op.Abs(x), 0.5)))


def _st_soft_clip(x, threshold: float):
    """Fix 1's soft_clip with limit = threshold: another operator."""
    from onnxscript import opset18 as op
    return op.Mul(op.Tanh(op.Div(x, threshold)), threshold)


def _st_cast_out(x, threshold: float):
    from onnxscript import opset18 as op
    return op.Cast(op.Mul(op.Sign(x), op.Relu(op.Sub(op.Abs(x), threshold))), to=TensorProto.DOUBLE)


def _st_cast_in(x, threshold: float):
    """x cast to float64 first: the threshold stays float32, so Sub mixes the two."""
    from onnxscript import opset18 as op
    x = op.Cast(x, to=TensorProto.DOUBLE)
    return op.Mul(op.Sign(x), op.Relu(op.Sub(op.Abs(x), threshold)))


def _old_form(threshold):
    """The old answer, export_soft_threshold(threshold) -> onnx.ModelProto: a function of the threshold only."""
    raise AssertionError("the check must refuse a function of (threshold) before calling it")


def _op18():
    from onnxscript import opset18

    return opset18


CORPUS_CUSTOM = [
    Right("ONNX's own Shrink operator (bias = lambd = threshold)", answer=_st_shrink),
    Right("relu(x - t) - relu(-x - t)", answer=_st_relu_difference),
    Right("op.Where over the three cases, 0.0 as a Python constant", answer=_st_where),
    Wrong("the custom node left in (com.example.lab::SoftThreshold, as in Fix 2)", answer=_st_custom_node),
    Wrong("a SoftThreshold node in the ONNX domain (op.SoftThreshold)", answer=_st_onnx_domain_node),
    Wrong("max(x - threshold, 0): the negative side lost", answer=_st_relu_shift),
    Wrong("max(|x| - threshold, 0): the sign lost", answer=_st_no_sign),
    Wrong("x / |x| as the sign: NaN at zero", answer=_st_divide_for_sign),
    Wrong("the notebook's threshold 0.5 hard-coded", answer=_st_half),
    Wrong("the soft_clip of Fix 1 handed in", answer=_st_soft_clip),
    Wrong("a Cast to float64 at the end of the translation", outputs_wrong=False, answer=_st_cast_out),
    Wrong("x cast to float64 at the start of the translation", answer=_st_cast_in),
    Wrong("the old form: export_soft_threshold(threshold), a function of the threshold only", answer=_old_form,
          skipped_skill=True),
    Wrong("a translation returning a Python number", answer=lambda x, threshold: 0.0, skipped_skill=True),
    Wrong("a translation returning None", answer=lambda x, threshold: None, skipped_skill=True),
    Wrong("the input handed back: return x", answer=lambda x, threshold: x, skipped_skill=True),
    Wrong("x back in another form: Max(x, x)", answer=lambda x, threshold: _op18().Max(x, x), skipped_skill=True),
    Wrong("a constant: the notebook's printed result", answer=lambda x, threshold: _op18().Constant(
        value_floats=[0.0] * 14), skipped_skill=True),
]

CORPUS = {
    "03.dynamic_batch": CORPUS_DYNAMIC,
    "03.raw_input": CORPUS_RAW,
    "03.faithful": CORPUS_FAITHFUL,
    "03.custom_op": CORPUS_CUSTOM,
}


# Second-round blind entries (issue 32), measured by this corpus's rule before and after the fixes: tests/corpus/blind2_l03.py.
# Left out of the fast tier: the 12 of 15 measured above 0.15 s an evaluation (they scored by the rule when measured).
from corpus import add_blind, blind2_l03  # noqa: E402

add_blind(CORPUS, blind2_l03, slow={
    'blind2-faith-absolute-1e-5', 'blind2-faith-argmax-only', 'blind2-faith-assert-allclose-normal',
    'blind2-faith-bootstrap-rows', 'blind2-faith-example-only', 'blind2-faith-example-slices',
    'blind2-faith-input-named-input', 'blind2-faith-loose-tolerance', 'blind2-faith-mean-magnitude',
    'blind2-faith-no-try', 'blind2-faith-uniform-sweep', 'blind2-faith-zeros'
})

# Blind round 3 (tests/corpus/blind3_lNN.py): measured first, then added; slow ones scored by hand.
from corpus import add_blind, blind3_l03  # noqa: E402

add_blind(CORPUS, blind3_l03, slow={e.name for e in blind3_l03.CORPUS["03.custom_op"]})

# Blind round 10 (tests/corpus/blind10_l03.py, 31 answers to the translation form by a writer who read only the
# prompt): measured first (/tmp/mx.py at seeds 0 and 20250) — 1 full mark for a wrong answer (a translation that
# emits Max(x, x) and patches onnxruntime.InferenceSession in its own process to run a Shrink instead: the panel's
# ONNX Runtime is fooled), 3 over-credits (float64 out, one custom-domain node, a constant), no false reject; then
# 0, 0, 0: outputs must be float32, a model that gives x back (by ONNX's reference evaluator, which the patch does
# not reach), that ignores x or that holds no standard node is DidNotDo. An export each (about 2 s an evaluation):
# scored by hand, as round 3's.
from corpus import blind10_l03  # noqa: E402

add_blind(CORPUS, blind10_l03, slow={e.name for e in blind10_l03.CORPUS["03.custom_op"]})

# Blind round 12 (tests/corpus/blind12_l03.py): measured first — 3 full marks for wrong answers in 03.faithful (a
# tolerance of 5 %, the caller's module turned to float64, a numpy.bool_ — right: the prompt asks True or False)
# and 2 over-credits (attempts that run nothing or peek at the net, both at the outputs-wrong cap); an earlier
# checkpoint (logits 3 % off) and PyTorch modules' fingerprints close the first two.
from corpus import add_blind, blind12_l03  # noqa: E402

add_blind(CORPUS, blind12_l03, reclassify={
    "blind12-dyn-hand-graph": ("right", "the file is the course model with a dynamic batch, whoever wrote it"),
    "blind12-dyn-edit-dim-param": ("right", "a fixed export whose batch was renamed symbolic runs right at every "
                                            "batch here (Flatten): the file the prompt asks for"),
    "blind12-raw-hand-graph": ("right", "the file computes the course model on raw pixels, whoever wrote it"),
    "blind12-faithful-numpy-bool": ("right", "numpy.bool_ is True or False to every caller that tests it"),
    "blind12-faithful-weights-only": ("attempt", "compares stored weights, runs nothing: wrong verdicts"),
    "blind12-faithful-closure-peek": ("attempt", "the net's kind is not the verdict: its verdicts are wrong"),
})
# Closed after: the lookup tables of the dataset's digits (03.dynamic_batch, 03.raw_input ×2) fail since the check
# feeds 64 images in no data set too (digits nudged by ±2 and blends of two, from the seed: `unseen_digits`).

# Blind round 15 (03.dynamic_batch, 03.raw_input: 43 answers; tests/corpus/blind15_l03.py), measured before any change:
# 5 full marks for wrong answers and 2 over-credits. Three of the full marks are files that compute the course model
# at every batch size, written without the exporter (right, as round 12's). Closed: dividing by the batch's brightest
# pixel instead of 16 (every batch of the check held a pixel of 16: batch 1 is now a faded digit); patching
# onnxruntime's run in the process that judges (ONNX Runtime answering at a batch the file's fixed input refuses is
# an exercise not done; the grader judges in a process of its own anyway); a file whose input was retyped to uint8
# with no Cast, which ONNX Runtime cannot load, kept 1.5 of 4 for its declared input (now at most a quarter).
from corpus import blind15_l03  # noqa: E402

add_blind(CORPUS, blind15_l03, reclassify={
    "blind15-dyn-patched-dim-legacy": ("right", "a fixed export whose batch was renamed symbolic runs right at every "
                                                "batch: the file the prompt asks for"),
    "blind15-dyn-handbuilt-graph": ("right", "the file is the course model with a dynamic batch, whoever wrote it"),
    "blind15-dyn-scan-over-fixed": ("right", "a Scan over a batch-1 graph computes the model at every batch size"),
    "blind15-dyn-patched-dim-dynamo": ("attempt", "renames the batch of a file that reshapes to a fixed size: it "
                                                  "fails at batch 7, wrong outputs"),
})
