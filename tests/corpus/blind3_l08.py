"""Blind corpus round 3, lesson 08 (written without seeing the judges).

Classes changed by the lead after reading the prompt: blind3-thr-float-out (Right: the prompt's numbers are
JavaScript's, one type: 2.0 is the thread count 2); blind3-web-modelproto (Right: every onnx answer may be the
path or the ModelProto (labkit.checks.collect)).
"""
import atexit as _atexit, shutil as _shutil, tempfile as _tempfile  # noqa: E401
_BLIND3_CACHE = __import__("pathlib").Path(_tempfile.mkdtemp(prefix="blind3-cache-"))  # per process: no race
_atexit.register(_shutil.rmtree, _BLIND3_CACHE, True)
import math
import shutil
from pathlib import Path

import numpy as np

from corpus import Right, Wrong

CACHE = _BLIND3_CACHE / "l08"  # digits_fp32.onnx + digits_fp32_ext.onnx(.data), exported once by mkcache.py


# ---------------------------------------------------------------- 08.threads
def _thr_transliterated(requested, cross_origin_isolated, cores):
    # the two JS blocks, one after the other
    n = requested
    if type(n) not in (int, float) or not float(n).is_integer() or n <= 0:
        if not cross_origin_isolated:
            n = 1
        else:
            n = min(4, math.ceil((cores or 1) / 2))
    n = int(n)
    if n > 1 and not cross_origin_isolated:
        n = 1
    return n


def _thr_early_exit(requested, cross_origin_isolated, cores):
    if not cross_origin_isolated:  # both blocks end at 1 without isolation
        return 1
    is_num = isinstance(requested, (int, float)) and not isinstance(requested, bool)
    if is_num and math.isfinite(requested) and requested > 0 and requested == int(requested):
        return int(requested)
    logical = cores if cores else 1
    return min(4, (logical + 1) // 2)


def _thr_fractions(requested, cross_origin_isolated, cores):
    from fractions import Fraction
    ok = requested.__class__ in (int, float) and requested == requested and abs(requested) != float("inf")
    if ok and Fraction(requested).denominator == 1 and requested >= 1:
        wanted = int(Fraction(requested))
    else:
        wanted = None
    if not cross_origin_isolated:
        return 1
    if wanted is None:
        c = 1 if cores in (None, 0) else cores
        wanted = min(4, -(-c // 2))
    return wanted


def _thr_isinstance_bool(requested, coi, cores):  # True passes as the int 1
    if not isinstance(requested, (int, float)) or requested <= 0 or not float(requested).is_integer():
        return 1 if not coi else min(4, math.ceil((cores or 1) / 2))
    return int(requested) if coi else 1


def _thr_no_fallback(requested, coi, cores):  # forgets the second block: no SharedArrayBuffer -> 1
    if type(requested) not in (int, float) or not float(requested).is_integer() or requested <= 0:
        return 1 if not coi else min(4, math.ceil((cores or 1) / 2))
    return int(requested)


def _thr_floor(requested, coi, cores):  # floor instead of ceil
    if not coi:
        return 1
    if type(requested) in (int, float) and float(requested).is_integer() and requested > 0:
        return int(requested)
    return min(4, max(1, (cores or 1) // 2))


def _thr_no_cap(requested, coi, cores):  # forgets Math.min(4, ...)
    if not coi:
        return 1
    if type(requested) in (int, float) and float(requested).is_integer() and requested > 0:
        return int(requested)
    return math.ceil((cores or 1) / 2)


def _thr_cores_none_zero(requested, coi, cores):  # None cores -> 0 (not `|| 1`): ceil(0/2) = 0 threads
    if not coi:
        return 1
    if type(requested) in (int, float) and float(requested).is_integer() and requested > 0:
        return int(requested)
    return min(4, math.ceil((cores or 0) / 2))


def _thr_int_only(requested, coi, cores):  # 3.0 is not an int in Python, but it is in JS
    if not coi:
        return 1
    if type(requested) is int and requested > 0:
        return requested
    return min(4, math.ceil((cores or 1) / 2))


def _thr_truncate(requested, coi, cores):  # 2.5 -> 2 instead of the default
    if not coi:
        return 1
    if type(requested) in (int, float) and requested >= 1:
        return int(requested)
    return min(4, math.ceil((cores or 1) / 2))


def _thr_truthy(requested, coi, cores):  # `requested or default`: -1, 0.5, True pass through
    if not coi:
        return 1
    return int(requested or min(4, math.ceil((cores or 1) / 2)))


def _thr_float_out(requested, coi, cores):  # right numbers, but 3.0 / 2.0 floats come back
    if not coi:
        return 1.0
    if type(requested) in (int, float) and float(requested).is_integer() and requested > 0:
        return float(requested)
    return float(min(4, math.ceil((cores or 1) / 2)))


def _thr_cores_guess(requested, coi, cores):  # "no report: assume a 4-core laptop"
    if not coi:
        return 1
    if type(requested) in (int, float) and float(requested).is_integer() and requested > 0:
        return int(requested)
    return min(4, math.ceil((cores or 4) / 2))


def _thr_constant(requested, coi, cores):  # "it is 1 without isolation, 2 otherwise" (what the lesson's page showed)
    return 2 if coi else 1


def _thr_all_cores(requested, coi, cores):  # default = all cores, capped at 4
    if not coi:
        return 1
    if type(requested) in (int, float) and float(requested).is_integer() and requested > 0:
        return int(requested)
    return min(4, cores or 1)


def _thr_nan_crash(requested, coi, cores):  # int(nan) / int(inf) raises
    if not coi:
        return 1
    if type(requested) in (int, float) and requested > 0 and requested == int(requested):
        return int(requested)
    return min(4, math.ceil((cores or 1) / 2))


# ---------------------------------------------------------------- 08.rgba_alpha
def _alpha_rows(rgba, width, height):
    flat = list(rgba)
    return [[int(flat[4 * (r * width + c) + 3]) for c in range(width)] for r in range(height)]


def _alpha_fromiter(rgba, width, height):
    a = np.fromiter(iter(rgba), dtype=np.int64, count=4 * width * height)
    return a.reshape(height, width * 4)[:, 3::4].astype(np.uint16)


def _alpha_moveaxis(rgba, width, height):
    a = np.array(list(rgba), dtype=np.int32).reshape(height, width, 4)
    return np.ascontiguousarray(np.moveaxis(a, -1, 0)[-1])


def _alpha_wh(rgba, width, height):  # (width, height) swapped
    return np.asarray(list(rgba), dtype=np.uint8).reshape(width, height, 4)[..., 3]


def _alpha_transposed(rgba, width, height):  # column-major reading, right shape
    return np.asarray(list(rgba), dtype=np.uint8)[3::4].reshape(width, height).T


def _alpha_red(rgba, width, height):  # first byte of each pixel
    return np.asarray(list(rgba), dtype=np.uint8).reshape(height, width, 4)[..., 0]


def _alpha_flat(rgba, width, height):  # right bytes, in order, never reshaped
    return np.asarray(list(rgba), dtype=np.uint8)[3::4]


def _alpha_int8(rgba, width, height):  # bytes >= 128 wrap to negatives
    return np.asarray(list(rgba), dtype=np.uint8).reshape(height, width, 4)[..., 3].astype(np.int8)


def _alpha_scaled(rgba, width, height):  # 0..1 instead of the bytes
    return np.asarray(list(rgba), dtype=np.uint8).reshape(height, width, 4)[..., 3] / 255.0


def _alpha_float_bytes(rgba, width, height):  # values 0..255 but float64 (prompt: any integer dtype)
    return np.asarray(list(rgba), dtype=np.float64).reshape(height, width, 4)[..., 3]


def _alpha_binary(rgba, width, height):  # ink yes/no
    return (np.asarray(list(rgba), dtype=np.uint8).reshape(height, width, 4)[..., 3] > 0).astype(np.uint8) * 255


def _alpha_square(rgba, width, height):  # assumes a square canvas
    n = int(round(math.sqrt(len(rgba) // 4)))
    return np.asarray(list(rgba), dtype=np.uint8)[3::4].reshape(n, n)


def _alpha_offby(rgba, width, height):  # rgba[4*i + 4]: the next pixel's red, last one padded
    a = list(rgba) + [0]
    return np.array([a[4 * i + 4] for i in range(width * height)], dtype=np.uint8).reshape(height, width)


def _alpha_grey(rgba, width, height):  # "the ink" as luminance of RGB
    a = np.asarray(list(rgba), dtype=np.float64).reshape(height, width, 4)
    return (255 - a[..., :3].mean(-1)).astype(np.uint8)


def _alpha_inplace(rgba, width, height):  # reshapes the caller's array in place
    a = np.asarray(rgba)
    a.shape = (height, width, 4)
    return a[..., 3]


# ---------------------------------------------------------------- 08.web_model
NOTES = ("doc_string", "metadata_props")


def _ensure_cache():
    """Export the course CNN once (as lesson 08 does) when the cache is missing; later calls just copy."""
    if (CACHE / "digits_fp32_ext.onnx.data").exists():
        return
    import onnx
    from labkit import android
    from labkit.models import trained_cnn
    CACHE.mkdir(parents=True, exist_ok=True)
    fp32 = android.export_baked(trained_cnn(), CACHE / "digits_fp32.onnx")
    ext = CACHE / "digits_fp32_ext.onnx"
    onnx.save(onnx.load(fp32), ext, save_as_external_data=True, all_tensors_to_one_file=True,
              location=ext.name + ".data", size_threshold=0)


def _stage(tmp):
    _ensure_cache()
    art = Path(tmp) / "artifacts"
    (art / "web").mkdir(parents=True, exist_ok=True)
    for name in ("digits_fp32_ext.onnx", "digits_fp32_ext.onnx.data", "digits_fp32.onnx"):
        if not (art / name).exists():
            shutil.copy(CACHE / name, art / name)
    return art


def _strip_everything(msg):
    """Every doc_string / metadata_props field of every message in the tree."""
    for f in NOTES:
        if f in msg.DESCRIPTOR.fields_by_name:
            msg.ClearField(f)
    for fd, value in msg.ListFields():
        if fd.message_type is None:
            continue
        if not hasattr(value, "DESCRIPTOR"):  # a repeated field
            for sub in value:
                _strip_everything(sub)
        else:
            _strip_everything(value)


def _web_recursive(tmp):
    import onnx
    art = _stage(tmp)
    m = onnx.load(str(art / "digits_fp32_ext.onnx"))
    _strip_everything(m)
    out = art / "web" / "digits_fp32.onnx"
    onnx.save(m, str(out))
    return str(out)


def _web_bytes_path(tmp):
    # load_external_data=False then load the weights explicitly; write the bytes by hand; Path answer
    import onnx
    from onnx.external_data_helper import load_external_data_for_model
    art = _stage(tmp)
    m = onnx.load_model(art / "digits_fp32_ext.onnx", load_external_data=False)
    load_external_data_for_model(m, str(art))
    for holder in [m, m.graph, *m.graph.node, *m.graph.input, *m.graph.output, *m.graph.value_info]:
        del holder.metadata_props[:]
        holder.doc_string = ""
    out = art / "web" / "digits_fp32.onnx"
    out.write_bytes(m.SerializeToString())
    return out


def _web_exactly_prompt(tmp):
    # exactly what the prompt lists: the model, the graph, each node (value infos keep their notes)
    import onnx
    art = _stage(tmp)
    m = onnx.load(art / "digits_fp32_ext.onnx")
    for part in (m, m.graph, *m.graph.node):
        part.ClearField("doc_string")
        part.ClearField("metadata_props")
    out = art / "web" / "digits_fp32.onnx"
    onnx.save_model(m, out, save_as_external_data=False)
    return out


def _web_rebuilt(tmp):
    # a fresh ModelProto from the pieces, notes not copied
    import onnx
    from onnx import helper
    art = _stage(tmp)
    src = onnx.load(art / "digits_fp32_ext.onnx")
    nodes = []
    for n in src.graph.node:
        k = onnx.NodeProto()
        k.op_type, k.domain, k.name = n.op_type, n.domain, n.name
        k.input.extend(n.input)
        k.output.extend(n.output)
        k.attribute.extend(n.attribute)
        nodes.append(k)
    def vi(v):
        c = onnx.ValueInfoProto()
        c.name = v.name
        c.type.CopyFrom(v.type)
        return c
    g = helper.make_graph(nodes, src.graph.name, [vi(v) for v in src.graph.input],
                          [vi(v) for v in src.graph.output], list(src.graph.initializer))
    m = helper.make_model(g, opset_imports=list(src.opset_import), ir_version=src.ir_version)
    out = art / "web" / "digits_fp32.onnx"
    onnx.save(m, out)
    return str(out)


def _web_copy_ext(tmp):  # the graph file of the pair, copied: weights still outside (and .data not next to it)
    art = _stage(tmp)
    out = art / "web" / "digits_fp32.onnx"
    shutil.copy(art / "digits_fp32_ext.onnx", out)
    return str(out)


def _web_no_external_load(tmp):  # load_external_data=False, notes stripped, saved: points to a .data not there
    import onnx
    art = _stage(tmp)
    m = onnx.load(art / "digits_fp32_ext.onnx", load_external_data=False)
    _strip_everything(m)
    out = art / "web" / "digits_fp32.onnx"
    onnx.save(m, out)
    return str(out)


def _web_notes_kept(tmp):  # one file, but every note still there
    import onnx
    art = _stage(tmp)
    out = art / "web" / "digits_fp32.onnx"
    onnx.save(onnx.load(art / "digits_fp32_ext.onnx"), out)
    return str(out)


def _web_nodes_only(tmp):  # the nodes' notes gone, the graph's (ExportedProgram signature) left
    import onnx
    art = _stage(tmp)
    m = onnx.load(art / "digits_fp32_ext.onnx")
    for n in m.graph.node:
        n.ClearField("metadata_props")
        n.ClearField("doc_string")
    out = art / "web" / "digits_fp32.onnx"
    onnx.save(m, out)
    return str(out)


def _web_copies_cleared(tmp):  # clears copies of the nodes, not the nodes themselves
    import onnx
    art = _stage(tmp)
    m = onnx.load(art / "digits_fp32_ext.onnx")
    for holder in (m, m.graph):
        holder.ClearField("metadata_props")
        holder.ClearField("doc_string")
    for n in m.graph.node:
        c = onnx.NodeProto()
        c.CopyFrom(n)
        c.ClearField("metadata_props")
    out = art / "web" / "digits_fp32.onnx"
    onnx.save(m, out)
    return str(out)


def _web_own_doc(tmp):  # stripped, then signs the model with its own doc string
    import onnx
    art = _stage(tmp)
    m = onnx.load(art / "digits_fp32_ext.onnx")
    _strip_everything(m)
    m.doc_string = "digits CNN, web version"
    out = art / "web" / "digits_fp32.onnx"
    onnx.save(m, out)
    return str(out)


def _web_two_files(tmp):  # stripped, but saved again with external data next to it
    import onnx
    art = _stage(tmp)
    m = onnx.load(art / "digits_fp32_ext.onnx")
    _strip_everything(m)
    out = art / "web" / "digits_fp32.onnx"
    onnx.save(m, out, save_as_external_data=True, all_tensors_to_one_file=True, location="digits_fp32.onnx.data",
              size_threshold=0)
    return str(out)


def _web_fp16(tmp):  # "smaller for the web": weights cast to float16 (with Casts back), values drift
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    art = _stage(tmp)
    m = onnx.load(art / "digits_fp32_ext.onnx")
    _strip_everything(m)
    inits = []
    casts = []
    for t in m.graph.initializer:
        a = numpy_helper.to_array(t)
        if a.dtype == np.float32 and a.ndim >= 1 and a.size > 16:
            inits.append(numpy_helper.from_array(a.astype(np.float16), t.name + "_h"))
            casts.append(helper.make_node("Cast", [t.name + "_h"], [t.name], to=TensorProto.FLOAT))
        else:
            inits.append(t)
    del m.graph.initializer[:]
    m.graph.initializer.extend(inits)
    nodes = casts + list(m.graph.node)
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    out = art / "web" / "digits_fp32.onnx"
    onnx.save(m, out)
    return str(out)


def _web_drop_div(tmp):  # "the page divides by 16 itself": the baked preprocessing removed
    import onnx
    art = _stage(tmp)
    m = onnx.load(art / "digits_fp32_ext.onnx")
    _strip_everything(m)
    div = next(n for n in m.graph.node if n.op_type == "Div")
    for n in m.graph.node:
        for i, name in enumerate(n.input):
            if name == div.output[0]:
                n.input[i] = div.input[0]
    m.graph.node.remove(div)
    out = art / "web" / "digits_fp32.onnx"
    onnx.save(m, out)
    return str(out)


def _web_modelproto(tmp):  # a stripped ModelProto instead of the path of a saved file
    import onnx
    art = _stage(tmp)
    m = onnx.load(art / "digits_fp32_ext.onnx")
    _strip_everything(m)
    return m


def _web_original_export(tmp):  # the exporter's own one-file model, untouched
    art = _stage(tmp)
    return str(art / "digits_fp32.onnx")


CORPUS = {
    "08.threads": [
        Right("blind3-thr-transliterated", answer=_thr_transliterated),
        Right("blind3-thr-early-exit", answer=_thr_early_exit),
        Right("blind3-thr-fractions", answer=_thr_fractions),
        Wrong("blind3-thr-isinstance-bool", answer=_thr_isinstance_bool),
        Wrong("blind3-thr-no-fallback", answer=_thr_no_fallback),
        Wrong("blind3-thr-floor", answer=_thr_floor),
        Wrong("blind3-thr-no-cap", answer=_thr_no_cap),
        Wrong("blind3-thr-cores-none-zero", answer=_thr_cores_none_zero),
        Wrong("blind3-thr-int-only", answer=_thr_int_only),
        Wrong("blind3-thr-truncate", answer=_thr_truncate),
        Wrong("blind3-thr-truthy", answer=_thr_truthy),
        Right("blind3-thr-float-out", answer=_thr_float_out),
        Wrong("blind3-thr-cores-guess", answer=_thr_cores_guess),
        Wrong("blind3-thr-constant", answer=_thr_constant, skipped_skill=True),
        Wrong("blind3-thr-all-cores", answer=_thr_all_cores),
        Wrong("blind3-thr-nan-crash", answer=_thr_nan_crash),
    ],
    "08.rgba_alpha": [
        Right("blind3-alpha-rows", answer=_alpha_rows),
        Right("blind3-alpha-fromiter", answer=_alpha_fromiter),
        Right("blind3-alpha-moveaxis", answer=_alpha_moveaxis),
        Wrong("blind3-alpha-wh", answer=_alpha_wh),
        Wrong("blind3-alpha-transposed", answer=_alpha_transposed),
        Wrong("blind3-alpha-red", answer=_alpha_red),
        Wrong("blind3-alpha-flat", answer=_alpha_flat, outputs_wrong=False),
        Wrong("blind3-alpha-int8", answer=_alpha_int8),
        Wrong("blind3-alpha-scaled", answer=_alpha_scaled),
        Wrong("blind3-alpha-float-bytes", answer=_alpha_float_bytes, outputs_wrong=False),
        Wrong("blind3-alpha-binary", answer=_alpha_binary),
        Wrong("blind3-alpha-square", answer=_alpha_square),
        Wrong("blind3-alpha-offby", answer=_alpha_offby),
        Wrong("blind3-alpha-grey", answer=_alpha_grey),
        Wrong("blind3-alpha-inplace", answer=_alpha_inplace, outputs_wrong=False),
    ],
    "08.web_model": [
        Right("blind3-web-recursive", make=_web_recursive),
        Right("blind3-web-bytes-path", make=_web_bytes_path),
        Right("blind3-web-exactly-prompt", make=_web_exactly_prompt),
        Right("blind3-web-rebuilt", make=_web_rebuilt),
        Wrong("blind3-web-copy-ext", make=_web_copy_ext, skipped_skill=True),
        Wrong("blind3-web-no-external-load", make=_web_no_external_load),
        Wrong("blind3-web-notes-kept", make=_web_notes_kept, outputs_wrong=False),
        Wrong("blind3-web-nodes-only", make=_web_nodes_only, outputs_wrong=False),
        Wrong("blind3-web-copies-cleared", make=_web_copies_cleared, outputs_wrong=False),
        Wrong("blind3-web-own-doc", make=_web_own_doc, outputs_wrong=False),
        Wrong("blind3-web-two-files", make=_web_two_files, outputs_wrong=False),
        Wrong("blind3-web-fp16", make=_web_fp16),
        Wrong("blind3-web-drop-div", make=_web_drop_div),
        Right("blind3-web-modelproto", make=_web_modelproto),
        Wrong("blind3-web-original-export", make=_web_original_export, outputs_wrong=False, skipped_skill=True),
    ],
}
