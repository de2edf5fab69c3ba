"""The sandbox's one interface, without a kernel: what each backend says (mode, cache trust, what it
does not guarantee), what it builds (the kernel server's command prefix, a kernel's TMPDIR, the batch
folder's mode), and how the mode is chosen. Fast tier: no process is started (about 0.1 s in all)."""
from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from labkit import sandbox as primitives
from labkit.grading import forkserver
from labkit.grading.options import GradeError
from labkit.grading.sandbox import (BACKENDS, MODES, NOT_GUARANTEED, NOT_GUARANTEED_UNPRIVILEGED, Bubblewrap,
                                    NoSandbox, UnprivilegedUser, for_mode, select, verdict_server_command)

BASE = primitives.KERNEL_UID_BASE
VIEW = ([Path("/usr")], [Path("/usr/share")])


@pytest.fixture(params=[0, 1000], ids=["root", "user"])
def euid(request, monkeypatch) -> int:
    """The grader's effective uid, as each backend (and bwrap_args) sees it."""
    monkeypatch.setattr(os, "geteuid", lambda: request.param)
    return request.param


def test_the_modes_are_the_backends():
    assert MODES == ("sandbox", "unprivileged-user", "no-sandbox")
    assert [BACKENDS[m] for m in MODES] == [Bubblewrap, UnprivilegedUser, NoSandbox]
    for b in (Bubblewrap("d"), UnprivilegedUser("d"), NoSandbox("d")):  # they travel to worker processes
        assert pickle.loads(pickle.dumps(b)) == b and b.description == "d"


def test_only_bubblewrap_trusts_the_cache_and_guarantees_everything():
    assert (Bubblewrap.trusted_cache, UnprivilegedUser.trusted_cache, NoSandbox.trusted_cache) == (True, False, False)
    assert Bubblewrap.not_guaranteed == ()
    assert UnprivilegedUser.not_guaranteed == NOT_GUARANTEED_UNPRIVILEGED
    assert NoSandbox.not_guaranteed == NOT_GUARANTEED


def test_tmp_policy(tmp_path):
    """A private /tmp only in bubblewrap (the server keeps it clean); otherwise the kernel's own
    folder. Only the unprivileged uid needs to walk the batch folder (0711)."""
    work = tmp_path / "w1"
    assert Bubblewrap("d").kernel_tmp(work) == "/tmp" and Bubblewrap.private_tmp
    for b in (UnprivilegedUser("d"), NoSandbox("d")):
        assert b.kernel_tmp(work) == str(work / "tmp") and not b.private_tmp
    assert (Bubblewrap.tmp_root_mode, UnprivilegedUser.tmp_root_mode, NoSandbox.tmp_root_mode) == (None, 0o711, None)
    spec = forkserver.SandboxSpec({}, NoSandbox("d"), (), (), "/in", "/data", None)
    assert forkserver.kernel_env(work, spec)["TMPDIR"] == str(work / "tmp")


def test_bubblewrap_builds_the_bwrap_prefix(euid, tmp_path):
    b = Bubblewrap("d")
    uid = b.kernel_uid()
    assert uid == (BASE if euid == 0 else None)
    assert b.isolates(uid) is (euid == 0) and b.runs_as(uid) is None
    assert b.caps_user_tasks() is (euid != 0) and b.own_pid_namespace()
    cmd = b.server_prefix(tmp_path, *VIEW, uid)
    assert cmd[0] == (primitives.bwrap_path() or "bwrap") and cmd[-1] == "--"
    assert "--unshare-net" in cmd and ["--tmpfs", "/usr/share"] == cmd[cmd.index("/usr/share") - 1:][:2]
    assert cmd == primitives.bwrap_args(tmp_path, *VIEW, uid=None if euid == 0 else uid, server=euid == 0)
    assert ("CAP_SYS_ADMIN" in cmd) is (euid == 0)  # a root server forks each kernel into its own uid
    assert not any(a.startswith("--reuid") for a in cmd)


def test_unprivileged_user_drops_to_one_uid(euid, tmp_path):
    u = UnprivilegedUser("d")
    uid = u.kernel_uid()
    assert uid == (BASE if euid == 0 else None)
    assert not u.isolates(uid) and u.runs_as(uid) == uid and u.caps_user_tasks() and not u.own_pid_namespace()
    cmd = u.server_prefix(tmp_path, *VIEW, uid)
    assert cmd == (primitives.drop_to(BASE) if euid == 0 else [])
    if euid == 0:
        assert f"--reuid={BASE}" in cmd and "--no-new-privs" in cmd and "bwrap" not in " ".join(cmd)


def test_no_sandbox_adds_nothing(euid, tmp_path):
    n = NoSandbox("d")
    assert n.kernel_uid() is None and n.runs_as(None) is None and not n.isolates(None)
    assert n.server_prefix(tmp_path, *VIEW, None) == [] and n.caps_user_tasks() and not n.own_pid_namespace()
    assert n.prepare(None, tmp_path) == "" and not list(tmp_path.iterdir())


def test_the_verdict_server_starts_the_same_in_every_mode():
    argv = ["python", "-I", "-m", "labkit.grading.judge", "--serve"]
    cmd = verdict_server_command(argv)
    assert cmd[-len(argv):] == argv and cmd[:-len(argv)] == primitives.launcher_args({"core": 0})
    assert '"core": 0' in cmd[-len(argv) - 2]


def test_select_and_for_mode(monkeypatch, euid):
    monkeypatch.setattr(primitives, "bwrap_status", lambda: (True, "ok"))
    assert isinstance(select(no_sandbox=False), Bubblewrap) and for_mode("sandbox").mode == "sandbox"
    if euid == 0:
        assert isinstance(select(False, unprivileged_user=True), UnprivilegedUser)
    else:
        with pytest.raises(GradeError, match="needs a root grader"):
            select(False, unprivileged_user=True)
    with pytest.raises(GradeError, match="this node grades with protection 'sandbox', the client asked for "
                                         "'no-sandbox'"):
        for_mode("no-sandbox")
    monkeypatch.setattr(primitives, "bwrap_status", lambda: (False, "no bwrap"))
    with pytest.raises(GradeError, match="no usable sandbox"):
        for_mode("sandbox")
    if euid != 0:
        assert isinstance(for_mode("no-sandbox"), NoSandbox)
