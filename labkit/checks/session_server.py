"""Learner side: the server of a confined answer's session (`served`): it builds the case's test inputs
(a `plain.Make`, e.g. lesson 10's bound session), confines itself to reading nothing more, and answers the
stand-in's requests — JSON and raw array bytes, never a pickle — until the answer's process is gone.
Only the objects it made are reachable, by number; every tensor is a shared buffer it was handed.
The wire both sides speak is here too (the stand-in imports it; this module imports nothing of it)."""
from __future__ import annotations

import json
import mmap
import os
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


def serve(sock: socket.socket, makes: list, confine: Callable[[], Any]) -> None:
    """Build each test input, confine this process to reading nothing more, and answer requests until the
    answer's process is gone."""
    import signal

    from ..plain import materialize

    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: go with the answer's process
    null = os.open(os.devnull, os.O_WRONLY)  # ONNX Runtime's notices are not the answer's printing
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    built = [materialize(m) for m in makes]
    confine()
    state = _Server(built)
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

    def __init__(self, built: list):
        self.built, self.opened = built, set()
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
        if op == "binding.new":
            return {"bid": self._add(self._get(msg.get("sid"), ort.InferenceSession).io_binding())}, ()
        if op == "value.new":
            return {"vid": self._value(msg, fds)}, ()
        binding = self._get(msg.get("bid"), ort.IOBinding)
        if op == "binding.bind":
            value = self._get(msg.get("vid"), tuple)[0]
            which = msg.get("which")
            (binding.bind_ortvalue_input if which == "input" else binding.bind_ortvalue_output)(str(msg["name"]), value)
            return {}, ()
        if op == "binding.bind_output":
            binding.bind_output(str(msg["name"]), "cpu")
            return {}, ()
        if op == "binding.clear":
            (binding.clear_binding_inputs if msg.get("which") == "input" else binding.clear_binding_outputs)()
            return {}, ()
        if op == "binding.outputs":
            ours = {v[0].data_ptr(): k for k, v in self.objects.items() if isinstance(v, tuple)}
            vids, out = [], []
            for value in binding.get_outputs():
                vids.append(ours.get(value.data_ptr()))
                if vids[-1] is None:
                    out.append(np.asarray(value.numpy()))
            return {"vids": vids}, tuple(out)
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

    def _value(self, msg: dict, fds: list) -> int:
        import onnxruntime as ort

        dt, shape = _dtype(msg.get("dtype")), [int(d) for d in msg.get("shape", [])]
        nbytes = dt.itemsize * int(np.prod(shape, dtype=np.int64))
        if any(d < 0 for d in shape) or nbytes > TENSOR_LIMIT or self.total + nbytes > TOTAL_LIMIT:
            raise ValueError("this check allows no tensor that large")
        if nbytes:
            if len(fds) != 1 or os.fstat(fds[0]).st_size < nbytes:
                raise ValueError("a tensor's buffer is missing")
            host = np.ndarray(shape, dt, buffer=mmap.mmap(fds[0], nbytes))
        else:
            host = np.zeros(shape, dt)
        self.total += nbytes
        value = ort.OrtValue.ortvalue_from_numpy(host)  # wraps the shared buffer: the session writes into it
        return self._add((value, host))
