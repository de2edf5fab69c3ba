"""Blind entries, copied from /work/blind2/l09.py (issue 32): written by a helper who never read the judges or this corpus
(their README: /work/blind2/README.md). tests/corpus/l09.py adds them to its CORPUS.

Blind corpus, lesson 09 (held-out round, written without seeing the judges).
"""
import numpy as np

from corpus import Right, Wrong


def _empty_past(session, batch=1):
    shape = session.get_inputs()[1].shape          # [layers, 'batch', heads, 'past', head size]
    return np.zeros((shape[0], batch, shape[2], 0, shape[4]), dtype=np.float32)


def _io(session):
    ins = [i.name for i in session.get_inputs()]
    outs = [o.name for o in session.get_outputs()]
    return ins, outs


# ---------------------------------------------------------------- rights

def generate_named(session, prompt_ids, n_new):
    ins, outs = _io(session)
    ids_name, pk_name, pv_name = ins
    want = ["logits", "present_keys", "present_values"]
    if all(w in outs for w in want):
        outs = want
    empty = _empty_past(session)
    feed = {ids_name: np.asarray(prompt_ids, dtype=np.int64).reshape(1, -1), pk_name: empty, pv_name: empty}
    new = []
    for _ in range(n_new):
        logits, pk, pv = session.run(outs, feed)
        token = int(np.argmax(logits[0, -1]))
        new.append(token)
        feed = {ids_name: np.array([[token]], dtype=np.int64), pk_name: pk, pv_name: pv}
    return new


def generate_token_by_token_prompt(session, prompt_ids, n_new):
    """The prompt goes through the cache one token at a time too; returns an int64 array."""
    L, _, H, _, D = session.get_inputs()[1].shape
    keys = values = np.zeros((L, 1, H, 0, D), np.float32)
    out = np.zeros(n_new, dtype=np.int64)
    seq = list(np.asarray(prompt_ids).tolist())
    logits = None
    for t in seq:
        logits, keys, values = session.run(None, {"ids": np.array([[t]], np.int64), "past_keys": keys,
                                                  "past_values": values})
    for i in range(n_new):
        out[i] = logits[0, -1].argmax()
        if i + 1 < n_new:
            logits, keys, values = session.run(None, {"ids": out[i:i + 1][None], "past_keys": keys,
                                                      "past_values": values})
    return out


def generate_dict_outputs(session, prompt_ids, n_new):
    names = [o.name for o in session.get_outputs()]
    past = _empty_past(session)
    state = {"past_keys": past, "past_values": past}
    ids = np.asarray(prompt_ids, dtype=np.int64)[None, :]
    tokens = []
    while len(tokens) < n_new:
        res = dict(zip(names, session.run(names, {"ids": ids, **state})))
        nxt = int(res["logits"][:, -1, :].argmax(-1)[0])
        tokens.append(nxt)
        ids = np.full((1, 1), nxt, dtype=np.int64)
        state = {"past_keys": res["present_keys"], "past_values": res["present_values"]}
    return np.array(tokens, dtype=np.int64)


# ---------------------------------------------------------------- wrongs

def generate_no_cache(session, prompt_ids, n_new):
    seq = list(np.asarray(prompt_ids).tolist())
    for _ in range(n_new):
        empty = _empty_past(session)
        logits, _, _ = session.run(None, {"ids": np.array([seq], np.int64), "past_keys": empty, "past_values": empty})
        seq.append(int(logits[0, -1].argmax()))
    return seq[len(prompt_ids):]


def generate_no_cache_base_run(session, prompt_ids, n_new):
    import onnxruntime as ort
    seq = list(np.asarray(prompt_ids).tolist())
    for _ in range(n_new):
        empty = _empty_past(session)
        logits = ort.InferenceSession.run(session, ["logits"], {"ids": np.array([seq], np.int64),
                                                                 "past_keys": empty, "past_values": empty})[0]
        seq.append(int(logits[0, -1].argmax()))
    return seq[len(prompt_ids):]


def generate_no_cache_c_session(session, prompt_ids, n_new):
    seq = list(np.asarray(prompt_ids).tolist())
    for _ in range(n_new):
        empty = _empty_past(session)
        logits = session._sess.run(["logits"], {"ids": np.array([seq], np.int64), "past_keys": empty,
                                                "past_values": empty}, None)[0]
        seq.append(int(logits[0, -1].argmax()))
    return seq[len(prompt_ids):]


def generate_pytorch(session, prompt_ids, n_new):
    import torch

    from labkit.transformer import trained_gpt
    model = trained_gpt().eval()
    ids = torch.as_tensor(np.asarray(prompt_ids, dtype=np.int64))[None]
    new = []
    with torch.no_grad():
        for _ in range(n_new):
            out = model(ids)
            logits = out[0] if isinstance(out, tuple) else out
            t = int(logits[0, -1].argmax())
            new.append(t)
            ids = torch.cat([ids, torch.tensor([[t]])], dim=1)
    return new


def generate_with_prompt(session, prompt_ids, n_new):
    return list(np.asarray(prompt_ids).tolist()) + list(generate_named(session, prompt_ids, n_new))


def generate_first_position(session, prompt_ids, n_new):
    empty = _empty_past(session)
    feed = {"ids": np.asarray(prompt_ids, np.int64)[None], "past_keys": empty, "past_values": empty}
    new = []
    for _ in range(n_new):
        logits, pk, pv = session.run(None, feed)
        t = int(logits[0, 0].argmax())                 # the first position, not the last
        new.append(t)
        feed = {"ids": np.array([[t]], np.int64), "past_keys": pk, "past_values": pv}
    return new


def generate_one_short(session, prompt_ids, n_new):
    return generate_named(session, prompt_ids, n_new)[:-1] if n_new else []


def generate_one_extra(session, prompt_ids, n_new):
    return generate_named(session, prompt_ids, n_new + 1)


def generate_whole_sequence_with_past(session, prompt_ids, n_new):
    empty = _empty_past(session)
    seq = list(np.asarray(prompt_ids).tolist())
    logits, pk, pv = session.run(None, {"ids": np.array([seq], np.int64), "past_keys": empty, "past_values": empty})
    new = []
    for i in range(n_new):
        t = int(logits[0, -1].argmax())
        new.append(t)
        seq.append(t)
        if i + 1 < n_new:                              # the whole sequence again, on top of its own cache
            logits, pk, pv = session.run(None, {"ids": np.array([seq], np.int64), "past_keys": pk, "past_values": pv})
    return new


def generate_stale_past(session, prompt_ids, n_new):
    empty = _empty_past(session)
    logits, pk, pv = session.run(None, {"ids": np.asarray(prompt_ids, np.int64)[None], "past_keys": empty,
                                        "past_values": empty})
    prompt_k, prompt_v = pk, pv                        # never updated after the prompt
    new = []
    for i in range(n_new):
        t = int(logits[0, -1].argmax())
        new.append(t)
        if i + 1 < n_new:
            logits, _, _ = session.run(None, {"ids": np.array([[t]], np.int64), "past_keys": prompt_k,
                                              "past_values": prompt_v})
    return new


def generate_swapped_cache(session, prompt_ids, n_new):
    empty = _empty_past(session)
    feed = {"ids": np.asarray(prompt_ids, np.int64)[None], "past_keys": empty, "past_values": empty}
    new = []
    for _ in range(n_new):
        logits, pv, pk = session.run(None, feed)       # unpacked in the wrong order
        t = int(logits[0, -1].argmax())
        new.append(t)
        feed = {"ids": np.array([[t]], np.int64), "past_keys": pk, "past_values": pv}
    return new


def generate_sampling(session, prompt_ids, n_new):
    rng = np.random.default_rng(0)
    empty = _empty_past(session)
    feed = {"ids": np.asarray(prompt_ids, np.int64)[None], "past_keys": empty, "past_values": empty}
    new = []
    for _ in range(n_new):
        logits, pk, pv = session.run(None, feed)
        z = logits[0, -1].astype(np.float64)
        p = np.exp(z - z.max())
        p /= p.sum()
        t = int(rng.choice(len(p), p=p))               # samples instead of greedy
        new.append(t)
        feed = {"ids": np.array([[t]], np.int64), "past_keys": pk, "past_values": pv}
    return new


def generate_float_ids(session, prompt_ids, n_new):
    return np.asarray(generate_named(session, prompt_ids, n_new), dtype=np.float32)


def generate_repeat_first(session, prompt_ids, n_new):
    empty = _empty_past(session)
    logits, _, _ = session.run(None, {"ids": np.asarray(prompt_ids, np.int64)[None], "past_keys": empty,
                                      "past_values": empty})
    return [int(logits[0, -1].argmax())] * n_new      # one run, the first token repeated


CORPUS = {
    "09.generate": [
        Right("blind2-gen-named-io-list", answer=generate_named),
        Right("blind2-gen-prompt-token-by-token-array", answer=generate_token_by_token_prompt),
        Right("blind2-gen-dict-outputs-array", answer=generate_dict_outputs),
        Wrong("blind2-gen-no-cache", answer=generate_no_cache, skipped_skill=True),
        Wrong("blind2-gen-no-cache-base-class-run", answer=generate_no_cache_base_run, skipped_skill=True),
        Wrong("blind2-gen-no-cache-c-session", answer=generate_no_cache_c_session, skipped_skill=True),
        Wrong("blind2-gen-pytorch", answer=generate_pytorch, skipped_skill=True),
        Wrong("blind2-gen-returns-prompt-too", answer=generate_with_prompt),
        Wrong("blind2-gen-first-position", answer=generate_first_position),
        Wrong("blind2-gen-one-short", answer=generate_one_short),
        Wrong("blind2-gen-one-extra", answer=generate_one_extra),
        Wrong("blind2-gen-whole-sequence-with-past", answer=generate_whole_sequence_with_past),
        Wrong("blind2-gen-stale-prompt-past", answer=generate_stale_past),
        Wrong("blind2-gen-keys-values-swapped", answer=generate_swapped_cache),
        Wrong("blind2-gen-sampling", answer=generate_sampling),
        Wrong("blind2-gen-float-ids", answer=generate_float_ids, outputs_wrong=False),
        Wrong("blind2-gen-repeat-first-token", answer=generate_repeat_first),
    ],
}
