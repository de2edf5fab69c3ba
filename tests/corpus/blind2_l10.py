"""Blind entries, copied from /work/blind2/l10.py (issue 32): written by a helper who never read the judges or this corpus
(their README: /work/blind2/README.md). tests/corpus/l10.py adds them to its CORPUS.
Classes changed after reading the prompt: blind2-iob-ortvalue-update-inplace (Wrong: its OrtValue shares memory with the caller's batches[0] (ascontiguousarray copies nothing), so update_inplace overwrites the caller's data).

Blind corpus, lesson 10 (held-out round, written without seeing the judges).
"""
import numpy as np

from corpus import Right, Wrong


def _names(session):
    return session.get_inputs()[0].name, session.get_outputs()[0].name


def _out_shape(session, batches):
    rows = batches[0].shape[0]
    classes = session.get_outputs()[0].shape[-1]
    if not isinstance(classes, int):       # symbolic: ask the model once would need run(); use a probe via binding
        classes = None
    return rows, classes


# ---------------------------------------------------------------- rights

def _classes(session, batches):
    rows, classes = _out_shape(session, batches)
    if classes is None:
        raise ValueError("the output's class dimension is not fixed")
    return rows, classes


def predict_bound_ortvalue(session, batches):
    import onnxruntime as ort
    x_name, y_name = _names(session)
    rows, classes = _classes(session, batches)
    binding = session.io_binding()
    out = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
    binding.bind_ortvalue_output(y_name, out)
    result = np.empty((len(batches) * rows, classes), dtype=np.float32)
    for i, batch in enumerate(batches):
        binding.bind_cpu_input(x_name, np.ascontiguousarray(batch, dtype=np.float32))
        session.run_with_iobinding(binding)
        result[i * rows:(i + 1) * rows] = out.numpy()
    return result


def predict_bound_numpy_buffer(session, batches):
    """The output buffer is a numpy array of my own, bound by its address."""
    x_name, y_name = _names(session)
    rows, classes = _classes(session, batches)
    buf = np.zeros((rows, classes), dtype=np.float32)
    binding = session.io_binding()
    binding.bind_output(y_name, "cpu", 0, np.float32, list(buf.shape), buf.ctypes.data)
    collected = []
    for batch in batches:
        binding.bind_cpu_input(x_name, np.ascontiguousarray(batch, dtype=np.float32))
        session.run_with_iobinding(binding)
        collected.append(buf.copy())
    return np.concatenate(collected, axis=0)


def predict_bound_ortvalue_inputs(session, batches):
    import onnxruntime as ort
    x_name, y_name = _names(session)
    rows, classes = _classes(session, batches)
    x_val = ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(batches[0], dtype=np.float32))
    y_val = ort.OrtValue.ortvalue_from_numpy(np.zeros((rows, classes), np.float32))
    b = session.io_binding()
    b.bind_ortvalue_input(x_name, x_val)
    b.bind_ortvalue_output(y_name, y_val)
    pieces = []
    for batch in batches:
        x_val.update_inplace(np.ascontiguousarray(batch, dtype=np.float32))
        session.run_with_iobinding(b)
        pieces.append(np.array(y_val.numpy(), copy=True))
    return np.vstack(pieces)


# ---------------------------------------------------------------- wrongs

def predict_plain_run(session, batches):
    x_name, _ = _names(session)
    return np.concatenate([session.run(None, {x_name: b})[0] for b in batches])


def predict_base_class_run(session, batches):
    import onnxruntime as ort
    x_name, _ = _names(session)
    return np.concatenate([ort.InferenceSession.run(session, None, {x_name: b})[0] for b in batches])


def predict_c_session(session, batches):
    x_name, y_name = _names(session)
    return np.concatenate([session._sess.run([y_name], {x_name: b}, None)[0] for b in batches])


def predict_fresh_session(session, batches):
    import onnxruntime as ort
    src = getattr(session, "_model_bytes", None) or session._model_path
    fresh = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    x_name = fresh.get_inputs()[0].name
    return np.concatenate([fresh.run(None, {x_name: b})[0] for b in batches])


def predict_binding_per_batch(session, batches):
    import onnxruntime as ort
    x_name, y_name = _names(session)
    rows, classes = _classes(session, batches)
    outs = []
    for batch in batches:
        binding = session.io_binding()
        out = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
        binding.bind_cpu_input(x_name, batch)
        binding.bind_ortvalue_output(y_name, out)
        session.run_with_iobinding(binding)
        outs.append(out.numpy().copy())
    return np.concatenate(outs)


def predict_new_output_each_batch(session, batches):
    import onnxruntime as ort
    x_name, y_name = _names(session)
    rows, classes = _classes(session, batches)
    binding = session.io_binding()
    outs, keep = [], []
    for batch in batches:
        out = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
        keep.append(out)
        binding.bind_cpu_input(x_name, batch)
        binding.bind_ortvalue_output(y_name, out)
        session.run_with_iobinding(binding)
        outs.append(out.numpy().copy())
    return np.concatenate(outs)


def predict_views_not_copies(session, batches):
    import onnxruntime as ort
    x_name, y_name = _names(session)
    rows, classes = _classes(session, batches)
    binding = session.io_binding()
    out = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
    binding.bind_ortvalue_output(y_name, out)
    views = []
    for batch in batches:
        binding.bind_cpu_input(x_name, batch)
        session.run_with_iobinding(binding)
        views.append(out.numpy())                  # a view: the next run overwrites it
    return np.concatenate(views)


def predict_ort_allocates(session, batches):
    x_name, y_name = _names(session)
    binding = session.io_binding()
    binding.bind_output(y_name, "cpu")             # ORT allocates the output on each run
    outs = []
    for batch in batches:
        binding.bind_cpu_input(x_name, batch)
        session.run_with_iobinding(binding)
        outs.append(binding.copy_outputs_to_cpu()[0])
    return np.concatenate(outs)


def predict_list_of_arrays(session, batches):
    import onnxruntime as ort
    x_name, y_name = _names(session)
    rows, classes = _classes(session, batches)
    binding = session.io_binding()
    out = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
    binding.bind_ortvalue_output(y_name, out)
    res = []
    for batch in batches:
        binding.bind_cpu_input(x_name, batch)
        session.run_with_iobinding(binding)
        res.append(out.numpy().copy())
    return res


def predict_hardcoded_names(session, batches):
    import onnxruntime as ort
    rows, classes = _classes(session, batches)
    binding = session.io_binding()
    out = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
    binding.bind_ortvalue_output("probabilities", out)
    res = []
    for batch in batches:
        binding.bind_cpu_input("X", batch)
        session.run_with_iobinding(binding)
        res.append(out.numpy().copy())
    return np.concatenate(res)


def predict_with_ort_values(session, batches):
    import onnxruntime as ort
    x_name, y_name = _names(session)
    return np.concatenate([session.run_with_ort_values([y_name], {x_name: ort.OrtValue.ortvalue_from_numpy(b)})[0]
                           .numpy() for b in batches])


def predict_last_batch_only(session, batches):
    import onnxruntime as ort
    x_name, y_name = _names(session)
    rows, classes = _classes(session, batches)
    binding = session.io_binding()
    out = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
    binding.bind_ortvalue_output(y_name, out)
    for batch in batches:
        binding.bind_cpu_input(x_name, batch)
        session.run_with_iobinding(binding)
    return out.numpy().copy()


def predict_one_big_batch(session, batches):
    """One binding, one run: all batches stacked into one input (the buffer sized for all of them)."""
    import onnxruntime as ort
    x_name, y_name = _names(session)
    rows, classes = _classes(session, batches)
    allx = np.ascontiguousarray(np.concatenate(batches))
    binding = session.io_binding()
    out = ort.OrtValue.ortvalue_from_shape_and_type([len(allx), classes], np.float32, "cpu")
    binding.bind_ortvalue_output(y_name, out)
    binding.bind_cpu_input(x_name, allx)
    session.run_with_iobinding(binding)
    return out.numpy().copy()


CORPUS = {
    "10.io_binding": [
        Right("blind2-iob-ortvalue-prefilled-result", answer=predict_bound_ortvalue),
        Right("blind2-iob-own-numpy-buffer", answer=predict_bound_numpy_buffer),
        Wrong("blind2-iob-ortvalue-update-inplace", answer=predict_bound_ortvalue_inputs, outputs_wrong=False),  # reclassified: its OrtValue shares memory with the caller's batches[0] (ascontiguousarray copies nothing), so update_inplace overwrites the caller's data
        Wrong("blind2-iob-plain-run", answer=predict_plain_run, skipped_skill=True),
        Wrong("blind2-iob-base-class-run", answer=predict_base_class_run, skipped_skill=True),
        Wrong("blind2-iob-c-session-run", answer=predict_c_session, skipped_skill=True),
        Wrong("blind2-iob-fresh-session", answer=predict_fresh_session, skipped_skill=True),
        Wrong("blind2-iob-run-with-ort-values", answer=predict_with_ort_values, skipped_skill=True),
        Wrong("blind2-iob-binding-per-batch", answer=predict_binding_per_batch),
        Wrong("blind2-iob-new-output-per-batch", answer=predict_new_output_each_batch),
        Wrong("blind2-iob-views-not-copies", answer=predict_views_not_copies),
        Wrong("blind2-iob-ort-allocates-output", answer=predict_ort_allocates, outputs_wrong=False),
        Wrong("blind2-iob-list-of-arrays", answer=predict_list_of_arrays, outputs_wrong=False),
        Wrong("blind2-iob-hardcoded-names", answer=predict_hardcoded_names),
        Wrong("blind2-iob-last-batch-only", answer=predict_last_batch_only),
        Wrong("blind2-iob-one-big-batch", answer=predict_one_big_batch, outputs_wrong=False),
    ],
}
