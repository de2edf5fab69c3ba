"""Channels bounded per message: a relay between a kernel's sockets and the worker's clients.

ZeroMQ's MAXMSGSIZE bounds one frame, not one message: a kernel that sends one IOPub message of 400
frames of 8 MB each makes the worker's libzmq store all 3.2 GB before the message is complete. So the
worker's clients never connect to a kernel directly: they connect to this relay (a thread of the
worker, its listening sockets in a folder only the worker can open), which connects to the kernel
and passes the bytes on, reading ZMTP 3 framing (greeting, then frames: flags, length, body) in the
kernel-to-worker direction. A message (its frames up to the last) or command over `limit` bytes
ends that connection before more than `limit` bytes of it have passed: libzmq drops the incomplete
message, reconnects, and the kernel's next message comes through. The relay holds at most one
chunk per direction; it never buffers a message.
"""
from __future__ import annotations

import os
import select
import socket
import threading
import time
from pathlib import Path

CHUNK = 1 << 16
GREETING = 64
CHANNELS = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")
CONNECT_SECONDS = 60  # a kernel still starting: its sockets appear within this


class TooLarge(Exception):
    """The kernel sent a message or command over the bound (or something that is not ZMTP 3)."""


class Framing:
    """Follows ZMTP 3 framing in a byte stream, counting each message's bytes; raises TooLarge."""

    def __init__(self, limit: int):
        self.limit = limit
        self.greeting = b""
        self.header = b""        # flags byte + size bytes of the frame being read
        self.body = 0            # bytes of the current frame body still to come
        self.message = 0         # bytes of the current message so far
        self.more = self.command = False

    def feed(self, data: bytes) -> None:
        i, n = 0, len(data)
        while i < n:
            if len(self.greeting) < GREETING:
                take = data[i:i + GREETING - len(self.greeting)]
                self.greeting += take
                i += len(take)
                g = self.greeting
                if g[:1] not in (b"", b"\xff") or (len(g) >= 10 and g[9] != 0x7F) or (len(g) >= 11 and g[10] < 3):
                    raise TooLarge("not a ZMTP 3 peer")
                continue
            if self.body:
                take = min(self.body, n - i)
                self.body -= take
                i += take
                continue
            self.header += data[i:i + 1]
            i += 1
            flags = self.header[0]
            if flags & ~0x07:
                raise TooLarge("bad frame flags")
            need = 9 if flags & 0x02 else 2
            if len(self.header) < need:
                continue
            size = int.from_bytes(self.header[1:need], "big")
            self.header = b""
            self.command = bool(flags & 0x04)
            if self.command:
                if size > self.limit:
                    raise TooLarge(f"a command of {size} bytes")
            else:
                self.message += size
                if self.message > self.limit:
                    raise TooLarge(f"a message of over {self.limit} bytes")
                if not flags & 0x01:
                    self.message = 0
            self.body = size


class _Link:
    """One accepted client connection and its connection to the kernel."""

    def __init__(self, client: socket.socket, target: str, limit: int):
        self.client, self.target, self.kernel = client, target, None
        self.framing = Framing(limit)
        self.to_kernel = b""
        self.to_client = b""
        self.since = time.monotonic()

    def connect(self) -> bool:
        """Try to reach the kernel's socket (it may not exist yet); True when connected."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(self.target)
        except OSError:
            s.close()
            return False
        s.setblocking(False)
        self.kernel = s
        return True

    def close(self) -> None:
        for s in (self.client, self.kernel):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass


class Relay:
    """Relays the five channels of one kernel (see the module's docstring); `client_info()` is the
    connection info the worker's client uses. `close()` ends it and removes its sockets."""

    def __init__(self, info: dict, folder: Path, limit: int):
        self.info, self.folder, self.limit = dict(info), folder, limit
        folder.mkdir(mode=0o700)
        self.listeners: dict[socket.socket, str] = {}
        for ch in CHANNELS:
            port = info[ch]
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(f"{folder}/r-{port}")
            s.listen(8)
            s.setblocking(False)
            self.listeners[s] = f"{info['ip']}-{port}"
        self.links: list[_Link] = []
        self.wake_r, self.wake_w = os.pipe()
        self.done = False
        self.dropped = 0            # connections ended for an oversized message
        self.thread = threading.Thread(target=self._loop, name="labkit-relay", daemon=True)
        self.thread.start()

    def client_info(self) -> dict:
        return dict(self.info, ip=f"{self.folder}/r")

    def close(self) -> None:
        """Stop the thread, close every socket, remove the folder (a second call does nothing)."""
        if self.done:
            return
        self.done = True
        os.write(self.wake_w, b"x")
        self.thread.join(5)
        for s in self.listeners:
            s.close()
        for link in self.links:
            link.close()
        self.links = []
        for fd in (self.wake_r, self.wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        for name in os.listdir(self.folder):
            os.unlink(self.folder / name)
        self.folder.rmdir()

    def _drop(self, link: _Link) -> None:
        link.close()
        self.links.remove(link)

    def _loop(self) -> None:
        while not self.done:
            waiting = [k for k in self.links if k.kernel is None]
            for k in waiting:
                if not k.connect() and time.monotonic() - k.since > CONNECT_SECONDS:
                    self._drop(k)
            rd, wr = [self.wake_r, *self.listeners], []
            for k in self.links:
                if k.kernel is None:
                    continue
                (wr if k.to_kernel else rd).append(k.kernel if k.to_kernel else k.client)
                (wr if k.to_client else rd).append(k.client if k.to_client else k.kernel)
            r, w, _ = select.select(rd, wr, [], 0.01 if waiting else None)
            if self.wake_r in r:
                return
            for s in r:
                if s in self.listeners:
                    try:
                        c, _ = s.accept()
                    except OSError:
                        continue
                    c.setblocking(False)
                    link = _Link(c, self.listeners[s], self.limit)
                    link.connect()
                    self.links.append(link)
            for k in list(self.links):
                if k.kernel is None:
                    continue
                try:
                    self._pump(k, r, w)
                except (OSError, TooLarge) as e:
                    self.dropped += isinstance(e, TooLarge)
                    self._drop(k)

    @staticmethod
    def _pump(k: _Link, r: list, w: list) -> None:
        if k.client in r and not k.to_kernel:
            data = k.client.recv(CHUNK)
            if not data:
                raise OSError("client closed")
            k.to_kernel = data
        if k.kernel in r and not k.to_client:
            data = k.kernel.recv(CHUNK)
            if not data:
                raise OSError("kernel closed")
            k.framing.feed(data)  # raises before an oversized message passes its bound
            k.to_client = data
        if k.to_kernel:
            k.to_kernel = _send(k.kernel, k.to_kernel)
        if k.to_client:
            k.to_client = _send(k.client, k.to_client)


def _send(s: socket.socket, data: bytes) -> bytes:
    """What is left of `data` after one non-blocking send."""
    try:
        return data[s.send(data):]
    except (BlockingIOError, InterruptedError):
        return data
