"""Lesson 02: answers learners write for counting parameters, finding a bad initializer, repairing a conversion."""
import re

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper, version_converter

from corpus import Right, Wrong
from labkit.material.l02 import model_to_repair

FLOATS = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}


def _count(model, *, floats_only=True, cos=True, cos_runtime=False, inputs=False, cos_int=False):
    inits = {t.name: t for t in model.graph.initializer}
    total = sum(int(np.prod(t.dims)) for t in inits.values() if t.data_type in FLOATS or not floats_only)
    for n in model.graph.node:
        if not cos or n.op_type != "ConstantOfShape":
            continue
        if n.input and n.input[0] in inits:
            value = next((a.t for a in n.attribute if a.name == "value"), None)
            if value is None or value.data_type in FLOATS or cos_int:
                total += int(np.prod(numpy_helper.to_array(inits[n.input[0]])))
        elif cos_runtime:
            total += 1
    if inputs:
        total += sum(int(np.prod([d.dim_value for d in i.type.tensor_type.shape.dim])) for i in model.graph.input
                     if i.name in inits)
    return total


def _count_by_dtype_name_bf16(model):
    """dtype.kind "f", or bfloat16 (ml_dtypes gives it kind "V"): the prompt's four float types."""
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    floaty = lambda a: a.dtype.kind == "f" or a.dtype.name == "bfloat16"  # noqa: E731
    total = sum(a.size for a in inits.values() if floaty(a))
    for n in model.graph.node:
        if n.op_type == "ConstantOfShape" and n.input and n.input[0] in inits:
            attrs = {a.name: numpy_helper.to_array(a.t) for a in n.attribute}
            if floaty(attrs.get("value", np.zeros(1, np.float32))):
                total += int(np.prod(inits[n.input[0]]))
    return int(total)


def _count_by_dtype_name(model):
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    total = sum(a.size for a in inits.values() if a.dtype.kind == "f")
    for n in model.graph.node:
        if n.op_type == "ConstantOfShape" and n.input and n.input[0] in inits:
            attrs = {a.name: numpy_helper.to_array(a.t) for a in n.attribute}
            if attrs.get("value", np.zeros(1, np.float32)).dtype.kind == "f":
                total += int(np.prod(inits[n.input[0]]))
    return int(total)


CORPUS_COUNT = [
    # bfloat16 arrays have dtype.kind "V" (ml_dtypes), so this misses the bfloat16 weights the prompt counts: wrong,
    # seen once the judge's models held one (issue 32, blind2-count-no-bfloat16)
    Wrong("numpy arrays and dtype.kind (bfloat16 missed)", answer=_count_by_dtype_name),
    Right("numpy arrays, dtype.kind or bfloat16", answer=_count_by_dtype_name_bf16),
    Right("helper flags, float(np.prod) cast back to int", answer=lambda m: int(float(_count(m)))),
    Wrong("the lesson model's count hard-coded", answer=lambda m: 124, skipped_skill=True),
    Wrong("every initializer, integers too", answer=lambda m: _count(m, floats_only=False)),
    Wrong("initializers only, no ConstantOfShape", answer=lambda m: _count(m, cos=False)),
    Wrong("graph inputs counted again", answer=lambda m: _count(m, inputs=True)),
    Wrong("run-time ConstantOfShape counted", answer=lambda m: _count(m, cos_runtime=True)),
    Wrong("number of initializers, not elements", answer=lambda m: len(m.graph.initializer)),
    Wrong("bytes instead of elements", answer=lambda m: sum(t.ByteSize() for t in m.graph.initializer)),
    Wrong("returns a float", answer=lambda m: _count(m) + 0.5),
]


# ---------------------------------------------------------------- 02.bad_initializer

def _failing_node(model):
    try:
        onnx.shape_inference.infer_shapes(model, strict_mode=True)
        return None
    except Exception as e:
        return re.search(r"node name: ([^)]*)\)", str(e)).group(1)


def _by_message(model):
    name = _failing_node(model)
    if name is None:
        return None
    inits = {t.name for t in model.graph.initializer}
    node = next(n for n in model.graph.node if n.name == name)
    return next(i for i in node.input if i in inits)


def _by_walking_shapes(model):
    """No shape inference: follow the feature width through the graph by hand."""
    inits = {t.name: list(t.dims) for t in model.graph.initializer}
    width = {model.graph.input[0].name: model.graph.input[0].type.tensor_type.shape.dim[1].dim_value}
    for n in model.graph.node:
        if n.op_type == "MatMul":
            w = inits[n.input[1]]
            if w[0] != width[n.input[0]]:
                return n.input[1]
            width[n.output[0]] = w[1]
        elif n.op_type == "Add":  # the bias may come first or second
            bias, act = (n.input[0], n.input[1]) if n.input[0] in inits else (n.input[1], n.input[0])
            if inits[bias] != [width[act]]:
                return bias
            width[n.output[0]] = width[act]
        else:
            width[n.output[0]] = width[n.input[0]]
    return None


def _largest(model):
    return max(model.graph.initializer, key=lambda t: int(np.prod(t.dims))).name


CORPUS_BAD = [
    Right("error message -> node -> its initializer", answer=_by_message),
    Right("walks the widths by hand", answer=_by_walking_shapes),
    Wrong("the failing node's name", answer=_failing_node),
    Wrong("the first initializer in the file", answer=lambda m: m.graph.initializer[0].name),
    Wrong("the largest initializer", answer=_largest),
    Wrong("the whole error message", answer=lambda m: (lambda n: None if n is None else f"node name: {n}")(_failing_node(m))),
    Wrong("every input of the failing node", answer=lambda m: None if _failing_node(m) is None else
          list(next(n for n in m.graph.node if n.name == _failing_node(m)).input)),
    Wrong("the first input of the failing node (an activation)", answer=lambda m: None if _failing_node(m) is None else
          next(n for n in m.graph.node if n.name == _failing_node(m)).input[0]),
    Wrong("never None: the first initializer when inference passes",
          answer=lambda m: _by_message(m) or m.graph.initializer[0].name, outputs_wrong=True),
    Wrong("non-strict inference (never raises)",
          answer=lambda m: (onnx.shape_inference.infer_shapes(m), None)[1], skipped_skill=True),
]


# ---------------------------------------------------------------- 02.repair_conversion

def _restored(opset):
    m = model_to_repair()
    m.opset_import[0].version = opset
    return m


def _by_hand():
    """Move each axes/split attribute to an int64 initializer input, as opsets 13 and 18 define."""
    m = model_to_repair()
    new_inits = []
    for n in m.graph.node:
        moved = {"ReduceMean": "axes", "ReduceSum": "axes", "Squeeze": "axes", "Unsqueeze": "axes", "Split": "split"}
        key = moved.get(n.op_type)
        if key is None:
            continue
        attr = next(a for a in n.attribute if a.name == key)
        values = list(attr.ints)
        n.attribute.remove(attr)
        name = f"{n.name}_{key}"
        new_inits.append(numpy_helper.from_array(np.array(values, np.int64), name))
        n.input.append(name)
    m.graph.initializer.extend(new_inits)
    return m


def _drop_axes():
    m = model_to_repair()
    for n in m.graph.node:
        for a in [a for a in n.attribute if a.name in ("axes", "split")]:
            n.attribute.remove(a)
    return m


CORPUS_REPAIR = [
    Right("restore opset 11, convert to 21", answer=version_converter.convert_version(_restored(11), 21)),
    Right("restore opset 12, convert via 13 then 21",
          answer=version_converter.convert_version(version_converter.convert_version(_restored(12), 13), 21)),
    Right("attributes moved to inputs by hand", answer=_by_hand()),
    Wrong("the broken model as it is", answer=model_to_repair(), skipped_skill=True),
    Wrong("axes and split attributes deleted", answer=_drop_axes()),
    Wrong("restored to 11 but never converted", answer=_restored(11), skipped_skill=True),
    Wrong("converted to 18 instead of 21", answer=version_converter.convert_version(_restored(11), 18), outputs_wrong=False),
    Wrong("converted to 13 only", answer=version_converter.convert_version(_restored(11), 13), outputs_wrong=False),
    Wrong("opset number set back to 11, then set to 21 again by hand",
          answer=(lambda m: (m.opset_import[0].__setattr__("version", 21), m)[1])(_restored(11)), skipped_skill=True),
    Wrong("a different model: the lesson's small CNN converted",
          answer=version_converter.convert_version(__import__("labkit.material.l02", fromlist=["small_cnn"]).small_cnn(), 21)),
]

CORPUS = {
    "02.count_params": CORPUS_COUNT,
    "02.bad_initializer": CORPUS_BAD,
    "02.repair_conversion": CORPUS_REPAIR,
}


# Second-round blind entries (issue 32), measured by this corpus's rule before and after the fixes: tests/corpus/blind2_l02.py.
# Left out of the fast tier: the 12 of 46 measured above 0.15 s an evaluation (they scored by the rule when measured).
from corpus import add_blind, blind2_l02  # noqa: E402

add_blind(CORPUS, blind2_l02, slow={
    'blind2-count-all-initializers', 'blind2-count-bytes', 'blind2-count-computed-cos-as-one',
    'blind2-count-cos-rank', 'blind2-count-float32-only', 'blind2-count-math-prod-loop',
    'blind2-count-no-constantofshape', 'blind2-count-plus-graph-inputs', 'blind2-count-tensors-not-elements',
    'blind2-repair-relabel11-convert', 'blind2-repair-relabel12-convert', 'blind2-repair-saved-path'
})

# Blind round 3 (tests/corpus/blind3_lNN.py): measured first, then added; slow ones scored by hand.
from corpus import add_blind, blind3_l02  # noqa: E402

add_blind(CORPUS, blind3_l02)

# Blind round 12 (tests/corpus/blind12_l02.py): measured first — 1 full mark (a torch re-export, right by the prompt:
# "the same computation, valid at opset 21") and 4 over-credits; a constant model is now named (a quarter at most).
from corpus import add_blind, blind12_l02  # noqa: E402

add_blind(CORPUS, blind12_l02, slow={"blind12-repair-torch-reexport"}, reclassify={
    "blind12-count-raw-bytes": ("attempt", "counts stored numbers, misses ConstantOfShape: a wrong count"),
    "blind12-count-resnet-constant": ("attempt", "counts float initializers, a constant for big models: wrong"),
    "blind12-count-ort-constant-folding": ("attempt", "counts after ONNX Runtime's folding: a wrong count"),
})
