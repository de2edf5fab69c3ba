"""Blind entries, copied from /work/blind2/l07.py (issue 32): written by a helper who never read the judges or this corpus
(their README: /work/blind2/README.md). tests/corpus/l07.py adds them to its CORPUS.

Blind corpus, lesson 07 (held-out round, written without seeing the judges).
"""
import copy

import onnx
from onnx import shape_inference

from corpus import Right, Wrong


def _tools():
    from onnxruntime.tools.onnx_model_utils import fix_output_shapes, make_dim_param_fixed, make_input_shape_fixed
    return fix_output_shapes, make_dim_param_fixed, make_input_shape_fixed


# ---------------------------------------------------------------- rights

def _fix_always_input_shape(model):
    """make_input_shape_fixed for both cases: it fixes a named dimension through the whole graph itself."""
    fix_output_shapes, _, make_input_shape_fixed = _tools()
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inp = m.graph.input[0]
    shape = [1] + [d.dim_value for d in inp.type.tensor_type.shape.dim[1:]]
    make_input_shape_fixed(m.graph, inp.name, shape)
    fix_output_shapes(m)
    return m


def _fix_by_hand(model):
    """No ORT tools: replace the name everywhere it appears, then let onnx shape inference fix the outputs."""
    m = copy.deepcopy(model)
    first = m.graph.input[0].type.tensor_type.shape.dim[0]
    name = first.dim_param if first.HasField("dim_param") else None
    first.Clear()
    first.dim_value = 1
    if name:
        for vi in [*m.graph.input, *m.graph.output, *m.graph.value_info]:
            for d in vi.type.tensor_type.shape.dim:
                if d.HasField("dim_param") and d.dim_param == name:
                    d.Clear()
                    d.dim_value = 1
    inferred = shape_inference.infer_shapes(m)
    for out, new in zip(m.graph.output, inferred.graph.output):
        dims = new.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            out.type.tensor_type.shape.CopyFrom(new.type.tensor_type.shape)
    return m


def _fix_reference_like_from_bytes(model):
    fix_output_shapes, make_dim_param_fixed, make_input_shape_fixed = _tools()
    m = onnx.load_from_string(model.SerializeToString())
    g = m.graph
    inp = g.input[0]
    d0 = inp.type.tensor_type.shape.dim[0]
    if d0.dim_param:
        make_dim_param_fixed(g, d0.dim_param, 1)
    elif not d0.HasField("dim_value"):
        make_input_shape_fixed(g, inp.name, [1, 1, 8, 8])
    fix_output_shapes(m)
    return m


# ---------------------------------------------------------------- wrongs

def _reference_steps(m):
    fix_output_shapes, make_dim_param_fixed, make_input_shape_fixed = _tools()
    d0 = m.graph.input[0].type.tensor_type.shape.dim[0]
    if d0.dim_param:
        make_dim_param_fixed(m.graph, d0.dim_param, 1)
    else:
        make_input_shape_fixed(m.graph, m.graph.input[0].name, [1, 1, 8, 8])
    fix_output_shapes(m)
    return m


def _w_in_place(model):
    return _reference_steps(model)                       # changes the caller's model


def _w_batch_name_only(model):
    fix_output_shapes, make_dim_param_fixed, _ = _tools()
    m = copy.deepcopy(model)
    make_dim_param_fixed(m.graph, "batch", 1)
    fix_output_shapes(m)
    return m


def _w_no_output_fix(model):
    _, make_dim_param_fixed, make_input_shape_fixed = _tools()
    m = copy.deepcopy(model)
    d0 = m.graph.input[0].type.tensor_type.shape.dim[0]
    if d0.dim_param:
        make_dim_param_fixed(m.graph, d0.dim_param, 1)
    else:
        make_input_shape_fixed(m.graph, m.graph.input[0].name, [1, 1, 8, 8])
    return m


def _w_named_only(model):
    fix_output_shapes, make_dim_param_fixed, _ = _tools()
    m = copy.deepcopy(model)
    make_dim_param_fixed(m.graph, m.graph.input[0].type.tensor_type.shape.dim[0].dim_param, 1)   # "" if unnamed
    fix_output_shapes(m)
    return m


def _w_input_only(model):
    m = copy.deepcopy(model)
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1     # outputs keep their symbolic batch
    return m


def _w_batch_8(model):
    fix_output_shapes, make_dim_param_fixed, make_input_shape_fixed = _tools()
    m = copy.deepcopy(model)
    d0 = m.graph.input[0].type.tensor_type.shape.dim[0]
    if d0.dim_param:
        make_dim_param_fixed(m.graph, d0.dim_param, 8)
    else:
        make_input_shape_fixed(m.graph, m.graph.input[0].name, [8, 1, 8, 8])
    fix_output_shapes(m)
    return m


def _w_returns_none(model):
    m = copy.deepcopy(model)
    _reference_steps(m)


def _w_input_name_guess(model):
    fix_output_shapes, _, make_input_shape_fixed = _tools()
    m = copy.deepcopy(model)
    make_input_shape_fixed(m.graph, "input", [1, 1, 8, 8])
    fix_output_shapes(m)
    return m


def _w_outputs_by_hand(model):
    m = copy.deepcopy(model)
    for o in m.graph.output:                              # outputs written as fixed, input left symbolic
        d = o.type.tensor_type.shape.dim[0]
        d.Clear()
        d.dim_value = 1
    return m


def _w_unchanged_copy(model):
    return copy.deepcopy(model)


def _w_bytes(model):
    return _reference_steps(copy.deepcopy(model)).SerializeToString()


def _w_fixes_all_dims(model):
    fix_output_shapes, make_dim_param_fixed, make_input_shape_fixed = _tools()
    m = copy.deepcopy(model)
    inp = m.graph.input[0]
    make_input_shape_fixed(m.graph, inp.name, [1, 1, 1, 1]) if not inp.type.tensor_type.shape.dim[0].dim_param \
        else None
    for d in inp.type.tensor_type.shape.dim:
        d.Clear()
        d.dim_value = 1                                     # every dimension set to 1: [1, 1, 1, 1]
    fix_output_shapes(m)
    return m


CORPUS = {
    "07.fix_batch": [
        Right("blind2-fixb-input-shape-fixed-always", answer=_fix_always_input_shape),
        Right("blind2-fixb-by-hand-inference", answer=_fix_by_hand),
        Right("blind2-fixb-bytes-roundtrip-copy", answer=_fix_reference_like_from_bytes),
        Wrong("blind2-fixb-mutates-caller", answer=_w_in_place, outputs_wrong=False),
        Wrong("blind2-fixb-batch-name-only", answer=_w_batch_name_only),
        Wrong("blind2-fixb-no-output-fix", answer=_w_no_output_fix),
        Wrong("blind2-fixb-named-only", answer=_w_named_only),
        Wrong("blind2-fixb-input-dim-only", answer=_w_input_only),
        Wrong("blind2-fixb-batch-8", answer=_w_batch_8),
        Wrong("blind2-fixb-returns-none", answer=_w_returns_none),
        Wrong("blind2-fixb-input-name-guess", answer=_w_input_name_guess),
        Wrong("blind2-fixb-outputs-by-hand", answer=_w_outputs_by_hand),
        Wrong("blind2-fixb-unchanged-copy", answer=_w_unchanged_copy, skipped_skill=True),
        Wrong("blind2-fixb-bytes", answer=_w_bytes, outputs_wrong=False),
        Wrong("blind2-fixb-all-dims-1", answer=_w_fixes_all_dims),
    ],
}
