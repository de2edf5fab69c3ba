"""Stage 7a: the results cache — entries authenticated with a key only the grader process holds.

`DIR/.grader/` (mode 0700, never visible to a kernel) holds `key` (32 random bytes) and `seed`
(the secret seed of the hidden test inputs, unless --seed is given). Every cache entry carries an
HMAC-SHA256 of its key and content: a forged or edited entry is ignored and graded again.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

from ..fsutil import atomic_write
from .results import SCHEMA_VERSION


def private_dir(out: Path) -> Path:
    d = out / ".grader"
    d.mkdir(mode=0o700, exist_ok=True)
    os.chmod(d, 0o700)
    return d


def secret(out: Path, name: str, make) -> bytes:
    """A value kept in DIR/.grader/<name> (created with `make()` the first time)."""
    path = private_dir(out) / name
    try:
        return path.read_bytes()
    except FileNotFoundError:
        atomic_write(path, make(), mode=0o600)
        return path.read_bytes()


def secret_seed(out: Path) -> int:
    return int(secret(out, "seed", lambda: str(secrets.randbelow(2**31)).encode()).decode())


class ResultsCache:
    """DIR/.cache/<entry key>.json, each entry {"payload": ..., "mac": HMAC(key, entry key + payload)}."""

    def __init__(self, out: Path, trusted: bool):
        self.folder = out / ".cache"
        self.folder.mkdir(exist_ok=True)
        self.key = secret(out, "key", lambda: secrets.token_bytes(32))
        self.trusted = trusted  # without a sandbox a kernel could read the key: nothing is reused

    def entry_key(self, submission_sha: str, bundle: str) -> str:
        """The entry of one submission graded with one test bundle, in this results schema (an entry
        of another schema version is never looked up)."""
        return hashlib.sha256(f"{SCHEMA_VERSION}:{submission_sha}:{bundle}".encode()).hexdigest()

    def _mac(self, entry: str, payload: str) -> str:
        return hmac.new(self.key, entry.encode() + b"\0" + payload.encode(), hashlib.sha256).hexdigest()

    def get(self, entry: str) -> dict | None:
        """The payload stored under `entry`, or None when absent, not trusted, or not authentic."""
        if not self.trusted:
            return None
        try:
            raw = json.loads((self.folder / f"{entry}.json").read_text())
            payload = raw["payload"]
            if not hmac.compare_digest(str(raw["mac"]), self._mac(entry, payload)):
                return None
            return json.loads(payload)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, entry: str, payload: dict) -> None:
        text = json.dumps(payload, sort_keys=True)
        atomic_write(self.folder / f"{entry}.json", json.dumps({"payload": text, "mac": self._mac(entry, text)}))
