"""Blind corpus round 3, lesson 04 (written without seeing the judges)."""
import atexit as _atexit, shutil as _shutil, tempfile as _tempfile  # noqa: E401
_BLIND3_CACHE = __import__("pathlib").Path(_tempfile.mkdtemp(prefix="blind3-cache-"))  # per process: no race
_atexit.register(_shutil.rmtree, _BLIND3_CACHE, True)
import json
from collections import Counter, defaultdict
from itertools import groupby, takewhile

import numpy as np

from corpus import Right, Wrong

CPU = "CPUExecutionProvider"


# ------------------------------------------------------------------ 04.choose_providers
def _cp_fromkeys(available, preferred):
    upto = list(takewhile(lambda p: p != CPU, preferred))
    return [p for p in dict.fromkeys(upto) if p in set(available)] + [CPU]


def _cp_while(available, preferred):
    out, i = [], 0
    while i < len(preferred) and preferred[i] != CPU:
        p = preferred[i]
        if p in available and p not in out:
            out.append(p)
        i += 1
    out.append(CPU)
    return out


def _cp_index(available, preferred):
    prefs = list(preferred)
    if CPU in prefs:
        prefs = prefs[:prefs.index(CPU) + 1]
    kept = []
    for p in prefs:
        if p == CPU or (p in available and p not in kept):
            kept.append(p) if p != CPU else None
    kept.append(CPU)
    return kept


def _cp_tuple(available, preferred):
    return tuple(_cp_while(available, preferred))


def _cp_no_stop(available, preferred):
    out = [p for p in dict.fromkeys(preferred) if p in available and p != CPU]
    return out + [CPU]


def _cp_no_dedupe(available, preferred):
    out = []
    for p in preferred:
        if p == CPU:
            break
        if p in available:
            out.append(p)
    return out + [CPU]


def _cp_cpu_only_if_available(available, preferred):
    out = []
    for p in preferred:
        if p == CPU:
            break
        if p in available and p not in out:
            out.append(p)
    return out + ([CPU] if CPU in available else [])


def _cp_available_order(available, preferred):
    out = []
    for p in available:
        if p in preferred and p != CPU and p not in out:
            out.append(p)
    return out + [CPU]


def _cp_set(available, preferred):
    upto = list(takewhile(lambda p: p != CPU, preferred))
    return sorted(set(upto) & set(available)) + [CPU]


def _cp_cpu_twice(available, preferred):
    out = []
    for p in preferred:
        if p in available and p not in out:
            out.append(p)
        if p == CPU:
            break
    out.append(CPU)
    return out


def _cp_not_filtered(available, preferred):
    out = []
    for p in preferred:
        if p == CPU:
            break
        if p not in out:
            out.append(p)
    return out + [CPU]


def _cp_mutates(available, preferred):
    if CPU in preferred:
        del preferred[preferred.index(CPU):]
    out = []
    for p in preferred:
        if p in available and p not in out:
            out.append(p)
    return out + [CPU]


def _cp_ort_all(available, preferred):
    import onnxruntime as ort
    return [p for p in ort.get_available_providers() if p in preferred and p != CPU] + [CPU]


CORPUS = {
    "04.choose_providers": [
        Right("blind3-providers-fromkeys-takewhile", answer=_cp_fromkeys),
        Right("blind3-providers-while-index", answer=_cp_while),
        Right("blind3-providers-slice-at-cpu", answer=_cp_index),
        Wrong("blind3-providers-tuple", answer=_cp_tuple, outputs_wrong=False),
        Wrong("blind3-providers-no-stop-at-cpu", answer=_cp_no_stop),
        Wrong("blind3-providers-duplicates", answer=_cp_no_dedupe),
        Wrong("blind3-providers-cpu-only-if-listed", answer=_cp_cpu_only_if_available),
        Wrong("blind3-providers-available-order", answer=_cp_available_order),
        Wrong("blind3-providers-sorted-set", answer=_cp_set),
        Wrong("blind3-providers-cpu-twice", answer=_cp_cpu_twice),
        Wrong("blind3-providers-not-filtered", answer=_cp_not_filtered),
        Wrong("blind3-providers-mutates-preferred", answer=_cp_mutates, outputs_wrong=False),
        Wrong("blind3-providers-asks-ort-instead", answer=_cp_ort_all),
    ],
}


# ------------------------------------------------------------------ 04.predict
def _pr_chunks(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    n = len(images)
    parts = [np.argmax(session.run(None, {name: images[i:i + batch_size]})[0], axis=1)
             for i in range(0, n, batch_size)]
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)


def _pr_list(session, images, batch_size=64):
    (inp,) = session.get_inputs()
    ids = []
    start = 0
    while start < images.shape[0]:
        logits = session.run([session.get_outputs()[0].name], {inp.name: images[start:start + batch_size]})[0]
        ids.extend(int(k) for k in logits.argmax(-1))
        start += batch_size
    return ids


def _pr_split(session, images, batch_size=64):
    n = len(images)
    if n == 0:
        return np.array([], dtype=int)
    pieces = np.array_split(images, -(-n // batch_size))
    feed = session.get_inputs()[0].name
    return np.hstack([session.run(None, {feed: p})[0].argmax(1) for p in pieces])


def _pr_one_run(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    return session.run(None, {name: images})[0].argmax(1)


def _pr_hard_name(session, images, batch_size=64):
    out = [session.run(None, {"images": images[i:i + batch_size]})[0].argmax(1)
           for i in range(0, len(images), batch_size)]
    return np.concatenate(out) if out else np.zeros(0, int)


def _pr_concat_empty(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    return np.concatenate([session.run(None, {name: images[i:i + batch_size]})[0].argmax(1)
                           for i in range(0, len(images), batch_size)])


def _pr_axis0(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    out = [session.run(None, {name: images[i:i + batch_size]})[0].argmax(0)
           for i in range(0, len(images), batch_size)]
    return np.concatenate(out) if out else np.zeros(0, int)


def _pr_drop_last(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    out = [session.run(None, {name: images[i * batch_size:(i + 1) * batch_size]})[0].argmax(1)
           for i in range(len(images) // batch_size)]
    return np.concatenate(out) if out else np.zeros(0, int)


def _pr_fixed_64(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    out = [session.run(None, {name: images[i:i + 64]})[0].argmax(1) for i in range(0, len(images), 64)]
    return np.concatenate(out) if out else np.zeros(0, int)


def _pr_float_empty(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    out = np.array([])
    for i in range(0, len(images), batch_size):
        out = np.concatenate([out, session.run(None, {name: images[i:i + batch_size]})[0].argmax(1)])
    return out


def _pr_logits(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    out = [session.run(None, {name: images[i:i + batch_size]})[0] for i in range(0, len(images), batch_size)]
    return np.concatenate(out) if out else np.zeros((0, 10), np.float32)


def _pr_overlap(session, images, batch_size=64):
    """Off by one: each batch takes batch_size + 1 images (slice end inclusive thinking)."""
    name = session.get_inputs()[0].name
    out = []
    for i in range(0, len(images), batch_size + 1):
        out.append(session.run(None, {name: images[i:i + batch_size + 1]})[0].argmax(1))
    return np.concatenate(out) if out else np.zeros(0, int)


def _pr_reversed(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    n = len(images)
    out = [session.run(None, {name: images[max(0, e - batch_size):e]})[0].argmax(1)
           for e in range(n, 0, -batch_size)]
    return np.concatenate(out) if out else np.zeros(0, int)


CORPUS["04.predict"] = [
    Right("blind3-predict-range-step", answer=_pr_chunks),
    Right("blind3-predict-while-list-of-ints", answer=_pr_list),
    Right("blind3-predict-array-split", answer=_pr_split),
    Wrong("blind3-predict-one-run", answer=_pr_one_run),
    Wrong("blind3-predict-hardcoded-name", answer=_pr_hard_name),
    Wrong("blind3-predict-concat-empty-crash", answer=_pr_concat_empty),
    Wrong("blind3-predict-argmax-axis0", answer=_pr_axis0),
    Wrong("blind3-predict-drops-partial-batch", answer=_pr_drop_last),
    Wrong("blind3-predict-ignores-batch-size", answer=_pr_fixed_64),
    Wrong("blind3-predict-float-ids", answer=_pr_float_empty, outputs_wrong=False),
    Wrong("blind3-predict-returns-logits", answer=_pr_logits),
    Wrong("blind3-predict-batch-plus-one", answer=_pr_overlap),
    Wrong("blind3-predict-batches-reordered", answer=_pr_reversed),
]


# ------------------------------------------------------------------ 04.top_operator
def _events(profile):
    if isinstance(profile, (str, bytes)) or hasattr(profile, "__fspath__"):
        with open(profile) as f:
            return json.load(f)
    return profile


def _top_defaultdict(profile):
    per = defaultdict(int)
    for e in _events(profile):
        if e.get("cat") == "Node":
            per[e["args"]["op_name"]] += e["dur"]
    op = max(per, key=per.get)
    return {"op": op, "total_us": per[op]}


def _top_counter(profile):
    if isinstance(profile, str):
        from pathlib import Path
        profile = json.loads(Path(profile).read_text())
    c = Counter()
    for e in filter(lambda e: e["cat"] == "Node", profile):
        c.update({e["args"]["op_name"]: e["dur"]})
    (op, us), = c.most_common(1)
    return dict(op=op, total_us=int(us))


def _top_groupby(profile):
    ev = _events(profile)
    nodes = sorted(((e["args"]["op_name"], e["dur"]) for e in ev if e["cat"] == "Node"), key=lambda t: t[0])
    totals = [(k, sum(d for _, d in g)) for k, g in groupby(nodes, key=lambda t: t[0])]
    best = sorted(totals, key=lambda t: -t[1])[0]
    return {"total_us": best[1], "op": best[0]}


def _top_generic(profile, key=lambda e: e["args"]["op_name"], only_nodes=True, agg="sum", scale=1.0,
                 pick=max, tuple_=False, name="total_us"):
    ev = _events(profile)
    per = defaultdict(list)
    for e in ev:
        if only_nodes and e.get("cat") != "Node":
            continue
        per[key(e)].append(e["dur"])
    tot = {k: (sum(v) if agg == "sum" else max(v) if agg == "max" else sum(v) / len(v)) * scale
           for k, v in per.items()}
    op = pick(tot, key=tot.get)
    return (op, tot[op]) if tuple_ else {"op": op, name: tot[op]}


def _top_no_path(profile):
    per = defaultdict(int)
    for e in profile:
        if e["cat"] == "Node":
            per[e["args"]["op_name"]] += e["dur"]
    op = max(per, key=per.get)
    return {"op": op, "total_us": per[op]}


def _top_first_run(profile):
    seen, per = set(), defaultdict(int)
    for e in _events(profile):
        if e.get("cat") == "Node" and e["name"] not in seen:
            seen.add(e["name"])
            per[e["args"]["op_name"]] += e["dur"]
    op = max(per, key=per.get)
    return {"op": op, "total_us": per[op]}


def _op_from_name(e):
    parts = e["name"].split("_")
    return parts[1] if len(parts) > 1 else parts[0]


CORPUS["04.top_operator"] = [
    Right("blind3-topop-defaultdict-open", answer=_top_defaultdict),
    Right("blind3-topop-counter-most-common", answer=_top_counter),
    Right("blind3-topop-groupby", answer=_top_groupby),
    Wrong("blind3-topop-by-node-name", answer=lambda p: _top_generic(p, key=lambda e: e["name"])),
    Wrong("blind3-topop-session-events-in",
          answer=lambda p: _top_generic(p, key=lambda e: e.get("args", {}).get("op_name", e["name"]),
                                        only_nodes=False)),
    Wrong("blind3-topop-largest-single-event", answer=lambda p: _top_generic(p, agg="max")),
    Wrong("blind3-topop-no-path", answer=_top_no_path),
    Wrong("blind3-topop-milliseconds", answer=lambda p: _top_generic(p, scale=1e-3)),
    Wrong("blind3-topop-mean", answer=lambda p: _top_generic(p, agg="mean")),
    Wrong("blind3-topop-first-run-only", answer=_top_first_run),
    Wrong("blind3-topop-tuple", answer=lambda p: _top_generic(p, tuple_=True), outputs_wrong=False),
    Wrong("blind3-topop-op-parsed-from-name", answer=lambda p: _top_generic(p, key=_op_from_name)),
    Wrong("blind3-topop-min", answer=lambda p: _top_generic(p, pick=min)),
    Wrong("blind3-topop-key-total", answer=lambda p: _top_generic(p, name="total"), outputs_wrong=False),
]
