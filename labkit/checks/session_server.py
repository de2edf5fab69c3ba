"""Learner side: the host of a confined answer's session (`served`): a child of the zygote that builds each
call's sessions (a `plain.Make`, e.g. lesson 10's bound session) and answers the stand-in's requests — JSON
and raw array bytes, never a pickle from the answer — until the answer's process is gone.
Only the objects it made are reachable, by number; every tensor is a shared buffer it was handed.
The wire both sides speak is here too (the stand-in imports it; this module imports nothing of it)."""
from __future__ import annotations

import json
import mmap
import os
import select
import socket
import struct
import sys
from typing import Any, Callable

import numpy as np

#: the bytes one tensor, and all tensors of one call, may hold on the server
TENSOR_LIMIT, TOTAL_LIMIT = 256 << 20, 1 << 30


# ---------------------------------------------------------------- wire: JSON, arrays, file descriptors


def _send(sock: socket.socket, msg: dict, arrays: tuple = (), fds: tuple = ()) -> None:
    arrays = [np.ascontiguousarray(a) for a in arrays]
    head = json.dumps({**msg, "arrays": [[a.dtype.str, list(a.shape)] for a in arrays]}).encode()
    data = b"".join(struct.pack(">Q", len(f)) + f for f in [head, *(a.tobytes() for a in arrays)])
    socket.send_fds(sock, [data[:8]], list(fds))  # the descriptors ride on the first bytes
    sock.sendall(data[8:])


def _exact(sock: socket.socket, n: int) -> bytes:
    parts, left = [], n
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise EOFError("the check's session closed")
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _recv(sock: socket.socket) -> tuple[dict, list[np.ndarray], list[int]]:
    first, fds, _, _ = socket.recv_fds(sock, 8, 4)
    if not first:
        raise EOFError("the check's session closed")
    size = struct.unpack(">Q", first + _exact(sock, 8 - len(first)))[0]
    if size > 1 << 20:
        raise ValueError("message too long")
    msg = json.loads(_exact(sock, size))
    arrays = []
    for dtype, shape in msg.pop("arrays", []):
        dt = _dtype(dtype)
        n = struct.unpack(">Q", _exact(sock, 8))[0]
        if n != dt.itemsize * int(np.prod(shape, dtype=np.int64)) or n > TENSOR_LIMIT:
            raise ValueError("array size does not match its shape")
        arrays.append(np.frombuffer(_exact(sock, n), dtype=dt).reshape(shape).copy())
    return msg, arrays, list(fds)


def _dtype(spec: Any) -> np.dtype:
    dt = np.dtype(spec)
    if dt.kind not in "biuf":
        raise TypeError(f"tensors of dtype {dt} are not supported in this check")
    return dt


#: the test inputs the host builds (the sessions); any other `Make` is built in the answer's process
SERVED_FACTORIES = {"labkit.material.l09:cache_decoder", "labkit.material.l10_bound:bound_session",
                    "labkit.material.l11:device_decoder"}
#: the one table of the element types both sides name: ONNX's TensorProto number, ONNX Runtime's name
#: ("tensor(float)"), NumPy's dtype
ELEMENT_TYPES = ((1, "float", "<f4"), (2, "uint8", "|u1"), (3, "int8", "|i1"), (4, "uint16", "<u2"),
                 (5, "int16", "<i2"), (6, "int32", "<i4"), (7, "int64", "<i8"), (9, "bool", "|b1"),
                 (10, "float16", "<f2"), (11, "double", "<f8"), (12, "uint32", "<u4"), (13, "uint64", "<u8"))


def numpy_type(onnx_type: int | str) -> str:
    """NumPy's dtype of an ONNX element type, given as TensorProto's number or ONNX Runtime's
    "tensor(float)"; TypeError for one this check does not carry (never a silent float)."""
    for number, name, dtype in ELEMENT_TYPES:
        if onnx_type in (number, f"tensor({name})"):
            return dtype
    raise TypeError(f"tensors of element type {onnx_type!r} are not supported in this check")


def onnx_type_name(dtype: Any) -> str:
    """ONNX Runtime's name of a NumPy dtype ("tensor(float)")."""
    dt = np.dtype(dtype).str
    for _, name, numpy_dtype in ELEMENT_TYPES:
        if numpy_dtype == dt:
            return f"tensor({name})"
    raise TypeError(f"tensors of dtype {np.dtype(dtype)} are not supported in this check")


#: seconds the zygote waits for the host to finish the last call's requests before it starts a new host, and
#: for it to build a call's sessions (the first time: import ONNX Runtime, find a GPU, compile its shaders)
IDLE_WAIT, BUILD_WAIT = 2.0, 50.0  # below confine.START_TIMEOUT: the kernel waits for the call to start


def split(cases: list, placeholder: Callable[[int], Any]) -> tuple[list, list]:
    """`cases` with each session `Make` replaced by `placeholder(its index)`, and those `Make`s in order: the
    answer's process and the host number them alike."""
    from ..plain import Make

    makes: list = []

    def swap(x: Any) -> Any:
        if isinstance(x, Make) and x.factory in SERVED_FACTORIES:
            makes.append(x)
            return placeholder(len(makes) - 1)
        if isinstance(x, (list, tuple)):
            return type(x)(swap(v) for v in x)
        if isinstance(x, dict):
            return {k: swap(v) for k, v in x.items()}
        return x

    return [swap(c) for c in cases], makes


class Host:
    """The zygote's session host: a child of the zygote (never of a call) that imports ONNX Runtime and
    serves one call's connection at a time, so a call costs no library import and a GPU's compiled shaders
    stay warm. Started on the first call that needs it; replaced when it died or is still busy with a call
    that ended (a request stuck in the library)."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.ctl: socket.socket | None = None
        self.busy = False

    def connection(self, cases: bytes) -> socket.socket | None:
        """A new connection to the host for one call whose cases are `cases` (pickled): the answer's end, or
        None when no host could take it."""
        if self.pid is not None and self.busy:
            ready = select.select([self.ctl], [], [], IDLE_WAIT)[0] and self.ctl.recv(1) == b"r"
            if not ready:
                self.stop()
        self.busy = False
        for _ in range(2):  # a host that died while idle is replaced once
            if self.pid is None:
                self._start()
            ours, theirs = socket.socketpair()
            try:
                socket.send_fds(self.ctl, [struct.pack(">Q", len(cases))], [theirs.fileno()])
                self.ctl.sendall(cases)
                # the host says it took the connection once the call's sessions are built
                took = select.select([self.ctl], [], [], BUILD_WAIT)[0] and self.ctl.recv(1) == b"a"
            except OSError:
                took = False
            finally:
                theirs.close()
            if took:
                self.busy = True
                return ours
            self.stop()
            ours.close()
        return None

    def _start(self) -> None:
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            try:
                ours.close()
                host_main(theirs)
            finally:
                os._exit(0)
        theirs.close()
        self.pid, self.ctl = pid, ours

    def forget(self) -> None:
        """In a call forked from the zygote: the host is not the call's to talk to."""
        if self.ctl is not None:
            self.ctl.close()
        self.pid, self.ctl = None, None

    def stop(self) -> None:
        if self.pid is not None:
            import signal

            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except OSError:
                pass
        if self.ctl is not None:
            self.ctl.close()
        self.pid, self.ctl, self.busy = None, None, False


def host_main(ctl: socket.socket) -> None:
    """The host: import ONNX Runtime once, then for each connection the zygote hands over, build that call's
    sessions, say it took the connection ("a"), answer its requests until the answer's process is gone, and
    say it is free ("r")."""
    import pickle
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: go with the zygote
    null = os.open(os.devnull, os.O_RDWR)  # the zygote's requests and replies are not the host's to touch;
    for fd in (0, 1, 2):  # ONNX Runtime's notices are not the answer's printing
        os.dup2(null, fd)
    os.close(null)
    import onnxruntime  # noqa: F401  (once, here: never in the zygote, whose forks run answers)

    from ..plain import materialize

    while True:
        try:
            head, fds, _, _ = socket.recv_fds(ctl, 8, 1)
            if len(head) != 8 or len(fds) != 1:
                return
            conn = socket.socket(fileno=fds[0])
            cases = pickle.loads(_exact(ctl, struct.unpack(">Q", head)[0]))  # written by the check, not the answer
        except Exception:
            return
        with conn:
            try:
                built, problem = [materialize(m) for m in split(cases, int)[1]], ""
            except Exception as e:
                built, problem = [], f"the check could not build its session: {type(e).__name__}: {e}"[:300]
            try:
                ctl.sendall(b"a")
            except OSError:
                return
            serve(conn, _Server(built, problem))
        del built
        try:
            ctl.sendall(b"r")
        except OSError:
            return


def serve(sock: socket.socket, state: "_Server") -> None:
    """Answer one call's requests until the answer's process hangs up."""
    while True:
        try:
            msg, arrays, fds = _recv(sock)
        except Exception:  # the answer hung up, or sent what is not this wire: nothing more to serve
            return
        try:
            reply, out = state.handle(msg, arrays, fds)
        except Exception as e:  # the session's refusal or ONNX Runtime's error, said to the answer
            text = str(e).strip().splitlines()
            reply, out = {"error": (text[0] if text else type(e).__name__)[:400]}, ()
        finally:
            for fd in fds:
                os.close(fd)
        try:
            _send(sock, reply, out)
        except OSError:
            return


class _Server:
    """The objects the answer may reach, by number: the built sessions, their bindings, shared tensors."""

    def __init__(self, built: list, problem: str = ""):
        self.built, self.opened, self.problem = built, set(), problem
        self.objects: dict[int, Any] = {}
        self.total = 0

    def _add(self, obj: Any) -> int:
        self.objects[len(self.objects) + 1] = obj
        return len(self.objects)

    def _get(self, key: Any, kind: type | tuple) -> Any:
        obj = self.objects.get(key) if isinstance(key, int) else None
        if not isinstance(obj, kind):
            raise ValueError("unknown object")
        return obj

    def handle(self, msg: dict, arrays: list, fds: list) -> tuple[dict, tuple]:
        import onnxruntime as ort

        op = msg.get("op")
        if op == "open":
            if self.problem:
                raise RuntimeError(self.problem)
            i = msg.get("index")
            if not isinstance(i, int) or not 0 <= i < len(self.built) or i in self.opened:
                raise ValueError("unknown test input")
            self.opened.add(i)
            return self._session(self.built[i]), ()
        if op == "session.copy":
            import copy

            return self._session(copy.deepcopy(self._get(msg.get("sid"), ort.InferenceSession))), ()
        if op == "session.run":
            sess = self._get(msg.get("sid"), ort.InferenceSession)
            names = [str(n) for n in msg.get("inputs", [])]
            outs = msg.get("outputs")
            return {}, tuple(np.asarray(o) for o in sess.run(outs and [str(n) for n in outs],
                                                               dict(zip(names, arrays))))
        if op == "session.run_with_ort_values":
            sess = self._get(msg.get("sid"), ort.InferenceSession)
            feed = {str(n): self._get(v, tuple)[0] for n, v in zip(msg.get("inputs", []), msg.get("vids", []))}
            outs = msg.get("outputs")
            got = sess.run_with_ort_values(outs and [str(n) for n in outs], feed)
            self.total += sum(v.tensor_size_in_bytes() for v in got)  # kept until the call ends: bounded
            if self.total > TOTAL_LIMIT:
                raise RuntimeError("run_with_ort_values: the outputs kept so far pass this check's memory limit")
            return {"values": [self._meta(self._add((v, None))) for v in got]}, ()
        if op == "binding.new":
            return {"bid": self._add(self._get(msg.get("sid"), ort.InferenceSession).io_binding())}, ()
        if op == "value.new":
            return self._value(msg, arrays, fds), ()
        if op == "value.read":
            return {}, (np.asarray(self._get(msg.get("vid"), tuple)[0].numpy()),)
        if op == "value.update":
            value, host = self._get(msg.get("vid"), tuple)
            if host is not None or len(arrays) != 1:
                raise ValueError("update_inplace: not a value of the session's side")
            value.update_inplace(arrays[0])
            return {}, ()
        binding = self._get(msg.get("bid"), ort.IOBinding)
        if op == "binding.bind":
            value = self._get(msg.get("vid"), tuple)[0]
            which = msg.get("which")
            (binding.bind_ortvalue_input if which == "input" else binding.bind_ortvalue_output)(str(msg["name"]), value)
            return {}, ()
        if op == "binding.bind_output":
            binding.bind_output(str(msg["name"]), str(msg.get("device", "cpu")))
            return {}, ()
        if op == "binding.clear":
            (binding.clear_binding_inputs if msg.get("which") == "input" else binding.clear_binding_outputs)()
            return {}, ()
        if op == "binding.outputs":
            ours = {v[0].data_ptr(): k for k, v in self.objects.items() if isinstance(v, tuple)}
            return {"values": [self._meta(ours.get(v.data_ptr()) or self._add((v, None)))
                               for v in binding.get_outputs()]}, ()
        if op == "binding.copy":
            return {}, tuple(np.asarray(a) for a in binding.copy_outputs_to_cpu())
        if op == "session.run_with_iobinding":
            self._get(msg.get("sid"), ort.InferenceSession).run_with_iobinding(binding)
            return {}, ()
        raise ValueError(f"unknown request {op!r}")

    def _session(self, sess: Any) -> dict:
        def args(nodes: list) -> list:
            return [[n.name, [d if isinstance(d, (int, str)) else None for d in n.shape], n.type] for n in nodes]

        meta = {"inputs": args(sess.get_inputs()), "outputs": args(sess.get_outputs()),
                "providers": sess.get_providers()}
        return {"sid": self._add(sess), "meta": meta}

    def _meta(self, vid: int) -> dict:
        """What the answer's side knows of a value of this side: its number, device, shape, dtype, address."""
        value = self.objects[vid][0]
        return {"vid": vid, "device": value.device_name().lower(), "shape": list(value.shape()),
                "dtype": numpy_type(value.data_type()), "ptr": int(value.data_ptr())}

    def _value(self, msg: dict, arrays: list, fds: list) -> dict:
        """A new value: on the CPU over the shared buffer the answer sent, else on the named device."""
        import onnxruntime as ort

        dt, shape = _dtype(msg.get("dtype")), [int(d) for d in msg.get("shape", [])]
        nbytes = dt.itemsize * int(np.prod(shape, dtype=np.int64))
        if any(d < 0 for d in shape) or nbytes > TENSOR_LIMIT or self.total + nbytes > TOTAL_LIMIT:
            raise ValueError("this check allows no tensor that large")
        device = str(msg.get("device", "cpu"))
        if device != "cpu":
            if arrays and (arrays[0].dtype != dt or list(arrays[0].shape) != shape):
                raise ValueError("a tensor's data does not match its shape")
            value = (ort.OrtValue.ortvalue_from_numpy(arrays[0], device, 0) if arrays
                     else ort.OrtValue.ortvalue_from_shape_and_type(shape, dt, device, 0))
            self.total += nbytes
            return self._meta(self._add((value, None)))
        if nbytes:
            if len(fds) != 1 or os.fstat(fds[0]).st_size < nbytes:
                raise ValueError("a tensor's buffer is missing")
            host = np.ndarray(shape, dt, buffer=mmap.mmap(fds[0], nbytes))
        else:
            host = np.zeros(shape, dt)
        self.total += nbytes
        value = ort.OrtValue.ortvalue_from_numpy(host)  # wraps the shared buffer: the session writes into it
        return {"vid": self._add((value, host))}
