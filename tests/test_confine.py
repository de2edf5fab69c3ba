"""labkit.checks.confine: an answer that must use NumPy alone runs where nothing else can be imported, and
holds against answers that remove the import hook, reach the libraries' files or start programs."""
from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest

from labkit.checks.calls import NotAttempted
from labkit.checks.confine import call_confined
from labkit.plain import Raised

CASES = [(np.array([-1.0, 0.25, 3.0], np.float32), np.float32(0.5))]


def _landlock_abi() -> int:
    if not sys.platform.startswith("linux"):
        return 0
    return ctypes.CDLL(None).syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))


needs_landlock = pytest.mark.skipif(_landlock_abi() < 4, reason="Landlock (ABI 4+) is what confines here")


def right(x, s):
    return np.round(x / s).astype(np.int32)


def test_a_numpy_answer_comes_back_as_its_outputs():
    out = call_confined(right, CASES, ("numpy",))
    assert not isinstance(out[0], Raised), out[0]
    np.testing.assert_array_equal(out[0], [-2, 0, 6])
    assert out.forms == ("numpy.ndarray",)


def test_a_library_the_exercise_leaves_out_cannot_be_imported():
    def with_onnx(x, s):
        import onnx  # noqa: F401
        return x

    out = call_confined(with_onnx, CASES, ("numpy",))
    assert isinstance(out[0], Raised) and "No module named 'onnx' in this check" in out[0].message


def test_a_module_the_notebook_imported_does_not_travel_with_the_function():
    import onnx

    def uses_global(x, s):
        return onnx.numpy_helper.from_array(x)

    out = call_confined(uses_global, CASES, ("numpy",))
    assert isinstance(out[0], Raised) and "onnx" in out[0].message


@needs_landlock
@pytest.mark.parametrize("attack", [
    # the import hook removed and the environment's folder put back: the kernel refuses the files
    "import sys, site, importlib\n"
    "sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != '_OnlyTools']\n"
    "sys.path += SITE\n"
    "importlib.invalidate_caches()\n"
    "return importlib.import_module('onnx').__version__",
    # a library's source read to run it by hand
    "return open(SITE[0] + '/onnxruntime/__init__.py').read()",
    # the runtime's shared library loaded by hand
    "import ctypes\nreturn str(ctypes.CDLL(LIB))",
    # another Python started (it would run unconfined)
    "import subprocess, sys\nreturn subprocess.run([sys.executable, '-c', 'print(1)']).returncode",
    # a file outside what the check may read
    "return open('/etc/passwd').read()",
    # the course's weights beside labkit's code (blind round 12: a NumPy transformer read them)
    "import labkit, pathlib\nreturn open(pathlib.Path(labkit.__path__[0]) / 'assets' / 'tiny_gpt.npz', 'rb').read(9)",
    # the network (the kernel's own channels are TCP on loopback)
    "import socket\nreturn socket.create_connection(('127.0.0.1', 22), timeout=1).fileno()",
])
def test_the_kernel_refuses_what_the_import_hook_only_words(attack):
    import site

    source = "def attack(x, s):\n" + "".join("    " + line + "\n" for line in attack.splitlines())
    import glob

    import onnxruntime

    lib = glob.glob(str(Path(onnxruntime.__file__).parent / "capi" / "libonnxruntime.so*"))[0]
    namespace = {"SITE": [p for p in site.getsitepackages()], "LIB": lib}
    exec(source, namespace)
    out = call_confined(namespace["attack"], CASES, ("numpy",), time_limit=10)
    assert isinstance(out[0], Raised), out[0]
    assert any(w in out[0].message for w in ("Permission denied", "Operation not permitted",
                                             "No module named 'onnx'", "libonnxruntime")), out[0].message


def test_labkit_code_imports_in_the_confined_call():
    def with_labkit(x, s):
        from labkit import plain

        return np.asarray(len(plain.__name__))

    out = call_confined(with_labkit, CASES, ("numpy",))
    assert not isinstance(out[0], Raised), out[0]
    assert int(out[0]) == len("labkit.plain")


def test_a_stub_is_not_attempted_and_a_loop_is_stopped():
    def stub(x, s):
        raise NotImplementedError

    with pytest.raises(NotAttempted):
        call_confined(stub, CASES, ("numpy",))

    def loop(x, s):
        while True:
            pass

    out = call_confined(loop, CASES, ("numpy",), time_limit=1)
    assert isinstance(out[0], Raised) and "longer than 1 s" in out[0].message


def test_an_argument_changed_in_place_is_reported_and_printing_is_shown(capsys):
    def mutates(x, s):
        print("working")
        x[:] = 0
        return x

    out = call_confined(mutates, CASES, ("numpy",))
    assert isinstance(out[0], Raised) and "changed what it was given in place" in out[0].message
    assert "working" in capsys.readouterr().out


def test_a_function_that_kills_its_process_costs_only_its_call():
    def dies(x, s):
        import os
        os._exit(3)

    out = call_confined(dies, CASES, ("numpy",))
    assert isinstance(out[0], Raised) and "exit status 3" in out[0].message
    assert not isinstance(call_confined(right, CASES, ("numpy",))[0], Raised)  # the next call is served


def test_a_call_that_ends_at_once_is_not_taken_for_a_timeout(monkeypatch):
    """The zygote's "pid" and "done" lines often arrive together (a busy machine reads late): each must be read as
    it is, never left in a read buffer while the pipe is polled for more (that waited out the whole time limit)."""
    import select
    import time
    import types

    import onnx

    from labkit.checks import confine

    def late(r, w, x, timeout=None):  # the kernel reads only after the call has ended
        time.sleep(0.3)
        return select.select(r, w, x, timeout)

    monkeypatch.setattr(confine, "select", types.SimpleNamespace(select=late))

    def fails_to_load(x, s):
        return onnx.numpy_helper.from_array(x)

    t0 = time.monotonic()
    out = call_confined(fails_to_load, CASES, ("numpy",), time_limit=10)
    assert isinstance(out[0], Raised) and "onnx" in out[0].message, out[0]
    assert time.monotonic() - t0 < 8
