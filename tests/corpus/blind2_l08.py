"""Blind entries, copied from /work/blind2/l08.py (issue 32): written by a helper who never read the judges or this corpus
(their README: /work/blind2/README.md). tests/corpus/l08.py adds them to its CORPUS.
Classes changed after reading the prompt: blind2-alpha-int64 (Right: the prompt allows any integer dtype); blind2-alpha-list (Right: the prompt allows a list of rows); blind2-web-modelproto-not-path (Right: every onnx answer may be a path or the ModelProto (labkit.checks.collect)).

Blind corpus, lesson 08 (written without seeing the judges).
"""
import math
import shutil
from pathlib import Path

import numpy as np
import onnx

from corpus import Right, Wrong

# ================================================================ 08.rgba_alpha


def _alpha_frombuffer(rgba, width, height):
    flat = np.frombuffer(bytes(bytearray(rgba)), dtype=np.uint8)
    return flat[3::4].reshape(height, width).copy()


def _alpha_rows_of_pixels(rgba, width, height):
    px = np.array(list(rgba), dtype=np.uint8).reshape(-1, 4)
    return px[:, 3].reshape((height, width))


def _alpha_loops(rgba, width, height):
    data = list(rgba)
    return np.array([[data[4 * (r * width + c) + 3] for c in range(width)] for r in range(height)], dtype=np.uint8)


def _alpha_strided(rgba, width, height):
    a = np.asarray(bytearray(rgba), dtype=np.uint8).reshape(height, width * 4)
    return np.ascontiguousarray(a[:, 3::4])


def _w_swapped_reshape(rgba, width, height):
    return np.asarray(list(rgba), dtype=np.uint8).reshape(width, height, 4)[..., 3]


def _w_red(rgba, width, height):
    return np.asarray(list(rgba), dtype=np.uint8).reshape(height, width, 4)[..., 0]


def _w_blue(rgba, width, height):
    return np.asarray(list(rgba), dtype=np.uint8).reshape(height, width, 4)[..., 2]


def _w_transposed(rgba, width, height):
    return np.asarray(list(rgba), dtype=np.uint8).reshape(height, width, 4)[..., 3].T


def _w_flat_reshape_swapped(rgba, width, height):
    return np.asarray(list(rgba), dtype=np.uint8)[3::4].reshape(width, height)


def _w_normalized(rgba, width, height):
    return np.asarray(list(rgba), dtype=np.uint8).reshape(height, width, 4)[..., 3] / 255.0


def _w_flat(rgba, width, height):
    return np.asarray(list(rgba), dtype=np.uint8)[3::4]


def _w_gray(rgba, width, height):
    px = np.asarray(list(rgba), dtype=np.uint8).reshape(height, width, 4)
    return px[..., :3].mean(axis=-1).astype(np.uint8)


def _w_int64(rgba, width, height):
    return np.array(list(rgba), dtype=np.int64).reshape(height, width, 4)[..., 3]   # int64, values right


def _w_inverted(rgba, width, height):
    return 255 - np.asarray(list(rgba), dtype=np.uint8).reshape(height, width, 4)[..., 3]


def _w_square_only(rgba, width, height):
    side = int(math.isqrt(len(rgba) // 4))
    return np.asarray(list(rgba), dtype=np.uint8)[: side * side * 4].reshape(side, side, 4)[..., 3]


def _w_int8(rgba, width, height):
    return np.asarray(list(rgba)).astype(np.int8).reshape(height, width, 4)[..., 3]


def _w_off_by_one(rgba, width, height):
    flat = np.asarray(list(rgba), dtype=np.uint8)
    alpha = flat[4::4]                      # "the 4th byte" taken as index 4
    return np.append(alpha, 0).astype(np.uint8)[: width * height].reshape(height, width)


def _w_list(rgba, width, height):
    return np.asarray(list(rgba), dtype=np.uint8).reshape(height, width, 4)[..., 3].tolist()


# ================================================================ 08.threads

def _t_literal(requested, cross_origin_isolated, cores):
    n = requested
    if not (type(n) in (int, float) and float(n).is_integer() and n > 0):    # typeof "number", integer, > 0
        if not cross_origin_isolated:
            n = 1
        else:
            n = min(4, math.ceil((cores or 1) / 2))
    if n > 1 and not cross_origin_isolated:
        n = 1
    return int(n)


def _t_early_exit(requested, cross_origin_isolated, cores):
    if not cross_origin_isolated:
        return 1                      # default is 1, and any explicit > 1 falls back to 1
    valid = isinstance(requested, (int, float)) and not isinstance(requested, bool) \
        and math.isfinite(requested) and requested == int(requested) and requested >= 1
    return int(requested) if valid else min(4, -(-(cores or 1) // 2))


def _t_table(requested, cross_origin_isolated, cores):
    try:
        ok = requested is not True and requested is not False and requested > 0 and int(requested) == requested
    except (TypeError, ValueError, OverflowError):
        ok = False
    chosen = int(requested) if ok else (min(4, (int(cores or 1) + 1) // 2) if cross_origin_isolated else 1)
    return chosen if (chosen <= 1 or cross_origin_isolated) else 1


def _valid(n):
    return isinstance(n, (int, float)) and not isinstance(n, bool) and math.isfinite(n) and n == int(n) and n > 0


def _t_no_isolation_fallback(requested, cross_origin_isolated, cores):
    if _valid(requested):
        return int(requested)
    return 1 if not cross_origin_isolated else min(4, math.ceil((cores or 1) / 2))


def _t_cap4(requested, cross_origin_isolated, cores):
    if not cross_origin_isolated:
        return 1
    return min(4, int(requested)) if _valid(requested) else min(4, math.ceil((cores or 1) / 2))


def _t_floor(requested, cross_origin_isolated, cores):
    if not cross_origin_isolated:
        return 1
    return int(requested) if _valid(requested) else min(4, (cores or 1) // 2)


def _t_all_cores(requested, cross_origin_isolated, cores):
    if not cross_origin_isolated:
        return 1
    return int(requested) if _valid(requested) else (cores or 1)


def _t_default_ignores_isolation(requested, cross_origin_isolated, cores):
    n = int(requested) if _valid(requested) else min(4, math.ceil((cores or 1) / 2))
    return 1 if (n > 1 and not cross_origin_isolated and _valid(requested)) else n


def _t_bool_is_int(requested, cross_origin_isolated, cores):
    if not cross_origin_isolated:
        return 1
    if isinstance(requested, int) and requested > 0:            # True passes as 1
        return requested if not isinstance(requested, bool) else 1
    return min(4, math.ceil((cores or 1) / 2))


def _t_int_only(requested, cross_origin_isolated, cores):
    if not cross_origin_isolated:
        return 1
    if type(requested) is int and requested > 0:                 # 2.0 is rejected
        return requested
    return min(4, math.ceil((cores or 1) / 2))


def _t_nonpositive_ok(requested, cross_origin_isolated, cores):
    if not cross_origin_isolated:
        return 1
    if requested is None:
        return min(4, math.ceil((cores or 1) / 2))
    return int(requested)


def _t_truncates(requested, cross_origin_isolated, cores):
    if not cross_origin_isolated:
        return 1
    if isinstance(requested, (int, float)) and not isinstance(requested, bool) and requested >= 1:
        return int(requested)                                    # 2.5 -> 2 instead of the default
    return min(4, math.ceil((cores or 1) / 2))


def _t_cores_none_crash(requested, cross_origin_isolated, cores):
    if not cross_origin_isolated:
        return 1
    return int(requested) if _valid(requested) else min(4, math.ceil(cores / 2))


def _t_constant(requested, cross_origin_isolated, cores):
    return 1


def _t_requested_or_1(requested, cross_origin_isolated, cores):
    return requested or 1


def _t_cap_cores(requested, cross_origin_isolated, cores):
    if not cross_origin_isolated:
        return 1
    if _valid(requested):
        return min(int(requested), cores or 1)
    return min(4, math.ceil((cores or 1) / 2))


def _t_isolated_inverted(requested, cross_origin_isolated, cores):
    if cross_origin_isolated:
        return 1 if not _valid(requested) else int(requested) if requested <= 1 else 1
    return int(requested) if _valid(requested) else min(4, math.ceil((cores or 1) / 2))


# ================================================================ 08.web_model

def _cache_dir():
    import tempfile
    for c in (Path(__file__).resolve().parent / "cache", Path("/work/blind2/cache")):
        if (c / "digits_fp32_ext.onnx").is_file():
            return c
    return Path(tempfile.gettempdir()) / "blind2_l08_cache"


_CACHE = _cache_dir()


def _source(tmp):
    """artifacts/digits_fp32_ext.onnx (+ .data) as the notebook makes it, built once and copied."""
    ext = _CACHE / "digits_fp32_ext.onnx"
    if not ext.is_file() or not Path(f"{ext}.data").is_file():
        from labkit import android
        from labkit.models import trained_cnn
        _CACHE.mkdir(parents=True, exist_ok=True)
        fp = android.export_baked(trained_cnn(), _CACHE / "digits_fp32.onnx")
        onnx.save(onnx.load(fp), ext, save_as_external_data=True, all_tensors_to_one_file=True,
                  location=ext.name + ".data", size_threshold=0)
    art = Path(tmp) / "artifacts"
    art.mkdir(parents=True, exist_ok=True)
    shutil.copy(ext, art / ext.name)
    shutil.copy(f"{ext}.data", art / f"{ext.name}.data")
    return art / ext.name


def _dest(tmp):
    d = Path(tmp) / "artifacts" / "web"
    d.mkdir(parents=True, exist_ok=True)
    return d / "digits_fp32.onnx"


def _strip(holder):
    holder.doc_string = ""
    del holder.metadata_props[:]


def _web_fields(tmp):
    m = onnx.load(_source(tmp))
    for h in [m, m.graph, *m.graph.node]:
        _strip(h)
    for v in [*m.graph.input, *m.graph.output, *m.graph.value_info, *m.graph.initializer]:
        _strip(v)
    onnx.save(m, _dest(tmp))
    return _dest(tmp)


def _walk_clear(msg):
    for field, value in msg.ListFields():
        if field.name in ("doc_string", "metadata_props"):
            msg.ClearField(field.name)
        elif field.type == field.TYPE_MESSAGE:
            if not hasattr(value, "ListFields"):          # a repeated field
                for item in value:
                    _walk_clear(item)
            else:
                _walk_clear(value)


def _web_walk(tmp):
    src = _source(tmp)
    m = onnx.load(str(src), load_external_data=False)
    onnx.load_external_data_for_model(m, str(src.parent))
    _walk_clear(m)
    dest = _dest(tmp)
    dest.write_bytes(m.SerializeToString())
    return str(dest)


def _web_letter(tmp):
    """Exactly what the prompt lists: the model, the graph and every node (value infos left as they are)."""
    m = onnx.load(_source(tmp))
    for h in (m, m.graph, *m.graph.node):
        h.ClearField("doc_string")
        h.ClearField("metadata_props")
    onnx.save_model(m, _dest(tmp))
    return _dest(tmp)


def _web_resave(tmp):
    onnx.save(onnx.load(_source(tmp)), _dest(tmp))
    return _dest(tmp)


def _web_ext_as_is(tmp):
    return _source(tmp)


def _web_nodes_only(tmp):
    m = onnx.load(_source(tmp))
    for n in m.graph.node:
        _strip(n)
    onnx.save(m, _dest(tmp))
    return _dest(tmp)


def _web_model_graph_only(tmp):
    m = onnx.load(_source(tmp))
    _strip(m)
    _strip(m.graph)
    onnx.save(m, _dest(tmp))
    return _dest(tmp)


def _web_docstrings_only(tmp):
    m = onnx.load(_source(tmp))
    for h in (m, m.graph, *m.graph.node):
        h.doc_string = ""
    onnx.save(m, _dest(tmp))
    return _dest(tmp)


def _web_no_external_load(tmp):
    m = onnx.load(_source(tmp), load_external_data=False)     # weights still point to the .data file
    _walk_clear(m)
    onnx.save(m, _dest(tmp))
    return _dest(tmp)


def _web_external_again(tmp):
    m = onnx.load(_source(tmp))
    _walk_clear(m)
    onnx.save(m, _dest(tmp), save_as_external_data=True, location="digits_fp32.onnx.data")
    return _dest(tmp)


def _web_modelproto(tmp):
    m = onnx.load(_source(tmp))
    _walk_clear(m)
    return m


def _web_wrong_model(tmp):
    from labkit.material.l02 import small_cnn
    m = small_cnn()
    _walk_clear(m)
    onnx.save(m, _dest(tmp))
    return _dest(tmp)


def _web_dropped_preprocessing(tmp):
    """Strips the notes and also the 'useless' Cast/Div at the start: the uint8 counts go in unscaled."""
    m = onnx.load(_source(tmp))
    _walk_clear(m)
    nodes = list(m.graph.node)
    cast, div = nodes[0], nodes[1]
    assert cast.op_type == "Cast" and div.op_type == "Div"
    for n in nodes[2:]:
        for i, name in enumerate(n.input):
            if name == div.output[0]:
                n.input[i] = cast.output[0]
    del m.graph.node[:]
    m.graph.node.extend([cast, *nodes[2:]])
    onnx.save(m, _dest(tmp))
    return _dest(tmp)


def _web_clears_names_too(tmp):
    """Also blanks the node names (harmless) but forgets the graph's metadata."""
    m = onnx.load(_source(tmp))
    for n in m.graph.node:
        _strip(n)
        n.name = ""
    _strip(m)
    onnx.save(m, _dest(tmp))
    return _dest(tmp)


CORPUS = {
    "08.rgba_alpha": [
        Right("blind2-alpha-frombuffer-stride", answer=_alpha_frombuffer),
        Right("blind2-alpha-pixel-rows", answer=_alpha_rows_of_pixels),
        Right("blind2-alpha-index-loops", answer=_alpha_loops),
        Right("blind2-alpha-row-stride", answer=_alpha_strided),
        Wrong("blind2-alpha-width-height-swapped", answer=_w_swapped_reshape),
        Wrong("blind2-alpha-red-channel", answer=_w_red),
        Wrong("blind2-alpha-blue-channel", answer=_w_blue),
        Wrong("blind2-alpha-transposed", answer=_w_transposed),
        Wrong("blind2-alpha-flat-then-swapped", answer=_w_flat_reshape_swapped),
        Wrong("blind2-alpha-normalized", answer=_w_normalized),
        Wrong("blind2-alpha-flat", answer=_w_flat, outputs_wrong=False),
        Wrong("blind2-alpha-gray-mean", answer=_w_gray),
        Right("blind2-alpha-int64", answer=_w_int64),  # reclassified: the prompt allows any integer dtype
        Wrong("blind2-alpha-inverted", answer=_w_inverted),
        Wrong("blind2-alpha-square-only", answer=_w_square_only),
        Wrong("blind2-alpha-int8", answer=_w_int8),
        Wrong("blind2-alpha-one-based-index", answer=_w_off_by_one),
        Right("blind2-alpha-list", answer=_w_list),  # reclassified: the prompt allows a list of rows
    ],
    "08.threads": [
        Right("blind2-threads-literal-js", answer=_t_literal),
        Right("blind2-threads-early-exit", answer=_t_early_exit),
        Right("blind2-threads-try-compare", answer=_t_table),
        Wrong("blind2-threads-no-isolation-fallback", answer=_t_no_isolation_fallback),
        Wrong("blind2-threads-cap-4", answer=_t_cap4),
        Wrong("blind2-threads-floor-half", answer=_t_floor),
        Wrong("blind2-threads-all-cores", answer=_t_all_cores),
        Wrong("blind2-threads-default-ignores-isolation", answer=_t_default_ignores_isolation),
        Wrong("blind2-threads-bool-is-int", answer=_t_bool_is_int),
        Wrong("blind2-threads-int-type-only", answer=_t_int_only),
        Wrong("blind2-threads-nonpositive-kept", answer=_t_nonpositive_ok),
        Wrong("blind2-threads-truncates-fraction", answer=_t_truncates),
        Wrong("blind2-threads-cores-none-crash", answer=_t_cores_none_crash),
        Wrong("blind2-threads-constant-1", answer=_t_constant, skipped_skill=True),
        Wrong("blind2-threads-requested-or-1", answer=_t_requested_or_1),
        Wrong("blind2-threads-cap-at-cores", answer=_t_cap_cores),
        Wrong("blind2-threads-isolation-inverted", answer=_t_isolated_inverted),
    ],
    "08.web_model": [
        Right("blind2-web-strip-fields", make=_web_fields),
        Right("blind2-web-generic-walk", make=_web_walk),
        Right("blind2-web-letter-of-prompt", make=_web_letter),
        Wrong("blind2-web-resave-only", make=_web_resave, outputs_wrong=False),
        Wrong("blind2-web-ext-path-as-is", make=_web_ext_as_is, skipped_skill=True),
        Wrong("blind2-web-nodes-only", make=_web_nodes_only, outputs_wrong=False),
        Wrong("blind2-web-model-graph-only", make=_web_model_graph_only, outputs_wrong=False),
        Wrong("blind2-web-docstrings-only", make=_web_docstrings_only, outputs_wrong=False),
        Wrong("blind2-web-no-external-load", make=_web_no_external_load),
        Wrong("blind2-web-external-again", make=_web_external_again, outputs_wrong=False),
        Right("blind2-web-modelproto-not-path", make=_web_modelproto),  # reclassified: every onnx answer may be a path or the ModelProto (labkit.checks.collect)
        Wrong("blind2-web-lesson02-cnn", make=_web_wrong_model),
        Wrong("blind2-web-dropped-scaling", make=_web_dropped_preprocessing),
        Wrong("blind2-web-names-not-graph-meta", make=_web_clears_names_too, outputs_wrong=False),
    ],
}
