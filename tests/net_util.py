"""The package index pip uses here, and whether it answers: tests that install or resolve from it skip
with the reason when it cannot be reached (an offline machine), instead of failing after pip's timeouts."""
from __future__ import annotations

import os
import subprocess
import sys
import urllib.request


def configured_index() -> str:
    """The index pip uses here: PIP_INDEX_URL, else `pip config`, else PyPI."""
    url = os.environ.get("PIP_INDEX_URL")
    if not url:
        proc = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.index-url"],
                              capture_output=True, text=True)
        url = proc.stdout.strip() if proc.returncode == 0 else ""
    return (url or "https://pypi.org/simple").rstrip("/")


def reachable(url: str, timeout: float = 3.0) -> str | None:
    """None when `url` answers within `timeout` seconds, else why not."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            r.read(64)
        return None
    except Exception as e:  # DNS failure, refused, timeout, TLS, HTTP error
        return f"{type(e).__name__}: {e}"


def index_unreachable() -> str | None:
    """None when pip's index answers, else a one-line reason naming it."""
    url = configured_index()
    why = reachable(f"{url}/pip/")
    return f"the package index {url} cannot be reached ({why})" if why else None
