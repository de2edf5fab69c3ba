"""labkit.web end to end: the generated page in headless Chromium (Playwright, Debian's `chromium`).

The page is built around the course CNN as lesson 08 builds it (fp32 and static int8, preprocessing
inside), served with and without the cross-origin isolation headers, and driven like a learner would:
digits drawn with mouse events, the prediction read from the page. Its outputs on the fixed test digits are
compared with ONNX Runtime in Python. Screenshots go to test-artifacts/web/ (git-ignored): look at them.
The fast tests at the end need neither Chromium nor node_modules.
"""
from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_util import ROOT, chromium  # noqa: E402

from labkit import android, web  # noqa: E402

SHOTS = ROOT / "test-artifacts" / "web"
N_TEST = 60
#: (strokes as fractions of the canvas, the digit a person means): lesson 07's drawings
DRAWINGS = {
    "seven": ([[(0.30, 0.22), (0.70, 0.22), (0.45, 0.82)]], "7"),
    "one": ([[(0.42, 0.30), (0.55, 0.18), (0.55, 0.85)]], "1"),
    "four": ([[(0.55, 0.15), (0.30, 0.60), (0.72, 0.60)], [(0.60, 0.40), (0.60, 0.88)]], "4"),
}

needs_chromium = pytest.mark.skipif(chromium() is None, reason="Chromium is not installed (Debian: apt-get install "
                                                               "chromium; `make test` does it when run as root)")


def _ort_web_or_skip():
    try:
        return web.ort_web_dir()
    except web.WebSetupError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The lesson's site: the course CNN (fp32, int8) with the fixed test digits and Python's outputs."""
    _ort_web_or_skip()
    pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed")
    import labkit
    from labkit.models import trained_cnn

    d = tmp_path_factory.mktemp("web")
    raw = labkit.digits(raw=True)
    fp32 = android.export_baked(trained_cnn(), d / "fp32.onnx")
    int8 = android.quantize_int8(fp32, d / "int8.onnx", raw.x_train[:200])
    x = raw.x_test[:N_TEST]
    expected = {"fp32": web.ort_python_probabilities(fp32, x), "int8": web.ort_python_probabilities(int8, x)}
    path = web.build_site(d / "site", {"fp32": fp32, "int8": int8}, test_pixels=x, expected=expected)
    return {"path": path, "x": x, "y": raw.y_test[:N_TEST], "expected": expected}


@pytest.fixture(scope="module")
def servers(site):
    with web.serve(site["path"]) as isolated, web.serve(site["path"], isolate=False) as plain:
        yield {"isolated": isolated, "plain": plain}


@pytest.fixture(scope="module")
def browser(site):
    if chromium() is None:
        pytest.skip("Chromium is not installed")
    with web.Browser() as b:
        yield b


@pytest.mark.browser
@needs_chromium
@pytest.mark.parametrize("name", sorted(DRAWINGS))
def test_drawn_digit_is_recognized(name, servers, browser):
    strokes, digit = DRAWINGS[name]
    shot = SHOTS / f"page-{name}-fp32.png"
    out = web.draw_in_page(servers["isolated"].url, strokes, screenshot=shot, browser=browser)
    assert out["digit"] == digit, f"the page shows {out['digit']!r} for a drawn {digit}: {out['probabilities'].round(3)}"
    assert int(np.argmax(out["probabilities"])) == int(digit)
    assert shot.is_file() and shot.stat().st_size > 5000
    from PIL import Image

    assert Image.open(shot).width == web.SCREENSHOT_WIDTH   # whole in a notebook cell at 1024 px
    # the page's own preprocessing is lesson 07's: its 8x8 input is android.downsample of its canvas
    assert out["input"].max() > 0
    alpha = out["rgba"].reshape(out["height"], out["width"], 4)[:, :, 3]
    assert np.array_equal(alpha, out["alpha"])
    assert np.array_equal(out["input"], android.downsample(alpha))
    # and the probabilities it shows are ONNX Runtime's in Python on that input
    py = web.ort_python_probabilities(servers["isolated"].site / "models" / "fp32.onnx", out["input"])[0]
    np.testing.assert_allclose(out["probabilities"], py, rtol=0, atol=1e-4)


@pytest.mark.browser
@needs_chromium
def test_outputs_match_python_fp32_and_int8(site, servers, browser):
    runs = web.run_in_browser(servers["isolated"].url, site["x"], runs=[("fp32", 1), ("int8", 2)], repeat=2,
                              browser=browser)
    fp32, int8 = runs
    assert fp32["model"] == "fp32" and int8["model"] == "int8"
    assert fp32["probabilities"].shape == (N_TEST, 10) == int8["probabilities"].shape
    diff = np.abs(fp32["probabilities"] - site["expected"]["fp32"]).max()
    assert diff <= 1e-4, f"fp32 in the browser differs from Python by {diff:.2e}"
    agree = np.mean(int8["probabilities"].argmax(1) == site["expected"]["int8"].argmax(1))
    assert agree == 1.0, f"int8: the browser predicts the same digit as Python for only {agree:.0%}"
    assert np.mean(fp32["probabilities"].argmax(1) == site["y"]) > 0.9  # the course CNN, not noise
    assert (fp32["threads"], int8["threads"]) == (1, 2) and fp32["cross_origin_isolated"]
    assert len(fp32["latency_ms"]) == 2 * N_TEST and np.all(fp32["latency_ms"] >= 0)
    files = {d["file"] for d in fp32["downloads"]}
    assert {"app.js", "models/fp32.onnx", *(f"ort/{f}" for f in web.ORT_FILES)} <= files
    assert not any(m.startswith(("error", "pageerror")) for m in fp32["console"] + int8["console"]), fp32["console"]


@pytest.mark.browser
@needs_chromium
def test_no_isolation_means_one_thread(servers, browser):
    info = web.page_info(servers["plain"].url, threads=2, browser=browser)
    assert info["threads"] == 1 and not info["cross_origin_isolated"]
    assert any("crossOriginIsolated" in m for m in info["console"])
    iso = web.page_info(servers["isolated"].url, threads=2, browser=browser)
    assert iso["threads"] == 2 and iso["cross_origin_isolated"]


@pytest.mark.browser
@needs_chromium
def test_page_works_under_a_proxy_prefix(site, tmp_path, browser):
    """On Binder the page lives at /user/NAME/proxy/PORT/: every URL in it must be relative."""
    import shutil

    nested = tmp_path / "user" / "someone" / "proxy" / "1234"
    shutil.copytree(site["path"], nested)
    (tmp_path / "index.html").write_text("the proxy's root")
    with web.serve(tmp_path) as server:
        (out,) = web.run_in_browser(server.url + "user/someone/proxy/1234/", site["x"][:3], browser=browser)
    np.testing.assert_allclose(out["probabilities"], site["expected"]["fp32"][:3], rtol=0, atol=1e-4)
    # the server's root has only index.html, so the runtime and the model came from under the prefix
    assert not (tmp_path / "app.js").exists() and not (tmp_path / "ort").exists()
    assert {"app.js", "models/fp32.onnx", "ort/ort-wasm-simd-threaded.wasm"} <= {d["file"] for d in out["downloads"]}


@pytest.mark.browser
@needs_chromium
def test_the_test_digits_button(servers, browser):
    """A learner on Binder opens the page in a tab and presses 'Test digits': it compares by itself."""
    def press(page):
        page.click("#run-tests")
        page.wait_for_function("() => document.getElementById('tests').textContent.includes('test digits')")
        return page.inner_text("#tests")

    (text,) = browser.pages([web.page_url(servers["isolated"].url, model="int8")], press)
    assert f"same digit for {N_TEST}/{N_TEST}" in text, text


@pytest.mark.browser
@needs_chromium
def test_a_page_in_any_browser_reports_back_to_python(site, browser):
    """Lesson 08 on Binder or a laptop: the learner's own browser opens the page and presses 'Test digits';
    the page posts its outputs and timings to the server, and Python compares them (no Playwright API
    on the Python side: only what the page sent)."""
    def press(page):
        page.click("#run-tests")
        page.wait_for_function("() => (window.labkit.reported || 0) >= 1")
        return page.inner_text("#tests")

    with web.serve(site["path"]) as server:
        assert server.reports() == []
        (text,) = browser.pages([web.page_url(server.url, model="fp32", threads=2)], press)
        assert "sent to your notebook" in text, text
        (got,) = server.reports()
        assert server.reports("int8") == []
    assert got["model"] == "fp32" and got["threads"] == 2 and got["cross_origin_isolated"]
    assert "Chrome" in got["user_agent"] and got["ort_version"] == web.pinned_version()
    assert got["latency_ms"].shape == (3 * N_TEST,) and np.all(got["latency_ms"] >= 0)
    np.testing.assert_allclose(got["probabilities"], site["expected"]["fp32"], rtol=0, atol=1e-4)
    assert {"app.js", "models/fp32.onnx"} <= {d["file"] for d in got["downloads"]}


# ------------------------------------------------------------------ fast tests (no browser)


def test_server_headers_and_types(site, servers):
    def get(url):
        with urllib.request.urlopen(url, timeout=10) as r:
            return {k.title(): v for k, v in r.headers.items()}

    base = servers["isolated"].url
    h = get(base)
    for k, v in web.ISOLATION_HEADERS.items():
        assert h[k] == v
    assert get(base + "ort/ort-wasm-simd-threaded.wasm")["Content-Type"] == "application/wasm"
    assert get(base + "app.js")["Content-Type"].startswith("text/javascript")
    assert get(base + "ort/ort.wasm.min.mjs")["Content-Type"].startswith("text/javascript")
    plain = get(servers["plain"].url)
    assert not any(k in plain for k in web.ISOLATION_HEADERS)
    with pytest.raises(urllib.error.HTTPError):
        get(base + "../../etc/passwd")  # nothing outside the site


def _post(url: str, body: bytes) -> int:
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except urllib.error.URLError:   # the server answered 413 and closed before the body was sent
        return -1


def test_reports_are_checked_bounded_and_kept_across_a_restart(tmp_path):
    (tmp_path / "index.html").write_text("page")
    server = web.serve(tmp_path)
    try:
        good = {"model": "fp32", "probabilities": [[0.1] * 10] * 2, "latencyMs": [0.5, 0.7],
                "info": {"numThreads": 1, "crossOriginIsolated": True, "loadMs": 80, "ortVersion": "x",
                         "downloads": [{"file": "app.js", "bytes": 10}]}, "userAgent": "Firefox"}
        assert _post(server.url + "report", json.dumps(good).encode()) == 204
        assert _post(server.url + "user/a/proxy/1/report", json.dumps(good).encode()) == 204   # behind a prefix
        assert _post(server.url + "report", b"not json") == 400
        assert _post(server.url + "report", json.dumps({"model": "fp32"}).encode()) == 400
        assert _post(server.url + "index.html", json.dumps(good).encode()) == 404
        assert _post(server.url + "report", b"x" * (web.MAX_REPORT_BYTES + 1)) in (413, -1)
        (r, _) = server.reports()
        assert r["probabilities"].shape == (2, 10) and r["user_agent"] == "Firefox" and r["threads"] == 1
        for _ in range(web.MAX_REPORTS + 5):
            _post(server.url + "report", json.dumps(good).encode())
        assert len(server.reports()) == web.MAX_REPORTS
        port = server.port
        server.stop()
        assert not server.running
        with pytest.raises(OSError):
            urllib.request.urlopen(server.url, timeout=5)
        server.start()          # the link in the lesson works again, on the same port
        assert server.running and server.port == port
        assert urllib.request.urlopen(server.url, timeout=5).read() == b"page"
        assert len(server.reports()) == web.MAX_REPORTS
    finally:
        server.stop()


def test_site_has_no_cdn_and_relative_urls(site):
    text = (site["path"] / "app.js").read_text() + (site["path"] / "index.html").read_text()
    assert "http://" not in text.replace("http://127.0.0.1", "") and "https://" not in text
    config = json.loads((site["path"] / "config.json").read_text())
    assert config["ortVersion"] == web.pinned_version()
    assert all(not m["url"].startswith("/") for m in config["models"].values())


def test_browser_url_goes_through_the_proxy(site, monkeypatch):
    with web.serve(site["path"]) as server:
        monkeypatch.delenv("JUPYTERHUB_SERVICE_PREFIX", raising=False)
        assert server.browser_url == server.url
        monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "/user/ana/")
        assert server.browser_url == f"/user/ana/proxy/{server.port}/"


def test_pinned_version_is_exact_and_matches_package_json():
    pkg = json.loads((ROOT / "package.json").read_text())
    assert pkg["dependencies"]["onnxruntime-web"] == web.pinned_version() and pkg["dependencies"]["onnxruntime-web"][0].isdigit()


def test_missing_runtime_gives_a_clear_message(tmp_path):
    (tmp_path / "package-lock.json").write_text(json.dumps(
        {"packages": {"node_modules/onnxruntime-web": {"version": "1.30.0"}}}))
    with pytest.raises(web.WebSetupError, match="make lab"):
        web.ort_web_dir(tmp_path)


def test_build_site_refuses_a_float_input_model(tmp_path):
    _ort_web_or_skip()
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 8, 8])
    model = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
                              ir_version=10, opset_imports=[helper.make_opsetid("", 20)])
    onnx.save(model, tmp_path / "float.onnx")
    with pytest.raises(ValueError, match="bake the preprocessing in"):
        web.build_site(tmp_path / "site", {"fp32": tmp_path / "float.onnx"})
