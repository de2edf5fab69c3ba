"""Lesson 04 exercise specs (what the learner sees, references, test inputs, quiz answers): batched prediction with a
session, reading a profile, choosing providers, quiz."""
from __future__ import annotations

import json

import numpy as np

from labkit.checks import DidNotDo, Question, TestResult, exercise, quiz
from labkit.checks.differential import promised_form, same
from labkit.plain import File, Make, Raised, describe

CPU = "CPUExecutionProvider"

# ---------------------------------------------------------------- 04.predict

#: (number of images, batch_size, which model) per test; model 1 has other names and weights, and a second output
_PREDICT_PLAN = ((37, 8, 0), (1, 32, 0), (0, 16, 0), (100, 25, 1), (13, 1, 1))
_MODEL_NAMES = (("images", "logits"), ("x", "scores"))


def _predict_weights(seed: int, which: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed * 7 + 404 + which)
    return rng.normal(size=(64, 10)).astype(np.float32), rng.normal(size=(10,)).astype(np.float32)


def _images_with_clear_winner(rng: np.random.Generator, n: int, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """n images (n, 1, 8, 8) whose best class wins by a margin float32 rounding cannot flip."""
    out = np.empty((n, 1, 8, 8), dtype=np.float32)
    for i in range(n):
        while True:
            img = rng.random((1, 8, 8)).astype(np.float32)
            logits = np.sort(img.reshape(64).astype(np.float64) @ w + b)
            if logits[-1] - logits[-2] > 0.05:
                out[i] = img
                break
    return out


def predict_model(w: np.ndarray, b: np.ndarray, input_name: str = "images", output_name: str = "logits",
                  max_rows: int | None = None, features: bool = False) -> bytes:
    """A tiny linear digit classifier: logits = flatten(images) @ w + b, symbolic batch 'N'. With `max_rows`,
    the graph itself negates the logits of a run over more rows (every argmax becomes the worst class): a
    limit no route around the session's run() escapes (its C session, run_with_ort_values, a new session).
    With `features`, a second output after the logits: the flattened pixels (the first output is the one)."""
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info(input_name, TensorProto.FLOAT, ["N", 1, 8, 8])
    y = helper.make_tensor_value_info(output_name, TensorProto.FLOAT, ["N", 10])
    gemm = "raw" if max_rows is not None else output_name
    nodes = [helper.make_node("Flatten", [input_name], ["flat"], axis=1),
             helper.make_node("Gemm", ["flat", "W", "B"], [gemm])]
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")]
    if max_rows is not None:
        nodes += [helper.make_node("Shape", [input_name], ["rows"], start=0, end=1),
                  helper.make_node("Greater", ["rows", "max_rows"], ["over"]),
                  helper.make_node("Neg", ["raw"], ["negated"]),
                  helper.make_node("Where", ["over", "negated", "raw"], [output_name])]
        inits.append(numpy_helper.from_array(np.array([max_rows], dtype=np.int64), "max_rows"))
    outputs = [y] + ([helper.make_tensor_value_info("flat", TensorProto.FLOAT, ["N", 64])] if features else [])
    graph = helper.make_graph(nodes, "linear_digits", [x], outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10).SerializeToString()


def _predict_data(seed: int) -> list[tuple[bytes, np.ndarray, int, np.ndarray]]:
    """(model bytes, images, batch_size, expected class ids) per test: what the judge knows."""
    rng = np.random.default_rng(seed + 4040)
    data = []
    for n, batch_size, which in _PREDICT_PLAN:
        w, b = _predict_weights(seed, which)
        images = _images_with_clear_winner(rng, n, w, b)
        want = (images.reshape(n, 64).astype(np.float64) @ w + b).argmax(axis=1).astype(np.int64)
        data.append((predict_model(w, b, *_MODEL_NAMES[which], max_rows=batch_size, features=which == 1), images,
                     batch_size, want))
    return data


def _predict_cases(seed: int) -> list[tuple]:
    return [(Make("labkit.material.l04:limited_session", (model, batch_size)), images, batch_size)
            for model, images, batch_size, _ in _predict_data(seed)]


#: one fixed test name per planned case
PREDICT_TESTS = tuple(f"{n} image{'' if n == 1 else 's'}, batch_size {b}" for n, b, _ in _PREDICT_PLAN)


@exercise('04.predict', title='Batched predictions with one session', points=3, kind='function',
          hint=[
              'Run the images in slices of at most batch_size, keep the predicted class of each, join the pieces; zero images is a valid input.',
              'session.get_inputs()[0].name, session.run(None, feed), argmax over the classes, np.concatenate.',
          ],
          cases=_predict_cases, tests=PREDICT_TESTS, skill=PREDICT_TESTS)
def _predict(outputs, seed):
    refused, data = 0, _predict_data(seed)
    # an answer taking the argmin everywhere (also where no limit applies) is wrong, not a way around the limit
    argmin = any(0 < len(images) <= b and _ran_at_once(got, model, images)
                 for (model, images, b, _), got in zip(data, outputs))
    for name, (model, images, batch_size, want), got in zip(PREDICT_TESTS, data, outputs):
        n = len(images)
        if isinstance(got, Raised) and "accepts at most batch_size" in got.message:
            refused += 1
        elif n > batch_size and not argmin and _ran_at_once(got, model, images):
            refused += 1
            got = Raised("ran more than batch_size images in one run (the test model negates its logits then, "
                         "so every class id came out wrong); expected at most batch_size images per run")
        if isinstance(got, Raised) and n == 0 and "concatenate" in got.message:
            got = Raised(got.message + " (with 0 images there is nothing to concatenate)")
        elif isinstance(got, (list, np.ndarray)) and np.shape(got) == (n, 10):
            yield TestResult(name, False, f"you returned the scores (shape {np.shape(got)}); expected one class id "
                                          f"per image (shape ({n},))")
            continue
        # the prompt allows a 1-D integer array or a list of ints; the ids in the images' order, exactly
        result = same(name, got, want, forms=("array", "list"), integer=True)
        if not result.passed and np.ndim(got) == 1 and 0 < np.shape(got)[0] < n:
            result = TestResult(name, False, result.message + " (did the last, shorter batch get lost?)")
        yield TestResult(name, True, "an empty array, as expected" if n == 0 else "the class id is right" if n == 1
                         else f"all {n} class ids right") if result.passed else result
    if refused == sum(len(images) > b for _, images, b, _ in data) > 0:
        yield DidNotDo("every test that holds more than batch_size images ran them in one go (refused, or "
                       "computed by the test model over too many rows): the images were not split into batches")


def _ran_at_once(got, model: bytes, images: np.ndarray) -> bool:
    """Whether `got` is what the test model gives over more rows than allowed: the argmin of every row."""
    import onnx
    from onnx import numpy_helper

    try:
        ids = np.asarray(got)
    except (TypeError, ValueError):
        return False
    if ids.shape != (len(images),) or not len(images):
        return False
    weights = {t.name: numpy_helper.to_array(t) for t in onnx.load_from_string(model).graph.initializer}
    logits = images.reshape(len(images), 64).astype(np.float64) @ weights["W"] + weights["B"]
    return bool(np.array_equal(ids, logits.argmin(axis=1)))


# ---------------------------------------------------------------- 04.top_operator

#: (node name as ORT writes it, operator type): names often do not say the operator (fusions rename nodes)
_NODE_POOL = (
    ("relu_nchwc", "Conv"), ("relu_1_nchwc", "Conv"), ("/features/conv3/Conv", "Conv"),
    ("max_pool2d_nchwc", "MaxPool"), ("ReorderInput", "ReorderInput"), ("ReorderOutput", "ReorderOutput"),
    ("node_Reshape_23", "Reshape"), ("fused node_linear", "FusedGemm"), ("node_linear_1", "Gemm"),
    ("node_MatMul_4", "MatMul"), ("node_Add_5", "Add"), ("node_Softmax_9", "Softmax"),
    ("/Transpose", "Transpose"), ("node_Relu_2", "Relu"),
    # more operators with several nodes, so that the top operator is not always the convolution (blind round 12)
    ("/attn/MatMul_1", "MatMul"), ("node_Add_11", "Add"), ("/block/Relu", "Relu"),
)


def _profile_plan(seed: int, k: int) -> tuple[list[tuple[str, str]], list[list[int]]]:
    """Nodes and per-run durations (µs) of one synthetic trace, drawn until it has the traps we test."""
    rng = np.random.default_rng(seed * 31 + 4100 + k)
    runs = 2 + k % 3
    while True:
        idx = rng.choice(len(_NODE_POOL), size=int(rng.integers(5, 10)), replace=False)
        nodes = [_NODE_POOL[i] for i in sorted(idx)]
        durs = [[int(d) for d in rng.integers(5, 400, size=len(nodes))] for _ in range(runs)]
        totals: dict[str, int] = {}
        for run in durs:
            for (_, op), d in zip(nodes, run):
                totals[op] = totals.get(op, 0) + d
        ranked = sorted(totals.items(), key=lambda kv: -kv[1])
        if len(ranked) < 2 or ranked[0][1] - ranked[1][1] < 20:
            continue
        longest = max(((op, d) for run in durs for (_, op), d in zip(nodes, run)), key=lambda t: t[1])
        biggest_node = max(((name, op) for name, op in nodes),
                           key=lambda no: sum(run[nodes.index(no)] for run in durs))
        # the top operator must not be the op of the longest single call, nor named by its busiest node; in
        # every other trace it is not Conv (an answer that always says Conv cannot pass most of them)
        if k % 2 and ranked[0][0] == "Conv":
            continue
        if longest[0] != ranked[0][0] and biggest_node[1] != ranked[0][0] or k == 0:
            return nodes, durs


def _shape_args(op: str, rng: np.random.Generator) -> dict:
    n = int(rng.integers(1, 64))
    return {"input_type_shape": [{"float": [n, 16, 8, 8]}], "output_type_shape": [{"float": [n, 16, 8, 8]}]}


def profile_trace(seed: int, k: int) -> list[dict]:
    """A synthetic ONNX Runtime profile in the format `end_profiling()` writes (a list of Chrome trace events)."""
    nodes, durs = _profile_plan(seed, k)
    rng = np.random.default_rng(seed * 37 + 4200 + k)
    pid = int(rng.integers(1000, 60000))
    tid = pid
    events = [
        {"cat": "Session", "pid": pid, "tid": tid, "dur": int(rng.integers(300, 900)), "ts": 5, "ph": "X",
         "name": "model_loading_uri", "args": {}},
        {"cat": "Session", "pid": pid, "tid": tid, "dur": int(rng.integers(8000, 30000)), "ts": 900, "ph": "X",
         "name": "session_initialization", "args": {}},
    ]
    ts = 40000
    for run in durs:
        start = ts
        for i, ((name, op), d) in enumerate(zip(nodes, run)):
            ts += int(rng.integers(2, 15))
            events.append({
                "cat": "Node", "pid": pid, "tid": tid, "dur": d, "ts": ts, "ph": "X", "name": f"{name}_kernel_time",
                "args": {"op_name": op, "provider": CPU, "node_index": str(3 + 2 * i),
                         "parameter_size": str(int(rng.integers(0, 5)) * 640),
                         "activation_size": str(int(rng.integers(1, 9)) * 1024),
                         "output_size": str(int(rng.integers(1, 9)) * 4096),
                         **_shape_args(op, rng),
                         "thread_scheduling_stats": {"main_thread": {"thread_pool_name": "session-1-intra-op",
                                                                     "thread_id": str(tid), "block_size": [],
                                                                     "core": -1, "Distribution": 0,
                                                                     "DistributionEnqueue": 0, "Run": 0,
                                                                     "Wait": 0, "WaitRevoke": 0},
                                                     "sub_threads": {}}}})
            ts += d
        events.append({"cat": "Session", "pid": pid, "tid": tid, "dur": ts - start + 3, "ts": start + 1, "ph": "X",
                       "name": "SequentialExecutor::Execute", "args": {}})
        events.append({"cat": "Session", "pid": pid, "tid": tid, "dur": ts - start + 6, "ts": start, "ph": "X",
                       "name": "model_run", "args": {}})
        ts += int(rng.integers(50, 300))
    return events


def top_operator_reference(events: list[dict]) -> dict:
    """The operator type with the largest summed kernel time over all Node events."""
    totals: dict[str, int] = {}
    for e in events:
        if e.get("cat") == "Node" and "op_name" in e.get("args", {}):
            totals[e["args"]["op_name"]] = totals.get(e["args"]["op_name"], 0) + e["dur"]
    op = max(totals, key=totals.get)
    return {"op": op, "total_us": totals[op]}


_N_TRACES = 4


def _profile_file(seed: int, k: int) -> File:
    """Trace k as a file, the way ORT leaves it (the learner's function gets its path)."""
    text = "[\n" + ",\n".join(json.dumps(e) for e in profile_trace(seed, k)) + "\n]\n"
    return File(f"onnxruntime_profile_{k}.json", text.encode())


def _top_operator_cases(seed: int) -> list[tuple]:
    cases: list[tuple] = [(profile_trace(seed, k),) for k in range(_N_TRACES - 1)]
    cases.append((_profile_file(seed, _N_TRACES - 1),))
    return cases


TOP_TESTS = tuple(f"trace {k + 1}" + (" (given as a path)" if k == _N_TRACES - 1 else "") for k in range(_N_TRACES))


@exercise('04.top_operator', title='Read the top operator from a profile', points=3, kind='function',
          hint=[
              'A profile is a list of timed events; only the node events count, grouped by operator type (not node name), their durations summed over all runs.',
              "json.load; an event's 'cat', 'dur' and args['op_name']; a dict or collections.Counter of totals.",
          ],
          cases=_top_operator_cases, tests=TOP_TESTS, skill=TOP_TESTS)
def _top_operator(outputs, seed):
    traces = [profile_trace(seed, k) for k in range(len(TOP_TESTS))]
    wanted = [top_operator_reference(events) for events in traces]
    named = {got.get("op") if isinstance(got, dict) else None for got in outputs}
    if len(named) == 1 and None not in named and len({w["op"] for w in wanted}) > 1:  # the top operators differ
        yield DidNotDo(f"it names {next(iter(named))!r} whatever the profile: the exercise is ranking the operators "
                       "by their total time")
    for name, got, events, want in zip(TOP_TESTS, outputs, traces, wanted):
        if isinstance(got, Raised):
            yield TestResult(name, False, f"your function {got.message}")
            continue
        if not isinstance(got, dict) or "op" not in got or "total_us" not in got:
            shown = f"keys {sorted(got)}" if isinstance(got, dict) else describe(got)
            yield TestResult(name, False, f"expected a dict {{'op': ..., 'total_us': ...}}, got {shown}")
            continue
        op, total = got["op"], got["total_us"]
        node_ops = {e["name"]: e["args"]["op_name"] for e in events if e["cat"] == "Node"}
        session_names = {e["name"] for e in events if e["cat"] == "Session"}
        if op != want["op"]:
            longest = max((e for e in events if e["cat"] == "Node"), key=lambda e: e["dur"])
            if op in session_names:
                why = f" — {op!r} is a Session event, not an operator (a Node event)"
            elif isinstance(op, str) and (op in node_ops or op + "_kernel_time" in node_ops):
                why = " — that is a node's name; expected an operator type, which many nodes share"
            elif op == longest["args"]["op_name"]:
                why = " — that operator has the longest single call; expected the longest total over all its calls"
            else:
                why = ""
            yield TestResult(name, False, f"expected op {want['op']!r}, got {op!r}{why}")
        elif isinstance(total, bool) or not isinstance(total, (int, float)) or total != want["total_us"]:
            yield TestResult(name, False, f"op {op!r} is right, but expected total_us {want['total_us']}, got "
                                          f"{total!r} (the time of every call of that operator, all runs together)")
        else:
            yield TestResult(name, True, f"{op} with {total} µs")


# ---------------------------------------------------------------- 04.choose_providers

_EPS = ("CUDAExecutionProvider", "TensorrtExecutionProvider", "DmlExecutionProvider", "CoreMLExecutionProvider",
        "NnapiExecutionProvider", "XnnpackExecutionProvider", "QNNExecutionProvider", "OpenVINOExecutionProvider",
        "ROCMExecutionProvider", "AzureExecutionProvider")

_FIXED_PROVIDER_CASES = (
    ("fallback to CPU", ["CUDAExecutionProvider"], ["AzureExecutionProvider", CPU]),
    ("keep the preferred order", ["CUDAExecutionProvider", "DmlExecutionProvider"],
     [CPU, "DmlExecutionProvider", "CUDAExecutionProvider"]),
    ("skip what is missing", ["TensorrtExecutionProvider", "CUDAExecutionProvider"],
     ["CUDAExecutionProvider", CPU]),
    ("no duplicates", ["XnnpackExecutionProvider", "NnapiExecutionProvider", "XnnpackExecutionProvider"],
     ["XnnpackExecutionProvider", CPU]),
    ("stop at CPU", [CPU, "CUDAExecutionProvider"], ["CUDAExecutionProvider", CPU]),
    ("empty preference", [], [CPU]),
    # the CPU stops the list even where `available` does not name it (blind round 12)
    ("CPU not listed as available", ["CoreMLExecutionProvider", CPU, "XnnpackExecutionProvider"],
     ["CoreMLExecutionProvider", "XnnpackExecutionProvider"]),
)


def choose_providers_reference(available: list[str], preferred: list[str]) -> list[str]:
    chosen: list[str] = []
    for name in preferred:
        if name == CPU:
            break
        if name in available and name not in chosen:
            chosen.append(name)
    return chosen + [CPU]


def _provider_data(seed: int) -> list[tuple[str, list[str], list[str]]]:
    rng = np.random.default_rng(seed + 4300)
    cases = [(n, list(p), list(a)) for n, p, a in _FIXED_PROVIDER_CASES]
    for i in range(3):
        # long lists: the order of `preferred` is what the answer keeps (a set's order matches it by chance
        # only, about once in 5! = 120 tries per case, whatever the process's hash seed)
        avail = [_EPS[j] for j in rng.choice(len(_EPS), size=int(rng.integers(5, 8)), replace=False)]
        avail.insert(int(rng.integers(0, len(avail) + 1)), CPU)
        pref = [avail[j] for j in rng.permutation(len(avail)) if avail[j] != CPU]
        pref += [_EPS[j] for j in rng.choice(len(_EPS), size=2)]  # a repeat or one this machine lacks
        pref = [pref[j] for j in rng.permutation(len(pref))]
        if i == 2:
            pref.insert(int(rng.integers(5, len(pref))), CPU)
        cases.append((f"random case {i + 1}", pref, avail))
    return cases


def _provider_cases(seed: int) -> list[tuple]:
    return [(available, preferred) for _, preferred, available in _provider_data(seed)]


PROVIDER_TESTS = tuple(n for n, _, _ in _FIXED_PROVIDER_CASES) + tuple(f"random case {i + 1}" for i in range(3))
#: the prompt's form: a list (plain data turns a tuple into one, so the learner side records it)
PROVIDER_FORM = "returns a list"


@exercise('04.choose_providers', title='Choose execution providers with a fallback', points=2, kind='function',
          hint=[
              'Keep the preference order, skip what this machine does not have, never list a provider twice, and always end with the CPU, which runs everything.',
              "A loop over `preferred` with a membership test in `available`; 'CPUExecutionProvider'.",
          ],
          cases=_provider_cases, tests=(*PROVIDER_TESTS, PROVIDER_FORM), skill=PROVIDER_TESTS)
def _choose_providers(outputs, seed):
    data = _provider_data(seed)
    echoed = [[p for p in available if p != CPU] + [CPU] for _, _, available in data]
    if outputs == echoed:  # `available` handed back (CPU last): `preferred` never read
        yield DidNotDo("it returns the available providers in their own order whatever `preferred` says")
    for (name, preferred, available), got in zip(data, outputs):
        want = choose_providers_reference(available, preferred)
        label = f"{name}: preferred={preferred}, available={available}"
        if isinstance(got, Raised):
            yield TestResult(name, False, f"your function {got.message} ({label})")
        elif not isinstance(got, list) or not all(isinstance(x, str) for x in got):
            yield TestResult(name, False, f"expected a list of provider names, got {describe(got)}")
        elif got == want:
            yield TestResult(name, True, f"{got}")
        else:
            why = ""
            if not got or got[-1] != CPU:
                why = " — the list must end with 'CPUExecutionProvider'"
            elif len(set(got)) != len(got):
                why = " — a provider appears twice"
            elif sorted(got) == sorted(want):
                why = " — same providers, wrong order: follow the order of `preferred`"
            yield TestResult(name, False, f"expected {want}, got {got}{why} ({label})")
    yield promised_form(PROVIDER_FORM, outputs, ("list",), "a list", "list(...) turns a tuple into one")


# ---------------------------------------------------------------- 04.quiz

quiz('04.quiz', title='Running models with ONNX Runtime', points=4, questions=[
    Question('q1', "You ask for providers=['CUDAExecutionProvider', 'CPUExecutionProvider'] and session.get_providers() returns ['CPUExecutionProvider']. What happened?", {
        'a': 'The model still runs on the GPU; ORT just lists the CPU',
        'b': 'No CUDA in this build: ORT warned and used the CPU',
        'c': 'get_providers() lists only the last provider you asked for',
    }, answer='b', why=(
        'Requested is a wish list: a provider this build lacks is skipped with a warning, not an '
        'error, so the GPU is not used (a); get_providers() lists every provider the session really '
        'uses, in order, not the last one requested (c).')),
    Question('q2', 'Why create one InferenceSession and reuse it for every request?', {
        'a': 'Creating a session is costly: it loads then optimizes the graph',
        'b': 'ONNX Runtime allows one session per process at a time',
        'c': 'A reused session gives more accurate results',
    }, answer='a', why=(
        'Creating a session loads, checks and optimizes the graph, which costs far more than one run: '
        'pay it once. A process may hold many sessions (b), and a session gives the same results '
        'whether it is new or reused (c).')),
    Question('q3', 'When does SessionOptions.inter_op_num_threads change anything?', {
        'a': 'Always: it sets the threads of each MatMul and Conv node',
        'b': 'Only when a GPU provider runs part of the graph',
        'c': 'Only with execution_mode ORT_PARALLEL',
    }, answer='c', why=(
        'The default ORT_SEQUENTIAL mode runs one node at a time, so inter-op threads idle; '
        'ORT_PARALLEL runs independent nodes at the same time. Splitting one node (a) is '
        'intra_op_num_threads, and neither is about GPUs (b).')),
    Question('q4', "In ONNX Runtime's profile trace, where is the operator type of a node event?", {
        'a': "In event['args']['op_name']",
        'b': "In the event's name",
        'c': "In event['cat']",
    }, answer='a', why=(
        "args['op_name'] holds the type. The event name (b) is the node's name plus '_kernel_time' "
        "(fused nodes get new names), and cat (c) is only 'Node' or 'Session'.")),
    Question('q5', 'After the export, cnn.onnx is about 12 KiB although the CNN has tens of thousands of float32 parameters. Why?', {
        'a': 'ONNX compresses float32 weights when it saves',
        'b': 'ONNX Runtime downloads the weights at session creation',
        'c': 'The weights went to cnn.onnx.data next to the file',
    }, answer='c', why=(
        'The dynamo exporter stores the weights as external data in cnn.onnx.data: the .onnx file '
        'holds only the graph, so copy both files together. ONNX does not compress weights (a) '
        '(float32 is float32 in any file), and ONNX Runtime never downloads anything (b).')),
])
