"""Blind corpus round 15, lesson 09 (written without seeing the judges).

Truths relied on (all checked here against the exported course decoder and against copies whose present
keys/values pass through Clip(-1, 1) / Clip(-0.5, 0.5), the way the prompt describes the check's session):
- greedy generation = argmax of logits[0, -1] after a one-shot prefill with an empty past (L, 1, H, 0, D) float32,
  then one token per run() with the previous present as the past. On a clipped session this differs from
  rerunning the whole sequence without a cache (for n_new >= 2) and also from token-by-token prefill; the prompt
  accepts both one-shot and token-by-token prefill, nothing else.
- prefilling the prompt in chunks (neither one-shot nor one token at a time) gives a third token sequence on a
  clipped session: Wrong (the prompt says "run the prompt once").
- re-prefilling from scratch at every step and then replaying the generated tokens through the cache gives exactly
  the reference tokens with O(n^2) runs: a shortcut that skips keeping the cache, invisible in the outputs.
- n_new == 1 is one prefill run, so every "no cache" shortcut is indistinguishable there.
Ambiguities in the prompt:
- "a list of ints": a list of numpy.int64 (argmax results not passed through int()) is listed as Right here;
  a tuple of ints, a float array holding integral values, and a (1, n_new) array are not listed forms
  (float / 2-D are marked Wrong with outputs_wrong=False; tuple not used).
- a 1-D int32 array is "a 1-D integer array" (Right).
- `prompt_ids.shape = (1, -1)` mutates the caller's array only in its shape; np.array_equal(before, after) is still
  True (broadcast), so a mutation judge based on array_equal misses it.
"""
from corpus import Right, Wrong


# ----------------------------------------------------------------------------------------------------- Right

def right_tokenwise_by_name(session, prompt_ids, n_new):
    # Prompt fed one token at a time through the cache (the prompt accepts this), outputs looked up by name.
    import numpy as np

    spec = {i.name: i for i in session.get_inputs()}
    n_layer, _, n_head, _, head_dim = spec["past_keys"].shape
    cache = {
        "past_keys": np.zeros((n_layer, 1, n_head, 0, head_dim), dtype=np.float32),
        "past_values": np.zeros((n_layer, 1, n_head, 0, head_dim), dtype=np.float32),
    }
    names = [o.name for o in session.get_outputs()]
    pending = [int(t) for t in np.asarray(prompt_ids).reshape(-1)]
    produced = []
    last = None
    while len(produced) < n_new:
        if pending:
            tok = pending.pop(0)
        else:
            tok = produced[-1]
        res = dict(zip(names, session.run(names, {"ids": np.full((1, 1), tok, np.int64), **cache})))
        cache = {"past_keys": res["present_keys"], "past_values": res["present_values"]}
        last = res["logits"][0, -1]
        if not pending:
            produced.append(int(np.argmax(last)))
    return produced


def right_iobinding_ortvalues(session, prompt_ids, n_new):
    # One-shot prefill, then decode steps; all through IO binding, the present OrtValues re-bound as the past.
    import numpy as np
    import onnxruntime as ort  # noqa: F401 (as the blind writer wrote it)

    shp = session.get_inputs()[1].shape
    empty = np.zeros((shp[0], 1, shp[2], 0, shp[4]), np.float32)
    binding = session.io_binding()
    binding.bind_cpu_input("past_keys", empty)
    binding.bind_cpu_input("past_values", empty.copy())
    ids = np.ascontiguousarray(np.asarray(prompt_ids, dtype=np.int64).reshape(1, -1))
    result = np.empty(n_new, dtype=np.int64)
    for step in range(n_new):
        binding.bind_cpu_input("ids", ids)
        for name in ("logits", "present_keys", "present_values"):
            binding.bind_output(name, "cpu")
        session.run_with_iobinding(binding)
        logits_v, keys_v, values_v = binding.get_outputs()
        result[step] = logits_v.numpy()[0, -1].argmax()
        binding.bind_ortvalue_input("past_keys", keys_v)
        binding.bind_ortvalue_input("past_values", values_v)
        ids = np.array([[result[step]]], dtype=np.int64)
    return result


def right_ort_values_int32(session, prompt_ids, n_new):
    # run_with_ort_values, a hand-written first-max argmax, an int32 1-D array as the answer.
    import numpy as np
    import onnxruntime as ort

    n_layer, _, n_head, _, head_dim = session.get_inputs()[1].shape

    def first_max(row):
        best, where = -np.inf, 0
        for j, v in enumerate(row.tolist()):
            if v > best:
                best, where = v, j
        return where

    feed = {
        "ids": ort.OrtValue.ortvalue_from_numpy(np.array(prompt_ids, dtype=np.int64)[np.newaxis, :]),
        "past_keys": ort.OrtValue.ortvalue_from_numpy(np.zeros((n_layer, 1, n_head, 0, head_dim), np.float32)),
        "past_values": ort.OrtValue.ortvalue_from_numpy(np.zeros((n_layer, 1, n_head, 0, head_dim), np.float32)),
    }
    toks = []
    for _ in range(n_new):
        lg, pk, pv = session.run_with_ort_values(["logits", "present_keys", "present_values"], feed)
        toks.append(first_max(lg.numpy()[0, -1]))
        feed = {
            "ids": ort.OrtValue.ortvalue_from_numpy(np.array([[toks[-1]]], dtype=np.int64)),
            "past_keys": pk,
            "past_values": pv,
        }
    return np.array(toks, dtype=np.int32)


def right_numpy_ints_list(session, prompt_ids, n_new):
    # Recursive formulation; the answer is a list of numpy.int64 scalars (argmax never passed through int()).
    import numpy as np

    L, _, H, _, D = session.get_inputs()[1].shape

    def step(ids, pk, pv, left):
        if left == 0:
            return []
        logits, pk, pv = session.run(None, {"ids": ids, "past_keys": pk, "past_values": pv})
        nxt = logits[0, -1].argmax()
        return [nxt] + step(np.array([[nxt]], np.int64), pk, pv, left - 1)

    z = np.zeros((L, 1, H, 0, D), np.float32)
    return step(np.asarray(prompt_ids, np.int64)[None], z, z, n_new)


# ----------------------------------------------------------------------------------------------------- Wrong

def shortcut_no_cache(session, prompt_ids, n_new):
    # Reruns the whole sequence at every step with an empty past: the cache is never used.
    import numpy as np

    L, _, H, _, D = session.get_inputs()[1].shape
    empty = np.zeros((L, 1, H, 0, D), np.float32)
    seq = np.asarray(prompt_ids, np.int64)
    out = []
    for _ in range(n_new):
        logits = session.run(["logits"], {"ids": seq[None], "past_keys": empty, "past_values": empty})[0]
        out.append(int(logits[0, -1].argmax()))
        seq = np.append(seq, out[-1])
    return out


def shortcut_replay_every_step(session, prompt_ids, n_new):
    # Same tokens as the reference, but the cache is thrown away after every token: each step prefills the
    # prompt again and replays all generated tokens one by one (O(n^2) runs instead of n_new).
    import numpy as np

    L, _, H, _, D = session.get_inputs()[1].shape
    out = []
    for _ in range(n_new):
        pk = pv = np.zeros((L, 1, H, 0, D), np.float32)
        logits, pk, pv = session.run(None, {"ids": np.asarray(prompt_ids, np.int64)[None],
                                            "past_keys": pk, "past_values": pv})
        for t in out:
            logits, pk, pv = session.run(None, {"ids": np.array([[t]], np.int64),
                                                "past_keys": pk, "past_values": pv})
        out.append(int(logits[0, -1].argmax()))
    return out


def shortcut_one_run_topk(session, prompt_ids, n_new):
    # One prefill, then the n_new most likely next tokens of that single position: no loop at all.
    import numpy as np

    L, _, H, _, D = session.get_inputs()[1].shape
    e = np.zeros((L, 1, H, 0, D), np.float32)
    logits = session.run(["logits"], {"ids": np.asarray(prompt_ids, np.int64)[None],
                                      "past_keys": e, "past_values": e})[0][0, -1]
    return [int(i) for i in np.argsort(-logits, kind="stable")[:n_new]]


def shortcut_prompt_cache_only(session, prompt_ids, n_new):
    # Caches the prompt once, but every step feeds all generated tokens again on top of the prompt's cache.
    import numpy as np

    L, _, H, _, D = session.get_inputs()[1].shape
    e = np.zeros((L, 1, H, 0, D), np.float32)
    logits, pk, pv = session.run(None, {"ids": np.asarray(prompt_ids, np.int64)[None],
                                        "past_keys": e, "past_values": e})
    out = [int(logits[0, -1].argmax())]
    while len(out) < n_new:
        logits = session.run(["logits"], {"ids": np.array([out], np.int64), "past_keys": pk,
                                          "past_values": pv})[0]
        out.append(int(logits[0, -1].argmax()))
    return out


def shortcut_caller_frames(session, prompt_ids, n_new):
    # Looks up the caller's frames for a ready-made answer (any int sequence of length n_new), else reruns
    # without a cache.
    import inspect

    import numpy as np

    frame = inspect.currentframe().f_back
    while frame is not None:
        for name, val in list(frame.f_locals.items()):
            try:
                arr = np.asarray(val)
            except Exception:
                continue
            if (arr.ndim == 1 and arr.shape[0] == n_new and arr.dtype.kind in "iu"
                    and val is not prompt_ids and "prompt" not in name):
                return [int(x) for x in arr]
        frame = frame.f_back
    L, _, H, _, D = session.get_inputs()[1].shape
    empty = np.zeros((L, 1, H, 0, D), np.float32)
    seq = list(map(int, prompt_ids))
    out = []
    for _ in range(n_new):
        lg = session.run(["logits"], {"ids": np.array([seq], np.int64), "past_keys": empty,
                                      "past_values": empty})[0]
        out.append(int(lg[0, -1].argmax()))
        seq.append(out[-1])
    return out


def wrong_first_position(session, prompt_ids, n_new):
    # Takes the argmax at position 0 of the prefill logits instead of the last position.
    import numpy as np

    L, _, H, _, D = session.get_inputs()[1].shape
    pk = pv = np.zeros((L, 1, H, 0, D), np.float32)
    ids = np.asarray(prompt_ids, np.int64)[None]
    out = []
    for _ in range(n_new):
        logits, pk, pv = session.run(None, {"ids": ids, "past_keys": pk, "past_values": pv})
        out.append(int(logits[0, 0].argmax()))
        ids = np.array([[out[-1]]], np.int64)
    return out


def wrong_stale_past(session, prompt_ids, n_new):
    # Keeps feeding the prompt's cache: the present of decode steps is thrown away.
    import numpy as np

    L, _, H, _, D = session.get_inputs()[1].shape
    e = np.zeros((L, 1, H, 0, D), np.float32)
    logits, pk, pv = session.run(None, {"ids": np.asarray(prompt_ids, np.int64)[None],
                                        "past_keys": e, "past_values": e})
    out = [int(logits[0, -1].argmax())]
    for _ in range(n_new - 1):
        logits, _, _ = session.run(None, {"ids": np.array([[out[-1]]], np.int64),
                                          "past_keys": pk, "past_values": pv})
        out.append(int(logits[0, -1].argmax()))
    return out


def wrong_swapped_kv(session, prompt_ids, n_new):
    # Unpacks the outputs in the wrong order: values fed back as keys and keys as values.
    import numpy as np

    L, _, H, _, D = session.get_inputs()[1].shape
    past_k = past_v = np.zeros((L, 1, H, 0, D), np.float32)
    ids = np.asarray(prompt_ids, np.int64)[None]
    out = []
    for _ in range(n_new):
        logits, past_v, past_k = session.run(None, {"ids": ids, "past_keys": past_k, "past_values": past_v})
        out.append(int(logits[0, -1].argmax()))
        ids = np.array([[out[-1]]], np.int64)
    return out


def wrong_refeed_sequence_with_cache(session, prompt_ids, n_new):
    # Feeds the previous present AND the whole sequence again: every position is counted twice.
    import numpy as np

    L, _, H, _, D = session.get_inputs()[1].shape
    pk = pv = np.zeros((L, 1, H, 0, D), np.float32)
    seq = list(map(int, prompt_ids))
    out = []
    for _ in range(n_new):
        logits, pk, pv = session.run(None, {"ids": np.array([seq], np.int64), "past_keys": pk,
                                            "past_values": pv})
        out.append(int(logits[0, -1].argmax()))
        seq.append(out[-1])
        if pk.shape[3] + len(seq) > 128:  # keep inside the context: drop the oldest cache
            keep = max(0, 128 - len(seq))
            pk, pv = pk[:, :, :, pk.shape[3] - keep:], pv[:, :, :, pv.shape[3] - keep:]
    return out


def wrong_chunked_prefill(session, prompt_ids, n_new):
    # Prefills the prompt in chunks of 4 tokens (neither once nor one token at a time).
    import numpy as np

    L, _, H, _, D = session.get_inputs()[1].shape
    pk = pv = np.zeros((L, 1, H, 0, D), np.float32)
    prompt = np.asarray(prompt_ids, np.int64)
    for start in range(0, len(prompt), 4):
        logits, pk, pv = session.run(None, {"ids": prompt[None, start:start + 4], "past_keys": pk,
                                            "past_values": pv})
    out = [int(logits[0, -1].argmax())]
    while len(out) < n_new:
        logits, pk, pv = session.run(None, {"ids": np.array([[out[-1]]], np.int64), "past_keys": pk,
                                            "past_values": pv})
        out.append(int(logits[0, -1].argmax()))
    return out


def wrong_forgets_prefill_token(session, prompt_ids, n_new):
    # Records only the tokens of decode steps: returns tokens 2 .. n_new + 1.
    import numpy as np

    L, _, H, _, D = session.get_inputs()[1].shape
    e = np.zeros((L, 1, H, 0, D), np.float32)
    logits, pk, pv = session.run(None, {"ids": np.asarray(prompt_ids, np.int64)[None],
                                        "past_keys": e, "past_values": e})
    nxt = int(logits[0, -1].argmax())
    out = []
    for _ in range(n_new):
        logits, pk, pv = session.run(None, {"ids": np.array([[nxt]], np.int64), "past_keys": pk,
                                            "past_values": pv})
        nxt = int(logits[0, -1].argmax())
        out.append(nxt)
    return out


def wrong_with_prompt(session, prompt_ids, n_new):
    # Correct loop, but returns the prompt followed by the new tokens.
    import numpy as np

    L, _, H, _, D = session.get_inputs()[1].shape
    pk = pv = np.zeros((L, 1, H, 0, D), np.float32)
    seq = [int(t) for t in prompt_ids]
    ids = np.array([seq], np.int64)
    for _ in range(n_new):
        logits, pk, pv = session.run(None, {"ids": ids, "past_keys": pk, "past_values": pv})
        seq.append(int(logits[0, -1].argmax()))
        ids = np.array([[seq[-1]]], np.int64)
    return seq


def wrong_sampling(session, prompt_ids, n_new):
    # Samples from softmax(logits) (temperature 1, fixed seed) instead of taking the argmax.
    import numpy as np

    rng = np.random.default_rng(0)
    L, _, H, _, D = session.get_inputs()[1].shape
    pk = pv = np.zeros((L, 1, H, 0, D), np.float32)
    ids = np.asarray(prompt_ids, np.int64)[None]
    out = []
    for _ in range(n_new):
        logits, pk, pv = session.run(None, {"ids": ids, "past_keys": pk, "past_values": pv})
        row = logits[0, -1].astype(np.float64)
        p = np.exp(row - row.max())
        out.append(int(rng.choice(len(p), p=p / p.sum())))
        ids = np.array([[out[-1]]], np.int64)
    return out


def wrong_2d_result(session, prompt_ids, n_new):
    # Right tokens, returned as a (1, n_new) array (batch dimension kept).
    import numpy as np

    L, _, H, _, D = session.get_inputs()[1].shape
    pk = pv = np.zeros((L, 1, H, 0, D), np.float32)
    ids = np.asarray(prompt_ids, np.int64)[None]
    new = np.zeros((1, 0), np.int64)
    for _ in range(n_new):
        logits, pk, pv = session.run(None, {"ids": ids, "past_keys": pk, "past_values": pv})
        ids = logits[:, -1].argmax(-1)[:, None].astype(np.int64)
        new = np.concatenate([new, ids], axis=1)
    return new


def wrong_float_result(session, prompt_ids, n_new):
    # Right tokens, stored in np.zeros(n_new) (float64): not an integer array.
    import numpy as np

    L, _, H, _, D = session.get_inputs()[1].shape
    pk = pv = np.zeros((L, 1, H, 0, D), np.float32)
    ids = np.asarray(prompt_ids, np.int64)[None]
    out = np.zeros(n_new)
    for i in range(n_new):
        logits, pk, pv = session.run(None, {"ids": ids, "past_keys": pk, "past_values": pv})
        out[i] = logits[0, -1].argmax()
        ids = np.array([[int(out[i])]], np.int64)
    return out


def wrong_reshapes_prompt_in_place(session, prompt_ids, n_new):
    # Right tokens, but sets prompt_ids.shape = (1, -1): the caller's array becomes 2-D.
    import numpy as np

    L, _, H, _, D = session.get_inputs()[1].shape
    pk = pv = np.zeros((L, 1, H, 0, D), np.float32)
    prompt_ids.shape = (1, -1)
    ids = prompt_ids
    out = []
    for _ in range(n_new):
        logits, pk, pv = session.run(None, {"ids": ids, "past_keys": pk, "past_values": pv})
        out.append(int(logits[0, -1].argmax()))
        ids = np.array([[out[-1]]], np.int64)
    return out


CORPUS = {"09.generate": [
    Right("blind15-gen-tokenwise-by-name", answer=right_tokenwise_by_name),
    Right("blind15-gen-iobinding-ortvalues", answer=right_iobinding_ortvalues),
    Right("blind15-gen-ort-values-int32", answer=right_ort_values_int32),
    Right("blind15-gen-recursive-np-int64-list", answer=right_numpy_ints_list),
    Wrong("blind15-gen-no-cache", answer=shortcut_no_cache, skipped_skill=True),
    Wrong("blind15-gen-replay-every-step", answer=shortcut_replay_every_step, skipped_skill=True),
    Wrong("blind15-gen-one-run-topk", answer=shortcut_one_run_topk, skipped_skill=True),
    Wrong("blind15-gen-prompt-cache-only", answer=shortcut_prompt_cache_only, skipped_skill=True),
    Wrong("blind15-gen-caller-frames", answer=shortcut_caller_frames, skipped_skill=True),
    Wrong("blind15-gen-first-position", answer=wrong_first_position),
    Wrong("blind15-gen-stale-past", answer=wrong_stale_past),
    Wrong("blind15-gen-swapped-kv", answer=wrong_swapped_kv),
    Wrong("blind15-gen-refeed-with-cache", answer=wrong_refeed_sequence_with_cache),
    Wrong("blind15-gen-chunked-prefill", answer=wrong_chunked_prefill),
    Wrong("blind15-gen-forgets-prefill-token", answer=wrong_forgets_prefill_token),
    Wrong("blind15-gen-with-prompt", answer=wrong_with_prompt),
    Wrong("blind15-gen-sampling", answer=wrong_sampling),
    Wrong("blind15-gen-2d-result", answer=wrong_2d_result, outputs_wrong=False),
    Wrong("blind15-gen-float-result", answer=wrong_float_result, outputs_wrong=False),
    Wrong("blind15-gen-reshapes-prompt", answer=wrong_reshapes_prompt_in_place, outputs_wrong=False),
]}
