"""Blind corpus round 16, lesson 09 (written without seeing the judge).

Truths relied on (from the brief and from reading labkit.material.l09.export_for_genai + the public
labkit.transformer.GenaiLayout it exports): the graph's causal mask is by COLUMN (key column <= query
column + past), AND-ed with attention_mask over every key column; a masked score is -1e9, so a pad
query that sees no key gives a uniform row, not NaN; positions go through an embedding Gather (so any
in-range value, and even -1 via ONNX Gather's negative indexing, is harmless on a pad). So left padding,
right padding (gap columns kept at mask 0 for the rest of the run, new token at position len+k), a
one-column-at-a-time prefill, and a staggered "no padding at all" schedule all give the alone-greedy
tokens. Course model: 2 layers, 4 heads, head size 24, vocab 96, context 128.

Ambiguities noticed: (1) "one column at a time" prefill makes every prefill run after the first a
1-token run with a past: fine for the stated guard, but a staggered schedule (rows start generating
while longer rows are still reading their prompt, then rows truncated to n_new) also satisfies every
stated rule; is it Right? I marked it Right. (2) Are extra runs allowed, and must a later run's past be
the previous run's presents? The stated guard (row count, empty past, >1 token) lets through: a replay
that re-feeds all generated tokens one per run from the prefill's cache for every new token; and
one-prompt-per-batch schemes (tiled rows, equal-length groups) that dodge the "empty past" rule by
starting each later prefill from a 1-column zero past hidden by the mask. I marked all skipped_skill.
(3) The brief says the check's session offers run and run_with_ort_values
and get_inputs; it does not promise get_outputs; right_dims_from_outputs uses get_outputs (plain ORT
API) and will fail if the check's session is a proxy without it. (4) Float output with integral
values: "a list of lists of ints or an integer array" excludes it; marked outputs_wrong although the
numbers are the right ones. (5) Whether pad positions may be -1 (wraps in Gather) is unspecified;
right_pad_position_minus_one relies on it. (6) A memo across calls keyed on (batch size, n_new) is
only wrong from the second call on.
"""
from corpus import Right, Wrong


# ----------------------------------------------------------------------------------------- Right

def right_left_padded(session, prompts, n_new):
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
    lens = mask.sum(1)
    names = ["logits"] + [i.name.replace("past_key_values", "present") for i in pasts]
    cache = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    new = []
    x = ids
    for k in range(n_new):
        outs = session.run(names, {"input_ids": x, "attention_mask": mask, "position_ids": pos, **cache})
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
        cache = {i.name: o for i, o in zip(pasts, outs[1:])}
        x = tok[:, None]
        pos = (lens + k)[:, None]
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
    return [[int(t) for t in row] for row in np.stack(new, 1)]


def right_right_padded(session, prompts, n_new):
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    lens = np.array([len(p) for p in prompts], np.int64)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, :len(p)] = p
        mask[r, :len(p)] = 1
    pos = np.tile(np.arange(L, dtype=np.int64), (b, 1))
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    feed.update(input_ids=ids, attention_mask=mask, position_ids=pos)
    outs = session.run(None, feed)
    tok = outs[0][np.arange(b), lens - 1].argmax(-1).astype(np.int64)
    new = [tok]
    for k in range(1, n_new):
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)  # the gap stays 0
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        feed.update(input_ids=tok[:, None], attention_mask=mask, position_ids=(lens + k - 1)[:, None])
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
    return np.stack(new, 1)


def right_column_prefill(session, prompts, n_new):
    """Left padded, the prompt fed one column per run, int32 output."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    real = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        real[r, L - len(p):] = 1
    pos_all = np.maximum(np.cumsum(real, 1) - 1, 0)
    lens = real.sum(1)
    cache = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    out = np.zeros((b, n_new), np.int32)
    for c in range(L + n_new - 1):
        if c < L:
            x, pos = ids[:, c:c + 1], pos_all[:, c:c + 1]
            mask = real[:, :c + 1]
        else:
            x, pos = out[:, c - L:c - L + 1].astype(np.int64), (lens + c - L)[:, None]
            mask = np.concatenate([real, np.ones((b, c - L + 1), np.int64)], 1)
        outs = session.run(None, {"input_ids": x, "attention_mask": mask, "position_ids": pos, **cache})
        cache = {i.name: o for i, o in zip(pasts, outs[1:])}
        if c >= L - 1:
            out[:, c - L + 1] = outs[0][:, -1].argmax(-1)
    return out


def right_staggered_no_padding(session, prompts, n_new):
    """No pads at all: column c holds each row's c-th token, prompt or generated; every row starts
    generating when its own prompt ends, so short rows generate extra tokens that are cut off."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    seqs = [list(p) for p in prompts]
    cache = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    for c in range(L + n_new - 1):
        x = np.array([[s[c]] for s in seqs], np.int64)
        feed = {"input_ids": x, "attention_mask": np.ones((b, c + 1), np.int64),
                "position_ids": np.full((b, 1), c, np.int64), **cache}
        outs = session.run(None, feed)
        cache = {i.name: o for i, o in zip(pasts, outs[1:])}
        nxt = outs[0][:, -1].argmax(-1)
        for r, s in enumerate(seqs):
            if len(s) == c + 1:
                s.append(int(nxt[r]))
    return [s[len(p):len(p) + n_new] for s, p in zip(seqs, prompts)]


def right_ort_values(session, prompts, n_new):
    """run_with_ort_values; the presents stay OrtValues and go straight back in as the pasts."""
    import numpy as np
    import onnxruntime as ort
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    ov = ort.OrtValue.ortvalue_from_numpy
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
    lens = mask.sum(1)
    names = ["logits"] + [i.name.replace("past_key_values", "present") for i in pasts]
    cache = {i.name: ov(np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32)) for i in pasts}
    x, new = ids, []
    for k in range(n_new):
        feed = {"input_ids": ov(np.ascontiguousarray(x)), "attention_mask": ov(mask),
                "position_ids": ov(np.ascontiguousarray(pos)), **cache}
        outs = session.run_with_ort_values(names, feed)
        tok = outs[0].numpy()[:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
        cache = dict(zip((i.name for i in pasts), outs[1:]))
        x, pos = tok[:, None], (lens + k)[:, None]
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
    return np.stack(new, 1).tolist()


def right_dims_from_outputs(session, prompts, n_new):
    """Layer count, heads and head size from get_outputs' present shapes; pads are the '~' token."""
    import numpy as np
    presents = [o for o in session.get_outputs() if o.name.startswith("present.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.full((b, L), 94, np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.where(mask == 1, np.cumsum(mask, 1) - 1, 0)
    feed = {o.name.replace("present", "past_key_values"): np.zeros((b, o.shape[1], 0, o.shape[3]),
                                                                   np.float32) for o in presents}
    names = ["logits"] + [o.name for o in presents]
    x, new = ids, []
    for k in range(n_new):
        feed.update(input_ids=x, attention_mask=mask, position_ids=pos)
        logits, *pres = session.run(names, feed)
        tok = logits[:, -1].argmax(-1)
        new.append(tok)
        feed = {o.name.replace("present", "past_key_values"): v for o, v in zip(presents, pres)}
        x = tok.reshape(b, 1).astype(np.int64)
        pos = pos[:, -1:] + 1
        mask = np.pad(mask, ((0, 0), (0, 1)), constant_values=1)
    return np.array(new, np.int64).T


def right_pad_position_minus_one(session, prompts, n_new):
    """Left padded; pads get position -1 (cumsum - 1 unclipped): a pad's position only reaches keys that
    the mask hides, and ONNX Gather takes -1 as the last row."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.cumsum(mask, 1) - 1
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    x, new = ids, []
    for _ in range(n_new):
        feed.update(input_ids=x, attention_mask=mask, position_ids=pos)
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        x, pos = tok[:, None], pos[:, -1:] + 1
        mask = np.hstack([mask, np.ones((b, 1), np.int64)])
    return np.column_stack(new)


def right_sorted_and_restored(session, prompts, n_new):
    """Sorts the rows by length (longest first), right pads, and puts the rows back in order."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    order = sorted(range(len(prompts)), key=lambda r: -len(prompts[r]))
    ps = [prompts[r] for r in order]
    b, L = len(ps), len(ps[0])
    lens = np.array([len(p) for p in ps])
    ids = np.zeros((b, L), np.int64)
    mask = (np.arange(L)[None] < lens[:, None]).astype(np.int64)
    for r, p in enumerate(ps):
        ids[r, :len(p)] = p
    pos = np.tile(np.arange(L, dtype=np.int64), (b, 1)) * mask
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    feed.update(input_ids=ids, attention_mask=mask, position_ids=pos)
    outs = session.run(None, feed)
    got = np.empty((b, n_new), np.int64)
    got[:, 0] = outs[0][np.arange(b), lens - 1].argmax(-1)
    for k in range(1, n_new):
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        feed.update(input_ids=got[:, k - 1:k], attention_mask=mask,
                    position_ids=(lens + k - 1)[:, None].astype(np.int64))
        outs = session.run(None, feed)
        got[:, k] = outs[0][:, 0].argmax(-1)
    result = [None] * b
    for r, src in enumerate(order):
        result[src] = [int(t) for t in got[r]]
    return result


# ---------------------------------------------------------------------------- Wrong: mistakes
# Each answer is self-contained; most repeat the left-padded loop with one change.

def wrong_no_mask(session, prompts, n_new):
    """Pads the batch on the left and treats the rectangle as text: mask of ones, positions = columns."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    x, new = ids, []
    for k in range(n_new):
        t = L + k
        feed.update(input_ids=x, attention_mask=np.ones((b, t), np.int64),
                    position_ids=np.tile(np.arange(t - x.shape[1], t, dtype=np.int64), (b, 1)))
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        x = tok[:, None]
    return np.stack(new, 1)


def wrong_mask_ones(session, prompts, n_new):
    """Left padded, positions right, but an all-ones mask: the pads are attended."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    real = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        real[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(real, 1) - 1, 0)
    lens = real.sum(1)
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    x, new = ids, []
    for k in range(n_new):
        feed.update(input_ids=x, attention_mask=np.ones((b, L + k), np.int64), position_ids=pos)
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        x, pos = tok[:, None], (lens + k)[:, None]
    return np.stack(new, 1)


def wrong_decode_mask_one_column(session, prompts, n_new):
    """Right prefill; in the decode runs the mask is (batch, 1) for the new token only (it forgets the
    past columns; the graph broadcasts it over every key, so the pads come back)."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
    lens = mask.sum(1)
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    x, new = ids, []
    for k in range(n_new):
        feed.update(input_ids=x, attention_mask=mask, position_ids=pos)
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        x, pos = tok[:, None], (lens + k)[:, None]
        mask = np.ones((b, 1), np.int64)
    return np.stack(new, 1)


def wrong_decode_mask_ones(session, prompts, n_new):
    """Right prefill; the decode runs get an all-ones mask over past + new (pads forgotten)."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
    lens = mask.sum(1)
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    x, new = ids, []
    for k in range(n_new):
        feed.update(input_ids=x, attention_mask=mask, position_ids=pos)
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        x, pos = tok[:, None], (lens + k)[:, None]
        mask = np.ones((b, L + k + 1), np.int64)
    return np.stack(new, 1)


def wrong_generated_masked(session, prompts, n_new):
    """The decode mask is the prompt mask + zeros for earlier new tokens + 1 for the current one."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    real = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        real[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(real, 1) - 1, 0)
    lens = real.sum(1)
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    x, mask, new = ids, real, []
    for k in range(n_new):
        feed.update(input_ids=x, attention_mask=mask, position_ids=pos)
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        x, pos = tok[:, None], (lens + k)[:, None]
        mask = np.concatenate([real, np.zeros((b, k), np.int64), np.ones((b, 1), np.int64)], 1)
    return np.stack(new, 1)


def wrong_positions_count_pads(session, prompts, n_new):
    """Left padded, mask right, positions = column index (pads counted)."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.tile(np.arange(L, dtype=np.int64), (b, 1))
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    x, new = ids, []
    for k in range(n_new):
        feed.update(input_ids=x, attention_mask=mask, position_ids=pos)
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        x, pos = tok[:, None], np.full((b, 1), L + k, np.int64)
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
    return np.stack(new, 1)


def wrong_positions_from_one(session, prompts, n_new):
    """Left padded, mask right, positions count real tokens from 1."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.cumsum(mask, 1)
    lens = mask.sum(1)
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    x, new = ids, []
    for k in range(n_new):
        feed.update(input_ids=x, attention_mask=mask, position_ids=pos)
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        x, pos = tok[:, None], (lens + k + 1)[:, None]
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
    return np.stack(new, 1)


def wrong_decode_positions_one_ahead(session, prompts, n_new):
    """Right prefill; the first new token fed back gets position len + 1 instead of len."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
    lens = mask.sum(1)
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    x, new = ids, []
    for k in range(n_new):
        feed.update(input_ids=x, attention_mask=mask, position_ids=pos)
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        x, pos = tok[:, None], (lens + k + 1)[:, None]
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
    return np.stack(new, 1)


def wrong_right_pad_last_column(session, prompts, n_new):
    """Right padded with a right mask and positions, but every row's first token is read from the
    last column (a pad for the shorter rows)."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    lens = np.array([len(p) for p in prompts], np.int64)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, :len(p)] = p
        mask[r, :len(p)] = 1
    pos = np.tile(np.arange(L, dtype=np.int64), (b, 1))
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    x, new = ids, []
    for k in range(n_new):
        feed.update(input_ids=x, attention_mask=mask, position_ids=pos)
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        x, pos = tok[:, None], (lens + k)[:, None]
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
    return np.stack(new, 1)


def wrong_right_pad_gap_unmasked(session, prompts, n_new):
    """Right padded, first token read at len-1, but the decode mask is all ones: the gap of pads between
    a short prompt and its new tokens is attended."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    lens = np.array([len(p) for p in prompts], np.int64)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, :len(p)] = p
        mask[r, :len(p)] = 1
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    feed.update(input_ids=ids, attention_mask=mask, position_ids=np.tile(np.arange(L), (b, 1)))
    outs = session.run(None, feed)
    tok = outs[0][np.arange(b), lens - 1].argmax(-1).astype(np.int64)
    new = [tok]
    for k in range(1, n_new):
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        feed.update(input_ids=tok[:, None], attention_mask=np.ones((b, L + k), np.int64),
                    position_ids=(lens + k - 1)[:, None])
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
    return np.stack(new, 1)


def wrong_right_pad_positions_columns(session, prompts, n_new):
    """Right padded, right mask, first token at len-1, but the new tokens get the column index as
    position (L, L+1, ... for every row)."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    lens = np.array([len(p) for p in prompts], np.int64)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, :len(p)] = p
        mask[r, :len(p)] = 1
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    feed.update(input_ids=ids, attention_mask=mask, position_ids=np.tile(np.arange(L), (b, 1)))
    outs = session.run(None, feed)
    tok = outs[0][np.arange(b), lens - 1].argmax(-1).astype(np.int64)
    new = [tok]
    for k in range(1, n_new):
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        feed.update(input_ids=tok[:, None], attention_mask=mask,
                    position_ids=np.full((b, 1), L + k - 1, np.int64))
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
    return np.stack(new, 1)


def wrong_left_pad_read_at_len(session, prompts, n_new):
    """Left padded (right mask and positions) but the first token is read at column len-1, as for
    right padding."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
    lens = mask.sum(1)
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    feed.update(input_ids=ids, attention_mask=mask, position_ids=pos)
    outs = session.run(None, feed)
    tok = outs[0][np.arange(b), lens - 1].argmax(-1).astype(np.int64)
    new = [tok]
    for k in range(1, n_new):
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        feed.update(input_ids=tok[:, None], attention_mask=mask, position_ids=(lens + k - 1)[:, None])
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
    return np.stack(new, 1)


def wrong_stale_cache(session, prompts, n_new):
    """Keeps feeding the prefill's presents: the cache is never updated with the new tokens."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
    lens = mask.sum(1)
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    feed.update(input_ids=ids, attention_mask=mask, position_ids=pos)
    outs = session.run(None, feed)
    cache = {i.name: o for i, o in zip(pasts, outs[1:])}
    tok = outs[0][:, -1].argmax(-1).astype(np.int64)
    new = [tok]
    for k in range(1, n_new):
        m = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
        outs = session.run(None, {"input_ids": tok[:, None], "attention_mask": m,
                                  "position_ids": (lens + k - 1)[:, None], **cache})
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
    return np.stack(new, 1)


def wrong_cache_names_misordered(session, prompts, n_new):
    """Builds the past names all keys first, then all values, and zips them with the outputs, which
    come layer by layer (key, value): value.0 gets layer 1's keys, and so on. Shapes match, so it runs."""
    import numpy as np
    ins = session.get_inputs()
    n_layer = sum(1 for i in ins if i.name.endswith(".key"))
    first = next(i for i in ins if i.name.startswith("past_key_values."))
    heads, size = first.shape[1], first.shape[3]
    names = ([f"past_key_values.{i}.key" for i in range(n_layer)]
             + [f"past_key_values.{i}.value" for i in range(n_layer)])
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
    lens = mask.sum(1)
    feed = {n: np.zeros((b, heads, 0, size), np.float32) for n in names}
    x, new = ids, []
    for k in range(n_new):
        feed.update(input_ids=x, attention_mask=mask, position_ids=pos)
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
        feed = dict(zip(names, outs[1:]))
        x, pos = tok[:, None], (lens + k)[:, None]
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
    return np.stack(new, 1)


def wrong_n_new_minus_one(session, prompts, n_new):
    """Counts the prefill's token as a step too many: returns n_new - 1 new tokens per row."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
    lens = mask.sum(1)
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    feed.update(input_ids=ids, attention_mask=mask, position_ids=pos)
    outs = session.run(None, feed)
    tok = outs[0][:, -1].argmax(-1).astype(np.int64)
    new = []
    for k in range(1, n_new):
        new.append(tok)
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        feed.update(input_ids=tok[:, None], attention_mask=mask, position_ids=(lens + k - 1)[:, None])
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
    return [[int(t) for t in row] for row in (np.stack(new, 1) if new else np.zeros((b, 0), int))]


def wrong_n_new_plus_one(session, prompts, n_new):
    """Runs the prefill and then n_new decode steps: n_new + 1 new tokens per row."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
    lens = mask.sum(1)
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    feed.update(input_ids=ids, attention_mask=mask, position_ids=pos)
    outs = session.run(None, feed)
    tok = outs[0][:, -1].argmax(-1).astype(np.int64)
    new = [tok]
    for k in range(1, n_new + 1):
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        feed.update(input_ids=tok[:, None], attention_mask=mask, position_ids=(lens + k - 1)[:, None])
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
    return np.stack(new, 1)


def wrong_with_prompt(session, prompts, n_new):
    """Right generation, but each row returned is the prompt followed by its new tokens."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
    lens = mask.sum(1)
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    x, rows = ids, [list(p) for p in prompts]
    for k in range(n_new):
        feed.update(input_ids=x, attention_mask=mask, position_ids=pos)
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        for r in range(b):
            rows[r].append(int(tok[r]))
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        x, pos = tok[:, None], (lens + k)[:, None]
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
    return rows


def wrong_sorted_not_restored(session, prompts, n_new):
    """Sorts the prompts by length to batch them and returns the rows in the sorted order."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    ps = sorted(prompts, key=len)
    b, L = len(ps), len(ps[-1])
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(ps):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
    lens = mask.sum(1)
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    x, new = ids, []
    for k in range(n_new):
        feed.update(input_ids=x, attention_mask=mask, position_ids=pos)
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        x, pos = tok[:, None], (lens + k)[:, None]
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
    return np.stack(new, 1)


def wrong_float_output(session, prompts, n_new):
    """Right tokens collected into a float32 array (the values are integral)."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
    lens = mask.sum(1)
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    out = np.zeros((b, n_new), np.float32)
    x = ids
    for k in range(n_new):
        feed.update(input_ids=x, attention_mask=mask, position_ids=pos)
        outs = session.run(None, feed)
        out[:, k] = outs[0][:, -1].argmax(-1)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        x, pos = out[:, k:k + 1].astype(np.int64), (lens + k)[:, None]
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
    return out


def wrong_transposed(session, prompts, n_new):
    """Right tokens, returned step by step: shape (n_new, len(prompts))."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
    lens = mask.sum(1)
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    x, steps = ids, []
    for k in range(n_new):
        feed.update(input_ids=x, attention_mask=mask, position_ids=pos)
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        steps.append([int(t) for t in tok])
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        x, pos = tok[:, None], (lens + k)[:, None]
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
    return steps


def wrong_hardcoded_dims(session, prompts, n_new):
    """Heads and head size hard-coded as 2 x 48 (d_model 96 split the wrong way) for the empty pasts."""
    import numpy as np
    b, L = len(prompts), max(len(p) for p in prompts)
    names = [f"past_key_values.{i}.{kv}" for i in range(2) for kv in ("key", "value")]
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
    lens = mask.sum(1)
    feed = {n: np.zeros((b, 2, 0, 48), np.float32) for n in names}
    x, new = ids, []
    for k in range(n_new):
        feed.update(input_ids=x, attention_mask=mask, position_ids=pos)
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
        feed = dict(zip(names, outs[1:]))
        x, pos = tok[:, None], (lens + k)[:, None]
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
    return np.stack(new, 1)


def wrong_memo_by_shape(session, prompts, n_new):
    """Right batched generation, memoised across calls under (batch size, n_new): a later call with
    other prompts of the same count gets the stale rows."""
    import numpy as np
    memo = np.__dict__.setdefault("_blind16_memo", {})  # survives across calls in one process
    key = (len(prompts), n_new)
    if key in memo:
        return memo[key]
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    mask = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        mask[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
    lens = mask.sum(1)
    feed = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    x, new = ids, []
    for k in range(n_new):
        feed.update(input_ids=x, attention_mask=mask, position_ids=pos)
        outs = session.run(None, feed)
        tok = outs[0][:, -1].argmax(-1).astype(np.int64)
        new.append(tok)
        feed = {i.name: o for i, o in zip(pasts, outs[1:])}
        x, pos = tok[:, None], (lens + k)[:, None]
        mask = np.concatenate([mask, np.ones((b, 1), np.int64)], 1)
    memo[key] = np.stack(new, 1)
    return memo[key]


# ------------------------------------------------------------- Wrong: shortcuts around the skill

def wrong_one_by_one(session, prompts, n_new):
    """Each prompt alone (batch of 1) with the cache: no padding, no mask problem."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    result = []
    for p in prompts:
        n = len(p)
        feed = {i.name: np.zeros((1, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
        feed.update(input_ids=np.array([p], np.int64), attention_mask=np.ones((1, n), np.int64),
                    position_ids=np.arange(n, dtype=np.int64)[None])
        row = []
        for k in range(n_new):
            outs = session.run(None, feed)
            row.append(int(outs[0][0, -1].argmax()))
            feed = {i.name: o for i, o in zip(pasts, outs[1:])}
            feed.update(input_ids=np.array([[row[-1]]], np.int64),
                        attention_mask=np.ones((1, n + k + 1), np.int64),
                        position_ids=np.array([[n + k]], np.int64))
        result.append(row)
    return result


def wrong_no_cache(session, prompts, n_new):
    """Batched, left padded, right mask and positions, but every step reruns the whole sequences with
    an empty past."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b = len(prompts)
    empty = {i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
    seqs = [list(p) for p in prompts]
    for _ in range(n_new):
        L = max(len(s) for s in seqs)
        ids = np.zeros((b, L), np.int64)
        mask = np.zeros((b, L), np.int64)
        for r, s in enumerate(seqs):
            ids[r, L - len(s):] = s
            mask[r, L - len(s):] = 1
        pos = np.maximum(np.cumsum(mask, 1) - 1, 0)
        logits = session.run(["logits"], {"input_ids": ids, "attention_mask": mask,
                                          "position_ids": pos, **empty})[0]
        for r, t in enumerate(logits[:, -1].argmax(-1)):
            seqs[r].append(int(t))
    return [s[len(p):] for s, p in zip(seqs, prompts)]


def wrong_tiled_rows(session, prompts, n_new):
    """Each prompt alone, copied into every row so each run has the batch's row count; after the very
    first run every prompt is fed one column per run from a 1-column zero past hidden by the mask, so no
    later run has an empty past or more than one token. Padding and the mask skill are avoided."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b = len(prompts)
    result = []
    for j, p in enumerate(prompts):
        n, w = len(p), (0 if j == 0 else 1)
        cache = {i.name: np.zeros((b, i.shape[1], w, i.shape[3]), np.float32) for i in pasts}
        seq = list(p)
        for c in range(n + n_new - 1):
            outs = session.run(None, {"input_ids": np.full((b, 1), seq[c], np.int64),
                                      "attention_mask": np.concatenate(
                                          [np.zeros((b, w), np.int64), np.ones((b, c + 1), np.int64)], 1),
                                      "position_ids": np.full((b, 1), c, np.int64), **cache})
            cache = {i.name: o for i, o in zip(pasts, outs[1:])}
            if c >= n - 1:
                seq.append(int(outs[0][0, -1].argmax()))
        result.append(seq[n:])
    return result


def wrong_length_groups(session, prompts, n_new):
    """Groups prompts of equal length and runs each group filled up to the batch's row count with
    copies of its first row, one column per run: every run is a rectangle of real tokens, so no pad, no
    mask skill (groups after the first start from a 1-column zero past hidden by the mask)."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b = len(prompts)
    result = [None] * b
    groups = {}
    for r, p in enumerate(prompts):
        groups.setdefault(len(p), []).append(r)
    for g, (n, rows) in enumerate(groups.items()):
        seqs = [list(prompts[r]) for r in rows + [rows[0]] * (b - len(rows))]
        w = 0 if g == 0 else 1
        cache = {i.name: np.zeros((b, i.shape[1], w, i.shape[3]), np.float32) for i in pasts}
        for c in range(n + n_new - 1):
            outs = session.run(None, {"input_ids": np.array([[s[c]] for s in seqs], np.int64),
                                      "attention_mask": np.concatenate(
                                          [np.zeros((b, w), np.int64), np.ones((b, c + 1), np.int64)], 1),
                                      "position_ids": np.full((b, 1), c, np.int64), **cache})
            cache = {i.name: o for i, o in zip(pasts, outs[1:])}
            if c >= n - 1:
                for s, t in zip(seqs, outs[0][:, -1].argmax(-1)):
                    s.append(int(t))
        for j, r in enumerate(rows):
            result[r] = seqs[j][n:n + n_new]
    return result


def wrong_replay_from_prefill(session, prompts, n_new):
    """Left padded, right mask and positions, but only the prefill's presents are ever kept: for every
    new token it replays all tokens generated so far, one per run, from the prompt's cache. No later run
    has an empty past or more than one token, yet the previous run's presents are thrown away."""
    import numpy as np
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    b, L = len(prompts), max(len(p) for p in prompts)
    ids = np.zeros((b, L), np.int64)
    real = np.zeros((b, L), np.int64)
    for r, p in enumerate(prompts):
        ids[r, L - len(p):] = p
        real[r, L - len(p):] = 1
    pos = np.maximum(np.cumsum(real, 1) - 1, 0)
    lens = real.sum(1)
    outs = session.run(None, {"input_ids": ids, "attention_mask": real, "position_ids": pos,
                              **{i.name: np.zeros((b, i.shape[1], 0, i.shape[3]), np.float32)
                                 for i in pasts}})
    prompt_cache = {i.name: o for i, o in zip(pasts, outs[1:])}
    new = [outs[0][:, -1].argmax(-1).astype(np.int64)]
    for k in range(1, n_new):
        cache = prompt_cache
        for j in range(k):
            mask = np.concatenate([real, np.ones((b, j + 1), np.int64)], 1)
            outs = session.run(None, {"input_ids": new[j][:, None], "attention_mask": mask,
                                      "position_ids": (lens + j)[:, None], **cache})
            cache = {i.name: o for i, o in zip(pasts, outs[1:])}
        new.append(outs[0][:, -1].argmax(-1).astype(np.int64))
    return np.stack(new, 1)


def wrong_fresh_session(session, prompts, n_new):
    """Builds a private InferenceSession from the given one's model path or bytes and generates each
    prompt alone on it (batch of 1) where no check watches."""
    import numpy as np
    import onnxruntime as ort
    src = getattr(session, "_model_path", None) or getattr(session, "_model_bytes", None)
    mine = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    pasts = [i for i in mine.get_inputs() if i.name.startswith("past_key_values.")]
    result = []
    for p in prompts:
        n = len(p)
        feed = {i.name: np.zeros((1, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
        feed.update(input_ids=np.array([p], np.int64), attention_mask=np.ones((1, n), np.int64),
                    position_ids=np.arange(n, dtype=np.int64)[None])
        row = []
        for k in range(n_new):
            outs = mine.run(None, feed)
            tok = int(outs[0][0, -1].argmax())
            row.append(tok)
            feed = {i.name: o for i, o in zip(pasts, outs[1:])}
            feed.update(input_ids=np.array([[tok]], np.int64), attention_mask=np.ones((1, n + k + 1), np.int64),
                        position_ids=np.array([[n + k]], np.int64))
        result.append(row)
    return result


def wrong_unwrap_session(session, prompts, n_new):
    """Looks inside the session object for an inner object with a run method (a wrapped session, or
    ORT's C-level _sess) and generates each prompt alone through it, around any guard."""
    import numpy as np
    inner = None
    for name in ("_sess", "sess", "session", "_session", "inner", "_inner", "wrapped", "_wrapped", "_s"):
        cand = getattr(session, name, None)
        if cand is not None and cand is not session and hasattr(cand, "run"):
            inner = cand
            break
    if inner is None:
        for cand in vars(session).values():
            if cand is not session and hasattr(cand, "run"):
                inner = cand
                break

    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    names = ["logits"] + [i.name.replace("past_key_values", "present") for i in pasts]

    def run(feed):
        try:
            return inner.run(names, feed, None)  # ORT's C-level _sess.run(names, feed, run_options)
        except TypeError:
            return inner.run(names, feed)

    heads, size = pasts[0].shape[1], pasts[0].shape[3]
    result = []
    for p in prompts:
        n = len(p)
        feed = {i.name: np.zeros((1, heads, 0, size), np.float32) for i in pasts}
        feed.update(input_ids=np.array([p], np.int64), attention_mask=np.ones((1, n), np.int64),
                    position_ids=np.arange(n, dtype=np.int64)[None])
        row = []
        for k in range(n_new):
            outs = run(feed)
            tok = int(outs[0][0, -1].argmax())
            row.append(tok)
            feed = {i.name: o for i, o in zip(pasts, outs[1:])}
            feed.update(input_ids=np.array([[tok]], np.int64), attention_mask=np.ones((1, n + k + 1), np.int64),
                        position_ids=np.array([[n + k]], np.int64))
        result.append(row)
    return result


def wrong_relax_guard(session, prompts, n_new):
    """Sets every int attribute of the session that equals the batch size to 1 and every bool
    attribute to False (hoping to switch a row-count guard off), then generates each prompt alone."""
    import numpy as np
    try:
        for name, val in list(vars(session).items()):
            if isinstance(val, bool):
                setattr(session, name, False) if val else None
            elif isinstance(val, int) and val == len(prompts):
                setattr(session, name, 1)
    except TypeError:
        pass
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    result = []
    for p in prompts:
        n = len(p)
        feed = {i.name: np.zeros((1, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
        feed.update(input_ids=np.array([p], np.int64), attention_mask=np.ones((1, n), np.int64),
                    position_ids=np.arange(n, dtype=np.int64)[None])
        row = []
        for k in range(n_new):
            outs = session.run(None, feed)
            tok = int(outs[0][0, -1].argmax())
            row.append(tok)
            feed = {i.name: o for i, o in zip(pasts, outs[1:])}
            feed.update(input_ids=np.array([[tok]], np.int64), attention_mask=np.ones((1, n + k + 1), np.int64),
                        position_ids=np.array([[n + k]], np.int64))
        result.append(row)
    return result


def wrong_peek_caller(session, prompts, n_new):
    """Walks up the calling frames (via a caught exception's traceback, no import) for any local that
    already holds (len(prompts), n_new) integers (the check's expected answer) and returns it; else
    generates each prompt alone."""
    import numpy as np
    b = len(prompts)
    try:
        raise RuntimeError
    except RuntimeError as e:
        frame = e.__traceback__.tb_frame.f_back
    while frame is not None:
        for name, val in list(frame.f_locals.items()):
            if val is prompts or name in ("session", "prompts", "n_new"):
                continue
            try:
                arr = np.asarray(val)
            except Exception:
                continue
            if arr.shape == (b, n_new) and arr.dtype.kind in "iu":
                return arr.astype(np.int64)
        frame = frame.f_back
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    result = []
    for p in prompts:
        n = len(p)
        feed = {i.name: np.zeros((1, i.shape[1], 0, i.shape[3]), np.float32) for i in pasts}
        feed.update(input_ids=np.array([p], np.int64), attention_mask=np.ones((1, n), np.int64),
                    position_ids=np.arange(n, dtype=np.int64)[None])
        row = []
        for k in range(n_new):
            outs = session.run(None, feed)
            row.append(int(outs[0][0, -1].argmax()))
            feed = {i.name: o for i, o in zip(pasts, outs[1:])}
            feed.update(input_ids=np.array([[row[-1]]], np.int64),
                        attention_mask=np.ones((1, n + k + 1), np.int64),
                        position_ids=np.array([[n + k]], np.int64))
        result.append(row)
    return result


CORPUS = {"09.batch_generate": [
    Right("left padded, mask and positions, one prefill run, list of lists",
          answer=right_left_padded),
    Right("right padded, first token read at len-1, gap kept at mask 0, int64 array",
          answer=right_right_padded),
    Right("left padded, prompt fed one column per run, int32 array", answer=right_column_prefill),
    Right("staggered columns, no padding, all-ones mask, rows truncated to n_new",
          answer=right_staggered_no_padding),
    Right("run_with_ort_values, presents fed back as OrtValues", answer=right_ort_values),
    Right("dims and present names from get_outputs, '~' as pad token", answer=right_dims_from_outputs),
    Right("pads at position -1 (Gather wraps, the key is masked)", answer=right_pad_position_minus_one),
    Right("sorted by length, right padded, order restored", answer=right_sorted_and_restored),

    Wrong("no mask: pads read as text, positions = columns", answer=wrong_no_mask, outputs_wrong=True),
    Wrong("mask of ones, positions right", answer=wrong_mask_ones, outputs_wrong=True),
    Wrong("decode mask (batch, 1): forgets the past columns", answer=wrong_decode_mask_one_column,
          outputs_wrong=True),
    Wrong("decode mask all ones over past + new", answer=wrong_decode_mask_ones, outputs_wrong=True),
    Wrong("decode mask hides the earlier generated tokens", answer=wrong_generated_masked,
          outputs_wrong=True),
    Wrong("positions count the pads (left padded)", answer=wrong_positions_count_pads, outputs_wrong=True),
    Wrong("positions start at 1", answer=wrong_positions_from_one, outputs_wrong=True),
    Wrong("decode positions one ahead (len + 1)", answer=wrong_decode_positions_one_ahead,
          outputs_wrong=True),
    Wrong("right padded, first token read from the last column", answer=wrong_right_pad_last_column,
          outputs_wrong=True),
    Wrong("right padded, the gap unmasked in the decode runs", answer=wrong_right_pad_gap_unmasked,
          outputs_wrong=True),
    Wrong("right padded, new tokens positioned at the column index",
          answer=wrong_right_pad_positions_columns, outputs_wrong=True),
    Wrong("left padded but first token read at len-1", answer=wrong_left_pad_read_at_len, outputs_wrong=True),
    Wrong("cache never updated (prefill presents reused)", answer=wrong_stale_cache, outputs_wrong=True),
    Wrong("past names keys-then-values zipped with layer-ordered presents", answer=wrong_cache_names_misordered,
          outputs_wrong=True),
    Wrong("n_new - 1 tokens", answer=wrong_n_new_minus_one, outputs_wrong=True),
    Wrong("n_new + 1 tokens", answer=wrong_n_new_plus_one, outputs_wrong=True),
    Wrong("prompt tokens returned too", answer=wrong_with_prompt, outputs_wrong=True),
    Wrong("sorted by length, order not restored", answer=wrong_sorted_not_restored, outputs_wrong=True),
    Wrong("float32 output (integral values)", answer=wrong_float_output, outputs_wrong=True),
    Wrong("transposed: (n_new, batch)", answer=wrong_transposed, outputs_wrong=True),
    Wrong("dims hard-coded 2 heads x 48 (raises)", answer=wrong_hardcoded_dims, outputs_wrong=True),
    Wrong("memo across calls keyed on (batch size, n_new)", answer=wrong_memo_by_shape, outputs_wrong=True),

    Wrong("one prompt at a time, batch of 1", answer=wrong_one_by_one, skipped_skill=True),
    Wrong("no cache: whole padded batch rerun with an empty past", answer=wrong_no_cache, skipped_skill=True),
    Wrong("each prompt alone tiled to the batch's row count, 1-column masked dummy past to dodge",
          answer=wrong_tiled_rows, skipped_skill=True),
    Wrong("equal-length groups filled with duplicate rows, 1-column masked dummy past to dodge",
          answer=wrong_length_groups, skipped_skill=True),
    Wrong("replay: generated tokens re-fed one per run from the prefill's cache every step",
          answer=wrong_replay_from_prefill, skipped_skill=True),
    Wrong("private InferenceSession from session._model_path/_model_bytes, batch of 1",
          answer=wrong_fresh_session, skipped_skill=True),
    Wrong("unwraps the session (inner .run / _sess), batch of 1", answer=wrong_unwrap_session,
          skipped_skill=True),
    Wrong("flips the session's int/bool attributes, batch of 1", answer=wrong_relax_guard, skipped_skill=True),
    Wrong("reads the expected answer from the caller's frames", answer=wrong_peek_caller, skipped_skill=True),
]}
