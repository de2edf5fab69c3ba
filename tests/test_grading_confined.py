"""Confined exercises in the grader (`labkit.grading.confined`): the kernel records the function and never
sees its hidden inputs; the grader calls it afterwards in the kernel's sandbox, confined to NumPy. A library
shortcut, a kernel that looks for the hidden inputs to precompute the outputs, and a learner graded right
after them: each gets what its answer earns."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from grading_util import with_answers
from labkit import sandbox

pytestmark = pytest.mark.grading

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / "06_quantization.ipynb"

HONEST = '''
import numpy as np


def quantize(x, scale, zero_point, qmin, qmax):
    levels = np.rint(np.asarray(x, np.float64) / np.asarray(scale, np.float64))
    return np.clip(levels + np.asarray(zero_point, np.int64), qmin, qmax).astype(np.int32)
'''

LIBRARY = '''
import numpy as np
from onnx.reference import ReferenceEvaluator
from onnx import helper, TensorProto


def quantize(x, scale, zero_point, qmin, qmax):
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=0)
    z = np.asarray(zero_point).astype(np.int8 if qmin < 0 else np.uint8)
    graph = helper.make_graph([node], "q", [], [])
    ref = ReferenceEvaluator(helper.make_model(graph))
    return ref.run(None, {"x": x, "s": np.asarray(scale, np.float32), "z": z})[0].astype(np.int32)
'''

# the kernel hunts for the hidden inputs, to compute the outputs with ONNX and hand in a lookup table
HUNTER = '''
import glob, os
import numpy as np
from labkit import plain

_seen = {}
_where = os.environ.get("LABKIT_INPUTS_DIR", "")
for folder in glob.glob(_where + "/*") + glob.glob(os.path.dirname(_where) + "/*/*"):
    if folder.endswith("06.quantize"):
        try:
            for x, s, z, lo, hi in plain.load_inputs(folder):
                _seen[np.asarray(x).tobytes()] = np.clip(np.round(x / s) + z, lo, hi).astype(np.int32)
        except Exception:
            pass


def quantize(x, scale, zero_point, qmin, qmax):
    if x.tobytes() in _seen:
        return _seen[x.tobytes()]
    raise ValueError(f"found no hidden inputs ({len(_seen)} seen)")
'''


def graded(tmp_path: Path, solution: Path, exercise: str, answers: dict[str, str]) -> dict[str, dict]:
    """`exercise`'s row in grades.csv per learner, each learner the `solution` with their answer, all graded
    by one worker in bubblewrap (in the order of their names)."""
    if not sandbox.bwrap_status()[0]:
        pytest.skip("bubblewrap is not usable here: " + sandbox.bwrap_status()[1])
    subs, out = tmp_path / "class", tmp_path / "out"
    subs.mkdir()
    for name, code in answers.items():
        (subs / f"{name}.ipynb").write_text(json.dumps(with_answers(solution, {exercise: code})))
    r = subprocess.run([sys.executable, "-m", "labkit.cli", "grade", solution.stem, str(subs), "--out", str(out),
                        "--jobs", "1", "--no-progress", "--exercise", exercise],
                       capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    with open(out / "grades.csv", newline="") as f:
        return {row["student"]: row for row in csv.DictReader(f) if row["exercise"] == exercise}


def test_confined_answers_are_called_by_the_grader_not_the_kernel(tmp_path):
    rows = graded(tmp_path, SOLUTION, "06.quantize", {"a_library": LIBRARY, "b_hunter": HUNTER, "c_honest": HONEST})
    assert float(rows["a_library"]["points"]) == 0 and "onnx" in rows["a_library"]["message"], rows["a_library"]
    assert float(rows["b_hunter"]["points"]) == 0 and "found no hidden inputs (0 seen)" in rows["b_hunter"]["message"], \
        rows["b_hunter"]
    assert rows["c_honest"]["status"] == "passed", rows["c_honest"]  # right after two hostile ones, same worker


SOLUTION_10 = ROOT / "solutions" / "10_beyond.ipynb"

BOUND = '''
import numpy as np
import onnxruntime as ort


def predict_bound(session, batches):
    out = ort.OrtValue.ortvalue_from_shape_and_type(
        [len(batches[0]), session.get_outputs()[0].shape[1]], np.float32, "cpu")
    binding = session.io_binding()
    binding.bind_ortvalue_output(session.get_outputs()[0].name, out)
    got = []
    for x in batches:
        binding.bind_cpu_input(session.get_inputs()[0].name, x)
        session.run_with_iobinding(binding)
        got.append(out.numpy().copy())
    return np.concatenate(got)
'''

# past the check's session: the class's run on all batches, its class rotation undone by hand
AROUND = '''
import numpy as np
import onnxruntime as ort


def predict_bound(session, batches):
    name = session.get_inputs()[0].name
    out = ort.InferenceSession.run(session, None, {name: np.concatenate(batches)})[0]
    return np.roll(out, -session._shift, axis=1)
'''

# a session of its own, from the model the check's session was made of
OWN = '''
import numpy as np
import onnxruntime as ort


def predict_bound(session, batches):
    own = ort.InferenceSession(session._model_bytes, providers=["CPUExecutionProvider"])
    out = own.run(None, {session.get_inputs()[0].name: np.concatenate(batches)})[0]
    return np.roll(out, -session._shift, axis=1)
'''


def test_the_io_binding_session_is_served_to_the_answer_in_the_sandbox(tmp_path):
    rows = graded(tmp_path, SOLUTION_10, "10.io_binding", {"a_around": AROUND, "b_own": OWN, "c_honest": BOUND})
    assert float(rows["a_around"]["points"]) == 0 and "only through IO binding" in rows["a_around"]["message"], \
        rows["a_around"]
    assert float(rows["b_own"]["points"]) == 0 and "not available" in rows["b_own"]["message"], rows["b_own"]
    assert rows["c_honest"]["status"] == "passed", rows["c_honest"]  # right after two that went around it


SOLUTION_11 = ROOT / "solutions" / "11b_device_data.ipynb"  # where 11.device_decode is answered

# run() on the C session under the check's session, the cache through the host at every step
UNDER = '''
import numpy as np


def decode_on_device(session, prompt, n_new):
    c = getattr(session._sess, "c_session", session._sess)
    width = session.get_inputs()[1].shape[2]
    keys = values = np.zeros((1, 0, width), np.float32)
    tokens, names = list(prompt), [o.name for o in session.get_outputs()]
    for step in range(len(prompt) + n_new - 1):
        feed = {"ids": np.array([[tokens[step]]]), "past_keys": keys, "past_values": values}
        logits, keys, values = c.run(names, feed, None)
        if step >= len(prompt) - 1:
            tokens.append(int(logits[0, -1].argmax()))
    return tokens[len(prompt):]
'''


def test_the_device_decoder_is_served_to_the_answer_in_the_sandbox(tmp_path):
    from labkit import gpu

    if not gpu.status()[0]:
        pytest.skip("no WebGPU adapter here: " + gpu.status()[1])
    honest = next("".join(c["source"]) for c in json.loads(SOLUTION_11.read_text())["cells"]
                  if "answer:11.device_decode" in c.get("metadata", {}).get("tags", []))
    rows = graded(tmp_path, SOLUTION_11, "11.device_decode", {"a_under": UNDER, "b_honest": honest})
    assert float(rows["a_under"]["points"]) == 0 and "not available" in rows["a_under"]["message"], rows["a_under"]
    assert rows["b_honest"]["status"] == "passed", rows["b_honest"]  # right after one that went around it
