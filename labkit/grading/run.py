"""Stage 4: run the rebuilt cells of one submission in confined kernels (nbclient over IPC sockets).

Each kernel is forked by the worker's warm kernel server (`forkserver`), which runs inside
bubblewrap and `labkit.sandbox` (pids cgroup, resource limits, death with the worker): the kernel
sees only the Python environment, the learner-side `labkit`, the test inputs and the verified
course data, as an unprivileged uid. Its channels to the worker are bounded
(message size and queue). A cell that hangs is interrupted (or its kernel replaced, replaying the
cells before it) and a kernel that dies is replaced the same way, so the other exercises are graded.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .forkserver import STARTUP_TIMEOUT, ForkedKernel, KernelServer, log_tail
from .rebuild import RunCell
from .relay import Relay
from ..text import shorten

MAX_RESTARTS = 3
PROBE_TIMEOUT = 6
#: largest message a kernel may send the worker (all its frames), and how many may wait in a queue
MAX_MESSAGE_BYTES = 8 << 20
MAX_QUEUED = 64
_TIMEOUT_ENAME = "LabkitCellTimeout"


def bound_channels() -> None:
    """Kept for callers: the bounds are set on the context the kernel clients really use
    (`bounded_context`)."""
    bounded_context()


_CONTEXT = None


def bounded_context():
    """The ZMQ context of every kernel client of this worker: each socket made from it refuses a
    frame over MAX_MESSAGE_BYTES and queues at most MAX_QUEUED messages; the relay (`relay.Relay`)
    ends a connection whose message, all its frames together, would pass MAX_MESSAGE_BYTES. So a
    kernel flooding its output cannot grow the worker's memory. (jupyter_client's clients otherwise
    make a context of their own with no such bound.)"""
    global _CONTEXT
    import zmq
    import zmq.asyncio

    if _CONTEXT is None:
        ctx = zmq.asyncio.Context()
        ctx.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        ctx.setsockopt(zmq.RCVHWM, MAX_QUEUED)
        ctx.setsockopt(zmq.SNDHWM, MAX_QUEUED)
        _CONTEXT = ctx
    return _CONTEXT


def _client_class():
    from nbclient import NotebookClient

    class QuietClient(NotebookClient):
        """Keeps only error outputs (name and message), so a flood of output costs no memory."""

        def output(self, outs, msg, display_id, cell_index):
            if msg.get("msg_type") != "error":
                return None
            c = msg.get("content", {})
            from nbformat import NotebookNode

            out = NotebookNode(output_type="error", ename=shorten(c.get("ename", ""), 100),
                               evalue=shorten(c.get("evalue", ""), 300), traceback=[])
            if len(outs) < 5:
                outs.append(out)
            return out

        def handle_comm_msg(self, outs, msg, cell_index):
            return None

        async def _async_handle_timeout(self, timeout, cell=None):
            self.timed_out = True  # nbclient interrupts the kernel and hands back an error reply
            return await super()._async_handle_timeout(timeout, cell)

    return QuietClient


@dataclass
class Kernel:
    km: Any                           # a forkserver.ForkedKernel
    kc: Any
    client: Any
    n: int
    relay: Any = None                 # relay.Relay between the kernel and this client


class Runner:
    """Runs the rebuilt cells of one submission in confined kernels; records what happened per cell."""

    def __init__(self, cells: list[RunCell], server: KernelServer, cell_timeout: float, notebook_timeout: float):
        self.cells, self.server = cells, server
        self.cell_timeout, self.notebook_timeout = cell_timeout, notebook_timeout
        self.events: list[dict] = []     # {"cell": position, "what": ok|error|timeout|died|skipped, ...}
        self.kernel_starts = 0
        self.retried = False             # a kernel death was retried once in a fresh server

    async def _start(self) -> Kernel:
        """A kernel forked by the worker's warm server (started again if a kernel killed it)."""
        import nbformat
        from jupyter_client.asynchronous import AsyncKernelClient
        from jupyter_client.connect import write_connection_file

        self.kernel_starts += 1
        n = self.kernel_starts
        self.server.ensure()
        conn = self.server.conn_dir(n)  # root-owned, outside the learner's folder
        fname, info = write_connection_file(str(conn / f"k{n}.json"), transport="ipc", ip=str(conn / "k"),
                                            key=os.urandom(32).hex().encode())
        if self.server.kernel_uid is not None:  # the kernel, an unprivileged uid, must read it
            os.chown(fname, 0, self.server.kernel_uid)
            os.chmod(fname, 0o640)
        pid = self.server.fork(Path(fname), conn / "kernel.log")
        relay = Relay(info, self.server.relay_dir(n), MAX_MESSAGE_BYTES)  # bounded per message, not per frame
        kc = AsyncKernelClient(context=bounded_context())
        kc.load_connection_info(relay.client_info())
        kc.start_channels()
        km = ForkedKernel(self.server, pid, kc)
        try:
            await self._wait_ready(kc, pid, conn / "kernel.log")
            self.server.lock(conn)
        except BaseException as e:
            await self._stop(Kernel(km, kc, None, n, relay))
            if isinstance(e, RuntimeError):
                raise
            raise RuntimeError(shorten(e, 200)) from None
        client = _client_class()(nbformat.v4.new_notebook(), km=km, allow_errors=True, interrupt_on_timeout=True,
                                 error_on_timeout={"ename": _TIMEOUT_ENAME, "evalue": "cell time limit",
                                                   "traceback": []},
                                 store_widget_state=False, record_timing=False, iopub_timeout=4,
                                 raise_on_iopub_timeout=False, shell_timeout_interval=1)
        client.kc = kc
        return Kernel(km, kc, client, n, relay)

    async def _wait_ready(self, kc, pid: int, log: Path) -> None:
        """Until the kernel answers kernel_info and shows it on IOPub (a kernel drops IOPub messages
        until the worker's subscription has arrived). jupyter_client's wait_for_ready first waits for
        heartbeats in 0.2 s steps; this asks at once and watches the forked process instead."""
        from queue import Empty

        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            msg_id = kc.kernel_info()
            while True:
                try:
                    msg = await kc.shell_channel.get_msg(timeout=0.05)
                except Empty:
                    if not self.server.kernel_alive(pid):
                        raise RuntimeError("the kernel ended while starting: " + log_tail(log)) from None
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"the kernel did not answer within {STARTUP_TIMEOUT} s") from None
                    continue
                if msg.get("parent_header", {}).get("msg_id") == msg_id:
                    break
            try:
                await kc.iopub_channel.get_msg(timeout=0.2)
                break
            except Empty:
                continue  # IOPub not connected yet: ask again
        while True:  # drop what IOPub said while starting
            try:
                await kc.iopub_channel.get_msg(timeout=0.01)
            except Empty:
                return

    async def _stop(self, k: Kernel | None) -> None:
        """End a kernel and everything it started (the server itself stays)."""
        if k is None:
            return
        try:
            if k.kc is not None:
                k.kc.stop_channels()
        except Exception:
            pass
        await k.km.shutdown_kernel(now=True)
        if k.relay is not None:
            k.relay.close()

    async def _exec(self, k: Kernel, source: str, timeout: float) -> dict:
        import nbformat
        from nbclient.exceptions import CellTimeoutError, DeadKernelError

        cell = nbformat.v4.new_code_cell(source)
        k.client.nb.cells = [cell]
        k.client.timed_out = False
        k.client.timeout = max(1, int(timeout))
        t0 = time.monotonic()
        try:
            await k.client.async_execute_cell(cell, 0, store_history=False)
        except DeadKernelError:
            return {"what": "died", "seconds": time.monotonic() - t0}
        except CellTimeoutError:
            return {"what": "timeout", "seconds": time.monotonic() - t0}
        except Exception as e:  # a confused channel: treat the kernel as lost
            return {"what": "died", "detail": shorten(e, 200), "seconds": time.monotonic() - t0}
        errors = [o for o in cell.outputs if o.get("output_type") == "error"]
        if getattr(k.client, "timed_out", False) or any(o.get("ename") == _TIMEOUT_ENAME for o in errors):
            return {"what": "timeout", "seconds": time.monotonic() - t0}
        if errors:
            e = errors[-1]
            return {"what": "error", "ename": e.get("ename", ""), "evalue": e.get("evalue", ""),
                    "seconds": time.monotonic() - t0}
        if not await self._alive(k):
            return {"what": "died", "seconds": time.monotonic() - t0}
        return {"what": "ok", "seconds": time.monotonic() - t0}

    async def _alive(self, k: Kernel) -> bool:
        try:
            return bool(await k.km.is_alive())
        except Exception:
            return False

    async def _responsive(self, k: Kernel) -> bool:
        """After an interrupted timeout: does the kernel answer a trivial cell within a few seconds?"""
        if not await self._alive(k):
            return False
        r = await self._exec(k, "None", PROBE_TIMEOUT)
        return r["what"] == "ok"

    def _skip_from(self, pos: int, why: str) -> None:
        """Record every cell from `pos` on as skipped, and why."""
        for p in range(pos, len(self.cells)):
            self.events.append({"cell": p, "what": "skipped", "why": why})

    async def _replay(self, k: Kernel, done: list[int], bad: set[int], deadline: float,
                      left: float) -> tuple[Kernel | None, float]:
        """Re-run in a restarted kernel the cells that ran before, so later answers have what they need.
        Returns the kernel, or None (stopped, the cell added to `bad`) when one of them loses it again,
        and the time left as last measured (the next cell's budget)."""
        for p in done:
            left = deadline - time.monotonic()
            if left <= 1:
                break
            r = await self._exec(k, self.cells[p].source, min(self.cell_timeout, left))
            if r["what"] in ("died", "timeout") and not await self._responsive(k):
                await self._stop(k)
                bad.add(p)
                return None, left
        return k, left

    async def run(self) -> list[dict]:
        """Run every cell; return one event per cell ({"cell", "what": ok|error|timeout|died|skipped, ...})."""
        deadline = time.monotonic() + self.notebook_timeout
        done: list[int] = []        # positions that ran (replayed after a restart), check cells excluded
        bad: set[int] = set()
        k: Kernel | None = None
        restarts = 0
        pos = 0
        try:
            while pos < len(self.cells):
                left = deadline - time.monotonic()
                if left <= 1:
                    self._skip_from(pos, "notebook time limit")
                    break
                if k is None:
                    if restarts > MAX_RESTARTS:
                        self._skip_from(pos, "the kernel kept dying")
                        break
                    try:
                        k = await self._start()
                    except Exception as e:
                        if not restarts:  # the first start does not depend on the submission
                            raise RuntimeError(f"the kernel could not start: {shorten(e, 200)}") from None
                        self._skip_from(pos, "the kernel could not be restarted")
                        break
                    if restarts:
                        k, left = await self._replay(k, done, bad, deadline, left)
                        if k is None:
                            restarts += 1
                            done = [p for p in done if p not in bad]
                            continue
                cell = self.cells[pos]
                r = await self._exec(k, cell.source, min(self.cell_timeout, left))
                r["cell"] = pos
                self.events.append(r)
                if r["what"] == "timeout" and time.monotonic() >= deadline - 1:
                    r["why"] = "notebook time limit"
                lost = r["what"] == "died" or (r["what"] == "timeout" and not await self._responsive(k))
                if r["what"] == "died" and not self.retried:
                    # a death is retried once, in a fresh server, before it counts against the submission
                    self.retried = True
                    self.events.pop()
                    await self._stop(k)
                    k = None
                    self.server.stop()
                    restarts += 1
                    continue
                if lost:
                    await self._stop(k)
                    k = None
                    restarts += 1
                    bad.add(pos)
                elif cell.role != "check" and r["what"] != "timeout":
                    done.append(pos)
                pos += 1
        finally:
            await self._stop(k)
        return self.events


