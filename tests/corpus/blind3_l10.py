"""Blind corpus round 3, lesson 10 (written without seeing the judges)."""
import atexit as _atexit, shutil as _shutil, tempfile as _tempfile  # noqa: E401
_BLIND3_CACHE = __import__("pathlib").Path(_tempfile.mkdtemp(prefix="blind3-cache-"))  # per process: no race
_atexit.register(_shutil.rmtree, _BLIND3_CACHE, True)
from corpus import Right, Wrong

import numpy as np

CPU = "CPUExecutionProvider"


# ------------------------------------------------------------------ 10.io_binding

def _io_names(session):
    return session.get_inputs()[0].name, session.get_outputs()[0].name


def _n_classes(session, batches):
    c = session.get_outputs()[0].shape[-1]
    return int(c)


def iob_right_cpu_input(session, batches):
    import onnxruntime as ort
    iname, oname = _io_names(session)
    rows = batches[0].shape[0] if len(batches) else 0
    classes = _n_classes(session, batches)
    result = np.empty((len(batches) * rows, classes), dtype=np.float32)
    if not len(batches):
        return result
    binding = session.io_binding()
    out = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
    binding.bind_ortvalue_output(oname, out)
    for k, b in enumerate(batches):
        binding.bind_cpu_input(iname, np.ascontiguousarray(b, dtype=np.float32))
        session.run_with_iobinding(binding)
        result[k * rows:(k + 1) * rows] = out.numpy()
    return result


def iob_right_update_inplace(session, batches):
    """Input OrtValue bound once too, refreshed in place: nothing allocated per batch."""
    import onnxruntime as ort
    if len(batches) == 0:
        return np.zeros((0, _n_classes(session, batches)), np.float32)
    iname, oname = _io_names(session)
    shape = list(batches[0].shape)
    x_val = ort.OrtValue.ortvalue_from_shape_and_type(shape, np.float32, "cpu")
    y_val = ort.OrtValue.ortvalue_from_shape_and_type([shape[0], _n_classes(session, batches)], np.float32, "cpu")
    io = session.io_binding()
    io.bind_ortvalue_input(iname, x_val)
    io.bind_ortvalue_output(oname, y_val)
    kept = []
    for b in batches:
        x_val.update_inplace(np.ascontiguousarray(b, dtype=np.float32))
        session.run_with_iobinding(io)
        kept.append(y_val.numpy().copy())
    return np.concatenate(kept, axis=0)


def iob_right_raw_pointer(session, batches):
    """The output bound to a numpy buffer by pointer (bind_output with buffer_ptr)."""
    iname, oname = _io_names(session)
    n = len(batches)
    rows = batches[0].shape[0] if n else 0
    classes = _n_classes(session, batches)
    buf = np.zeros((rows, classes), dtype=np.float32)
    io = session.io_binding()
    io.bind_output(oname, "cpu", 0, np.float32, list(buf.shape), buf.ctypes.data)
    pieces = []
    for b in batches:
        io.bind_cpu_input(iname, np.asarray(b, np.float32))
        session.run_with_iobinding(io)
        pieces.append(np.array(buf))
    return np.vstack(pieces) if pieces else np.zeros((0, classes), np.float32)


def iob_wrong_session_run(session, batches):
    iname, _ = _io_names(session)
    return np.concatenate([session.run(None, {iname: b})[0] for b in batches])


def iob_wrong_no_prealloc(session, batches):
    iname, oname = _io_names(session)
    io = session.io_binding()
    io.bind_output(oname, "cpu")  # ORT allocates inside the loop
    outs = []
    for b in batches:
        io.bind_cpu_input(iname, b)
        session.run_with_iobinding(io)
        outs.append(io.copy_outputs_to_cpu()[0])
    return np.concatenate(outs)


def iob_wrong_views(session, batches):
    """Keeps out.numpy() views: every batch shows the last run's values."""
    import onnxruntime as ort
    iname, oname = _io_names(session)
    rows = batches[0].shape[0]
    out = ort.OrtValue.ortvalue_from_shape_and_type([rows, _n_classes(session, batches)], np.float32, "cpu")
    io = session.io_binding()
    io.bind_ortvalue_output(oname, out)
    outs = []
    for b in batches:
        io.bind_cpu_input(iname, b)
        session.run_with_iobinding(io)
        outs.append(out.numpy())
    return np.concatenate(outs)


def iob_wrong_binding_per_batch(session, batches):
    import onnxruntime as ort
    iname, oname = _io_names(session)
    rows = batches[0].shape[0]
    out = ort.OrtValue.ortvalue_from_shape_and_type([rows, _n_classes(session, batches)], np.float32, "cpu")
    outs = []
    for b in batches:
        io = session.io_binding()
        io.bind_cpu_input(iname, b)
        io.bind_ortvalue_output(oname, out)
        session.run_with_iobinding(io)
        outs.append(out.numpy().copy())
    return np.concatenate(outs)


def iob_wrong_alloc_in_loop(session, batches):
    import onnxruntime as ort
    iname, oname = _io_names(session)
    io = session.io_binding()
    outs, keep = [], []
    for b in batches:
        out = ort.OrtValue.ortvalue_from_shape_and_type([b.shape[0], _n_classes(session, batches)], np.float32, "cpu")
        keep.append(out)
        io.bind_cpu_input(iname, b)
        io.bind_ortvalue_output(oname, out)
        session.run_with_iobinding(io)
        outs.append(out.numpy().copy())
    return np.concatenate(outs)


def iob_wrong_one_big_run(session, batches):
    import onnxruntime as ort
    iname, oname = _io_names(session)
    x = np.concatenate(batches).astype(np.float32)
    out = ort.OrtValue.ortvalue_from_shape_and_type([len(x), _n_classes(session, batches)], np.float32, "cpu")
    io = session.io_binding()
    io.bind_cpu_input(iname, x)
    io.bind_ortvalue_output(oname, out)
    session.run_with_iobinding(io)
    return out.numpy().copy()


def iob_wrong_base_class_run(session, batches):
    """Calls the InferenceSession class's run() past the object's own."""
    import onnxruntime as ort
    iname, _ = _io_names(session)
    return np.concatenate([ort.InferenceSession.run(session, None, {iname: b})[0] for b in batches])


def iob_wrong_c_session(session, batches):
    """The C session underneath, run directly."""
    iname, oname = _io_names(session)
    return np.concatenate([session._sess.run([oname], {iname: b}, None)[0] for b in batches])


def iob_wrong_fresh_session(session, batches):
    """Imports onnxruntime afresh and opens the same model bytes in a session of its own."""
    import importlib
    ort = importlib.import_module("onnxruntime")
    model = getattr(session, "_model_bytes", None) or getattr(session, "_model_path", None)
    fresh = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    iname, _ = _io_names(fresh)
    return np.concatenate([fresh.run(None, {iname: b})[0] for b in batches])


def iob_wrong_base_iobinding(session, batches):
    """Binds properly, but runs through the class's run_with_iobinding (the check's override skipped)."""
    import onnxruntime as ort
    iname, oname = _io_names(session)
    rows = batches[0].shape[0]
    out = ort.OrtValue.ortvalue_from_shape_and_type([rows, _n_classes(session, batches)], np.float32, "cpu")
    io = session.io_binding()
    io.bind_ortvalue_output(oname, out)
    res = []
    for b in batches:
        io.bind_cpu_input(iname, b)
        ort.InferenceSession.run_with_iobinding(session, io)
        res.append(out.numpy().copy())
    return np.concatenate(res)


def iob_wrong_reference_evaluator(session, batches):
    """onnx's reference evaluator on the session's model bytes: no ORT run at all."""
    import onnx
    from onnx.reference import ReferenceEvaluator
    proto = onnx.load_from_string(session._model_bytes)
    ev = ReferenceEvaluator(proto)
    iname = proto.graph.input[0].name
    return np.concatenate([ev.run(None, {iname: b})[0] for b in batches]).astype(np.float32)


def iob_wrong_first_batch_only(session, batches):
    """Binds the input once, before the loop: every run sees batch 0."""
    import onnxruntime as ort
    iname, oname = _io_names(session)
    rows = batches[0].shape[0]
    out = ort.OrtValue.ortvalue_from_shape_and_type([rows, _n_classes(session, batches)], np.float32, "cpu")
    io = session.io_binding()
    io.bind_cpu_input(iname, batches[0])
    io.bind_ortvalue_output(oname, out)
    res = []
    for _ in batches:
        session.run_with_iobinding(io)
        res.append(out.numpy().copy())
    return np.concatenate(res)


def iob_wrong_list(session, batches):
    """Right values, but a list of per-batch arrays instead of one array."""
    import onnxruntime as ort
    iname, oname = _io_names(session)
    rows = batches[0].shape[0]
    out = ort.OrtValue.ortvalue_from_shape_and_type([rows, _n_classes(session, batches)], np.float32, "cpu")
    io = session.io_binding()
    io.bind_ortvalue_output(oname, out)
    res = []
    for b in batches:
        io.bind_cpu_input(iname, b)
        session.run_with_iobinding(io)
        res.append(out.numpy().copy())
    return res


def iob_wrong_mutates_input(session, batches):
    """Binds batches[0] once and copies each batch into it: the caller's first batch is overwritten."""
    import onnxruntime as ort
    iname, oname = _io_names(session)
    rows = batches[0].shape[0]
    out = ort.OrtValue.ortvalue_from_shape_and_type([rows, _n_classes(session, batches)], np.float32, "cpu")
    x_val = ort.OrtValue.ortvalue_from_numpy(batches[0])  # shares batches[0]'s memory
    io = session.io_binding()
    io.bind_ortvalue_input(iname, x_val)
    io.bind_ortvalue_output(oname, out)
    res = []
    for b in list(batches):
        b = b.copy()
        batches[0][...] = b
        session.run_with_iobinding(io)
        res.append(out.numpy().copy())
    return np.concatenate(res)


def iob_wrong_reversed(session, batches):
    """Pops batches off the end: outputs in reverse batch order."""
    import onnxruntime as ort
    iname, oname = _io_names(session)
    rows = batches[0].shape[0]
    out = ort.OrtValue.ortvalue_from_shape_and_type([rows, _n_classes(session, batches)], np.float32, "cpu")
    io = session.io_binding()
    io.bind_ortvalue_output(oname, out)
    todo = list(batches)
    res = []
    while todo:
        io.bind_cpu_input(iname, todo.pop())
        session.run_with_iobinding(io)
        res.append(out.numpy().copy())
    return np.concatenate(res)


# ------------------------------------------------------------------ 10.placement

def place_right_loop(ops, providers, supports, fallback=True):
    if not fallback and CPU in providers:
        return None
    chain = [p for p in providers if p in supports or p == CPU]
    result = []
    for op in ops:
        who = next((p for p in chain if p == CPU or op in supports[p]), None)
        if who is None:
            if not fallback:
                return None
            who = CPU
        result.append(who)
    return result


def place_right_claims(ops, providers, supports, fallback=True):
    """Provider by provider, each claiming what is still free (the partitioner's own order)."""
    owner = [None] * len(ops)
    for p in providers:
        if p == CPU:
            if not fallback:
                return None
            can = lambda op: True
        elif p in supports:
            ok = frozenset(supports[p])
            can = lambda op, ok=ok: op in ok
        else:
            continue
        for i, op in enumerate(ops):
            if owner[i] is None and can(op):
                owner[i] = p
    if any(o is None for o in owner):
        if not fallback:
            return None
        owner = [o or CPU for o in owner]
    return list(owner)


def place_right_dict(ops, providers, supports, fallback=True):
    explicit_cpu = CPU in providers
    if explicit_cpu and fallback is False:
        return None
    first = {}
    for p in reversed(providers):  # later providers overwritten by earlier ones
        if p == CPU:
            for op in set(ops):
                first[op] = CPU
        for op in supports.get(p, ()) if p != CPU else ():
            first[op] = p
    out = [first.get(op) for op in ops]
    if None in out:
        if not fallback:
            return None
        out = [o if o is not None else CPU for o in out]
    return out


def place_wrong_supports_order(ops, providers, supports, fallback=True):
    """Goes through `supports` in its dict order, not the providers list."""
    out = []
    for op in ops:
        who = next((p for p, s in supports.items() if p in providers and op in s), None)
        if who is None:
            if not fallback:
                return None
            who = CPU
        out.append(who)
    return out


def place_wrong_cpu_listed_ok(ops, providers, supports, fallback=True):
    """Fallback off refuses only a node left over; an explicitly listed CPU is taken as fine."""
    chain = [p for p in providers if p in supports or p == CPU]
    out = []
    for op in ops:
        who = next((p for p in chain if p == CPU or op in supports[p]), None)
        if who is None:
            if not fallback:
                return None
            who = CPU
        out.append(who)
    return out


def place_wrong_missing_runs_all(ops, providers, supports, fallback=True):
    """A listed provider missing from `supports` is taken to run everything."""
    if not fallback and CPU in providers:
        return None
    out = []
    for op in ops:
        who = next((p for p in providers if p == CPU or op in supports.get(p, set(ops))), None)
        if who is None:
            if not fallback:
                return None
            who = CPU
        out.append(who)
    return out


def place_wrong_cpu_last(ops, providers, supports, fallback=True):
    """Puts the CPU last whatever its place in the list."""
    if not fallback and CPU in providers:
        return None
    chain = [p for p in providers if p in supports]
    out = []
    for op in ops:
        who = next((p for p in chain if op in supports[p]), None)
        if who is None:
            if not fallback:
                return None
            who = CPU
        out.append(who)
    return out


def place_wrong_last_wins(ops, providers, supports, fallback=True):
    if not fallback and CPU in providers:
        return None
    chain = [p for p in reversed(providers) if p in supports or p == CPU]
    out = []
    for op in ops:
        who = next((p for p in chain if p == CPU or op in supports[p]), None)
        if who is None:
            if not fallback:
                return None
            who = CPU
        out.append(who)
    return out


def place_wrong_ignores_fallback(ops, providers, supports, fallback=True):
    return place_right_loop(ops, providers, supports, True)


def place_wrong_all_or_nothing(ops, providers, supports, fallback=True):
    """The first available provider runs the whole graph if it can, else everything on the CPU."""
    if not fallback and CPU in providers:
        return None
    for p in providers:
        if p == CPU:
            return [CPU] * len(ops)
        if p in supports:
            if all(op in supports[p] for op in ops):
                return [p] * len(ops)
            break
    return None if not fallback else [CPU] * len(ops)


def place_wrong_all_cpu(ops, providers, supports, fallback=True):
    return ["CPUExecutionProvider" for _ in ops]


def place_wrong_dict_form(ops, providers, supports, fallback=True):
    """Right placement, returned as {provider: [node indices]}."""
    placed = place_right_loop(ops, providers, supports, fallback)
    if placed is None:
        return None
    out = {}
    for i, p in enumerate(placed):
        out.setdefault(p, []).append(i)
    return out


def place_wrong_mutates(ops, providers, supports, fallback=True):
    """Appends the CPU to the caller's providers list (values right, caller's list changed)."""
    if not fallback and CPU in providers:
        return None
    if CPU not in providers:
        providers.append(CPU)
    res = []
    for op in ops:
        for p in providers:
            if p == CPU:
                if not fallback:
                    return None
                res.append(CPU)
                break
            if p in supports and op in supports[p]:
                res.append(p)
                break
    return res


def place_wrong_partial_ok(ops, providers, supports, fallback=True):
    """Fallback off: refuses only when the accelerators took no node at all."""
    placed = place_right_loop(ops, providers, supports, True)
    if not fallback:
        if CPU in providers:
            return None
        if ops and all(p == CPU for p in placed):
            return None
    return placed


# ------------------------------------------------------------------ 10.to_onnx

def _classifier(model):
    return model.steps[-1][1] if hasattr(model, "steps") else model


def toonnx_right_initial_types(model, n_features):
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import FloatTensorType
    clf = _classifier(model)
    onx = convert_sklearn(model, initial_types=[("features", FloatTensorType([None, n_features]))],
                          options={id(clf): {"zipmap": False}}, target_opset=17)
    return onx.SerializeToString()


def toonnx_right_class_options(model, n_features):
    """Options keyed by the classifier's class, sample of zeros."""
    from skl2onnx import to_onnx
    clf = _classifier(model)
    return to_onnx(model, np.zeros((2, n_features), np.float32), options={type(clf): {"zipmap": False}})


def toonnx_right_strip_zipmap(model, n_features):
    """Convert with ZipMap, then cut the ZipMap node off by hand and expose its input as the output."""
    import onnx
    from onnx import helper, TensorProto
    from skl2onnx import to_onnx
    onx = to_onnx(model, np.ones((1, n_features), np.float32), target_opset=15)
    g = onx.graph
    zm = [n for n in g.node if n.op_type == "ZipMap"][0]
    src, dst = zm.input[0], zm.output[0]
    keep = [n for n in g.node if n is not zm]
    del g.node[:]
    g.node.extend(keep)
    outs = []
    for o in g.output:
        if o.name == dst:
            outs.append(helper.make_tensor_value_info(src, TensorProto.FLOAT, ["N", None]))
        else:
            outs.append(o)
    del g.output[:]
    g.output.extend(outs)
    onnx.checker.check_model(onx)
    return onx


def toonnx_right_fitted_width(model, n_features):
    """Reads the width from the fitted model; options for every step with the flag on the last one."""
    from skl2onnx import to_onnx
    from skl2onnx.common.data_types import FloatTensorType
    width = int(getattr(model, "n_features_in_", n_features))
    last = model[-1] if hasattr(model, "steps") else model
    return to_onnx(model, initial_types=[("X", FloatTensorType([None, width]))],
                   options={id(last): {"zipmap": False}}, target_opset={"": 17, "ai.onnx.ml": 3})


def toonnx_wrong_zipmap(model, n_features):
    from skl2onnx import to_onnx
    return to_onnx(model, np.zeros((1, n_features), np.float32))


def toonnx_wrong_fixed_batch(model, n_features):
    from skl2onnx import to_onnx
    from skl2onnx.common.data_types import FloatTensorType
    return to_onnx(model, initial_types=[("X", FloatTensorType([1, n_features]))],
                   options={id(_classifier(model)): {"zipmap": False}})


def toonnx_wrong_double(model, n_features):
    from skl2onnx import to_onnx
    return to_onnx(model, np.zeros((1, n_features), np.float64), options={id(_classifier(model)): {"zipmap": False}})


def toonnx_wrong_lesson_index(model, n_features):
    """model[-1]: a bare classifier is not subscriptable."""
    from skl2onnx import to_onnx
    return to_onnx(model, np.zeros((1, n_features), np.float32), options={id(model[-1]): {"zipmap": False}})


def toonnx_wrong_width64(model, n_features):
    from skl2onnx import to_onnx
    return to_onnx(model, np.zeros((1, 64), np.float32), options={id(_classifier(model)): {"zipmap": False}})


def toonnx_wrong_classifier_only(model, n_features):
    """Converts only the last step: the scaler is lost."""
    from skl2onnx import to_onnx
    clf = _classifier(model)
    return to_onnx(clf, np.zeros((1, n_features), np.float32), options={id(clf): {"zipmap": False}})


def toonnx_wrong_labels_only(model, n_features):
    """Keeps only the label output."""
    from skl2onnx import to_onnx
    onx = to_onnx(model, np.zeros((1, n_features), np.float32), options={id(_classifier(model)): {"zipmap": False}})
    keep = [o for o in onx.graph.output if o.name == "label"]
    del onx.graph.output[:]
    onx.graph.output.extend(keep)
    return onx


def toonnx_wrong_path(tmp):
    def sklearn_to_onnx(model, n_features):
        from skl2onnx import to_onnx
        onx = to_onnx(model, np.zeros((1, n_features), np.float32), options={id(_classifier(model)): {"zipmap": False}})
        path = tmp / f"model_{id(model)}.onnx"
        path.write_bytes(onx.SerializeToString())
        return str(path)
    return sklearn_to_onnx


def toonnx_right_pipeline_id(model, n_features):
    """Options keyed by the id of the object passed (the pipeline itself): skl2onnx hands them down."""
    from skl2onnx import to_onnx
    return to_onnx(model, np.zeros((3, n_features), np.float32), options={id(model): {"zipmap": False}})


def toonnx_wrong_softmax_on_decision(model, n_features):
    """Hand-built graph for linear models: softmax of decision_function (wrong for binary, and a tree fails)."""
    from onnx import helper, numpy_helper, TensorProto
    steps = model.steps if hasattr(model, "steps") else [("clf", model)]
    nodes, inits, cur = [], [], "X"
    for i, (_, est) in enumerate(steps):
        if hasattr(est, "scale_"):
            inits += [numpy_helper.from_array(est.mean_.astype(np.float32), f"m{i}"),
                      numpy_helper.from_array(est.scale_.astype(np.float32), f"s{i}")]
            nodes += [helper.make_node("Sub", [cur, f"m{i}"], [f"c{i}"]), helper.make_node("Div", [f"c{i}", f"s{i}"], [f"d{i}"])]
            cur = f"d{i}"
        else:
            inits += [numpy_helper.from_array(est.coef_.T.astype(np.float32), "W"),
                      numpy_helper.from_array(est.intercept_.astype(np.float32), "B")]
            nodes += [helper.make_node("MatMul", [cur, "W"], ["z"]), helper.make_node("Add", ["z", "B"], ["zb"]),
                      helper.make_node("Softmax", ["zb"], ["probabilities"], axis=-1)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, n_features])],
                          [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [None, None])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


# ------------------------------------------------------------------ 10.custom_converter

def _clip_shape(operator):
    operator.outputs[0].type = operator.inputs[0].type.__class__(operator.inputs[0].type.shape)


def _register(convert, shape=_clip_shape):
    from skl2onnx import update_registered_converter
    from labkit.material.l10 import PerFeatureClip
    update_registered_converter(PerFeatureClip, "Blind3PerFeatureClip", shape, convert, overwrite=True)


def _convert_pipeline(model, n_features, zipmap=False, batch=None):
    from skl2onnx import to_onnx
    from skl2onnx.common.data_types import FloatTensorType
    opts = {id(model.steps[-1][1]): {"zipmap": False}} if not zipmap else None
    return to_onnx(model, initial_types=[("X", FloatTensorType([batch, n_features]))], options=opts,
                   target_opset=17)


def _cc_algebra(scope, operator, container):
    from skl2onnx.algebra.onnx_ops import OnnxMax, OnnxMin
    op = operator.raw_operator
    v = container.target_opset
    lo = OnnxMax(operator.inputs[0], np.asarray(op.lo_, np.float32), op_version=v)
    OnnxMin(lo, np.asarray(op.hi_, np.float32), op_version=v, output_names=operator.outputs[:1]).add_to(scope, container)


def cc_right_algebra(model, n_features):
    _register(_cc_algebra)
    return _convert_pipeline(model, n_features)


def _cc_raw_nodes(scope, operator, container):
    op = operator.raw_operator
    lo = scope.get_unique_variable_name("clip_lo")
    hi = scope.get_unique_variable_name("clip_hi")
    mid = scope.get_unique_variable_name("clip_mid")
    container.add_initializer(lo, 1, [len(op.lo_)], np.asarray(op.lo_, np.float32).tolist())
    container.add_initializer(hi, 1, [len(op.hi_)], np.asarray(op.hi_, np.float32).tolist())
    # upper bound first, then lower: same result when lo <= hi
    container.add_node("Min", [operator.inputs[0].full_name, hi], mid, name=scope.get_unique_operator_name("ClipHi"))
    container.add_node("Max", [mid, lo], operator.outputs[0].full_name, name=scope.get_unique_operator_name("ClipLo"))


def cc_right_raw_nodes(model, n_features):
    _register(_cc_raw_nodes)
    return _convert_pipeline(model, n_features).SerializeToString()


def _cc_where(scope, operator, container):
    """Where(x < lo, lo, x) then Where(y > hi, hi, y): comparisons instead of Max/Min."""
    from skl2onnx.algebra.onnx_ops import OnnxWhere, OnnxLess, OnnxGreater
    op = operator.raw_operator
    v = container.target_opset
    x = operator.inputs[0]
    lo = np.asarray(op.lo_, np.float32).reshape(1, -1)
    hi = np.asarray(op.hi_, np.float32).reshape(1, -1)
    y = OnnxWhere(OnnxLess(x, lo, op_version=v), lo, x, op_version=v)
    OnnxWhere(OnnxGreater(y, hi, op_version=v), hi, y, op_version=v,
              output_names=operator.outputs[:1]).add_to(scope, container)


def cc_right_where(model, n_features):
    _register(_cc_where)
    return _convert_pipeline(model, n_features)


def _cc_scalar_clip(scope, operator, container):
    from skl2onnx.algebra.onnx_ops import OnnxClip
    op = operator.raw_operator
    v = container.target_opset
    OnnxClip(operator.inputs[0], np.array(op.lo_.min(), np.float32), np.array(op.hi_.max(), np.float32),
             op_version=v, output_names=operator.outputs[:1]).add_to(scope, container)


def cc_wrong_scalar_clip(model, n_features):
    _register(_cc_scalar_clip)
    return _convert_pipeline(model, n_features)


def _cc_first_feature_clip(scope, operator, container):
    from skl2onnx.algebra.onnx_ops import OnnxClip
    op = operator.raw_operator
    v = container.target_opset
    OnnxClip(operator.inputs[0], np.array(op.lo_[0], np.float32), np.array(op.hi_[0], np.float32),
             op_version=v, output_names=operator.outputs[:1]).add_to(scope, container)


def cc_wrong_first_feature_clip(model, n_features):
    _register(_cc_first_feature_clip)
    return _convert_pipeline(model, n_features)


def _cc_swapped(scope, operator, container):
    from skl2onnx.algebra.onnx_ops import OnnxMax, OnnxMin
    op = operator.raw_operator
    v = container.target_opset
    a = OnnxMax(operator.inputs[0], np.asarray(op.hi_, np.float32), op_version=v)
    OnnxMin(a, np.asarray(op.lo_, np.float32), op_version=v, output_names=operator.outputs[:1]).add_to(scope, container)


def cc_wrong_swapped(model, n_features):
    _register(_cc_swapped)
    return _convert_pipeline(model, n_features)


def _cc_lower_only(scope, operator, container):
    from skl2onnx.algebra.onnx_ops import OnnxMax
    op = operator.raw_operator
    v = container.target_opset
    OnnxMax(operator.inputs[0], np.asarray(op.lo_, np.float32), op_version=v,
            output_names=operator.outputs[:1]).add_to(scope, container)


def cc_wrong_lower_only(model, n_features):
    _register(_cc_lower_only)
    return _convert_pipeline(model, n_features)


def _cc_identity(scope, operator, container):
    container.add_node("Identity", [operator.inputs[0].full_name], operator.outputs[0].full_name,
                       name=scope.get_unique_operator_name("NoClip"))


def cc_wrong_identity(model, n_features):
    _register(_cc_identity)
    return _convert_pipeline(model, n_features)


def cc_wrong_drop_step(model, n_features):
    """Leaves the clip out of the pipeline: nothing to register."""
    from sklearn.pipeline import Pipeline
    from labkit.material.l10 import PerFeatureClip
    from skl2onnx import to_onnx
    steps = [(n, s) for n, s in model.steps if not isinstance(s, PerFeatureClip)]
    rest = Pipeline(steps) if len(steps) > 1 else steps[0][1]
    return to_onnx(rest, np.zeros((1, n_features), np.float32), options={id(steps[-1][1]): {"zipmap": False}})


def cc_wrong_zipmap(model, n_features):
    _register(_cc_algebra)
    return _convert_pipeline(model, n_features, zipmap=True)


def cc_wrong_fixed_batch(model, n_features):
    _register(_cc_algebra)
    return _convert_pipeline(model, n_features, batch=1)


def _cc_column(scope, operator, container):
    from skl2onnx.algebra.onnx_ops import OnnxMax, OnnxMin
    op = operator.raw_operator
    v = container.target_opset
    lo = np.asarray(op.lo_, np.float32).reshape(-1, 1)  # a column: broadcasts along the wrong axis
    hi = np.asarray(op.hi_, np.float32).reshape(-1, 1)
    a = OnnxMax(operator.inputs[0], lo, op_version=v)
    OnnxMin(a, hi, op_version=v, output_names=operator.outputs[:1]).add_to(scope, container)


def cc_wrong_column(model, n_features):
    _register(_cc_column)
    return _convert_pipeline(model, n_features)


def _cc_float64(scope, operator, container):
    from skl2onnx.algebra.onnx_ops import OnnxMax, OnnxMin
    op = operator.raw_operator
    v = container.target_opset
    a = OnnxMax(operator.inputs[0], np.asarray(op.lo_, np.float64), op_version=v)
    OnnxMin(a, np.asarray(op.hi_, np.float64), op_version=v, output_names=operator.outputs[:1]).add_to(scope, container)


def cc_wrong_float64(model, n_features):
    _register(_cc_float64)
    return _convert_pipeline(model, n_features)


def cc_wrong_quantile_refit(model, n_features):
    """Rebuilds the bounds from q on a standard normal guess (the fitted lo_/hi_ unused)."""
    from scipy.stats import norm

    def conv(scope, operator, container):
        from skl2onnx.algebra.onnx_ops import OnnxMax, OnnxMin
        op = operator.raw_operator
        v = container.target_opset
        n = len(op.lo_)
        lo = np.full(n, norm.ppf(op.q), np.float32)
        hi = np.full(n, norm.ppf(1 - op.q), np.float32)
        a = OnnxMax(operator.inputs[0], lo, op_version=v)
        OnnxMin(a, hi, op_version=v, output_names=operator.outputs[:1]).add_to(scope, container)
    _register(conv)
    return _convert_pipeline(model, n_features)


CORPUS = {
    "10.io_binding": [
        Right("blind3-iob-cpu-input-prefilled", answer=iob_right_cpu_input),
        Right("blind3-iob-update-inplace", answer=iob_right_update_inplace),
        Right("blind3-iob-raw-pointer", answer=iob_right_raw_pointer),
        Wrong("blind3-iob-session-run", answer=iob_wrong_session_run, skipped_skill=True),
        Wrong("blind3-iob-ort-allocates", answer=iob_wrong_no_prealloc),
        Wrong("blind3-iob-kept-views", answer=iob_wrong_views),
        Wrong("blind3-iob-binding-per-batch", answer=iob_wrong_binding_per_batch, outputs_wrong=False),
        Wrong("blind3-iob-alloc-in-loop", answer=iob_wrong_alloc_in_loop, outputs_wrong=False),
        Wrong("blind3-iob-one-big-run", answer=iob_wrong_one_big_run, outputs_wrong=False),
        Wrong("blind3-iob-base-class-run", answer=iob_wrong_base_class_run, skipped_skill=True),
        Wrong("blind3-iob-c-session", answer=iob_wrong_c_session, skipped_skill=True),
        Wrong("blind3-iob-fresh-ort-session", answer=iob_wrong_fresh_session, skipped_skill=True),
        Wrong("blind3-iob-base-run-with-iobinding", answer=iob_wrong_base_iobinding, skipped_skill=True),
        Wrong("blind3-iob-reference-evaluator", answer=iob_wrong_reference_evaluator, skipped_skill=True),
        Wrong("blind3-iob-first-batch-only", answer=iob_wrong_first_batch_only),
        Wrong("blind3-iob-list-of-arrays", answer=iob_wrong_list, outputs_wrong=False),
        Wrong("blind3-iob-mutates-first-batch", answer=iob_wrong_mutates_input, outputs_wrong=False),
        Wrong("blind3-iob-reversed", answer=iob_wrong_reversed),
    ],
    "10.placement": [
        Right("blind3-place-loop", answer=place_right_loop),
        Right("blind3-place-claims", answer=place_right_claims),
        Right("blind3-place-dict", answer=place_right_dict),
        Wrong("blind3-place-supports-order", answer=place_wrong_supports_order),
        Wrong("blind3-place-cpu-listed-ok", answer=place_wrong_cpu_listed_ok),
        Wrong("blind3-place-missing-runs-all", answer=place_wrong_missing_runs_all),
        Wrong("blind3-place-cpu-last", answer=place_wrong_cpu_last),
        Wrong("blind3-place-last-wins", answer=place_wrong_last_wins),
        Wrong("blind3-place-ignores-fallback", answer=place_wrong_ignores_fallback),
        Wrong("blind3-place-all-or-nothing", answer=place_wrong_all_or_nothing),
        Wrong("blind3-place-all-cpu", answer=place_wrong_all_cpu, skipped_skill=True),
        Wrong("blind3-place-dict-form", answer=place_wrong_dict_form, outputs_wrong=False),
        Wrong("blind3-place-mutates-providers", answer=place_wrong_mutates, outputs_wrong=False),
        Wrong("blind3-place-partial-fallback-ok", answer=place_wrong_partial_ok),
    ],
    "10.to_onnx": [
        Right("blind3-toonnx-initial-types-bytes", answer=toonnx_right_initial_types),
        Right("blind3-toonnx-class-options", answer=toonnx_right_class_options),
        Right("blind3-toonnx-strip-zipmap", answer=toonnx_right_strip_zipmap),
        Right("blind3-toonnx-fitted-width", answer=toonnx_right_fitted_width),
        Wrong("blind3-toonnx-zipmap-on", answer=toonnx_wrong_zipmap),
        Wrong("blind3-toonnx-fixed-batch", answer=toonnx_wrong_fixed_batch),
        Wrong("blind3-toonnx-double-input", answer=toonnx_wrong_double),
        Wrong("blind3-toonnx-lesson-index", answer=toonnx_wrong_lesson_index),
        Wrong("blind3-toonnx-width-64", answer=toonnx_wrong_width64),
        Wrong("blind3-toonnx-classifier-only", answer=toonnx_wrong_classifier_only),
        Wrong("blind3-toonnx-labels-only", answer=toonnx_wrong_labels_only),
        Wrong("blind3-toonnx-path", make=toonnx_wrong_path, outputs_wrong=False),
        Right("blind3-toonnx-pipeline-id", answer=toonnx_right_pipeline_id),
        Wrong("blind3-toonnx-softmax-decision", answer=toonnx_wrong_softmax_on_decision),
    ],
    "10.custom_converter": [
        Right("blind3-cc-algebra", answer=cc_right_algebra),
        Right("blind3-cc-raw-nodes-bytes", answer=cc_right_raw_nodes),
        Right("blind3-cc-where", answer=cc_right_where),
        Wrong("blind3-cc-scalar-clip", answer=cc_wrong_scalar_clip),
        Wrong("blind3-cc-first-feature-clip", answer=cc_wrong_first_feature_clip),
        Wrong("blind3-cc-swapped-bounds", answer=cc_wrong_swapped),
        Wrong("blind3-cc-lower-only", answer=cc_wrong_lower_only),
        Wrong("blind3-cc-identity", answer=cc_wrong_identity, skipped_skill=True),
        Wrong("blind3-cc-drop-step", answer=cc_wrong_drop_step, skipped_skill=True),
        Wrong("blind3-cc-zipmap-on", answer=cc_wrong_zipmap),
        Wrong("blind3-cc-fixed-batch", answer=cc_wrong_fixed_batch),
        Wrong("blind3-cc-column-bounds", answer=cc_wrong_column),
        Wrong("blind3-cc-float64-bounds", answer=cc_wrong_float64),
        Wrong("blind3-cc-quantile-guess", answer=cc_wrong_quantile_refit),
    ],
}
