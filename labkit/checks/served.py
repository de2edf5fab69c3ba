"""Learner side: a confined answer's only way to ONNX Runtime is the session the check hands it.

A process skill ("run every batch through one IO binding", "keep the cache on the device") is not judged
by patching a Python method: an answer can call the class's `run` past the patch, the C session under it,
or build a session of its own from the model. So an exercise with `tools=("numpy", "onnxruntime")` runs its
answer confined (`confine`), where the real onnxruntime cannot be imported or read, and its `onnxruntime`
is this module: a stand-in whose `InferenceSession`, `IOBinding` and `OrtValue` reach the check's own
session in another process (the zygote's session host, `session_server`; the session refuses what the
skill excludes). The model, its weights and the real library stay on the host's side.

CPU tensors cross by shared memory (a memfd mapped on both sides), so an `OrtValue`'s `numpy()` is a view
of the buffer the session writes, and a caller's array bound as an input is read when the session runs,
as ONNX Runtime does; a device's tensors stay on the host's side, named by number. The protocol is JSON
plus raw array bytes: nothing the answer sends is unpickled or executed by the host.
"""
from __future__ import annotations

import mmap
import os
import socket
import sys
import types
from typing import Any

import numpy as np

from .session_server import TENSOR_LIMIT, _dtype, _recv, _send, numpy_type, onnx_type_name

#: why the stand-in has no more than it has: said in every refusal
WHERE = ("in this check onnxruntime is a stand-in that reaches the session the check gives you "
         "(InferenceSession, IOBinding and OrtValue)")


def _shared(nbytes: int) -> tuple[int, mmap.mmap | None]:
    """A new shared buffer of `nbytes`: its file descriptor and this side's mapping."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("labkit-tensor", os.MFD_CLOEXEC)
    else:  # macOS: an unlinked file in the call's own folder
        import tempfile

        fd, path = tempfile.mkstemp(dir=".")
        os.unlink(path)
    os.ftruncate(fd, nbytes)
    return fd, (mmap.mmap(fd, nbytes) if nbytes else None)


# ---------------------------------------------------------------- the answer's side: the stand-in module


class _Link:
    """The answer's connection to the server; broken for good once a call was cut short."""

    sock: socket.socket | None = None
    broken = ""

    @classmethod
    def call(cls, op: str, arrays: tuple = (), fds: tuple = (), **kw: Any) -> tuple[dict, list[np.ndarray]]:
        if cls.sock is None or cls.broken:
            raise RuntimeError(cls.broken or f"no session to talk to: {WHERE}")
        cls.broken = "the check's session stopped answering after an earlier call was interrupted"
        _send(cls.sock, {"op": op, **kw}, arrays, fds)
        reply, out, _ = _recv(cls.sock)
        cls.broken = ""
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply, out


class NodeArg:
    """An input or output of the session: name, shape, type (as ONNX Runtime's NodeArg)."""

    def __init__(self, name: str, shape: list, type: str):
        self.name, self.shape, self.type = name, shape, type

    def __repr__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape})"


#: every OrtValue made in this call: a raw pointer to one of them binds that one, not a copy of it
_VALUES: list = []


class OrtValue:
    """A CPU tensor shared with the session's side. Made by `ortvalue_from_numpy` (it wraps your contiguous
    array, as ONNX Runtime does) or `ortvalue_from_shape_and_type` (a new buffer)."""

    def __init__(self, *args: Any, **kwargs: Any):
        raise TypeError("make an OrtValue with OrtValue.ortvalue_from_numpy or "
                        "OrtValue.ortvalue_from_shape_and_type")

    @classmethod
    def _over(cls, host: np.ndarray, mirrored: bool) -> "OrtValue":
        self = object.__new__(cls)
        nbytes = host.nbytes
        if nbytes > TENSOR_LIMIT:
            raise RuntimeError(f"a tensor of {nbytes} bytes is larger than this check allows")
        fd, mm = _shared(nbytes)
        try:
            self._mm = mm
            self._shm = np.ndarray(host.shape, host.dtype, buffer=mm) if mm is not None else host.copy()
            if mirrored:
                self._shm[...] = host
            else:
                host = self._shm
            self._host, self._mirrored = host, mirrored
            reply, _ = _Link.call("value.new", dtype=host.dtype.str, shape=list(host.shape),
                                  fds=(fd,) if mm is not None else ())
            self._vid = reply["vid"]
        finally:
            os.close(fd)
        self._meta = {"device": "cpu"}
        _VALUES.append(self)
        return self

    @classmethod
    def _remote(cls, meta: dict) -> "OrtValue":
        """A value that lives on the session's side only (on a device, or allocated by the session)."""
        self = object.__new__(cls)
        self._host, self._mirrored, self._vid, self._meta = None, False, meta["vid"], meta
        return self

    @classmethod
    def ortvalue_from_numpy(cls, numpy_obj: np.ndarray, device_type: str = "cpu", device_id: int = 0,
                            vendor_id: int = -1) -> "OrtValue":
        arr = np.asarray(numpy_obj)
        _dtype(arr.dtype)
        if _device(device_type) != "cpu":  # copied to the device, as ONNX Runtime does
            return cls._remote(_Link.call("value.new", device=_device(device_type), dtype=arr.dtype.str,
                                          shape=list(arr.shape), arrays=(arr,))[0])
        wraps = arr.flags.c_contiguous and arr.flags.writeable
        return cls._over(arr if wraps else np.ascontiguousarray(arr).copy(), mirrored=True)

    @classmethod
    def ortvalue_from_shape_and_type(cls, shape: Any, element_type: Any, device_type: str = "cpu",
                                     device_id: int = 0, vendor_id: int = -1) -> "OrtValue":
        shape = [int(d) for d in shape]
        if any(d < 0 for d in shape):
            raise ValueError(f"a shape of sizes >= 0, got {shape}")
        if _device(device_type) != "cpu":
            return cls._remote(_Link.call("value.new", device=_device(device_type),
                                          dtype=_dtype(element_type).str, shape=shape)[0])
        return cls._over(np.zeros(shape, _dtype(element_type)), mirrored=False)

    def _push(self) -> None:
        if self._mirrored:
            self._shm[...] = self._host

    def _pull(self) -> None:
        if self._mirrored:
            self._host[...] = self._shm

    def numpy(self) -> np.ndarray:
        """A view of the buffer on the CPU; a copy read back from the session's side otherwise."""
        if self._host is None:
            return _Link.call("value.read", vid=self._vid)[1][0]
        return self._host.view()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.numpy() if dtype is None else self.numpy().astype(dtype)
        return out.copy() if copy else out

    def shape(self) -> list[int]:
        return list(self._host.shape) if self._host is not None else list(self._meta["shape"])

    def _dt(self) -> np.dtype:
        return self._host.dtype if self._host is not None else np.dtype(self._meta["dtype"])

    def data_ptr(self) -> int:
        return int(self._host.ctypes.data) if self._host is not None else int(self._meta["ptr"])

    def element_type(self) -> str:
        return onnx_type_name(self._dt())

    data_type = element_type

    def device_name(self) -> str:
        return self._meta["device"]

    def has_value(self) -> bool:
        return True

    def is_tensor(self) -> bool:
        return True

    def tensor_size_in_bytes(self) -> int:
        return int(np.prod(self.shape(), dtype=np.int64)) * self._dt().itemsize

    def update_inplace(self, np_arr: np.ndarray) -> None:
        arr = np.asarray(np_arr)
        size = int(np.prod(self.shape(), dtype=np.int64))
        if arr.dtype != self._dt() or arr.size != size:
            raise RuntimeError(f"update_inplace: expected {size} values of {self._dt()}, got {arr.size} of "
                               f"{arr.dtype}")
        if self._host is None:
            _Link.call("value.update", vid=self._vid, arrays=(arr.reshape(self.shape()),))
        else:
            self._host.reshape(-1)[...] = arr.reshape(-1)


def _device(device_type: str) -> str:
    """ONNX Runtime's device name, lower case ("cpu", "webgpu"); the session's side refuses one it lacks."""
    if not isinstance(device_type, str):
        raise TypeError(f"a device name such as 'cpu', got {type(device_type).__name__}")
    return device_type.lower()


def _at(ptr: int, element_type: Any, shape: Any) -> np.ndarray:
    """The caller's memory at `ptr` as an array (what ONNX Runtime reads or writes for a raw pointer)."""
    import ctypes

    dt, shape = _dtype(element_type), [int(d) for d in shape]
    n = dt.itemsize * int(np.prod(shape, dtype=np.int64))
    return np.frombuffer((ctypes.c_char * n).from_address(int(ptr)), dtype=dt).reshape(shape) if n else \
        np.zeros(shape, dt)


class IOBinding:
    """Inputs and outputs bound once, for `InferenceSession.run_with_iobinding` (ONNX Runtime's API)."""

    def __init__(self, session: "InferenceSession"):
        self._sid = session._sid
        self._bid = _Link.call("binding.new", sid=self._sid)[0]["bid"]
        self._inputs: dict[str, OrtValue] = {}
        self._outputs: dict[str, OrtValue | None] = {}

    def _bind(self, which: str, name: str, value: OrtValue) -> None:
        if not isinstance(value, OrtValue):
            raise TypeError(f"bind_ortvalue_{which}: expected an OrtValue, got {type(value).__name__}")
        _Link.call("binding.bind", bid=self._bid, name=str(name), vid=value._vid, which=which)
        (self._inputs if which == "input" else self._outputs)[str(name)] = value

    def bind_cpu_input(self, name: str, arr_on_cpu: np.ndarray) -> None:
        self._bind("input", name, OrtValue.ortvalue_from_numpy(arr_on_cpu))

    def bind_ortvalue_input(self, name: str, ortvalue: OrtValue) -> None:
        self._bind("input", name, ortvalue)

    def bind_input(self, name: str, device_type: str, device_id: int, element_type: Any, shape: Any,
                   buffer_ptr: int) -> None:
        if _device(device_type) != "cpu":
            raise RuntimeError(f"bind_input: a raw {device_type} pointer cannot reach this check's session; "
                               "bind an OrtValue (bind_ortvalue_input)")
        self._bind("input", name, self._value_at(buffer_ptr, element_type, shape))

    def bind_ortvalue_output(self, name: str, ortvalue: OrtValue) -> None:
        self._bind("output", name, ortvalue)

    def bind_output(self, name: str, device_type: str = "cpu", device_id: int = 0, element_type: Any = None,
                    shape: Any = None, buffer_ptr: int | None = None) -> None:
        if buffer_ptr is None:  # the session allocates it when it runs
            _Link.call("binding.bind_output", bid=self._bid, name=str(name), device=_device(device_type))
            self._outputs[str(name)] = None
        elif _device(device_type) != "cpu":
            raise RuntimeError(f"bind_output: a raw {device_type} pointer cannot reach this check's session; "
                               "bind an OrtValue (bind_ortvalue_output)")
        else:
            self._bind("output", name, self._value_at(buffer_ptr, element_type, shape))

    def _value_at(self, ptr: int, element_type: Any, shape: Any) -> OrtValue:
        for v in _VALUES:
            if v is not None and v.data_ptr() == int(ptr) and v.shape() == [int(d) for d in shape]:
                return v
        return OrtValue._over(_at(ptr, element_type, shape), mirrored=True)

    def get_outputs(self) -> list[OrtValue]:
        """The bound outputs: your own OrtValues, or the session's (on its side, read back on numpy())."""
        ours = {v._vid: v for v in _VALUES}
        return [ours.get(m["vid"]) or OrtValue._remote(m)
                for m in _Link.call("binding.outputs", bid=self._bid)[0]["values"]]

    get_outputs_as_ortvaluevector = get_outputs

    def copy_outputs_to_cpu(self) -> list[np.ndarray]:
        return _Link.call("binding.copy", bid=self._bid)[1]

    def clear_binding_inputs(self) -> None:
        _Link.call("binding.clear", bid=self._bid, which="input")
        self._inputs.clear()

    def clear_binding_outputs(self) -> None:
        _Link.call("binding.clear", bid=self._bid, which="output")
        self._outputs.clear()

    def synchronize_inputs(self) -> None:
        pass

    def synchronize_outputs(self) -> None:
        pass


class InferenceSession:
    """The check's session, seen from the answer's process: ONNX Runtime's methods, run on the other side."""

    def __init__(self, *args: Any, **kwargs: Any):
        raise RuntimeError(f"a session of your own cannot be made here: {WHERE}")

    @classmethod
    def _remote(cls, index: int) -> "InferenceSession":
        self = object.__new__(cls)
        reply, _ = _Link.call("open", index=index)
        self._sid = reply["sid"]
        self._meta = reply["meta"]
        return self

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"session.{name} is not available: {WHERE}")

    def get_inputs(self) -> list[NodeArg]:
        return [NodeArg(*a) for a in self._meta["inputs"]]

    def get_outputs(self) -> list[NodeArg]:
        return [NodeArg(*a) for a in self._meta["outputs"]]

    def get_providers(self) -> list[str]:
        return list(self._meta["providers"])

    def io_binding(self) -> IOBinding:
        return IOBinding(self)

    def create_ortvalue_from_shape_and_type(self, shape: Any, element_type: Any, device_type: str,
                                            device_id: int = 0, vendor_id: int = -1) -> OrtValue:
        """An OrtValue from "this session's allocator" (here as any other: a new shared buffer)."""
        if isinstance(element_type, int):  # an ONNX TensorProto type
            element_type = numpy_type(element_type)
        return OrtValue.ortvalue_from_shape_and_type(shape, element_type, device_type, device_id)

    def run(self, output_names: Any, input_feed: dict, run_options: Any = None) -> list[np.ndarray]:
        names = list(input_feed)
        _, out = _Link.call("session.run", sid=self._sid, outputs=None if output_names is None else list(output_names),
                            inputs=names, arrays=tuple(np.asarray(input_feed[n]) for n in names))
        return out

    def run_with_ort_values(self, output_names: Any, input_dict_ort_values: dict, run_options: Any = None) -> list:
        """ONNX Runtime's run on OrtValues: the outputs are OrtValues the session allocated (on its side)."""
        names = list(input_dict_ort_values)
        values = [input_dict_ort_values[n] for n in names]
        for v in values:
            if not isinstance(v, OrtValue):
                raise TypeError(f"run_with_ort_values: expected OrtValue inputs, got {type(v).__name__}")
            v._push()
        reply, _ = _Link.call("session.run_with_ort_values", sid=self._sid, inputs=names, vids=[v._vid for v in values],
                              outputs=None if output_names is None else list(output_names))
        return [OrtValue._remote(m) for m in reply["values"]]

    def run_with_iobinding(self, iobinding: IOBinding, run_options: Any = None) -> None:
        if not isinstance(iobinding, IOBinding):
            raise TypeError(f"run_with_iobinding: expected session.io_binding(), got {type(iobinding).__name__}")
        for v in iobinding._inputs.values():
            v._push()
        _Link.call("session.run_with_iobinding", sid=self._sid, bid=iobinding._bid)
        for v in iobinding._outputs.values():
            if v is not None:
                v._pull()

    def __deepcopy__(self, memo: dict) -> "InferenceSession":
        copy = object.__new__(type(self))
        copy._sid, copy._meta = _Link.call("session.copy", sid=self._sid)[0]["sid"], self._meta
        return copy


class SessionOptions:
    def __init__(self, *args: Any, **kwargs: Any):
        raise RuntimeError(f"SessionOptions: {WHERE}")


class RunOptions:
    """Accepted and ignored (a run's tag or log level changes nothing here)."""


def get_available_providers() -> list[str]:
    return ["CPUExecutionProvider"]


def get_device() -> str:
    return "CPU"


class _Remote:
    """Stands in a case for a test input built on the server: the fresh copy a call gets is the session."""

    def __init__(self, index: int):
        self.index = index

    def __deepcopy__(self, memo: dict) -> InferenceSession:
        return InferenceSession._remote(self.index)


def _module_getattr(name: str) -> Any:
    raise AttributeError(f"onnxruntime.{name} is not available: {WHERE}")


def stand_in() -> dict[str, types.ModuleType]:
    """The modules `onnxruntime` and the submodule its classes come from (a function that names
    `onnxruntime.capi.onnxruntime_inference_collection.OrtValue` by reference finds it here)."""
    top = types.ModuleType("onnxruntime", __doc__)
    inner = types.ModuleType("onnxruntime.capi.onnxruntime_inference_collection")
    capi = types.ModuleType("onnxruntime.capi")
    for mod in (top, inner):
        for obj in (InferenceSession, IOBinding, OrtValue, NodeArg, SessionOptions, RunOptions,
                    get_available_providers, get_device):
            setattr(mod, obj.__name__, obj)
        mod.__getattr__ = _module_getattr
    capi.onnxruntime_inference_collection = inner
    capi.__getattr__ = _module_getattr
    top.capi = capi
    top.__path__, capi.__path__ = [], []  # packages: importing anything else below them asks `confine._OnlyTools`
    top.__version__ = "served"
    return {"onnxruntime": top, "onnxruntime.capi": capi, inner.__name__: inner}


def connect(cases: list, sock: socket.socket) -> list:
    """In the answer's process, before it confines itself: `cases` with each session `Make` replaced by a
    stand-in for what the host builds of it (`sock`: this call's connection to the zygote's session host),
    and the stand-in `onnxruntime` in `sys.modules`."""
    from .session_server import split

    _Link.sock = sock
    sys.modules.update(stand_in())
    return split(cases, _Remote)[0]
