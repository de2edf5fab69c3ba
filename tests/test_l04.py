"""Lesson 04: batched predict with a session, the top operator of a profile, choosing providers, quiz."""
import json
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from labkit import plain
from labkit.checks import collect_answer, evaluate, get, judge_saved
from labkit_judges import l04

CPU = "CPUExecutionProvider"


# ---------------------------------------------------------------- 04.predict

def predict(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    parts = [session.run(None, {name: images[i:i + batch_size]})[0].argmax(axis=1)
             for i in range(0, len(images), batch_size)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def predict_list(session, images, batch_size=64):  # another correct style: a list of ints
    name = session.get_inputs()[0].name
    out = []
    for start in range(0, len(images), batch_size):
        out += [int(c) for c in session.run(None, {name: images[start:start + batch_size]})[0].argmax(1)]
    return out


def messages(r):
    return " | ".join(f"{t.name}: {t.message}" for t in r.tests) + " | " + r.message


def test_predict_reference_passes():
    for answer in (predict, predict_list):
        r = evaluate(get("04.predict"), answer)
        assert r.status == "passed" and r.points == r.max_points > 0, messages(r)


def test_predict_cases_are_real_sessions_that_survive_the_copy():
    import copy

    session, images, batch_size = plain.materialize(l04._predict_cases(0)[0])  # built as in the kernel
    assert isinstance(session, ort.InferenceSession) and session.get_providers() == [CPU]
    clone = copy.deepcopy(session)
    assert clone is not session and clone.max_rows == batch_size
    with pytest.raises(RuntimeError, match="at most batch_size=8"):
        clone.run(None, {"images": images})


def test_predict_model_matches_numpy():
    w, b = l04._predict_weights(3, 0)
    x = np.random.default_rng(0).random((5, 1, 8, 8)).astype(np.float32)
    sess = ort.InferenceSession(l04.predict_model(w, b), providers=[CPU])
    np.testing.assert_allclose(sess.run(None, {"images": x})[0], x.reshape(5, 64) @ w + b, rtol=1e-5, atol=1e-5)


def no_batching(session, images, batch_size=64):
    return session.run(None, {session.get_inputs()[0].name: images})[0].argmax(axis=1)


def concat_without_empty_case(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    return np.concatenate([session.run(None, {name: images[i:i + batch_size]})[0].argmax(1)
                           for i in range(0, len(images), batch_size)])


def returns_scores(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    parts = [session.run(None, {name: images[i:i + batch_size]})[0] for i in range(0, len(images), batch_size)]
    return np.concatenate(parts) if parts else np.zeros((0, 10), np.float32)


def drops_last_batch(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    parts = [session.run(None, {name: images[i * batch_size:(i + 1) * batch_size]})[0].argmax(1)
             for i in range(len(images) // batch_size)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def hardcoded_input_name(session, images, batch_size=64):
    parts = [session.run(None, {"images": images[i:i + batch_size]})[0].argmax(1)
             for i in range(0, len(images), batch_size)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def wrong_axis(session, images, batch_size=64):
    name = session.get_inputs()[0].name
    parts = [session.run(None, {name: images[i:i + batch_size]})[0].argmin(axis=1)
             for i in range(0, len(images), batch_size)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


@pytest.mark.parametrize("wrong, failing, message", [
    (no_batching, "37 images, batch_size 8", "accepts at most batch_size=8 images per run() call, got 37"),
    (concat_without_empty_case, "0 images, batch_size 16", "nothing to concatenate"),
    (returns_scores, "37 images, batch_size 8", "you returned the scores (shape (37, 10))"),
    (drops_last_batch, "37 images, batch_size 8", "did the last, shorter batch get lost?"),
    (hardcoded_input_name, "100 images, batch_size 25", "raised"),
    (wrong_axis, "13 images, batch_size 1", "13 of 13 values off"),
])

def test_predict_wrong_answers_fail_precisely(wrong, failing, message):
    r = evaluate(get("04.predict"), wrong)
    assert r.status == "failed" and r.points < r.max_points
    bad = {t.name: t.message for t in r.tests if not t.passed}
    assert failing in bad and message in bad[failing], messages(r)


def bypasses_the_limit(session, images, batch_size=64):
    """Around the test session's run(): the base class's run() takes the whole array at once."""
    import onnxruntime as ort

    name = session.get_inputs()[0].name
    return ort.InferenceSession.run(session, None, {name: images})[0].argmax(1)


def test_a_run_around_the_limit_gets_the_graphs_answer_and_a_quarter_at_most():
    """The test model itself negates its logits over more than batch_size rows: a route around run()
    (the base class's run() here; its C session, run_with_ort_values or a fresh session alike) gives the argmin, named as such."""
    r = evaluate(get("04.predict"), bypasses_the_limit)
    bad = {t.name: t.message for t in r.tests if not t.passed}
    assert "ran more than batch_size images in one run" in bad["37 images, batch_size 8"], messages(r)
    assert r.points <= 0.25 * r.max_points, messages(r)


# ---------------------------------------------------------------- 04.top_operator

def top_operator(profile):
    if isinstance(profile, (str, Path)):
        profile = json.loads(Path(profile).read_text())
    totals = {}
    for e in profile:
        if e.get("cat") == "Node":
            op = e["args"]["op_name"]
            totals[op] = totals.get(op, 0) + e["dur"]
    op = max(totals, key=totals.get)
    return {"op": op, "total_us": totals[op]}


def _events(profile):
    return json.loads(Path(profile).read_text()) if isinstance(profile, str) else profile


def longest_single_call(profile):
    e = max((e for e in _events(profile) if e["cat"] == "Node"), key=lambda e: e["dur"])
    return {"op": e["args"]["op_name"], "total_us": e["dur"]}


def by_event_name(profile):
    totals = {}
    for e in _events(profile):
        totals[e["name"]] = totals.get(e["name"], 0) + e["dur"]
    op = max(totals, key=totals.get)
    return {"op": op, "total_us": totals[op]}


def by_node_name(profile):
    totals = {}
    for e in _events(profile):
        if e["cat"] == "Node":
            name = e["name"].removesuffix("_kernel_time")
            totals[name] = totals.get(name, 0) + e["dur"]
    op = max(totals, key=totals.get)
    return {"op": op, "total_us": totals[op]}


def first_run_only(profile):
    events = _events(profile)
    first_run_end = next(e["ts"] + e["dur"] for e in events if e["name"] == "model_run")
    return top_operator([e for e in events if e["ts"] <= first_run_end])


def lists_only(profile):
    return top_operator(list(profile))  # a path string becomes a list of characters


def test_top_operator_reference_passes():
    r = evaluate(get("04.top_operator"), top_operator)
    assert r.status == "passed" and r.points == 3, messages(r)


@pytest.mark.parametrize("wrong, message", [
    (longest_single_call, "longest single call"),
    (by_event_name, "is a Session event, not an operator"),
    (by_node_name, "that is a node's name; expected an operator type"),
    (first_run_only, "is right, but expected total_us"),
    (lambda p: {"operator": "Conv"}, "expected a dict {'op': ..., 'total_us': ...}, got keys ['operator']"),
])
def test_top_operator_wrong_answers_fail_precisely(wrong, message):
    r = evaluate(get("04.top_operator"), wrong)
    assert r.status == "failed" and r.points < r.max_points
    assert message in messages(r), messages(r)


def test_top_operator_always_naming_conv_did_not_do_it():
    """Blind round 12: "it is always the convolution" (Conv's total, never ranked) scored half."""
    def always_conv(profile):
        return {"op": "Conv", "total_us": sum(e["dur"] for e in _events(profile)
                                              if e["cat"] == "Node" and e["args"]["op_name"] == "Conv")}

    r = evaluate(get("04.top_operator"), always_conv)
    assert r.points <= r.max_points / 4 and "whatever the profile" in r.message, messages(r)


def test_top_operator_path_case():
    r = evaluate(get("04.top_operator"), lists_only)
    failing = [t for t in r.tests if not t.passed]
    assert [t.name for t in failing] == ["trace 4 (given as a path)"] and "raised" in failing[0].message
    assert 0 < r.points < r.max_points


def test_synthetic_traces_look_like_real_ort_traces(tmp_path):
    """Same keys, categories and name/args conventions as what end_profiling() writes in the pinned ORT."""
    w, b = l04._predict_weights(0, 0)
    opts = ort.SessionOptions()
    opts.enable_profiling = True
    opts.profile_file_prefix = str(tmp_path / "real")
    sess = ort.InferenceSession(l04.predict_model(w, b), opts, providers=[CPU])
    for _ in range(2):
        sess.run(None, {"images": np.zeros((3, 1, 8, 8), np.float32)})
    real = json.loads(Path(sess.end_profiling()).read_text())
    fake = l04.profile_trace(0, 1)
    for events in (real, fake):
        assert {tuple(sorted(e)) for e in events} == {("args", "cat", "dur", "name", "ph", "pid", "tid", "ts")}
        assert {e["cat"] for e in events} == {"Session", "Node"} and {e["ph"] for e in events} == {"X"}
        nodes = [e for e in events if e["cat"] == "Node"]
        assert all(e["name"].endswith("_kernel_time") and e["args"]["provider"] == CPU for e in nodes)
        assert {"model_run", "SequentialExecutor::Execute", "session_initialization"} <= {e["name"] for e in events}
    real_keys = set().union(*(e["args"] for e in real if e["cat"] == "Node"))
    fake_keys = set().union(*(e["args"] for e in fake if e["cat"] == "Node"))
    assert fake_keys <= real_keys
    assert top_operator(real)["op"] in {"Gemm", "Flatten", "Reshape"}


def test_synthetic_traces_have_the_traps():
    for seed in range(5):
        for k in range(1, 4):
            events = l04.profile_trace(seed, k)
            want = l04.top_operator_reference(events)
            assert longest_single_call(events)["op"] != want["op"]
            assert by_node_name(events)["op"] != want["op"]
            assert by_event_name(events)["op"] in ("session_initialization", "model_run")


# ---------------------------------------------------------------- 04.choose_providers

def choose_providers(available, preferred):
    chosen = []
    for p in preferred:
        if p == CPU:
            break
        if p in available and p not in chosen:
            chosen.append(p)
    return chosen + [CPU]


def test_choose_providers_reference_passes():
    r = evaluate(get("04.choose_providers"), choose_providers)
    assert r.status == "passed" and r.points == 2, messages(r)


@pytest.mark.parametrize("wrong, message", [
    (lambda a, p: [x for x in a if x in p and x != CPU] + [CPU], "wrong order: follow the order of `preferred`"),
    (lambda a, p: [x for x in p if x in a], "must end with 'CPUExecutionProvider'"),
    (lambda a, p: [x for x in p if x in a and x != CPU] + [CPU], "a provider appears twice"),
    (lambda a, p: list(dict.fromkeys(x for x in p if x in a and x != CPU)) + [CPU], "expected ['CPUExecutionProvider']"),
    (lambda a, p: "CPUExecutionProvider", "expected a list of provider names, got a str"),
])
def test_choose_providers_wrong_answers_fail_precisely(wrong, message):
    r = evaluate(get("04.choose_providers"), wrong)
    assert r.status == "failed" and r.points < r.max_points
    assert message in messages(r), messages(r)


def test_choose_providers_plays_well_with_ort():
    providers = choose_providers(ort.get_available_providers(), ["CUDAExecutionProvider", CPU])
    w, b = l04._predict_weights(0, 0)
    assert ort.InferenceSession(l04.predict_model(w, b), providers=providers).get_providers() == [CPU]


# ---------------------------------------------------------------- quiz, hostile answers, grader round trip

QUIZ = {"q1": "b", "q2": "a", "q3": "c", "q4": "a", "q5": "c"}


def test_quiz():
    ex = get("04.quiz")
    assert evaluate(ex, QUIZ).status == "passed"
    r = evaluate(ex, {**QUIZ, "q3": "a"})
    assert r.status == "failed" and r.points == 3.2 and "q3" in r.message
    assert evaluate(ex, {k: None for k in QUIZ}).points == 0


def _stub(*args):
    raise NotImplementedError("write your solution here")


@pytest.mark.parametrize("id", ["04.predict", "04.top_operator", "04.choose_providers", "04.quiz"])
@pytest.mark.parametrize("hostile, statuses", [
    (None, {"not_attempted"}), (_stub, {"not_attempted"}), ("a string", {"error", "failed"}), (7, {"error", "failed"}),
    (lambda *a: 1 / 0, {"failed", "error"}), (lambda *a: np.full(3, np.nan), {"failed", "error"}),
    (lambda *a: None, {"failed", "error"}), (lambda *a: object(), {"failed", "error"}),
])
def test_hostile_answers_give_a_result(id, hostile, statuses):
    if id == "04.quiz" and hostile is _stub:
        statuses = {"error"}  # a quiz answer is a dict; a function is the wrong type
    r = evaluate(get(id), hostile)
    assert r.status in statuses and r.points == 0, r


def test_nan_class_ids_fail():
    r = evaluate(get("04.predict"), lambda s, x, batch_size=64: np.full(len(x), np.nan))
    assert r.status == "failed" and r.points == 0, r  # float ids are refused, the empty case included


@pytest.mark.parametrize("id, answer", [("04.predict", predict), ("04.top_operator", top_operator),
                                        ("04.choose_providers", choose_providers), ("04.quiz", QUIZ)])
def test_answers_survive_the_grader_round_trip(tmp_path, id, answer):
    ex = get(id)
    plain.save(collect_answer(ex, answer, 11), tmp_path / id)
    assert judge_saved(ex, tmp_path / id, 11).status == "passed"
    wrong = {"04.predict": no_batching, "04.top_operator": longest_single_call,
             "04.choose_providers": lambda a, p: p, "04.quiz": {**QUIZ, "q1": "a"}}[id]
    plain.save(collect_answer(ex, wrong, 11), tmp_path / "wrong")
    assert judge_saved(ex, tmp_path / "wrong", 11).status == "failed"


def test_other_seeds_pass_too():
    from labkit.checks import run_judge as _judge

    for seed in (1, 2, 123):
        for id, answer in (("04.predict", predict), ("04.top_operator", top_operator),
                           ("04.choose_providers", choose_providers)):
            ex = get(id)
            assert _judge(ex, collect_answer(ex, answer, seed), seed).status == "passed", (id, seed)


def test_plot_grouped_timings_draws_one_bar_per_series_and_group():
    import matplotlib

    matplotlib.use("Agg")
    from labkit.bench import Timing
    from labkit.viz import plot_grouped_timings

    def t(m):
        return Timing("", m, m * 0.9, m * 1.2, 5, [m] * 5)

    ax = plot_grouped_timings({"PyTorch": [t(1.0), t(4.0)], "ORT": [t(0.5), t(2.0)]}, [1, 32], log=True)
    assert len(ax.patches) == 4 and ax.get_yscale() == "log"
    assert [x.get_text() for x in ax.get_xticklabels()] == ["1", "32"]
    assert [x.get_text() for x in ax.get_legend().get_texts()] == ["PyTorch", "ORT"]
