"""A real JupyterLab server for tests: free loopback port, random token, isolated config.

Used by tests/test_browser.py (headless Chromium) and tests/test_netron_proxy.py (jupyter-server-proxy).
The server runs this interpreter's JupyterLab with the user's Jupyter config, settings and workspaces
replaced by empty temporary ones, so a developer's setup neither changes nor breaks the tests.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-dev-shm-usage"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def chromium() -> str | None:
    """Path of the system Chromium (Debian's `chromium` package), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


class LabServer:
    """`jupyter lab` on 127.0.0.1:<free port> under `base_url`, serving `root_dir`."""

    def __init__(self, root_dir: Path, state_dir: Path, base_url: str = "/", env: dict | None = None):
        assert base_url.startswith("/") and base_url.endswith("/")
        self.root_dir = Path(root_dir)
        self.state = Path(state_dir)
        self.base_url = base_url
        self.port = free_port()
        self.token = secrets.token_hex(24)
        self.extra_env = env or {}
        self.proc: subprocess.Popen | None = None
        self.log_path = self.state / "jupyterlab.log"

    @property
    def url(self) -> str:
        """http://127.0.0.1:<port><base_url>"""
        return f"http://127.0.0.1:{self.port}{self.base_url}"

    def start(self, timeout: float = 90) -> "LabServer":
        for d in ("config", "runtime", "settings", "workspaces", "ipython"):
            (self.state / d).mkdir(parents=True, exist_ok=True)
        # no news / update toasts covering the notebook
        notes = self.state / "settings/@jupyterlab/apputils-extension/notification.jupyterlab-settings"
        notes.parent.mkdir(parents=True, exist_ok=True)
        notes.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
        env.update({
            "JUPYTER_CONFIG_DIR": str(self.state / "config"),
            "JUPYTER_RUNTIME_DIR": str(self.state / "runtime"),
            "JUPYTERLAB_SETTINGS_DIR": str(self.state / "settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(self.state / "workspaces"),
            "IPYTHONDIR": str(self.state / "ipython"),
            "PYTHONUNBUFFERED": "1",
        })
        env.pop("MPLBACKEND", None)
        env.update(self.extra_env)
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
               f"--ServerApp.base_url={self.base_url}", f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={self.root_dir}", "--ServerApp.terminals_enabled=False",
               "--LabApp.expose_app_in_browser=True",
               "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
               "--LanguageServerManager.autodetect=False"]
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, env=env, cwd=self.root_dir, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                if self.request("api/status", timeout=2)[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"JupyterLab did not answer within {timeout} s:\n{self.log_tail()}")

    def request(self, path: str, *, method: str = "GET", token: bool = True, timeout: float = 30,
                absolute: bool = False) -> tuple[int, bytes, dict]:
        """(status, body, headers) of a request to the server; `path` is relative to base_url."""
        url = path if absolute else self.url + path.lstrip("/")
        req = urllib.request.Request(url, method=method)
        if token:
            req.add_header("Authorization", f"token {self.token}")
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            with opener.open(req, timeout=timeout) as r:
                return r.status, r.read(), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, e.read(), dict(e.headers)

    def shutdown_kernels(self) -> None:
        """Shut down every running kernel (frees memory between tests)."""
        try:
            status, body, _ = self.request("api/sessions", timeout=10)
            for s in json.loads(body) if status == 200 else []:
                self.request(f"api/sessions/{s['id']}", method="DELETE", timeout=30)
            status, body, _ = self.request("api/kernels", timeout=10)
            for k in json.loads(body) if status == 200 else []:
                self.request(f"api/kernels/{k['id']}", method="DELETE", timeout=30)
        except OSError:
            pass

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.shutdown_kernels()
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self._log.close()
        self.proc = None

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def __enter__(self) -> "LabServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None
