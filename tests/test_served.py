"""labkit.checks.served: a confined answer reaches ONNX Runtime only through the check's session, served from
another process — with ONNX Runtime's semantics (an OrtValue's numpy() is a view of the bound buffer, a bound
array is read when the session runs), and no route around it (the class's run, the C session, a session of
its own, the library imported afresh or loaded with ctypes)."""
from __future__ import annotations

import socket
import sys
import time

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
if not hasattr(socket, "send_fds"):
    pytest.skip("the served session needs Unix sockets that carry file descriptors", allow_module_level=True)

from labkit.checks.session_server import _Server  # noqa: E402
from labkit.checks.confine import call_confined  # noqa: E402
from labkit.plain import Make, Raised  # noqa: E402
from labkit_judges.l10 import _softmax_rows, softmax_model  # noqa: E402

TOOLS = ("numpy", "onnxruntime")
RNG = np.random.default_rng(3)
W, B = RNG.normal(size=(4, 3)).astype(np.float32), RNG.normal(size=3).astype(np.float32)
BATCHES = [RNG.normal(size=(2, 4)).astype(np.float32) for _ in range(3)]
WANT = np.concatenate([_softmax_rows(x, W, B) for x in BATCHES])


def case(shift: int = 0) -> list[tuple]:
    model = softmax_model(np.roll(W, shift, axis=1), np.roll(B, shift), "x", "y")
    return [(Make("labkit.material.l10_bound:bound_session", (model, shift, 2)), BATCHES)]


def call(fn, shift: int = 0):
    return call_confined(fn, case(shift), TOOLS, time_limit=20)[0]


def bound_loop(session, batches):
    import onnxruntime as ort

    out = ort.OrtValue.ortvalue_from_shape_and_type([len(batches[0]), 3], np.float32, "cpu")
    binding = session.io_binding()
    binding.bind_ortvalue_output(session.get_outputs()[0].name, out)
    got = []
    for x in batches:
        binding.bind_cpu_input(session.get_inputs()[0].name, x)
        session.run_with_iobinding(binding)
        got.append(out.numpy().copy())
    return np.concatenate(got)


def test_a_bound_loop_gets_the_sessions_outputs_and_numpy_is_a_view_of_the_bound_buffer():
    np.testing.assert_allclose(call(bound_loop, shift=1), WANT, atol=1e-6)

    def views(session, batches):
        import onnxruntime as ort

        out = ort.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32, "cpu")
        binding = session.io_binding()
        binding.bind_ortvalue_output("y", out)
        kept = []
        for x in batches:
            binding.bind_cpu_input("x", x)
            session.run_with_iobinding(binding)
            kept.append(out.numpy())  # no copy: every view shows the last run
        return np.concatenate(kept)

    np.testing.assert_allclose(call(views), np.tile(WANT[-2:], (3, 1)), atol=1e-6)


def test_memory_bound_by_pointer_or_wrapped_is_read_and_written_when_the_session_runs():
    def staged(session, batches):
        from onnxruntime.capi.onnxruntime_inference_collection import OrtValue

        stage = np.empty((2, 4), np.float32)
        result = np.zeros((2, 3), np.float32)
        y = OrtValue.ortvalue_from_numpy(result)  # wraps `result`: the session writes into it
        binding = session.io_binding()
        binding.bind_input("x", "cpu", 0, np.float32, [2, 4], stage.ctypes.data)
        binding.bind_output("y", "cpu", 0, np.float32, y.shape(), y.data_ptr())
        got = []
        for x in batches:
            stage[...] = x
            session.run_with_iobinding(binding)
            got.append(result.copy())
        return np.concatenate(got)

    np.testing.assert_allclose(call(staged, shift=2), WANT, atol=1e-6)


@pytest.mark.parametrize("route, says", [
    ("ort.InferenceSession.run(session, None, {'x': batches[0]})", "only through IO binding"),
    ("session._sess.run(None, {'x': batches[0]}, None)", "session._sess is not available"),
    ("ort.InferenceSession(b'')", "a session of your own cannot be made here"),
    ("session.run_with_ort_values(None, {})", "only through IO binding"),
    ("__import__('onnxruntime.capi._pybind_state')", "No module named 'onnxruntime.capi._pybind_state'"),
])
def test_no_route_around_the_binding(route, says):
    def around(session, batches):
        import onnxruntime as ort  # noqa: F401

        return eval(route)

    out = call(around)
    assert isinstance(out, Raised) and says in out.message, out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Landlock confines on Linux")
def test_the_real_library_cannot_be_reached_afresh():
    import onnxruntime

    folder = str(__import__("pathlib").Path(onnxruntime.__file__).parent)

    def afresh(session, batches):
        import ctypes
        import glob
        import importlib

        sys.meta_path.pop(0)
        for name in [m for m in sys.modules if m.startswith("onnxruntime")]:
            del sys.modules[name]
        sys.path.append(folder.rsplit("/", 1)[0])
        try:
            importlib.import_module("onnxruntime")
        except Exception as e:
            first = repr(e)
        else:
            return "imported"
        try:
            ctypes.CDLL(glob.glob(folder + "/capi/libonnxruntime.so*")[0])
        except Exception as e:
            return first + " | " + repr(e)
        return "loaded"

    out = call(afresh)
    assert isinstance(out, str) and out.count("Permission denied") + out.count("PermissionError") >= 1, out
    assert "imported" != out and "loaded" != out


def test_the_server_refuses_what_is_not_plain_or_not_its_own():
    state = _Server(built=[])
    with pytest.raises(ValueError, match="unknown test input"):
        state.handle({"op": "open", "index": 0}, [], [])
    with pytest.raises(ValueError, match="unknown object"):
        state.handle({"op": "binding.bind", "bid": 7, "name": "x", "vid": 1, "which": "input"}, [], [])
    with pytest.raises(TypeError, match="not supported"):
        state.handle({"op": "value.new", "dtype": "|O", "shape": [1]}, [], [])
    with pytest.raises(ValueError, match="no tensor that large"):
        state.handle({"op": "value.new", "dtype": "<f4", "shape": [1 << 40]}, [], [])
    with pytest.raises(ValueError, match="buffer is missing"):
        state.handle({"op": "value.new", "dtype": "<f4", "shape": [4]}, [], [])


def test_only_sessions_are_served_other_test_inputs_are_built_beside_the_answer():
    model = softmax_model(W, B, "x", "y")
    cases = [(Make("labkit.material.l10_bound:bound_session", (model, 0, 2)),
              Make("labkit.material.l11:callers_list", ([1, 2],)))]

    def kinds(session, prompt):
        return [type(session).__module__, type(prompt).__name__, list(prompt)]

    out = call_confined(kinds, cases, TOOLS, time_limit=20)[0]
    assert out == ["labkit.checks.served", "CallersList", [1, 2]], out  # the stand-in; the list as made


def test_a_call_killed_midway_or_a_dead_host_costs_only_that_call():
    from labkit.checks import confine

    def killed(session, batches):
        import os
        import signal

        session.io_binding()  # a request the host served
        os.kill(os.getpid(), signal.SIGKILL)

    out = call(killed)
    assert isinstance(out, Raised) and "exit status -9" in out.message, out
    np.testing.assert_allclose(call(bound_loop), WANT, atol=1e-6)  # a new host serves the next call

    import os
    import signal

    zygote = confine._ZYGOTE.proc.pid
    hosts = [int(p) for p in os.listdir("/proc") if p.isdigit() and _parent(int(p)) == zygote]
    assert hosts, "the zygote keeps its session host between calls"
    for pid in hosts:
        os.kill(pid, signal.SIGKILL)
    while any(_state(pid) not in ("Z", "") for pid in hosts):  # gone, as after a crash in an earlier call
        time.sleep(0.01)
    np.testing.assert_allclose(call(bound_loop), WANT, atol=1e-6)  # a host that died is replaced


def _state(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def _parent(pid: int) -> int:
    try:
        return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return -1


def test_one_table_of_element_types_matches_onnx_and_onnx_runtime():
    """The stand-in and the session host name element types from one table; each row is what ONNX
    (TensorProto numbers) and ONNX Runtime (OrtValue.data_type) say, and an unknown type is refused,
    never taken for float (the host once described any type it did not know as float32)."""
    import onnxruntime as ort
    from onnx import helper

    from labkit.checks.session_server import ELEMENT_TYPES, numpy_type, onnx_type_name

    for number, name, dtype in ELEMENT_TYPES:
        assert np.dtype(helper.tensor_dtype_to_np_dtype(number)).str == dtype
        value = ort.OrtValue.ortvalue_from_numpy(np.zeros(2, dtype))
        assert value.data_type() == f"tensor({name})" == onnx_type_name(dtype)
        assert numpy_type(number) == numpy_type(value.data_type()) == dtype
    for unknown in ("tensor(string)", "tensor(bfloat16)", 8, 16):
        with pytest.raises(TypeError, match="not supported"):
            numpy_type(unknown)
    with pytest.raises(TypeError, match="not supported"):
        onnx_type_name(np.complex64)
