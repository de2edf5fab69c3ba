"""Lesson 09: the course transformer (weights, tokenizer, cache), the judges' numpy reference, precise messages
for typical mistakes and hostile answers."""
import hashlib
from pathlib import Path

import numpy as np
import pytest
import torch

from labkit.checks import evaluate, get
from labkit.transformer import (CONTEXT, CourseModelError, WEIGHTS_FILE, WEIGHTS_SHA256, decode, encode,
                                gpt_from_state, heldout_text, random_state, read_weights, trained_gpt)
from labkit_judges import l09


def _stub(*args):
    raise NotImplementedError("write your solution here")


# ---------------------------------------------------------------- the model


def test_shipped_weights_match_their_hash():
    assert hashlib.sha256(WEIGHTS_FILE.read_bytes()).hexdigest() == WEIGHTS_SHA256
    assert WEIGHTS_FILE.stat().st_size < 2_000_000


def test_weights_that_do_not_verify_are_refused(tmp_path):
    bad = tmp_path / "tiny_gpt.npz"
    data = WEIGHTS_FILE.read_bytes()
    bad.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(CourseModelError, match="is not the course transformer"):
        read_weights(bad)
    with pytest.raises(CourseModelError, match="missing"):
        read_weights(tmp_path / "absent.npz")


def test_tokenizer_round_trip_and_unknown_characters():
    text = "def f(x):\n\treturn x  # ok"
    assert decode(encode(text)) == text.replace("\t", "    ")
    assert decode(encode("café")) == "caf?"
    assert encode("A").dtype == np.int64


def test_trained_model_is_better_than_chance_on_heldout():
    from labkit.transformer import perplexity_of

    ppl, acc = perplexity_of(trained_gpt(), encode(heldout_text()))
    assert ppl < 4 and acc > 0.5, (ppl, acc)


def test_cache_gives_the_same_logits_as_a_full_pass():
    model = trained_gpt()
    ids = torch.from_numpy(encode(heldout_text()[:50]))[None]
    with torch.no_grad():
        full = model(ids)[0]
        first, k, v = model(ids[:, :30])
        rest = [model(ids[:, i:i + 1], k, v) for i in range(30, 31)][0]
        assert k.shape == (2, 1, 4, 30, 24)
        torch.testing.assert_close(first, full[:, :30], rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(rest[0], full[:, 30:31], rtol=1e-4, atol=1e-5)


def test_sdpa_variant_is_the_same_function():
    ids = torch.from_numpy(encode(heldout_text()[100:170]))[None]
    with torch.no_grad():
        torch.testing.assert_close(trained_gpt(sdpa=True)(ids)[0], trained_gpt()(ids)[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("seed", [0, 5, 11])
def test_numpy_reference_matches_torch(seed):
    """The judges' numpy forward pass is TinyGPT, for the course model and random ones."""
    config, state = random_state(seed)
    ids = np.random.default_rng(seed).integers(0, 96, size=(2, 17))
    with torch.no_grad():
        want = gpt_from_state(config, state)(torch.from_numpy(ids))[0].numpy()
    np.testing.assert_allclose(l09.forward(state, ids, config["n_head"]), want, rtol=1e-4, atol=1e-4)
    from labkit.transformer import course_weights

    with torch.no_grad():
        want = trained_gpt()(torch.from_numpy(ids))[0].numpy()
    np.testing.assert_allclose(l09.forward(course_weights(), ids, 4), want, rtol=1e-4, atol=1e-4)


def test_generate_cases_fit_the_context():
    for seed in (0, 1, 20250):
        for prompt, n_new in l09._generate_specs(seed):
            assert len(prompt) + n_new <= CONTEXT and n_new >= 1


# ---------------------------------------------------------------- 09b's setup: notebook 09's helpers


def _defined_in_09(name: str):
    """The function `name` as solutions/09_transformer.ipynb defines it, with that notebook's imports."""
    import ast

    import nbformat
    import onnxruntime as ort

    from conftest import ROOT

    nb = nbformat.read(ROOT / "solutions" / "09_transformer.ipynb", as_version=4)
    found = [node for c in nb.cells if c.cell_type == "code" for node in ast.parse(c.source).body
             if isinstance(node, ast.FunctionDef) and node.name == name]
    assert len(found) == 1, f"notebook 09 defines {name} {len(found)} times"
    namespace = {"np": np, "ort": ort, "torch": torch, "encode": encode, "decode": decode, "CONTEXT": CONTEXT}
    exec(compile(ast.Module(found, type_ignores=[]), "09_transformer", "exec"), namespace)
    return namespace[name]


def test_09b_setup_helpers_are_notebook_09s():
    """09b imports `session`, `shapes` and `torch_generate` from labkit.material.l09: they do what notebook 09's
    own cells define (the same sessions, the same shapes, the same generated text)."""
    import onnx

    from labkit.material import l09 as material

    decoder = material.decoder_bytes()
    proto = onnx.load_from_string(decoder)
    assert material.shapes(proto) == _defined_in_09("shapes")(proto)
    for kwargs in ({}, {"threads": 2, "optimize": False}):
        mine, theirs = (f(proto, **kwargs).get_session_options() for f in (material.session,
                                                                            _defined_in_09("session")))
        for attr in ("intra_op_num_threads", "graph_optimization_level", "log_severity_level"):
            assert getattr(mine, attr) == getattr(theirs, attr), (attr, kwargs)
        key = "session.intra_op.allow_spinning"
        assert mine.get_session_config_entry(key) == theirs.get_session_config_entry(key) == "0"
    model = trained_gpt()
    assert material.torch_generate(model, "def f(x):", 30) == _defined_in_09("torch_generate")(model, "def f(x):", 30)
    assert material.session(decoder).get_inputs()[1].shape == [2, "batch", 4, "past", 24]


# ---------------------------------------------------------------- 09.perplexity


def perplexity(logits, targets):
    x = logits.astype(np.float64)
    x -= x.max(1, keepdims=True)
    return float(np.exp(-(x - np.log(np.exp(x).sum(1, keepdims=True)))[np.arange(len(targets)), targets].mean()))


def test_perplexity_reference_passes_on_many_seeds():
    for seed in (0, 1, 7, 2024):
        r = evaluate(get("09.perplexity"), perplexity, seed=seed)
        assert r.status == "passed" and r.points == r.max_points, (seed, r)


@pytest.mark.parametrize("wrong, message", [
    (lambda lg, t: float(np.exp(-np.log((np.exp(lg) / np.exp(lg).sum(1, keepdims=True))[np.arange(len(t)), t]).mean())),
     "exp of large logits overflows"),
    (lambda lg, t: np.log(perplexity(lg, t)), "that is the mean negative log-likelihood"),
])
def test_perplexity_messages_name_the_mistake(wrong, message):
    with np.errstate(all="ignore"):
        r = evaluate(get("09.perplexity"), wrong)
    assert r.status == "failed" and r.points <= r.max_points / 2
    assert any(message in t.message for t in r.tests if not t.passed), [t.message for t in r.tests]


@pytest.mark.parametrize("id", ["09.perplexity", "09.export_dynamic", "09.generate", "09.batch_generate"])
@pytest.mark.parametrize("answer, status", [
    (None, "not_attempted"), (_stub, "not_attempted"), ("perplexity", "error"), (42, "error"),
])
def test_hostile_answers_give_a_result(id, answer, status):
    r = evaluate(get(id), answer)
    assert r.status == status and r.points == 0, r


@pytest.mark.parametrize("id, fn", [
    ("09.perplexity", lambda *a: float("nan")),
    ("09.perplexity", lambda *a: 1 / 0),
    ("09.perplexity", lambda *a: "3.2"),
    ("09.export_dynamic", lambda m: "model.onnx"),
    ("09.export_dynamic", lambda m: None),
    ("09.generate", lambda s, p, n: [None] * n),
    ("09.generate", lambda s, p, n: np.full(n, np.nan)),
    ("09.generate", lambda s, p, n: s.run(None, {})),
    ("09.batch_generate", lambda s, p, n: [[None] * n for _ in p]),
    ("09.batch_generate", lambda s, p, n: np.full((len(p), n), np.nan)),
    ("09.batch_generate", lambda s, p, n: np.zeros((len(p), n, 2), np.int64)),
    ("09.batch_generate", lambda s, p, n: [[0] * n]),
    ("09.batch_generate", lambda s, p, n: s.run(None, {})),
])
def test_bad_returns_fail_with_a_message(id, fn):
    r = evaluate(get(id), fn)
    assert r.status == "failed" and r.points == 0, r
    assert all(t.message for t in r.tests)


def test_export_returning_a_path_is_told_what_to_return():
    r = evaluate(get("09.export_dynamic"), lambda m: "model.onnx")
    assert "expected the model itself" in r.tests[0].message


# ---------------------------------------------------------------- 09.generate


def _no_cache(session, prompt_ids, n_new):
    layers, _, heads, _, dim = session.get_inputs()[1].shape
    empty = np.zeros((layers, 1, heads, 0, dim), np.float32)
    seq = list(prompt_ids)
    for _ in range(n_new):
        logits = session.run(None, {"ids": np.array([seq], np.int64), "past_keys": empty, "past_values": empty})[0]
        seq.append(int(logits[0, -1].argmax()))
    return seq[len(prompt_ids):]


def test_generate_without_the_cache_is_named():
    r = evaluate(get("09.generate"), _no_cache)
    assert r.status == "failed" and r.points <= r.max_points / 2   # one new token needs no cache: that case passes
    assert any("no cache" in t.message for t in r.tests), [t.message for t in r.tests]


def test_generate_returning_the_prompt_too_is_named():
    def with_prompt(session, prompt_ids, n_new):
        return [int(t) for t in prompt_ids] + [0] * n_new

    r = evaluate(get("09.generate"), with_prompt)
    assert "return only the new tokens" in r.tests[0].message


def test_decoder_session_is_a_real_session_that_keeps_its_rule():
    from labkit.material.l09 import cache_decoder

    s = cache_decoder()
    empty = np.zeros((2, 1, 4, 0, 24), np.float32)
    ids = encode("The ")[None]
    _, k, v = s.run(None, {"ids": ids, "past_keys": empty, "past_values": empty})
    s.run(None, {"ids": ids[:, :1], "past_keys": k, "past_values": v})
    with pytest.raises(RuntimeError, match="no cache"):
        s.run(None, {"ids": ids, "past_keys": empty, "past_values": empty})
    import copy

    # a copy of a session that ran keeps the rule (blind round 12: a fresh copy per step restarted the cache);
    # a copy of one that never ran is a fresh session, as the check makes for each call
    with pytest.raises(RuntimeError, match="no cache"):
        copy.deepcopy(s).run(None, {"ids": ids, "past_keys": empty, "past_values": empty})
    copy.deepcopy(cache_decoder()).run(None, {"ids": ids, "past_keys": empty, "past_values": empty})


def test_the_check_decoder_clips_its_cache_so_a_rerun_gives_other_tokens():
    """09.generate's session stores its present keys and values clipped: the numpy reference through the cache
    agrees with the session token for token, and a rerun of the whole sequence (what PyTorch or any session
    without the cache gives) differs from it on every generated case with more than one new token."""
    from labkit.material.l09 import CACHE_CLIP, cache_decoder
    from labkit_judges.l09 import _agreement, _generate_specs, greedy_reference

    s = cache_decoder()
    prompt, n_new = _generate_specs(0)[0]
    empty = np.zeros((2, 1, 4, 0, 24), np.float32)
    logits, k, v = s.run(None, {"ids": prompt[None], "past_keys": empty, "past_values": empty})
    assert np.abs(k).max() <= CACHE_CLIP and np.abs(v).max() <= CACHE_CLIP
    got = [int(logits[0, -1].argmax())]
    for _ in range(n_new - 1):
        logits, k, v = s.run(None, {"ids": np.array([[got[-1]]]), "past_keys": k, "past_values": v})
        got.append(int(logits[0, -1].argmax()))
    want, margins = greedy_reference(prompt, n_new)
    assert _agreement(got, want, margins) == n_new
    for seed in (0, 20250):
        for prompt, n_new in _generate_specs(seed):
            if n_new > 1:
                cached, margins = greedy_reference(prompt, n_new)
                assert _agreement(greedy_reference(prompt, n_new, "rerun")[0], cached, margins) < n_new


# ---------------------------------------------------------------- 09.batch_generate


def _batch_feed(session, prompts, pad=0):
    """The first run's feed of a batch padded on the left with `pad`: ids, mask, positions and empty pasts."""
    width = max(map(len, prompts))
    ids = np.array([[pad] * (width - len(p)) + list(p) for p in prompts], np.int64)
    mask = np.array([[0] * (width - len(p)) + [1] * len(p) for p in prompts], np.int64)
    feed = {"input_ids": ids, "attention_mask": mask, "position_ids": np.maximum(mask.cumsum(1) - 1, 0)}
    return feed | {i.name: np.zeros((len(prompts), 4, 0, 24), np.float32) for i in session.get_inputs()[3:]}


def test_stacked_decoder_built_by_hand_is_the_course_model_with_a_past():
    """The generate check's graph, written node by node from the weights, computes `trained_gpt()` called with
    a past (what `torch.onnx.export` made of it before): any batch, past length and new length."""
    import onnxruntime as ort

    from labkit.material.l09 import decoder_bytes

    sess = ort.InferenceSession(decoder_bytes(), providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == ["ids", "past_keys", "past_values"]
    assert [o.name for o in sess.get_outputs()] == ["logits", "present_keys", "present_values"]
    model = trained_gpt()
    rng = np.random.default_rng(5)
    for b, past, t in [(1, 0, 6), (3, 7, 1), (2, 40, 5), (1, CONTEXT - 3, 3)]:
        ids = rng.integers(0, 96, (b, t))
        pasts = [rng.normal(size=(2, b, 4, past, 24)).astype(np.float32) for _ in range(2)]
        got = sess.run(None, {"ids": ids, "past_keys": pasts[0], "past_values": pasts[1]})
        with torch.no_grad():
            want = model(torch.from_numpy(ids), *(torch.from_numpy(a) for a in pasts))
        for g, w in zip(got, want):
            assert g.shape == tuple(w.shape)
            np.testing.assert_allclose(g, w.numpy(), atol=5e-5, rtol=1e-5)


def test_genai_decoder_built_by_hand_is_the_genai_layout_of_the_course_model():
    """The batch check's graph, written node by node from the weights, computes `GenaiLayout` (what
    `export_for_genai` exports): random pasts, masks with holes, a padding row that sees no key, any positions."""
    import onnxruntime as ort

    from labkit.material.l09 import genai_decoder_bytes
    from labkit.transformer import GenaiLayout

    sess = ort.InferenceSession(genai_decoder_bytes(), providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == ["input_ids", "attention_mask", "position_ids"] + [
        f"past_key_values.{i}.{kv}" for i in range(2) for kv in ("key", "value")]
    assert [o.name for o in sess.get_outputs()] == ["logits"] + [f"present.{i}.{kv}" for i in range(2)
                                                                 for kv in ("key", "value")]
    wrapped = GenaiLayout(trained_gpt())
    rng = np.random.default_rng(3)
    for b, past, t in [(3, 7, 5), (2, 0, 9), (4, 30, 1)]:
        ids, pos = rng.integers(0, 96, (b, t)), rng.integers(0, CONTEXT, (b, t))
        mask = rng.integers(0, 2, (b, past + t))
        mask[0] = 0  # a row that sees no key at all
        pasts = [rng.normal(size=(b, 4, past, 24)).astype(np.float32) for _ in range(4)]
        feed = {"input_ids": ids, "attention_mask": mask, "position_ids": pos}
        got = sess.run(None, feed | dict(zip([i.name for i in sess.get_inputs()[3:]], pasts)))
        with torch.no_grad():
            want = wrapped(*(torch.from_numpy(a) for a in (ids, mask, pos)), [torch.from_numpy(a) for a in pasts])
        for g, w in zip(got, want):
            assert not np.isnan(g).any()
            np.testing.assert_allclose(g, w.numpy(), rtol=1e-4, atol=1e-4)


def _next_feed(feed, logits, present, names):
    """The feed of the next step after a run of `feed`: each row's argmax, one position on, the mask one longer."""
    return {"input_ids": logits[:, -1].argmax(-1)[:, None], "position_ids": feed["position_ids"][:, -1:] + 1,
            "attention_mask": np.concatenate([feed["attention_mask"], np.ones((len(logits), 1), np.int64)], 1),
            **dict(zip(names, present))}


def test_batch_session_refuses_runs_that_skip_the_batch_or_the_cache():
    """The batch check's session: every run takes the whole batch, and every run after the first reads as its
    pasts the presents of the run before, with one new token per row (by run and run_with_ort_values; IO binding
    refused); a copy keeps its runs."""
    import copy

    import onnxruntime as ort

    from labkit.material.l09 import NO_CACHE, NOT_THE_BATCH, cache_decoder

    def values(feed):
        return {k: ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(v)) for k, v in feed.items()}

    prompts = [encode("An object").tolist(), encode("x").tolist(), encode("The return").tolist()]
    s = cache_decoder("genai", 3)
    names = [i.name for i in s.get_inputs()[3:]]
    first = _batch_feed(s, prompts)
    with pytest.raises(RuntimeError, match=NOT_THE_BATCH):  # one prompt alone
        s.run(None, _batch_feed(s, prompts[:1]))
    with pytest.raises(RuntimeError, match=NOT_THE_BATCH):
        s.run_with_ort_values(None, values({k: v[:1] for k, v in first.items()}))
    logits, *present = s.run(None, first)
    with pytest.raises(RuntimeError, match=NO_CACHE):  # the whole batch again, from an empty past
        s.run(None, first)
    with pytest.raises(RuntimeError, match=NO_CACHE):  # a copy of a session that ran has run
        copy.deepcopy(s).run(None, first)
    step = _next_feed(first, logits, present, names)
    two = step | {"input_ids": np.repeat(step["input_ids"], 2, 1),
                  "position_ids": np.repeat(step["position_ids"], 2, 1),
                  "attention_mask": np.concatenate([step["attention_mask"], np.ones((3, 1), np.int64)], 1)}
    with pytest.raises(RuntimeError, match=NO_CACHE):  # two tokens per row on top of the past
        s.run(None, two)
    with pytest.raises(RuntimeError, match=NO_CACHE):
        s.run_with_ort_values(None, values(two))
    with pytest.raises(RuntimeError, match="not IO binding"):
        s.run_with_iobinding(s.io_binding())
    logits, *present = s.run(None, step)  # one new token per row on the cache: the skill
    made_up = _next_feed(step, logits, [np.zeros_like(p) for p in present], names)
    with pytest.raises(RuntimeError, match=NO_CACHE):  # a past of the right shape that is not the present
        s.run(None, made_up)
    with pytest.raises(RuntimeError, match=NO_CACHE):  # the step before replayed: an older run's presents
        s.run_with_ort_values(None, values(step))
    s.run_with_ort_values(None, values(_next_feed(step, logits, present, names)))
    fresh, grid = cache_decoder("genai", 3), encode("Thex=1for").reshape(3, 3)
    feed = _batch_feed(fresh, grid[:, :1].tolist())
    for col in (1, 2):  # the prompts one column at a time through the cache: one token per row each run
        logits, *present = fresh.run(None, feed)
        feed = _next_feed(feed, logits, present, names) | {"input_ids": grid[:, col:col + 1]}
    fresh.run(None, feed)


def test_batch_cases_hold_what_the_exercise_promises():
    """Every batch fits the context padded; case 0 has a one-token prompt, case 1 two prompts of one length,
    case 2 five prompts, case 3 one prompt; cases 0 and 1 share their batch size and n_new (a result remembered
    by shape fails); the prompts are sorted by length neither way (a batch sorted and handed back so fails), and
    their continuations alone differ (so rows in another order fail)."""
    for seed in (0, 1, 7, 20250):
        specs = l09._batch_specs(seed)
        assert [len(p) for p, _ in specs] == [4, 4, 5, 1]
        assert specs[0][1] == specs[1][1]
        for i, (prompts, n_new) in enumerate(specs):
            lengths = [len(p) for p in prompts]
            assert max(lengths) + n_new <= CONTEXT and 5 <= n_new <= 21
            if len(prompts) > 1:
                assert lengths not in (sorted(lengths), sorted(lengths, reverse=True)), (seed, i, lengths)
                alone = [l09._alone(p, n_new)[0] for p in prompts]
                assert len({tuple(a) for a in alone}) == len(alone), (seed, i)
        assert 1 in [len(p) for p in specs[0][0]]
        assert len({len(p) for p in specs[1][0]}) == 3


def test_batch_public_inputs_have_no_near_tie():
    """The release's public check compares tokens exactly at PUBLIC_SEED (labkit/edition.py): no step of any
    prompt there is a near tie, so a right answer padded on either side gives the reference's tokens."""
    from labkit.edition import PUBLIC_SEED

    margins = [m for prompts, n_new in l09._batch_specs(PUBLIC_SEED) for p in prompts for m in l09._alone(p, n_new)[1]]
    assert min(margins) > l09.TIE


def test_batch_judge_after_warm_computes_no_reference_again():
    """As tests/test_judge_warm.py for 09.generate: judging a right answer after warm() computes nothing new."""
    from labkit.checks import run_judge

    seed = 424242
    outputs = [np.array([l09.greedy_reference(p, n, "cache", None)[0] for p in prompts])
               for prompts, n in l09._batch_specs(seed)]
    l09.warm(seed)
    before = l09._greedy_cached.cache_info().misses
    r = run_judge(get("09.batch_generate"), outputs, seed)
    assert r.status == "passed", r
    assert l09._greedy_cached.cache_info().misses == before


@pytest.mark.parametrize("entry, words", [
    ("a mask of all ones: the pads are attended", "the pads change what they compute"),
    ("sorted longest first, rows handed back in that order", "the rows are not in the prompts' order"),
    ("returns each prompt with its new tokens", "expected the new tokens alone"),
    ("each prompt alone in a loop: no batch", "expected every run to take the whole batch"),
])
def test_batch_messages_name_the_mistake(entry, words):
    from corpus import load

    answer = next(e.answer for e in load("09")["09.batch_generate"] if e.name == entry)
    r = evaluate(get("09.batch_generate"), answer)
    assert r.status == "failed" and r.points <= r.max_points / 2
    assert any(words in t.message for t in r.tests if not t.passed), [t.message for t in r.tests]


def test_batch_one_prompt_at_a_time_did_not_do_the_exercise():
    from corpus import load

    loop = "each prompt alone in a loop: no batch"
    answer = next(e.answer for e in load("09")["09.batch_generate"] if e.name == loop)
    r = evaluate(get("09.batch_generate"), answer)
    assert r.points <= r.max_points / 4 and "one at a time" in r.message, r


# ---------------------------------------------------------------- 09.export_dynamic


def test_export_with_a_fixed_length_is_named():
    from labkit.quiet import quiet

    def fixed(model):
        with quiet():
            return torch.onnx.export(model, (torch.zeros((2, 8), dtype=torch.int64),), dynamo=True).model_proto

    r = evaluate(get("09.export_dynamic"), fixed)
    assert r.status == "failed" and r.points == 0
    assert "was fixed by the example input" in r.tests[0].message
    assert all("ONNX Runtime failed" in t.message for t in r.tests[1:]), [t.message for t in r.tests]


def test_export_with_a_size_one_example_is_told_the_trap(capfd):
    """The size-1 trap (issue 35): named Dims fix the input at [1, 1]; Dim.AUTO leaves it symbolic with a size
    baked in. Both are told to export with an example of at least 2, and ONNX Runtime prints no log line."""
    from corpus.l09 import _auto_size_one, _dynamo

    named = evaluate(get("09.export_dynamic"), _dynamo(example=(1, 1)))
    assert named.points == 0 and "example of at least 2" in named.tests[0].message
    auto = evaluate(get("09.export_dynamic"), _auto_size_one)
    assert auto.tests[0].passed and not any(t.passed for t in auto.tests[1:])
    assert all("a size was baked in" in t.message for t in auto.tests[1:]), [t.message for t in auto.tests]
    assert "sequential_executor" not in capfd.readouterr().err


def test_course_model_command_retrains_the_transformer(tmp_path):
    """`labkit course-model --transformer` trains, writes the weights and held-out text, records the SHA-256."""
    import os
    import shutil
    import subprocess
    import sys

    from labkit import transformer

    pkg = tmp_path / "labkit"
    shutil.copytree(Path(transformer.__file__).parent, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    out = subprocess.run([sys.executable, "-c", "from labkit.cli import main; "
                          "raise SystemExit(main(['course-model', '--transformer', '--steps', '2']))"],
                         cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    sha = hashlib.sha256((pkg / "assets" / "tiny_gpt.npz").read_bytes()).hexdigest()
    assert sha != WEIGHTS_SHA256 and f'WEIGHTS_SHA256 = "{sha}"' in (pkg / "transformer.py").read_text()
    assert sha in out.stdout and "run-solutions 09" in out.stdout
    with np.load(pkg / "assets" / "tiny_gpt.npz") as f:
        assert f["heldout"].shape == (transformer.HELDOUT_CHARS,)


# ---------------------------------------------------------------- onnxruntime-genai layout (optional part)


def _genai_feed(ids, pads=0):
    """input_ids, attention_mask, position_ids of `ids` (1-D) left-padded with `pads` zeros (positions 0 there)."""
    n = len(ids)
    x = torch.from_numpy(np.concatenate([np.zeros(pads, np.int64), ids]))[None]
    mask = torch.tensor([[0] * pads + [1] * n])
    pos = torch.tensor([[0] * pads + list(range(n))])
    return x, mask, pos


def test_genai_layout_is_the_course_model_with_per_layer_cache():
    """GenaiLayout computes the course model's function: prefill with an empty per-layer past, then one token."""
    from labkit.transformer import GenaiLayout

    model = trained_gpt()
    wrapped = GenaiLayout(model)
    ids = encode("An object is said to")
    empty = [torch.zeros((1, model.n_head, 0, model.d_model // model.n_head))] * (2 * model.n_layer)
    with torch.no_grad():
        logits, keys, values = model(torch.from_numpy(ids)[None])
        out = wrapped(*_genai_feed(ids[:-1]), empty)
        step = wrapped(torch.from_numpy(ids[-1:])[None], torch.ones((1, len(ids)), dtype=torch.int64),
                       torch.tensor([[len(ids) - 1]]), list(out[1:]))
    torch.testing.assert_close(out[0], logits[:, :-1], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(step[0], logits[:, -1:], atol=1e-5, rtol=1e-5)
    for i in range(model.n_layer):
        torch.testing.assert_close(step[1 + 2 * i], keys[i], atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(step[2 + 2 * i], values[i], atol=1e-5, rtol=1e-5)


def test_genai_layout_masks_left_padding():
    """A prompt left-padded with mask 0 gives the unpadded prompt's logits; the mask is what makes it so."""
    from labkit.transformer import GenaiLayout

    model = trained_gpt()
    wrapped = GenaiLayout(model)
    ids = encode("def f(x):")
    empty = [torch.zeros((1, model.n_head, 0, model.d_model // model.n_head))] * (2 * model.n_layer)
    with torch.no_grad():
        alone = wrapped(*_genai_feed(ids), empty)[0]
        x, mask, pos = _genai_feed(ids, pads=5)
        padded = wrapped(x, mask, pos, empty)[0][:, 5:]
        unmasked = wrapped(x, torch.ones_like(mask), pos, empty)[0][:, 5:]
    assert not torch.isnan(padded).any()
    torch.testing.assert_close(padded, alone, atol=1e-5, rtol=1e-5)
    assert (unmasked - alone).abs().max() > 1e-2     # without the mask the pads change the result


def _torch_greedy(model, ids, n_new):
    """n_new greedy tokens of a TinyGPT after `ids`, with its cache (the lesson's loop, in PyTorch)."""
    out, x, pk, pv = [], torch.from_numpy(ids)[None], None, None
    with torch.no_grad():
        for _ in range(n_new):
            logits, pk, pv = model(x, pk, pv)
            out.append(int(logits[0, -1].argmax()))
            x = torch.tensor([[out[-1]]])
    return out


def test_export_for_genai_runs_in_genai_with_the_same_tokens(tmp_path):
    """The exported folder loads in onnxruntime-genai and its greedy tokens equal a cached greedy loop in
    PyTorch on a small random model, alone and in a right-padded batch (one export: a few seconds)."""
    import json

    import onnxruntime_genai as og

    from labkit.material.l09 import export_for_genai
    from labkit.transformer import VOCAB

    config, state = random_state(1)
    model = gpt_from_state(config, state)
    cfg = export_for_genai(model, tmp_path)
    assert json.loads((tmp_path / "genai_config.json").read_text()) == cfg
    ids = encode("for x in")
    og_model = og.Model(str(tmp_path))
    params = og.GeneratorParams(og_model)
    n_new = 12
    params.set_search_options(max_length=len(ids) + n_new)
    gen = og.Generator(og_model, params)
    gen.append_tokens(ids.astype(np.int32)[None])
    got = []
    while not gen.is_done():
        gen.generate_next_token()
        got.append(int(gen.get_next_tokens()[0]))
    want = _torch_greedy(model, ids, n_new)
    assert VOCAB.index("~") not in want               # genai would stop there (the config's eos)
    assert got == want
    # a batch padded on the right (genai's side): the short row continues as it does alone
    short = encode("x")
    batch = np.full((2, len(ids)), cfg["model"]["pad_token_id"], np.int32)
    batch[0], batch[1, :1] = ids, short
    params = og.GeneratorParams(og_model)
    params.set_search_options(max_length=len(ids) + n_new, batch_size=2)
    gen = og.Generator(og_model, params)
    gen.append_tokens(batch)
    rows = []
    while not gen.is_done():
        gen.generate_next_token()
        rows.append(gen.get_next_tokens().copy())
    rows = np.array(rows).T
    assert rows[0].tolist() == want
    assert rows[1].tolist() == _torch_greedy(model, short, n_new)
