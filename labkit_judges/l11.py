"""Lesson 11 exercise specs (what the learner sees, references, test inputs, quiz answers): which provider
runs each node on WebGPU, a tolerance for device against CPU outputs, a decode loop whose cache stays on
the device, quiz."""
from __future__ import annotations

import numpy as np

from labkit.checks import Question, TestResult, exercise, ort_session, quiz
from labkit.material.l11 import tiny_decoder
from labkit.plain import Make, Raised, describe

CPU, WEBGPU = "CPUExecutionProvider", "WebGpuExecutionProvider"

# ---------------------------------------------------------------- 11.placement

#: operators (opset 21, float32) onnxruntime-ep-webgpu 0.4.0 runs, and ones it leaves to the CPU;
#: tests/test_l11.py checks both lists against the real provider
WEBGPU_OPS = ("Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Erf", "Floor", "Softmax", "Add", "Mul", "Sub")
CPU_ONLY_OPS = ("Round", "Sign", "Softsign", "Selu", "Celu", "Shrink", "LogSoftmax", "Hardmax", "Sum", "Mean")
BINARY = ("Add", "Mul", "Sub")
VARIADIC = ("Sum", "Mean")
#: nodes WebGPU rewrites channels-last even with optimizations off (renamed '<name>_token_<k>', with Transposes
#: added around them); a Transpose of the file's own stays a node of the file (blind round 13)
CHANNELS_LAST = ("Conv", "MaxPool", "AveragePool")
FOUR_D = (*CHANNELS_LAST, "Transpose")


def placement_model(ops: list[str], names: list[str]) -> bytes:
    """A chain of `ops` on x: each node takes the previous output (binary and variadic ones also take
    x); node i is called names[i]. x is (2, 8), or (1, 2, 4, 4) when a Conv (2 channels, 3x3, padded), a 3x3
    pooling (padded) or a Transpose of the last two axes is in the chain: WebGPU rewrites Conv and pooling
    channels-last even with optimizations off."""
    from onnx import TensorProto, helper, numpy_helper

    nodes, prev, inits = [], "x", []
    for i, (op, name) in enumerate(zip(ops, names)):
        out = f"t{i}"
        inputs = [prev, "x"] if op in BINARY else [prev, "x", prev] if op in VARIADIC else [prev]
        op, _, elem = op.partition(":")
        attrs = {}
        if op == "Cast":
            attrs = {"to": TensorProto.INT64 if elem == "int64" else TensorProto.FLOAT}
        elif op == "Conv":
            inits.append(numpy_helper.from_array(np.full((2, 2, 3, 3), 0.1, np.float32), f"w{i}"))
            inputs, attrs = [prev, f"w{i}"], {"pads": [1, 1, 1, 1]}
        elif op in ("MaxPool", "AveragePool"):
            attrs = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
        elif op == "Transpose":
            attrs = {"perm": [0, 1, 3, 2]}
        nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        prev = out
    nodes.append(helper.make_node("Identity", [prev], ["y"], name="output"))
    shape = [1, 2, 4, 4] if set(FOUR_D) & set(ops) else [2, 8]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)
    graph = helper.make_graph(nodes, "placement", [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10).SerializeToString()


#: an int64 stretch of a chain: the Cast into it runs on WebGPU, the unary nodes in it and the Cast out on the CPU
INT64_ON = {"Cast:int64": WEBGPU, "Neg:int64": CPU, "Abs:int64": CPU, "Cast:float": CPU}


def expected_placement(ops: list[str], names: list[str]) -> dict[str, str]:
    want = {name: INT64_ON.get(op, CPU if op in CPU_ONLY_OPS else WEBGPU) for op, name in zip(ops, names)}
    want["output"] = WEBGPU
    return want


_INT64 = ["Cast:int64", "Neg:int64", "Cast:float"]
_PLACEMENT_FIXED = (("every node on WebGPU", ["Relu", "Mul", "Tanh", "Add"]),
                    ("an int64 stretch, two fallbacks at the end", ["Exp", *_INT64, "Sub", "Round", "LogSoftmax"]),
                    ("a Conv (renamed by the session), a fallback, an int64 stretch",
                     ["Conv", "Sign", "Relu", *_INT64]))
PLACEMENT_TESTS = tuple(n for n, _ in _PLACEMENT_FIXED) + ("unseen model 1", "unseen model 2", "unseen model 3")


def _placement_data(seed: int) -> list[tuple[list[str], list[str]]]:
    rng = np.random.default_rng(seed * 23 + 5005)
    plans = [list(ops) for _, ops in _PLACEMENT_FIXED]
    for _ in range(3):
        size = int(rng.integers(5, 9))
        plan = [WEBGPU_OPS[int(i)] for i in rng.integers(len(WEBGPU_OPS), size=size)]
        for pos in rng.choice(size, size=int(rng.integers(1, 4)), replace=False):
            plan[int(pos)] = CPU_ONLY_OPS[int(rng.integers(len(CPU_ONLY_OPS)))]
        plans.append(plan)
    # the file's own Transpose (not one the session adds), then a pooling renamed like a Conv; apart, since the
    # session merges a file's Transpose into the ones it adds around a channels-last node
    plans[3].insert(int(rng.integers(len(plans[3]) + 1)), "Transpose")
    plans[4].insert(int(rng.integers(len(plans[4]) + 1)), str(rng.choice(["MaxPool", "AveragePool"])))
    # an int64 stretch in every unseen model: the same operators elsewhere in the chain run on WebGPU, here on the
    # CPU (a table of operators is not the placement; blind round 13)
    for plan in plans[3:]:
        at = int(rng.integers(len(plan) + 1))
        plan[at:at] = ["Cast:int64", str(rng.choice(["Neg:int64", "Abs:int64"])), "Cast:float"]
    out = []
    for plan in plans:
        names = [f"{op.split(':')[0].lower()}_{int(k)}" for op, k in zip(plan, rng.permutation(100)[:len(plan)])]
        out.append((plan, names))
    return out


def _placement_cases(seed: int) -> list[tuple]:
    return [(placement_model(ops, names),) for ops, names in _placement_data(seed)]


@exercise('11.placement', title='Which provider ran each node', points=2, kind='function',
          hint=[
              "The session itself can record which provider took each node of the graph: switch that on when you create it, then read it back per provider. Nodes an optimizer fuses away get no provider, and the session adds and renames some.",
              "SessionOptions.add_session_config_entry('session.record_ep_graph_assignment_info', '1'), then session.get_provider_graph_assignment_info(): each entry has ep_name and get_nodes() (node.name); SessionOptions.graph_optimization_level = ORT_DISABLE_ALL; a renamed node is '<name>_token_<k>'.",
          ],
          cases=_placement_cases, tests=PLACEMENT_TESTS, skill=PLACEMENT_TESTS)
def _placement(outputs, seed):
    for name, (ops, names), got in zip(PLACEMENT_TESTS, _placement_data(seed), outputs):
        want = expected_placement(ops, names)
        if isinstance(got, Raised):
            yield TestResult(name, False, f"your function {got.message}")
            continue
        if not isinstance(got, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in got.items()):
            yield TestResult(name, False, f"expected a dict {{node name: provider name}}, got {describe(got)}")
            continue
        missing = [n for n in want if n not in got]
        if missing:
            yield TestResult(name, False, f"no provider for node(s) {missing}: expected every node of the model "
                                          "file (an optimized session fuses some away; a node the session renamed "
                                          "'<name>_token_<k>' is still the file's node <name>)")
            continue
        extra = [n for n in got if n not in want]
        if extra:
            yield TestResult(name, False, f"{extra[0]!r} is not a node of the model file: expected only the file's "
                                          "nodes, under their names in the file")
            continue
        wrong = [n for n in want if got[n] != want[n]]
        if wrong:
            n = wrong[0]
            yield TestResult(name, False, f"node {n!r} ({ops[names.index(n)] if n in names else 'Identity'}): "
                                          f"expected {want[n]}, got {got[n]!r}")
            continue
        on_cpu = [n for n in want if want[n] == CPU]
        yield TestResult(name, True, f"{len(want)} nodes, on the CPU: {on_cpu or 'none'}")


# ---------------------------------------------------------------- 11.tolerance

TOLERANCE_TESTS = ("rounding, outputs of size ~1", "rounding, outputs of size ~1e5", "rounding near zero",
                   "rounding, outputs of size ~1e-6", "identical outputs", "one element wrong",
                   "a tiny output 40% off", "a NaN on the device", "the same values transposed",
                   "every element 0.1% off", "an extra axis of size 1", "empty outputs",
                   "a NaN on both sides, in the same place", "one element wrong in a large output",
                   "an infinity on the CPU side")
#: the prompt's rounding: up to ROUNDINGS_MIN..ROUNDINGS_MAX float32 roundings of the largest |cpu|; the
#: data keeps every rounding case under the lower bound and every wrong one over the upper (test_l11.py)
ROUNDINGS_MIN, ROUNDINGS_MAX = 100, 1000


def _matmul_pair(rng: np.random.Generator, scale: float, shift: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(device, cpu): x @ w summed in two orders in float32, as two providers do."""
    k = int(rng.integers(48, 160))
    x = (rng.normal(size=(6, k)) + shift).astype(np.float32)
    w = (rng.normal(size=(k, 5)) * scale / k).astype(np.float32)
    terms = x[:, :, None] * w[None, :, :]
    cpu = terms.sum(axis=1, dtype=np.float32)            # numpy: pairwise sums
    device = np.zeros_like(cpu)
    for j in rng.permutation(k):                         # one term after the other, in another order
        device = (device + terms[:, j, :]).astype(np.float32)
    return device, cpu


def _tolerance_data(seed: int) -> list[tuple[np.ndarray, np.ndarray, bool]]:
    rng = np.random.default_rng(seed * 29 + 6006)
    size1 = _matmul_pair(rng, 1.0)
    big = _matmul_pair(rng, 1e5)
    d, c = _matmul_pair(rng, 10.0, shift=0.0)             # cancellation: elements near 0, terms of size 10
    scale = float(np.abs(c).max())
    c[0, 0] = np.float32(1e-3 * scale)                     # an element near 0 that carries
    d[0, 0] = c[0, 0] + np.float32(20 * np.finfo(np.float32).eps * scale)  # the large terms' rounding
    tiny = _matmul_pair(rng, 1e-6)
    same = _matmul_pair(rng, 3.0)[1]
    wrong_elem = _matmul_pair(rng, 2.0)
    wrong_elem[0][tuple(rng.integers(0, 5, size=2))] += np.float32(0.05) * np.abs(wrong_elem[1]).max()
    t_dev, t_cpu = _matmul_pair(rng, 1e-6)
    nan_dev, nan_cpu = _matmul_pair(rng, 1.0)
    nan_dev[int(rng.integers(6)), int(rng.integers(5))] = np.nan
    sq = _matmul_pair(rng, 1.0)[1][:5, :5]
    off = _matmul_pair(rng, 1.0)[1]
    axis = _matmul_pair(rng, 1.0)[1]
    empty = np.zeros((0, int(rng.integers(2, 6))), np.float32)
    both_dev, both_cpu = _matmul_pair(rng, 1.0)
    both_dev[1, 2] = both_cpu[1, 2] = np.nan
    # 600 elements, one 3000 roundings off: a mean of the differences dilutes it to a few roundings
    pairs = [_matmul_pair(rng, 1.0) for _ in range(20)]
    many_dev, many_cpu = np.concatenate([d for d, _ in pairs]), np.concatenate([c for _, c in pairs])
    many_dev[tuple(rng.integers(0, 5, size=2))] += np.float32(3000 * np.finfo(np.float32).eps) * np.abs(many_cpu).max()
    inf_dev, inf_cpu = _matmul_pair(rng, 1.0)
    inf_cpu[int(rng.integers(6)), int(rng.integers(5))] = np.float32(np.inf) * np.sign(rng.normal())
    return [(*size1, True), (*big, True), (d, c, True), (*tiny, True), (same.copy(), same, True),
            (*wrong_elem, False), (t_dev * np.float32(1.4), t_cpu, False), (nan_dev, nan_cpu, False),
            (np.ascontiguousarray(sq.T), sq, False), (off * np.float32(1.001), off, False),
            (axis[None].copy(), axis, False), (empty.copy(), empty, True), (both_dev, both_cpu, False),
            (many_dev, many_cpu, False), (inf_dev, inf_cpu, False)]


def _tolerance_cases(seed: int) -> list[tuple]:
    """The caller's outputs, read-only: an answer that writes into them raises."""
    return [(Make("labkit.material.l11:read_only", (device,)), Make("labkit.material.l11:read_only", (cpu,)))
            for device, cpu, _ in _tolerance_data(seed)]


@exercise('11.tolerance', title='Device against CPU: rounding or a wrong result?', points=2, kind='function',
          hint=[
              "Rounding in a sum is relative to the size of the terms summed, so an element near 0 can carry the rounding of the largest values: compare the difference with the output's overall magnitude, not element by element.",
              "np.finfo(np.float32).eps times np.abs(cpu).max() is one rounding of the largest output; allow a few hundred of them (100 to 1000), and check the shapes and np.isfinite first.",
          ],
          cases=_tolerance_cases, tests=TOLERANCE_TESTS, skill=TOLERANCE_TESTS, bonus=True)
def _tolerance(outputs, seed):
    from labkit.checks import DidNotDo

    data = _tolerance_data(seed)
    alike = [(want, got) for (device, cpu, want), got in zip(data, outputs) if device.shape == cpu.shape]
    if all(isinstance(got, (bool, np.bool_)) and bool(got) for _, got in alike) and \
            sum(not want for want, _ in alike) >= 3:
        yield DidNotDo("it says True whenever the shapes match, whatever the values: comparing the values is the "
                       "exercise")
    for name, (device, cpu, want), got in zip(TOLERANCE_TESTS, data, outputs):
        if isinstance(got, Raised) and "read-only" in got.message:
            yield TestResult(name, False, "your function writes into its arguments (the caller's outputs, "
                                          f"passed read-only here); expected them left unchanged ({got.message})")
        elif isinstance(got, Raised):
            yield TestResult(name, False, f"your function {got.message}")
        elif not isinstance(got, (bool, np.bool_)):
            yield TestResult(name, False, f"expected True or False, got {describe(got)}")
        elif bool(got) == want:
            yield TestResult(name, True, f"{'agree' if want else 'differ'}, as expected")
        else:
            diff = np.abs(device.astype(np.float64) - cpu) if device.shape == cpu.shape else None
            scale = float(np.abs(cpu).max(initial=0.0))
            what = (f"shapes {device.shape} and {cpu.shape}" if diff is None else
                    f"both are empty, of shape {cpu.shape}" if diff.size == 0 else
                    f"largest difference {diff.max():.2g} for a largest |output| of {scale:.2g}"
                    if np.isfinite(diff).all() else "an output has a NaN or an infinity (either means False)")
            yield TestResult(name, False, f"expected {want}, got {bool(got)}: {what}")


# ---------------------------------------------------------------- 11.device_decode

DECODE_TESTS = ("a decoder you have not seen", "another decoder, a longer prompt", "a one-token prompt",
                "no new tokens (n_new = 0)", "the first prompt again, on a decoder of its own")
#: the lesson's decoder sizes: the shaders WebGPU compiled for the lesson serve the check too
_D_MODEL, _VOCAB = 16, 32


def _decode_data(seed: int) -> list[tuple[int, list[int], int]]:
    """(decoder seed, prompt, n_new) per test. The last repeats the first prompt on another decoder whose
    tokens differ from the first's: an answer that remembers tokens by prompt gives the first decoder's."""
    rng = np.random.default_rng(seed * 31 + 7007)
    plans = ((3, 6), (5, 8), (1, 7), (3, 0))
    data = [(int(rng.integers(1 << 30)), [int(t) for t in rng.integers(0, _VOCAB, size=p)], n) for p, n in plans]
    first_seed, prompt, n = data[0]
    other = int(rng.integers(1 << 30))
    while greedy_reference(tiny_decoder(other, _D_MODEL, _VOCAB), prompt, n) == \
            greedy_reference(tiny_decoder(first_seed, _D_MODEL, _VOCAB), prompt, n):
        other += 1
    return data + [(other, prompt, n)]


def _decode_cases(seed: int) -> list[tuple]:
    """The guarded session, and the prompt as the caller's list that refuses to be changed."""
    return [(Make("labkit.material.l11:device_decoder", (tiny_decoder(s, _D_MODEL, _VOCAB),)),
             Make("labkit.material.l11:callers_list", (prompt,)), n) for s, prompt, n in _decode_data(seed)]


def greedy_reference(model: bytes, prompt: list[int], n_new: int) -> list[int]:
    """Greedy tokens from the CPU provider, run() with the cache as numpy arrays."""
    sess = ort_session(model)
    width = sess.get_inputs()[1].shape[2]
    keys = values = np.zeros((1, 0, width), np.float32)
    tokens = list(prompt)
    for step in range(len(prompt) + n_new - 1):
        logits, keys, values = sess.run(None, {"ids": np.array([[tokens[step]]]), "past_keys": keys,
                                               "past_values": values})
        if step >= len(prompt) - 1:
            tokens.append(int(logits[0, -1].argmax()))
    return tokens[len(prompt):]


@exercise('11.device_decode', title='A decode loop with the cache on the device', points=3, kind='function',
          hint=[
              "The present keys and values one step returns are the past the next step needs: leave them where they were computed and hand the very same device values back, instead of turning them into numpy arrays.",
              "session.io_binding(); bind_output('present_keys', 'webgpu'); after run_with_iobinding, binding.get_outputs() gives OrtValues: bind_ortvalue_input('past_keys', ...) them; bind logits to 'cpu' and read .numpy().",
          ],
          cases=_decode_cases, tests=DECODE_TESTS, skill=DECODE_TESTS, tools=("numpy", "onnxruntime"))
def _device_decode(outputs, seed):
    for name, (s, prompt, n), got in zip(DECODE_TESTS, _decode_data(seed), outputs):
        want = greedy_reference(tiny_decoder(s, _D_MODEL, _VOCAB), prompt, n)
        if isinstance(got, Raised):
            yield TestResult(name, False, f"your function {got.message}")
        elif not isinstance(got, list) or not all(isinstance(t, (int, np.integer)) for t in got):
            yield TestResult(name, False, f"expected a list of {n} token ids (integers), got {describe(got)}")
        elif len(got) != n:
            yield TestResult(name, False, f"expected {n} new tokens, got {len(got)}"
                                          + (" (the prompt is not part of the answer)" if len(got) == n + len(prompt) else ""))
        elif [int(t) for t in got] != want:
            i = next(k for k in range(n) if int(got[k]) != want[k])
            yield TestResult(name, False, f"token {i}: expected {want[i]}, got {int(got[i])} "
                                          f"(greedy decoding after the prompt {prompt} gives {want})")
        else:
            yield TestResult(name, True, f"{n} tokens as the CPU provider decodes them, cache kept on the device")


# ---------------------------------------------------------------- 11.quiz

quiz('11.quiz', title='Off the CPU', points=5, questions=[
    Question('q1', "On a machine without a GPU, ort.get_ep_devices() lists WebGpuExecutionProvider on a device of type CPU. What does it tell you?", {
        'a': "WebGPU reuses the CPU provider's kernels there, so its outputs match the CPU's bit for bit",
        'b': "A software adapter runs the real WebGPU path (shaders, copies) at an emulator's speed",
        'c': "The plugin failed to load, and ONNX Runtime lists its CPU provider again under a new name",
    }, answer='b', why=(
        'A software adapter (SwiftShader) is registered on the CPU device: the WebGPU code path runs for real, '
        'on an emulated GPU. It does not reuse the CPU kernels (a): its outputs differ by rounding, and a failed '
        'plugin lists no device at all (c).')),
    Question('q2', "A session on WebGPU and CPU gives right outputs, but its profile shows MemcpyToHost and MemcpyFromHost nodes. Why?", {
        'a': "A node WebGPU cannot run fell back to the CPU: its input goes to the host, its output back",
        'b': "ONNX Runtime copies every node's output to the host so that the CPU can check all of the GPU's work",
        'c': "The weights are uploaded to the device again at every run, which is what Memcpy nodes do",
    }, answer='a', why=(
        'ONNX Runtime inserts copy nodes only where a tensor crosses between providers, around a fallback. It '
        'checks nothing on the CPU (b), and initializers are copied once when the session is created (c).')),
    Question('q3', "The WebGPU plugin is registered on SwiftShader (no GPU) and a session sets the policy PREFER_GPU. What runs the model?", {
        'a': "WebGPU on SwiftShader: the policy takes any device that the WebGPU plugin registered",
        'b': "Nothing: creating the session fails with an error, because this machine has no GPU",
        'c': "The CPU provider: the adapter is a CPU-typed device, so the policy falls back",
    }, answer='c', why=(
        'Policies choose by device type; the software adapter sits on the CPU device, so no GPU device exists and '
        'the session quietly uses the CPU provider (you saw it in section 2 of 11). It picks no CPU-typed WebGPU device '
        '(a) and raises no error (b).')),
    Question('q4', "Which check fits a GPU provider's logits against the CPU provider's logits of the same model?", {
        'a': "Differences up to a thousand float32 roundings of the largest logit, and the same labels",
        'b': "Exact equality of every logit: both providers run the same float32 graph and weights",
        'c': "A relative tolerance of 1e-6 on each element, however close to zero that element may be",
    }, answer='a', why=(
        'Providers sum in other orders and may fuse multiply-adds, so float32 results move by roundings of the '
        'terms summed, which the largest output bounds. Exact equality (b) fails on rounding alone, and a '
        'per-element relative tolerance (c) fails on near-zero elements that carry large terms\' rounding.')),
    Question('q5', "In a decode loop on a GPU, what does passing last step's present cache, bound on the device, as the next past save?", {
        'a': "Nothing measurable: ONNX Runtime keeps the cache on the device between the run() calls all by itself",
        'b': "The attention arithmetic: cached keys and values need not be multiplied again",
        'c': "A copy of the whole cache to the host and back at every step, longer each step",
    }, answer='c', why=(
        'run() returns numpy arrays, so each step copies the whole cache out and back in; bound device values '
        'stay put. ONNX Runtime keeps nothing between run() calls (a), and the attention over the cache is '
        'computed either way (b).')),
    Question('q6', "A production session on a GPU provider must never run a node on the CPU. What do you set?", {
        'a': "providers=[the GPU provider] alone: leaving the CPU provider out switches fallback off",
        'b': "session.disable_cpu_ep_fallback = '1': creating the session fails if a node falls back",
        'c': "The selection policy PREFER_GPU: it guarantees that every node of the graph runs on a GPU",
    }, answer='b', why=(
        'Only disable_cpu_ep_fallback makes a fallback an error. ONNX Runtime appends the CPU provider when you '
        'leave it out (a), and a policy is a preference that falls back quietly (c).')),
])
