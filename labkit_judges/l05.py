"""Lesson 05 exercise specs (what the learner sees, references, test inputs, quiz answers): fold BatchNorm into Conv (by
formula, then in a graph), ORT levels, portable files."""
from __future__ import annotations

from typing import TYPE_CHECKING

import functools

import numpy as np

from labkit.checks import Question, TestResult, error_line, exercise, expect_close, load_onnx, quiz
from labkit.checks.differential import same
from labkit.material.l05 import IN_CHANNELS, SIZE, practice_model
from labkit.plain import Raised

if TYPE_CHECKING:
    import onnx

#: the domain of ONNX Runtime's blocked-layout (NCHWc) operators: tied to the CPU's vector width
NCHWC_DOMAIN = "com.microsoft.nchwc"


def fold_bn_reference(W, b, gamma, beta, mean, var, eps):
    """W' = W·s and b' = (b − mean)·s + beta with s = gamma / sqrt(var + eps), per output channel."""
    W = np.asarray(W, dtype=np.float64)
    s = np.asarray(gamma, np.float64) / np.sqrt(np.asarray(var, np.float64) + float(eps))
    b = np.zeros(W.shape[0]) if b is None else np.asarray(b, np.float64)
    W2 = W * s.reshape((-1,) + (1,) * (W.ndim - 1))
    b2 = (b - np.asarray(mean, np.float64)) * s + np.asarray(beta, np.float64)
    return W2, b2


# ---------------------------------------------------------------- the practice model


def _session(model, disable: bool = True):
    """A CPU session on a model (bytes or ModelProto), optimizations off by default: run what the file says."""
    from labkit.runtime import ort_session

    return ort_session(model, optimize=not disable)


BATCHES = (1, 3)


def _outputs_match(model, seed: int, salt: int, unless: str = ""):
    """One test per batch size: `model` and the practice model agree on the same random inputs.

    Runs with ONNX Runtime's optimizations disabled, so it checks what the file says. When `unless`
    names a reason the answer does not count (e.g. nothing was folded), matching outputs still fail.
    """
    names = [f"same output, batch {n}" for n in BATCHES]
    try:
        sess = _session(model)
    except Exception as e:
        for name in names:
            yield TestResult(name, False, f"ONNX Runtime (optimizations disabled) cannot load the model: {error_line(e)}")
        return
    inputs = [i.name for i in sess.get_inputs()]
    outputs = [o.name for o in sess.get_outputs()]
    if inputs != ["x"] or outputs != ["y"]:
        for name in names:
            yield TestResult(name, False, f"expected one input 'x' and one output 'y' like the practice model, got "
                                          f"inputs {inputs} and outputs {outputs}")
        return
    ref = _session(practice_model())
    rng = np.random.default_rng(seed + salt)
    for name, n in zip(names, BATCHES):
        x = rng.normal(size=(n, IN_CHANNELS, SIZE, SIZE)).astype(np.float32)
        want = ref.run(None, {"x": x})[0]
        try:
            got = sess.run(None, {"x": x})[0]
        except Exception as e:
            yield TestResult(name, False, f"running it failed: {error_line(e, 160)}")
            continue
        result = expect_close(name, got, want, rtol=1e-4, atol=1e-4)
        if result.passed and unless:
            result = TestResult(name, False, f"the outputs match, but {unless}")
        yield result


# ---------------------------------------------------------------- 05.fold_bn

def _fold_bn_cases(seed: int) -> list[tuple]:
    """(W, b, gamma, beta, mean, var, eps): 2-D, 1-D and depthwise kernels, no bias, a square trap."""
    rng = np.random.default_rng(seed + 505)

    def case(wshape, bias, eps, small_var=False):
        c = wshape[0]
        f = lambda *s: rng.normal(size=s).astype(np.float32)  # noqa: E731
        var = rng.uniform(0.01, 0.05, c) if small_var else rng.uniform(0.2, 2.0, c)
        return (f(*wshape), f(c) if bias else None, rng.uniform(0.5, 1.5, c).astype(np.float32), f(c), f(c),
                var.astype(np.float32), eps)

    return [case((4, 3, 3, 3), True, 1e-5),
            case((3, 2, 3, 3), True, 1e-3),         # 3 output channels and 3x3 kernels: wrong axes still broadcast
            case((5, 4, 1, 1), False, 0.1, True),   # no Conv bias; large epsilon against small variances
            case((6, 2, 5), True, 1e-5),            # a 1-D convolution (Conv1d)
            case((8, 1, 3, 3), True, 1e-2)]         # depthwise: one input channel per group


_FOLD_NAMES = ("Conv2d 4->3 ch", "3 output channels, 3x3 kernel", "b=None, eps=0.1", "Conv1d kernel",
               "depthwise kernel")


@exercise('05.fold_bn', title='Fold BatchNorm into Conv weights', points=3, kind='function', tools=('numpy',),
          hint=[
              'BatchNormalization at inference is a per-output-channel scale and shift: the scale multiplies W, scale and shift together make the new bias (a missing bias is zeros).',
              "np.sqrt, and broadcasting the per-channel factor over W's other axes (reshape with -1 and ones).",
          ],
          cases=_fold_bn_cases, tests=_FOLD_NAMES, skill=_FOLD_NAMES)
def _fold_bn(outputs, seed):
    for name, args, got in zip(_FOLD_NAMES, _fold_bn_cases(seed), outputs):
        W2, b2 = fold_bn_reference(*args)
        if isinstance(got, Raised):
            yield TestResult(name, False, f"your function {got.message}")
            continue
        if not isinstance(got, list) or len(got) != 2:
            yield TestResult(name, False, "expected a pair (W_folded, b_folded), got "
                             + (f"a sequence of length {len(got)}" if isinstance(got, list) else type(got).__name__))
            continue
        # float32 in, float32 out (the prompt): a float64 W' or b' makes a DOUBLE initializer no float Conv takes;
        # values within float32 rounding of the float64 reference
        w_res = same(f"{name}: W'", got[0], W2, dtype=args[0].dtype, rtol=1e-4, atol=1e-5)
        b_res = same(f"{name}: b'", got[1], b2, dtype=args[0].dtype, rtol=1e-4, atol=1e-5)
        if w_res.passed and b_res.passed:
            yield TestResult(name, True, "W' and b' match")
        else:
            bad = next(t for t in (w_res, b_res) if not t.passed)
            yield TestResult(name, False, f"{bad.name.split(': ')[-1]} {bad.message}")


# ---------------------------------------------------------------- 05.fold_graph

def _node_summary(model) -> tuple[int, int, int]:
    ops = [n.op_type for n in model.graph.node]
    return len(ops), ops.count("BatchNormalization"), ops.count("Conv")


def unseen_graph(seed: int, k: int) -> "onnx.ModelProto":
    """Graph k for 05.fold_graph: Conv+BN pairs mixed with what must stay as it is.

    Names, channels, epsilons, bias or not and the input/output names change with the seed. Each graph
    also holds a BatchNormalization that follows no Conv, a Conv whose output feeds two nodes (its BN
    must stay: folding would change the other consumer), an Identity and an Add of two initializers
    (a shortcut through ONNX Runtime's optimizer removes those; a folding function keeps them).
    Graph 2 convolves sequences (1-D: kernels of 3 axes), graph 1 images (2-D: kernels of 4 axes); graph 1 also
    has two Convs of one weight, each with its own BatchNormalization. One BN has no epsilon attribute (the
    default, graph 1) or another attribute before it (graph 2); graph 2's last Conv is also a graph output.
    """
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed * 13 + 5050 + k)
    tag = ["blk", "layer", "stage", "features"][int(rng.integers(4))] + str(k)
    x_name, y_name = [("x", "y"), ("input", "output"), ("pixels", "scores")][(k + seed) % 3]
    cin = int(rng.integers(2, 5))
    nd = 1 if k == 2 else 2  # spatial axes
    nodes, inits = [], []

    def add(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name))
        return name

    def conv(name, src, cin, cout, group=1, bias=True):
        w = add(f"{name}.w", rng.normal(0, (cin // group * 3 ** nd) ** -0.5, size=(cout, cin // group) + (3,) * nd))
        ins = [src, w] + ([add(f"{name}.b", rng.normal(0, 0.2, cout))] if bias else [])
        nodes.append(helper.make_node("Conv", ins, [f"{name}.out"], name=name, kernel_shape=[3] * nd,
                                      pads=[1] * (2 * nd), group=group))
        return f"{name}.out"

    def bn(name, src, c, out=None, attributes="epsilon"):
        eps = float(rng.choice([1e-5, 1e-3, 1e-2]))
        params = [add(f"{name}.{p}", v) for p, v in (("gamma", rng.uniform(0.5, 1.5, c)), ("beta", rng.normal(0, 0.3, c)),
                                                      ("mean", rng.normal(0, 0.5, c)), ("var", rng.uniform(0.02, 2.0, c)))]
        node = helper.make_node("BatchNormalization", [src] + params, [out or f"{name}.out"], name=name)
        # epsilon is read by name: absent it is 1e-5 (the default), and another attribute may come first
        if attributes == "momentum first":
            node.attribute.extend([helper.make_attribute("momentum", 0.9), helper.make_attribute("epsilon", eps)])
        elif attributes == "epsilon":
            node.attribute.append(helper.make_attribute("epsilon", eps))
        nodes.append(node)
        return out or f"{name}.out"

    def relu(name, src):
        nodes.append(helper.make_node("Relu", [src], [f"{name}.out"], name=name))
        return f"{name}.out"

    c1, c2 = int(rng.integers(3, 7)), int(rng.integers(3, 7))
    t = conv(f"{tag}.conv_a", x_name, cin, c1, bias=bool(k % 2))
    t = relu(f"{tag}.act_a", bn(f"{tag}.bn_a", t, c1, attributes="none" if k == 1 else "momentum first"))
    if k == 1:  # a second Conv of the same weight, with its own BN: folding must write new weights, not the old name
        nodes.append(helper.make_node("Conv", [x_name, f"{tag}.conv_a.w"], [f"{tag}.conv_twin.out"],
                                      name=f"{tag}.conv_twin", kernel_shape=[3] * nd, pads=[1] * (2 * nd)))
        twin = bn(f"{tag}.bn_twin", f"{tag}.conv_twin.out", c1)
        nodes.append(helper.make_node("Add", [t, twin], [f"{tag}.with_twin"], name=f"{tag}.with_twin"))
        t = f"{tag}.with_twin"
    nodes.append(helper.make_node("Identity", [t], [f"{tag}.id"], name=f"{tag}.identity"))
    t = bn(f"{tag}.bn_free", f"{tag}.id", c1)                       # follows no Conv: stays
    shared = conv(f"{tag}.conv_shared", t, c1, c2, bias=True)       # feeds a BN and an Add: stays
    side = bn(f"{tag}.bn_shared", shared, c2)
    nodes.append(helper.make_node("Add", [add(f"{tag}.half", rng.normal(0, 1, (c2,) + (1,) * nd)),
                                          add(f"{tag}.other_half", rng.normal(0, 1, (c2,) + (1,) * nd))],
                                  [f"{tag}.offset"], name=f"{tag}.const_add"))
    nodes.append(helper.make_node("Add", [shared, f"{tag}.offset"], [f"{tag}.shifted"], name=f"{tag}.shift"))
    nodes.append(helper.make_node("Add", [side, f"{tag}.shifted"], [f"{tag}.sum"], name=f"{tag}.sum"))
    t = relu(f"{tag}.act_b", f"{tag}.sum")
    t = conv(f"{tag}.conv_dw", t, c2, c2, group=c2, bias=bool(rng.integers(2)))
    bn(f"{tag}.bn_last", t, c2, out=y_name)                        # the last BN writes the graph output
    size = int(rng.integers(5, 9))
    outputs = [helper.make_tensor_value_info(y_name, TensorProto.FLOAT, ["N", c2] + [size] * nd)]
    if k == 2:  # a Conv whose output is also a graph output: its BN stays (a use that is not a node's)
        outputs.append(helper.make_tensor_value_info(f"{tag}.conv_dw.out", TensorProto.FLOAT, ["N", c2] + [size] * nd))
    graph = helper.make_graph(
        nodes, f"unseen_{k}",
        [helper.make_tensor_value_info(x_name, TensorProto.FLOAT, ["N", cin] + [size] * nd)], outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8,
                             producer_name="labkit.l05.judge")


#: per graph: (test name prefix, the graph)
FOLD_GRAPHS = ("practice model", "unseen graph A", "unseen graph B (1-D)")
FOLD_GRAPH_TESTS = tuple(f"{g}: {t}" for g in FOLD_GRAPHS
                         for t in ("foldable BatchNormalization gone", "other nodes kept", "same outputs"))


def _fold_graph_inputs(seed: int) -> list:
    import onnx

    return [onnx.load_from_string(practice_model())] + [unseen_graph(seed, k) for k in (1, 2)]


def _fold_graph_cases(seed: int) -> list[tuple]:
    return [(m,) for m in _fold_graph_inputs(seed)]


def foldable(model) -> set[str]:
    """Names of the BatchNormalization nodes a correct fold removes: inference-mode BN fed by a Conv whose
    output nothing else reads, with all parameters initializers."""
    inits = {t.name for t in model.graph.initializer}
    producer = {o: n for n in model.graph.node for o in n.output}
    uses: dict[str, int] = {}
    for n in model.graph.node:
        for i in n.input:
            uses[i] = uses.get(i, 0) + 1
    for o in model.graph.output:
        uses[o.name] = uses.get(o.name, 0) + 1
    out = set()
    for n in model.graph.node:
        if n.op_type != "BatchNormalization" or len([o for o in n.output if o]) != 1:
            continue
        conv = producer.get(n.input[0])
        if conv is not None and conv.op_type == "Conv" and uses.get(conv.output[0]) == 1 and \
                conv.input[1] in inits and all(i in inits for i in n.input[1:5]):
            out.add(n.name)
    return out


def _run(model, feed: dict):
    sess = _session(model)
    return sess.run(None, feed)[0], [i.name for i in sess.get_inputs()], [o.name for o in sess.get_outputs()]


def _conv_weights_kept(original, model, gone: set[str]) -> bool:
    """Whether the weights of every Conv feeding a foldable BatchNormalization of `original` are still, unchanged,
    the weights of some Conv of `model`: the BatchNormalization was replaced (Mul and Add, say), not folded."""
    from onnx import numpy_helper

    producer = {o: n for n in original.graph.node for o in n.output}
    inits = {t.name: t for t in original.graph.initializer}
    before = [numpy_helper.to_array(inits[producer[n.input[0]].input[1]]) for n in original.graph.node
              if n.name in gone]
    inits = {t.name: t for t in model.graph.initializer}
    after = [numpy_helper.to_array(inits[n.input[1]]) for n in model.graph.node
             if n.op_type == "Conv" and len(n.input) > 1 and n.input[1] in inits]
    return all(any(w.shape == a.shape and np.array_equal(w, a) for a in after) for w in before)


def _optimizer_shortcut(original, model) -> bool:
    """Whether `model` is what a graph optimizer (ONNX Runtime's, onnxscript's) makes of `original`: its
    Identity removed *and* its Add of two initializers computed into a constant. Folding by hand does neither."""
    inits = {t.name for t in original.graph.initializer}
    const_adds = [n for n in original.graph.node if n.op_type == "Add" and all(i in inits for i in n.input)]
    identities = [n for n in original.graph.node if n.op_type == "Identity"]
    if not const_adds or not identities:
        return False
    produced = {o for n in model.graph.node for o in n.output}
    ops = [n.op_type for n in model.graph.node]
    folded_add = not any(n.output[0] in produced for n in const_adds) or \
        ops.count("Add") < sum(n.op_type == "Add" for n in original.graph.node)
    return folded_add and ops.count("Identity") < len(identities)


@exercise('05.fold_graph', title='Fold every Conv+BatchNormalization pair of a graph', points=4, kind='function',
          tools=('numpy', 'onnx'),
          hint=[
              "Only a BatchNormalization fed by a Conv that nothing else reads folds; fold its parameters into that Conv's weights and bias, let the Conv write the BN's output, and leave every other node as it was (no optimizer: it does more than folding).",
              'model.graph.node and model.graph.initializer; onnx.numpy_helper.to_array / from_array; your fold_bn from above.',
          ],
          cases=_fold_graph_cases, tests=FOLD_GRAPH_TESTS, skill=FOLD_GRAPH_TESTS)
def _fold_graph(outputs, seed):
    from collections import Counter

    from labkit.checks import DidNotDo

    shortcut, replaced = [], []
    for g, original, got in zip(FOLD_GRAPHS, _fold_graph_inputs(seed), outputs):
        names = [f"{g}: {t}" for t in ("foldable BatchNormalization gone", "other nodes kept", "same outputs")]
        model, why = load_onnx(got)
        if model is None:
            for name in names:
                yield TestResult(name, False, why if "ONNX model" in why or "your function" in why
                                 else f"fold_graph should return an onnx.ModelProto; {why}")
            continue
        if _optimizer_shortcut(original, model):
            shortcut.append(g)
        gone = foldable(original)
        left = {n.name for n in model.graph.node if n.op_type == "BatchNormalization"}
        bn_total = sum(n.op_type == "BatchNormalization" for n in original.graph.node)
        still = sorted(gone & left) if all(n.name for n in model.graph.node) else []
        n_left = sum(n.op_type == "BatchNormalization" for n in model.graph.node)
        ok_bn = n_left == bn_total - len(gone) and not still
        yield TestResult(names[0], ok_bn,
                         f"{len(gone)} of {bn_total} BatchNormalization folded" if ok_bn else
                         f"expected {bn_total - len(gone)} BatchNormalization left (only the {len(gone)} fed by a Conv "
                         f"whose output nothing else reads fold), got {n_left}"
                         + (f"; still there: {still}" if still else ""))
        want_ops = Counter(n.op_type for n in original.graph.node)
        want_ops["BatchNormalization"] -= len(gone)
        got_ops = Counter(n.op_type for n in model.graph.node)
        other = {op: (want_ops[op], got_ops[op]) for op in set(want_ops) | set(got_ops)
                 if op != "BatchNormalization" and want_ops[op] != got_ops[op]}
        yield TestResult(names[1], not other,
                         "every other node is still there" if not other else
                         "folding changes only Conv+BatchNormalization pairs; these operator counts changed "
                         "(expected, got): " + ", ".join(f"{op} {a}->{b}" for op, (a, b) in sorted(other.items()))
                         + " (a graph optimizer does more than folding: fold the pairs yourself)")
        x_name = original.graph.input[0].name
        dims = [d.dim_value or 2 for d in original.graph.input[0].type.tensor_type.shape.dim]
        rng = np.random.default_rng(seed + 909 + len(names[2]))
        x = rng.normal(size=[3] + dims[1:]).astype(np.float32)
        want, _, _ = _run(original, {x_name: x})
        try:
            out, ins, outs = _run(model, {x_name: x})
        except Exception as e:
            yield TestResult(names[2], False, f"ONNX Runtime (optimizations disabled) cannot run the result: "
                                              f"{error_line(e)}")
            continue
        if outs != [o.name for o in original.graph.output]:
            yield TestResult(names[2], False, f"the graph output must keep its name {original.graph.output[0].name!r}, "
                                              f"got {outs}")
            continue
        yield expect_close(names[2], out, want, rtol=1e-4, atol=1e-4)
        if gone and not gone & left and _conv_weights_kept(original, model, gone):
            replaced.append(g)
    if replaced:
        yield DidNotDo(f"on {', '.join(replaced)} the BatchNormalizations are gone but every Conv kept its weights: "
                       "they were rewritten as other nodes, not folded into the Conv")
    if shortcut:
        yield DidNotDo(f"on {', '.join(shortcut)} the Identity is gone and the Add of two initializers was computed: "
                       "that is a graph optimizer's work (ONNX Runtime's or onnxscript's), not folding by hand")


# ---------------------------------------------------------------- 05.quiz

quiz('05.quiz', title='Predict what each optimization level does', points=4, questions=[
    Question('q1', 'Which operators disappear from the light ResNet-50 at the BASIC level?', {
        'a': 'ConstantOfShape and BatchNormalization, folded away',
        'b': 'Only Relu and Add, merged into the Conv before them',
        'c': 'None: BASIC only checks the graph for errors',
    }, answer='a', why=(
        'BASIC does constant folding (ConstantOfShape becomes initializers) and hardware-independent '
        'fusions such as Conv+BatchNormalization. Relu merges into Conv only at EXTENDED (b), and '
        'BASIC rewrites the graph, it does not only check it (c).')),
    Question('q2', 'What does EXTENDED add on the CPU execution provider?', {
        'a': "Blocked NCHWc layouts sized to the CPU's vector width",
        'b': '8-bit quantization of all the weights, done at load time',
        'c': "Fusions into ORT's own operators, such as the FusedConv",
    }, answer='c', why=(
        "EXTENDED fuses into ONNX Runtime's own com.microsoft operators (Conv+Relu -> FusedConv, "
        'Gemm+Relu -> FusedGemm) run by the CPU provider. NCHWc layouts come only at ALL (a), and no '
        'optimization level quantizes (b): that is quantize_static/quantize_dynamic.')),
    Question('q3', 'A script sets so.graph_optimization_level = ORT_ENABLE_ALL on a fresh SessionOptions(). What changes?', {
        'a': 'Inference gets faster than with the default settings',
        'b': 'Nothing at all: ORT_ENABLE_ALL is already the default',
        'c': 'Model loading fails on Arm, where NCHWc does not exist',
    }, answer='b', why=(
        'SessionOptions().graph_optimization_level is ORT_ENABLE_ALL already, so nothing changes and '
        'nothing gets faster (a); on Arm, ALL simply skips the x86 layouts, it does not fail (c).')),
    Question('q4', 'You optimize offline once and ship the file to many different CPUs. Which level do you save at?', {
        'a': 'EXTENDED: ALL may add layouts fitted to this CPU only',
        'b': 'ALL, because it is the fastest level on every CPU',
        'c': 'DISABLE: optimized files never load on other machines',
    }, answer='a', why=(
        "ALL may add NCHWc operators whose block size fits only this CPU's vectors, and ORT warns the "
        'file belongs to the machine that wrote it (b); optimized EXTENDED files load anywhere the CPU '
        'provider runs (c).')),
    Question('q5', 'The EXTENDED file (with FusedConv nodes) is loaded on a phone with the NNAPI execution provider first in the list. What happens to the FusedConv nodes?', {
        'a': 'NNAPI runs them: FusedConv is a standard ONNX operator',
        'b': 'They stay on the CPU provider, which owns FusedConv',
        'c': 'Loading fails: the file holds operators NNAPI lacks',
    }, answer='b', why=(
        'FusedConv and FusedGemm are com.microsoft kernels of the CPU execution provider (CUDA has its '
        'own FusedConv); NNAPI, CoreML and most other providers do not take them, so those nodes stay '
        'on the CPU. They are not standard ONNX operators (a), and a node NNAPI does not take falls '
        'back to the CPU instead of failing the load (c).')),
])


# ---------------------------------------------------------------- 05.portable

PORTABLE_TESTS = ("loads", "optimized", "EXTENDED-level fusions", "no machine-specific operators",
                  *(f"same output, batch {n}" for n in BATCHES))


#: the skill: a file optimized at the EXTENDED level that still runs on any CPU, with the same outputs
@exercise('05.portable', title='Save a portable optimized model', points=3, kind='onnx',
          hint=[
              "Pick the optimization level that fuses operators for the CPU provider but does not add this machine's blocked memory layout (the level above it does); the session that optimizes can also write the optimized model to a file.",
              'onnxruntime.SessionOptions: graph_optimization_level and optimized_model_filepath.',
          ],
          tests=PORTABLE_TESTS, skill=PORTABLE_TESTS[2:])
def _portable(answer, seed):
    import onnx

    from labkit.checks import DidNotDo

    model, why = load_onnx(answer)
    yield TestResult("loads", model is not None, why or "an ONNX model")
    if model is not None and [n.op_type for n in model.graph.node] == \
            [n.op_type for n in onnx.load_from_string(practice_model()).graph.node]:
        yield DidNotDo("its nodes are the practice model's, not one was optimized away; expected the graph "
                       "as an optimizing session leaves it")
    if model is None:
        return
    import onnx

    total0, bn0, _ = _node_summary(onnx.load_from_string(practice_model()))
    total, bn, _ = _node_summary(model)
    optimized = bn == 0 and total < total0
    yield TestResult("optimized", optimized,
                     f"{total0} nodes became {total}, no BatchNormalization left" if optimized else
                     f"the graph is not optimized: {total} nodes (the practice model has {total0}) and {bn} "
                     "BatchNormalization; expected fewer nodes and no BatchNormalization")
    fused = sum(n.op_type == "FusedConv" for n in model.graph.node)
    yield TestResult("EXTENDED-level fusions", fused > 0 and optimized,
                     f"{fused} Conv+Relu pairs fused into FusedConv" if fused and optimized else
                     f"{fused} FusedConv, but {bn} BatchNormalization left: a session at the EXTENDED level folds "
                     "every BatchNormalization before it fuses" if fused else
                     f"expected Conv+Relu fused into com.microsoft FusedConv (the EXTENDED level), found "
                     f"{bn} BatchNormalization and 0 FusedConv")
    nchwc = sorted({n.op_type for n in model.graph.node if n.domain == NCHWC_DOMAIN})
    if not optimized:
        yield TestResult("no machine-specific operators", False, "not judged: the graph is not optimized")
    else:
        yield TestResult("no machine-specific operators", not nchwc,
                         "no NCHWc (blocked layout) operators" if not nchwc else
                         f"the graph holds {NCHWC_DOMAIN} operators {nchwc}: their layout is made for this CPU's "
                         "vector width, so the file is not portable (was it saved at ORT_ENABLE_ALL?)")
    yield from _outputs_match(model, seed, 707, "" if optimized else "the graph is not optimized")


# ---------------------------------------------------------------- 05.rewrite_rule
#
# The learner hands in matmul_add_rules() -> the onnxscript rules; the check applies them with `rewrite` on the
# learner's side (`labkit.material.l05.apply_rules`, the spec's call=), so a graph is rewritten only by the rules: a
# pass by hand, an optimizer or onnxscript's shipped rules have no way in. The graphs are ones the learner never saw:
# 2-D MatMul+Add pairs (one written Add(bias, MatMul)) that must become Gemm, MatMul+Adds that must stay (Gemm takes
# 2-D inputs only: a 3-D x, a 3-D w, an x of unknown rank, 1-D, residual and rank-3 addends, a MatMul read twice), an
# Identity a graph optimizer would remove, and pairs inside the branches of an If, which the rewriter visits like the
# main graph. (A graph *input* of unknown rank is refused by onnx.checker, which the release's public check runs, so
# the unknown rank comes from a Reshape to a shape given at run time.)

REWRITE_GRAPHS = ("MLP with two pairs", "3-D input", "3-D weight", "unknown rank", "pairs inside an If",
                  "pairs that are no Gemm")
REWRITE_TESTS = tuple(f"{g}: {t}" for g in REWRITE_GRAPHS for t in ("node counts", "same outputs"))
#: the operators of each graph after the rule, subgraphs included
REWRITE_EXPECTED = ({"Gemm": 2, "Relu": 1, "Identity": 1}, {"MatMul": 1, "Add": 1}, {"MatMul": 1, "Add": 1},
                    {"Reshape": 1, "MatMul": 1, "Add": 1, "Flatten": 1}, {"If": 1, "Gemm": 2},
                    {"MatMul": 4, "Add": 4, "Relu": 1})
#: graph 5's pairs that must stay, by the input a wrong Gemm would take: why each is no Gemm
NO_GEMM = {"v": "a 1-D input (Gemm's A is 2-D)", "residual": "an addend of rank 2, a residual, not a bias",
           "C3": "a rank-3 addend (Gemm's C broadcasts to 2-D only)",
           "W3": "a MatMul whose result the Relu reads too (one Gemm would leave the MatMul in place)"}


#: what `labkit.material.l05_rules` says of an answer that rewrites around its rules: the skill skipped
AROUND = ("changed the graph itself", "onnxscript's own code", "onnxscript's shipped rules")


def rewrite_graph(seed: int, k: int):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed * 29 + 5151 + k)
    a, b, c = (int(v) for v in rng.integers(3, 9, 3))
    x_name = ("x", "features", "h")[(seed + k) % 3]
    init = lambda n, arr: numpy_helper.from_array(np.asarray(arr, np.float32), n)  # noqa: E731
    info = helper.make_tensor_value_info
    extra, more_outputs = [], []  # graph inputs after x, outputs after y
    if k == 0:
        nodes = [helper.make_node("MatMul", [x_name, "W1"], ["mm1"]), helper.make_node("Add", ["mm1", "B1"], ["h1"]),
                 helper.make_node("Relu", ["h1"], ["r1"]), helper.make_node("Identity", ["r1"], ["r1_id"]),
                 helper.make_node("MatMul", ["r1_id", "W2"], ["mm2"]), helper.make_node("Add", ["B2", "mm2"], ["y"])]
        inits = [init("W1", rng.normal(0, 1, (a, b))), init("B1", rng.normal(0, 1, b)),
                 init("W2", rng.normal(0, 1, (b, c))), init("B2", rng.normal(0, 1, c))]
        x_shape, y_shape = ["N", a], ["N", c]
    elif k in (1, 2):  # one MatMul+Add that must stay: x 3-D (k=1), w 3-D (k=2)
        nodes = [helper.make_node("MatMul", [x_name, "W"], ["mm"]), helper.make_node("Add", ["mm", "B"], ["y"])]
        inits = [init("W", rng.normal(0, 1, (2, a, b) if k == 2 else (a, b))), init("B", rng.normal(0, 1, b))]
        x_shape, y_shape = {1: (["N", 5, a], ["N", 5, b]), 2: (["N", a], [2, "N", b])}[k]
    elif k == 3:  # x reshaped to a shape given at run time: the MatMul's input has no known rank
        nodes = [helper.make_node("Reshape", [x_name, "target_shape"], ["r"]),
                 helper.make_node("MatMul", ["r", "W"], ["mm"]), helper.make_node("Add", ["mm", "B"], ["sum"]),
                 helper.make_node("Flatten", ["sum"], ["y"])]
        inits = [init("W", rng.normal(0, 1, (a, b))), init("B", rng.normal(0, 1, b))]
        x_shape, y_shape = ["N", a], ["P", "Q"]
        extra = [info("target_shape", TensorProto.INT64, ["R"])]
    elif k == 5:  # MatMul+Add pairs the prompt keeps: see NO_GEMM
        nodes = [helper.make_node("MatMul", ["v", "W"], ["mv"]), helper.make_node("Add", ["mv", "B"], ["y"]),
                 helper.make_node("MatMul", [x_name, "W"], ["m2"]), helper.make_node("Add", ["m2", "residual"], ["y2"]),
                 helper.make_node("MatMul", [x_name, "W2"], ["m3"]), helper.make_node("Add", ["C3", "m3"], ["y3"]),
                 helper.make_node("MatMul", [x_name, "W3"], ["m4"]), helper.make_node("Add", ["m4", "B"], ["y4"]),
                 helper.make_node("Relu", ["m4"], ["y5"])]
        inits = [init(n, rng.normal(0, 1, (a, b))) for n in ("W", "W2", "W3")] + [
            init("B", rng.normal(0, 1, b)), init("C3", rng.normal(0, 1, (2, 1, b)))]
        x_shape, y_shape = ["N", a], [b]
        extra = [info("v", TensorProto.FLOAT, [a]), info("residual", TensorProto.FLOAT, ["N", b])]
        more_outputs = [info("y2", TensorProto.FLOAT, ["N", b]), info("y3", TensorProto.FLOAT, [2, "N", b]),
                        info("y4", TensorProto.FLOAT, ["N", b]), info("y5", TensorProto.FLOAT, ["N", b])]
    else:  # a pair in each branch of an If
        def branch(tag: str, w: str, bias: str, order: int):
            mm, out = f"{tag}_mm", f"{tag}_y"
            add = [mm, bias][::order]
            return helper.make_graph([helper.make_node("MatMul", [x_name, w], [mm]),
                                      helper.make_node("Add", add, [out])],
                                     tag, [], [info(out, TensorProto.FLOAT, ["N", b])])

        nodes = [helper.make_node("If", ["use_first"], ["y"], then_branch=branch("then", "W1", "B1", 1),
                                  else_branch=branch("else", "W2", "B2", -1))]
        inits = [init("W1", rng.normal(0, 1, (a, b))), init("B1", rng.normal(0, 1, b)),
                 init("W2", rng.normal(0, 1, (a, b))), init("B2", rng.normal(0, 1, b))]
        x_shape, y_shape = ["N", a], ["N", b]
        extra = [info("use_first", TensorProto.BOOL, [])]
    graph = helper.make_graph(nodes, f"rewrite_{k}", [info(x_name, TensorProto.FLOAT, x_shape), *extra],
                              [info("y", TensorProto.FLOAT, y_shape), *more_outputs], inits)
    return onnx.shape_inference.infer_shapes(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9))


def _rewrite_feeds(original, seed: int, k: int) -> list[dict]:
    """The inputs each graph runs on: both branches of the If, a 2-D target shape for the reshape."""
    inp = original.graph.input[0]
    dims = [d.dim_value or 3 for d in inp.type.tensor_type.shape.dim]
    x = np.random.default_rng(seed + 5252 + k).normal(size=dims).astype(np.float32)
    if k == 3:
        return [{inp.name: x, "target_shape": np.array([-1, dims[1]], np.int64)}]
    if k == 4:
        return [{inp.name: x, "use_first": np.array(flag)} for flag in (True, False)]
    if k == 5:
        rng = np.random.default_rng(seed + 5353)
        width = next(t.dims[1] for t in original.graph.initializer if t.name == "W")
        residual = rng.normal(size=(dims[0], width)).astype(np.float32)
        return [{inp.name: x, "v": x[0].copy(), "residual": residual}]
    return [{inp.name: x}]


@functools.lru_cache(maxsize=32)
def _rewrite_reference(seed: int, k: int) -> tuple:
    """Graph k's feeds and the original graph's outputs on them (computed once per seed and graph)."""
    original = rewrite_graph(seed, k)
    sess = _session(original)
    return tuple((feeds, sess.run(None, feeds)) for feeds in _rewrite_feeds(original, seed, k))


def _no_gemm_note(model) -> str:
    """Which of graph 5's pairs became a Gemm although the prompt keeps them."""
    wrong = [why for n in model.graph.node if n.op_type == "Gemm"
             for name, why in NO_GEMM.items() if name in n.input]
    return f" — a Gemm took {'; '.join(dict.fromkeys(wrong))}" if wrong else ""


def _op_counts(graph) -> dict:
    """Operator counts of `graph` and of every subgraph in its nodes' attributes."""
    from collections import Counter

    counts = Counter()
    for node in graph.node:
        counts[node.op_type] += 1
        for attr in node.attribute:
            for sub in [attr.g] if attr.HasField("g") else list(attr.graphs):
                counts.update(_op_counts(sub))
    return dict(counts)


def _rewrite_cases(seed: int) -> list[tuple]:
    return [(rewrite_graph(seed, k),) for k in range(len(REWRITE_GRAPHS))]


@exercise('05.rewrite_rule', title='A rewrite rule with onnxscript: MatMul + Add -> Gemm', points=3, kind='function',
          hint=[
              'A rewrite rule has a pattern to find (MatMul then Add), a replacement (Gemm) and a condition: Gemm takes 2-D inputs only, so the rule must refuse other ranks; Add is commutative.',
              'onnxscript.rewriter.pattern: RewriteRule(target, replacement, condition), and RewriteRuleSet([...], commute=True) for both orders of Add; return the rule set (the check calls rewrite(model, pattern_rewrite_rules=...) with it).',
          ],
          cases=_rewrite_cases, tests=REWRITE_TESTS, skill=REWRITE_TESTS, bonus=True,
          call="labkit.material.l05_rules:apply_rules")
def _rewrite_rule(outputs, seed):
    from labkit.checks import DidNotDo

    around = next((o.message for o in outputs if isinstance(o, Raised) and any(m in o.message for m in AROUND)), "")
    if around:
        yield DidNotDo(around.split("RuleError: ")[-1].rstrip(")"))
    ops_of = {}
    for k, (label, got) in enumerate(zip(REWRITE_GRAPHS, outputs)):
        names = [f"{label}: node counts", f"{label}: same outputs"]
        model, why = load_onnx(got)
        if model is None:
            for name in names:
                yield TestResult(name, False, why if "your function" in why else
                                 f"the rules did not give a model: {why}")
            continue
        ops = ops_of[k] = _op_counts(model.graph)
        want = REWRITE_EXPECTED[k]
        if k == 4 and not any(o.get("Gemm") for o in ops_of.values()):
            yield DidNotDo("no MatMul+Add pair became a Gemm in any graph: the rules rewrote nothing")
        yield TestResult(names[0], ops == want, f"{ops}" if ops == want else
                         f"expected the operators {want}, got {ops}"
                         + ({1: " — Gemm takes 2-D inputs only: the condition must refuse a 3-D MatMul",
                             2: " — Gemm takes a 2-D weight only: the condition must check w's rank too",
                             3: " — the MatMul's input has no known rank here (x.shape is None): refuse it"}
                            .get(k, "") if "Gemm" in ops else "")
                         + (" — Add(bias, MatMul(...)) is the same pattern with the inputs swapped, and stayed"
                            if k == 0 and ops.get("Gemm") == 1 else "")
                         + (" — only MatMul+Add pairs change: a rule that removes the Identity is a graph "
                            "optimizer's, not this one" if k == 0 and "Identity" not in ops else "")
                         + (" — the pairs inside the If's branches are MatMul+Add pairs too" if k == 4 and
                            ops.get("MatMul") else "")
                         + (_no_gemm_note(model) if k == 5 else ""))
        reference = _rewrite_reference(seed, k)
        if len(model.graph.output) != len(reference[0][1]):
            yield TestResult(names[1], False, f"the graph has {len(model.graph.output)} outputs, expected "
                                              f"{len(reference[0][1])}: a rewrite keeps the graph's outputs")
            continue
        try:
            got_sess = _session(model)
            pairs = [(got, want) for feeds, wants in reference for got, want in zip(got_sess.run(None, feeds), wants)]
        except Exception as e:
            yield TestResult(names[1], False, f"ONNX Runtime (optimizations disabled) cannot run the result: "
                                              f"{error_line(e)}")
            continue
        results = [expect_close(names[1], out, want_out, rtol=1e-4, atol=1e-4) for out, want_out in pairs]
        yield next((r for r in results if not r.passed), results[-1])


def warm(seed: int) -> None:
    """Run once by the verdict process before it forks a child per answer (`grading.judge.serve`): the
    reference outputs of 05.rewrite_rule's graphs at this seed."""
    for k in range(len(REWRITE_GRAPHS)):
        _rewrite_reference(seed, k)
