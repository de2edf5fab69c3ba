"""Blind corpus round 8, lesson 10 (written without seeing the judges)."""
import copy
import os
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
from skl2onnx import convert_sklearn, to_onnx, update_registered_converter
from skl2onnx.algebra.onnx_ops import OnnxClip, OnnxIdentity, OnnxMax, OnnxMin
from skl2onnx.common.data_types import DoubleTensorType, FloatTensorType
from sklearn.pipeline import Pipeline
from sklearn.tree import DecisionTreeClassifier

from corpus import Right, Wrong
from labkit.material.l10 import PerFeatureClip


def _final(model):
    return model.steps[-1][1] if isinstance(model, Pipeline) else model


# ============================================================== 10.to_onnx

# --- Right
def r_convert_sklearn_named_input(model, n_features):
    """convert_sklearn with explicit initial_types (input named 'features'), options keyed by class, bytes."""
    clf = _final(model)
    onx = convert_sklearn(model, initial_types=[("features", FloatTensorType([None, int(n_features)]))],
                          options={type(clf): {"zipmap": False}}, target_opset=17)
    return onx.SerializeToString()


def r_pipeline_id(model, n_features):
    """to_onnx on a zero sample, options keyed by id() of the whole model (skl2onnx passes it to the last step),
    a deep copy converted so nothing can touch the caller's object."""
    m = copy.deepcopy(model)
    sample = np.zeros((2, n_features), dtype=np.float32)
    return to_onnx(m, sample, options={id(m): {"zipmap": False}}, target_opset={"": 15, "ai.onnx.ml": 1})


def r_strip_label_output(model, n_features):
    """ZipMap off, then only the probabilities tensor kept as graph output (the label output dropped)."""
    clf = _final(model)
    onx = to_onnx(model, np.ones((1, n_features), np.float32), options={id(clf): {"zipmap": False}},
                  target_opset=18)
    keep = [o for o in onx.graph.output if o.name == "probabilities"]
    del onx.graph.output[:]
    onx.graph.output.extend(keep)
    onnx.checker.check_model(onx)
    return onx


# --- Wrong
def w_zipmap_on(model, n_features):
    return to_onnx(model, np.zeros((1, n_features), np.float32), target_opset=17)


def w_float64(model, n_features):
    clf = _final(model)
    return to_onnx(model, np.zeros((1, n_features)), options={id(clf): {"zipmap": False}}, target_opset=17)


def w_fixed_batch(model, n_features):
    clf = _final(model)
    return convert_sklearn(model, initial_types=[("X", FloatTensorType([1, n_features]))],
                           options={id(clf): {"zipmap": False}}, target_opset=17)


def w_lesson_width(model, n_features):
    clf = _final(model)
    return convert_sklearn(model, initial_types=[("X", FloatTensorType([None, 64]))],
                           options={id(clf): {"zipmap": False}}, target_opset=17)


def w_returns_path(model, n_features):
    clf = _final(model)
    onx = to_onnx(model, np.zeros((1, n_features), np.float32), options={id(clf): {"zipmap": False}},
                  target_opset=17)
    # (edited when added: one fixed folder, not a new one per call, so the test suite leaves no clutter)
    folder = os.path.join(tempfile.gettempdir(), "onnx-lab-blind8")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    onnx.save(onx, path)
    return path


def w_raw_scores(model, n_features):
    """raw_scores=True: decision values, not probabilities (a tree happens to give the same)."""
    clf = _final(model)
    return to_onnx(model, np.zeros((1, n_features), np.float32),
                   options={id(clf): {"zipmap": False, "raw_scores": True}}, target_opset=17)


def w_label_only(model, n_features):
    """keeps the wrong output: only 'label'."""
    clf = _final(model)
    onx = to_onnx(model, np.zeros((1, n_features), np.float32), options={id(clf): {"zipmap": False}},
                  target_opset=17)
    keep = [o for o in onx.graph.output if o.name == "label"]
    del onx.graph.output[:]
    onx.graph.output.extend(keep)
    return onx


def w_opset_too_high(model, n_features):
    """'the newest opset': ONNX's version + 1 is beyond what onnx knows -> raises."""
    clf = _final(model)
    return to_onnx(model, np.zeros((1, n_features), np.float32), options={id(clf): {"zipmap": False}},
                   target_opset=onnx.defs.onnx_opset_version() + 2)


def w_mutates_model(model, n_features):
    """casts the fitted classifier's parameters to float32 in place 'to match the float32 graph':
    the caller's model is changed (predictions nearly equal)."""
    clf = _final(model)
    for attr in ("coef_", "intercept_"):
        if hasattr(clf, attr):
            setattr(clf, attr, getattr(clf, attr).astype(np.float32))
    if isinstance(model, Pipeline):
        for _, step in model.steps[:-1]:
            for attr in ("mean_", "scale_"):
                if getattr(step, attr, None) is not None:
                    setattr(step, attr, getattr(step, attr).astype(np.float32))
    return to_onnx(model, np.zeros((1, n_features), np.float32), options={id(clf): {"zipmap": False}},
                   target_opset=17)


# --- shortcuts (skip the skill)
def _proba_graph(proba_node_fn, n_features, n_classes, inits):
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", n_features])
    p = helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["N", n_classes])
    nodes = proba_node_fn()
    g = helper.make_graph(nodes, "shortcut", [x], [p], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def s_constant_prior(model, n_features):
    """every row gets the class prior seen on made-up calibration rows: a constant model."""
    calib = np.random.default_rng(0).normal(size=(256, n_features)).astype(np.float32)
    prior = model.predict_proba(calib).mean(axis=0).astype(np.float32)
    k = len(prior)
    inits = [numpy_helper.from_array(prior.reshape(1, k), "prior"),
             numpy_helper.from_array(np.array([0], np.int64), "zero"),
             numpy_helper.from_array(np.array([1], np.int64), "one"),
             numpy_helper.from_array(np.array([k], np.int64), "k")]

    def nodes():
        return [helper.make_node("Shape", ["X"], ["shp"]),
                helper.make_node("Slice", ["shp", "zero", "one"], ["n"]),
                helper.make_node("Concat", ["n", "one"], ["reps"], axis=0),
                helper.make_node("Tile", ["prior", "reps"], ["probabilities"])]
    return _proba_graph(nodes, n_features, k, inits)


def s_surrogate_tree(model, n_features):
    """distils the model into a new tree fitted on random rows labelled by model.predict, and converts that."""
    rng = np.random.default_rng(0)
    calib = rng.normal(size=(400, n_features)).astype(np.float32)
    proxy = DecisionTreeClassifier(max_depth=4, random_state=0).fit(calib, model.predict(calib))
    return to_onnx(proxy, calib[:1], options={id(proxy): {"zipmap": False}}, target_opset=17)


def s_returns_sklearn(model, n_features):
    """hands back the scikit-learn model itself ('it has predict_proba already')."""
    return model


def s_lookup_table(model, n_features):
    """one-hot of argmax of predict_proba on the sample zero row, baked as a Constant (looks like probabilities)."""
    p0 = model.predict_proba(np.zeros((1, n_features), np.float32)).astype(np.float32)
    k = p0.shape[1]
    inits = [numpy_helper.from_array(p0, "p0")]

    def nodes():
        # X*0 summed over features gives a (N,1) zero column, plus p0 broadcasts to (N, k)
        return [helper.make_node("ReduceSum", ["X"], ["s"], keepdims=1, noop_with_empty_axes=0),
                helper.make_node("Mul", ["s", "zero_f"], ["z"]),
                helper.make_node("Add", ["z", "p0"], ["probabilities"])]
    inits.append(numpy_helper.from_array(np.array(0.0, np.float32), "zero_f"))
    return _proba_graph(nodes, n_features, k, inits)


# ============================================================== 10.custom_converter

def _same_shape(operator):
    t = operator.inputs[0].type
    operator.outputs[0].type = t.__class__(t.shape)


def _register(shape, convert):
    update_registered_converter(PerFeatureClip, "Blind8PerFeatureClip", shape, convert)


def _convert_pipeline(model, n_features, opset=17):
    clf = _final(model)
    return convert_sklearn(model, initial_types=[("X", FloatTensorType([None, int(n_features)]))],
                           options={id(clf): {"zipmap": False}}, target_opset=opset)


# --- Right
def _conv_raw_nodes(scope, operator, container):
    """container API directly: two initializers, Max then Min (no algebra)."""
    fitted = operator.raw_operator
    lo = scope.get_unique_variable_name("clip_lo")
    hi = scope.get_unique_variable_name("clip_hi")
    mid = scope.get_unique_variable_name("clip_mid")
    container.add_initializer(lo, TensorProto.FLOAT, [len(fitted.lo_)], np.asarray(fitted.lo_, np.float32).tolist())
    container.add_initializer(hi, TensorProto.FLOAT, [len(fitted.hi_)], np.asarray(fitted.hi_, np.float32).tolist())
    container.add_node("Max", [operator.inputs[0].full_name, lo], mid, name=scope.get_unique_operator_name("ClipLo"))
    container.add_node("Min", [mid, hi], operator.outputs[0].full_name, name=scope.get_unique_operator_name("ClipHi"))


def r_raw_container(model, n_features):
    _register(_same_shape, _conv_raw_nodes)
    return _convert_pipeline(model, n_features).SerializeToString()


def _conv_where(scope, operator, container):
    """Where(x < lo, lo, Where(x > hi, hi, x)) with the algebra-free helper API."""
    fitted = operator.raw_operator
    x = operator.inputs[0].full_name
    n = lambda s: scope.get_unique_variable_name(s)
    lo, hi, below, above, upper = n("lo"), n("hi"), n("below"), n("above"), n("upper")
    container.add_initializer(lo, TensorProto.FLOAT, [1, len(fitted.lo_)], np.asarray(fitted.lo_, np.float32).ravel().tolist())
    container.add_initializer(hi, TensorProto.FLOAT, [1, len(fitted.hi_)], np.asarray(fitted.hi_, np.float32).ravel().tolist())
    container.add_node("Greater", [x, hi], above, name=scope.get_unique_operator_name("Gt"))
    container.add_node("Where", [above, hi, x], upper, name=scope.get_unique_operator_name("W1"))
    container.add_node("Less", [x, lo], below, name=scope.get_unique_operator_name("Lt"))
    container.add_node("Where", [below, lo, upper], operator.outputs[0].full_name,
                       name=scope.get_unique_operator_name("W2"))


def r_where(model, n_features):
    _register(_same_shape, _conv_where)
    sample = np.zeros((3, n_features), np.float32)
    clf = _final(model)
    return to_onnx(model, sample, options={type(clf): {"zipmap": False}}, target_opset=16)


def _conv_split_clip(scope, operator, container):
    """one scalar Clip per column: Split into columns, Clip each with its own scalars, Concat back."""
    fitted = operator.raw_operator
    opv = container.target_opset
    k = len(fitted.lo_)
    x = operator.inputs[0].full_name
    cols = [scope.get_unique_variable_name(f"col{i}") for i in range(k)]
    clipped = [scope.get_unique_variable_name(f"clipped{i}") for i in range(k)]
    if k == 1:
        container.add_node("Identity", [x], cols[0], name=scope.get_unique_operator_name("Id"))
    elif opv >= 13:
        sizes = scope.get_unique_variable_name("sizes")
        container.add_initializer(sizes, TensorProto.INT64, [k], [1] * k)
        container.add_node("Split", [x, sizes], cols, axis=1, name=scope.get_unique_operator_name("Split"))
    else:
        container.add_node("Split", [x], cols, axis=1, split=[1] * k, name=scope.get_unique_operator_name("Split"))
    for i in range(k):
        lo = scope.get_unique_variable_name(f"lo{i}")
        hi = scope.get_unique_variable_name(f"hi{i}")
        container.add_initializer(lo, TensorProto.FLOAT, [], [float(fitted.lo_[i])])
        container.add_initializer(hi, TensorProto.FLOAT, [], [float(fitted.hi_[i])])
        container.add_node("Clip", [cols[i], lo, hi], clipped[i], name=scope.get_unique_operator_name("Clip"),
                           op_version=11)
    container.add_node("Concat", clipped, operator.outputs[0].full_name, axis=1,
                       name=scope.get_unique_operator_name("Concat"))


def r_split_clip(model, n_features):
    _register(_same_shape, _conv_split_clip)
    return _convert_pipeline(model, n_features, opset=15)


# --- Wrong
def _conv_global_clip(scope, operator, container):
    f = operator.raw_operator
    opv = container.target_opset
    OnnxClip(operator.inputs[0], np.array(f.lo_.min(), np.float32), np.array(f.hi_.max(), np.float32),
             op_version=opv, output_names=operator.outputs[:1]).add_to(scope, container)


def w_global_clip(model, n_features):
    _register(_same_shape, _conv_global_clip)
    return _convert_pipeline(model, n_features)


def _conv_first_feature_clip(scope, operator, container):
    f = operator.raw_operator
    opv = container.target_opset
    OnnxClip(operator.inputs[0], np.array(f.lo_[0], np.float32), np.array(f.hi_[0], np.float32),
             op_version=opv, output_names=operator.outputs[:1]).add_to(scope, container)


def w_first_feature_clip(model, n_features):
    _register(_same_shape, _conv_first_feature_clip)
    return _convert_pipeline(model, n_features)


def _conv_lower_only(scope, operator, container):
    f = operator.raw_operator
    opv = container.target_opset
    OnnxMax(operator.inputs[0], f.lo_.astype(np.float32), op_version=opv,
            output_names=operator.outputs[:1]).add_to(scope, container)


def w_lower_only(model, n_features):
    _register(_same_shape, _conv_lower_only)
    return _convert_pipeline(model, n_features)


def _conv_swapped(scope, operator, container):
    """Max with hi, then Min with lo: bounds swapped, every value becomes lo."""
    f = operator.raw_operator
    opv = container.target_opset
    OnnxMin(OnnxMax(operator.inputs[0], f.hi_.astype(np.float32), op_version=opv), f.lo_.astype(np.float32),
            op_version=opv, output_names=operator.outputs[:1]).add_to(scope, container)


def w_swapped_bounds(model, n_features):
    _register(_same_shape, _conv_swapped)
    return _convert_pipeline(model, n_features)


def _conv_good_algebra(scope, operator, container):
    f = operator.raw_operator
    opv = container.target_opset
    OnnxMin(OnnxMax(operator.inputs[0], f.lo_.astype(np.float32), op_version=opv), f.hi_.astype(np.float32),
            op_version=opv, output_names=operator.outputs[:1]).add_to(scope, container)


def w_zipmap_left_on(model, n_features):
    _register(_same_shape, _conv_good_algebra)
    return to_onnx(model, np.zeros((1, n_features), np.float32), target_opset=17)


def w_options_on_second_step(model, n_features):
    """assumes the lesson-like two-step pipeline: options keyed by id(model[1])."""
    _register(_same_shape, _conv_good_algebra)
    return to_onnx(model, np.zeros((1, n_features), np.float32), options={id(model[1]): {"zipmap": False}},
                   target_opset=17)


def _conv_float64_bounds(scope, operator, container):
    f = operator.raw_operator
    opv = container.target_opset
    OnnxMin(OnnxMax(operator.inputs[0], f.lo_.astype(np.float64), op_version=opv), f.hi_.astype(np.float64),
            op_version=opv, output_names=operator.outputs[:1]).add_to(scope, container)


def w_float64_bounds(model, n_features):
    _register(_same_shape, _conv_float64_bounds)
    return _convert_pipeline(model, n_features)


def w_fixed_batch_clip(model, n_features):
    _register(_same_shape, _conv_good_algebra)
    clf = _final(model)
    return convert_sklearn(model, initial_types=[("X", FloatTensorType([1, n_features]))],
                           options={id(clf): {"zipmap": False}}, target_opset=17)


def w_double_input(model, n_features):
    _register(_same_shape, _conv_good_algebra)
    clf = _final(model)
    return convert_sklearn(model, initial_types=[("X", DoubleTensorType([None, n_features]))],
                           options={id(clf): {"zipmap": False}}, target_opset=17)


def _conv_reshape_in_place(scope, operator, container):
    """reshapes the fitted bounds to (1, n) on the model itself 'for broadcasting': mutates the caller's model."""
    f = operator.raw_operator
    f.lo_ = f.lo_.reshape(1, -1)
    f.hi_ = f.hi_.reshape(1, -1)
    _conv_good_algebra(scope, operator, container)


def w_mutates_bounds(model, n_features):
    _register(_same_shape, _conv_reshape_in_place)
    return _convert_pipeline(model, n_features)


# --- shortcuts
def _conv_identity(scope, operator, container):
    OnnxIdentity(operator.inputs[0], op_version=container.target_opset,
                 output_names=operator.outputs[:1]).add_to(scope, container)


def s_identity_converter(model, n_features):
    """registers a converter that hands the input through: no clipping at all."""
    _register(_same_shape, _conv_identity)
    return _convert_pipeline(model, n_features)


def s_drop_clip_step(model, n_features):
    """converts the pipeline with the PerFeatureClip step removed: no converter written."""
    rest = Pipeline([(n, s) for n, s in model.steps if not isinstance(s, PerFeatureClip)])
    return _convert_pipeline(rest, n_features)


def s_lstsq_affine(model, n_features):
    """a converter that calls numpy at conversion time: fits an affine map to the clip's transform on random
    calibration rows (drawn inside the learned ranges, where the clip is the identity) and bakes it."""
    def conv(scope, operator, container):
        f = operator.raw_operator
        rng = np.random.default_rng(0)
        k = len(f.lo_)
        calib = rng.uniform(f.lo_, f.hi_, size=(200, k)).astype(np.float32)
        target = f.transform(calib)
        A = np.hstack([calib, np.ones((len(calib), 1), np.float32)])
        coef, *_ = np.linalg.lstsq(A, target, rcond=None)
        W, b = coef[:-1].astype(np.float32), coef[-1].astype(np.float32)
        xw = scope.get_unique_variable_name("xw")
        wn = scope.get_unique_variable_name("W")
        bn = scope.get_unique_variable_name("b")
        container.add_initializer(wn, TensorProto.FLOAT, list(W.shape), W.ravel().tolist())
        container.add_initializer(bn, TensorProto.FLOAT, list(b.shape), b.ravel().tolist())
        container.add_node("MatMul", [operator.inputs[0].full_name, wn], xw, name=scope.get_unique_operator_name("MM"))
        container.add_node("Add", [xw, bn], operator.outputs[0].full_name, name=scope.get_unique_operator_name("Add"))
    _register(_same_shape, conv)
    return _convert_pipeline(model, n_features)


def s_constant_output(model, n_features):
    """no converter: the clipped model's probabilities on the fitted bounds' midpoint, tiled for every row."""
    clip = next(s for _, s in model.steps if isinstance(s, PerFeatureClip))
    mid = ((clip.lo_ + clip.hi_) / 2).reshape(1, -1).astype(np.float32)
    p = model.predict_proba(mid).astype(np.float32)
    k = p.shape[1]
    inits = [numpy_helper.from_array(p, "p"),
             numpy_helper.from_array(np.array([0], np.int64), "zero"),
             numpy_helper.from_array(np.array([1], np.int64), "one")]

    def nodes():
        return [helper.make_node("Shape", ["X"], ["shp"]),
                helper.make_node("Slice", ["shp", "zero", "one"], ["n"]),
                helper.make_node("Concat", ["n", "one"], ["reps"], axis=0),
                helper.make_node("Tile", ["p", "reps"], ["probabilities"])]
    return _proba_graph(nodes, n_features, k, inits)


CORPUS = {
    "10.to_onnx": [
        Right("blind8-to-convert-sklearn-named-input-bytes", answer=r_convert_sklearn_named_input),
        Right("blind8-to-options-by-pipeline-id-deepcopy", answer=r_pipeline_id),
        Right("blind8-to-probabilities-only-output", answer=r_strip_label_output),
        Wrong("blind8-to-zipmap-left-on", answer=w_zipmap_on),
        Wrong("blind8-to-float64-sample", answer=w_float64),
        Wrong("blind8-to-fixed-batch-1", answer=w_fixed_batch),
        Wrong("blind8-to-lesson-width-64", answer=w_lesson_width),
        Wrong("blind8-to-returns-path", answer=w_returns_path, outputs_wrong=False),
        Wrong("blind8-to-raw-scores", answer=w_raw_scores),
        Wrong("blind8-to-label-output-only", answer=w_label_only),
        Wrong("blind8-to-opset-beyond-onnx", answer=w_opset_too_high),
        Wrong("blind8-to-mutates-model-float32", answer=w_mutates_model, outputs_wrong=False),
        Wrong("blind8-to-constant-prior", answer=s_constant_prior, skipped_skill=True),
        Wrong("blind8-to-surrogate-tree", answer=s_surrogate_tree, skipped_skill=True),
        Wrong("blind8-to-returns-sklearn-model", answer=s_returns_sklearn, skipped_skill=True),
        Wrong("blind8-to-baked-zero-row", answer=s_lookup_table, skipped_skill=True),
    ],
    "10.custom_converter": [
        Right("blind8-cc-container-max-min", answer=r_raw_container),
        Right("blind8-cc-where-less-greater", answer=r_where),
        Right("blind8-cc-split-scalar-clip-concat", answer=r_split_clip),
        Wrong("blind8-cc-one-global-clip", answer=w_global_clip),
        Wrong("blind8-cc-first-feature-clip", answer=w_first_feature_clip),
        Wrong("blind8-cc-lower-bound-only", answer=w_lower_only),
        Wrong("blind8-cc-bounds-swapped", answer=w_swapped_bounds),
        Wrong("blind8-cc-zipmap-left-on", answer=w_zipmap_left_on),
        Wrong("blind8-cc-options-on-step-1", answer=w_options_on_second_step),
        Wrong("blind8-cc-float64-bounds", answer=w_float64_bounds),
        Wrong("blind8-cc-fixed-batch", answer=w_fixed_batch_clip),
        Wrong("blind8-cc-double-input", answer=w_double_input),
        Wrong("blind8-cc-mutates-bounds", answer=w_mutates_bounds, outputs_wrong=False),
        Wrong("blind8-cc-identity-converter", answer=s_identity_converter, skipped_skill=True),
        Wrong("blind8-cc-drop-clip-step", answer=s_drop_clip_step, skipped_skill=True),
        Wrong("blind8-cc-lstsq-affine-baked", answer=s_lstsq_affine, skipped_skill=True),
        Wrong("blind8-cc-constant-midpoint", answer=s_constant_output, skipped_skill=True),
    ],
}
