"""Lesson 11 material, learner side: a one-layer decoder with a key/value cache written directly in
ONNX (seconds to build, no export), WebGPU sessions, and the harness of exercise 11.device_decode.
No answers, no test inputs."""
from __future__ import annotations

import functools

import numpy as np

__all__ = ["tiny_decoder", "webgpu_options", "device_decoder", "read_only", "callers_list"]

CACHE = ("past_keys", "past_values")
PRESENT = ("present_keys", "present_values")


def tiny_decoder(seed: int, d_model: int = 16, vocab: int = 32) -> bytes:
    """A one-layer, one-head decoder with a cache, random weights from `seed`, as ONNX bytes.

    Inputs `ids` (1, 1) int64 and `past_keys`/`past_values` (1, past, d_model) float32; outputs
    `logits` (1, 1, vocab) and `present_keys`/`present_values` (1, past + 1, d_model): the past
    with this token's key and value appended, as in lesson 09's decoder."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    weights = {"embed": rng.normal(size=(vocab, d_model)), "wq": rng.normal(size=(d_model, d_model)) / 4,
               "wk": rng.normal(size=(d_model, d_model)) / 4, "wv": rng.normal(size=(d_model, d_model)) / 4,
               "wo": rng.normal(size=(d_model, vocab)), "scale": np.array(d_model ** -0.5)}
    inits = [numpy_helper.from_array(w.astype(np.float32), name) for name, w in weights.items()]
    node = helper.make_node
    nodes = [node("Gather", ["embed", "ids"], ["h"]),
             node("MatMul", ["h", "wq"], ["q"]), node("MatMul", ["h", "wk"], ["k"]),
             node("MatMul", ["h", "wv"], ["v"]),
             node("Concat", ["past_keys", "k"], ["present_keys"], axis=1),
             node("Concat", ["past_values", "v"], ["present_values"], axis=1),
             node("Transpose", ["present_keys"], ["keys_t"], perm=[0, 2, 1]),
             node("MatMul", ["q", "keys_t"], ["scores"]), node("Mul", ["scores", "scale"], ["scaled"]),
             node("Softmax", ["scaled"], ["attention"], axis=-1),
             node("MatMul", ["attention", "present_values"], ["context"]),
             node("Add", ["h", "context"], ["mixed"]), node("MatMul", ["mixed", "wo"], ["logits"])]
    f = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 1])]
    inputs += [helper.make_tensor_value_info(n, f, [1, "past", d_model]) for n in CACHE]
    outputs = [helper.make_tensor_value_info("logits", f, [1, 1, vocab])]
    outputs += [helper.make_tensor_value_info(n, f, [1, "present", d_model]) for n in PRESENT]
    graph = helper.make_graph(nodes, "tiny_decoder", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    return model.SerializeToString()


def webgpu_options(record: bool = False, fallback: bool = True):
    """SessionOptions with the WebGPU devices `labkit.gpu.setup()` registered (then the CPU for the
    rest). `record` keeps which provider got each node; `fallback=False` refuses CPU fallback."""
    import onnxruntime as ort

    from ..gpu import EP_NAME, setup

    if not any(d.ep_name == EP_NAME for d in ort.get_ep_devices()) and setup() is None:
        raise RuntimeError("no WebGPU adapter on this machine (labkit.doctor() says how to get one)")
    opts = ort.SessionOptions()
    opts.log_severity_level = 4  # a refused session comes back as its exception, not also as a log line
    opts.add_provider_for_devices([d for d in ort.get_ep_devices() if d.ep_name == EP_NAME], {})
    if record:
        opts.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    if not fallback:
        opts.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    return opts


def read_only(array: np.ndarray) -> np.ndarray:
    """A test input of 11.tolerance: the caller's output, which an answer must not write into."""
    array = np.array(array, copy=True)
    array.flags.writeable = False
    return array


class CallersList(list):
    """A test input of 11.device_decode: the caller's prompt, a list that refuses to be changed."""

    def _refuse(self, *args, **kwargs):
        raise RuntimeError("your function changes the prompt it was given (the caller's list): "
                           "copy it first, e.g. list(prompt)")

    append = extend = insert = pop = remove = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse


def callers_list(items: list) -> CallersList:
    return CallersList(items)


def device_decoder(model_bytes: bytes):
    """A test input of 11.device_decode: a WebGPU session of a decoder that runs only through IO
    binding and refuses every copy of the cache between host and device. The session keeps no copy
    of `model_bytes` on the Python side, so an answer cannot open a session of its own."""
    return _device_decoder_class()(model_bytes)


@functools.cache
def _guarded_binding_class():
    """IOBinding subclass, defined on first use so that importing this module needs no onnxruntime."""
    import onnxruntime as ort

    class GuardedBinding(ort.IOBinding):
        """An IOBinding that lets the cache move only from one run's outputs to the next run's inputs."""

        def __init__(self, session):
            device_only = session._sess
            session._sess = device_only.c_session  # the binding itself needs the C session
            try:
                super().__init__(session)
            finally:
                session._sess = device_only
            self._session = device_only  # what run_with_iobinding compares with the session's own
            device_only.bindings.add(id(self._iobinding))
            self._owner = session
            self.output_order: list[str] = []  # get_outputs() follows the order outputs were first bound

        def _bound(self, name):
            if name not in self.output_order:
                self.output_order.append(name)

        def _no_restart(self, name, shape):
            if name in CACHE and tuple(shape)[1:2] == (0,) and self._owner.runs:
                raise RuntimeError(f"{name!r} bound empty after this session ran: starting over with an empty "
                                   "past recomputes everything (no cache); expected last run's present output")

        def bind_cpu_input(self, name, arr_on_cpu):
            self._no_restart(name, np.shape(arr_on_cpu))
            if name in CACHE and np.shape(arr_on_cpu)[1:2] != (0,):
                raise RuntimeError(f"bind_cpu_input({name!r}, ...) copies the cache from the host to the "
                                   "device; expected last run's present output, left on the device")
            super().bind_cpu_input(name, arr_on_cpu)

        def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
            if name in CACHE:
                raise RuntimeError(f"{name!r} bound from a raw buffer; expected last run's present output, left on the device")
            super().bind_input(name, device_type, device_id, element_type, shape, buffer_ptr)

        def bind_ortvalue_input(self, name, ortvalue):
            self._no_restart(name, ortvalue.shape())
            if name in CACHE and ortvalue.shape()[1] > 0:
                left = self._owner._left.get(name)
                if ortvalue.device_name().lower() == "cpu" or left is None or ortvalue.data_ptr() != left:
                    raise RuntimeError(f"{name!r} is not the present output the last run left on the device: "
                                       "the cache went through the host (or was rebuilt)")
            super().bind_ortvalue_input(name, ortvalue)

        def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None,
                        buffer_ptr=None):
            if name in PRESENT and str(device_type).lower() == "cpu":
                raise RuntimeError(f"bind_output({name!r}, 'cpu') copies the cache to the host after every "
                                   "step; expected it kept on the device")
            super().bind_output(name, device_type, device_id, element_type, shape, buffer_ptr)
            self._bound(name)

        def bind_ortvalue_output(self, name, ortvalue):
            if name in PRESENT and ortvalue.device_name().lower() == "cpu":
                raise RuntimeError(f"{name!r} bound to a host buffer: the cache would be copied back every step")
            super().bind_ortvalue_output(name, ortvalue)
            self._bound(name)

        def copy_outputs_to_cpu(self):
            raise RuntimeError("copy_outputs_to_cpu() copies the cache to the host too")

    return GuardedBinding


class _DeviceOnly:
    """The C session under a DeviceDecoder, as `session._sess` shows it: it runs only the session's own
    guarded binding, so neither `InferenceSession.run(session, ...)`, nor `session._sess.run(...)`, nor an
    `ort.IOBinding(session)` built past `io_binding()` can send the cache through the host. (Python
    objects can still be dug out; a process of its own is the boundary that holds against that.)"""

    def __init__(self, c_session):
        self.c_session, self.bindings = c_session, set()

    def run_with_iobinding(self, c_binding, run_options=None):
        if id(c_binding) not in self.bindings:
            raise RuntimeError("only a binding from this session's io_binding() runs it")
        return self.c_session.run_with_iobinding(c_binding, run_options)

    def run(self, *args, **kwargs):
        raise RuntimeError("run() copies the cache to the device and back at every step")

    run_async = run_with_ort_values = run_with_ortvaluevector = run

    def __getattr__(self, name):  # metadata, providers, OrtValue allocation
        return getattr(self.c_session, name)


@functools.cache
def _device_decoder_class():
    import onnxruntime as ort

    class DeviceDecoder(ort.InferenceSession):
        """The decoder on WebGPU: run() refused (it copies the cache both ways every step)."""

        def __init__(self, model_bytes: bytes):
            super().__init__(model_bytes, webgpu_options())
            self._model_bytes = None  # ONNX Runtime keeps the bytes; the C++ session is the only copy
            self._sess = _DeviceOnly(self._sess)
            self._left: dict[str, int] = {}
            self.runs = 0

        def run(self, *args, **kwargs):
            raise RuntimeError("run() copies the cache to the device and back at every step")

        def io_binding(self):
            return _guarded_binding_class()(self)

        def run_with_iobinding(self, iobinding, run_options=None):
            super().run_with_iobinding(iobinding, run_options)
            names = getattr(iobinding, "output_order", [])
            values = iobinding.get_outputs()
            self._left = {past: values[names.index(present)].data_ptr()
                          for past, present in zip(CACHE, PRESENT) if present in names}
            self.runs += 1

        def _reset_session(self, *args, **kwargs):
            raise RuntimeError("this session cannot be re-created")

        def __deepcopy__(self, memo):  # one session per call; nothing to rebuild it from
            return self

    return DeviceDecoder
