"""The relay between a kernel's sockets and the worker (`labkit.grading.relay`): a message is bounded as
a whole, however it is split into frames (issue 31). Fast tier: real ZeroMQ sockets, no kernel (~1 s)."""
from __future__ import annotations

import os
import time

import pytest
import zmq

from labkit.grading.relay import Framing, Relay, TooLarge

GREETING = b"\xff" + bytes(8) + b"\x7f" + bytes([3, 0]) + b"NULL".ljust(20, b"\0") + bytes(32)


def frame(body: bytes, more: bool = False, command: bool = False) -> bytes:
    flags = int(more) | (4 if command else 0)
    if len(body) > 255:
        return bytes([flags | 2]) + len(body).to_bytes(8, "big") + body
    return bytes([flags, len(body)]) + body


def test_framing_counts_whole_messages_and_raises_before_the_bound_passes():
    f = Framing(limit=1000)
    f.feed(GREETING + frame(b"READY", command=True))
    f.feed(frame(b"a" * 600, more=True) + frame(b"b" * 300))  # 900 bytes in two frames: fine
    f.feed(frame(b"c" * 1000))                                # exactly the bound, one frame: fine
    stream = b"".join(frame(b"d" * 400, more=True) for _ in range(3))  # 1200 bytes in three frames
    with pytest.raises(TooLarge):
        for i in range(len(stream)):  # byte by byte: found at the third frame's header, before its body
            f.feed(stream[i:i + 1])
            assert i < 2 * 410 + 9, "the oversized message passed its bound"


@pytest.mark.parametrize("bad", [b"\x00" * 64, b"\xff" + bytes(8) + b"\x7f" + bytes([2, 0]) + bytes(52),
                                 GREETING + b"\x80\x01x"])
def test_framing_refuses_what_is_not_zmtp3(bad):
    with pytest.raises(TooLarge):
        Framing(limit=1000).feed(bad)


def test_relay_drops_a_split_flood_and_passes_the_next_message(tmp_path):
    """A PUB 'kernel' sends one message of 40 frames of 100 KB through a relay bounded at 1 MB: the
    subscriber never gets it, and gets the small message sent after it."""
    ctx = zmq.Context()
    kernel, client = ctx.socket(zmq.PUB), ctx.socket(zmq.SUB)
    try:
        kernel.bind(f"ipc://{tmp_path}/k-1")
        info = {"ip": f"{tmp_path}/k", "transport": "ipc", "iopub_port": 1, "shell_port": 2, "stdin_port": 3,
                "control_port": 4, "hb_port": 5}
        relay = Relay(info, tmp_path / "relay", limit=1 << 20)
        client.setsockopt(zmq.SUBSCRIBE, b"")
        client.setsockopt(zmq.RECONNECT_IVL, 20)
        client.connect(f"ipc://{relay.client_info()['ip']}-1")
        deadline = time.monotonic() + 10
        while not client.poll(10):  # the subscription reaches the kernel through the relay
            kernel.send(b"hello")
            assert time.monotonic() < deadline
        while client.poll(50):
            client.recv()
        flood = [os.urandom(100_000)] * 40
        kernel.send_multipart(flood, copy=False)
        time.sleep(0.3)
        received = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and [b"after"] not in received:
            kernel.send(b"after")
            if client.poll(50):
                received.append(client.recv_multipart())
        assert [b"after"] in received and all(len(m) == 1 for m in received), [len(m) for m in received]
        assert relay.dropped >= 1
    finally:
        relay.close()
        client.close(0)
        kernel.close(0)
        ctx.term()
    assert not (tmp_path / "relay").exists()
