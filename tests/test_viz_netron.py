"""labkit.viz.netron: the URL a browser needs, and a server that really serves the model."""
from __future__ import annotations

import time
import urllib.error
import urllib.request

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from labkit import viz


@pytest.fixture
def model():
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 2])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 2])
    w = numpy_helper.from_array(np.eye(2, dtype=np.float32), "W")
    graph = helper.make_graph([helper.make_node("MatMul", ["X", "W"], ["Y"])], "tiny", [x], [y], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


@pytest.fixture(autouse=True)
def _stop_after():
    yield
    viz.stop_netron()


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.read()


def _port(frame) -> int:
    return int(frame.src.rstrip("/").rsplit(":", 1)[-1].rsplit("/", 1)[-1])


def test_url_local(monkeypatch):
    monkeypatch.delenv("JUPYTERHUB_SERVICE_PREFIX", raising=False)
    assert viz.netron_url(8123) == "http://127.0.0.1:8123/"


@pytest.mark.parametrize("prefix", ["/user/ada/", "/user/ada"])
def test_url_behind_jupyterhub(monkeypatch, prefix):
    monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", prefix)
    assert viz.netron_url(8123) == "/user/ada/proxy/8123/"


def test_serves_a_path(tmp_path, monkeypatch, model):
    monkeypatch.delenv("JUPYTERHUB_SERVICE_PREFIX", raising=False)
    path = tmp_path / "tiny.onnx"
    onnx.save(model, path)
    frame = viz.netron(path, height=321)
    assert frame.src.startswith("http://127.0.0.1:") and frame.src.endswith("/")
    assert frame.height == 321
    page = _get(frame.src).decode("utf-8")
    assert "netron" in page.lower() and '/data/tiny.onnx' in page
    assert _get(frame.src + "data/tiny.onnx") == path.read_bytes()


def test_the_page_title_is_the_file_name_not_its_path(tmp_path, monkeypatch, model):
    """Netron titles its tab with the `name` meta tag; labkit shortens it to the file's name."""
    monkeypatch.delenv("JUPYTERHUB_SERVICE_PREFIX", raising=False)
    path = tmp_path / "deep" / "inside" / "tiny.onnx"
    path.parent.mkdir(parents=True)
    onnx.save(model, path)
    page = _get(viz.netron(path).src).decode("utf-8")
    assert '<meta name="name" content="tiny.onnx">' in page
    assert str(tmp_path) not in page


def test_serves_a_modelproto_and_replaces_the_previous_server(monkeypatch, model):
    monkeypatch.delenv("JUPYTERHUB_SERVICE_PREFIX", raising=False)
    first = viz.netron(model)
    assert _get(first.src + "data/model.onnx") == model.SerializeToString()
    second = viz.netron(model.SerializeToString())
    assert _port(second) != _port(first) or second.src == first.src
    assert _get(second.src + "data/model.onnx") == model.SerializeToString()
    if _port(second) != _port(first):
        deadline = time.time() + 3
        while True:  # the first server closes its socket: connections are refused
            try:
                _get(first.src)
            except (urllib.error.URLError, ConnectionError, OSError):
                break
            assert time.time() < deadline, "the replaced Netron server still answers"
            time.sleep(0.1)


def test_fixed_port_and_proxy_url(monkeypatch, model):
    monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "/user/ada/")
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    frame = viz.netron(model, port=port)
    assert frame.src == f"/user/ada/proxy/{port}/"
    assert b"netron" in _get(f"http://127.0.0.1:{port}/").lower()


def test_missing_file_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        viz.netron(tmp_path / "nope.onnx")
