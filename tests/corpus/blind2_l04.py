"""Blind entries, copied from /work/blind2/l04.py (issue 32): written by a helper who never read the judges or this corpus
(their README: /work/blind2/README.md). tests/corpus/l04.py adds them to its CORPUS.

Blind corpus, lesson 04 (held-out round, written without seeing the judges).
"""
import itertools
import math

import numpy as np

from corpus import Right, Wrong

CPU = "CPUExecutionProvider"

# ================================================================ 04.predict


def _p_range(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    images = np.asarray(images, dtype=np.float32)
    ids = np.empty(len(images), dtype=np.int64)
    for start in range(0, len(images), batch_size):
        chunk = images[start:start + batch_size]
        ids[start:start + len(chunk)] = session.run(None, {name: chunk})[0].argmax(axis=1)
    return ids


def _p_array_split(session, images, batch_size=64):
    (inp,) = session.get_inputs()
    n = len(images)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    pieces = np.array_split(images, math.ceil(n / batch_size))
    return np.concatenate([np.argmax(session.run([session.get_outputs()[0].name], {inp.name: p})[0], -1)
                           for p in pieces]).astype(np.int64)


def _p_one_by_one_list(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    return [int(np.argmax(session.run(None, {name: images[i:i + 1]})[0][0])) for i in range(len(images))]


def _p_generator_batched(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    it = iter(range(len(images)))
    out = []
    while True:
        idx = list(itertools.islice(it, batch_size))
        if not idx:
            break
        out.extend(session.run(None, {name: images[idx[0]:idx[-1] + 1]})[0].argmax(1).tolist())
    return np.array(out, dtype=np.int64)


def _p_all_at_once(session, images, batch_size=64):
    return session.run(None, {session.get_inputs()[0].name: images})[0].argmax(1)


def _p_bypass_c_session(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    out = session._sess.run([o.name for o in session.get_outputs()], {name: images}, None)   # skips run()'s limit
    return np.asarray(out[0]).argmax(1)


def _p_ort_values(session, images, batch_size=64):
    import onnxruntime as ort
    name = session.get_inputs()[0].name
    res = session.run_with_ort_values(None, {name: ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(images))})
    return res[0].numpy().argmax(1)


def _p_fresh_session(session, images, batch_size=64):
    import onnxruntime as ort
    model = getattr(session, "_model_bytes", None) or session._model_path
    fresh = ort.InferenceSession(model, providers=[CPU])                   # no limit on this one
    return fresh.run(None, {fresh.get_inputs()[0].name: images})[0].argmax(1)


def _p_fixed_64(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    if len(images) == 0:
        return np.zeros(0, np.int64)
    return np.concatenate([session.run(None, {name: images[i:i + 64]})[0].argmax(1)
                           for i in range(0, len(images), 64)])


def _p_off_by_one(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    if len(images) == 0:
        return np.zeros(0, np.int64)
    return np.concatenate([session.run(None, {name: images[i:i + batch_size + 1]})[0].argmax(1)
                           for i in range(0, len(images), batch_size + 1)])


def _p_drops_tail(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    out = [session.run(None, {name: images[i * batch_size:(i + 1) * batch_size]})[0].argmax(1)
           for i in range(len(images) // batch_size)]
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _p_concat_empty(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    return np.concatenate([session.run(None, {name: images[i:i + batch_size]})[0].argmax(1)
                           for i in range(0, len(images), batch_size)])          # N = 0: nothing to join


def _p_float_empty(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    out = [session.run(None, {name: images[i:i + batch_size]})[0].argmax(1) for i in range(0, len(images), batch_size)]
    return np.concatenate(out) if out else np.array([])                        # float64 when empty


def _p_axis0(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    out = [session.run(None, {name: images[i:i + batch_size]})[0].argmax(0) for i in range(0, len(images), batch_size)]
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _p_probabilities(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    out = [session.run(None, {name: images[i:i + batch_size]})[0] for i in range(0, len(images), batch_size)]
    return np.concatenate(out) if out else np.zeros((0, 10), np.float32)


def _p_name_images(session, images, batch_size=64):
    out = [session.run(None, {"images": images[i:i + batch_size]})[0].argmax(1)
           for i in range(0, len(images), batch_size)]
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _p_float_ids(session, images, batch_size=64):
    return _p_range(session, images, batch_size).astype(np.float32)


def _p_reversed(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    out = [session.run(None, {name: images[i:i + batch_size]})[0].argmax(1) for i in range(0, len(images), batch_size)]
    return np.concatenate(out[::-1]) if out else np.zeros(0, np.int64)       # batches joined last-first


# ================================================================ 04.choose_providers


def _c_loop(available, preferred):
    chosen = []
    for name in preferred:
        if name == CPU:
            break
        if name in available and name not in chosen:
            chosen.append(name)
    return chosen + [CPU]


def _c_takewhile(available, preferred):
    before_cpu = itertools.takewhile(lambda p: p != "CPUExecutionProvider", preferred)
    keep = dict.fromkeys(p for p in before_cpu if p in set(available))
    return [*keep, "CPUExecutionProvider"]


def _c_index(available, preferred):
    prefs = list(preferred)
    cut = prefs.index(CPU) if CPU in prefs else len(prefs)
    out = []
    for i, p in enumerate(prefs[:cut]):
        if p in available and p not in prefs[:i]:
            out.append(p)
    out.append(CPU)
    return out


def _c_no_stop(available, preferred):
    chosen = []
    for name in preferred:
        if name in available and name not in chosen and name != CPU:
            chosen.append(name)
    return chosen + [CPU]


def _c_available_order(available, preferred):
    out = [p for p in available if p in preferred and p != CPU]
    return list(dict.fromkeys(out)) + [CPU]


def _c_no_dedupe(available, preferred):
    out = []
    for p in preferred:
        if p == CPU:
            break
        if p in available:
            out.append(p)
    return out + [CPU]


def _c_cpu_only_if_available(available, preferred):
    out = []
    for p in preferred:
        if p == CPU:
            break
        if p in available and p not in out:
            out.append(p)
    return out + ([CPU] if CPU in available else [])


def _c_cpu_twice(available, preferred):
    out = []
    for p in preferred:
        if p in available and p not in out:
            out.append(p)
            if p == CPU:
                break
    return out + [CPU]


def _c_mutates(available, preferred):
    preferred.append(CPU)                       # changes the caller's list
    out = []
    for p in preferred:
        if p == CPU:
            break
        if p in available and p not in out:
            out.append(p)
    return out + [CPU]


def _c_set(available, preferred):
    return set(_c_loop(available, preferred))


def _c_constant(available, preferred):
    return [CPU]


def _c_available_plus_cpu(available, preferred):
    return [p for p in available if p != CPU] + [CPU]


def _c_tuple(available, preferred):
    return tuple(_c_loop(available, preferred))


def _c_library_available(available, preferred):
    import onnxruntime as ort
    have = ort.get_available_providers()        # this machine, not the argument
    out = []
    for p in preferred:
        if p == CPU:
            break
        if p in have and p not in out:
            out.append(p)
    return out + [CPU]


def _c_cpu_first(available, preferred):
    return [CPU] + [p for p in _c_loop(available, preferred) if p != CPU]


def _c_break_on_missing(available, preferred):
    out = []
    for p in preferred:
        if p == CPU or p not in available:
            break                               # stops at the first missing provider too
        if p not in out:
            out.append(p)
    return out + [CPU]


CORPUS = {
    "04.predict": [
        Right("blind2-pred-preallocated-range", answer=_p_range),
        Right("blind2-pred-array-split", answer=_p_array_split),
        Right("blind2-pred-one-at-a-time-list", answer=_p_one_by_one_list),
        Right("blind2-pred-islice-batches", answer=_p_generator_batched),
        Wrong("blind2-pred-all-at-once", answer=_p_all_at_once),
        Wrong("blind2-pred-bypass-c-session", answer=_p_bypass_c_session, outputs_wrong=False, skipped_skill=True),
        Wrong("blind2-pred-run-with-ort-values", answer=_p_ort_values, outputs_wrong=False, skipped_skill=True),
        Wrong("blind2-pred-fresh-unlimited-session", answer=_p_fresh_session, outputs_wrong=False, skipped_skill=True),
        Wrong("blind2-pred-fixed-64", answer=_p_fixed_64),
        Wrong("blind2-pred-off-by-one-slices", answer=_p_off_by_one),
        Wrong("blind2-pred-drops-tail", answer=_p_drops_tail),
        Wrong("blind2-pred-concat-empty-crash", answer=_p_concat_empty),
        Wrong("blind2-pred-float-empty", answer=_p_float_empty, outputs_wrong=False),
        Wrong("blind2-pred-argmax-axis0", answer=_p_axis0),
        Wrong("blind2-pred-probabilities", answer=_p_probabilities),
        Wrong("blind2-pred-input-name-images", answer=_p_name_images),
        Wrong("blind2-pred-float-ids", answer=_p_float_ids, outputs_wrong=False),
        Wrong("blind2-pred-batches-reversed", answer=_p_reversed),
    ],
    "04.choose_providers": [
        Right("blind2-prov-loop-break", answer=_c_loop),
        Right("blind2-prov-takewhile-fromkeys", answer=_c_takewhile),
        Right("blind2-prov-index-cut", answer=_c_index),
        Wrong("blind2-prov-no-stop-at-cpu", answer=_c_no_stop),
        Wrong("blind2-prov-available-order", answer=_c_available_order),
        Wrong("blind2-prov-no-dedupe", answer=_c_no_dedupe),
        Wrong("blind2-prov-cpu-only-if-available", answer=_c_cpu_only_if_available),
        Wrong("blind2-prov-cpu-twice", answer=_c_cpu_twice),
        Wrong("blind2-prov-mutates-preferred", answer=_c_mutates, outputs_wrong=False),
        Wrong("blind2-prov-set", answer=_c_set),
        Wrong("blind2-prov-constant-cpu", answer=_c_constant, skipped_skill=True),
        Wrong("blind2-prov-available-plus-cpu", answer=_c_available_plus_cpu),
        Wrong("blind2-prov-tuple", answer=_c_tuple, outputs_wrong=False),
        Wrong("blind2-prov-library-available", answer=_c_library_available),
        Wrong("blind2-prov-cpu-first", answer=_c_cpu_first),
        Wrong("blind2-prov-break-on-missing", answer=_c_break_on_missing),
    ],
}
