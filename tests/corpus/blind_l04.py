"""Blind entries, copied from /work/blind/l04.py (issue 32): written by a helper who never read the judges or this corpus
(their README: /work/blind/README.md). tests/corpus/l04.py adds them to its CORPUS.
Classes changed after reading the prompt: blind-python-list (Right: the prompt allows a list of ints).

Blind corpus for lesson 04: predict, top_operator, choose_providers.
"""
import collections
import json

import numpy as np

from corpus import Right, Wrong

CPU = "CPUExecutionProvider"


# ---------------------------------------------------------------- 04.predict

# Right: np.array_split into ceil(N / batch_size) pieces, list comprehension, concatenate with a typed empty.
def predict_array_split(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    n = len(images)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    pieces = np.array_split(images, -(-n // batch_size))
    return np.concatenate([session.run(None, {name: p})[0].argmax(axis=1) for p in pieces]).astype(np.int64)


# Right: preallocated result filled slice by slice in a while loop.
def predict_prealloc(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    out = np.empty(len(images), dtype=np.int64)
    start = 0
    while start < len(images):
        stop = min(start + batch_size, len(images))
        logits = session.run([session.get_outputs()[0].name], {name: images[start:stop]})[0]
        out[start:stop] = np.argmax(logits, axis=-1)
        start = stop
    return out


# Right: one image at a time (batch of 1 <= batch_size), Python list of ints then np.asarray of int32.
def predict_one_by_one(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    ids = [int(session.run(None, {name: images[i:i + 1]})[0][0].argmax()) for i in range(len(images))]
    return np.asarray(ids, dtype=np.int32)


# Wrong: the whole array in one run() call, ignoring batch_size.
def predict_one_call(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    if len(images) == 0:
        return np.zeros(0, dtype=np.int64)
    return session.run(None, {name: images})[0].argmax(1)


# Wrong: range(0, N - 1, batch_size) drops the tail when N - 1 is a multiple... (off by one in the stop).
def predict_off_by_one(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    parts = [session.run(None, {name: images[i:i + batch_size]})[0].argmax(1)
             for i in range(0, len(images) - 1, batch_size)]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


# Wrong: argmax over the batch axis instead of the classes.
def predict_wrong_axis(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    parts = [session.run(None, {name: images[i:i + batch_size]})[0].argmax(0)
             for i in range(0, len(images), batch_size)]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


# Wrong: input name hard-coded as "images".
def predict_hardcoded_name(session, images, batch_size=64):
    parts = [session.run(None, {"images": images[i:i + batch_size]})[0].argmax(1)
             for i in range(0, len(images), batch_size)]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


# Wrong: np.concatenate of an empty list for N = 0 (raises).
def predict_empty_crash(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    return np.concatenate([session.run(None, {name: images[i:i + batch_size]})[0].argmax(1)
                           for i in range(0, len(images), batch_size)])


# Wrong: returns the logits' max value (a float) instead of the index.
def predict_max_value(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    parts = [session.run(None, {name: images[i:i + batch_size]})[0].max(1)
             for i in range(0, len(images), batch_size)]
    return np.concatenate(parts) if parts else np.zeros(0, np.float32)


# Wrong: class ids returned as float (np.zeros default dtype for the result).
def predict_float_ids(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    out = np.zeros(len(images))
    for i in range(0, len(images), batch_size):
        out[i:i + batch_size] = session.run(None, {name: images[i:i + batch_size]})[0].argmax(1)
    return out


# Wrong: returns a Python list instead of a 1-D integer array.
def predict_list(session, images, batch_size=64):
    return [int(v) for v in predict_prealloc(session, images, batch_size)]


# Wrong: the empty case returns a float array (np.array([])).
def predict_empty_float(session, images, batch_size=64):
    if len(images) == 0:
        return np.array([])
    return predict_prealloc(session, images, batch_size)


# Wrong: batches taken from the end and appended in that order: the ids come out in the wrong order.
def predict_reversed_batches(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    parts = []
    stop = len(images)
    while stop > 0:
        start = max(0, stop - batch_size)
        parts.append(session.run(None, {name: images[start:stop]})[0].argmax(1))
        stop = start
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


# Wrong: ids gathered in a set per batch then sorted (order lost).
def predict_last_output(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    parts = [np.sort(session.run(None, {name: images[i:i + batch_size]})[0].argmax(1))
             for i in range(0, len(images), batch_size)]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


# Wrong: batches of batch_size + 1 (slicing with i:i + batch_size + 1 and stepping batch_size: overlap).
def predict_overlap(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    out = np.zeros(len(images), np.int64)
    for i in range(0, len(images), batch_size):
        out[i:i + batch_size + 1] = session.run(None, {name: images[i:i + batch_size + 1]})[0].argmax(1)
    return out


# ---------------------------------------------------------------- 04.top_operator

def _events(profile):
    if isinstance(profile, str):
        with open(profile) as f:
            return json.load(f)
    return profile


# Right: Counter keyed by op_name, most_common(1).
def top_counter(profile):
    events = _events(profile)
    c = collections.Counter()
    for e in events:
        if e.get("cat") == "Node":
            c[e["args"]["op_name"]] += e["dur"]
    op, total = c.most_common(1)[0]
    return {"op": op, "total_us": total}


# Right: pathlib read_text + json.loads, a plain dict and max with a key.
def top_dict_max(profile):
    from pathlib import Path
    events = json.loads(Path(profile).read_text()) if isinstance(profile, (str, Path)) else list(profile)
    totals = {}
    for e in events:
        if e.get("cat") != "Node":
            continue
        op = e.get("args", {}).get("op_name")
        if op is None:
            continue
        totals[op] = totals.get(op, 0) + e.get("dur", 0)
    best = max(totals, key=totals.get)
    return {"op": best, "total_us": totals[best]}


# Right: sorted over (total, op) pairs built with a groupby on sorted node events.
def top_groupby(profile):
    import itertools
    nodes = sorted((e["args"]["op_name"], e["dur"]) for e in _events(profile) if e["cat"] == "Node")
    totals = [(sum(d for _, d in grp), op) for op, grp in itertools.groupby(nodes, key=lambda t: t[0])]
    total, op = max(totals, key=lambda t: t[0])
    return {"op": op, "total_us": total}


# Wrong: groups by the event name (node name), not the operator type.
def top_by_name(profile):
    c = collections.Counter()
    for e in _events(profile):
        if e.get("cat") == "Node":
            c[e["name"]] += e["dur"]
    op, total = c.most_common(1)[0]
    return {"op": op, "total_us": total}


# Wrong: counts Session events too (model_run wins).
def top_all_events(profile):
    c = collections.Counter()
    for e in _events(profile):
        c[e.get("args", {}).get("op_name", e["name"])] += e["dur"]
    op, total = c.most_common(1)[0]
    return {"op": op, "total_us": total}


# Wrong: the single longest event instead of the total per type.
def top_single_max(profile):
    nodes = [e for e in _events(profile) if e.get("cat") == "Node"]
    e = max(nodes, key=lambda e: e["dur"])
    return {"op": e["args"]["op_name"], "total_us": e["dur"]}


# Wrong: the operator type that appears most often (count), with its total.
def top_most_frequent(profile):
    nodes = [e for e in _events(profile) if e.get("cat") == "Node"]
    counts = collections.Counter(e["args"]["op_name"] for e in nodes)
    op = counts.most_common(1)[0][0]
    return {"op": op, "total_us": sum(e["dur"] for e in nodes if e["args"]["op_name"] == op)}


# Wrong: only the first run: stops at the second model_run event.
def top_first_run(profile):
    c = collections.Counter()
    runs = 0
    for e in _events(profile):
        if e["name"] == "model_run":
            runs += 1
            if runs > 1:
                break
        if e.get("cat") == "Node":
            c[e["args"]["op_name"]] += e["dur"]
    op, total = c.most_common(1)[0]
    return {"op": op, "total_us": total}


# Wrong: treats a path string as already-parsed events (no file reading).
def top_no_path(profile):
    c = collections.Counter()
    for e in profile:
        if isinstance(e, dict) and e.get("cat") == "Node":
            c[e["args"]["op_name"]] += e["dur"]
    op, total = c.most_common(1)[0]
    return {"op": op, "total_us": total}


# Wrong: total converted to milliseconds.
def top_ms(profile):
    r = top_counter(profile)
    return {"op": r["op"], "total_us": r["total_us"] / 1000}


# Wrong: the smallest total (min instead of max).
def top_min(profile):
    c = collections.Counter()
    for e in _events(profile):
        if e.get("cat") == "Node":
            c[e["args"]["op_name"]] += e["dur"]
    op = min(c, key=c.get)
    return {"op": op, "total_us": c[op]}


# Wrong: returns a tuple (op, total) instead of the dict.
def top_tuple(profile):
    r = top_counter(profile)
    return (r["op"], r["total_us"])


# Wrong: op type read from the name suffix ("..._kernel_time" stripped) instead of args.op_name.
def top_name_suffix(profile):
    c = collections.Counter()
    for e in _events(profile):
        if e.get("cat") == "Node":
            c[e["name"].replace("_kernel_time", "").split("_")[0]] += e["dur"]
    op, total = c.most_common(1)[0]
    return {"op": op, "total_us": total}


# Wrong: mean duration per type instead of the sum.
def top_mean(profile):
    tot, cnt = collections.Counter(), collections.Counter()
    for e in _events(profile):
        if e.get("cat") == "Node":
            tot[e["args"]["op_name"]] += e["dur"]
            cnt[e["args"]["op_name"]] += 1
    op = max(tot, key=lambda k: tot[k] / cnt[k])
    return {"op": op, "total_us": tot[op] / cnt[op]}


# ---------------------------------------------------------------- 04.choose_providers

# Right: a loop with an explicit "seen" set and break at the CPU.
def choose_loop(available, preferred):
    out, seen = [], set()
    for p in preferred:
        if p == CPU:
            break
        if p in available and p not in seen:
            out.append(p)
            seen.add(p)
    return out + [CPU]


# Right: itertools.takewhile up to the CPU, then dict.fromkeys to dedupe in order.
def choose_takewhile(available, preferred):
    import itertools
    avail = set(available)
    before = itertools.takewhile(lambda p: p != CPU, preferred)
    return list(dict.fromkeys(p for p in before if p in avail)) + [CPU]


# Right: index of the CPU to slice, then a comprehension that checks earlier positions for duplicates.
def choose_slice(available, preferred):
    pref = list(preferred)
    if CPU in pref:
        pref = pref[:pref.index(CPU)]
    kept = [p for i, p in enumerate(pref) if p in available and p not in pref[:i]]
    return kept + [CPU]


# Wrong: keeps duplicates.
def choose_duplicates(available, preferred):
    out = []
    for p in preferred:
        if p == CPU:
            break
        if p in available:
            out.append(p)
    return out + [CPU]


# Wrong: follows the order of `available`, not of `preferred`.
def choose_available_order(available, preferred):
    kept = [p for p in available if p in preferred and p != CPU]
    if CPU in preferred:
        cut = preferred.index(CPU)
        kept = [p for p in kept if preferred.index(p) < cut]
    return list(dict.fromkeys(kept)) + [CPU]


# Wrong: does not stop at the CPU: providers after it are kept (and the CPU lands in the middle).
def choose_no_stop(available, preferred):
    out = []
    for p in preferred:
        if (p in available or p == CPU) and p not in out:
            out.append(p)
    if CPU not in out:
        out.append(CPU)
    return out


# Wrong: the CPU added only when it is available.
def choose_cpu_if_available(available, preferred):
    out = choose_loop(available, preferred)[:-1]
    return out + [CPU] if CPU in available else out


# Wrong: the CPU put first.
def choose_cpu_first(available, preferred):
    return [CPU] + choose_loop(available, preferred)[:-1]


# Wrong: set() to dedupe: the order is lost.
def choose_set(available, preferred):
    pref = preferred[:preferred.index(CPU)] if CPU in preferred else preferred
    return sorted(set(p for p in pref if p in available)) + [CPU]


# Wrong: ignores `available`: every preferred provider kept.
def choose_ignore_available(available, preferred):
    out = []
    for p in preferred:
        if p == CPU:
            break
        if p not in out:
            out.append(p)
    return out + [CPU]


# Wrong: appends the CPU even when the loop already kept it (CPU twice when it is preferred and available).
def choose_cpu_twice(available, preferred):
    out = []
    for p in preferred:
        if p in available and p not in out:
            out.append(p)
        if p == CPU:
            break
    return out + [CPU]


# Wrong: mutates the caller's `preferred` list while filtering it.
def choose_mutates(available, preferred):
    if CPU in preferred:
        del preferred[preferred.index(CPU):]
    for p in list(preferred):
        if p not in available or preferred.count(p) > 1:
            preferred.remove(p)
    return choose_loop(available, list(preferred))


# Wrong: returns the available providers, ignoring the preference.
def choose_all_available(available, preferred):
    return [p for p in available if p != CPU] + [CPU]


CORPUS = {
    "04.predict": [
        Right("blind-array-split", answer=predict_array_split),
        Right("blind-prealloc-while", answer=predict_prealloc),
        Right("blind-one-by-one-int32", answer=predict_one_by_one),
        Wrong("blind-one-call", answer=predict_one_call, outputs_wrong=False, skipped_skill=True),
        Wrong("blind-range-stop-off-by-one", answer=predict_off_by_one, outputs_wrong=True),
        Wrong("blind-argmax-axis0", answer=predict_wrong_axis, outputs_wrong=True),
        Wrong("blind-hardcoded-images", answer=predict_hardcoded_name, outputs_wrong=True),
        Wrong("blind-empty-crash", answer=predict_empty_crash, outputs_wrong=True),
        Wrong("blind-max-value", answer=predict_max_value, outputs_wrong=True),
        Wrong("blind-float-ids", answer=predict_float_ids, outputs_wrong=False),
        Right("blind-python-list", answer=predict_list),  # reclassified: the prompt allows a list of ints
        Wrong("blind-empty-float", answer=predict_empty_float, outputs_wrong=True),
        Wrong("blind-reversed-batches", answer=predict_reversed_batches, outputs_wrong=True),
        Wrong("blind-sorted-per-batch", answer=predict_last_output, outputs_wrong=True),
        Wrong("blind-overlapping-slices", answer=predict_overlap, outputs_wrong=True),
    ],
    "04.top_operator": [
        Right("blind-counter", answer=top_counter),
        Right("blind-dict-max-pathlib", answer=top_dict_max),
        Right("blind-groupby", answer=top_groupby),
        Wrong("blind-by-node-name", answer=top_by_name, outputs_wrong=True),
        Wrong("blind-session-events", answer=top_all_events, outputs_wrong=True),
        Wrong("blind-single-longest", answer=top_single_max, outputs_wrong=True),
        Wrong("blind-most-frequent", answer=top_most_frequent, outputs_wrong=True),
        Wrong("blind-first-run-only", answer=top_first_run, outputs_wrong=True),
        Wrong("blind-no-path-support", answer=top_no_path, outputs_wrong=True),
        Wrong("blind-milliseconds", answer=top_ms, outputs_wrong=True),
        Wrong("blind-min", answer=top_min, outputs_wrong=True),
        Wrong("blind-tuple", answer=top_tuple, outputs_wrong=False),
        Wrong("blind-name-prefix", answer=top_name_suffix, outputs_wrong=True),
        Wrong("blind-mean", answer=top_mean, outputs_wrong=True),
    ],
    "04.choose_providers": [
        Right("blind-seen-set", answer=choose_loop),
        Right("blind-takewhile-fromkeys", answer=choose_takewhile),
        Right("blind-slice-comprehension", answer=choose_slice),
        Wrong("blind-duplicates", answer=choose_duplicates, outputs_wrong=True),
        Wrong("blind-available-order", answer=choose_available_order, outputs_wrong=True),
        Wrong("blind-no-stop-at-cpu", answer=choose_no_stop, outputs_wrong=True),
        Wrong("blind-cpu-only-if-available", answer=choose_cpu_if_available, outputs_wrong=True),
        Wrong("blind-cpu-first", answer=choose_cpu_first, outputs_wrong=True),
        Wrong("blind-set-sorted", answer=choose_set, outputs_wrong=True),
        Wrong("blind-ignore-available", answer=choose_ignore_available, outputs_wrong=True),
        Wrong("blind-cpu-twice", answer=choose_cpu_twice, outputs_wrong=True),
        Wrong("blind-mutates-preferred", answer=choose_mutates, outputs_wrong=False),
        Wrong("blind-all-available", answer=choose_all_available, outputs_wrong=True, skipped_skill=True),
    ],
}
