"""WebGPU for lesson 11: ONNX Runtime's WebGPU plugin on this machine's GPU or, where it has none,
on SwiftShader, a Vulkan GPU emulated on the CPU that Debian's `chromium` package installs.

`setup()` picks the adapter once per process: the hardware one when it runs a probe model, else the
software one, else none (with one line naming the fix). The probe runs in a child process because a
WebGPU context that finds no adapter aborts the process that asked."""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

EP_NAME = "WebGpuExecutionProvider"
#: where Debian's and Ubuntu's chromium packages put SwiftShader's Vulkan driver manifest
SWIFTSHADER_ICDS = ("/usr/lib/chromium/vk_swiftshader_icd.json",
                    "/usr/lib/chromium-browser/vk_swiftshader_icd.json")
FIX = ("no WebGPU adapter: install your GPU's driver (with Vulkan on Linux), or "
       "`sudo apt-get install chromium` for SwiftShader, a software GPU")
_STATE: dict[str, "Adapter | None"] = {}


@dataclass(frozen=True)
class Adapter:
    """The adapter WebGPU runs on: `software` is SwiftShader (the `icd` manifest), else a real GPU."""

    software: bool
    icd: str | None = None

    def __str__(self) -> str:
        if self.software:
            return "software: SwiftShader, a Vulkan GPU emulated on the CPU (timings measure an emulator)"
        return "hardware: this machine's GPU"


def swiftshader_icd() -> str | None:
    """The SwiftShader Vulkan manifest chromium installed, if any."""
    return next((p for p in SWIFTSHADER_ICDS if os.path.isfile(p)), None)


def _software_env(icd: str) -> dict[str, str]:
    return {"VK_ICD_FILENAMES": icd, "ORT_WEBGPU_EP_ALLOW_SOFTWARE_ADAPTER": "1"}


def load_vulkan(icd: str | None) -> None:
    """Load a Vulkan loader before Dawn looks for `libvulkan.so.1`: the system's, else chromium's
    copy beside its SwiftShader (a machine with chromium but without `libvulkan1`)."""
    if not sys.platform.startswith("linux"):
        return  # WebGPU uses Metal on macOS and Direct3D 12 on Windows
    try:
        ctypes.CDLL("libvulkan.so.1", mode=ctypes.RTLD_GLOBAL)
    except OSError:
        bundled = Path(icd or SWIFTSHADER_ICDS[0]).parent / "libvulkan.so.1"
        if bundled.is_file():
            ctypes.CDLL(str(bundled), mode=ctypes.RTLD_GLOBAL)


_PROBE = """
import ctypes, pathlib, sys
if sys.platform.startswith("linux"):
    try:
        ctypes.CDLL("libvulkan.so.1", mode=ctypes.RTLD_GLOBAL)
    except OSError:
        bundled = pathlib.Path(sys.argv[1] or "/nonexistent/x").parent / "libvulkan.so.1"
        if bundled.is_file():
            ctypes.CDLL(str(bundled), mode=ctypes.RTLD_GLOBAL)
import onnxruntime as ort
import onnxruntime_ep_webgpu
from onnx import TensorProto, helper
ort.set_default_logger_severity(3)
ort.register_execution_provider_library(sys.argv[2], onnxruntime_ep_webgpu.get_library_path())
devices = [d for d in ort.get_ep_devices() if d.ep_name == sys.argv[2]]
if devices:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "probe", [x],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    opts.add_provider_for_devices(devices, {})
    opts.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    sess = ort.InferenceSession(model.SerializeToString(), opts)
    y = sess.run(None, {"x": [-1.0, 2.0]})[0].tolist()
    if sess.get_providers()[0] == sys.argv[2] and y == [0.0, 2.0]:
        print("WEBGPU-OK", devices[0].device.type.name)
"""  # self-contained (no labkit import): a child that starts fast


def _probe(icd: str | None) -> str | None:
    """The device type of a WebGPU device that ran a probe model in a child process, else None."""
    env = {k: v for k, v in os.environ.items() if k != "ORT_WEBGPU_EP_ALLOW_SOFTWARE_ADAPTER"}
    env.update(_software_env(icd) if icd else {})  # else the learner's own VK_ICD_FILENAMES, if any
    try:
        r = subprocess.run([sys.executable, "-c", _PROBE, icd or "", EP_NAME], env=env, capture_output=True,
                           text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = [line.split()[1] for line in r.stdout.splitlines() if line.startswith("WEBGPU-OK")]
    return found[0] if found else None


def register() -> None:
    """Register the WebGPU plugin with ONNX Runtime, once, without its notice on stderr."""
    import onnxruntime as ort
    import onnxruntime_ep_webgpu

    if any(d.ep_name == EP_NAME for d in ort.get_ep_devices()):
        return
    ort.set_default_logger_severity(3)  # the software-adapter notice is a warning; we say it ourselves
    try:
        ort.register_execution_provider_library(EP_NAME, onnxruntime_ep_webgpu.get_library_path())
    finally:
        ort.set_default_logger_severity(2)


def find_adapter() -> Adapter | None:
    """The adapter `setup()` would use (probed once per process): hardware first, then SwiftShader."""
    if "adapter" not in _STATE:
        kind = _probe(None)
        icd = swiftshader_icd()
        if kind == "GPU":
            _STATE["adapter"] = Adapter(software=False)
        elif icd and _probe(icd):
            _STATE["adapter"] = Adapter(software=True, icd=icd)
        else:
            _STATE["adapter"] = None
    return _STATE["adapter"]


def setup() -> Adapter | None:
    """Register the WebGPU plugin on the best adapter here and return it; None (after printing the
    fix in one line) when this machine has none."""
    try:
        import onnxruntime_ep_webgpu  # noqa: F401
    except ImportError:
        print("onnxruntime-ep-webgpu is not installed: `pip install onnxruntime-ep-webgpu==0.4.0`")
        return None
    adapter = find_adapter()
    if adapter is None:
        print(FIX)
        return None
    if adapter.software:
        os.environ.update(_software_env(adapter.icd))
    load_vulkan(adapter.icd)
    register()
    return adapter


def status() -> tuple[bool, str]:
    """(usable, one line) for `labkit.doctor()`."""
    try:
        import onnxruntime_ep_webgpu  # noqa: F401
    except ImportError:
        return False, "onnxruntime-ep-webgpu is not installed"
    adapter = find_adapter()
    return (adapter is not None), (str(adapter) if adapter else "none found")
