"""Blind entries, copied from /work/blind2/l06.py (issue 32): written by a helper who never read the judges or this corpus
(their README: /work/blind2/README.md). tests/corpus/l06.py adds them to its CORPUS.

Blind corpus, lesson 06 (held-out round, written without seeing the judges).
"""
import numpy as np

from corpus import Right, Wrong


# ---------------------------------------------------------------- rights

def _dq_subtract_dtype(q, scale, zero_point):
    diff = np.subtract(np.asarray(q), np.asarray(zero_point), dtype=np.int32)
    return (np.float32(1) * np.asarray(scale, dtype=np.float32) * diff).astype(np.float32)


def _dq_float_first(q, scale, zero_point):
    qf = np.asarray(q).astype(np.float32)
    zf = np.asarray(zero_point).astype(np.float32)
    return np.asarray(np.multiply(qf - zf, np.asarray(scale, np.float32), dtype=np.float32))


def _dq_int64_then_cast(q, scale, zero_point):
    centred = np.asarray(q, dtype=np.int64) - np.asarray(zero_point, dtype=np.int64)
    return np.asarray(np.asarray(scale, dtype=np.float64) * centred, dtype=np.float32)


# ---------------------------------------------------------------- wrongs

def _w_wraps(q, scale, zero_point):
    return ((q - np.asarray(zero_point, dtype=q.dtype)) * scale).astype(np.float32)   # int8/uint8 arithmetic


def _w_float64(q, scale, zero_point):
    return (q.astype(np.int32) - zero_point) * np.asarray(scale, dtype=np.float64)


def _w_formula(q, scale, zero_point):
    return (scale * q.astype(np.float32) - zero_point).astype(np.float32)


def _w_divide(q, scale, zero_point):
    return ((q.astype(np.int32) - zero_point) / scale).astype(np.float32)


def _w_int8_cast(q, scale, zero_point):
    return ((q.astype(np.int8).astype(np.int32) - zero_point) * scale).astype(np.float32)


def _w_uint8_cast(q, scale, zero_point):
    return ((q.astype(np.uint8).astype(np.int32) - zero_point) * scale).astype(np.float32)


def _w_no_zero_point(q, scale, zero_point):
    return (q.astype(np.float32) * scale).astype(np.float32)


def _w_flat_params(q, scale, zero_point):
    s = np.asarray(scale, dtype=np.float32).ravel()
    z = np.asarray(zero_point).ravel()
    return ((q.astype(np.int32) - z) * s).astype(np.float32)


def _w_in_place(q, scale, zero_point):
    q -= np.asarray(zero_point).astype(q.dtype)            # wraps and changes the caller's array
    return (q * np.asarray(scale, np.float32)).astype(np.float32)


def _w_list(q, scale, zero_point):
    return ((q.astype(np.int32) - zero_point) * np.float32(1) * scale).astype(np.float32).tolist()


def _w_plus(q, scale, zero_point):
    return ((q.astype(np.int32) + zero_point) * scale).astype(np.float32)


def _w_rounded(q, scale, zero_point):
    return np.round((q.astype(np.int32) - zero_point) * scale).astype(np.float32)


def _w_identity(q, scale, zero_point):
    return q.astype(np.float32)


CORPUS = {
    "06.dequantize": [
        Right("blind2-dq-subtract-dtype-int32", answer=_dq_subtract_dtype),
        Right("blind2-dq-float32-first", answer=_dq_float_first),
        Right("blind2-dq-int64-float64-cast", answer=_dq_int64_then_cast),
        Wrong("blind2-dq-wraps-in-int8", answer=_w_wraps),
        Wrong("blind2-dq-float64-result", answer=_w_float64, outputs_wrong=False),
        Wrong("blind2-dq-zero-point-after-scale", answer=_w_formula),
        Wrong("blind2-dq-divides", answer=_w_divide),
        Wrong("blind2-dq-casts-to-int8", answer=_w_int8_cast),
        Wrong("blind2-dq-casts-to-uint8", answer=_w_uint8_cast),
        Wrong("blind2-dq-ignores-zero-point", answer=_w_no_zero_point),
        Wrong("blind2-dq-flattened-per-channel", answer=_w_flat_params),
        Wrong("blind2-dq-in-place", answer=_w_in_place),
        Wrong("blind2-dq-list", answer=_w_list, outputs_wrong=False),
        Wrong("blind2-dq-adds-zero-point", answer=_w_plus),
        Wrong("blind2-dq-rounds-result", answer=_w_rounded),
        Wrong("blind2-dq-identity-cast", answer=_w_identity, skipped_skill=True),
    ],
}
