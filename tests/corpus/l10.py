"""Lesson 10: answers learners write for converting scikit-learn models, a custom converter, provider
placement and IO binding."""
import numpy as np

from corpus import Right, Wrong

CPU = "CPUExecutionProvider"


def _skl():
    import skl2onnx
    from skl2onnx.common.data_types import FloatTensorType

    return skl2onnx, FloatTensorType


def _classifier(model):
    return model.steps[-1][1] if hasattr(model, "steps") else model


# ---------------------------------------------------------------- 10.to_onnx

def _convert_sklearn_by_type(model, n_features):
    skl2onnx, FloatTensorType = _skl()
    clf = _classifier(model)
    return skl2onnx.convert_sklearn(model, initial_types=[("input", FloatTensorType([None, n_features]))],
                                    options={type(clf): {"zipmap": False}})


def _to_onnx_every_step(model, n_features):
    skl2onnx, _ = _skl()
    steps = [s for _, s in model.steps] if hasattr(model, "steps") else [model]
    opts = {id(s): {"zipmap": False} for s in steps if hasattr(s, "predict_proba")}
    return skl2onnx.to_onnx(model, np.ones((3, n_features), dtype=np.float32), options=opts)


def _zipmap_kept(model, n_features):
    return _skl()[0].to_onnx(model, np.zeros((1, n_features), np.float32))


def _options_on_pipeline(model, n_features):
    return _skl()[0].to_onnx(model, np.zeros((1, n_features), np.float32), options={id(model): {"zipmap": False}})


def _double_input(model, n_features):
    clf = _classifier(model)
    return _skl()[0].to_onnx(model, np.zeros((1, n_features)), options={id(clf): {"zipmap": False}})


def _fixed_batch(model, n_features):
    skl2onnx, FloatTensorType = _skl()
    clf = _classifier(model)
    return skl2onnx.convert_sklearn(model, initial_types=[("X", FloatTensorType([1, n_features]))],
                                    options={id(clf): {"zipmap": False}})


def _classifier_only(model, n_features):
    clf = _classifier(model)
    return _skl()[0].to_onnx(clf, np.zeros((1, n_features), np.float32), options={id(clf): {"zipmap": False}})


def _features_64(model, n_features):
    clf = _classifier(model)
    return _skl()[0].to_onnx(model, np.zeros((1, 64), np.float32), options={id(clf): {"zipmap": False}})


def _assumes_pipeline(model, n_features):
    return _skl()[0].to_onnx(model, np.zeros((1, n_features), np.float32), options={id(model[-1]): {"zipmap": False}})


def _zipmap_columns(model, n_features):
    clf = _classifier(model)
    return _skl()[0].to_onnx(model, np.zeros((1, n_features), np.float32), options={id(clf): {"zipmap": "columns"}})


def _returns_bytes(model, n_features):
    return _convert_sklearn_by_type(model, n_features).SerializeToString()


# ---------------------------------------------------------------- 10.custom_converter

def _register(converter):
    from skl2onnx import update_registered_converter

    from labkit.material.l10 import PerFeatureClip

    def shape(operator):
        operator.outputs[0].type = operator.inputs[0].type.__class__(operator.inputs[0].type.shape)

    update_registered_converter(PerFeatureClip, "LabkitPerFeatureClip", shape, converter)


def _custom(converter, zipmap=False):
    def convert(model, n_features):
        _register(converter)
        options = {} if zipmap else {id(model.steps[-1][1]): {"zipmap": False}}
        return _skl()[0].to_onnx(model, np.zeros((1, n_features), np.float32), options=options)
    return convert


def _conv_onnx_ops(body):
    """A converter written with skl2onnx's algebra (OnnxMax, OnnxMin...): body(x, op, version) -> node."""
    def converter(scope, operator, container):
        from skl2onnx.algebra import onnx_ops

        node = body(onnx_ops, operator.inputs[0], operator.raw_operator, container.target_opset)
        final = onnx_ops.OnnxIdentity(node, op_version=container.target_opset, output_names=operator.outputs[:1])
        final.add_to(scope, container)
    return converter


def _conv_container(scope, operator, container):
    """Right: plain container.add_node with initializers, Max then Min."""
    from onnx import TensorProto

    op = operator.raw_operator
    lo = scope.get_unique_variable_name("lo")
    hi = scope.get_unique_variable_name("hi")
    mid = scope.get_unique_variable_name("above_lo")
    container.add_initializer(lo, TensorProto.FLOAT, [len(op.lo_)], op.lo_.astype(np.float32).tolist())
    container.add_initializer(hi, TensorProto.FLOAT, [len(op.hi_)], op.hi_.astype(np.float32).tolist())
    container.add_node("Max", [operator.inputs[0].full_name, lo], [mid], name=scope.get_unique_operator_name("Max"))
    container.add_node("Min", [mid, hi], [operator.outputs[0].full_name], name=scope.get_unique_operator_name("Min"))


_ALGEBRA_RIGHT = _conv_onnx_ops(lambda ops, x, op, v: ops.OnnxMax(
    ops.OnnxMin(x, op.hi_.astype(np.float32), op_version=v), op.lo_.astype(np.float32), op_version=v))
_SCALAR_CLIP = _conv_onnx_ops(lambda ops, x, op, v: ops.OnnxClip(
    x, np.array(op.lo_.min(), np.float32), np.array(op.hi_.max(), np.float32), op_version=v))
_ONLY_LOW = _conv_onnx_ops(lambda ops, x, op, v: ops.OnnxMax(x, op.lo_.astype(np.float32), op_version=v))
_IDENTITY = _conv_onnx_ops(lambda ops, x, op, v: ops.OnnxIdentity(x, op_version=v))
_SWAPPED = _conv_onnx_ops(lambda ops, x, op, v: ops.OnnxMax(
    ops.OnnxMin(x, op.lo_.astype(np.float32), op_version=v), op.hi_.astype(np.float32), op_version=v))
_FIRST_FEATURE = _conv_onnx_ops(lambda ops, x, op, v: ops.OnnxClip(
    x, np.array(op.lo_[0], np.float32), np.array(op.hi_[0], np.float32), op_version=v))
_DOUBLE_BOUNDS = _conv_onnx_ops(lambda ops, x, op, v: ops.OnnxMin(
    ops.OnnxMax(x, op.lo_.astype(np.float64), op_version=v), op.hi_.astype(np.float64), op_version=v))
_FIXED = np.linspace(-1.0, 1.0, 5).astype(np.float32)
_HARD_CODED = _conv_onnx_ops(lambda ops, x, op, v: ops.OnnxMin(
    ops.OnnxMax(x, -_FIXED, op_version=v), _FIXED + 2, op_version=v))


# ---------------------------------------------------------------- 10.placement

def _place_per_node(ops, providers, supports, fallback=True):
    if not fallback and CPU in providers:
        return None
    out = []
    for op in ops:
        ep = next((p for p in providers if p == CPU or op in supports.get(p, ())), None)
        if ep is None and not fallback:
            return None
        out.append(ep or CPU)
    return out


def _place_sets(ops, providers, supports, fallback=True):
    usable = [p for p in providers if p == CPU or p in supports]
    if not fallback and CPU in usable:
        return None
    if fallback and CPU not in usable:
        usable.append(CPU)
    runs = {p: set(ops) if p == CPU else set(supports[p]) for p in usable}
    placed = [next((p for p in usable if op in runs[p]), None) for op in ops]
    return None if None in placed else placed


def _first_takes_all(ops, providers, supports, fallback=True):
    return [providers[0]] * len(ops)


def _no_cpu_added(ops, providers, supports, fallback=True):
    out = []
    for op in ops:
        out.append(next((p for p in providers if p == CPU or op in supports.get(p, ())), "none"))
    return out


def _missing_supports_all(ops, providers, supports, fallback=True):
    if not fallback and CPU in providers:
        return None
    out = [next((p for p in providers if p == CPU or op in supports.get(p, ops)), None) for op in ops]
    if None in out and not fallback:
        return None
    return [p or CPU for p in out]


def _ignores_fallback(ops, providers, supports, fallback=True):
    return _place_per_node(ops, providers, supports, True)


def _cpu_listed_ok(ops, providers, supports, fallback=True):
    return _place_per_node(ops, [p for p in providers if p != CPU], supports, fallback)


def _cpu_always_last(ops, providers, supports, fallback=True):
    if not fallback and CPU in providers:
        return None
    return _place_per_node(ops, [p for p in providers if p != CPU], supports, fallback)


def _last_provider_wins(ops, providers, supports, fallback=True):
    return _place_per_node(ops, list(reversed(providers)), supports, fallback)


# ---------------------------------------------------------------- 10.io_binding

def _ort():
    import onnxruntime as ort

    return ort


def _bound_copy_outputs(session, batches):
    binding = session.io_binding()
    binding.bind_output(session.get_outputs()[0].name, "cpu")
    parts = []
    for x in batches:
        binding.bind_cpu_input(session.get_inputs()[0].name, x)
        session.run_with_iobinding(binding)
        parts.append(binding.copy_outputs_to_cpu()[0])
    return np.concatenate(parts)


def _bound_update_inplace(session, batches, copy=True):
    ort = _ort()
    first = np.array(batches[0]) if copy else np.ascontiguousarray(batches[0])
    x_value = ort.OrtValue.ortvalue_from_numpy(first)  # wraps that memory: update_inplace writes into it
    n_classes = session.get_outputs()[0].shape[-1]
    out = ort.OrtValue.ortvalue_from_shape_and_type((len(batches[0]), n_classes), np.float32)
    binding = session.io_binding()
    binding.bind_ortvalue_input(session.get_inputs()[0].name, x_value)
    binding.bind_ortvalue_output(session.get_outputs()[0].name, out)
    results = []
    for x in batches:
        x_value.update_inplace(np.ascontiguousarray(x))
        session.run_with_iobinding(binding)
        results.append(np.array(out.numpy()))
    return np.vstack(results)


def _plain_run(session, batches):
    return np.concatenate([session.run(None, {session.get_inputs()[0].name: x})[0] for x in batches])


def _new_binding_each_batch(session, batches):
    ort = _ort()
    parts = []
    for x in batches:
        binding = session.io_binding()
        out = ort.OrtValue.ortvalue_from_shape_and_type((len(x), session.get_outputs()[0].shape[1]), np.float32)
        binding.bind_cpu_input(session.get_inputs()[0].name, x)
        binding.bind_ortvalue_output(session.get_outputs()[0].name, out)
        session.run_with_iobinding(binding)
        parts.append(out.numpy().copy())
    return np.concatenate(parts)


def _bound(copy=True, classes=None, stack=False, last_only=False):
    def predict_bound(session, batches):
        ort = _ort()
        n = classes or session.get_outputs()[0].shape[1]
        out = ort.OrtValue.ortvalue_from_shape_and_type((len(batches[0]), n), np.float32)
        binding = session.io_binding()
        binding.bind_ortvalue_output(session.get_outputs()[0].name, out)
        parts = []
        for x in batches:
            binding.bind_cpu_input(session.get_inputs()[0].name, x)
            session.run_with_iobinding(binding)
            parts.append(out.numpy().copy() if copy else out.numpy())
        if last_only:
            return parts[-1]
        return np.stack(parts) if stack else np.concatenate(parts)
    return predict_bound


def _ort_values(session, batches):
    ort = _ort()
    out = []
    for x in batches:
        res = session.run_with_ort_values(None, {session.get_inputs()[0].name: ort.OrtValue.ortvalue_from_numpy(x)})
        out.append(res[0].numpy())
    return np.concatenate(out)


def _past_the_binding(how):
    """Skips the skill around the check's session: the class's run called past the session's refusal, the C
    session under it, a session of its own built from the model's bytes, or the class's run_with_iobinding
    past the session's own."""
    def predict(session, batches):
        ort = _ort()
        name = session.get_inputs()[0].name
        own = ort.InferenceSession(session._model_bytes) if how == "own session" else None
        parts = []
        for x in batches:
            if how == "class run":
                parts.append(ort.InferenceSession.run(session, None, {name: x})[0])
            elif how == "C session":
                parts.append(session._sess.run([session.get_outputs()[0].name], {name: x}, None)[0])
            elif how == "own session":
                parts.append(own.run(None, {name: x})[0])
            else:
                binding = session.io_binding()
                binding.bind_cpu_input(name, x)
                binding.bind_output(session.get_outputs()[0].name, "cpu")
                ort.InferenceSession.run_with_iobinding(session, binding)
                parts.append(binding.copy_outputs_to_cpu()[0])
        return np.concatenate(parts)
    return predict


def _past_and_unrotated(route: str):
    """Runs every batch at once past the binding, by `route`, then undoes the session's class rotation."""
    def predict(session, batches):
        import onnxruntime as ort

        feed = {session.get_inputs()[0].name: np.concatenate(batches)}
        out_name = session.get_outputs()[0].name
        if route == "class run":
            out = ort.InferenceSession.run(session, [out_name], feed)[0]
        else:
            out = session._sess.run([out_name], feed, None)[0]
        return np.roll(out, -session._shift, axis=-1)
    return predict


CORPUS = {
    "10.to_onnx": [
        Right("convert_sklearn, FloatTensorType([None, n]), options keyed by class", answer=_convert_sklearn_by_type),
        Right("to_onnx with a 3-row sample, zipmap off for every step with predict_proba", answer=_to_onnx_every_step),
        Wrong("ZipMap kept (default options)", answer=_zipmap_kept),
        Right("zipmap off keyed by the id of the model itself", answer=_options_on_pipeline),
        Wrong("float64 sample: a double input", answer=_double_input),
        Wrong("fixed batch of 1", answer=_fixed_batch),
        Wrong("only the classifier converted (the scaler left out)", answer=_classifier_only),
        Wrong("64 features hard-coded", answer=_features_64),
        Wrong("model[-1] on a model that is not a Pipeline", answer=_assumes_pipeline),
        Wrong("zipmap='columns': one output per class", answer=_zipmap_columns),
        Right("returns serialized bytes (the prompt allows a ModelProto or its bytes)", answer=_returns_bytes),
    ],
    "10.custom_converter": [
        Right("container.add_node with initializers", answer=_custom(_conv_container)),
        Right("algebra, Min first then Max", answer=_custom(_ALGEBRA_RIGHT)),
        Wrong("ONNX Clip with scalar bounds (smallest lo_, largest hi_)", answer=_custom(_SCALAR_CLIP)),
        Wrong("lower bound only", answer=_custom(_ONLY_LOW)),
        Wrong("no clipping (Identity)", answer=_custom(_IDENTITY)),
        Wrong("lo_ and hi_ swapped", answer=_custom(_SWAPPED)),
        Wrong("first feature's bounds for every feature", answer=_custom(_FIRST_FEATURE)),
        Wrong("bounds as float64", answer=_custom(_DOUBLE_BOUNDS)),
        Wrong("bounds typed in from one fitted model", answer=_custom(_HARD_CODED)),
        Wrong("right converter, ZipMap kept", answer=_custom(_conv_container, zipmap=True)),
    ],
    "10.placement": [
        Right("per node: the first listed provider that supports it", answer=_place_per_node),
        Right("usable providers first, CPU appended", answer=_place_sets),
        Wrong("the first provider takes every node", answer=_first_takes_all),
        Wrong("no CPU fallback added", answer=_no_cpu_added),
        Wrong("a provider missing from the build supports everything", answer=_missing_supports_all),
        Wrong("fallback flag ignored", answer=_ignores_fallback),
        Wrong("CPU listed with fallback off accepted", answer=_cpu_listed_ok),
        Wrong("CPU always treated as last", answer=_cpu_always_last),
        Wrong("the last listed provider wins", answer=_last_provider_wins),
    ],
    "10.io_binding": [
        # reclassified (issue 32, with blind2-iob-ort-allocates-output): ONNX Runtime allocates this output inside
        # the loop's first run, and the prompt asks for one output buffer allocated before the loop
        Wrong("bind_output('cpu') once, copy_outputs_to_cpu", answer=_bound_copy_outputs, outputs_wrong=False),
        Right("input OrtValue (on a copy) updated in place, output OrtValue", answer=_bound_update_inplace),
        Wrong("input OrtValue wrapping the caller's first batch, overwritten in place",
              answer=lambda session, batches: _bound_update_inplace(session, batches, copy=False), outputs_wrong=False),
        Wrong("session.run per batch", answer=_plain_run),
        Wrong("new binding and output each batch", answer=_new_binding_each_batch),
        Wrong("out.numpy() kept without a copy", answer=_bound(copy=False)),
        Wrong("10 classes hard-coded", answer=_bound(classes=10)),
        Wrong("stacked per batch (3-D)", answer=_bound(stack=True)),
        Wrong("last batch only", answer=_bound(last_only=True)),
        Wrong("run_with_ort_values instead of a binding", answer=_ort_values),
        Wrong("InferenceSession.run called past the check's refusal", answer=_past_the_binding("class run"),
              skipped_skill=True),
        Wrong("the C session under it (session._sess.run)", answer=_past_the_binding("C session"), skipped_skill=True),
        Wrong("a session of its own from the model's bytes", answer=_past_the_binding("own session"),
              skipped_skill=True),
        Wrong("the class's run_with_iobinding past the session's own", answer=_past_the_binding("class binding"),
              skipped_skill=True),
        # the same two routes with the session's own class rotation undone by hand: in the confined call the session
        # is served from another process, and neither the class's run nor its shift is there to reach
        Wrong("InferenceSession.run past the check, classes turned back by session._shift",
              answer=_past_and_unrotated("class run"), outputs_wrong=False, skipped_skill=True),
        Wrong("the C session under it, classes turned back by session._shift",
              answer=_past_and_unrotated("C session"), outputs_wrong=False, skipped_skill=True),
    ],
}


# Blind entries (issue 32): written by a helper who never read the judges or this corpus, measured by this
# corpus's rule before and after the fixes (tests/corpus/blind_l10.py, unchanged). Before, blind-binding-per-batch
# (a new IOBinding per batch, one output buffer) scored full marks; the session now refuses a second binding.
from corpus.blind_l10 import CORPUS as _BLIND  # noqa: E402

CORPUS["10.io_binding"] += _BLIND["10.io_binding"]


# Second-round blind entries (issue 32), measured by this corpus's rule before and after the fixes: tests/corpus/blind2_l10.py.
# Left out of the fast tier: the 2 of 16 measured above 0.15 s an evaluation (they scored by the rule when measured).
from corpus import add_blind, blind2_l10  # noqa: E402

add_blind(CORPUS, blind2_l10, slow={
    'blind2-iob-fresh-session', 'blind2-iob-ortvalue-prefilled-result'
})

# Blind round 3 (tests/corpus/blind3_lNN.py): measured first, then added; slow ones scored by hand.
from corpus import add_blind, blind3_l10  # noqa: E402

add_blind(CORPUS, blind3_l10, slow={e.name for e in blind3_l10.CORPUS["10.to_onnx"]} | {e.name for e in blind3_l10.CORPUS["10.custom_converter"]},
          reclassify={"blind3-iob-base-run-with-iobinding": (
              "right", "it binds one output buffer before the loop and runs every batch through one binding: the "
                       "class's run_with_iobinding called on the session is the session's own, now that the session "
                       "is served to a confined answer instead of patched in its process")})

# Blind round 5 (tests/corpus/blind5_l10.py), the served session: measured first (before it, 2 false accepts; with it,
# 1 false reject, session.create_ortvalue_from_shape_and_type, which the stand-in then gained), then added.
from corpus import blind5_l10  # noqa: E402

add_blind(CORPUS, blind5_l10, reclassify={
    "blind5-float64-result": ("right", "the prompt asks for one array of shape (len(batches) * rows, classes), not its "
                                       "dtype; every batch ran through the one binding"),
    "blind5-cache-across-calls": ("right", "every batch the check gives runs through the one binding: its batches "
                                           "never repeat within a call, and each call starts in a fresh process"),
})

# Blind round 8 (tests/corpus/blind8_l10.py, 33 answers to 10.to_onnx and 10.custom_converter by a writer who read
# only the prompts): measured first at two seeds — 2 full marks for wrong answers (each changed the caller's fitted
# scikit-learn model in place, which the check did not look at), 0 over-credits, 0 false rejects; after the check
# compares a scikit-learn argument's pickle before and after the call, 0, 0, 0. Each entry converts a model (about
# 1 s an evaluation): the 25 that passed before the fix were scored by hand as they were measured; the 8 that guard
# the fix (the two mutations, the six right answers) run in the heavy tier.
from corpus import blind8_l10  # noqa: E402

_BLIND8_GUARDS = {"blind8-to-mutates-model-float32", "blind8-cc-mutates-bounds"} | {
    e.name for entries in blind8_l10.CORPUS.values() for e in entries if isinstance(e, Right)}
add_blind(CORPUS, blind8_l10, slow={e.name for entries in blind8_l10.CORPUS.values() for e in entries} - _BLIND8_GUARDS)

# Blind round 12 (tests/corpus/blind12_l10.py): measured — 2 full marks in 10.placement (None for an empty graph
# with the fallback off, and a tuple where the prompt says a list) and 3 over-credits of attempts labelled as
# shortcuts; 10.io_binding held (its bypasses of the served session are refused).
from corpus import add_blind, blind12_l10  # noqa: E402

add_blind(CORPUS, blind12_l10, reclassify={
    "blind12-place-cpu-build": ("attempt", "reads this machine's providers instead of `supports`: wrong places"),
    "blind12-place-ort-available": ("attempt", "reads this machine's providers instead of `supports`"),
    "blind12-bind-one-run": ("attempt", "one run over every batch, refused by the session: an attempt"),
})
# Closed after: an empty graph with the fallback off (ORT 1.31.1 creates that session: no node needs the CPU) is a
# fixed case, and a tuple where the prompt says a list fails (the form the learner side recorded).

# Blind round 14 (tests/corpus/blind14_l10.py, 17 answers to 10.placement, after the empty graph and the list form):
# measured first — no full marks for a wrong answer, no false reject, 2 over-credits of attempts labelled as
# shortcuts (as blind12's "place-ort-available").
from corpus import blind14_l10  # noqa: E402

add_blind(CORPUS, blind14_l10, reclassify={
    "blind14-place-first-provider": ("attempt", "a wrong rule of the partitioner (the first listed provider takes "
                                                "what it supports, the rest the CPU): wrong places"),
    "blind14-place-ask-real-ort": ("attempt", "reads this machine's providers instead of `supports`: wrong places"),
})

# Blind round 15 (10.io_binding, 20 answers; tests/corpus/blind15_l10.py), measured before any change: 1 false accept
# and 1 over-credit. Binding each batch by raw address (bind_input with b.ctypes.data) scored full: every batch of the
# check was C-ordered, and a Fortran-ordered one is read wrongly that way, so two of the check's batches are
# Fortran-ordered now. One run over all the batches at once was right on the test of one batch (1 of 3 points): a
# run the session refuses as "more than one batch" is now an exercise not done.
from corpus import blind15_l10  # noqa: E402

add_blind(CORPUS, blind15_l10)
