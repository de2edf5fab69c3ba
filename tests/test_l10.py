"""Lesson 10: scikit-learn to ONNX, a custom converter, provider placement, IO binding, quiz."""
import copy

import numpy as np
import onnxruntime as ort
import pytest

from labkit import plain
from labkit.checks import evaluate, get
from labkit.material import l10 as learner
from labkit_judges import l10

from corpus.l10 import _bound, _plain_run  # the reference IO-binding loop and its classic mistakes

CPU = "CPUExecutionProvider"


def messages(r):
    return " | ".join(f"{t.name}: {t.message}" for t in r.tests) + " | " + r.message


def failing(r):
    return {t.name: t.message for t in r.tests if not t.passed}


# ---------------------------------------------------------------- reference answers (as the solution notebook)

def sklearn_to_onnx(model, n_features):
    from skl2onnx import to_onnx

    classifier = model[-1] if hasattr(model, "steps") else model
    return to_onnx(model, np.zeros((1, n_features), np.float32), options={id(classifier): {"zipmap": False}})


def _register_clip():
    from skl2onnx import update_registered_converter
    from skl2onnx.algebra.onnx_ops import OnnxMax, OnnxMin

    def shape(operator):
        operator.outputs[0].type = operator.inputs[0].type.__class__(operator.inputs[0].type.shape)

    def convert(scope, operator, container):
        fitted, v = operator.raw_operator, container.target_opset
        low = OnnxMax(operator.inputs[0], fitted.lo_.astype(np.float32), op_version=v)
        OnnxMin(low, fitted.hi_.astype(np.float32), op_version=v, output_names=operator.outputs[:1]).add_to(scope, container)

    update_registered_converter(learner.PerFeatureClip, "TestPerFeatureClip", shape, convert)


def convert_with_clip(model, n_features):
    _register_clip()
    return sklearn_to_onnx(model, n_features)


@pytest.mark.parametrize("ex, answer", [("10.to_onnx", sklearn_to_onnx), ("10.custom_converter", convert_with_clip),
                                        ("10.placement", l10.placement_reference), ("10.io_binding", _bound())])
def test_references_pass_on_two_seeds(ex, answer):
    for seed in (0, 987654):
        r = evaluate(get(ex), answer, seed=seed)
        assert r.status == "passed" and r.points == r.max_points, messages(r)


# ---------------------------------------------------------------- the learner-side material

def test_per_feature_clip_learns_a_range_per_feature_and_is_a_real_estimator():
    from sklearn.base import clone

    x = np.random.default_rng(0).normal(size=(200, 3)).astype(np.float32) * [1, 10, 100]
    clip = learner.PerFeatureClip(0.1).fit(x)
    assert clip.lo_.shape == clip.hi_.shape == (3,) and clip.lo_.dtype == np.float32
    assert np.all(np.diff(clip.hi_ - clip.lo_) > 0)   # the ranges really differ per feature
    out = clip.transform(x * 3)
    assert np.all(out >= clip.lo_) and np.all(out <= clip.hi_)
    assert clone(clip).get_params() == {"q": 0.1}


def test_unregistered_custom_transformer_does_not_convert():
    from skl2onnx import to_onnx
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    class Other(learner.PerFeatureClip):  # a subclass has no converter of its own
        pass

    x = np.random.default_rng(1).normal(size=(60, 4)).astype(np.float32)
    model = make_pipeline(Other(), LogisticRegression()).fit(x, np.arange(60) % 2)
    with pytest.raises(Exception, match="shape calculator"):
        to_onnx(model, x[:1])


@pytest.mark.parametrize("kind", learner.MODEL_KINDS)
def test_fitted_model_is_deterministic(kind):
    x = np.random.default_rng(2).normal(size=(90, 5)).astype(np.float32)
    y = np.arange(90) % 3
    a, b = learner.fitted_model(kind, x, y), learner.fitted_model(kind, x, y)
    np.testing.assert_array_equal(a.predict_proba(x), b.predict_proba(x))


def test_fitted_model_rejects_an_unknown_kind():
    with pytest.raises(ValueError, match="unknown model kind"):
        learner.fitted_model("svm", np.zeros((4, 2), np.float32), np.array([0, 1, 0, 1]))


def _output_buffer(session, rows: int):
    """An output buffer allocated before the run, as 10.io_binding asks."""
    classes = session.get_outputs()[0].shape[1]
    return ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")


def test_bound_session_refuses_run_and_a_new_output_buffer_and_survives_the_copy():
    model, batches, shift, _, _ = l10._bind_data(0)[0]
    session = plain.materialize(plain.Make("labkit.material.l10_bound:bound_session", (model, shift, len(batches[0]))))
    assert isinstance(session, ort.InferenceSession)
    with pytest.raises(RuntimeError, match="only through IO binding"):
        session.run(None, {session.get_inputs()[0].name: batches[0]})
    clone = copy.deepcopy(session)
    assert clone is not session and clone.runs == 0
    name_in, name_out = session.get_inputs()[0].name, session.get_outputs()[0].name
    for k in range(2):  # a new binding and a new output per batch: refused from the second run (new binding first)
        binding = clone.io_binding()
        binding.bind_cpu_input(name_in, batches[k])
        binding.bind_ortvalue_output(name_out, _output_buffer(clone, len(batches[k])))
        if k == 0:
            clone.run_with_iobinding(binding)
        else:
            with pytest.raises(RuntimeError, match="new binding"):
                clone.run_with_iobinding(binding)


def test_bound_session_wants_the_output_bound_before_the_loop_and_one_batch_per_run():
    """Issue 32: an output ONNX Runtime allocates in the loop's first run (bind_output(name, "cpu"): no buffer
    allocated before the loop) and every batch stacked into one run (no loop) are refused; a buffer bound before
    the first run, one batch per run, is not."""
    model, batches, shift, _, _ = l10._bind_data(0)[0]
    rows = len(batches[0])
    make = plain.Make("labkit.material.l10_bound:bound_session", (model, shift, rows))
    session = plain.materialize(make)
    name_in, name_out = session.get_inputs()[0].name, session.get_outputs()[0].name
    binding = session.io_binding()
    binding.bind_cpu_input(name_in, batches[0])
    binding.bind_output(name_out, "cpu")
    with pytest.raises(RuntimeError, match="run 1: no output buffer was bound before it"):
        session.run_with_iobinding(binding)
    stacked = np.concatenate(batches)
    session = plain.materialize(make)
    binding = session.io_binding()
    binding.bind_cpu_input(name_in, stacked)
    binding.bind_ortvalue_output(name_out, _output_buffer(session, len(stacked)))
    with pytest.raises(RuntimeError, match=f"run 1: {len(stacked)} rows in one run, a batch has {rows}"):
        session.run_with_iobinding(binding)
    session = plain.materialize(make)
    binding = session.io_binding()
    binding.bind_ortvalue_output(name_out, _output_buffer(session, rows))
    for x in batches:
        binding.bind_cpu_input(name_in, x)
        session.run_with_iobinding(binding)
    assert session.runs == len(batches)


def test_only_the_sessions_own_binding_gives_the_models_outputs():
    """The bound session's classes come out right through its own run_with_iobinding only: the class's run called
    past it, its C session, a session of the same bytes give them rotated (10.io_binding's process is judged by
    what it produces, not by a method an answer can call around)."""
    model, batches, shift, w, b = l10._bind_data(0)[0]
    session = plain.materialize(plain.Make("labkit.material.l10_bound:bound_session", (model, shift)))
    want = l10._softmax_rows(batches[0], w, b)
    name_in, name_out = session.get_inputs()[0].name, session.get_outputs()[0].name
    binding = session.io_binding()
    binding.bind_cpu_input(name_in, batches[0])
    binding.bind_ortvalue_output(name_out, _output_buffer(session, len(batches[0])))
    session.run_with_iobinding(binding)
    np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], want, rtol=1e-5, atol=1e-6)
    around = [ort.InferenceSession.run(session, None, {name_in: batches[0]})[0],
              session._sess.run([name_out], {name_in: batches[0]}, None)[0],
              ort.InferenceSession(model, providers=[CPU]).run(None, {name_in: batches[0]})[0]]
    for got in around:
        assert np.abs(got - want).max() > 1e-2
        np.testing.assert_allclose(got, np.roll(want, shift, axis=1), rtol=1e-5, atol=1e-6)


def test_softmax_model_matches_numpy():
    rng = np.random.default_rng(3)
    w, b = rng.normal(size=(6, 4)).astype(np.float32), rng.normal(size=4).astype(np.float32)
    x = rng.normal(size=(5, 6)).astype(np.float32)
    sess = ort.InferenceSession(l10.softmax_model(w, b, "a", "p"), providers=[CPU])
    logits = x.astype(np.float64) @ w + b
    want = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(sess.run(None, {"a": x})[0], want / want.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_hidden_inputs_change_with_the_seed():
    a, b = l10._to_onnx_data(0), l10._to_onnx_data(1)
    assert not np.array_equal(a[0][1], b[0][1])
    pa, pb = l10._placement_data(0), l10._placement_data(1)
    assert [c[1:] for c in pa[-3:]] != [c[1:] for c in pb[-3:]]


# ---------------------------------------------------------------- precise messages for typical mistakes

def zipmap_kept(model, n_features):
    from skl2onnx import to_onnx

    return to_onnx(model, np.zeros((1, n_features), np.float32))


def double_input(model, n_features):
    from skl2onnx import to_onnx

    clf = model[-1] if hasattr(model, "steps") else model
    return to_onnx(model, np.zeros((1, n_features)), options={id(clf): {"zipmap": False}})


def scaler_left_out(model, n_features):
    return sklearn_to_onnx(model[-1] if hasattr(model, "steps") else model, n_features)


@pytest.mark.parametrize("wrong, test, message", [
    (zipmap_kept, "logreg, 7 features, 4 classes", "still ends with ZipMap"),
    (double_input, "tree, 9 features, 3 classes", "tensor(double)"),
    (scaler_left_out, "scaler+logreg, 12 features, 3 classes", "differ from scikit-learn's"),
])
def test_to_onnx_wrong_answers_fail_precisely(wrong, test, message):
    """(Serialized bytes are a model too: the prompt allows them, test_to_onnx_accepts_bytes.)"""
    r = evaluate(get("10.to_onnx"), wrong)
    assert r.points <= r.max_points / 2
    assert test in failing(r) and message in failing(r)[test], messages(r)


def scalar_clip(model, n_features):
    from skl2onnx import update_registered_converter
    from skl2onnx.algebra.onnx_ops import OnnxClip

    def shape(operator):
        operator.outputs[0].type = operator.inputs[0].type.__class__(operator.inputs[0].type.shape)

    def convert(scope, operator, container):
        fitted, v = operator.raw_operator, container.target_opset
        OnnxClip(operator.inputs[0], np.array(fitted.lo_.min(), np.float32), np.array(fitted.hi_.max(), np.float32),
                 op_version=v, output_names=operator.outputs[:1]).add_to(scope, container)

    update_registered_converter(learner.PerFeatureClip, "TestPerFeatureClip", shape, convert)
    return sklearn_to_onnx(model, n_features)


def test_scalar_clip_fails_on_unseen_rows():
    r = evaluate(get("10.custom_converter"), scalar_clip)
    assert r.points <= r.max_points / 2
    assert all("differ from scikit-learn's" in m for m in failing(r).values()), messages(r)
    _register_clip()  # leave the right converter registered for later tests


def test_placement_messages_name_the_rule():
    def first_takes_all(ops, providers, supports, fallback=True):
        return [providers[0]] * len(ops)

    def ignores_fallback(ops, providers, supports, fallback=True):
        return l10.placement_reference(ops, providers, supports, True)

    bad = failing(evaluate(get("10.placement"), first_takes_all))
    assert "does not support Reshape" in bad["one accelerator, the rest to the CPU"]
    bad = failing(evaluate(get("10.placement"), ignores_fallback))
    assert "fallback is off" in bad["fallback off, a node left over"]
    assert "conflicting configuration" in bad["fallback off with the CPU listed"]


def test_io_binding_messages():
    bad = failing(evaluate(get("10.io_binding"), _plain_run))
    assert len(bad) == 3 and all("only through IO binding" in m for m in bad.values())
    r = evaluate(get("10.io_binding"), _bound(copy=False))  # keeps views of the bound buffer
    assert "view of the bound buffer" in failing(r)["5 batches of 32 rows, 10 classes"], messages(r)
    assert r.points <= r.max_points / 2


# ---------------------------------------------------------------- hostile answers give a result, never an exception

def _stub(*args, **kwargs):
    raise NotImplementedError("write your solution here")


@pytest.mark.parametrize("ex", ["10.to_onnx", "10.custom_converter", "10.placement", "10.io_binding"])
@pytest.mark.parametrize("answer", [None, 42, "model.onnx", _stub, lambda *a, **k: 1 / 0,
                                    lambda *a, **k: None, lambda *a, **k: float("nan"), lambda *a, **k: {"a": 1}])
def test_hostile_answers_get_a_result(ex, answer):
    r = evaluate(get(ex), answer)
    assert r.points == 0 or r.points <= r.max_points / 2, messages(r)
    assert r.status in ("failed", "not_attempted", "error"), r.status


def test_quiz_key_is_balanced_and_complete():
    from labkit.checks import quiz_answers

    key = quiz_answers("10.quiz")
    qs = get("10.quiz").questions
    assert [q.key for q in qs] == sorted(key) and len(qs) >= 5
    counts = {letter: list(key.values()).count(letter) for letter in "abc"}
    assert max(counts.values()) <= 0.4 * len(qs), counts
    assert evaluate(get("10.quiz"), dict(key)).status == "passed"
    assert evaluate(get("10.quiz"), {k: "a" for k in key}).points < get("10.quiz").points


def test_to_onnx_accepts_bytes():
    """The prompt allows the model or its serialized bytes; both get full marks."""
    r = evaluate(get("10.to_onnx"), lambda m, n: sklearn_to_onnx(m, n).SerializeToString())
    assert r.status == "passed" and r.points == r.max_points, messages(r)
