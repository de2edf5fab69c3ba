"""Lesson 11: labkit.gpu's adapter choice, the judges' table of WebGPU operators against the real plugin,
the decoder harness, precise messages and hostile answers, and where the two notebooks (11, 11b) answer them."""
import json

import numpy as np
import onnxruntime as ort
import pytest

import labkit.gpu as gpu
from labkit.checks import evaluate, get
from labkit.material import l11 as learner
from labkit_judges import l11

from conftest import ROOT
from corpus.l11 import _decode_with, _while_loop


def failing(r):
    return {t.name: t.message for t in r.tests if not t.passed}


@pytest.fixture(scope="module")
def adapter():
    found = gpu.setup()
    if found is None:
        pytest.skip(gpu.FIX)
    return found


# ---------------------------------------------------------------- the split: 11 and 11b (no adapter needed)

def answers(stem):
    """{exercise id: is its answer cell in the optional part} of solutions/<stem>.ipynb."""
    cells = json.loads((ROOT / "solutions" / f"{stem}.ipynb").read_text())["cells"]
    return {t.split(":", 1)[1]: "optional" in c["metadata"].get("tags", [])
            for c in cells for t in c["metadata"].get("tags", []) if t.startswith("answer:")}


def test_each_notebook_answers_its_share_and_tolerance_is_11s_bonus():
    """11: placement in the core, 11.tolerance a bonus in its optional part; 11b: the decode loop and the quiz."""
    assert answers("11_gpu") == {"11.placement": False, "11.tolerance": True}
    assert answers("11b_device_data") == {"11.device_decode": False, "11.quiz": False}
    assert get("11.tolerance").bonus and not any(get(e).bonus for e in ("11.placement", "11.device_decode"))


# ---------------------------------------------------------------- labkit.gpu (no adapter needed)

def test_hardware_adapter_is_preferred_and_software_used_only_without_one(monkeypatch):
    asked = []

    def probe(icd):
        asked.append(icd)
        return "GPU" if icd is None else "CPU"

    monkeypatch.setattr(gpu, "_probe", probe)
    monkeypatch.setattr(gpu, "swiftshader_icd", lambda: "/x/vk_swiftshader_icd.json")
    monkeypatch.setattr(gpu, "_STATE", {})
    assert gpu.find_adapter() == gpu.Adapter(software=False) and asked == [None]
    monkeypatch.setattr(gpu, "_STATE", {})
    monkeypatch.setattr(gpu, "_probe", lambda icd: None if icd is None else "CPU")
    found = gpu.find_adapter()
    assert found.software and found.icd == "/x/vk_swiftshader_icd.json" and "emulator" in str(found)


def test_no_adapter_prints_one_line_naming_the_fix(monkeypatch, capsys):
    monkeypatch.setattr(gpu, "_probe", lambda icd: None)
    monkeypatch.setattr(gpu, "swiftshader_icd", lambda: None)
    monkeypatch.setattr(gpu, "_STATE", {})
    assert gpu.setup() is None
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and "apt-get install chromium" in out[0] and "driver" in out[0]
    assert gpu.status() == (False, "none found")


def test_doctor_names_the_fix_without_an_adapter(monkeypatch):
    import importlib

    doctor = importlib.import_module("labkit.doctor")
    monkeypatch.setattr(gpu, "status", lambda: (False, "none found"))
    row = next(r for r in doctor.doctor().rows if r.item == "WebGPU adapter")
    assert not row.ok and row.fix == gpu.FIX


# ---------------------------------------------------------------- the real plugin (software adapter in CI)

def test_operator_table_matches_the_plugin(adapter):
    """The judge of 11.placement knows which operators fall back: checked here against the plugin."""
    ops = list(l11.WEBGPU_OPS + l11.CPU_ONLY_OPS)
    names = [f"n{i}" for i in range(len(ops))]
    opts = learner.webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(l11.placement_model(ops, names), opts)
    got = {n.name: sub.ep_name for sub in sess.get_provider_graph_assignment_info() for n in sub.get_nodes()}
    assert got == l11.expected_placement(ops, names)


@pytest.mark.parametrize("seed", [0, 1, 20250])
def test_placement_of_every_check_model_matches_the_plugin(adapter, seed):
    """The hidden models (a Transpose of the file's own, a pooling renamed like a Conv, an int64 stretch) are
    placed as the judge expects, node names mapped back as the prompt says."""
    for ops, names in l11._placement_data(seed):
        opts = learner.webgpu_options(record=True)
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(l11.placement_model(ops, names), opts)
        got = {n.name.split("_token_")[0]: sub.ep_name for sub in sess.get_provider_graph_assignment_info()
               for n in sub.get_nodes()}
        want = l11.expected_placement(ops, names)
        assert {k: got.get(k) for k in want} == want, ops
    names = [n for _, ns in l11._placement_data(seed) for n in ns]
    assert all(n == n.lower() and "_token_" not in n for n in names)  # what the prompt promises of the names
    plans = [ops for ops, _ in l11._placement_data(seed)]
    assert "Transpose" in plans[3] and {"MaxPool", "AveragePool"} & set(plans[4])
    assert all("Cast:int64" in plan for plan in plans[1:])


def test_decoder_on_webgpu_decodes_as_the_cpu(adapter):
    model = learner.tiny_decoder(5)
    session = learner.device_decoder(model)
    assert session.get_providers()[0] == gpu.EP_NAME
    assert _while_loop(session, [1, 2], 5) == l11.greedy_reference(model, [1, 2], 5)
    with pytest.raises(RuntimeError, match="copies the cache to the device and back"):
        session.run(None, {})


@pytest.mark.parametrize("mistake, message", [
    ({"cache": "host outputs"}, "copies the cache to the host"),
    ({"cache": "numpy"}, "copies the cache from the host"),
    ({"cache": "reupload"}, "not the present output"),
])
def test_device_decoder_refuses_each_host_round_trip(adapter, mistake, message):
    session = learner.device_decoder(learner.tiny_decoder(6))
    with pytest.raises(RuntimeError, match=message):
        _decode_with(**mistake)(session, [3, 4], 3)


def test_device_decoder_refuses_starting_over_with_an_empty_past(adapter):
    """Rebuilding the cache from nothing for every token gives the right tokens with O(n²) runs: refused
    (blind round 13: it scored full)."""
    from corpus.blind13_l11 import shortcut_decode_recompute

    session = learner.device_decoder(learner.tiny_decoder(6))
    with pytest.raises(RuntimeError, match="bound empty after this session ran"):
        shortcut_decode_recompute(session, [3, 4], 3)
    assert _while_loop(learner.device_decoder(learner.tiny_decoder(6)), [3, 4], 3) == \
        l11.greedy_reference(learner.tiny_decoder(6), [3, 4], 3)


# ---------------------------------------------------------------- messages and hostile answers (no adapter needed)

def test_tolerance_messages_say_what_differed():
    r = evaluate(get("11.tolerance"), lambda d, c: bool(np.allclose(d, c)), seed=0)
    assert "rounding near zero" in failing(r) and "largest difference" in failing(r)["rounding near zero"]
    r = evaluate(get("11.tolerance"), lambda d, c: "yes", seed=0)
    assert all("expected True or False" in m for m in failing(r).values())


@pytest.mark.parametrize("answer", [None, 42, lambda *a: None, lambda *a: 1 / 0, lambda *a: float("nan")])
def test_hostile_answers_give_a_result(answer):
    for ex in ("11.tolerance", "11.placement"):
        r = evaluate(get(ex), answer, seed=0)
        assert r.points == 0 and r.status in ("failed", "not_attempted", "error"), r


def test_hidden_inputs_change_with_the_seed():
    assert l11._placement_data(0)[2:] != l11._placement_data(1)[2:]
    assert l11._decode_data(0) != l11._decode_data(1)
    a, b = l11._tolerance_data(0), l11._tolerance_data(1)
    assert not np.array_equal(a[0][1], b[0][1])


# ---------------------------------------------------------------- issue 37b: what the blind answers found

@pytest.mark.parametrize("answer, cap", [
    (lambda d, c: d.shape == c.shape, 0.25),                                      # never looks at a value
    (lambda d, c: d.shape == c.shape and not np.isnan(d).any() and not np.isnan(c).any()
     and np.abs(d.astype(np.float64) - c).max(initial=0) <= 300 * np.finfo(np.float32).eps
     * np.abs(c).max(initial=0), 0.99),                                            # a NaN checked, an infinity not
])
def test_tolerance_answers_that_skip_part_of_the_rule_lose_points(answer, cap):
    for seed in (0, 20250):
        r = evaluate(get("11.tolerance"), answer, seed=seed)
        assert r.points <= cap * r.max_points, r


def test_tolerance_data_sits_clear_of_the_prompts_bounds():
    """The prompt accepts any bound from ROUNDINGS_MIN to ROUNDINGS_MAX roundings: every rounding case
    must pass the lowest, every wrong one fail the highest (no adapter; milliseconds)."""
    eps = float(np.finfo(np.float32).eps)
    for seed in (0, 1, 2, 20250):
        for name, (d, c, want) in zip(l11.TOLERANCE_TESTS, l11._tolerance_data(seed)):
            if d.shape != c.shape or d.size == 0 or not (np.isfinite(d).all() and np.isfinite(c).all()):
                assert not want or d.size == 0, name
                continue
            roundings = float(np.abs(d.astype(np.float64) - c).max() / (eps * np.abs(c).max()))
            assert roundings < l11.ROUNDINGS_MIN / 2 if want else roundings > 2 * l11.ROUNDINGS_MAX, (name, roundings)


def test_placement_conv_is_renamed_by_the_session(adapter):
    """The premise of the Conv test: even with optimizations off the session renames it '<name>_token_<k>'
    and adds Transposes, so an answer must map names back to the file's."""
    opts = learner.webgpu_options(record=True)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(l11.placement_model(["Conv", "Sign"], ["c", "s"]), opts)
    got = {n.name for sub in sess.get_provider_graph_assignment_info() for n in sub.get_nodes()}
    assert "c" not in got and any(n.startswith("c_token_") for n in got)
    assert any(n.startswith("Transpose") for n in got)


def test_device_decoder_keeps_no_model_bytes(adapter):
    """A process skill is judged where the shortcut does not exist: nothing on the guarded session leads
    back to the model, so an answer cannot open a session of its own (failed before: _model_bytes)."""
    from corpus.l11_blind import decode_own_cpu_session

    session = learner.device_decoder(learner.tiny_decoder(7))
    assert not any(isinstance(v, (bytes, bytearray)) for v in vars(session).values())
    with pytest.raises((TypeError, RuntimeError, ValueError)):
        decode_own_cpu_session(session, [1, 2], 2)


def test_answers_may_not_change_their_arguments():
    """The caller's outputs and prompt come read-only: writing into them raises, with a message."""
    frozen = learner.read_only(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="read-only"):
        frozen /= 2
    prompt = learner.callers_list([1, 2])
    with pytest.raises(RuntimeError, match="changes the prompt"):
        prompt.extend([3])
    assert list(prompt) == [1, 2] and prompt[:1] + [5] == [1, 5]
