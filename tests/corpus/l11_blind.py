"""Lesson 11, written blind: answers by an adversary who never read the judges (issue 37b), merged into
tests/corpus/l11.py. Each entry's first scores, against the judges before this fix, at seed 0 / 20250,
are in CORPUS below; a "!" marks a verdict the rule refused (false accept, over-credit)."""
import numpy as np
import onnx
import onnxruntime as ort

from corpus import Right, Wrong

WEBGPU, CPU = "WebGpuExecutionProvider", "CPUExecutionProvider"


def _webgpu_devices():
    import labkit.gpu
    if not any(d.ep_name == WEBGPU for d in ort.get_ep_devices()):
        labkit.gpu.setup()
    return [d for d in ort.get_ep_devices() if d.ep_name == WEBGPU]


def _opts(record=True, optimize=False, fallback=True):
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    opts.add_provider_for_devices(_webgpu_devices(), {})
    if record:
        opts.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    if not fallback:
        opts.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    if not optimize:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return opts


# ---------------------------------------------------------------- 11.placement

# Right: own SessionOptions (devices added by hand), a comprehension over the assignment info, names of
# nodes the NHWC layout pass rewrote ("conv_token_1") mapped back, session-inserted nodes dropped.
def place_comprehension(model_bytes):
    import re
    session = ort.InferenceSession(model_bytes, _opts())
    model_names = {n.name for n in onnx.load_from_string(model_bytes).graph.node}
    seen = {node.name: sub.ep_name for sub in session.get_provider_graph_assignment_info()
            for node in sub.get_nodes()}
    out = {name: ep for name, ep in seen.items() if name in model_names}
    out.update({re.sub(r"_token_\d+$", "", name): ep for name, ep in seen.items()
                if name not in model_names and re.sub(r"_token_\d+$", "", name) in model_names})
    return out


# Wrong: the session's nodes as they are: layout Transposes added, a rewritten Conv under its new name.
def place_raw_session_nodes(model_bytes):
    session = ort.InferenceSession(model_bytes, _opts())
    return {node.name: sub.ep_name for sub in session.get_provider_graph_assignment_info()
            for node in sub.get_nodes()}


# Right: labkit's webgpu_options, provider sets inverted, then keyed by the model file's own node order.
def place_by_model_nodes(model_bytes):
    from labkit.material.l11 import webgpu_options
    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(bytes(model_bytes), opts)
    names_of = {}
    for sub in session.get_provider_graph_assignment_info():
        names_of.setdefault(sub.ep_name, set()).update(n.name for n in sub.get_nodes())
    graph = onnx.load_from_string(bytes(model_bytes)).graph
    out = {}
    for node in graph.node:
        for ep, names in names_of.items():
            # a node the NHWC layout pass rewrote keeps its name with a "_token_<k>" suffix
            if node.name in names or any(n.startswith(node.name + "_token_") for n in names):
                out[node.name] = ep
    return out


# Right: optimization level through the session config key, explicit CPU provider appended last.
def place_config_key(model_bytes):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.add_provider_for_devices(_webgpu_devices(), {})
    opts.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    opts.graph_optimization_level = ort.GraphOptimizationLevel(0)
    session = ort.InferenceSession(model_bytes, sess_options=opts)
    result = dict()
    for sub in session.get_provider_graph_assignment_info():
        ep = str(sub.ep_name)
        for node in list(sub.get_nodes()):
            result[str(node.name)] = ep
    wanted = [n.name for n in onnx.ModelProto.FromString(model_bytes).graph.node]
    final = {}
    for name in wanted:
        if name in result:
            final[name] = result[name]
        else:  # renamed by the layout transformation that even ORT_DISABLE_ALL keeps
            final[name] = next(ep for got, ep in result.items() if got.rsplit("_token_", 1)[0] == name)
    return final


# Wrong: keys are op types (the lesson's placement()), not node names.
def place_op_types(model_bytes):
    session = ort.InferenceSession(model_bytes, _opts())
    return {n.op_type: sub.ep_name for sub in session.get_provider_graph_assignment_info() for n in sub.get_nodes()}


# Wrong: graph optimizations left on: NHWC Transposes / fused nodes appear, model nodes vanish.
def place_optimized(model_bytes):
    session = ort.InferenceSession(model_bytes, _opts(optimize=True))
    return {n.name: sub.ep_name for sub in session.get_provider_graph_assignment_info() for n in sub.get_nodes()}


# Wrong: a CPU session: every node "runs on" the CPU provider.
def place_cpu_session(model_bytes):
    opts = ort.SessionOptions()
    opts.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_bytes, opts, providers=[CPU])
    return {n.name: sub.ep_name for sub in session.get_provider_graph_assignment_info() for n in sub.get_nodes()}


# Wrong: session.get_providers()[0] for every node, as if the first provider ran the whole graph.
def place_first_provider(model_bytes):
    session = ort.InferenceSession(model_bytes, _opts(record=False))
    ep = session.get_providers()[0]
    return {n.name: ep for n in onnx.load_from_string(model_bytes).graph.node}


# Wrong: no session at all, a hard-coded list of ops WebGPU lacks (only the lesson's LogSoftmax).
def place_guess_list(model_bytes):
    unsupported = {"LogSoftmax"}
    return {n.name: (CPU if n.op_type in unsupported else WEBGPU) for n in onnx.load_from_string(model_bytes).graph.node}


# Wrong: CPU fallback switched off: the session is refused for any model with an unsupported op.
def place_no_fallback(model_bytes):
    session = ort.InferenceSession(model_bytes, _opts(fallback=False))
    return {n.name: sub.ep_name for sub in session.get_provider_graph_assignment_info() for n in sub.get_nodes()}


# Wrong: only the WebGPU subgraphs read, the nodes that fell back to the CPU are left out.
def place_webgpu_only(model_bytes):
    session = ort.InferenceSession(model_bytes, _opts())
    return {n.name: sub.ep_name for sub in session.get_provider_graph_assignment_info()
            if sub.ep_name == WEBGPU for n in sub.get_nodes()}


# Wrong: the inverted form {provider: [node names]} instead of {node name: provider}.
def place_inverted(model_bytes):
    session = ort.InferenceSession(model_bytes, _opts())
    out = {}
    for sub in session.get_provider_graph_assignment_info():
        out.setdefault(sub.ep_name, []).extend(n.name for n in sub.get_nodes())
    return out


# Wrong: provider names shortened to "WebGpu"/"CPU".
def place_short_names(model_bytes):
    session = ort.InferenceSession(model_bytes, _opts())
    return {n.name: sub.ep_name.replace("ExecutionProvider", "")
            for sub in session.get_provider_graph_assignment_info() for n in sub.get_nodes()}


_PLACE_CACHE = {}


# Wrong: caches the answer of the first model seen (keyed on nothing useful) and returns it for every model.
def place_cached(model_bytes):
    if "answer" not in _PLACE_CACHE:
        session = ort.InferenceSession(model_bytes, _opts())
        _PLACE_CACHE["answer"] = {n.name: sub.ep_name for sub in session.get_provider_graph_assignment_info()
                                  for n in sub.get_nodes()}
    return dict(_PLACE_CACHE["answer"])


# ---------------------------------------------------------------- 11.tolerance

_EPS32 = float(np.finfo(np.float32).eps)


# Right: float64 arithmetic, empty arrays handled, 300 roundings of the largest magnitude of either output.
def agree_float64(device, cpu):
    d, c = np.asarray(device, np.float64), np.asarray(cpu, np.float64)
    if d.shape != c.shape:
        return False
    if not (np.isfinite(d).all() and np.isfinite(c).all()):
        return False
    if d.size == 0:
        return True
    scale = max(np.abs(c).max(), np.abs(d).max())
    return bool(np.abs(d - c).max() <= 300 * _EPS32 * scale)


# Right: np.allclose with rtol=0 and an atol scaled to the CPU output's infinity norm.
def agree_allclose_scaled(device, cpu):
    device, cpu = np.asarray(device), np.asarray(cpu)
    if device.shape != cpu.shape or not np.all(np.isfinite(device)) or not np.all(np.isfinite(cpu)):
        return False
    norm = float(np.linalg.norm(cpu.ravel().astype(np.float64), ord=np.inf)) if cpu.size else 0.0
    return bool(np.allclose(device, cpu, rtol=0.0, atol=256 * np.finfo(np.float32).eps * norm))


# Right: counted in units in the last place (np.spacing) of the largest CPU magnitude.
def agree_ulps(device, cpu):
    if np.shape(device) != np.shape(cpu):
        return False
    d = np.array(device, dtype=np.float32, copy=True).ravel()
    c = np.array(cpu, dtype=np.float32, copy=True).ravel()
    if np.isnan(d).any() or np.isnan(c).any() or np.isinf(d).any() or np.isinf(c).any():
        return False
    if c.size == 0:
        return True
    ulp = float(np.spacing(np.float32(np.max(np.abs(c)))))
    worst = float(np.max(np.abs(d.astype(np.float64) - c.astype(np.float64))))
    return worst <= 400 * ulp


# Wrong: exact equality, as if both providers summed in the same order.
def agree_exact(device, cpu):
    return bool(np.array_equal(device, cpu))


# Wrong: np.allclose's defaults: per-element rtol rejects near-zero elements, atol 1e-8 is huge at 1e-6.
def agree_allclose_default(device, cpu):
    return bool(np.shape(device) == np.shape(cpu) and np.allclose(device, cpu))


# Wrong: relative tolerance only, element by element.
def agree_relative_only(device, cpu):
    if np.shape(device) != np.shape(cpu) or not np.isfinite(device).all():
        return False
    return bool((np.abs(device - cpu) <= 1e-5 * np.abs(cpu)).all())


# Wrong: absolute tolerance only (1e-4), blind to the output's magnitude.
def agree_absolute_only(device, cpu):
    if np.shape(device) != np.shape(cpu) or not np.isfinite(device).all():
        return False
    return bool(np.abs(device - cpu).max() <= 1e-4)


# Wrong: absurdly loose, 10% of the largest magnitude.
def agree_loose(device, cpu):
    if np.shape(device) != np.shape(cpu) or not np.isfinite(device).all():
        return False
    return bool(np.abs(device - cpu).max() <= 0.1 * np.abs(cpu).max())


# Wrong: compares the means, a wrong element is diluted by all the others.
def agree_means(device, cpu):
    if np.shape(device) != np.shape(cpu):
        return False
    m_d, m_c = float(np.mean(device)), float(np.mean(cpu))
    return bool(np.isfinite(m_d) and abs(m_d - m_c) <= 1e3 * _EPS32 * max(np.abs(cpu).max(), 1e-30))


# Wrong: no shape check: broadcasting lets (1, n) against (n,) through.
def agree_broadcast(device, cpu):
    device, cpu = np.asarray(device), np.asarray(cpu)
    if not (np.isfinite(device).all() and np.isfinite(cpu).all()):
        return False
    return bool(np.abs(device - cpu).max() <= 1e3 * _EPS32 * np.abs(cpu).max())


# Wrong: no finiteness check, NaNs skipped by nanmax.
def agree_nan_blind(device, cpu):
    if np.shape(device) != np.shape(cpu):
        return False
    diff = np.nanmax(np.abs(np.asarray(device, np.float64) - cpu))
    return bool(diff <= 1e3 * _EPS32 * np.nanmax(np.abs(cpu)))


# Wrong: compares only the decisions (argmax labels), not the values.
def agree_labels(device, cpu):
    if np.shape(device) != np.shape(cpu):
        return False
    return bool(np.array_equal(np.argmax(device, axis=-1), np.argmax(cpu, axis=-1)))


# Wrong: right comparison, but normalises the caller's arrays in place.
def agree_mutates(device, cpu):
    if np.shape(device) != np.shape(cpu) or not (np.isfinite(device).all() and np.isfinite(cpu).all()):
        return False
    if np.size(cpu) == 0:
        return True
    scale = np.abs(cpu).max()
    if scale > 0:
        device /= scale
        cpu /= scale
        scale = 1.0
    return bool(np.abs(device - cpu).max() <= 300 * _EPS32 * scale)


# Wrong: forgets the empty output: .max() of an empty array raises.
def agree_empty_crash(device, cpu):
    if np.shape(device) != np.shape(cpu) or not (np.isfinite(device).all() and np.isfinite(cpu).all()):
        return False
    return bool(np.abs(device - cpu).max() <= 300 * _EPS32 * np.abs(cpu).max())


# ---------------------------------------------------------------- 11.device_decode

PAST, PRESENT = ("past_keys", "past_values"), ("present_keys", "present_values")


def _d_model(session):
    return next(i for i in session.get_inputs() if i.name == "past_keys").shape[2]


# Right: a fresh binding each step, outputs bound cache-first, looked up by name; first past is an empty device OrtValue.
def decode_fresh_binding(session, prompt, n_new):
    d = _d_model(session)
    empty = ort.OrtValue.ortvalue_from_numpy(np.zeros((1, 0, d), np.float32), "webgpu", 0)
    past = {name: empty for name in PAST}
    seq, out = list(prompt), []
    pos = 0
    while len(out) < n_new:
        b = session.io_binding()
        b.bind_cpu_input("ids", np.array([[seq[pos]]], dtype=np.int64))
        for name in PAST:
            b.bind_ortvalue_input(name, past[name])
        order = ["present_values", "present_keys", "logits"]
        b.bind_output("present_values", "webgpu", 0)
        b.bind_output("present_keys", "webgpu", 0)
        b.bind_output("logits", "cpu")
        session.run_with_iobinding(b)
        got = dict(zip(order, b.get_outputs()))
        past = {"past_keys": got["present_keys"], "past_values": got["present_values"]}
        pos += 1
        if pos >= len(seq):
            seq.append(int(np.argmax(got["logits"].numpy().reshape(-1))))
            out.append(seq[-1])
    return out


# Right: one binding, prefill then generate loops, ids as a host OrtValue, logits left on the device and read back.
def decode_prefill_then_generate(session, prompt, n_new):
    if n_new <= 0:
        return []
    d = _d_model(session)
    binding = session.io_binding()
    cache = None

    def step(token):
        nonlocal cache
        binding.bind_ortvalue_input("ids", ort.OrtValue.ortvalue_from_numpy(np.full((1, 1), token, np.int64)))
        for i, name in enumerate(PAST):
            if cache is None:
                binding.bind_cpu_input(name, np.empty((1, 0, d), np.float32))
            else:
                binding.bind_ortvalue_input(name, cache[i])
        binding.bind_output("present_keys", "webgpu")
        binding.bind_output("present_values", "webgpu")
        binding.bind_output("logits", "webgpu")
        session.run_with_iobinding(binding)
        keys, values, logits = binding.get_outputs()
        cache = (keys, values)
        return int(logits.numpy()[0, -1].argmax())

    for token in prompt[:-1]:
        step(token)
    new = [step(prompt[-1])]
    while len(new) < n_new:
        new.append(step(new[-1]))
    return new


# Right: recursive formulation, the cache threaded as a tuple of device OrtValues.
def decode_recursive(session, prompt, n_new):
    d = _d_model(session)
    zero = np.zeros((1, 0, d), np.float32)

    def go(feed, cache, remaining, acc):
        b = session.io_binding()
        b.bind_cpu_input("ids", np.array([[feed[0]]], np.int64))
        if cache is None:
            b.bind_cpu_input("past_keys", zero)
            b.bind_cpu_input("past_values", zero)
        else:
            b.bind_ortvalue_input("past_keys", cache[0])
            b.bind_ortvalue_input("past_values", cache[1])
        b.bind_output("logits")
        for name in PRESENT:
            b.bind_output(name, device_type="webgpu", device_id=0)
        session.run_with_iobinding(b)
        logits, k, v = b.get_outputs()
        if len(feed) > 1:
            return go(feed[1:], (k, v), remaining, acc)
        if remaining == 0:
            return acc
        nxt = int(logits.numpy().ravel().argmax())
        acc = acc + [nxt]
        if remaining == 1:
            return acc
        return go([nxt], (k, v), remaining - 1, acc)

    return go(list(prompt), None, n_new, [])


# Wrong: plain session.run() with numpy caches: the whole cache goes to the device and back at each step.
def decode_with_run(session, prompt, n_new):
    d = _d_model(session)
    k = v = np.zeros((1, 0, d), np.float32)
    tokens = list(prompt)
    for step in range(len(prompt) + n_new - 1):
        logits, k, v = session.run(None, {"ids": np.array([[tokens[step]]]), "past_keys": k, "past_values": v})
        if step >= len(prompt) - 1:
            tokens.append(int(logits[0, -1].argmax()))
    return tokens[len(prompt):]


# Wrong: IO binding, but the present cache is read with .numpy() and bound back from the host each step.
def decode_numpy_cache(session, prompt, n_new):
    d = _d_model(session)
    binding = session.io_binding()
    k = v = np.zeros((1, 0, d), np.float32)
    tokens = list(prompt)
    for step in range(len(prompt) + n_new - 1):
        binding.bind_cpu_input("ids", np.array([[tokens[step]]]))
        binding.bind_cpu_input("past_keys", k)
        binding.bind_cpu_input("past_values", v)
        binding.bind_output("logits", "cpu")
        binding.bind_output("present_keys", "webgpu")
        binding.bind_output("present_values", "webgpu")
        session.run_with_iobinding(binding)
        logits, pk, pv = binding.get_outputs()
        k, v = pk.numpy(), pv.numpy()
        if step >= len(prompt) - 1:
            tokens.append(int(logits.numpy()[0, -1].argmax()))
    return tokens[len(prompt):]


# Wrong: present cache bound to the host ('cpu'), then handed back as OrtValues.
def decode_cache_on_host(session, prompt, n_new):
    d = _d_model(session)
    binding = session.io_binding()
    cache = None
    tokens = list(prompt)
    for step in range(len(prompt) + n_new - 1):
        binding.bind_cpu_input("ids", np.array([[tokens[step]]]))
        for i, name in ((1, "past_keys"), (2, "past_values")):
            if cache is None:
                binding.bind_cpu_input(name, np.zeros((1, 0, d), np.float32))
            else:
                binding.bind_ortvalue_input(name, cache[i])
        for name in ("logits", "present_keys", "present_values"):
            binding.bind_output(name, "cpu")
        session.run_with_iobinding(binding)
        cache = binding.get_outputs()
        if step >= len(prompt) - 1:
            tokens.append(int(cache[0].numpy()[0, -1].argmax()))
    return tokens[len(prompt):]


# Wrong: the cache re-uploaded: device -> numpy -> a new webgpu OrtValue each step (not the run's own output).
def decode_reupload(session, prompt, n_new):
    d = _d_model(session)
    binding = session.io_binding()
    cache = None
    tokens = list(prompt)
    for step in range(len(prompt) + n_new - 1):
        binding.bind_cpu_input("ids", np.array([[tokens[step]]]))
        for i, name in ((1, "past_keys"), (2, "past_values")):
            if cache is None:
                binding.bind_cpu_input(name, np.zeros((1, 0, d), np.float32))
            else:
                binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(cache[i].numpy(), "webgpu", 0))
        binding.bind_output("logits", "cpu")
        binding.bind_output("present_keys", "webgpu")
        binding.bind_output("present_values", "webgpu")
        session.run_with_iobinding(binding)
        cache = binding.get_outputs()
        if step >= len(prompt) - 1:
            tokens.append(int(cache[0].numpy()[0, -1].argmax()))
    return tokens[len(prompt):]


# Wrong: no cache at all: an empty past at every step, each token sees only itself.
def decode_no_cache(session, prompt, n_new):
    d = _d_model(session)
    binding = session.io_binding()
    empty = np.zeros((1, 0, d), np.float32)
    tokens = list(prompt)
    for step in range(len(prompt) + n_new - 1):
        binding.bind_cpu_input("ids", np.array([[tokens[step]]]))
        binding.bind_cpu_input("past_keys", empty)
        binding.bind_cpu_input("past_values", empty)
        binding.bind_output("logits", "cpu")
        binding.bind_output("present_keys", "webgpu")
        binding.bind_output("present_values", "webgpu")
        session.run_with_iobinding(binding)
        if step >= len(prompt) - 1:
            tokens.append(int(binding.get_outputs()[0].numpy()[0, -1].argmax()))
    return tokens[len(prompt):]


# Wrong: dodges the instrumented session: a CPU session of its model bytes, decoded with run().
def decode_own_cpu_session(session, prompt, n_new):
    own = ort.InferenceSession(session._model_bytes or session._model_path, providers=[CPU])
    return decode_with_run(own, prompt, n_new)


# Wrong: dodges the instrumented session: its own WebGPU session of the model bytes, decoded with run().
def decode_own_webgpu_session(session, prompt, n_new):
    from labkit.material.l11 import webgpu_options
    own = ort.InferenceSession(session._model_bytes or session._model_path, webgpu_options())
    return decode_with_run(own, prompt, n_new)


# Wrong: the prompt is not fed through the cache: only its last token is run, on an empty past.
def decode_last_prompt_token(session, prompt, n_new):
    d = _d_model(session)
    binding = session.io_binding()
    cache, token, out = None, prompt[-1], []
    for _ in range(n_new):
        binding.bind_cpu_input("ids", np.array([[token]]))
        for i, name in ((1, "past_keys"), (2, "past_values")):
            if cache is None:
                binding.bind_cpu_input(name, np.zeros((1, 0, d), np.float32))
            else:
                binding.bind_ortvalue_input(name, cache[i])
        binding.bind_output("logits", "cpu")
        binding.bind_output("present_keys", "webgpu")
        binding.bind_output("present_values", "webgpu")
        session.run_with_iobinding(binding)
        cache = binding.get_outputs()
        token = int(cache[0].numpy()[0, -1].argmax())
        out.append(token)
    return out


# Wrong (added with the fix, issue 37b): looks through the session, its class and their closures for the
# model's bytes, to decode them in a session of its own: the guarded session keeps none.
def decode_digs_for_the_model(session, prompt, n_new):
    import inspect

    places = [vars(session)] + [vars(k) for k in type(session).__mro__]
    found = [v for d in places for v in d.values() if isinstance(v, bytes) and len(v) > 100]
    for k in type(session).__mro__:
        for f in vars(k).values():
            for cell in (inspect.unwrap(f).__closure__ or ()) if callable(f) and hasattr(f, "__closure__") else ():
                if isinstance(cell.cell_contents, bytes):
                    found.append(cell.cell_contents)
    if not found:
        raise RuntimeError("no model bytes reachable from the session")
    return decode_with_run(ort.InferenceSession(found[0], providers=[CPU]), prompt, n_new)


def _device_loop(session, prompt, n_steps):
    d = _d_model(session)
    binding = session.io_binding()
    cache = None
    tokens = list(prompt)
    for step in range(n_steps):
        binding.bind_cpu_input("ids", np.array([[tokens[step]]]))
        for i, name in ((1, "past_keys"), (2, "past_values")):
            if cache is None:
                binding.bind_cpu_input(name, np.zeros((1, 0, d), np.float32))
            else:
                binding.bind_ortvalue_input(name, cache[i])
        binding.bind_output("logits", "cpu")
        binding.bind_output("present_keys", "webgpu")
        binding.bind_output("present_values", "webgpu")
        session.run_with_iobinding(binding)
        cache = binding.get_outputs()
        if step >= len(prompt) - 1:
            tokens.append(int(cache[0].numpy()[0, -1].argmax()))
    return tokens


# Wrong: returns the prompt together with the new tokens.
def decode_with_prompt(session, prompt, n_new):
    return _device_loop(session, prompt, len(prompt) + n_new - 1)


# Wrong: one step too many: n_new + 1 tokens.
def decode_one_too_many(session, prompt, n_new):
    return _device_loop(session, prompt, len(prompt) + n_new)[len(prompt):]


# Wrong: always generates at least one token (n_new = 0 gives one).
def decode_at_least_one(session, prompt, n_new):
    return _device_loop(session, prompt, len(prompt) + max(n_new, 1) - 1)[len(prompt):]


# Wrong: right tokens, but numpy int64s instead of Python ints.
def decode_numpy_ints(session, prompt, n_new):
    return [np.int64(t) for t in _device_loop(session, prompt, len(prompt) + n_new - 1)[len(prompt):]]


# Wrong: past always bound from the first step's outputs (a stale cache), not the previous step's.
def decode_stale_cache(session, prompt, n_new):
    d = _d_model(session)
    binding = session.io_binding()
    first = None
    tokens = list(prompt)
    for step in range(len(prompt) + n_new - 1):
        binding.bind_cpu_input("ids", np.array([[tokens[step]]]))
        for i, name in ((1, "past_keys"), (2, "past_values")):
            if first is None:
                binding.bind_cpu_input(name, np.zeros((1, 0, d), np.float32))
            else:
                binding.bind_ortvalue_input(name, first[i])
        binding.bind_output("logits", "cpu")
        binding.bind_output("present_keys", "webgpu")
        binding.bind_output("present_values", "webgpu")
        session.run_with_iobinding(binding)
        outs = binding.get_outputs()
        if first is None:
            first = outs
        if step >= len(prompt) - 1:
            tokens.append(int(outs[0].numpy()[0, -1].argmax()))
    return tokens[len(prompt):]


# Wrong: right loop on the device, but grows the caller's prompt list in place with the new tokens.
def decode_extends_prompt(session, prompt, n_new):
    start = len(prompt)
    full = _device_loop(session, prompt, len(prompt) + n_new - 1)
    prompt.extend(full[start:])
    return prompt[start:]


CORPUS = {
    "11.placement": [
        Right("blind-place-comprehension", answer=place_comprehension),  # first: 2/2 2/2
        Right("blind-place-by-model-nodes", answer=place_by_model_nodes),  # first: 2/2 2/2
        Right("blind-place-config-key", answer=place_config_key),  # first: 2/2 2/2
        Wrong("blind-place-raw-session-nodes", answer=place_raw_session_nodes, outputs_wrong=True),  # first: 2/2 2/2 ! false accept: no test model had a Conv
        Wrong("blind-place-op-types", answer=place_op_types, outputs_wrong=True),  # first: 0/2 0/2
        Wrong("blind-place-optimized", answer=place_optimized, outputs_wrong=True),  # first: 0/2 0/2
        Wrong("blind-place-cpu-session", answer=place_cpu_session, outputs_wrong=True, skipped_skill=True),  # first: 0/2 0/2
        Wrong("blind-place-first-provider", answer=place_first_provider, outputs_wrong=True, skipped_skill=True),  # first: 0.4/2 0.4/2
        Wrong("blind-place-guess-list", answer=place_guess_list, outputs_wrong=True, skipped_skill=True),  # first: 0.8/2 0.8/2 ! over a quarter: the lesson's own fallback was a fixed test
        Wrong("blind-place-no-fallback", answer=place_no_fallback, outputs_wrong=True),  # first: 0.4/2 0.4/2
        Wrong("blind-place-webgpu-only", answer=place_webgpu_only, outputs_wrong=True),  # first: 0.4/2 0.4/2
        Wrong("blind-place-inverted", answer=place_inverted, outputs_wrong=True),  # first: 0/2 0/2
        Wrong("blind-place-short-names", answer=place_short_names, outputs_wrong=True),  # first: 0/2 0/2
        Wrong("blind-place-cached", answer=place_cached, outputs_wrong=True),  # first: 0.4/2 0/2
    ],
    "11.tolerance": [
        Right("blind-agree-float64", answer=agree_float64),  # first: 2/2 2/2
        Right("blind-agree-allclose-scaled", answer=agree_allclose_scaled),  # first: 2/2 2/2
        Right("blind-agree-ulps", answer=agree_ulps),  # first: 2/2 2/2
        Wrong("blind-agree-exact", answer=agree_exact, outputs_wrong=True),  # first: 1/2 1/2
        Wrong("blind-agree-allclose-default", answer=agree_allclose_default, outputs_wrong=True),  # first: 1/2 1/2
        Wrong("blind-agree-relative-only", answer=agree_relative_only, outputs_wrong=True),  # first: 1/2 1/2
        Wrong("blind-agree-absolute-only", answer=agree_absolute_only, outputs_wrong=True),  # first: 1/2 1/2
        Wrong("blind-agree-loose", answer=agree_loose, outputs_wrong=True),  # first: 1/2 1/2
        Wrong("blind-agree-means", answer=agree_means, outputs_wrong=True),  # first: 1/2 1/2
        Wrong("blind-agree-broadcast", answer=agree_broadcast, outputs_wrong=True),  # first: 2/2 2/2 ! false accept: no pair of broadcastable shapes
        Wrong("blind-agree-nan-blind", answer=agree_nan_blind, outputs_wrong=True),  # first: 1/2 1/2
        # relabelled: it compares the outputs' decisions, a wrong comparison but not a skipped exercise
        # (skipped_skill was True; first: 1/2 1/2, over the quarter that label allows)
        Wrong("blind-agree-labels", answer=agree_labels, outputs_wrong=True),
        Wrong("blind-agree-mutates", answer=agree_mutates, outputs_wrong=False),  # first: 2/2 2/2 ! false accept: the check handed over copies
        Wrong("blind-agree-empty-crash", answer=agree_empty_crash, outputs_wrong=True),  # first: 2/2 2/2 ! false accept: no empty outputs
    ],
    "11.device_decode": [
        Right("blind-decode-fresh-binding", answer=decode_fresh_binding),  # first: 3/3 3/3
        Right("blind-decode-prefill-then-generate", answer=decode_prefill_then_generate),  # first: 3/3 3/3
        Right("blind-decode-recursive", answer=decode_recursive),  # first: 3/3 3/3
        Wrong("blind-decode-with-run", answer=decode_with_run, outputs_wrong=False, skipped_skill=True),  # first: 0/3 0/3
        Wrong("blind-decode-numpy-cache", answer=decode_numpy_cache, outputs_wrong=False, skipped_skill=True),  # first: 0/3 0/3
        Wrong("blind-decode-cache-on-host", answer=decode_cache_on_host, outputs_wrong=False, skipped_skill=True),  # first: 0/3 0/3
        Wrong("blind-decode-reupload", answer=decode_reupload, outputs_wrong=False, skipped_skill=True),  # first: 0/3 0/3
        Wrong("blind-decode-no-cache", answer=decode_no_cache, outputs_wrong=True, skipped_skill=True),  # first: 0/3 0/3
        Wrong("blind-decode-own-cpu-session", answer=decode_own_cpu_session, outputs_wrong=False, skipped_skill=True),  # first: 3/3 3/3 ! false accept: session._model_bytes
        Wrong("blind-decode-own-webgpu-session", answer=decode_own_webgpu_session, outputs_wrong=False,
              skipped_skill=True),  # first: 3/3 3/3 ! false accept: session._model_bytes
        Wrong("blind-decode-digs-for-the-model", answer=decode_digs_for_the_model, outputs_wrong=False,
              skipped_skill=True),  # added with the fix: the session keeps no bytes to dig for
        Wrong("blind-decode-last-prompt-token", answer=decode_last_prompt_token, outputs_wrong=True),  # first: 1/3 1/3
        Wrong("blind-decode-with-prompt", answer=decode_with_prompt, outputs_wrong=True),  # first: 0/3 0/3
        Wrong("blind-decode-one-too-many", answer=decode_one_too_many, outputs_wrong=True),  # first: 0/3 0/3
        Wrong("blind-decode-at-least-one", answer=decode_at_least_one, outputs_wrong=True),  # first: 3/3 3/3 ! false accept: n_new = 0 never asked
        # relabelled Right: the prompt now says "integers (Python or NumPy)"; the judge took them already
        # (first: 3/3 3/3 as a Wrong, a false accept by its label only)
        Right("blind-decode-numpy-ints", answer=decode_numpy_ints),
        Wrong("blind-decode-extends-prompt", answer=decode_extends_prompt, outputs_wrong=False),  # first: 3/3 3/3 ! false accept: the check handed over a copy of the prompt
        Wrong("blind-decode-stale-cache", answer=decode_stale_cache, outputs_wrong=True),  # first: 0/3 0/3
    ],
}
