"""Blind corpus round 12, lesson 10 (written without seeing the judges).

Truths relied on (onnxruntime 1.31.1, measured with session.record_ep_graph_assignment_info):
- 10.placement: with session.disable_cpu_ep_fallback = "1", listing CPUExecutionProvider EXPLICITLY is refused
  ("Conflicting session configuration: explicitly added the CPU EP ...") whatever the nodes, also [CPU] alone and
  [CPU, Azure]; without CPU listed it is refused only when some node lands on the CPU. So ops == [] with
  providers ["X"] and fallback False gives [] (session created), with CPU listed gives None.
- 10.placement: a provider listed twice is ignored the second time (ORT warns "Duplicate provider"); CPU listed
  in the middle takes every node the providers before it left, so providers after it get nothing.
- 10.io_binding: OrtValue.ortvalue_from_numpy(array) shares the numpy buffer; out.numpy() is a view of the bound
  buffer (overwritten by the next run); binding.bind_output(name, "cpu", 0, np.float32, shape, ptr) binds a
  preallocated numpy buffer by pointer.
Ambiguities: 10.placement: a real Python InferenceSession given an unknown provider retries with CPU listed
  explicitly (so real ORT would refuse ["Unknown"] + fallback False), but the prompt says such a provider is just
  skipped; followed the prompt. 10.io_binding: empty `batches` (what shape to return?) and the output dtype
  (float32 assumed by most answers) are not stated.
"""
from corpus import Right, Wrong

# ============================================================================ 10.placement
# -------------------------------------------------------------- right


def right_place_loop(ops, providers, supports, fallback=True):
    cpu = "CPUExecutionProvider"
    if not fallback and cpu in providers:
        return None
    order = []
    for p in providers:
        if (p == cpu or p in supports) and p not in order:
            order.append(p)
    result = []
    for op in ops:
        chosen = cpu
        for p in order:
            if p == cpu or op in supports[p]:
                chosen = p
                break
        result.append(chosen)
    if not fallback and cpu in result:
        return None
    return result


def right_place_reverse_override(ops, providers, supports, fallback=True):
    # walk the providers from lowest to highest priority, each one overwriting the nodes it can run
    CPU = "CPUExecutionProvider"
    if CPU in providers and not fallback:
        return None
    out = [CPU] * len(ops)
    for p in reversed(list(providers)):
        if p == CPU:
            out = [CPU] * len(ops)
        elif p in supports:
            can = set(supports[p])
            out = [p if op in can else cur for op, cur in zip(ops, out)]
    if not fallback and any(x == CPU for x in out):
        return None
    return out


def right_place_table(ops, providers, supports, fallback=True):
    # one lookup per distinct op type
    import itertools

    cpu = "CPUExecutionProvider"
    usable = [p for p in providers if p == cpu or p in supports]
    ranked = list(itertools.takewhile(lambda p: p != cpu, usable))
    table = {op: next((p for p in ranked if op in supports[p]), cpu) for op in set(ops)}
    placed = [table[op] for op in ops]
    refused = not fallback and (cpu in providers or cpu in placed)
    return None if refused else placed


# -------------------------------------------------------------- wrong


def wrong_place_no_conflict(ops, providers, supports, fallback=True):
    # refuses only when a node falls back; misses the "CPU listed explicitly" conflict
    cpu = "CPUExecutionProvider"
    res = []
    for op in ops:
        res.append(next((p for p in providers if p == cpu or (p in supports and op in supports[p])), cpu))
    if not fallback and cpu in res:
        return None
    return res


def wrong_place_cpu_last(ops, providers, supports, fallback=True):
    # CPU treated as the fallback even where it is listed first: accelerators listed after it still win
    cpu = "CPUExecutionProvider"
    if not fallback and cpu in providers:
        return None
    res = [next((p for p in providers if p != cpu and p in supports and op in supports[p]), cpu) for op in ops]
    return None if (not fallback and cpu in res) else res


def wrong_place_unknown_runs_all(ops, providers, supports, fallback=True):
    # a listed provider missing from `supports` is assumed to run everything
    cpu = "CPUExecutionProvider"
    if not fallback and cpu in providers:
        return None
    res = [next((p for p in providers if p == cpu or op in supports.get(p, ops)), cpu) for op in ops]
    return None if (not fallback and cpu in res) else res


def wrong_place_lowest_priority(ops, providers, supports, fallback=True):
    # the LAST capable provider wins
    cpu = "CPUExecutionProvider"
    if not fallback and cpu in providers:
        return None
    res = []
    for op in ops:
        cands = [p for p in providers if p != cpu and p in supports and op in supports[p]]
        res.append(cands[-1] if cands else cpu)
    return None if (not fallback and cpu in res) else res


def wrong_place_none_entries(ops, providers, supports, fallback=True):
    # no fallback: None for the nodes that would fall back, instead of refusing the session
    def right_place_loop(ops, providers, supports, fallback=True):
        cpu = "CPUExecutionProvider"
        if not fallback and cpu in providers:
            return None
        order = []
        for p in providers:
            if (p == cpu or p in supports) and p not in order:
                order.append(p)
        result = []
        for op in ops:
            chosen = cpu
            for p in order:
                if p == cpu or op in supports[p]:
                    chosen = p
                    break
            result.append(chosen)
        if not fallback and cpu in result:
            return None
        return result

    cpu = "CPUExecutionProvider"
    out = right_place_loop(ops, providers, supports, True)
    if not fallback:
        return [None if p == cpu else p for p in out]
    return out


def wrong_place_refuse_empty(ops, providers, supports, fallback=True):
    # "nothing ran on the accelerator" is refused too: ops == [] with fallback off gives None
    def right_place_loop(ops, providers, supports, fallback=True):
        cpu = "CPUExecutionProvider"
        if not fallback and cpu in providers:
            return None
        order = []
        for p in providers:
            if (p == cpu or p in supports) and p not in order:
                order.append(p)
        result = []
        for op in ops:
            chosen = cpu
            for p in order:
                if p == cpu or op in supports[p]:
                    chosen = p
                    break
            result.append(chosen)
        if not fallback and cpu in result:
            return None
        return result

    out = right_place_loop(ops, providers, supports, fallback)
    if not fallback and (out is None or not out):
        return None
    return out


def wrong_place_always_refuse(ops, providers, supports, fallback=True):
    # fallback off -> always refused
    def right_place_loop(ops, providers, supports, fallback=True):
        cpu = "CPUExecutionProvider"
        if not fallback and cpu in providers:
            return None
        order = []
        for p in providers:
            if (p == cpu or p in supports) and p not in order:
                order.append(p)
        result = []
        for op in ops:
            chosen = cpu
            for p in order:
                if p == cpu or op in supports[p]:
                    chosen = p
                    break
            result.append(chosen)
        if not fallback and cpu in result:
            return None
        return result

    if not fallback:
        return None
    return right_place_loop(ops, providers, supports, True)


def wrong_place_short_names(ops, providers, supports, fallback=True):
    # "CPU" instead of "CPUExecutionProvider" for the fallback
    def right_place_loop(ops, providers, supports, fallback=True):
        cpu = "CPUExecutionProvider"
        if not fallback and cpu in providers:
            return None
        order = []
        for p in providers:
            if (p == cpu or p in supports) and p not in order:
                order.append(p)
        result = []
        for op in ops:
            chosen = cpu
            for p in order:
                if p == cpu or op in supports[p]:
                    chosen = p
                    break
            result.append(chosen)
        if not fallback and cpu in result:
            return None
        return result

    out = right_place_loop(ops, providers, supports, fallback)
    return None if out is None else ["CPU" if p == "CPUExecutionProvider" else p for p in out]


def wrong_place_first_supported_only(ops, providers, supports, fallback=True):
    # only the FIRST available accelerator is considered; the rest go to the CPU
    cpu = "CPUExecutionProvider"
    if not fallback and cpu in providers:
        return None
    first = next((p for p in providers if p in supports), None)
    res = [first if first and op in supports[first] else cpu for op in ops]
    return None if (not fallback and cpu in res) else res


def wrong_place_tuple(ops, providers, supports, fallback=True):
    # right names, as a tuple (the prompt asks for a list)
    def right_place_loop(ops, providers, supports, fallback=True):
        cpu = "CPUExecutionProvider"
        if not fallback and cpu in providers:
            return None
        order = []
        for p in providers:
            if (p == cpu or p in supports) and p not in order:
                order.append(p)
        result = []
        for op in ops:
            chosen = cpu
            for p in order:
                if p == cpu or op in supports[p]:
                    chosen = p
                    break
            result.append(chosen)
        if not fallback and cpu in result:
            return None
        return result

    out = right_place_loop(ops, providers, supports, fallback)
    return None if out is None else tuple(out)


# -------------------------------------------------------------- shortcuts


def shortcut_place_cpu_build(ops, providers, supports, fallback=True):
    # "on my machine everything runs on the CPU": ignores supports
    if not fallback:
        return None
    return ["CPUExecutionProvider" for _ in ops]


def shortcut_place_available(ops, providers, supports, fallback=True):
    # asks the installed onnxruntime which providers exist instead of reading `supports`
    import onnxruntime as ort

    avail = set(ort.get_available_providers())
    cpu = "CPUExecutionProvider"
    if not fallback and cpu in providers:
        return None
    res = [next((p for p in providers if p in avail and p in supports and op in supports[p]), cpu) for op in ops]
    return None if (not fallback and cpu in res) else res


def shortcut_place_hostile(ops, providers, supports, fallback=True):
    class Same(list):
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

    return Same(["CPUExecutionProvider"] * len(ops))


# ============================================================================ 10.io_binding
# -------------------------------------------------------------- right


def right_bound_shape_type(session, batches):
    import numpy as np
    import onnxruntime as ort

    inp, out = session.get_inputs()[0].name, session.get_outputs()[0].name
    if not batches:
        return np.zeros((0, session.get_outputs()[0].shape[1]), np.float32)
    rows = batches[0].shape[0]
    classes = session.get_outputs()[0].shape[1]
    if not isinstance(classes, int):  # symbolic: learn it without running (the model's last dim is unknown)
        classes = None
    binding = session.io_binding()
    buf = None
    results = []
    for b in batches:
        if buf is None:
            if classes is None:
                raise ValueError("unknown class count")
            buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
            binding.bind_ortvalue_output(out, buf)
        binding.bind_cpu_input(inp, np.ascontiguousarray(b))
        session.run_with_iobinding(binding)
        results.append(buf.numpy().copy())
    return np.concatenate(results, axis=0)


def right_bound_numpy_buffer(session, batches):
    # the output buffer is a numpy array wrapped without a copy; results written into a preallocated array
    import numpy as np
    import onnxruntime as ort

    i_meta, o_meta = session.get_inputs()[0], session.get_outputs()[0]
    dtype = {"tensor(float)": np.float32, "tensor(double)": np.float64}.get(o_meta.type, np.float32)
    classes = o_meta.shape[-1]
    rows = batches[0].shape[0] if len(batches) else 0
    total = np.empty((len(batches) * rows, classes), dtype)
    if not len(batches):
        return total
    host = np.empty((rows, classes), dtype)
    binding = session.io_binding()
    binding.bind_ortvalue_output(o_meta.name, ort.OrtValue.ortvalue_from_numpy(host))
    for k, batch in enumerate(batches):
        binding.bind_ortvalue_input(i_meta.name, ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(batch)))
        session.run_with_iobinding(binding)
        total[k * rows:(k + 1) * rows] = host
    return total


def right_bound_pointers(session, batches):
    # low-level bind_input / bind_output with raw buffer pointers
    import numpy as np

    iname, oname = session.get_inputs()[0].name, session.get_outputs()[0].name
    n = len(batches)
    rows, feats = batches[0].shape
    classes = session.get_outputs()[0].shape[1]
    out = np.zeros((rows, classes), np.float32)
    binding = session.io_binding()
    binding.bind_output(oname, "cpu", 0, np.float32, list(out.shape), out.ctypes.data)
    collected = np.zeros((n, rows, classes), np.float32)
    keep = []
    for k in range(n):
        x = np.ascontiguousarray(batches[k], dtype=np.float32)
        keep.append(x)  # the pointer must outlive the run
        binding.bind_input(iname, "cpu", 0, np.float32, list(x.shape), x.ctypes.data)
        session.run_with_iobinding(binding)
        collected[k] = out
    return collected.reshape(n * rows, classes)


def right_bound_vstack(session, batches):
    # copy_outputs_to_cpu() after each run (a copy), vstack at the end
    import numpy as np
    import onnxruntime as ort

    name_in = session.get_inputs()[0].name
    name_out = session.get_outputs()[0].name
    first = batches[0]
    out = ort.OrtValue.ortvalue_from_shape_and_type((first.shape[0], session.get_outputs()[0].shape[1]),
                                                   np.float32, "cpu", 0)
    io = session.io_binding()
    io.bind_ortvalue_output(name_out, out)
    parts = []
    for x in batches:
        io.bind_cpu_input(name_in, x)
        session.run_with_iobinding(io)
        parts.append(io.copy_outputs_to_cpu()[0])
    return np.vstack(parts)


# -------------------------------------------------------------- wrong


def wrong_bound_views(session, batches):
    # keeps out.numpy() views: every block ends up holding the LAST batch's outputs
    def _bound(session, batches, copy=True, alloc_each=False, new_binding=False, ort_alloc=False, bind_once=False,
               stack=False, reverse=False, name=None, dtype=None):
        import numpy as np
        import onnxruntime as ort

        iname = name or session.get_inputs()[0].name
        oname = session.get_outputs()[0].name
        rows = batches[0].shape[0]
        classes = session.get_outputs()[0].shape[1]
        binding = session.io_binding()
        buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], dtype or np.float32, "cpu")
        if ort_alloc:
            binding.bind_output(oname, "cpu")
        else:
            binding.bind_ortvalue_output(oname, buf)
        if bind_once:
            binding.bind_cpu_input(iname, batches[0])
        parts = []
        for b in (batches[::-1] if reverse else batches):
            if new_binding:
                binding = session.io_binding()
                binding.bind_ortvalue_output(oname, buf)
            if alloc_each:
                buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
                binding.bind_ortvalue_output(oname, buf)
            if not bind_once:
                binding.bind_cpu_input(iname, b)
            session.run_with_iobinding(binding)
            res = binding.get_outputs()[0].numpy() if ort_alloc else buf.numpy()
            parts.append(res.copy() if copy else res)
        return np.stack(parts) if stack else np.concatenate(parts)

    return _bound(session, batches, copy=False)


def wrong_bound_input_once(session, batches):
    # binds the first batch before the loop and never rebinds: every block is batch 0's output
    def _bound(session, batches, copy=True, alloc_each=False, new_binding=False, ort_alloc=False, bind_once=False,
               stack=False, reverse=False, name=None, dtype=None):
        import numpy as np
        import onnxruntime as ort

        iname = name or session.get_inputs()[0].name
        oname = session.get_outputs()[0].name
        rows = batches[0].shape[0]
        classes = session.get_outputs()[0].shape[1]
        binding = session.io_binding()
        buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], dtype or np.float32, "cpu")
        if ort_alloc:
            binding.bind_output(oname, "cpu")
        else:
            binding.bind_ortvalue_output(oname, buf)
        if bind_once:
            binding.bind_cpu_input(iname, batches[0])
        parts = []
        for b in (batches[::-1] if reverse else batches):
            if new_binding:
                binding = session.io_binding()
                binding.bind_ortvalue_output(oname, buf)
            if alloc_each:
                buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
                binding.bind_ortvalue_output(oname, buf)
            if not bind_once:
                binding.bind_cpu_input(iname, b)
            session.run_with_iobinding(binding)
            res = binding.get_outputs()[0].numpy() if ort_alloc else buf.numpy()
            parts.append(res.copy() if copy else res)
        return np.stack(parts) if stack else np.concatenate(parts)

    return _bound(session, batches, bind_once=True)


def wrong_bound_stack(session, batches):
    # (n, rows, classes) instead of (n * rows, classes)
    def _bound(session, batches, copy=True, alloc_each=False, new_binding=False, ort_alloc=False, bind_once=False,
               stack=False, reverse=False, name=None, dtype=None):
        import numpy as np
        import onnxruntime as ort

        iname = name or session.get_inputs()[0].name
        oname = session.get_outputs()[0].name
        rows = batches[0].shape[0]
        classes = session.get_outputs()[0].shape[1]
        binding = session.io_binding()
        buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], dtype or np.float32, "cpu")
        if ort_alloc:
            binding.bind_output(oname, "cpu")
        else:
            binding.bind_ortvalue_output(oname, buf)
        if bind_once:
            binding.bind_cpu_input(iname, batches[0])
        parts = []
        for b in (batches[::-1] if reverse else batches):
            if new_binding:
                binding = session.io_binding()
                binding.bind_ortvalue_output(oname, buf)
            if alloc_each:
                buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
                binding.bind_ortvalue_output(oname, buf)
            if not bind_once:
                binding.bind_cpu_input(iname, b)
            session.run_with_iobinding(binding)
            res = binding.get_outputs()[0].numpy() if ort_alloc else buf.numpy()
            parts.append(res.copy() if copy else res)
        return np.stack(parts) if stack else np.concatenate(parts)

    return _bound(session, batches, stack=True)


def wrong_bound_reversed(session, batches):
    def _bound(session, batches, copy=True, alloc_each=False, new_binding=False, ort_alloc=False, bind_once=False,
               stack=False, reverse=False, name=None, dtype=None):
        import numpy as np
        import onnxruntime as ort

        iname = name or session.get_inputs()[0].name
        oname = session.get_outputs()[0].name
        rows = batches[0].shape[0]
        classes = session.get_outputs()[0].shape[1]
        binding = session.io_binding()
        buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], dtype or np.float32, "cpu")
        if ort_alloc:
            binding.bind_output(oname, "cpu")
        else:
            binding.bind_ortvalue_output(oname, buf)
        if bind_once:
            binding.bind_cpu_input(iname, batches[0])
        parts = []
        for b in (batches[::-1] if reverse else batches):
            if new_binding:
                binding = session.io_binding()
                binding.bind_ortvalue_output(oname, buf)
            if alloc_each:
                buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
                binding.bind_ortvalue_output(oname, buf)
            if not bind_once:
                binding.bind_cpu_input(iname, b)
            session.run_with_iobinding(binding)
            res = binding.get_outputs()[0].numpy() if ort_alloc else buf.numpy()
            parts.append(res.copy() if copy else res)
        return np.stack(parts) if stack else np.concatenate(parts)

    return _bound(session, batches, reverse=True)


def wrong_bound_hardcoded_name(session, batches):
    # the lesson's input name "X", whatever the session calls it
    def _bound(session, batches, copy=True, alloc_each=False, new_binding=False, ort_alloc=False, bind_once=False,
               stack=False, reverse=False, name=None, dtype=None):
        import numpy as np
        import onnxruntime as ort

        iname = name or session.get_inputs()[0].name
        oname = session.get_outputs()[0].name
        rows = batches[0].shape[0]
        classes = session.get_outputs()[0].shape[1]
        binding = session.io_binding()
        buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], dtype or np.float32, "cpu")
        if ort_alloc:
            binding.bind_output(oname, "cpu")
        else:
            binding.bind_ortvalue_output(oname, buf)
        if bind_once:
            binding.bind_cpu_input(iname, batches[0])
        parts = []
        for b in (batches[::-1] if reverse else batches):
            if new_binding:
                binding = session.io_binding()
                binding.bind_ortvalue_output(oname, buf)
            if alloc_each:
                buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
                binding.bind_ortvalue_output(oname, buf)
            if not bind_once:
                binding.bind_cpu_input(iname, b)
            session.run_with_iobinding(binding)
            res = binding.get_outputs()[0].numpy() if ort_alloc else buf.numpy()
            parts.append(res.copy() if copy else res)
        return np.stack(parts) if stack else np.concatenate(parts)

    return _bound(session, batches, name="X")


def wrong_bound_float64_buffer(session, batches):
    # a float64 output buffer for a float32 output
    def _bound(session, batches, copy=True, alloc_each=False, new_binding=False, ort_alloc=False, bind_once=False,
               stack=False, reverse=False, name=None, dtype=None):
        import numpy as np
        import onnxruntime as ort

        iname = name or session.get_inputs()[0].name
        oname = session.get_outputs()[0].name
        rows = batches[0].shape[0]
        classes = session.get_outputs()[0].shape[1]
        binding = session.io_binding()
        buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], dtype or np.float32, "cpu")
        if ort_alloc:
            binding.bind_output(oname, "cpu")
        else:
            binding.bind_ortvalue_output(oname, buf)
        if bind_once:
            binding.bind_cpu_input(iname, batches[0])
        parts = []
        for b in (batches[::-1] if reverse else batches):
            if new_binding:
                binding = session.io_binding()
                binding.bind_ortvalue_output(oname, buf)
            if alloc_each:
                buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
                binding.bind_ortvalue_output(oname, buf)
            if not bind_once:
                binding.bind_cpu_input(iname, b)
            session.run_with_iobinding(binding)
            res = binding.get_outputs()[0].numpy() if ort_alloc else buf.numpy()
            parts.append(res.copy() if copy else res)
        return np.stack(parts) if stack else np.concatenate(parts)

    import numpy as np

    return _bound(session, batches, dtype=np.float64)


def wrong_bound_list(session, batches):
    # right numbers, a list of per-batch arrays instead of one array
    def _bound(session, batches, copy=True, alloc_each=False, new_binding=False, ort_alloc=False, bind_once=False,
               stack=False, reverse=False, name=None, dtype=None):
        import numpy as np
        import onnxruntime as ort

        iname = name or session.get_inputs()[0].name
        oname = session.get_outputs()[0].name
        rows = batches[0].shape[0]
        classes = session.get_outputs()[0].shape[1]
        binding = session.io_binding()
        buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], dtype or np.float32, "cpu")
        if ort_alloc:
            binding.bind_output(oname, "cpu")
        else:
            binding.bind_ortvalue_output(oname, buf)
        if bind_once:
            binding.bind_cpu_input(iname, batches[0])
        parts = []
        for b in (batches[::-1] if reverse else batches):
            if new_binding:
                binding = session.io_binding()
                binding.bind_ortvalue_output(oname, buf)
            if alloc_each:
                buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
                binding.bind_ortvalue_output(oname, buf)
            if not bind_once:
                binding.bind_cpu_input(iname, b)
            session.run_with_iobinding(binding)
            res = binding.get_outputs()[0].numpy() if ort_alloc else buf.numpy()
            parts.append(res.copy() if copy else res)
        return np.stack(parts) if stack else np.concatenate(parts)

    import numpy as np

    full = _bound(session, batches)
    return list(np.split(full, len(batches)))


def wrong_bound_ort_allocates(session, batches):
    # bind_output(name, "cpu"): ORT allocates the output on every run (no preallocated buffer)
    def _bound(session, batches, copy=True, alloc_each=False, new_binding=False, ort_alloc=False, bind_once=False,
               stack=False, reverse=False, name=None, dtype=None):
        import numpy as np
        import onnxruntime as ort

        iname = name or session.get_inputs()[0].name
        oname = session.get_outputs()[0].name
        rows = batches[0].shape[0]
        classes = session.get_outputs()[0].shape[1]
        binding = session.io_binding()
        buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], dtype or np.float32, "cpu")
        if ort_alloc:
            binding.bind_output(oname, "cpu")
        else:
            binding.bind_ortvalue_output(oname, buf)
        if bind_once:
            binding.bind_cpu_input(iname, batches[0])
        parts = []
        for b in (batches[::-1] if reverse else batches):
            if new_binding:
                binding = session.io_binding()
                binding.bind_ortvalue_output(oname, buf)
            if alloc_each:
                buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
                binding.bind_ortvalue_output(oname, buf)
            if not bind_once:
                binding.bind_cpu_input(iname, b)
            session.run_with_iobinding(binding)
            res = binding.get_outputs()[0].numpy() if ort_alloc else buf.numpy()
            parts.append(res.copy() if copy else res)
        return np.stack(parts) if stack else np.concatenate(parts)

    return _bound(session, batches, ort_alloc=True)


def wrong_bound_alloc_each(session, batches):
    # a new OrtValue per batch, bound inside the loop
    def _bound(session, batches, copy=True, alloc_each=False, new_binding=False, ort_alloc=False, bind_once=False,
               stack=False, reverse=False, name=None, dtype=None):
        import numpy as np
        import onnxruntime as ort

        iname = name or session.get_inputs()[0].name
        oname = session.get_outputs()[0].name
        rows = batches[0].shape[0]
        classes = session.get_outputs()[0].shape[1]
        binding = session.io_binding()
        buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], dtype or np.float32, "cpu")
        if ort_alloc:
            binding.bind_output(oname, "cpu")
        else:
            binding.bind_ortvalue_output(oname, buf)
        if bind_once:
            binding.bind_cpu_input(iname, batches[0])
        parts = []
        for b in (batches[::-1] if reverse else batches):
            if new_binding:
                binding = session.io_binding()
                binding.bind_ortvalue_output(oname, buf)
            if alloc_each:
                buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
                binding.bind_ortvalue_output(oname, buf)
            if not bind_once:
                binding.bind_cpu_input(iname, b)
            session.run_with_iobinding(binding)
            res = binding.get_outputs()[0].numpy() if ort_alloc else buf.numpy()
            parts.append(res.copy() if copy else res)
        return np.stack(parts) if stack else np.concatenate(parts)

    return _bound(session, batches, alloc_each=True)


def wrong_bound_binding_each(session, batches):
    # a new binding per batch
    def _bound(session, batches, copy=True, alloc_each=False, new_binding=False, ort_alloc=False, bind_once=False,
               stack=False, reverse=False, name=None, dtype=None):
        import numpy as np
        import onnxruntime as ort

        iname = name or session.get_inputs()[0].name
        oname = session.get_outputs()[0].name
        rows = batches[0].shape[0]
        classes = session.get_outputs()[0].shape[1]
        binding = session.io_binding()
        buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], dtype or np.float32, "cpu")
        if ort_alloc:
            binding.bind_output(oname, "cpu")
        else:
            binding.bind_ortvalue_output(oname, buf)
        if bind_once:
            binding.bind_cpu_input(iname, batches[0])
        parts = []
        for b in (batches[::-1] if reverse else batches):
            if new_binding:
                binding = session.io_binding()
                binding.bind_ortvalue_output(oname, buf)
            if alloc_each:
                buf = ort.OrtValue.ortvalue_from_shape_and_type([rows, classes], np.float32, "cpu")
                binding.bind_ortvalue_output(oname, buf)
            if not bind_once:
                binding.bind_cpu_input(iname, b)
            session.run_with_iobinding(binding)
            res = binding.get_outputs()[0].numpy() if ort_alloc else buf.numpy()
            parts.append(res.copy() if copy else res)
        return np.stack(parts) if stack else np.concatenate(parts)

    return _bound(session, batches, new_binding=True)


def wrong_bound_pop_batches(session, batches):
    # right outputs, but consumes the caller's list (batches.pop)
    import numpy as np
    import onnxruntime as ort

    iname, oname = session.get_inputs()[0].name, session.get_outputs()[0].name
    buf = ort.OrtValue.ortvalue_from_shape_and_type([batches[0].shape[0], session.get_outputs()[0].shape[1]],
                                                   np.float32, "cpu")
    binding = session.io_binding()
    binding.bind_ortvalue_output(oname, buf)
    parts = []
    while batches:
        binding.bind_cpu_input(iname, batches.pop(0))
        session.run_with_iobinding(binding)
        parts.append(buf.numpy().copy())
    return np.concatenate(parts)


def wrong_bound_late_buffer(session, batches):
    # a first run with ORT-allocated output to "learn the shape", then the preallocated buffer
    import numpy as np
    import onnxruntime as ort

    iname, oname = session.get_inputs()[0].name, session.get_outputs()[0].name
    binding = session.io_binding()
    binding.bind_cpu_input(iname, batches[0])
    binding.bind_output(oname, "cpu")
    session.run_with_iobinding(binding)
    first = binding.get_outputs()[0].numpy().copy()
    buf = ort.OrtValue.ortvalue_from_shape_and_type(list(first.shape), first.dtype, "cpu")
    binding.bind_ortvalue_output(oname, buf)
    parts = [first]
    for b in batches[1:]:
        binding.bind_cpu_input(iname, b)
        session.run_with_iobinding(binding)
        parts.append(buf.numpy().copy())
    return np.concatenate(parts)


# -------------------------------------------------------------- shortcuts


def shortcut_bound_run(session, batches):
    import numpy as np

    name = session.get_inputs()[0].name
    return np.concatenate([session.run(None, {name: b})[0] for b in batches])


def shortcut_bound_c_session(session, batches):
    # the C++ session behind the Python wrapper: plain run(), around whatever the wrapper refuses
    import numpy as np

    inner = session._sess
    name = session.get_inputs()[0].name
    out = session.get_outputs()[0].name
    return np.concatenate([inner.run([out], {name: b}, None)[0] for b in batches])


def shortcut_bound_baseclass(session, batches):
    import numpy as np
    import onnxruntime as ort

    name = session.get_inputs()[0].name
    return np.concatenate([ort.InferenceSession.run(session, None, {name: b})[0] for b in batches])


def shortcut_bound_one_run(session, batches):
    # all batches concatenated and bound as ONE input, one output buffer, one run
    import numpy as np
    import onnxruntime as ort

    x = np.ascontiguousarray(np.concatenate(batches))
    classes = session.get_outputs()[0].shape[1]
    buf = ort.OrtValue.ortvalue_from_shape_and_type([len(x), classes], np.float32, "cpu")
    binding = session.io_binding()
    binding.bind_cpu_input(session.get_inputs()[0].name, x)
    binding.bind_ortvalue_output(session.get_outputs()[0].name, buf)
    session.run_with_iobinding(binding)
    return buf.numpy().copy()


def shortcut_bound_ort_values(session, batches):
    # run_with_ort_values: no binding at all
    import numpy as np
    import onnxruntime as ort

    name, out = session.get_inputs()[0].name, session.get_outputs()[0].name
    res = []
    for b in batches:
        vals = session.run_with_ort_values([out], {name: ort.OrtValue.ortvalue_from_numpy(b)})
        res.append(vals[0].numpy())
    return np.concatenate(res)


def shortcut_bound_own_session(session, batches):
    # a fresh session of its own from the model the wrapper keeps (bytes or path)
    import numpy as np
    import onnxruntime as ort

    src = getattr(session, "_model_bytes", None) or getattr(session, "_model_path", None)
    mine = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    name = mine.get_inputs()[0].name
    return np.concatenate([mine.run(None, {name: b})[0] for b in batches])


CORPUS = {
    "10.placement": [
        Right("blind12-place-loop", answer=right_place_loop),
        Right("blind12-place-reverse-override", answer=right_place_reverse_override),
        Right("blind12-place-table", answer=right_place_table),
        Wrong("blind12-place-no-cpu-conflict", answer=wrong_place_no_conflict),
        Wrong("blind12-place-cpu-last", answer=wrong_place_cpu_last),
        Wrong("blind12-place-unknown-runs-all", answer=wrong_place_unknown_runs_all),
        Wrong("blind12-place-lowest-priority", answer=wrong_place_lowest_priority),
        Wrong("blind12-place-none-entries", answer=wrong_place_none_entries),
        Wrong("blind12-place-refuse-empty", answer=wrong_place_refuse_empty),
        Wrong("blind12-place-always-refuse", answer=wrong_place_always_refuse),
        Wrong("blind12-place-short-names", answer=wrong_place_short_names),
        Wrong("blind12-place-first-accel-only", answer=wrong_place_first_supported_only),
        Wrong("blind12-place-tuple", answer=wrong_place_tuple, outputs_wrong=False),
        Wrong("blind12-place-cpu-build", answer=shortcut_place_cpu_build, skipped_skill=True),
        Wrong("blind12-place-ort-available", answer=shortcut_place_available, skipped_skill=True),
        Wrong("blind12-place-hostile-eq", answer=shortcut_place_hostile, skipped_skill=True),
    ],
    "10.io_binding": [
        Right("blind12-bind-shape-type", answer=right_bound_shape_type),
        Right("blind12-bind-numpy-buffer", answer=right_bound_numpy_buffer),
        Right("blind12-bind-pointers", answer=right_bound_pointers),
        Right("blind12-bind-copy-outputs-vstack", answer=right_bound_vstack),
        Wrong("blind12-bind-views", answer=wrong_bound_views),
        Wrong("blind12-bind-input-once", answer=wrong_bound_input_once),
        Wrong("blind12-bind-stack-3d", answer=wrong_bound_stack),
        Wrong("blind12-bind-reversed", answer=wrong_bound_reversed),
        Wrong("blind12-bind-name-X", answer=wrong_bound_hardcoded_name),
        Wrong("blind12-bind-float64-buffer", answer=wrong_bound_float64_buffer),
        Wrong("blind12-bind-list", answer=wrong_bound_list),
        Wrong("blind12-bind-ort-allocates", answer=wrong_bound_ort_allocates, outputs_wrong=False),
        Wrong("blind12-bind-alloc-each", answer=wrong_bound_alloc_each, outputs_wrong=False),
        Wrong("blind12-bind-binding-each", answer=wrong_bound_binding_each, outputs_wrong=False),
        Wrong("blind12-bind-pop-batches", answer=wrong_bound_pop_batches, outputs_wrong=False),
        Wrong("blind12-bind-late-buffer", answer=wrong_bound_late_buffer, outputs_wrong=False),
        Wrong("blind12-bind-run", answer=shortcut_bound_run, skipped_skill=True, outputs_wrong=False),
        Wrong("blind12-bind-c-session", answer=shortcut_bound_c_session, skipped_skill=True, outputs_wrong=False),
        Wrong("blind12-bind-baseclass-run", answer=shortcut_bound_baseclass, skipped_skill=True, outputs_wrong=False),
        Wrong("blind12-bind-one-run", answer=shortcut_bound_one_run, skipped_skill=True, outputs_wrong=False),
        Wrong("blind12-bind-ort-values", answer=shortcut_bound_ort_values, skipped_skill=True, outputs_wrong=False),
        Wrong("blind12-bind-own-session", answer=shortcut_bound_own_session, skipped_skill=True, outputs_wrong=False),
    ],
}
