"""Lesson 10 exercise specs (what the learner sees, references, test inputs, quiz answers): scikit-learn to ONNX with
array probabilities, a custom converter, provider placement, IO binding, quiz."""
from __future__ import annotations

import numpy as np

from labkit.checks import DidNotDo, Question, TestResult, exercise, load_onnx, ort_session, quiz
from labkit.material.l10 import fitted_model
from labkit import plain
from labkit.plain import Make, Raised, describe

CPU = "CPUExecutionProvider"


# ---------------------------------------------------------------- shared: fitted models on hidden data

def _blobs(rng: np.random.Generator, n: int, n_features: int, n_classes: int, centers: np.ndarray,
           spread: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """n float32 rows around class centres (labels 0..n_classes-1, every class present)."""
    y = np.arange(n) % n_classes
    rng.shuffle(y)
    x = centers[y] + spread * rng.normal(size=(n, n_features))
    return x.astype(np.float32), y.astype(np.int64)


def _model_data(seed: int, salt: int, plan: tuple) -> list[tuple]:
    """(kind, x_train, y_train, x_eval) per planned (kind, n_features, n_classes) of one exercise."""
    rng = np.random.default_rng(seed * 13 + salt)
    out = []
    for kind, n_features, n_classes in plan:
        offset = 5.0 if "scaler" in kind else 0.5  # far from 0 where a scaler matters; near 0 elsewhere (fast fits)
        centers = rng.normal(scale=2.0, size=(n_classes, n_features)) + rng.normal(scale=offset, size=n_features)
        x, y = _blobs(rng, 60 * n_classes, n_features, n_classes, centers)
        x_eval, _ = _blobs(rng, 37, n_features, n_classes, centers, spread=2.5)  # wider: outside the clip range
        out.append((kind, x, y, x_eval))
    return out


def _model_cases(data: list[tuple]) -> list[tuple]:
    return [(Make("labkit.material.l10:fitted_model", (kind, x, y)), x.shape[1]) for kind, x, y, _ in data]


_EXPECTED: dict[str, np.ndarray] = {}


def _expected_proba(kind: str, x: np.ndarray, y: np.ndarray, x_eval: np.ndarray) -> np.ndarray:
    """scikit-learn's probabilities on the unseen rows (cached: the same seed gives the same fits)."""
    import hashlib

    key = hashlib.sha256(kind.encode() + x.tobytes() + y.tobytes() + x_eval.tobytes()).hexdigest()
    if key not in _EXPECTED:
        if len(_EXPECTED) > 64:
            _EXPECTED.clear()
        _EXPECTED[key] = fitted_model(kind, x, y).predict_proba(x_eval.astype(np.float64))
    return _EXPECTED[key].copy()


def _judge_models(names: tuple[str, ...], data: list[tuple], outputs: list):
    """One test per model: the learner's ONNX model gives scikit-learn's probabilities as a float
    tensor on rows the learner never saw, for a batch of many rows and of one."""
    for name, (kind, x, y, x_eval), got in zip(names, data, outputs):
        model, err = load_onnx(got)
        if model is None:
            yield TestResult(name, False, err)
            continue
        want = _expected_proba(kind, x, y, x_eval)
        ops = [n.op_type for n in model.graph.node]
        if "ZipMap" in ops:
            yield TestResult(name, False, "the model still ends with ZipMap: its probabilities come out as a list of "
                                          "dicts, expected a float tensor (rows, classes)")
            continue
        try:
            sess = ort_session(model)
            inp = sess.get_inputs()[0]
            if "double" in inp.type:
                yield TestResult(name, False, f"the model's input is {inp.type}, expected tensor(float) "
                                              "(the check feeds float32 rows)")
                continue
            many = sess.run(None, {inp.name: x_eval})
            one = sess.run(None, {inp.name: x_eval[:1]})
        except Exception as e:  # noqa: BLE001 (the learner's model: any failure is a verdict)
            msg = " ".join(str(e).split())[:300]
            hint = (" — the batch dimension is fixed, expected it left open (any number of rows)") if "dimension" in msg.lower() or "shape" in msg.lower() else ""
            yield TestResult(name, False, f"ONNX Runtime could not run your model on {len(x_eval)} rows of "
                                          f"{x.shape[1]} features: {msg}{hint}")
            continue
        probs = [o for o in many if isinstance(o, np.ndarray) and o.dtype.kind == "f" and o.ndim == 2]
        if not probs:
            yield TestResult(name, False, "no output is a float tensor of probabilities (rows, classes); outputs: "
                                          + ", ".join(describe(o) for o in many))
            continue
        prob = probs[-1]
        if prob.shape != want.shape:
            yield TestResult(name, False, f"expected probabilities of shape {want.shape}, got {prob.shape}")
            continue
        diff = np.abs(prob.astype(np.float64) - want)
        if diff.max() > 1e-4:
            row = int(diff.max(axis=1).argmax())
            yield TestResult(name, False, f"probabilities differ from scikit-learn's on {int((diff.max(axis=1) > 1e-4).sum())} "
                                          f"of {len(want)} unseen rows (row {row}: largest difference {diff.max():.3g})")
            continue
        one_prob = [o for o in one if isinstance(o, np.ndarray) and o.dtype.kind == "f" and o.ndim == 2]
        if not one_prob or one_prob[-1].shape != want[:1].shape:
            yield TestResult(name, False, "right on a batch, but a single row does not give one row of probabilities")
            continue
        yield TestResult(name, True, f"probabilities match scikit-learn on {len(want)} unseen rows "
                                     f"(max difference {diff.max():.1g})")


# ---------------------------------------------------------------- 10.to_onnx

_TO_ONNX_PLAN = (("scaler+logreg", 12, 3), ("logreg", 7, 4), ("tree", 9, 3), ("scaler+logreg", 20, 5))
TO_ONNX_TESTS = tuple(f"{kind}, {nf} features, {nc} classes" for kind, nf, nc in _TO_ONNX_PLAN)


def _to_onnx_data(seed: int) -> list[tuple]:
    return _model_data(seed, 1001, _TO_ONNX_PLAN)


def _to_onnx_cases(seed: int) -> list[tuple]:
    return _model_cases(_to_onnx_data(seed))


@exercise('10.to_onnx', title='A scikit-learn model to ONNX, probabilities as an array', points=3, kind='function',
          hint=[
              "A converter needs the type and shape of the input (float32, with a batch dimension left open), and a classifier's default output is a list of dicts, not an array: ask the converter for plain probabilities.",
              'skl2onnx.to_onnx(model, X_sample) reads the input type from a sample; its `options=` argument, keyed by id() of the classifier step, turns ZipMap off.',
          ],
          cases=_to_onnx_cases, tests=TO_ONNX_TESTS, skill=TO_ONNX_TESTS)
def _to_onnx(outputs, seed):
    yield from _judge_models(TO_ONNX_TESTS, _to_onnx_data(seed), outputs)


# ---------------------------------------------------------------- 10.custom_converter

_CUSTOM_PLAN = (("clip+logreg", 5, 3), ("clip+scaler+logreg", 8, 4), ("clip+logreg", 11, 2))
CUSTOM_TESTS = tuple(f"{kind}, {nf} features, {nc} classes" for kind, nf, nc in _CUSTOM_PLAN)


def _custom_data(seed: int) -> list[tuple]:
    return _model_data(seed, 2002, _CUSTOM_PLAN)


def _custom_cases(seed: int) -> list[tuple]:
    return _model_cases(_custom_data(seed))


@exercise('10.custom_converter', title='A converter for a transformer skl2onnx does not know', points=3, kind='function',
          hint=[
              "skl2onnx knows a class only once it is registered with two functions: one that says the output's type and shape, one that writes the ONNX nodes. Per-feature bounds are a vector, which ONNX's Clip does not take.",
              "skl2onnx's update_registered_converter; read the fitted attributes from operator.raw_operator; elementwise Max and Min broadcast a vector over rows.",
          ],
          cases=_custom_cases, tests=CUSTOM_TESTS, skill=CUSTOM_TESTS, bonus=True)
def _custom(outputs, seed):
    yield from _judge_models(CUSTOM_TESTS, _custom_data(seed), outputs)


# ---------------------------------------------------------------- 10.placement

#: (provider, operators it supports) — a described machine; the CPU provider runs every operator
_EP_POOL = {
    "CUDAExecutionProvider": ("Conv", "Relu", "MatMul", "Add", "Softmax", "Gemm", "MaxPool", "Reshape", "Mul"),
    "XnnpackExecutionProvider": ("Conv", "MaxPool", "Gemm", "Softmax", "Relu"),
    "OpenVINOExecutionProvider": ("Conv", "Relu", "MatMul", "Add", "Reshape", "Gemm", "Softmax", "MaxPool", "Mul",
                                  "Flatten"),
    "CoreMLExecutionProvider": ("Conv", "Relu", "Add", "Gemm", "Reshape"),
    "QNNExecutionProvider": ("Conv", "Relu", "MatMul", "Add", "Gemm"),
}
_OPS = ("Conv", "Relu", "MaxPool", "Reshape", "Gemm", "Softmax", "MatMul", "Add", "Mul", "Flatten",
        "TreeEnsembleClassifier", "ZipMap", "LinearClassifier", "Scaler")
_FIXED_PLACEMENT = (
    ("one accelerator, the rest to the CPU", ["Conv", "Relu", "Reshape", "Gemm", "Softmax"],
     ["XnnpackExecutionProvider", CPU], ["XnnpackExecutionProvider"], True),
    ("the CPU is added when not listed", ["Scaler", "Gemm", "ZipMap"], ["CoreMLExecutionProvider"],
     ["CoreMLExecutionProvider"], True),
    ("order decides between two providers", ["Conv", "MatMul", "Add", "Flatten"],
     ["QNNExecutionProvider", "OpenVINOExecutionProvider"], ["QNNExecutionProvider", "OpenVINOExecutionProvider"], True),
    ("a provider missing from this build is skipped", ["Conv", "Relu", "Softmax"],
     ["CUDAExecutionProvider", "XnnpackExecutionProvider"], ["XnnpackExecutionProvider"], True),
    ("the CPU listed first takes everything", ["Conv", "Relu"], [CPU, "XnnpackExecutionProvider"],
     ["XnnpackExecutionProvider"], True),
    ("fallback off, a node left over", ["Conv", "TreeEnsembleClassifier"], ["OpenVINOExecutionProvider"],
     ["OpenVINOExecutionProvider"], False),
    ("fallback off, every node placed", ["Conv", "Relu", "Gemm"], ["CUDAExecutionProvider"],
     ["CUDAExecutionProvider"], False),
    ("fallback off with the CPU listed", ["Conv"], ["CUDAExecutionProvider", CPU], ["CUDAExecutionProvider"], False),
    ("fallback off, a graph with no nodes", [], ["QNNExecutionProvider"], ["QNNExecutionProvider"], False),
)


def placement_reference(ops: list[str], providers: list[str], supports: dict[str, list[str]],
                        fallback: bool = True) -> list[str] | None:
    """Each provider in order takes the nodes it supports that no earlier provider took; the CPU
    provider takes the rest (and everything, where it is listed); None where ORT refuses the session."""
    if not fallback and CPU in providers:
        return None
    placed: list[str | None] = [None] * len(ops)
    for ep in providers:
        if ep != CPU and ep not in supports:
            continue
        for i, op in enumerate(ops):
            if placed[i] is None and (ep == CPU or op in supports[ep]):
                placed[i] = ep
    if any(p is None for p in placed):
        if not fallback:
            return None
        placed = [p or CPU for p in placed]
    return placed  # type: ignore[return-value]


def _placement_data(seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed * 17 + 3003)
    cases = []
    for name, ops, providers, have, fallback in _FIXED_PLACEMENT:
        cases.append((name, list(ops), list(providers), {ep: list(_EP_POOL[ep]) for ep in have}, fallback))
    names = sorted(_EP_POOL)
    for i in range(3):
        have = [names[j] for j in rng.choice(len(names), size=int(rng.integers(1, 4)), replace=False)]
        listed = list(have) + ([names[int(rng.integers(len(names)))]] if i == 1 else [])
        listed = list(dict.fromkeys(listed[j] for j in rng.permutation(len(listed))))
        if i == 2:
            listed.insert(int(rng.integers(0, len(listed) + 1)), CPU)
        ops = [_OPS[j] for j in rng.choice(len(_OPS), size=int(rng.integers(4, 9)))]
        supports = {ep: [op for op in _EP_POOL[ep] if rng.random() < 0.8] for ep in have}
        cases.append((f"random machine {i + 1}", ops, listed, supports, True))
    return cases


def _placement_cases(seed: int) -> list[tuple]:
    return [(ops, providers, supports, fallback) for _, ops, providers, supports, fallback in _placement_data(seed)]


PLACEMENT_TESTS = tuple(c[0] for c in _FIXED_PLACEMENT) + tuple(f"random machine {i + 1}" for i in range(3))


@exercise('10.placement', title='Predict which provider runs each node', points=2, kind='function',
          hint=[
              'ONNX Runtime offers the graph to the providers in the order you list them: each one claims the nodes it supports that no earlier one claimed; what is left falls back to the CPU provider, unless fallback is switched off.',
              'A provider this build does not have is skipped; with session.disable_cpu_ep_fallback set, a node left for the CPU makes session creation fail (answer None).',
          ],
          cases=_placement_cases, tests=PLACEMENT_TESTS, skill=PLACEMENT_TESTS)
def _placement(outputs, seed):
    data = _placement_data(seed)
    forms = list(plain.forms_of(outputs) or [""] * len(data))
    for (name, ops, providers, supports, fallback), got, form in zip(data, outputs, forms):
        want = placement_reference(ops, providers, supports, fallback)
        label = f"ops={ops}, providers={providers}, fallback={fallback}"
        if isinstance(got, Raised):
            yield TestResult(name, False, f"your function {got.message} ({label})")
        elif want is None:
            if got is None:
                yield TestResult(name, True, "None: ORT refuses this session")
            else:
                why = (" — CPUExecutionProvider is listed while fallback is off: ORT calls that a conflicting "
                       "configuration" if CPU in providers else
                       " — a node no listed provider supports would need the CPU, and fallback is off")
                yield TestResult(name, False, f"expected None (ORT refuses the session), got {describe(got)}{why} ({label})")
        elif form not in ("list", ""):
            yield TestResult(name, False, f"expected a list of provider names, got a {form}: return list(...) of it "
                                          f"({label})")
        elif not isinstance(got, list) or not all(isinstance(p, str) for p in got):
            yield TestResult(name, False, f"expected a list of {len(ops)} provider names, got {describe(got)} ({label})")
        elif len(got) != len(ops):
            yield TestResult(name, False, f"expected one provider per node ({len(ops)}), got {len(got)} ({label})")
        elif got != want:
            i = next(k for k in range(len(ops)) if got[k] != want[k])
            why = ""
            if got[i] not in supports and got[i] != CPU:
                why = f" — {got[i]} is not in this build (not in `supports`): it gets no node"
            elif got[i] != CPU and ops[i] not in supports.get(got[i], ()):
                why = f" — {got[i]} does not support {ops[i]}"
            elif want[i] == CPU and CPU in providers:
                why = " — the CPU provider is listed before it and runs every operator"
            else:
                why = " — the earlier provider in the list that supports a node gets it"
            yield TestResult(name, False, f"node {i} ({ops[i]}): expected {want[i]}, got {got[i]}{why} ({label})")
        else:
            yield TestResult(name, True, f"{got}")


# ---------------------------------------------------------------- 10.io_binding

#: (input name, output name, features, classes, rows per batch, batches) per test
_BIND_PLAN = (("x", "probabilities", 64, 10, 32, 5), ("features", "scores", 7, 3, 1, 4),
              ("X", "output_probability", 20, 4, 9, 1))
BIND_TESTS = tuple(f"{n} batches of {r} rows, {c} classes" for _, _, _, c, r, n in _BIND_PLAN)


def softmax_model(w: np.ndarray, b: np.ndarray, input_name: str, output_name: str) -> bytes:
    """softmax(x @ w + b), symbolic batch: a stand-in for a converted classifier."""
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info(input_name, TensorProto.FLOAT, ["N", w.shape[0]])
    y = helper.make_tensor_value_info(output_name, TensorProto.FLOAT, ["N", w.shape[1]])
    graph = helper.make_graph(
        [helper.make_node("Gemm", [input_name, "W", "B"], ["logits"]),
         helper.make_node("Softmax", ["logits"], [output_name], axis=-1)],
        "softmax_classifier", [x], [y], [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10).SerializeToString()


def _bind_data(seed: int) -> list[tuple[bytes, list[np.ndarray], int, np.ndarray, np.ndarray]]:
    """Per test: the model's bytes as the session gets them (classes rotated by `shift`), the batches, the
    shift, and the true weights (w, b)."""
    rng = np.random.default_rng(seed * 19 + 4004)
    out = []
    for inp, outp, nf, nc, rows, n in _BIND_PLAN:
        w = rng.normal(size=(nf, nc)).astype(np.float32)
        b = rng.normal(size=nc).astype(np.float32)
        batches = [rng.normal(size=(rows, nf)).astype(np.float32) for _ in range(n)]
        # a caller's arrays may be in any memory layout: the third and the last batch of each test are
        # Fortran-ordered (their values unchanged; .npy keeps the order for the grader)
        for i in {2, n - 1} if n > 2 else {n - 1}:
            batches[i] = np.asfortranarray(batches[i])
        shift = int(rng.integers(1, nc))
        sealed = softmax_model(np.roll(w, shift, axis=1), np.roll(b, shift), inp, outp)
        out.append((sealed, batches, shift, w, b))
    return out


def _bind_cases(seed: int) -> list[tuple]:
    return [(Make("labkit.material.l10_bound:bound_session", (model, shift, len(batches[0]))), batches)
            for model, batches, shift, _, _ in _bind_data(seed)]


def _softmax_rows(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    z = x.astype(np.float64) @ w.astype(np.float64) + b
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


@exercise('10.io_binding', title='A loop that allocates nothing new', points=3, kind='function',
          hint=[
              "Allocate once, outside the loop: bind the output to a buffer you created, and inside the loop only change the input and run. An OrtValue's numpy() is a view of the bound buffer, which the next run overwrites.",
              'session.io_binding(), OrtValue.ortvalue_from_shape_and_type, bind_ortvalue_output, bind_cpu_input, run_with_iobinding.',
          ],
          cases=_bind_cases, tests=BIND_TESTS, skill=BIND_TESTS, tools=("numpy", "onnxruntime"))
def _io_binding(outputs, seed):
    skipped = merged = False
    for name, (_, batches, shift, w, b), got in zip(BIND_TESTS, _bind_data(seed), outputs):
        want = np.concatenate([_softmax_rows(x, w, b) for x in batches])
        if isinstance(got, Raised):
            merged = merged or "rows in one run, a batch has" in got.message
            yield TestResult(name, False, f"your function {got.message}")
            continue
        try:
            arr = np.asarray(got, dtype=np.float64)
        except (TypeError, ValueError):
            yield TestResult(name, False, f"expected an array of shape {want.shape}, got {describe(got)}")
            continue
        if arr.shape != want.shape:
            if arr.shape == (len(batches), *batches[0].shape[:1], want.shape[1]):
                yield TestResult(name, False, f"expected shape {want.shape} (all rows, one after the other), got "
                                              f"{arr.shape}")
            else:
                yield TestResult(name, False, f"expected shape {want.shape}, got {arr.shape}")
            continue
        diff = np.abs(arr - want)
        if diff.max() <= 1e-5:
            yield TestResult(name, True, f"{len(batches)} runs, one output buffer, outputs right")
            continue
        if np.abs(arr - np.roll(want, shift, axis=1)).max() <= 1e-5:
            skipped = True
            yield TestResult(name, False, "these are the model's outputs computed without the session's IO binding "
                                          "(its classes come out rotated by any other path)")
            continue
        rows = len(batches[0])
        last = np.tile(want[-rows:], (len(batches), 1))
        if len(batches) > 1 and np.abs(arr - last).max() <= 1e-5:
            yield TestResult(name, False, "every batch shows the last batch's output: out.numpy() is a view of the "
                                          "bound buffer, which each run overwrites; expected each batch's own output")
        else:
            bad = int(diff.max(axis=1).argmax())
            yield TestResult(name, False, f"row {bad}: largest difference {diff.max():.3g} from the session's "
                                          "own output")
    if skipped:
        yield DidNotDo("it ran the model past the session's IO binding")
    elif merged:
        yield DidNotDo("it ran several batches in one run, not one run per batch through the binding")


# ---------------------------------------------------------------- 10.quiz

quiz('10.quiz', title='Beyond PyTorch', points=5, questions=[
    Question('q1', "skl2onnx's default classifier output 'output_probability' arrives in Python as a list of dicts. Why?", {
        'a': 'ORT cannot return float arrays for any classifier model',
        'b': 'The converter ends the graph with a ZipMap node',
        'c': 'The probabilities were computed in float64',
    }, answer='b', why=(
        'ZipMap turns the (N, classes) tensor into one {class: probability} dict per row, which is '
        "what the output type seq(map(int64, tensor(float))) says; options={id(clf): {'zipmap': "
        'False}} gives a plain tensor. ORT returns float arrays for classifiers gladly once ZipMap is '
        'off (a), and float64 (c) has nothing to do with it.')),
    Question('q2', 'You convert with to_onnx(linear, X_train[:1]): the sample is one float32 row of 64 pixel features. Which inputs does the converted model accept?', {
        'a': 'Float32 rows of 64 features, in batches of any size',
        'b': 'Only one row at a time: the shape of the sample',
        'c': 'Rows of 64 features of any dtype, cast to float32',
    }, answer='a', why=(
        'skl2onnx takes only the dtype and the width from the sample and sets its first dimension to '
        'None: the input is declared float [None, 64], and one session runs all 450 test digits or a '
        "batch of 32. Not b: the sample's row count is not kept. Not c: ONNX Runtime checks an input "
        'against its declared type and refuses a float64 array (INVALID_ARGUMENT: Unexpected input data '
        'type).')),
    Question('q3', "You create a session with providers=['XnnpackExecutionProvider', 'CPUExecutionProvider']. Which nodes run on XNNPACK?", {
        'a': 'All of them: the first provider runs the whole graph',
        'b': 'None: the CPU provider is always preferred',
        'c': 'Those it supports: the rest fall back to the CPU',
    }, answer='c', why=(
        'The partitioner offers the nodes to each provider in list order; each takes what it supports '
        'and the rest goes on down the list, ending at the CPU. No provider runs a whole graph it '
        'cannot support (a), and the CPU provider gets only what is left when it is last (b).')),
    Question('q4', "You set the session config entry session.disable_cpu_ep_fallback = '1' and ask only for an accelerator provider that does not support one node of the model. What happens?", {
        'a': 'Session creation fails with an error',
        'b': 'The node runs on the CPU anyway, with a warning',
        'c': 'The node is skipped, its output filled with zeros',
    }, answer='a', why=(
        'With fallback disabled, ORT refuses to create the session (nodes are assigned to the CPU EP '
        'but fallback is disabled) rather than silently running a node on the CPU (b); it never skips '
        'nodes (c).')),
    Question('q5', 'On a CPU-only machine, IO binding with a pre-allocated output saves little per call. When does it matter most?', {
        'a': 'Never: it only changes the way you call the API',
        'b': 'When the model has a great many nodes',
        'c': 'When a GPU provider keeps data on the device',
    }, answer='c', why=(
        'On the CPU, inputs and outputs already live in host memory, so binding saves an allocation '
        'and a copy at most; with a GPU provider each run() copies inputs to the device and outputs '
        'back, which binding device buffers avoids. That is more than an API change (a), and the node '
        'count (b) does not decide it.')),
    Question('q6', 'After session.run_with_iobinding(binding) you keep first = out.numpy() (out: the bound output OrtValue), bind the next batch as input and run again. What does first hold now?', {
        'a': "The first batch's outputs: numpy() made a copy",
        'b': "The next batch's outputs: it views the bound buffer",
        'c': 'Freed memory: ORT allocated a fresh result buffer',
    }, answer='b', why=(
        "OrtValue.numpy() of a CPU tensor returns an array over the OrtValue's own memory "
        '(np.shares_memory says True), and each run writes its outputs into the bound buffer, so first '
        'now shows the next batch: copy what you want to keep. Not a: numpy() copies nothing here. '
        'Not c: ORT allocates no new buffer for a bound OrtValue; out.data_ptr() is the same after '
        'the second run.')),
])


def warm(seed: int) -> None:
    """Run once by the verdict process before it forks a child per answer (`grading.judge.serve`): the
    scikit-learn fits whose probabilities the conversion judges compare with."""
    for kind, x, y, x_eval in (*_to_onnx_data(seed), *_custom_data(seed)):
        _expected_proba(kind, x, y, x_eval)
