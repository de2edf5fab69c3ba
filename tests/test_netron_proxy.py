"""Netron through jupyter-server-proxy, as on Binder/JupyterHub.

A real JupyterLab runs under the base URL /user/test/ (what JupyterHub gives a user) with a token.
`labkit.viz.netron` runs in a separate process with JUPYTERHUB_SERVICE_PREFIX=/user/test/, like a
kernel on Binder, and the test fetches Netron's page and the model bytes through the proxied URL
the IFrame points at. Netron (netron/server.py) puts the model's address in the page as
`<meta name="file" content="/data/<name>">` and the page fetches it relative to its own folder
(browser.js `_url`), so the model is at `<iframe src>data/<name>`.
"""
from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_util import LabServer  # noqa: E402

PREFIX = "/user/test/"
pytestmark = pytest.mark.skipif(not hasattr(__import__("labkit.viz").viz, "netron"),
                                reason="labkit.viz.netron does not exist yet")

# Runs in a child process, like a kernel: serve the model, print the IFrame's src, keep serving
# until stdin closes (then the process exits and its Netron server with it).
VIEWER = r"""
import json, sys
import onnx
import labkit.viz
kind, path = sys.argv[1], sys.argv[2]
model = {"path": lambda: path, "proto": lambda: onnx.load(path), "bytes": lambda: open(path, "rb").read()}[kind]()
frame = labkit.viz.netron(model)
print(json.dumps({"src": frame.src}), flush=True)
sys.stdin.read()
"""


def _model() -> onnx.ModelProto:
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "W")
    graph = helper.make_graph([helper.make_node("MatMul", ["X", "W"], ["H"]), helper.make_node("Relu", ["H"], ["Y"])],
                              "netron_proxy_test", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 4])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 3])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("netron-root")
    with LabServer(root, tmp_path_factory.mktemp("netron-lab"), base_url=PREFIX) as server:
        yield server


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("netron-model") / "tiny.onnx"
    onnx.save(_model(), path)
    return path


class Viewer:
    """labkit.viz.netron(...) running in a child process; `src` is the IFrame's URL."""

    def __init__(self, kind: str, path: Path, prefix: str | None):
        env = {k: v for k, v in __import__("os").environ.items() if k != "JUPYTERHUB_SERVICE_PREFIX"}
        if prefix is not None:
            env["JUPYTERHUB_SERVICE_PREFIX"] = prefix
        self.proc = subprocess.Popen([sys.executable, "-c", VIEWER, kind, str(path)], env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.proc.stdout.readline()
        if not line:
            self.close()
            pytest.fail(f"labkit.viz.netron({kind}) failed:\n{self.proc.stderr.read()[-3000:]}")
        self.src = json.loads(line)["src"]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _model_name(page: bytes) -> str:
    m = re.search(rb'<meta name="file" content="([^"]+)">', page)
    assert m, "Netron's page names no model file (<meta name=\"file\">)"
    return html.unescape(m.group(1).decode())


@pytest.mark.parametrize("kind", ["path", "proto", "bytes"])
def test_netron_through_jupyter_server_proxy(lab, model_file, kind):
    with Viewer(kind, model_file, PREFIX) as viewer:
        m = re.fullmatch(re.escape(PREFIX) + r"proxy/(\d+)/", viewer.src)
        assert m, f"under JupyterHub the IFrame should point at {PREFIX}proxy/<port>/, got {viewer.src!r}"
        base = f"http://127.0.0.1:{lab.port}{viewer.src}"

        status, page, headers = lab.request(base, absolute=True)
        assert status == 200, f"GET {viewer.src} through the proxy gave {status}: {page[:300]!r}"
        assert b"netron" in page.lower() and headers.get("Content-Type", "").startswith("text/html")
        status, script, _ = lab.request(base + "index.js", absolute=True)
        assert status == 200 and script, "Netron's scripts, relative to the page, are not reachable through the proxy"

        file = _model_name(page)
        # browser.js resolves the file relative to the page's folder: strip one leading "/" or "./"
        relative = file[2:] if file.startswith("./") else file.lstrip("/")
        status, data, _ = lab.request(base + relative, absolute=True)
        assert status == 200, f"the model at {viewer.src}{relative} gave {status}"
        assert onnx.load_from_string(data) == _model(), "the bytes served through the proxy are not the model"
        if kind == "path":
            assert data == model_file.read_bytes()

        status, _, _ = lab.request(base, absolute=True, token=False)
        assert status in (302, 401, 403), f"the proxied viewer must need the Jupyter token; got {status} without it"
    # the viewer process exited: its Netron server is gone, the proxy answers with an error
    status, _, _ = lab.request(base, absolute=True)
    assert status >= 500 or status == 404, f"Netron still answers after its process exited ({status})"


def test_netron_locally_without_hub(model_file):
    with Viewer("path", model_file, None) as viewer:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", viewer.src), viewer.src
        with urllib.request.urlopen(viewer.src, timeout=10) as r:
            page = r.read()
        relative = _model_name(page).lstrip("/")
        with urllib.request.urlopen(viewer.src + relative, timeout=10) as r:
            assert r.read() == model_file.read_bytes()


def _run_in_kernel(lab, kernel: str, code: str) -> str:
    """Run `code` in a kernel through the server's websocket; what it printed."""
    import asyncio
    import uuid

    from tornado.websocket import websocket_connect

    async def run() -> str:
        ws = await websocket_connect(f"ws://127.0.0.1:{lab.port}{lab.base_url}api/kernels/{kernel}/channels"
                                     f"?token={lab.token}")
        msg_id = uuid.uuid4().hex
        await ws.write_message(json.dumps({
            "header": {"msg_id": msg_id, "username": "test", "session": uuid.uuid4().hex,
                       "msg_type": "execute_request", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": code, "silent": False}}))
        while True:
            reply = json.loads(await asyncio.wait_for(ws.read_message(), 120))
            if reply.get("parent_header", {}).get("msg_id") == msg_id and reply["msg_type"] == "stream":
                ws.close()
                return reply["content"]["text"]

    return asyncio.run(run())


def test_the_course_lab_offers_one_kernel_and_encrypts_it(lab):
    """`make lab`'s server config (binder/jupyter_server_config.json, installed in .venv): the Launcher
    lists only the lessons' kernel, and a kernel starts without ipykernel's plain-TCP warning."""
    status, body, _ = lab.request("api/kernelspecs")
    assert status == 200 and sorted(json.loads(body)["kernelspecs"]) == ["python3"]
    status, body, _ = lab.request("api/kernels", method="POST")
    assert status == 201, body[:300]
    kernel = json.loads(body)["id"]
    try:
        assert _run_in_kernel(lab, kernel, "import sys; print(sys.executable)").strip() == sys.executable
    finally:
        lab.request(f"api/kernels/{kernel}", method="DELETE")
    assert "without encryption" not in lab.log_tail(100_000)
