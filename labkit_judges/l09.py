"""Lesson 09 exercise specs (what the learner sees, references, test inputs, quiz answers): export a transformer with dynamic
shapes, greedy generation with the key/value cache, a batch of prompts of different lengths, perplexity.

Conventions (the notebook's prompts state the same, the judges below enforce them):

* ``export_dynamic(model)`` gets a small TinyGPT with random weights (``labkit.material.l09.random_gpt``)
  whose ``forward(ids)`` returns logits, and returns its ONNX export (a ModelProto, bytes or a path) with one
  int64 input (batch, sequence) and the logits as first output. The judge runs it with ONNX Runtime at batch
  sizes and lengths the learner never saw and compares with a numpy forward pass of the same weights.
* ``generate(session, prompt_ids, n_new)`` gets the course decoder with its cache clipped
  (``labkit.material.l09.cache_decoder``) and returns the ``n_new`` greedily chosen next tokens as ints. Using the
  cache is judged by what it produces, not by a method an answer could call around: the session stores its present
  keys and values clipped to ``CACHE_CLIP``, so the prompt once and then each new token with the past gives other
  tokens than the whole sequence rerun (by this session, another one, or PyTorch), and only the former are right.
  An answer whose tokens are the rerun's did not do the exercise (``DidNotDo``). Expected tokens come from a
  numpy forward pass of the shipped weights with the same clipped cache; where the two best logits are closer
  than ``TIE`` the rest of the sequence is not compared (float sums in another order could pick either).
* ``batched_generate(session, prompts, n_new)`` gets the course model in the genai layout
  (``labkit.material.l09.cache_decoder("genai", len(prompts))``, cache kept as it is) and a list of prompts of
  different lengths, and returns each prompt's ``n_new`` greedy new tokens (a list of lists or an integer array of
  shape (len(prompts), n_new)). Each row must be its prompt's continuation alone (a numpy pass through the cache,
  up to a near tie, ``TIE``). The process is the session's to enforce: every run takes the whole batch, and every
  run after the first reads a past and feeds one new token per row, so each prompt alone in a loop and a batch
  rerun without the cache are refused there (the judge reads its refusals and yields ``DidNotDo``). A mask that lets
  the pads be attended, positions that count them, and the last column read as every row's newest token on a batch
  padded on the right give other tokens on the hidden batches, which mix a one-token prompt, two prompts of one
  length, five prompts and a batch of one.
* ``perplexity(logits, targets)`` returns ``exp(mean(-log softmax(logits)[i, targets[i]]))`` as a float.
"""
from __future__ import annotations

import functools

import re

import numpy as np

from labkit.checks import DidNotDo, Question, TestResult, error_line, exercise, load_onnx, ort_session, quiz
from labkit.material.l09 import CACHE_CLIP, NO_CACHE as REFUSED_NO_CACHE, NOT_THE_BATCH
from labkit import plain
from labkit.plain import Make, Raised
from labkit.transformer import CONTEXT, course_weights, encode, heldout_text, random_state

# ---------------------------------------------------------------- a numpy reference of TinyGPT


def _layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def _gelu(x):
    from scipy.special import erf

    return 0.5 * x * (1 + erf(x / np.sqrt(2)))


def forward(state: dict[str, np.ndarray], ids: np.ndarray, n_head: int) -> np.ndarray:
    """Logits (batch, seq, vocab) of a TinyGPT given by its state dict, in float64 numpy."""
    return forward_cached(state, ids, n_head)[0]


def forward_cached(state: dict[str, np.ndarray], ids: np.ndarray, n_head: int, past_keys=None, past_values=None,
                   clip: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Logits (batch, seq, vocab) and present keys and values (n_layer, batch, head, past + seq, head_dim) of a
    TinyGPT run on `ids` after a past, in float64 numpy: the course decoder's graph. With `clip`, the present
    keys and values come out clipped to [-clip, clip], as the check's decoder stores its cache."""
    st = {k: np.asarray(v, np.float64) for k, v in state.items()}
    ids = np.asarray(ids, np.int64)
    b, t = ids.shape
    past = 0 if past_keys is None else past_keys.shape[3]
    x = st["tok.weight"][ids] + st["pos.weight"][np.arange(t) + past]
    d = x.shape[-1]
    hd = d // n_head
    future = np.arange(past + t)[None, :] > (np.arange(t)[:, None] + past)
    keys, values = [], []
    i = 0
    while f"blocks.{i}.qkv.weight" in st:
        p = f"blocks.{i}."
        h = _layer_norm(x, st[p + "ln1.weight"], st[p + "ln1.bias"]) @ st[p + "qkv.weight"].T + st[p + "qkv.bias"]
        q, k, v = (h[..., j * d:(j + 1) * d].reshape(b, t, n_head, hd).transpose(0, 2, 1, 3) for j in range(3))
        if past:
            k = np.concatenate([past_keys[i], k], axis=2)
            v = np.concatenate([past_values[i], v], axis=2)
        att = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
        att = np.where(future, -np.inf, att)
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        y = (att @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
        x = x + y @ st[p + "proj.weight"].T + st[p + "proj.bias"]
        h = _layer_norm(x, st[p + "ln2.weight"], st[p + "ln2.bias"]) @ st[p + "fc1.weight"].T + st[p + "fc1.bias"]
        x = x + _gelu(h) @ st[p + "fc2.weight"].T + st[p + "fc2.bias"]
        keys.append(k)
        values.append(v)
        i += 1
    keys, values = np.stack(keys), np.stack(values)
    if clip is not None:
        keys, values = np.clip(keys, -clip, clip), np.clip(values, -clip, clip)
    return _layer_norm(x, st["ln_f.weight"], st["ln_f.bias"]) @ st["head.weight"].T, keys, values


def _describe(got) -> str:
    if isinstance(got, np.ndarray):
        return f"an array of shape {got.shape}"
    return "None" if got is None else f"a {type(got).__name__}"


# ---------------------------------------------------------------- 09.export_dynamic

EXPORT_SYMBOLIC = "the input's batch and sequence dimensions are symbolic"
EXPORT_RUNS = ("batch 1 at a length you did not export with", "another batch size and length",
               "the full context length")
EXPORT_TESTS = (EXPORT_SYMBOLIC, *EXPORT_RUNS)
#: the size-1 trap (lesson 09): torch.export takes an example dimension of size 0 or 1 as a constant
SIZE_ONE = (" (an example dimension of size 1 is taken as a constant: export with an example of at least 2 "
            "on every dimension that varies)")
BAKED_IN = (": the input is symbolic but a size was baked in inside the graph, as when the example had a "
            "dimension of size 1: export with an example of at least 2 on every dimension that varies")


def _export_seed(seed: int) -> int:
    return int(np.random.default_rng(seed + 901).integers(0, 2**31))


def _export_cases(seed: int) -> list[tuple]:
    return [(Make("labkit.material.l09:random_gpt", (_export_seed(seed),)),)]


def _export_shapes(seed: int, context: int) -> list[tuple[int, int]]:
    rng = np.random.default_rng(seed + 902)
    return [(1, int(rng.integers(3, 30))), (int(rng.integers(2, 6)), int(rng.integers(31, context - 1))),
            (int(rng.integers(1, 3)), context)]


def _dims(value_info) -> list:
    return [d.dim_param or (d.dim_value if d.HasField("dim_value") else "?") for d in value_info.type.tensor_type.shape.dim]


@exercise('09.export_dynamic', title='Export a transformer with dynamic batch and sequence length', points=3, kind='function',
          hint=[
              "The exporter fixes every dimension to the size of the example you give it unless you tell it which dimensions may vary: here the batch and the sequence length (up to the model's context).",
              'torch.onnx.export(..., dynamo=True, dynamic_shapes=...) with torch.export.Dim objects; the returned ONNXProgram has a model_proto.',
          ],
          cases=_export_cases, tests=EXPORT_TESTS, skill=EXPORT_RUNS)
def _export_dynamic(outputs, seed):
    got = outputs[0] if isinstance(outputs, list) and outputs else None
    model, problem = load_onnx(got)
    if isinstance(got, str):
        problem = (f"your function returned the string {got[:80]!r}; expected the model itself "
                   "(an onnx.ModelProto)")
    if problem:
        for name in EXPORT_TESTS:
            yield TestResult(name, False, problem)
        return
    inits = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    if len(inputs) != 1:
        msg = (f"the model has {len(inputs)} inputs ({', '.join(i.name for i in inputs)}); export the model you were "
               "given, whose forward(ids) takes one tensor of token ids")
        for name in EXPORT_TESTS:
            yield TestResult(name, False, msg)
        return
    dims = _dims(inputs[0])
    if len(dims) != 2:
        yield TestResult(EXPORT_SYMBOLIC, False, f"the input has shape {dims}; expected (batch, sequence)")
    else:
        fixed = [("batch", "sequence")[i] + f" = {d}" for i, d in enumerate(dims) if isinstance(d, int)]
        yield TestResult(EXPORT_SYMBOLIC, not fixed,
                         f"input {inputs[0].name!r} has shape {dims}" if not fixed else
                         f"input {inputs[0].name!r} has shape {dims}: {' and '.join(fixed)} was fixed by the example "
                         "input; expected it symbolic (a name), so that other sizes run"
                         + (SIZE_ONE if any(d == 1 for d in dims if isinstance(d, int)) else ""))
    config, state = random_state(_export_seed(seed))
    try:
        session = ort_session(model)
    except Exception as e:
        for name in EXPORT_RUNS:
            yield TestResult(name, False, f"ONNX Runtime cannot load your model: {error_line(e)}")
        return
    rng = np.random.default_rng(seed + 903)
    for name, (batch, length) in zip(EXPORT_RUNS, _export_shapes(seed, config["context"])):
        ids = rng.integers(0, config["vocab_size"], size=(batch, length)).astype(np.int64)
        want = forward(state, ids, config["n_head"])
        try:
            logits = session.run(None, {inputs[0].name: ids})[0]
        except Exception as e:
            if all(isinstance(d, str) for d in dims):  # symbolic, yet a size inside the graph is not
                node = re.search(r"running (\w+) node", str(e))
                yield TestResult(name, False, f"ids of shape ({batch}, {length}): ONNX Runtime failed"
                                              f"{' in a ' + node[1] + ' node' if node else ''}{BAKED_IN}")
            else:
                yield TestResult(name, False, f"ids of shape ({batch}, {length}): ONNX Runtime failed: "
                                              f"{error_line(e)} — was this dimension fixed at export?")
            continue
        if logits.shape != want.shape:
            yield TestResult(name, False, f"ids of shape ({batch}, {length}): expected logits of shape {want.shape}, "
                                          f"got {logits.shape}")
            continue
        err = float(np.max(np.abs(logits - want)))
        ok = bool(np.allclose(logits, want, rtol=1e-3, atol=1e-3))
        yield TestResult(name, ok, f"ids of shape ({batch}, {length}): logits match PyTorch's (max difference "
                                   f"{err:.1e})" if ok else
                         f"ids of shape ({batch}, {length}): logits differ from the model's by up to {err:.3g}")


# ---------------------------------------------------------------- 09.generate

TIE = 1e-3
GENERATE_FORMAT = "returns n_new token ids as ints"
GENERATE_RUNS = ("a short prompt", "a long prompt", "a single new token", "many new tokens")
GENERATE_TESTS = (GENERATE_FORMAT, *GENERATE_RUNS)
NO_CACHE = (" — these are the tokens of the whole sequence run again at every step, not of the cache: the check's "
            "decoder stores its cache clipped, so its tokens differ from a fresh run's")


@functools.lru_cache(maxsize=1)
def _heldout_ids() -> np.ndarray:
    return encode(heldout_text())


def _prose(rng: np.random.Generator, length: int) -> np.ndarray:
    """A prompt of `length` tokens of the held-out text that is prose (mostly letters, starting a word), not a
    table or an indented block."""
    from labkit.transformer import decode

    ids = _heldout_ids()
    while True:
        start = int(rng.integers(1, len(ids) - length))
        text = decode(ids[start - 1:start + length])
        if text[0] in " \n" and sum(c.isalpha() for c in text) >= 0.7 * length:
            return ids[start:start + length].copy()


def _generate_specs(seed: int) -> list[tuple[np.ndarray, int]]:
    rng = np.random.default_rng(seed + 911)
    return [(_prose(rng, length), n_new)
            for length, n_new in ((int(rng.integers(4, 12)), int(rng.integers(6, 14))),
                                  (int(rng.integers(40, 70)), int(rng.integers(6, 14))),
                                  (int(rng.integers(12, 40)), 1),
                                  (int(rng.integers(8, 30)), int(rng.integers(30, 45))))]


def _generate_cases(seed: int) -> list[tuple]:
    return [(Make("labkit.material.l09:cache_decoder", ()), prompt, n_new) for prompt, n_new in _generate_specs(seed)]


#: how a generation feeds the decoder: the prompt in one run then one token per run (the skill), the prompt
#: one token at a time through the cache as well (also the skill), or the whole sequence rerun at every step
FEEDS = ("cache", "prompt token by token", "rerun")


@functools.lru_cache(maxsize=256)
def _greedy_cached(prompt: tuple, n_new: int, feed: str = "cache", clip: float | None = CACHE_CLIP
                   ) -> tuple[list[int], list[float]]:
    return greedy_reference(np.array(prompt, np.int64), n_new, feed, clip)


def greedy_reference(prompt: np.ndarray, n_new: int, feed: str = "cache", clip: float | None = CACHE_CLIP
                     ) -> tuple[list[int], list[float]]:
    """The greedy continuation of `prompt` by the check's decoder (numpy) and each step's margin between the
    two best logits, for one of `FEEDS`. Through the cache the past is clipped to `clip` as the check's decoder
    stores it (`CACHE_CLIP`; None: kept as it is, which gives a rerun's tokens faster); a rerun never reads a
    past, so it gives what PyTorch or a session run without the cache gives."""
    state = course_weights()
    clip = None if feed == "rerun" else clip
    chunks = [prompt[i:i + 1] for i in range(len(prompt))] if feed == "prompt token by token" else [prompt]
    keys = values = None
    for chunk in chunks:
        logits, keys, values = forward_cached(state, np.asarray(chunk, np.int64)[None], 4, keys, values, clip=clip)
    seq = [int(t) for t in prompt]
    out, margins = [], []
    for _ in range(n_new):
        last = logits[0, -1]
        top = np.sort(last)[-2:]
        out.append(int(np.argmax(last)))
        margins.append(float(top[1] - top[0]))
        seq.append(out[-1])
        if len(out) == n_new:
            break
        if feed == "rerun":
            logits = forward(state, np.array([seq[-CONTEXT:]]), 4)
        else:
            logits, keys, values = forward_cached(state, np.array([[out[-1]]]), 4, keys, values, clip=clip)
    return out, margins


def _agreement(ids: list[int], want: list[int], margins: list[float]) -> int:
    """How many leading tokens of `ids` are right; all of them when the first difference is at a near tie."""
    agree = 0
    for g, w, m in zip(ids, want, margins):
        if g == w:
            agree += 1
            continue
        if m < TIE:  # a near tie: either token is right, and what follows depends on the pick
            agree = len(want)
        break
    return agree


def _as_ids(got) -> list[int] | None:
    if isinstance(got, np.ndarray) and got.ndim == 1 and got.dtype.kind in "iu":
        return [int(v) for v in got]
    if isinstance(got, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in got):
        return list(got)
    return None


@exercise('09.generate', title='Greedy generation with the key/value cache', points=4, kind='function',
          hint=[
              'Run the prompt once with an empty past; every later run feeds only the newest token together with the keys and values the previous run returned. Greedy picks the most likely next token.',
              "The session's inputs and outputs are named (session.get_inputs()); an empty past has a length-0 past dimension (np.zeros with that shape); np.argmax over the last position's logits.",
          ],
          cases=_generate_cases, tests=GENERATE_TESTS, skill=GENERATE_RUNS, tools=("numpy", "onnxruntime"))
def _generate(outputs, seed):
    from labkit.transformer import decode

    specs = _generate_specs(seed)
    outputs = outputs if isinstance(outputs, list) and len(outputs) == len(specs) else [None] * len(specs)
    bad = None
    for i, (got, (prompt, n_new)) in enumerate(zip(outputs, specs)):
        ids = _as_ids(got)
        if isinstance(got, Raised):
            bad = f"case {i}: your function {got.message}"
        elif ids is None:
            bad = f"case {i}: expected a list of {n_new} ints, got {_describe(got)}"
        elif len(ids) != n_new:
            bad = f"case {i}: asked for n_new = {n_new} tokens, got {len(ids)}" + (
                " (return only the new tokens, not the prompt)" if len(ids) == n_new + len(prompt) else "")
        if bad:
            break
    yield TestResult(GENERATE_FORMAT, bad is None, bad or "every case returned exactly n_new ints")
    skipped = False
    # which runs came out right: one of a single new token alone shows no cache (it needs none)
    right_runs: list[int] = []
    for name, got, (prompt, n_new) in zip(GENERATE_RUNS, outputs, specs):
        where = f"prompt {decode(prompt)!r}, n_new = {n_new}"
        if isinstance(got, Raised):
            yield TestResult(name, False, f"{where}: your function {got.message}")
            continue
        ids = _as_ids(got)
        if ids is None:
            yield TestResult(name, False, f"{where}: expected a list of ints, got {_describe(got)}")
            continue
        key = tuple(int(t) for t in prompt)
        want, margins = _greedy_cached(key, n_new)
        agree = _agreement(ids, want, margins)
        if len(ids) == len(want) and (agree >= len(want) or _agreement(
                ids, *_greedy_cached(key, n_new, FEEDS[1])) >= len(want)):
            right_runs.append(n_new)
            yield TestResult(name, True, f"{where}: the {n_new} greedy tokens {decode(want)!r}")
            continue
        rerun, rerun_margins = _greedy_cached(key, n_new, "rerun")
        no_cache = len(ids) == n_new and _agreement(ids, rerun, rerun_margins) >= n_new
        skipped = skipped or no_cache
        yield TestResult(name, False, f"{where}: expected the greedy continuation {decode(want)!r}, got "
                                      f"{decode([i for i in ids if 0 <= i < 96])!r} (first difference at "
                                      f"token {agree})" + (NO_CACHE if no_cache else ""))
    if skipped:
        yield DidNotDo("its tokens are those of the whole sequence run again at every step, not of the cache")
    elif right_runs and max(right_runs) == 1:
        yield DidNotDo("no run of more than one new token came out right, and one token needs no cache at all")


# ---------------------------------------------------------------- 09.batch_generate

BATCH_FORMAT = "returns n_new token ids for each prompt"
BATCH_RUNS = ("a one-token prompt among longer ones", "two prompts of the same length", "five prompts",
              "a batch of one prompt")
BATCH_TESTS = (BATCH_FORMAT, *BATCH_RUNS)


def _batch_specs(seed: int) -> list[tuple[list[np.ndarray], int]]:
    """Each case's prompts (prose of the held-out text, in an order sorted neither way by length, so a batch
    sorted by length and handed back so gives other rows) and n_new. The longest prompt plus n_new stays
    within the context even counted with the pads."""
    rng = np.random.default_rng(seed + 931)
    same, n_new = int(rng.integers(8, 17)), int(rng.integers(6, 13))
    # the first two cases share their batch size and n_new: an answer that remembers its last result by shape
    # hands the second case the first one's rows
    plans = [([1, int(rng.integers(25, 46)), int(rng.integers(6, 15)), int(rng.integers(18, 25))], n_new),
             ([same, same, int(rng.integers(30, 51)), int(rng.integers(2, 6))], n_new),
             ([int(rng.integers(2, 5)), int(rng.integers(10, 21)), int(rng.integers(25, 36)),
               int(rng.integers(40, 56)), int(rng.integers(60, 76))], int(rng.integers(15, 22))),
             ([int(rng.integers(5, 41))], int(rng.integers(5, 21)))]
    specs = []
    for lengths, n_new in plans:
        while len(lengths) > 1:
            order = [lengths[i] for i in rng.permutation(len(lengths))]
            if order != sorted(order) and order != sorted(order, reverse=True):
                lengths = order
                break
        specs.append(([_prose(rng, n) for n in lengths], n_new))
    return specs


def _batch_cases(seed: int) -> list[tuple]:
    return [(Make("labkit.material.l09:cache_decoder", ("genai", len(prompts))), [[int(t) for t in p] for p in prompts],
             n_new) for prompts, n_new in _batch_specs(seed)]


def _alone(prompt: np.ndarray, n_new: int) -> tuple[list[int], list[float]]:
    """A prompt's greedy continuation alone and each step's margin. The check's batch session keeps its cache as
    it is (unclipped): the prompt in one run or token by token, and a rerun, all give these tokens."""
    return _greedy_cached(tuple(int(t) for t in prompt), n_new, "cache", None)


def _is_alone(ids: list[int], prompt: np.ndarray, n_new: int) -> bool:
    """Whether `ids` is the prompt's greedy continuation alone, up to a near tie."""
    return len(ids) == n_new and _agreement(ids, *_alone(prompt, n_new)) >= n_new


def _as_rows(got, n_rows: int) -> list[list[int]] | None:
    """The answer's rows as lists of ints: an integer array of n_rows rows, or a list of n_rows rows each a list
    of ints or a 1-D integer array; None for anything else."""
    if isinstance(got, np.ndarray) and got.ndim == 2 and got.dtype.kind in "iu" and len(got) == n_rows:
        return [[int(v) for v in row] for row in got]
    if isinstance(got, list) and len(got) == n_rows:
        rows = [_as_ids(row) for row in got]
        return None if any(r is None for r in rows) else rows
    return None


@exercise('09.batch_generate', title='Greedy generation for a batch of prompts of different lengths', points=3,
          kind='function',
          hint=[
              'Pad the prompts to one rectangle. The attention mask is 1 for a real token and 0 for a pad, over the past and the new positions, and each row counts its positions over its own real tokens only: then every row computes what it would alone. Pads on the left put every row\'s newest token in the last column.',
              "session.get_inputs() names the inputs and gives the past's shape (batch, heads, past, head size): an empty past is np.zeros with a past length of 0. np.cumsum of the mask along each row counts real tokens; after each run, append a column of ones to the mask with np.concatenate and feed each present back as its past.",
          ],
          cases=_batch_cases, tests=BATCH_TESTS, skill=BATCH_RUNS, tools=("numpy", "onnxruntime"), bonus=True)
def _batch_generate(outputs, seed):
    from labkit.transformer import decode

    specs = _batch_specs(seed)
    outputs = outputs if isinstance(outputs, list) and len(outputs) == len(specs) else [None] * len(specs)
    bad = None
    for i, (got, (prompts, n_new)) in enumerate(zip(outputs, specs)):
        rows = _as_rows(got, len(prompts))
        if isinstance(got, Raised):
            bad = f"case {i}: your function {got.message}"
        elif rows is None:
            bad = (f"case {i}: expected {len(prompts)} rows (one per prompt) of {n_new} ints, got {_describe(got)}"
                   + (f" of {len(got)} rows" if isinstance(got, list) and len(got) != len(prompts) else ""))
        else:
            lengths = [len(r) for r in rows]
            if any(n != n_new for n in lengths):
                r = next(r for r, n in enumerate(lengths) if n != n_new)
                bad = f"case {i}: asked for n_new = {n_new} tokens per prompt, row {r} has {lengths[r]}" + (
                    " (its prompt and the new tokens; expected the new tokens alone)"
                    if lengths[r] == n_new + len(prompts[r]) else "")
        if bad:
            break
    yield TestResult(BATCH_FORMAT, bad is None, bad or "every case returned one row of n_new ints per prompt")
    refused = {"batch": False, "cache": False}
    for name, got, (prompts, n_new) in zip(BATCH_RUNS, outputs, specs):
        lengths = [len(p) for p in prompts]
        where = (f"{len(prompts)} prompts of lengths {lengths}" if len(prompts) > 1 else
                 f"1 prompt of length {lengths[0]}") + f", n_new = {n_new}"
        if isinstance(got, Raised):
            refused["batch"] |= NOT_THE_BATCH in got.message
            refused["cache"] |= REFUSED_NO_CACHE in got.message
            yield TestResult(name, False, f"{where}: your function {got.message}")
            continue
        rows = _as_rows(got, len(prompts))
        if rows is None:
            yield TestResult(name, False, f"{where}: expected {len(prompts)} rows of ints, got {_describe(got)}")
            continue
        short = next((r for r, ids in enumerate(rows) if len(ids) != n_new), None)
        if short is not None:
            yield TestResult(name, False, f"{where}: row {short} has {len(rows[short])} tokens, expected {n_new}")
            continue
        wrong = [r for r, (ids, p) in enumerate(zip(rows, prompts)) if not _is_alone(ids, p, n_new)]
        if not wrong:
            yield TestResult(name, True, f"{where}: every row is its prompt's greedy continuation alone")
            continue
        r = wrong[0]
        want, margins = _alone(prompts[r], n_new)
        ids = rows[r]
        msg = (f"{where}: row {r} (prompt {decode(prompts[r])!r}) should be {decode(want)!r}, its greedy "
               f"continuation alone; got {decode([t for t in ids if 0 <= t < 96])!r} (first difference at token "
               f"{_agreement(ids, want, margins)})")
        other = next((j for j, p in enumerate(prompts) if j != r and _is_alone(ids, p, n_new)), None)
        longest = [j for j, n in enumerate(lengths) if n == max(lengths)]
        if other is not None:
            msg += f" — that is the continuation of prompt {other}: the rows are not in the prompts' order"
        elif len(prompts) > 1 and all(lengths[j] < max(lengths) for j in wrong) and set(longest).isdisjoint(wrong):
            msg += (f" — the rows of the longest prompt come out as alone, {len(wrong)} of the "
                    f"{len(prompts) - len(longest)} shorter ones do not: the pads change what they compute")
        yield TestResult(name, False, msg)
    if refused["batch"]:
        yield DidNotDo("it runs the prompts one at a time (or in groups), not the whole batch in each run")
    elif refused["cache"]:
        yield DidNotDo("it computes the whole sequence again at every step instead of reading the cache")


# ---------------------------------------------------------------- 09.perplexity

PPL_TESTS = ("small random logits", "large logits (naive exp overflows)", "a single position",
             "uniform logits give the vocabulary size", "a confident, mostly right model",
             "a right token 800 below the best (its softmax underflows to 0)")


def _ppl_cases(seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed + 921)
    n, v = int(rng.integers(20, 60)), int(rng.integers(10, 100))
    small = (rng.normal(size=(n, v)).astype(np.float32), rng.integers(0, v, n).astype(np.int64))
    big = (rng.normal(0, 4, size=(n, v)).astype(np.float32) + np.float32(rng.uniform(800, 1200)), rng.integers(0, v, n).astype(np.int64))
    one = (rng.normal(size=(1, v)).astype(np.float32), rng.integers(0, v, 1).astype(np.int64))
    vu = int(rng.integers(5, 200))
    uniform = (np.full((n, vu), float(rng.normal()), np.float32), rng.integers(0, vu, n).astype(np.int64))
    t = rng.integers(0, v, n).astype(np.int64)
    conf = rng.normal(size=(n, v)).astype(np.float32)
    conf[np.arange(n), t] += 6
    # each row of the large logits lowered by its own whole number (exact in float32: the values only shrink): the
    # perplexity stays the same, and a shift by the global maximum instead of each row's underflows whole rows
    lower = np.random.default_rng(seed + 922).integers(0, 1500, (n, 1)).astype(np.float32)
    big = (big[0] - lower, big[1])
    # one row whose right token sits 800 below the row's best: exp underflows to 0 even in float64, so the log of a
    # softmax is -inf there, while log-softmax is exact (the perplexity, about exp(800 / n) with n >= 20, stays far
    # inside float32's range)
    far = rng.normal(size=(n, v)).astype(np.float32)
    tf = rng.integers(0, v, n).astype(np.int64)
    row = int(rng.integers(0, n))
    far[row, tf[row]] = far[row].max() - np.float32(800)
    return [small, big, one, uniform, (conf, t), (far, tf)]


def perplexity_ref(logits: np.ndarray, targets: np.ndarray) -> float:
    x = np.asarray(logits, np.float64)
    m = x.max(-1, keepdims=True)
    logp = x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))
    return float(np.exp(-logp[np.arange(len(targets)), np.asarray(targets)].mean()))


@exercise('09.perplexity', title='Perplexity from logits', points=2, kind='function', tools=('numpy',),
          hint=[
              'Perplexity is the exponential of the mean negative log-likelihood of the right next tokens; exponentials of large logits overflow float32 unless each row is shifted first.',
              "A log-softmax with the log-sum-exp trick (subtract each row's maximum), then index the target column of every row with NumPy's integer-array indexing.",
          ],
          cases=_ppl_cases, tests=PPL_TESTS, skill=PPL_TESTS)
def _perplexity(outputs, seed):
    forms = list(plain.forms_of(outputs) or ())
    outputs = outputs if isinstance(outputs, list) and len(outputs) == len(PPL_TESTS) else [None] * len(PPL_TESTS)
    forms = forms if len(forms) == len(PPL_TESTS) else [""] * len(PPL_TESTS)
    for name, got, form, (logits, targets) in zip(PPL_TESTS, outputs, forms, _ppl_cases(seed)):
        want = perplexity_ref(logits, targets)
        if isinstance(got, Raised):
            yield TestResult(name, False, f"your function {got.message}")
            continue
        if form == "numpy.ndarray":  # a NumPy scalar (np.float64) is a float; an array, even of no dimension, is not
            yield TestResult(name, False, f"expected one number (a float), got a NumPy array of shape "
                                          f"{np.shape(got)}: return float(...) of it")
            continue
        if isinstance(got, np.ndarray) and got.ndim == 0:  # plain data makes a NumPy scalar a 0-d array
            got = float(got)
        if not isinstance(got, (int, float)) or isinstance(got, bool):
            yield TestResult(name, False, f"expected one number (a float), got {_describe(got)}")
            continue
        ok = bool(np.isfinite(got)) and abs(got - want) <= 1e-4 * abs(want) + 1e-6
        msg = f"perplexity {want:.6g}" if ok else f"expected {want:.6g}, got {got:.6g}"
        if not ok and not np.isfinite(got):
            msg += " — exp of large logits overflows float32 (inf or NaN)"
        elif not ok and abs(got - np.log(want)) <= 1e-4 * abs(np.log(want)) + 1e-6:
            msg += " — that is the mean negative log-likelihood; perplexity is its exp"
        elif not ok and abs(got - 2 ** np.log(want)) <= 1e-4 * want:
            msg += " — perplexity uses the natural exp of the natural-log likelihood (or 2** of a log2), not a mix"
        yield TestResult(name, ok, msg)


# ---------------------------------------------------------------- 09.quiz

quiz('09.quiz', title='Transformers in ONNX', points=5, questions=[
    Question('q1', 'You exported a language model with dynamo=True and no dynamic_shapes, using a 16-token example. What happens when ONNX Runtime gets a 20-token prompt?', {
        'a': 'It runs: ONNX shapes are always dynamic',
        'b': 'It fails: the input is fixed to 16 tokens',
        'c': 'It silently crops the prompt down to 16 tokens',
    }, answer='b', why=(
        "The dynamo exporter specializes every dimension to the example's size unless dynamic_shapes "
        'says otherwise, without a warning; ONNX Runtime then rejects a 20-token input. ONNX shapes '
        'are only dynamic where the graph says so (a), and nothing crops inputs (c).')),
    Question('q2', 'Without a key/value cache, what does generating token n cost, for a sequence of n tokens?', {
        'a': 'The full forward pass over all n tokens once more',
        'b': "One token's work: attention only ever looks at the last one",
        'c': 'Nothing extra: ORT caches the previous run itself',
    }, answer='a', why=(
        'Without a cache each new token reruns the whole prefix: token n costs about n positions of '
        'work (and attention n² of it), so a sequence costs about n² in all. Attention looks at every '
        'earlier key (b), and ONNX Runtime keeps nothing between runs (c): the cache is explicit '
        'inputs and outputs.')),
    Question('q3', 'In the decoder graph, what are the shapes of present_keys after a run with a past of length p and s new tokens?', {
        'a': '(n_layer, batch, n_head, s, head_dim)',
        'b': '(n_layer, batch, n_head, p, head_dim)',
        'c': '(n_layer, batch, n_head, p + s, head_dim)',
    }, answer='c', why=(
        'present = concat(past, new) along the sequence axis: length p + s. Only the new keys (a) '
        "would lose the past; keeping the past's length (b) would drop the new tokens.")),
    Question('q4', 'Weight-only int4 (MatMulNBits) on a CPU: what does it mainly save?', {
        'a': 'Weight size and the memory read per token',
        'b': 'All arithmetic: activations become int4 too',
        'c': 'Nothing: the weights are unpacked to float32 at load time',
    }, answer='a', why=(
        'MatMulNBits keeps 4-bit weights with a scale per block and dequantizes them inside the '
        'kernel: the weights shrink several times (scales included) and less memory is read per token. '
        'Activations stay float (b), and the weights stay packed in memory (c).')),
    Question('q5', 'You convert the weights to float16 and run on an x86 laptop CPU. What do you expect?', {
        'a': 'Twice the speed: float16 halves the arithmetic',
        'b': 'Half the file size but rarely any speed-up',
        'c': 'A model four times smaller, just like int8',
    }, answer='b', why=(
        'float16 weights halve the file, but most CPU kernels compute in float32, so the converter '
        'inserts Casts and the model is rarely faster (often slower). Half precision is not 4x smaller '
        '(c), and halving arithmetic (a) needs float16 units the CPU kernels use.')),
    Question('q6', "onnxscript's ORT fusions found no attention to fuse in a graph exported from hand-written attention (MatMul, Mul, Where, Softmax, MatMul). Why?", {
        'a': 'ORT cannot fuse attention on a CPU at all',
        'b': 'Attention only fuses after int4 quantization',
        'c': 'Fusions match the node pattern SDPA exports',
    }, answer='c', why=(
        "Rewriters such as onnxscript's ORT fusions match the node pattern that "
        'scaled_dot_product_attention (SDPA) exports; hand-written attention is the same math in '
        'another arrangement. The CPU provider has fused attention (a), and fusion does not depend on '
        'quantization (b).')),
])


def warm(seed: int) -> None:
    """Run once by the verdict process before it forks a child per answer (`grading.judge.serve`): the
    greedy references of this seed, as the generation judges ask for them first: each prompt of 09.generate, and
    each prompt of 09.batch_generate's batches alone."""
    for prompt, n_new in _generate_specs(seed):
        key = tuple(int(t) for t in prompt)
        _greedy_cached(key, n_new)  # called as the judge calls it: lru_cache keys on the arguments as given
        _greedy_cached(key, n_new, FEEDS[1])
    for prompts, n_new in _batch_specs(seed):
        for prompt in prompts:
            _alone(prompt, n_new)
