"""Blind corpus round 15, lesson 10 (written without seeing the judges).

Truths relied on (checked here with onnxruntime 1.31 on hand-built one-input/one-output graphs with arbitrary
input/output names, a strict wrapper that records every binding, bound buffer and run, and plain sessions):
- an OrtValue made by OrtValue.ortvalue_from_shape_and_type(...) or ortvalue_from_numpy(array) and bound once
  with bind_ortvalue_output keeps its buffer across run_with_iobinding calls; .numpy() of it is a VIEW that the
  next run overwrites (so appending .numpy() without a copy returns the last batch n times).
- binding.copy_outputs_to_cpu() returns copies; bind_cpu_input accepts non-contiguous float32 arrays (ORT copies
  them), bind_input(..., buffer_ptr=...) does not (it reads raw memory).
- a Fortran-ordered or strided float32 batch bound by raw pointer (bind_input(..., b.ctypes.data)) is read as
  row-major garbage; only a judge that passes non-C-contiguous batches catches it.
- run_with_ort_values / session._sess.run / a fresh binding per batch give the right numbers without using
  "one binding" or "one preallocated buffer": the prompt's refusal list names run(), an unbound first output,
  a multi-batch run and a new output buffer, but not run_with_ort_values nor a new IOBinding per batch.
Ambiguities in the prompt:
- an empty `batches` list: the rows are unknown; the Right answers return a (0, classes) float32 array when
  classes is a fixed number in the output shape (none of the Wrong ones relies on that case).
- the output dtype: the prompt says "(rows, classes)" but not float32; Right answers read the element type from
  session.get_outputs()[0].type.
- "one binding" vs re-binding the input every batch with bind_cpu_input (allowed: the input is not the
  preallocated buffer) vs a single input OrtValue updated in place (also Right here).
- mutating a caller's batch (using batches[0] as the input buffer) is not forbidden in words; marked a rule-break
  Wrong (outputs right) because the caller's data changes.
"""
from corpus import Right, Wrong


# ----------------------------------------------------------------------------------------------------- Right

def right_inplace_input(session, batches):
    # One input OrtValue updated in place, both bound once before the loop; results written into a
    # preallocated result array.
    import numpy as np
    import onnxruntime as ort

    kinds = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
             "tensor(int64)": np.int64, "tensor(int32)": np.int32}
    inp, outp = session.get_inputs()[0], session.get_outputs()[0]
    out_dtype = kinds.get(outp.type, np.float32)
    if not batches:
        classes = outp.shape[1] if isinstance(outp.shape[1], int) else 0
        return np.zeros((0, classes), out_dtype)
    first = np.asarray(batches[0])
    rows = first.shape[0]
    # a copy of its own: update_inplace below must not write into the caller's first batch
    x_val = ort.OrtValue.ortvalue_from_numpy(np.array(first, dtype=kinds.get(inp.type, np.float32), order="C"))
    binding = session.io_binding()
    binding.bind_ortvalue_input(inp.name, x_val)
    classes = int(outp.shape[1])
    y_val = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], out_dtype, "cpu")
    binding.bind_ortvalue_output(outp.name, y_val)
    result = np.empty((len(batches) * rows, classes), out_dtype)
    for k, b in enumerate(batches):
        if k:
            x_val.update_inplace(np.ascontiguousarray(b, dtype=kinds.get(inp.type, np.float32)))
        session.run_with_iobinding(binding)
        result[k * rows:(k + 1) * rows] = y_val.numpy()
    return result


def right_numpy_backed_buffer(session, batches):
    # The output buffer is a numpy array wrapped (no copy) by ortvalue_from_numpy; the array itself is read.
    import numpy as np
    import onnxruntime as ort

    in_name = session.get_inputs()[0].name
    out_meta = session.get_outputs()[0]
    rows = len(batches[0]) if batches else 0
    width = out_meta.shape[-1]
    dtype = np.float64 if out_meta.type == "tensor(double)" else np.float32
    if not batches:
        return np.empty((0, width if isinstance(width, int) else 0), dtype)
    host = np.empty((rows, width), dtype)
    buf = ort.OrtValue.ortvalue_from_numpy(host)
    io = session.io_binding()
    io.bind_ortvalue_output(out_meta.name, buf)
    pieces = []
    for batch in batches:
        io.bind_cpu_input(in_name, batch)
        session.run_with_iobinding(io)
        pieces.append(host.copy())
    return np.vstack(pieces)


def right_raw_pointer_and_copy_out(session, batches):
    # Inputs bound with the low-level bind_input(buffer_ptr=...) on contiguous copies; outputs read back with
    # copy_outputs_to_cpu(); a while loop over an iterator.
    import numpy as np
    import onnxruntime as ort

    x_name = session.get_inputs()[0].name
    y = session.get_outputs()[0]
    n_cls = y.shape[1]
    y_type = {"tensor(double)": np.float64}.get(y.type, np.float32)
    it = iter(batches)
    first = next(it, None)
    if first is None:
        return np.zeros((0, n_cls if isinstance(n_cls, int) else 0), y_type)
    n_rows = int(np.shape(first)[0])
    out = ort.OrtValue.ortvalue_from_shape_and_type((n_rows, n_cls), y_type, "cpu")
    binding = session.io_binding()
    binding.bind_ortvalue_output(y.name, out)
    collected = []
    current = first
    while current is not None:
        x = np.ascontiguousarray(current, dtype=np.float32)
        binding.bind_input(x_name, "cpu", 0, np.float32, list(x.shape), x.ctypes.data)
        session.run_with_iobinding(binding)
        collected.extend(binding.copy_outputs_to_cpu()[0])
        current = next(it, None)
    return np.array(collected, dtype=y_type).reshape(-1, n_cls)


# ----------------------------------------------------------------------------------------------------- Wrong

def shortcut_plain_run(session, batches):
    # No IO binding at all: session.run per batch.
    import numpy as np

    name = session.get_inputs()[0].name
    return np.concatenate([session.run(None, {name: b})[0] for b in batches])


def shortcut_run_with_ort_values(session, batches):
    # No binding: run_with_ort_values per batch (not run(), but not IO binding either).
    import numpy as np
    import onnxruntime as ort

    iname, oname = session.get_inputs()[0].name, session.get_outputs()[0].name
    outs = []
    for b in batches:
        (res,) = session.run_with_ort_values([oname], {iname: ort.OrtValue.ortvalue_from_numpy(
            np.ascontiguousarray(b))})
        outs.append(res.numpy().copy())
    return np.concatenate(outs)


def shortcut_one_big_run(session, batches):
    # Concatenates all batches and makes a single bound run: one binding, one buffer, no loop.
    import numpy as np
    import onnxruntime as ort

    x = np.ascontiguousarray(np.concatenate(batches))
    o = session.get_outputs()[0]
    probe_cls = o.shape[1]
    buf = ort.OrtValue.ortvalue_from_shape_and_type([x.shape[0], probe_cls], np.float32, "cpu")
    b = session.io_binding()
    b.bind_cpu_input(session.get_inputs()[0].name, x)
    b.bind_ortvalue_output(o.name, buf)
    session.run_with_iobinding(b)
    return buf.numpy().copy()


def shortcut_inner_session(session, batches):
    # Reaches the C++ session behind the Python wrapper and runs it directly.
    import numpy as np

    inner = session._sess
    name = session.get_inputs()[0].name
    oname = session.get_outputs()[0].name
    return np.concatenate([inner.run([oname], {name: b}, None)[0] for b in batches])


def wrong_views_not_copied(session, batches):
    # Appends out.numpy() views of the one buffer: every block ends up as the last batch's output.
    import numpy as np
    import onnxruntime as ort

    i, o = session.get_inputs()[0], session.get_outputs()[0]
    out = ort.OrtValue.ortvalue_from_shape_and_type([batches[0].shape[0], o.shape[1]], np.float32, "cpu")
    binding = session.io_binding()
    binding.bind_ortvalue_output(o.name, out)
    results = []
    for b in batches:
        binding.bind_cpu_input(i.name, b)
        session.run_with_iobinding(binding)
        results.append(out.numpy())
    return np.concatenate(results)


def wrong_new_buffer_each_batch(session, batches):
    # Allocates (and binds) a fresh output OrtValue inside the loop.
    import numpy as np
    import onnxruntime as ort

    i, o = session.get_inputs()[0], session.get_outputs()[0]
    binding = session.io_binding()
    results = []
    for b in batches:
        out = ort.OrtValue.ortvalue_from_shape_and_type([b.shape[0], o.shape[1]], np.float32, "cpu")
        binding.bind_cpu_input(i.name, b)
        binding.bind_ortvalue_output(o.name, out)
        session.run_with_iobinding(binding)
        results.append(out.numpy())
    return np.concatenate(results)


def wrong_ort_allocated_output(session, batches):
    # bind_output(name, "cpu"): ORT allocates the output inside run; copies read back every batch.
    import numpy as np

    binding = session.io_binding()
    binding.bind_output(session.get_outputs()[0].name, "cpu")
    results = []
    for b in batches:
        binding.bind_cpu_input(session.get_inputs()[0].name, b)
        session.run_with_iobinding(binding)
        results.append(binding.copy_outputs_to_cpu()[0])
    return np.concatenate(results)


def wrong_binding_per_batch(session, batches):
    # The one preallocated buffer, but a new IOBinding for every batch.
    import numpy as np
    import onnxruntime as ort

    i, o = session.get_inputs()[0], session.get_outputs()[0]
    out = ort.OrtValue.ortvalue_from_shape_and_type([batches[0].shape[0], o.shape[1]], np.float32, "cpu")
    results = []
    for b in batches:
        binding = session.io_binding()
        binding.bind_cpu_input(i.name, b)
        binding.bind_ortvalue_output(o.name, out)
        session.run_with_iobinding(binding)
        results.append(out.numpy().copy())
    return np.concatenate(results)


def wrong_mutates_first_batch(session, batches):
    # Uses batches[0] itself as "the one input buffer" and copies every batch into it: the caller's first
    # batch ends up holding the last batch's data.
    import numpy as np
    import onnxruntime as ort

    i, o = session.get_inputs()[0], session.get_outputs()[0]
    x = batches[0]
    out = ort.OrtValue.ortvalue_from_shape_and_type([x.shape[0], o.shape[1]], np.float32, "cpu")
    binding = session.io_binding()
    binding.bind_ortvalue_output(o.name, out)
    results = []
    for b in list(batches):
        if b is not x:
            x[...] = b
        binding.bind_cpu_input(i.name, x)
        session.run_with_iobinding(binding)
        results.append(out.numpy().copy())
    return np.concatenate(results)


def wrong_update_inplace_aliases_caller(session, batches):
    # One input OrtValue updated in place, but wrapped around batches[0] itself (ortvalue_from_numpy does not
    # copy): update_inplace overwrites the caller's first batch.
    import numpy as np
    import onnxruntime as ort

    i, o = session.get_inputs()[0], session.get_outputs()[0]
    x_val = ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(batches[0]))
    y_val = ort.OrtValue.ortvalue_from_shape_and_type([len(batches[0]), o.shape[1]], np.float32, "cpu")
    binding = session.io_binding()
    binding.bind_ortvalue_input(i.name, x_val)
    binding.bind_ortvalue_output(o.name, y_val)
    blocks = []
    for k, b in enumerate(batches):
        if k:
            x_val.update_inplace(np.ascontiguousarray(b))
        session.run_with_iobinding(binding)
        blocks.append(y_val.numpy().copy())
    return np.concatenate(blocks)


def wrong_raw_pointer_noncontiguous(session, batches):
    # bind_input with the array's raw pointer, without making it C-contiguous first: a Fortran-ordered or
    # strided batch is read as if it were row-major.
    import numpy as np
    import onnxruntime as ort

    i, o = session.get_inputs()[0], session.get_outputs()[0]
    rows = batches[0].shape[0]
    out = ort.OrtValue.ortvalue_from_shape_and_type([rows, o.shape[1]], np.float32, "cpu")
    binding = session.io_binding()
    binding.bind_ortvalue_output(o.name, out)
    result = np.empty((len(batches) * rows, o.shape[1]), np.float32)
    for k, b in enumerate(batches):
        binding.bind_input(i.name, "cpu", 0, np.float32, list(b.shape), b.ctypes.data)
        session.run_with_iobinding(binding)
        result[k * rows:(k + 1) * rows] = out.numpy()
    return result


def wrong_stacked_3d(session, batches):
    # np.stack instead of concatenate: shape (len(batches), rows, classes).
    import numpy as np
    import onnxruntime as ort

    i, o = session.get_inputs()[0], session.get_outputs()[0]
    out = ort.OrtValue.ortvalue_from_shape_and_type([batches[0].shape[0], o.shape[1]], np.float32, "cpu")
    binding = session.io_binding()
    binding.bind_ortvalue_output(o.name, out)
    results = []
    for b in batches:
        binding.bind_cpu_input(i.name, b)
        session.run_with_iobinding(binding)
        results.append(out.numpy().copy())
    return np.stack(results)


def wrong_list_of_arrays(session, batches):
    # Returns the per-batch outputs as a list instead of one array.
    import numpy as np
    import onnxruntime as ort

    i, o = session.get_inputs()[0], session.get_outputs()[0]
    out = ort.OrtValue.ortvalue_from_shape_and_type([batches[0].shape[0], o.shape[1]], np.float32, "cpu")
    binding = session.io_binding()
    binding.bind_ortvalue_output(o.name, out)
    results = []
    for b in batches:
        binding.bind_cpu_input(i.name, b)
        session.run_with_iobinding(binding)
        results.append(out.numpy().copy())
    return results


def wrong_hardcoded_names(session, batches):
    # The lesson's names "X" and "probabilities" instead of the session's own.
    import numpy as np
    import onnxruntime as ort

    n_cls = session.get_outputs()[0].shape[1]
    out = ort.OrtValue.ortvalue_from_shape_and_type([len(batches[0]), n_cls], np.float32, "cpu")
    binding = session.io_binding()
    binding.bind_ortvalue_output("probabilities", out)
    results = []
    for b in batches:
        binding.bind_cpu_input("X", b)
        session.run_with_iobinding(binding)
        results.append(out.numpy().copy())
    return np.concatenate(results)


def wrong_interleaved_order(session, batches):
    # Concatenates along the class axis then reshapes: rows of different batches interleave.
    import numpy as np
    import onnxruntime as ort

    i, o = session.get_inputs()[0], session.get_outputs()[0]
    n_cls = o.shape[1]
    out = ort.OrtValue.ortvalue_from_shape_and_type([batches[0].shape[0], n_cls], np.float32, "cpu")
    binding = session.io_binding()
    binding.bind_ortvalue_output(o.name, out)
    results = []
    for b in batches:
        binding.bind_cpu_input(i.name, b)
        session.run_with_iobinding(binding)
        results.append(out.numpy().copy())
    return np.concatenate(results, axis=1).reshape(-1, n_cls)


def wrong_skips_last_batch(session, batches):
    # Binds the next batch at the end of each step, and stops one batch early.
    import numpy as np
    import onnxruntime as ort

    i, o = session.get_inputs()[0], session.get_outputs()[0]
    out = ort.OrtValue.ortvalue_from_shape_and_type([batches[0].shape[0], o.shape[1]], np.float32, "cpu")
    binding = session.io_binding()
    binding.bind_ortvalue_output(o.name, out)
    binding.bind_cpu_input(i.name, batches[0])
    results = []
    for k in range(len(batches) - 1):
        session.run_with_iobinding(binding)
        results.append(out.numpy().copy())
        binding.bind_cpu_input(i.name, batches[k + 1])
    if not results:
        session.run_with_iobinding(binding)
        results.append(out.numpy().copy())
    return np.concatenate(results)


def wrong_buffer_from_declared_shape(session, batches):
    # Sizes the buffer from the declared output shape, a symbolic batch dim read as 1.
    import numpy as np
    import onnxruntime as ort

    i, o = session.get_inputs()[0], session.get_outputs()[0]
    shape = [d if isinstance(d, int) else 1 for d in o.shape]
    out = ort.OrtValue.ortvalue_from_shape_and_type(shape, np.float32, "cpu")
    binding = session.io_binding()
    binding.bind_ortvalue_output(o.name, out)
    results = []
    for b in batches:
        binding.bind_cpu_input(i.name, b)
        session.run_with_iobinding(binding)
        results.append(out.numpy().copy())
    return np.concatenate(results)


CORPUS = {"10.io_binding": [
    Right("blind15-iob-inplace-input-ortvalue", answer=right_inplace_input),
    Right("blind15-iob-numpy-backed-buffer", answer=right_numpy_backed_buffer),
    Right("blind15-iob-raw-pointer-copy-out", answer=right_raw_pointer_and_copy_out),
    Wrong("blind15-iob-plain-run", answer=shortcut_plain_run, skipped_skill=True),
    Wrong("blind15-iob-run-with-ort-values", answer=shortcut_run_with_ort_values, skipped_skill=True),
    Wrong("blind15-iob-one-big-run", answer=shortcut_one_big_run, skipped_skill=True),
    Wrong("blind15-iob-inner-session", answer=shortcut_inner_session, skipped_skill=True),
    Wrong("blind15-iob-views-not-copied", answer=wrong_views_not_copied),
    Wrong("blind15-iob-new-buffer-each-batch", answer=wrong_new_buffer_each_batch, outputs_wrong=False),
    Wrong("blind15-iob-ort-allocated-output", answer=wrong_ort_allocated_output, outputs_wrong=False),
    Wrong("blind15-iob-binding-per-batch", answer=wrong_binding_per_batch, outputs_wrong=False),
    Wrong("blind15-iob-mutates-first-batch", answer=wrong_mutates_first_batch, outputs_wrong=False),
    Wrong("blind15-iob-update-inplace-aliases-caller", answer=wrong_update_inplace_aliases_caller,
          outputs_wrong=False),
    Wrong("blind15-iob-raw-pointer-noncontiguous", answer=wrong_raw_pointer_noncontiguous),
    Wrong("blind15-iob-stacked-3d", answer=wrong_stacked_3d),
    Wrong("blind15-iob-list-of-arrays", answer=wrong_list_of_arrays, outputs_wrong=False),
    Wrong("blind15-iob-hardcoded-names", answer=wrong_hardcoded_names),
    Wrong("blind15-iob-interleaved-order", answer=wrong_interleaved_order),
    Wrong("blind15-iob-skips-last-batch", answer=wrong_skips_last_batch),
    Wrong("blind15-iob-buffer-declared-shape", answer=wrong_buffer_from_declared_shape),
]}
