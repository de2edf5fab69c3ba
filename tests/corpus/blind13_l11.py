"""Blind corpus round 13, lesson 11 (written without seeing the judges).
Truths relied on (all checked here on a SwiftShader WebGPU adapter, onnxruntime 1.23.2 + onnxruntime-ep-webgpu):
- 11.placement: with ORT_DISABLE_ALL + session.record_ep_graph_assignment_info, get_provider_graph_assignment_info()
  lists every node; WebGPU's NHWC rewrite renames Conv AND MaxPool (also other layout-sensitive ops) to
  `<name>_token_<k>` and adds nodes named `Transpose` (op Transpose); Memcpy nodes are not listed there but are in
  the verbose "Node placements" log (as `Memcpy`, `Memcpy_token_<k>`). Placement depends on dtype, not only on op type:
  Add/Mul/Neg/Abs on int64, Relu/Add on double fall back to CPU; LogSoftmax, Round, Sign, Mod, Hardmax, Celu fall back.
  With the default optimization level, constant folding removes nodes of the file (e.g. an Add of two initializers).
- 11.tolerance: truth = same shape, all finite on both sides, max|d-c| <= k*eps32*max|c| with k in [100, 1000]
  (I used 300); size-0 of one shape -> True; cpu all zero -> device must be exactly zero.
- 11.device_decode: truth = feed prompt tokens one at a time (ids (1,1) int64), argmax of the logits after the last
  prompt token is the first new token, etc.; compared with a CPU session run() loop (tokens identical on my seeds).
  Harness labkit.material.l11.device_decoder + callers_list used to prove the guard refusals.
- Measured: real WebGPU(SwiftShader)-vs-CPU float32 outputs of a MatMul/Tanh model differ by only ~4-5 roundings
  of max|cpu| at every scale 1e-6..1e6, so a 10-roundings bound (labelled Wrong: it rejects 50-80-rounding pairs
  that the prompt's 100..1000 range must accept) passes real-kernel pairs: a check that only uses such pairs
  cannot see it.
- Binding the device outputs once before the decode loop fails at the 2nd run (the present buffer keeps its
  first shape); outputs must be re-bound every step.
- The guard of device_decoder refuses a swapped cache (data_ptr check by name); session._sess.c_session.run()
  bypasses every guard in-process (only a separate process can stop it).
Ambiguities found in prompts:
- 11.tolerance "Return True/False": is np.bool_ acceptable? (I label np.bool_ Right.) A bound of exactly 100 vs
  a tighter one (10-50 roundings) is only wrong if the check's rounding pairs reach >50 roundings.
- 11.placement says only Conv gets `_token_<k>`; MaxPool (and likely AveragePool etc.) does too. An answer that
  strips the suffix only for op_type == 'Conv' is wrong on models with pooling - the prompt misleads here.
  Dropping added Transposes by op_type (instead of by "not in the file") loses the file's own Transpose nodes.
- 11.device_decode: the number of runs is not stated; a loop that also feeds the last generated token
  (len(prompt)+n_new runs instead of len(prompt)+n_new-1) is labelled Right here. Recomputing the whole sequence
  from an empty cache for every new token keeps the cache on the device and gives the right tokens but does
  O(n^2) runs: labelled Wrong (skipped_skill, outputs right) - arguable.
  Returning a NumPy array / tuple instead of a list: labelled Wrong(outputs_wrong=False) - arguable.
"""
from corpus import Right, Wrong


# ---------------------------------------------------------------- 11.placement helpers (none shared: each
# answer is self-contained, as the measurer calls them in a fresh process)

def right_placement_manual_opts(model_bytes):
    """Own SessionOptions (not webgpu_options), regex strip of any _token_<k>, filter by the file's names."""
    import re

    import onnx
    import onnxruntime as ort

    import labkit.gpu

    labkit.gpu.setup()
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    opts.add_provider_for_devices([d for d in ort.get_ep_devices() if d.ep_name == labkit.gpu.EP_NAME], {})
    sess = ort.InferenceSession(model_bytes, opts)
    names = [n.name for n in onnx.load_from_string(model_bytes).graph.node]
    found = {}
    for sub in sess.get_provider_graph_assignment_info():
        for node in sub.get_nodes():
            found[re.sub(r"_token_\d+$", "", node.name)] = sub.ep_name
    return {name: found[name] for name in names}


def right_placement_verbose_log(model_bytes):
    """No assignment-info API at all: capture the session's verbose "Node placements" log on fd 2."""
    import os
    import re
    import tempfile

    import onnx
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 0
    opts.log_verbosity_level = 0
    saved = os.dup(2)
    with tempfile.TemporaryFile() as log:
        os.dup2(log.fileno(), 2)
        try:
            ort.InferenceSession(model_bytes, opts)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        log.seek(0)
        text = log.read().decode("utf-8", "replace")
    order = [n.name for n in onnx.ModelProto.FromString(model_bytes).graph.node]
    wanted = set(order)
    result, ep = {}, None
    for line in text.splitlines():
        if "VerifyEachNodeIsAssignedToAnEp]" not in line:
            continue
        body = line.split("VerifyEachNodeIsAssignedToAnEp]", 1)[1]
        m = re.search(r"placed on \[(\w+)\]", body)
        if m:
            ep = m.group(1)
            if "All nodes" in body:  # one provider took everything: the log lists no node
                return {name: ep for name in order}
            continue
        m = re.match(r"\s+\S+ \((.*)\)\s*(\x1b\[m)?$", body)
        if m and ep:
            name = m.group(1)
            base = name.split("_token_")[0] if "_token_" in name else name
            if base in wanted:
                result[base] = ep
    return result


def right_placement_loop_partition(model_bytes):
    """webgpu_options + rpartition, a dict built in the session's order then reordered like the file."""
    import onnx
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_bytes, opts)
    model = onnx.ModelProto()
    model.ParseFromString(model_bytes)
    in_file = set()
    for n in model.graph.node:
        in_file.add(n.name)
    out = {}
    for sub in session.get_provider_graph_assignment_info():
        for n in sub.get_nodes():
            name = n.name
            head, sep, tail = name.rpartition("_token_")
            if sep and tail.isdigit():
                name = head
            if name in in_file:
                out[name] = str(sub.ep_name)
    return dict(sorted(out.items(), key=lambda kv: [n.name for n in model.graph.node].index(kv[0])))


def wrong_placement_keeps_token(model_bytes):
    """Forgets to map `<name>_token_<k>` back: Conv/MaxPool under the session's name, added Transposes too."""
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(model_bytes, opts)
    return {n.name: sub.ep_name for sub in s.get_provider_graph_assignment_info() for n in sub.get_nodes()}


def wrong_placement_strip_only_conv(model_bytes):
    """Reads the prompt literally: only Conv gets its suffix removed (MaxPool keeps `pool_token_5`, then
    filtering by the file's names drops it)."""
    import onnx
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(model_bytes, opts)
    names = {n.name for n in onnx.load_from_string(model_bytes).graph.node}
    out = {}
    for sub in s.get_provider_graph_assignment_info():
        for n in sub.get_nodes():
            name = n.name.rsplit("_token_", 1)[0] if n.op_type == "Conv" else n.name
            if name in names:
                out[name] = sub.ep_name
    return out


def wrong_placement_split_underscore(model_bytes):
    """Strips the suffix with split('_')[0]: breaks every node name that has an underscore."""
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(model_bytes, opts)
    out = {}
    for sub in s.get_provider_graph_assignment_info():
        for n in sub.get_nodes():
            if n.op_type == "Transpose" and n.name == "Transpose":
                continue
            out[n.name.split("_")[0] if "_token_" in n.name else n.name] = sub.ep_name
    return out


def wrong_placement_drop_transpose_op(model_bytes):
    """Leaves the added Transposes out by op type: the file's own Transpose nodes vanish too."""
    import re

    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(model_bytes, opts)
    return {re.sub(r"_token_\d+$", "", n.name): sub.ep_name
            for sub in s.get_provider_graph_assignment_info() for n in sub.get_nodes()
            if n.op_type != "Transpose"}


def wrong_placement_default_opt(model_bytes):
    """Forgets ORT_DISABLE_ALL: constant folding / fusions remove or rename nodes of the file."""
    import re

    import onnx
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    s = ort.InferenceSession(model_bytes, webgpu_options(record=True))
    names = [n.name for n in onnx.load_from_string(model_bytes).graph.node]
    got = {re.sub(r"_token_\d+$", "", n.name): sub.ep_name
           for sub in s.get_provider_graph_assignment_info() for n in sub.get_nodes()}
    return {k: got[k] for k in names if k in got}


def wrong_placement_positional(model_bytes):
    """Zips the file's nodes with the session's nodes in order: the session's order is by provider group
    and has extra Transposes."""
    import onnx
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(model_bytes, opts)
    eps = [sub.ep_name for sub in s.get_provider_graph_assignment_info() for _ in sub.get_nodes()]
    return {n.name: ep for n, ep in zip(onnx.load_from_string(model_bytes).graph.node, eps)}


def wrong_placement_short_ep_names(model_bytes):
    """Returns 'WebGPU' / 'CPU' instead of the provider names."""
    import re

    import onnx
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(model_bytes, opts)
    names = {n.name for n in onnx.load_from_string(model_bytes).graph.node}
    out = {}
    for sub in s.get_provider_graph_assignment_info():
        short = "WebGPU" if "WebGpu" in sub.ep_name else "CPU"
        for n in sub.get_nodes():
            name = re.sub(r"_token_\d+$", "", n.name)
            if name in names:
                out[name] = short
    return out


def wrong_placement_no_fallback(model_bytes):
    """Uses webgpu_options(fallback=False): raises on every model with an operator WebGPU lacks."""
    import re

    import onnx
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True, fallback=False)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(model_bytes, opts)
    names = {n.name for n in onnx.load_from_string(model_bytes).graph.node}
    return {re.sub(r"_token_\d+$", "", n.name): sub.ep_name
            for sub in s.get_provider_graph_assignment_info() for n in sub.get_nodes()
            if re.sub(r"_token_\d+$", "", n.name) in names}


def shortcut_placement_all_webgpu(model_bytes):
    """No session: claims every node runs on WebGPU."""
    import onnx

    return {n.name: "WebGpuExecutionProvider" for n in onnx.load_from_string(model_bytes).graph.node}


def shortcut_placement_op_table(model_bytes):
    """No session: a hand-made table of operators WebGPU lacks, by op type only (ignores dtypes)."""
    import onnx

    cpu_only = {"LogSoftmax", "Round", "Sign", "Mod", "Hardmax", "Celu", "Det", "NonZero", "Unique",
                "TopK", "NonMaxSuppression", "RoiAlign", "Einsum", "StringNormalizer", "CumSum", "ReverseSequence"}
    return {n.name: ("CPUExecutionProvider" if n.op_type in cpu_only else "WebGpuExecutionProvider")
            for n in onnx.load_from_string(model_bytes).graph.node}


def shortcut_placement_cpu_session(model_bytes):
    """A CPU-only session with assignment info: every node 'placed', all on the CPU."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    s = ort.InferenceSession(model_bytes, opts, providers=["CPUExecutionProvider"])
    return {n.name: sub.ep_name for sub in s.get_provider_graph_assignment_info() for n in sub.get_nodes()}


def shortcut_placement_hostile_dict(model_bytes):
    """A dict that claims to equal anything."""
    import onnx

    class Agreeable(dict):
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        __hash__ = None

    return Agreeable({n.name: "WebGpuExecutionProvider" for n in onnx.load_from_string(model_bytes).graph.node})


# ---------------------------------------------------------------- 11.tolerance

def right_tolerance_float64(device, cpu):
    """Everything in float64, 300 roundings, explicit checks."""
    import numpy as np

    d = np.asarray(device, dtype=np.float64)
    c = np.asarray(cpu, dtype=np.float64)
    if d.shape != c.shape:
        return False
    if d.size == 0:
        return True
    if not (np.isfinite(d).all() and np.isfinite(c).all()):
        return False
    bound = 300 * float(np.finfo(np.float32).eps) * float(np.max(np.abs(c)))
    return bool(np.max(np.abs(d - c)) <= bound)


def right_tolerance_python_loop(device, cpu):
    """Pure Python over flat elements, math.isfinite, bound 700 roundings, returns Python bool."""
    import math

    import numpy as np

    if np.shape(device) != np.shape(cpu):
        return False
    dev = np.ravel(device).tolist()
    ref = np.ravel(cpu).tolist()
    largest = 0.0
    for a, b in zip(dev, ref):
        if not (math.isfinite(a) and math.isfinite(b)):
            return False
        largest = max(largest, abs(b))
    room = 700 * 2.0 ** -23 * largest
    return all(abs(a - b) <= room for a, b in zip(dev, ref))


def right_tolerance_assert_allclose(device, cpu):
    """np.testing.assert_allclose with rtol=0 and a magnitude-scaled atol; NaN/inf and shape by hand
    (assert_allclose alone would call NaN==NaN equal). Returns np.bool_ (prompt: 'Return True')."""
    import numpy as np

    if device.shape != cpu.shape:
        return np.False_
    if device.size == 0:
        return np.True_
    if not np.isfinite(np.concatenate([device.ravel(), cpu.ravel()])).all():
        return np.False_
    atol = 150 * np.finfo(np.float32).eps * np.abs(cpu).max()
    try:
        np.testing.assert_allclose(device, cpu, rtol=0, atol=atol)
    except AssertionError:
        return np.False_
    return np.True_


def right_tolerance_ulps_of_scale(device, cpu):
    """Counts the error in units of spacing(max|cpu|) (one ulp of the largest term = eps*2^floor(log2))."""
    import numpy as np

    if tuple(device.shape) != tuple(cpu.shape):
        return False
    if not device.size:
        return True
    with np.errstate(invalid="ignore", over="ignore"):
        finite = bool(np.isfinite(device).all()) and bool(np.isfinite(cpu).all())
    if not finite:
        return False
    scale = np.float32(np.abs(cpu).max())
    err = float(np.abs(device.astype(np.float64) - cpu.astype(np.float64)).max())
    if scale == 0:
        return err == 0
    ulp = float(np.spacing(scale))  # between eps*scale/2 and eps*scale
    return err <= 400 * ulp


def wrong_tolerance_allclose(device, cpu):
    """np.allclose with its defaults: per-element rtol 1e-5 + atol 1e-8 (too loose at 1e-6, too strict for
    near-zero elements of large outputs; broadcasts shapes)."""
    import numpy as np

    return bool(np.allclose(device, cpu))


def wrong_tolerance_per_element_rel(device, cpu):
    """Relative error per element: a logit near 0 carrying rounding of large terms fails."""
    import numpy as np

    if device.shape != cpu.shape or not (np.isfinite(device).all() and np.isfinite(cpu).all()):
        return False
    eps = np.finfo(np.float32).eps
    return bool(np.all(np.abs(device - cpu) <= 1e3 * eps * np.abs(cpu)))


def wrong_tolerance_nan_slips(device, cpu):
    """`not any(diff > tol)`: NaN comparisons are False, so a NaN passes; no finite check, no shape check."""
    import numpy as np

    eps = np.finfo(np.float32).eps
    with np.errstate(invalid="ignore"):
        tol = 1e3 * eps * np.nanmax(np.abs(cpu)) if cpu.size else 0.0
        return not bool(np.any(np.abs(device - cpu) > tol))


def wrong_tolerance_fixed_atol(device, cpu):
    """A fixed absolute tolerance 1e-4, not scaled to magnitude."""
    import numpy as np

    if device.shape != cpu.shape:
        return False
    if device.size == 0:
        return True
    if not (np.isfinite(device).all() and np.isfinite(cpu).all()):
        return False
    return bool(np.abs(device - cpu).max() <= 1e-4)


def wrong_tolerance_too_tight(device, cpu):
    """Only 10 roundings allowed: real GPU summation order differs by more."""
    import numpy as np

    if device.shape != cpu.shape:
        return False
    if device.size == 0:
        return True
    if not (np.isfinite(device).all() and np.isfinite(cpu).all()):
        return False
    return bool(np.abs(device - cpu).max() <= 10 * np.finfo(np.float32).eps * np.abs(cpu).max())


def wrong_tolerance_too_loose(device, cpu):
    """rtol 1e-3 of the largest: ~8400 roundings, accepts a wrong element."""
    import numpy as np

    if device.shape != cpu.shape:
        return False
    if device.size == 0:
        return True
    if not (np.isfinite(device).all() and np.isfinite(cpu).all()):
        return False
    return bool(np.abs(device - cpu).max() <= 1e-3 * np.abs(cpu).max())


def wrong_tolerance_mean_error(device, cpu):
    """Mean absolute error instead of the largest one: one wrong element is diluted."""
    import numpy as np

    if device.shape != cpu.shape:
        return False
    if device.size == 0:
        return True
    if not (np.isfinite(device).all() and np.isfinite(cpu).all()):
        return False
    return bool(np.abs(device - cpu).mean() <= 300 * np.finfo(np.float32).eps * np.abs(cpu).max())


def wrong_tolerance_flat_compare(device, cpu):
    """Ravel both first and compare sizes only: a transposed / reshaped output of one size passes."""
    import numpy as np

    d, c = device.ravel(), cpu.ravel()
    if d.size != c.size:
        return False
    if d.size == 0:
        return True
    if not (np.isfinite(d).all() and np.isfinite(c).all()):
        return False
    return bool(np.abs(d - c).max() <= 300 * np.finfo(np.float32).eps * np.abs(c).max())


def wrong_tolerance_empty_crash(device, cpu):
    """Right otherwise, but max() of an empty array raises."""
    import numpy as np

    if device.shape != cpu.shape:
        return False
    if not (np.isfinite(device).all() and np.isfinite(cpu).all()):
        return False
    return bool(np.abs(device - cpu).max() <= 300 * np.finfo(np.float32).eps * np.abs(cpu).max())


def wrong_tolerance_same_nan_ok(device, cpu):
    """Treats NaN/inf in the same place on both sides as agreement (np.isclose equal_nan style)."""
    import numpy as np

    if device.shape != cpu.shape:
        return False
    if device.size == 0:
        return True
    same_bad = (~np.isfinite(device) | ~np.isfinite(cpu))
    if not np.array_equal(np.isnan(device), np.isnan(cpu)):
        return False
    if same_bad.any():
        if not np.all((device[same_bad] == cpu[same_bad]) | (np.isnan(device[same_bad]) & np.isnan(cpu[same_bad]))):
            return False
    ok = ~same_bad
    if not ok.any():
        return True
    return bool(np.abs(device[ok] - cpu[ok]).max() <= 300 * np.finfo(np.float32).eps * np.abs(cpu[ok]).max())


def wrong_tolerance_isnan_only(device, cpu):
    """Checks NaN but forgets infinities: an inf on the CPU side makes the bound infinite."""
    import numpy as np

    if device.shape != cpu.shape:
        return False
    if device.size == 0:
        return True
    if np.isnan(device).any() or np.isnan(cpu).any():
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.abs(device - cpu).max() <= 300 * np.finfo(np.float32).eps * np.abs(cpu).max())


def wrong_tolerance_writes_inputs(device, cpu):
    """Right result, but computes in place in the caller's `device` (raises on a read-only array)."""
    import numpy as np

    if device.shape != cpu.shape:
        return False
    if device.size == 0:
        return True
    if not (np.isfinite(device).all() and np.isfinite(cpu).all()):
        return False
    scale = np.abs(cpu).max()
    device -= cpu
    np.abs(device, out=device)
    return bool(device.max() <= 300 * np.finfo(np.float32).eps * scale)


def shortcut_tolerance_shape_only(device, cpu):
    """Compares shapes only."""
    return device.shape == cpu.shape


def shortcut_tolerance_argmax(device, cpu):
    """Compares the decision (argmax) only, as the lesson says for labels - not the values."""
    import numpy as np

    if device.shape != cpu.shape:
        return False
    if device.size == 0:
        return True
    return bool(np.argmax(device) == np.argmax(cpu))


def shortcut_tolerance_always_true(device, cpu):
    return True


def shortcut_tolerance_hostile_bool(device, cpu):
    """An object that equals both True and False."""
    class Both:
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        def __bool__(self):
            return True

        __hash__ = object.__hash__

    return Both()


# ---------------------------------------------------------------- 11.device_decode

def right_decode_logits_on_device(session, prompt, n_new):
    """Logits bound to the device too; argmax after .numpy(); empty past as a device OrtValue."""
    import numpy as np
    import onnxruntime as ort

    d_model = session.get_inputs()[1].shape[2]
    empty = ort.OrtValue.ortvalue_from_numpy(np.zeros((1, 0, d_model), np.float32), "webgpu", 0)
    binding = session.io_binding()
    keys = values = empty
    seq = list(prompt)
    pos = 0
    new = []
    while len(new) < n_new:
        binding.bind_cpu_input("ids", np.array([[seq[pos]]], dtype=np.int64))
        binding.bind_ortvalue_input("past_keys", keys)
        binding.bind_ortvalue_input("past_values", values)
        for name in ("logits", "present_keys", "present_values"):
            binding.bind_output(name, "webgpu")  # re-bound each step: the present grows by one position
        session.run_with_iobinding(binding)
        logits, keys, values = binding.get_outputs()
        pos += 1
        if pos >= len(seq):
            token = int(np.argmax(logits.numpy().reshape(-1)))
            new.append(token)
            seq.append(token)
    return new


def right_decode_fresh_binding(session, prompt, n_new):
    """A new IOBinding each step, outputs read by name, the tokens as NumPy integers."""
    import numpy as np

    d = session.get_inputs()[1].shape[-1]
    out_names = [o.name for o in session.get_outputs()]
    cache = None
    tokens = list(prompt)
    result = []
    if n_new == 0:
        return result
    for step in range(len(prompt) + n_new - 1):
        b = session.io_binding()
        b.bind_cpu_input("ids", np.full((1, 1), tokens[step], np.int64))
        if cache is None:
            b.bind_cpu_input("past_keys", np.empty((1, 0, d), np.float32))
            b.bind_cpu_input("past_values", np.empty((1, 0, d), np.float32))
        else:
            b.bind_ortvalue_input("past_keys", cache["present_keys"])
            b.bind_ortvalue_input("past_values", cache["present_values"])
        for name in out_names:
            b.bind_output(name, "cpu" if name == "logits" else "webgpu")
        session.run_with_iobinding(b)
        cache = dict(zip(out_names, b.get_outputs()))
        if step >= len(prompt) - 1:
            nxt = cache["logits"].numpy()[0, -1].argmax()
            result.append(nxt)  # np.int64: "Python or NumPy" integers
            tokens.append(int(nxt))
    return result


def right_decode_feed_every_token(session, prompt, n_new):
    """Prefill loop then generate loop that also feeds the last new token (one extra run); outputs bound
    in another order (present first, logits last)."""
    import numpy as np

    width = None
    for inp in session.get_inputs():
        if inp.name == "past_keys":
            width = inp.shape[2]
    binding = session.io_binding()
    state = {}

    def step(token):
        binding.bind_cpu_input("ids", np.array(token, dtype=np.int64).reshape(1, 1))
        for past, present in (("past_keys", "present_keys"), ("past_values", "present_values")):
            if present in state:
                binding.bind_ortvalue_input(past, state[present])
            else:
                binding.bind_cpu_input(past, np.zeros((1, 0, width), dtype=np.float32))
        binding.bind_output("present_keys", "webgpu")
        binding.bind_output("present_values", "webgpu")
        binding.bind_output("logits")
        session.run_with_iobinding(binding)
        k, v, logits = binding.get_outputs()
        state["present_keys"], state["present_values"] = k, v
        return logits.numpy()

    logits = None
    for t in prompt:
        logits = step(t)
    out = []
    for _ in range(n_new):
        t = int(logits.argmax())
        out.append(t)
        logits = step(t)
    return out


def wrong_decode_binds_outputs_once(session, prompt, n_new):
    """Binds the outputs to the device once, before the loop: the second run finds a present buffer one
    position too short (fails as soon as the cache has to grow past one position)."""
    import numpy as np
    import onnxruntime as ort

    d_model = session.get_inputs()[1].shape[2]
    empty = ort.OrtValue.ortvalue_from_numpy(np.zeros((1, 0, d_model), np.float32), "webgpu", 0)
    binding = session.io_binding()
    for name in ("logits", "present_keys", "present_values"):
        binding.bind_output(name, "webgpu")
    keys = values = empty
    seq = list(prompt)
    pos = 0
    new = []
    while len(new) < n_new:
        binding.bind_cpu_input("ids", np.array([[seq[pos]]], dtype=np.int64))
        binding.bind_ortvalue_input("past_keys", keys)
        binding.bind_ortvalue_input("past_values", values)
        session.run_with_iobinding(binding)
        logits, keys, values = binding.get_outputs()
        pos += 1
        if pos >= len(seq):
            token = int(np.argmax(logits.numpy().reshape(-1)))
            new.append(token)
            seq.append(token)
    return new


def wrong_decode_prompt_predictions(session, prompt, n_new):
    """Collects the argmax of every step, prompt steps included, then keeps the first n_new."""
    import numpy as np

    d = session.get_inputs()[1].shape[2]
    b = session.io_binding()
    cache, tokens, preds = None, list(prompt), []
    for step in range(len(prompt) + n_new - 1):
        b.bind_cpu_input("ids", np.array([[tokens[step]]]))
        for name, i in (("past_keys", 1), ("past_values", 2)):
            if cache is None:
                b.bind_cpu_input(name, np.zeros((1, 0, d), np.float32))
            else:
                b.bind_ortvalue_input(name, cache[i])
        b.bind_output("logits", "cpu")
        b.bind_output("present_keys", "webgpu")
        b.bind_output("present_values", "webgpu")
        session.run_with_iobinding(b)
        cache = b.get_outputs()
        tok = int(cache[0].numpy()[0, -1].argmax())
        preds.append(tok)
        if step >= len(prompt) - 1:
            tokens.append(tok)
    return preds[:n_new]


def wrong_decode_returns_whole_sequence(session, prompt, n_new):
    """Returns prompt + new tokens."""
    import numpy as np

    d = session.get_inputs()[1].shape[2]
    b = session.io_binding()
    cache, tokens = None, list(prompt)
    for step in range(len(prompt) + n_new - 1):
        b.bind_cpu_input("ids", np.array([[tokens[step]]]))
        for name, i in (("past_keys", 1), ("past_values", 2)):
            if cache is None:
                b.bind_cpu_input(name, np.zeros((1, 0, d), np.float32))
            else:
                b.bind_ortvalue_input(name, cache[i])
        b.bind_output("logits", "cpu")
        b.bind_output("present_keys", "webgpu")
        b.bind_output("present_values", "webgpu")
        session.run_with_iobinding(b)
        cache = b.get_outputs()
        if step >= len(prompt) - 1:
            tokens.append(int(cache[0].numpy()[0, -1].argmax()))
    return tokens


def wrong_decode_last_prompt_token_only(session, prompt, n_new):
    """Starts from an empty cache with only the last prompt token: the earlier prompt is never seen."""
    import numpy as np

    d = session.get_inputs()[1].shape[2]
    b = session.io_binding()
    cache, tok, out = None, prompt[-1], []
    for _ in range(n_new):
        b.bind_cpu_input("ids", np.array([[tok]], np.int64))
        for name, i in (("past_keys", 1), ("past_values", 2)):
            if cache is None:
                b.bind_cpu_input(name, np.zeros((1, 0, d), np.float32))
            else:
                b.bind_ortvalue_input(name, cache[i])
        b.bind_output("logits", "cpu")
        b.bind_output("present_keys", "webgpu")
        b.bind_output("present_values", "webgpu")
        session.run_with_iobinding(b)
        cache = b.get_outputs()
        tok = int(cache[0].numpy()[0, -1].argmax())
        out.append(tok)
    return out


def wrong_decode_n_new_zero(session, prompt, n_new):
    """Always yields at least one token: `out = [first]` then n_new - 1 more."""
    import numpy as np

    d = session.get_inputs()[1].shape[2]
    b = session.io_binding()
    state = [None]

    def step(t):
        b.bind_cpu_input("ids", np.array([[t]], np.int64))
        for name, i in (("past_keys", 1), ("past_values", 2)):
            if state[0] is None:
                b.bind_cpu_input(name, np.zeros((1, 0, d), np.float32))
            else:
                b.bind_ortvalue_input(name, state[0][i])
        b.bind_output("logits", "cpu")
        b.bind_output("present_keys", "webgpu")
        b.bind_output("present_values", "webgpu")
        session.run_with_iobinding(b)
        state[0] = b.get_outputs()
        return int(state[0][0].numpy().argmax())

    for t in prompt:
        nxt = step(t)
    out = [nxt]
    for _ in range(n_new - 1):
        nxt = step(nxt)
        out.append(nxt)
    return out


def wrong_decode_swapped_cache(session, prompt, n_new):
    """Binds present_values as the next past_keys and present_keys as past_values: runs, wrong tokens."""
    import numpy as np

    d = session.get_inputs()[1].shape[2]
    b = session.io_binding()
    cache, tokens = None, list(prompt)
    out = []
    for step in range(len(prompt) + n_new - 1):
        b.bind_cpu_input("ids", np.array([[tokens[step]]]))
        if cache is None:
            b.bind_cpu_input("past_keys", np.zeros((1, 0, d), np.float32))
            b.bind_cpu_input("past_values", np.zeros((1, 0, d), np.float32))
        else:
            b.bind_ortvalue_input("past_values", cache[1])
            b.bind_ortvalue_input("past_keys", cache[2])
        b.bind_output("logits", "cpu")
        b.bind_output("present_keys", "webgpu")
        b.bind_output("present_values", "webgpu")
        session.run_with_iobinding(b)
        cache = b.get_outputs()
        if step >= len(prompt) - 1:
            t = int(cache[0].numpy()[0, -1].argmax())
            tokens.append(t)
            out.append(t)
    return out


def wrong_decode_sampling(session, prompt, n_new):
    """Samples from softmax(logits) (seeded) instead of greedy argmax."""
    import numpy as np

    rng = np.random.default_rng(0)
    d = session.get_inputs()[1].shape[2]
    b = session.io_binding()
    cache, tokens, out = None, list(prompt), []
    for step in range(len(prompt) + n_new - 1):
        b.bind_cpu_input("ids", np.array([[tokens[step]]]))
        for name, i in (("past_keys", 1), ("past_values", 2)):
            if cache is None:
                b.bind_cpu_input(name, np.zeros((1, 0, d), np.float32))
            else:
                b.bind_ortvalue_input(name, cache[i])
        b.bind_output("logits", "cpu")
        b.bind_output("present_keys", "webgpu")
        b.bind_output("present_values", "webgpu")
        session.run_with_iobinding(b)
        cache = b.get_outputs()
        if step >= len(prompt) - 1:
            z = cache[0].numpy()[0, -1].astype(np.float64)
            p = np.exp(z - z.max())
            p /= p.sum()
            t = int(rng.choice(len(p), p=p))
            tokens.append(t)
            out.append(t)
    return out


def wrong_decode_mutates_prompt(session, prompt, n_new):
    """Right tokens, but appends them to the caller's prompt list."""
    import numpy as np

    d = session.get_inputs()[1].shape[2]
    b = session.io_binding()
    cache, start = None, len(prompt)
    for step in range(start + n_new - 1):
        b.bind_cpu_input("ids", np.array([[prompt[step]]]))
        for name, i in (("past_keys", 1), ("past_values", 2)):
            if cache is None:
                b.bind_cpu_input(name, np.zeros((1, 0, d), np.float32))
            else:
                b.bind_ortvalue_input(name, cache[i])
        b.bind_output("logits", "cpu")
        b.bind_output("present_keys", "webgpu")
        b.bind_output("present_values", "webgpu")
        session.run_with_iobinding(b)
        cache = b.get_outputs()
        if step >= start - 1:
            prompt.append(int(cache[0].numpy()[0, -1].argmax()))
    return prompt[start:]


def wrong_decode_returns_array(session, prompt, n_new):
    """Right tokens, returned as a NumPy array instead of a list."""
    import numpy as np

    d = session.get_inputs()[1].shape[2]
    b = session.io_binding()
    cache, tokens = None, list(prompt)
    for step in range(len(prompt) + n_new - 1):
        b.bind_cpu_input("ids", np.array([[tokens[step]]]))
        for name, i in (("past_keys", 1), ("past_values", 2)):
            if cache is None:
                b.bind_cpu_input(name, np.zeros((1, 0, d), np.float32))
            else:
                b.bind_ortvalue_input(name, cache[i])
        b.bind_output("logits", "cpu")
        b.bind_output("present_keys", "webgpu")
        b.bind_output("present_values", "webgpu")
        session.run_with_iobinding(b)
        cache = b.get_outputs()
        if step >= len(prompt) - 1:
            tokens.append(int(cache[0].numpy()[0, -1].argmax()))
    return np.array(tokens[len(prompt):], dtype=np.int64)


def shortcut_decode_run(session, prompt, n_new):
    """Plain session.run() with the cache on the host (the lesson's generate_with_run)."""
    import numpy as np

    d = session.get_inputs()[1].shape[2]
    pk = pv = np.zeros((1, 0, d), np.float32)
    tokens = list(prompt)
    for step in range(len(prompt) + n_new - 1):
        logits, pk, pv = session.run(None, {"ids": np.array([[tokens[step]]]), "past_keys": pk, "past_values": pv})
        if step >= len(prompt) - 1:
            tokens.append(int(logits[0, -1].argmax()))
    return tokens[len(prompt):]


def shortcut_decode_host_roundtrip(session, prompt, n_new):
    """IO binding, but the cache comes back to the host (.numpy()) and goes up again as a new OrtValue."""
    import numpy as np
    import onnxruntime as ort

    d = session.get_inputs()[1].shape[2]
    b = session.io_binding()
    pk = pv = np.zeros((1, 0, d), np.float32)
    tokens = list(prompt)
    for step in range(len(prompt) + n_new - 1):
        b.bind_cpu_input("ids", np.array([[tokens[step]]]))
        if pk.shape[1] == 0:
            b.bind_cpu_input("past_keys", pk)
            b.bind_cpu_input("past_values", pv)
        else:
            b.bind_ortvalue_input("past_keys", ort.OrtValue.ortvalue_from_numpy(pk, "webgpu", 0))
            b.bind_ortvalue_input("past_values", ort.OrtValue.ortvalue_from_numpy(pv, "webgpu", 0))
        b.bind_output("logits", "cpu")
        b.bind_output("present_keys", "webgpu")
        b.bind_output("present_values", "webgpu")
        session.run_with_iobinding(b)
        logits, k, v = b.get_outputs()
        pk, pv = k.numpy(), v.numpy()
        if step >= len(prompt) - 1:
            tokens.append(int(logits.numpy()[0, -1].argmax()))
    return tokens[len(prompt):]


def shortcut_decode_cache_bound_cpu(session, prompt, n_new):
    """IO binding with every output bound to the host and the cache re-bound with bind_cpu_input."""
    import numpy as np

    d = session.get_inputs()[1].shape[2]
    b = session.io_binding()
    pk = pv = np.zeros((1, 0, d), np.float32)
    tokens = list(prompt)
    for step in range(len(prompt) + n_new - 1):
        b.bind_cpu_input("ids", np.array([[tokens[step]]]))
        b.bind_cpu_input("past_keys", pk)
        b.bind_cpu_input("past_values", pv)
        for name in ("logits", "present_keys", "present_values"):
            b.bind_output(name, "cpu")
        session.run_with_iobinding(b)
        logits, pk, pv = (o.numpy() for o in b.get_outputs())
        if step >= len(prompt) - 1:
            tokens.append(int(logits[0, -1].argmax()))
    return tokens[len(prompt):]


def shortcut_decode_c_session(session, prompt, n_new):
    """Digs the C session out from under the guard and calls its run() with a host cache."""
    import numpy as np

    inner = session._sess
    inner = getattr(inner, "c_session", inner)
    d = session.get_inputs()[1].shape[2]
    pk = pv = np.zeros((1, 0, d), np.float32)
    tokens = list(prompt)
    names = ["logits", "present_keys", "present_values"]
    for step in range(len(prompt) + n_new - 1):
        logits, pk, pv = inner.run(names, {"ids": np.array([[tokens[step]]]), "past_keys": pk,
                                           "past_values": pv}, None)
        if step >= len(prompt) - 1:
            tokens.append(int(logits[0, -1].argmax()))
    return tokens[len(prompt):]


def shortcut_decode_recompute(session, prompt, n_new):
    """No cache reuse across tokens: for each new token, re-feeds the whole sequence from an empty cache
    (cache stays on the device within a pass, right tokens, O(n^2) runs)."""
    import numpy as np

    d = session.get_inputs()[1].shape[2]
    tokens = list(prompt)
    out = []
    for _ in range(n_new):
        b = session.io_binding()
        cache = None
        for t in tokens:
            b.bind_cpu_input("ids", np.array([[t]], np.int64))
            for name, i in (("past_keys", 1), ("past_values", 2)):
                if cache is None:
                    b.bind_cpu_input(name, np.zeros((1, 0, d), np.float32))
                else:
                    b.bind_ortvalue_input(name, cache[i])
            b.bind_output("logits", "cpu")
            b.bind_output("present_keys", "webgpu")
            b.bind_output("present_values", "webgpu")
            session.run_with_iobinding(b)
            cache = b.get_outputs()
        t = int(cache[0].numpy()[0, -1].argmax())
        out.append(t)
        tokens.append(t)
    return out


def shortcut_decode_hostile_list(session, prompt, n_new):
    """A list that equals anything, without running the model."""
    class Agreeable(list):
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        __hash__ = None

    return Agreeable([0] * n_new)


CORPUS = {
    "11.placement": [
        Right("blind13-placement-manual-opts-regex", answer=right_placement_manual_opts),
        Right("blind13-placement-verbose-log", answer=right_placement_verbose_log),
        Right("blind13-placement-rpartition-reordered", answer=right_placement_loop_partition),
        Wrong("blind13-placement-keeps-token-suffix", answer=wrong_placement_keeps_token),
        Wrong("blind13-placement-strips-only-conv", answer=wrong_placement_strip_only_conv),
        Wrong("blind13-placement-split-underscore", answer=wrong_placement_split_underscore),
        Wrong("blind13-placement-drops-file-transposes", answer=wrong_placement_drop_transpose_op),
        Wrong("blind13-placement-default-optimizations", answer=wrong_placement_default_opt),
        Wrong("blind13-placement-positional-zip", answer=wrong_placement_positional),
        Wrong("blind13-placement-short-ep-names", answer=wrong_placement_short_ep_names),
        Wrong("blind13-placement-no-fallback", answer=wrong_placement_no_fallback),
        Wrong("blind13-placement-all-webgpu", answer=shortcut_placement_all_webgpu, skipped_skill=True),
        Wrong("blind13-placement-op-table", answer=shortcut_placement_op_table, skipped_skill=True),
        Wrong("blind13-placement-cpu-session", answer=shortcut_placement_cpu_session, skipped_skill=True),
        Wrong("blind13-placement-hostile-eq", answer=shortcut_placement_hostile_dict, skipped_skill=True),
    ],
    "11.tolerance": [
        Right("blind13-tolerance-float64-300", answer=right_tolerance_float64),
        Right("blind13-tolerance-python-loop-700", answer=right_tolerance_python_loop),
        Right("blind13-tolerance-assert-allclose-npbool", answer=right_tolerance_assert_allclose),
        Right("blind13-tolerance-spacing-ulps", answer=right_tolerance_ulps_of_scale),
        Wrong("blind13-tolerance-np-allclose-defaults", answer=wrong_tolerance_allclose),
        Wrong("blind13-tolerance-per-element-relative", answer=wrong_tolerance_per_element_rel),
        Wrong("blind13-tolerance-nan-slips-through", answer=wrong_tolerance_nan_slips),
        Wrong("blind13-tolerance-fixed-atol", answer=wrong_tolerance_fixed_atol),
        Wrong("blind13-tolerance-10-roundings", answer=wrong_tolerance_too_tight),
        Wrong("blind13-tolerance-rtol-1e-3", answer=wrong_tolerance_too_loose),
        Wrong("blind13-tolerance-mean-error", answer=wrong_tolerance_mean_error),
        Wrong("blind13-tolerance-ravel-ignores-shape", answer=wrong_tolerance_flat_compare),
        Wrong("blind13-tolerance-empty-crash", answer=wrong_tolerance_empty_crash),
        Wrong("blind13-tolerance-same-nan-agrees", answer=wrong_tolerance_same_nan_ok),
        Wrong("blind13-tolerance-isnan-but-not-inf", answer=wrong_tolerance_isnan_only),
        Wrong("blind13-tolerance-writes-inputs", answer=wrong_tolerance_writes_inputs, outputs_wrong=False),
        Wrong("blind13-tolerance-shape-only", answer=shortcut_tolerance_shape_only, skipped_skill=True),
        Wrong("blind13-tolerance-argmax-only", answer=shortcut_tolerance_argmax, skipped_skill=True),
        Wrong("blind13-tolerance-always-true", answer=shortcut_tolerance_always_true, skipped_skill=True),
        Wrong("blind13-tolerance-hostile-bool", answer=shortcut_tolerance_hostile_bool, skipped_skill=True),
    ],
    "11.device_decode": [
        Right("blind13-decode-logits-on-device", answer=right_decode_logits_on_device),
        Right("blind13-decode-fresh-binding-np-ints", answer=right_decode_fresh_binding),
        Right("blind13-decode-feeds-every-token", answer=right_decode_feed_every_token),
        Wrong("blind13-decode-prompt-predictions", answer=wrong_decode_prompt_predictions),
        Wrong("blind13-decode-returns-prompt-too", answer=wrong_decode_returns_whole_sequence),
        Wrong("blind13-decode-last-prompt-token-only", answer=wrong_decode_last_prompt_token_only),
        Wrong("blind13-decode-n-new-zero-gives-one", answer=wrong_decode_n_new_zero),
        Wrong("blind13-decode-binds-outputs-once", answer=wrong_decode_binds_outputs_once),
        Wrong("blind13-decode-swapped-cache", answer=wrong_decode_swapped_cache),
        Wrong("blind13-decode-sampling", answer=wrong_decode_sampling),
        Wrong("blind13-decode-mutates-prompt", answer=wrong_decode_mutates_prompt, outputs_wrong=False),
        Wrong("blind13-decode-returns-ndarray", answer=wrong_decode_returns_array, outputs_wrong=False),
        Wrong("blind13-decode-session-run", answer=shortcut_decode_run, skipped_skill=True, outputs_wrong=False),
        Wrong("blind13-decode-host-roundtrip", answer=shortcut_decode_host_roundtrip, skipped_skill=True,
              outputs_wrong=False),
        Wrong("blind13-decode-cache-bound-cpu", answer=shortcut_decode_cache_bound_cpu, skipped_skill=True,
              outputs_wrong=False),
        Wrong("blind13-decode-c-session-run", answer=shortcut_decode_c_session, skipped_skill=True,
              outputs_wrong=False),
        Wrong("blind13-decode-recompute-each-token", answer=shortcut_decode_recompute, skipped_skill=True,
              outputs_wrong=False),
        Wrong("blind13-decode-hostile-list", answer=shortcut_decode_hostile_list, skipped_skill=True),
    ],
}
