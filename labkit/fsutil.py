"""Files and folders: the one atomic file writer of the grader and the answer records, the one bounded
reader of files a learner or a previous run may have tampered with, and where the course lives."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def checkout() -> Path:
    """The folder above the `labkit` package: the course's clone (package.json, solutions/, lessons/)."""
    return Path(__file__).resolve().parents[1]


def course_root() -> Path:
    """The folder holding solutions/ and lessons/: the working directory if it has solutions/, else the
    package's checkout (a maintainer may run labkit from a copy of the course)."""
    for cand in (Path.cwd(), checkout()):
        if (cand / "solutions").is_dir():
            return cand
    raise FileNotFoundError("no solutions/ folder here: run labkit from the course's root folder")


def atomic_write(path: Path, data: str | bytes, mode: int | None = None) -> None:
    """Write `path` through a temporary file in the same folder and an atomic rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name[:40] + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class UnreadableFile(ValueError):
    """A file `read_bounded` refuses: a link, not a regular file, or over its size limit (one line)."""


def read_bounded(path: Path, limit: int, what: str = "file") -> bytes:
    """The bytes of `path`, never following a link and never reading more than `limit` bytes: a link,
    a non-regular file or a larger file raises `UnreadableFile` (`what` names the file in the message)."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise UnreadableFile(f"a symbolic link (links are not followed: give the {what} itself)")
    if not stat.S_ISREG(st.st_mode):
        raise UnreadableFile("not a regular file")
    too_large = f"{what} too large: {{}} (the limit is {limit / 2**20:.1f} MB)"
    if st.st_size > limit:
        raise UnreadableFile(too_large.format(f"{st.st_size / 2**20:.1f} MB"))
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:  # it grew after the check
        raise UnreadableFile(too_large.format(f"more than {limit / 2**20:.1f} MB"))
    return data
