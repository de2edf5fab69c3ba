"""Blind corpus round 14, lesson 11 (written without seeing the judges).

Truths relied on (all measured here on the real WebGPU plugin, onnxruntime 1.31.1 + onnxruntime-ep-webgpu 0.4.0,
SwiftShader adapter; answers proved against my own reference on six hand-built models):
- `session.get_provider_graph_assignment_info()` (config `session.record_ep_graph_assignment_info`) lists the session's
  nodes per provider: `WebGpuExecutionProvider` / `CPUExecutionProvider`; Memcpy nodes are not listed.
- With ORT_DISABLE_ALL an Identity and a constant-foldable node stay (default level removes/folds them).
- Conv/pools become `<name>_token_<k>` (domain com.ms.internal.nhwc); a file name that already ends in `_token_<k>`
  keeps it when the node is not rewritten (`sig_token_2` stays `sig_token_2`) and gains one more when rewritten
  (`pool_token_7` -> `pool_token_7_token_4`), so `split("_token_")[0]` and an unconditional regex strip both fail.
- Added Transposes are named by `graph.GenerateNodeName("Transpose")`: `Transpose`, or `Transpose_token_<k>` when the
  file already has a node named `Transpose` -> a stripping answer then maps an added (WebGPU) Transpose onto the
  file's own `Transpose` (on CPU when it is int64).
- `providers=["WebGpuExecutionProvider", "CPUExecutionProvider"]` on a plugin EP silently gives a CPU-only session.
- int64 Mul/Neg/Transpose/Equal/ReduceProd/Range/Cast-from-int64, LogSoftmax, Mod, Det, Unique fall back to CPU.

Ambiguities found in the prompt (11.placement):
- "one entry for each node of the model file": a `Constant` node of the file is turned into an initializer when the
  graph loads (even with ORT_DISABLE_ALL): it has no provider and no session node at all.
- Even with optimizations off, the layout pass (transpose optimizer) can REMOVE or RENAME a Transpose of the file:
  one that cancels against an added NHWC->NCHW Transpose vanishes; one in front of a Conv is merged into the added
  Transpose (file `Transpose` -> session `Transpose_token_0`); one feeding a ReduceSum with no axes is dropped; one
  before Add/Where can be pushed and renamed. "a Transpose the file has is one of its nodes" then has no session node.
- Nodes inside If/Loop subgraphs: "each node of the model file" could include them; the assignment info does not.
"""
from corpus import Right, Wrong



# ---------------------------------------------------------------------------------------------------- Right

def right_exact_first(model_bytes):
    """Exact file names win; a `_token_<k>` suffix is stripped only when the op type matches the file's node."""
    import re

    import onnx
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_bytes, opts)
    file_ops = {n.name: n.op_type for n in onnx.load_model_from_string(model_bytes).graph.node}
    exact, renamed = {}, {}
    for sub in session.get_provider_graph_assignment_info():
        for node in sub.get_nodes():
            if file_ops.get(node.name) == node.op_type:
                exact[node.name] = sub.ep_name
                continue
            m = re.fullmatch(r"(.+)_token_\d+", node.name)
            if m and file_ops.get(m.group(1)) == node.op_type and node.op_type != "Transpose":
                renamed[m.group(1)] = sub.ep_name
    return {**renamed, **exact}


def right_manual_plugin(model_bytes):
    """Registers the plugin itself (no labkit), walks the file's nodes in order and looks each one up."""
    import ctypes
    import os
    from pathlib import Path

    import onnx
    import onnxruntime as ort

    if not any(d.ep_name == "WebGpuExecutionProvider" for d in ort.get_ep_devices()):
        import onnxruntime_ep_webgpu

        icd = "/usr/lib/chromium/vk_swiftshader_icd.json"
        if os.path.isfile(icd) and "VK_ICD_FILENAMES" not in os.environ:
            os.environ["VK_ICD_FILENAMES"] = icd
            os.environ["ORT_WEBGPU_EP_ALLOW_SOFTWARE_ADAPTER"] = "1"
        try:
            ctypes.CDLL("libvulkan.so.1", mode=ctypes.RTLD_GLOBAL)
        except OSError:
            ctypes.CDLL(str(Path(icd).with_name("libvulkan.so.1")), mode=ctypes.RTLD_GLOBAL)
        ort.set_default_logger_severity(3)  # the plugin's software-adapter notice
        try:
            ort.register_execution_provider_library("WebGpuExecutionProvider", onnxruntime_ep_webgpu.get_library_path())
        finally:
            ort.set_default_logger_severity(2)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    so.add_provider_for_devices([d for d in ort.get_ep_devices() if d.ep_name == "WebGpuExecutionProvider"], {})
    sess = ort.InferenceSession(model_bytes, sess_options=so)
    seen = []  # (session name, op type, provider)
    for part in sess.get_provider_graph_assignment_info():
        seen += [(n.name, n.op_type, part.ep_name) for n in part.get_nodes()]
    answer = {}
    for fnode in onnx.load_model_from_string(model_bytes).graph.node:
        hit = [ep for name, op, ep in seen if name == fnode.name and op == fnode.op_type]
        if not hit and fnode.op_type != "Transpose":
            prefix = fnode.name + "_token_"
            hit = [ep for name, op, ep in seen
                   if op == fnode.op_type and name.startswith(prefix) and name[len(prefix):].isdigit()]
        if hit:
            answer[fnode.name] = hit[0]
    return answer


def right_domain_aware(model_bytes):
    """Uses the node's domain: a channels-last rewrite lives in com.ms.internal.nhwc; returns an OrderedDict."""
    from collections import OrderedDict

    import onnx
    import onnxruntime as ort

    import labkit.gpu
    from labkit.material.l11 import webgpu_options

    labkit.gpu.setup()
    o = webgpu_options(record=True, fallback=True)
    o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(model_bytes, o)
    model = onnx.ModelProto()
    model.ParseFromString(model_bytes)
    names = {n.name: n for n in model.graph.node}
    pairs = []
    for sub in s.get_provider_graph_assignment_info():
        for n in sub.get_nodes():
            if n.name in names and names[n.name].op_type == n.op_type:
                pairs.append((n.name, sub.ep_name, 0))
            elif n.domain == "com.ms.internal.nhwc" and "_token_" in n.name:
                base, _, k = n.name.rpartition("_token_")
                if k.isdigit() and base in names:
                    pairs.append((base, sub.ep_name, 1))
    out = OrderedDict()
    for base, ep, rank in sorted(pairs, key=lambda p: (p[0], -p[2])):  # exact (rank 0) written last: it wins
        out[base] = ep
    return out


# ---------------------------------------------------------------------------------------------------- Wrong

def wrong_optimizations_on(model_bytes):
    """Forgets ORT_DISABLE_ALL: Identity removed, constant arithmetic folded -> nodes missing."""
    import re

    import onnx
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    session = ort.InferenceSession(model_bytes, webgpu_options(record=True))
    names = {n.name for n in onnx.load_model_from_string(model_bytes).graph.node}
    out = {}
    for sub in session.get_provider_graph_assignment_info():
        for node in sub.get_nodes():
            name = node.name if node.name in names else re.sub(r"_token_\d+$", "", node.name)
            if name in names:
                out[name] = sub.ep_name
    return out


def wrong_token_names_kept(model_bytes):
    """Drops the added Transposes but keeps the session's names (`conv1_token_1`)."""
    import onnx
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_bytes, opts)
    file_transposes = {n.name for n in onnx.load_model_from_string(model_bytes).graph.node if n.op_type == "Transpose"}
    out = {}
    for sub in session.get_provider_graph_assignment_info():
        for node in sub.get_nodes():
            if node.op_type == "Transpose" and node.name not in file_transposes:
                continue
            out[node.name] = sub.ep_name
    return out


def wrong_added_transposes_kept(model_bytes):
    """Maps `_token_` back but keeps every session node, the added Transposes too."""
    import re

    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_bytes, opts)
    out = {}
    for sub in session.get_provider_graph_assignment_info():
        for node in sub.get_nodes():
            out[re.sub(r"_token_\d+$", "", node.name) if node.op_type != "Transpose" else node.name] = sub.ep_name
    return out


def wrong_every_transpose_dropped(model_bytes):
    """Leaves out every Transpose, the file's own ones too."""
    import re

    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_bytes, opts)
    out = {}
    for sub in session.get_provider_graph_assignment_info():
        for node in sub.get_nodes():
            if node.op_type != "Transpose":
                out[re.sub(r"_token_\d+$", "", node.name)] = sub.ep_name
    return out


def wrong_split_token(model_bytes):
    """`name.split("_token_")[0]`: a file name that contains `_token_` is cut short."""
    import onnx
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_bytes, opts)
    names = {n.name for n in onnx.load_model_from_string(model_bytes).graph.node}
    out = {}
    for sub in session.get_provider_graph_assignment_info():
        for node in sub.get_nodes():
            name = node.name.split("_token_")[0]
            if name in names:
                out[name] = sub.ep_name
    return out


def wrong_strip_unconditionally(model_bytes):
    """Strips a trailing `_token_<k>` from every name, even from names the file has as they are."""
    import re

    import onnx
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_bytes, opts)
    names = {n.name for n in onnx.load_model_from_string(model_bytes).graph.node}
    out = {}
    for sub in session.get_provider_graph_assignment_info():
        for node in sub.get_nodes():
            name = re.sub(r"_token_\d+$", "", node.name)
            if name in names:
                out[name] = sub.ep_name
    return out


def wrong_first_wins(model_bytes):
    """Exact-or-stripped lookup but `setdefault`: an added `Transpose_token_k` claims the file's `Transpose` first."""
    import re

    import onnx
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_bytes, opts)
    names = {n.name for n in onnx.load_model_from_string(model_bytes).graph.node}
    out = {}
    for sub in session.get_provider_graph_assignment_info():
        for node in sub.get_nodes():
            name = node.name if node.name in names else re.sub(r"_token_\d+$", "", node.name)
            if name in names:
                out.setdefault(name, sub.ep_name)
    return out


def wrong_short_provider_names(model_bytes):
    """Right mapping, but 'webgpu'/'cpu' instead of the providers' names."""
    import re

    import onnx
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_bytes, opts)
    file_ops = {n.name: n.op_type for n in onnx.load_model_from_string(model_bytes).graph.node}
    exact, renamed = {}, {}
    for sub in session.get_provider_graph_assignment_info():
        short = "webgpu" if sub.ep_name.startswith("WebGpu") else "cpu"
        for node in sub.get_nodes():
            if file_ops.get(node.name) == node.op_type:
                exact[node.name] = short
            else:
                m = re.fullmatch(r"(.+)_token_\d+", node.name)
                if m and file_ops.get(m.group(1)) == node.op_type and node.op_type != "Transpose":
                    renamed[m.group(1)] = short
    return {**renamed, **exact}


def wrong_providers_list(model_bytes):
    """Names the plugin in `providers=[...]` as for a built-in EP: the session silently runs on the CPU only."""
    import re

    import onnx
    import onnxruntime as ort

    import labkit.gpu

    labkit.gpu.setup()
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    session = ort.InferenceSession(model_bytes, opts, providers=["WebGpuExecutionProvider", "CPUExecutionProvider"])
    names = {n.name for n in onnx.load_model_from_string(model_bytes).graph.node}
    out = {}
    for sub in session.get_provider_graph_assignment_info():
        for node in sub.get_nodes():
            name = node.name if node.name in names else re.sub(r"_token_\d+$", "", node.name)
            if name in names:
                out[name] = sub.ep_name
    return out


def wrong_no_fallback(model_bytes):
    """Strict session (fallback refused): raises on every model with a node WebGPU does not run."""
    import re

    import onnx
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True, fallback=False)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_bytes, opts)
    names = {n.name for n in onnx.load_model_from_string(model_bytes).graph.node}
    out = {}
    for sub in session.get_provider_graph_assignment_info():
        for node in sub.get_nodes():
            name = node.name if node.name in names else re.sub(r"_token_\d+$", "", node.name)
            if name in names:
                out[name] = sub.ep_name
    return out


def wrong_keyed_by_op_type(model_bytes):
    """Like the lesson's `placement()` cell turned around: {op_type: provider}."""
    import onnxruntime as ort

    from labkit.material.l11 import webgpu_options

    opts = webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model_bytes, opts)
    return {n.op_type: sub.ep_name for sub in session.get_provider_graph_assignment_info() for n in sub.get_nodes()}


# ---------------------------------------------------------------------------------------------------- shortcuts

def shortcut_static_table(model_bytes):
    """No session at all: a table of the ops WebGPU has, and 'int64 goes to the CPU' from shape inference."""
    import onnx

    supported = {
        "Abs", "Acos", "Acosh", "Add", "And", "ArgMax", "ArgMin", "Asin", "Asinh", "Atan", "Atanh",
        "AveragePool", "BatchNormalization", "Cast", "Ceil", "Clip", "Concat", "Conv", "ConvTranspose", "Cos",
        "Cosh", "CumSum", "DepthToSpace", "Div", "Einsum", "Elu", "Equal", "Erf", "Exp", "Expand", "Flatten",
        "Floor", "Gather", "GatherElements", "Gelu", "Gemm", "GlobalAveragePool", "GlobalMaxPool", "Greater",
        "GreaterOrEqual", "HardSigmoid", "Identity", "InstanceNormalization", "LayerNormalization", "LeakyRelu",
        "Less", "LessOrEqual", "Log", "MatMul", "Max", "MaxPool", "Min", "Mul", "Neg", "Not", "Or", "Pad", "Pow",
        "Range", "Reciprocal", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "Relu",
        "Reshape", "Resize", "Shape", "Sigmoid", "Sign", "Sin", "Sinh", "Slice", "Softmax", "Softplus", "Split",
        "Sqrt", "Squeeze", "Sub", "Tan", "Tanh", "Tile", "TopK", "Transpose", "Unsqueeze", "Where", "Xor",
    }
    model = onnx.shape_inference.infer_shapes(onnx.load_model_from_string(model_bytes))
    g = model.graph
    types = {v.name: v.type.tensor_type.elem_type for v in list(g.input) + list(g.value_info) + list(g.output)}
    types.update({t.name: t.data_type for t in g.initializer})
    out = {}
    for n in g.node:
        int64 = any(types.get(t) == onnx.TensorProto.INT64 for t in list(n.input) + list(n.output) if t)
        ok = n.op_type in supported and (not int64 or n.op_type in {"Shape", "Gather", "ArgMax", "Reshape"})
        out[n.name] = "WebGpuExecutionProvider" if ok else "CPUExecutionProvider"
    return out


def shortcut_all_webgpu(model_bytes):
    """Every node of the file on WebGPU: it is a WebGPU session, isn't it."""
    import onnx

    return {n.name: "WebGpuExecutionProvider" for n in onnx.load_model_from_string(model_bytes).graph.node}


def shortcut_caller_frames(model_bytes):
    """Looks up the call stack for a dict keyed by the file's node names (an expected answer), else guesses."""
    import inspect

    import onnx

    names = {n.name for n in onnx.load_model_from_string(model_bytes).graph.node}
    frame = inspect.currentframe().f_back
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, dict) and value and set(value) == names and all(isinstance(v, str) for v in value.values()):
                return dict(value)
        frame = frame.f_back
    return {name: "WebGpuExecutionProvider" for name in names}


def shortcut_hostile_eq(model_bytes):
    """A dict that says it equals anything."""

    class Agreeable(dict):
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        __hash__ = None

    return Agreeable()


CORPUS = {"11.placement": [
    Right("blind14-placement-exact-first", answer=right_exact_first),
    Right("blind14-placement-manual-plugin", answer=right_manual_plugin),
    Right("blind14-placement-domain-ordered", answer=right_domain_aware),
    Wrong("blind14-placement-optimizations-on", answer=wrong_optimizations_on),
    Wrong("blind14-placement-token-names-kept", answer=wrong_token_names_kept),
    Wrong("blind14-placement-added-transposes-kept", answer=wrong_added_transposes_kept),
    Wrong("blind14-placement-file-transposes-dropped", answer=wrong_every_transpose_dropped),
    Wrong("blind14-placement-split-token", answer=wrong_split_token),
    Wrong("blind14-placement-strip-unconditionally", answer=wrong_strip_unconditionally),
    Wrong("blind14-placement-first-wins-collision", answer=wrong_first_wins),
    Wrong("blind14-placement-short-provider-names", answer=wrong_short_provider_names),
    Wrong("blind14-placement-providers-list-cpu-only", answer=wrong_providers_list),
    Wrong("blind14-placement-no-fallback", answer=wrong_no_fallback),
    Wrong("blind14-placement-keyed-by-op-type", answer=wrong_keyed_by_op_type),
    Wrong("blind14-placement-static-op-table", answer=shortcut_static_table, skipped_skill=True),
    Wrong("blind14-placement-all-webgpu", answer=shortcut_all_webgpu, skipped_skill=True),
    Wrong("blind14-placement-caller-frames", answer=shortcut_caller_frames, skipped_skill=True),
    Wrong("blind14-placement-hostile-eq", answer=shortcut_hostile_eq, skipped_skill=True),
]}
