"""`labkit.doctor()`: is this machine ready for the course? Versions, CPU, runtimes, and fixes."""
from __future__ import annotations

import html
import os
import platform
import re
import struct
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

SUPPORTED_PYTHON = ((3, 11), (3, 13))
#: the packages whose pinned versions the course was tested with
PINNED = ("torch", "onnx", "onnxruntime", "onnxscript", "numpy", "scikit-learn", "ipywidgets", "jupyterlab")
X86_FEATURES = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "amx_tile")
ARM_FEATURES = {"asimd": "NEON", "asimddp": "dot product", "i8mm": "int8 matmul",
                "sve": "SVE", "sve2": "SVE2", "sme": "SME", "bf16": "BF16"}
FIX_REINSTALL = "from the course folder run `make lab` again (it reinstalls the pinned versions into .venv)"


@dataclass
class Row:
    """One line of the report: what was looked at, what was found, and a fix when it is off."""

    item: str
    value: str
    ok: bool = True
    fix: str = ""


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rows)

    def value(self, item: str) -> str:
        return next(r.value for r in self.rows if r.item == item)

    def problems(self) -> list[Row]:
        return [r for r in self.rows if not r.ok]

    def __str__(self) -> str:
        width = max(len(r.item) for r in self.rows)
        lines = [f"{'✔' if r.ok else '✘'} {r.item:<{width}}  {r.value}" + (f"\n    fix: {r.fix}" if r.fix else "")
                 for r in self.rows]
        lines.append("All good: you are ready for the course." if self.ok
                     else f"{len(self.problems())} thing(s) to fix, see above.")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        e = html.escape
        body = "".join(
            f"<tr><td>{'✔' if r.ok else '✘'}</td><td><b>{e(r.item)}</b></td><td>{e(r.value)}</td>"
            f"<td style='color:#cf222e'>{e(r.fix)}</td></tr>" for r in self.rows)
        verdict = ("<b style='color:#1a7f37'>All good: you are ready for the course.</b>" if self.ok else
                   f"<b style='color:#cf222e'>{len(self.problems())} thing(s) to fix: see the last column.</b>")
        return f"<table class='labkit-doctor'>{body}</table><p>{verdict}</p>"


def pinned_versions() -> dict[str, str]:
    """The exact versions labkit pins, read from its installed metadata."""
    pins = {}
    for req in metadata.requires("labkit") or []:
        m = re.match(r"^([A-Za-z0-9_.\-]+)==([^;\s]+)\s*(;.*)?$", req)
        if m and "extra ==" not in (m.group(3) or ""):
            pins[m.group(1).lower()] = m.group(2)
    return pins


def cpu_features(machine: str | None = None, cpuinfo: str | None = None) -> list[str]:
    """SIMD features that matter to ONNX Runtime's kernels, from /proc/cpuinfo or sysctl."""
    machine = (machine or platform.machine()).lower()
    arm = machine in ("arm64", "aarch64") or machine.startswith("arm")
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            cpuinfo = ""
    flags: set[str] = set()
    for line in cpuinfo.splitlines():
        key, _, val = line.partition(":")
        if key.strip().lower() in ("flags", "features"):
            flags |= set(val.split())
    if not flags and sys.platform == "darwin":
        try:
            out = subprocess.run(["sysctl", "-a"], capture_output=True, text=True, timeout=5).stdout
        except Exception:
            out = ""
        for key, name in (("FEAT_SME", "sme"), ("FEAT_DotProd", "asimddp"), ("FEAT_I8MM", "i8mm"),
                          ("FEAT_BF16", "bf16"), ("AdvSIMD", "asimd")):
            if re.search(rf"hw\.optional\.(arm\.)?{key}: 1", out):
                flags.add(name)
    if arm:
        return [f"{label} ({flag})" for flag, label in ARM_FEATURES.items() if flag in flags]
    return [f for f in X86_FEATURES if f in flags]


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def doctor() -> Report:
    """Check Python, pinned packages, CPU, ONNX Runtime providers and cores; say how to fix what is off."""
    rep = Report()
    py = sys.version_info[:2]
    lo, hi = SUPPORTED_PYTHON
    rep.rows.append(Row("Python", platform.python_version(), lo <= py <= hi,
                        "" if lo <= py <= hi else f"use Python {lo[0]}.{lo[1]} to {hi[0]}.{hi[1]} (make lab PYTHON=python3.11)"))
    bits = struct.calcsize("P") * 8
    rep.rows.append(Row("Python build", f"{bits}-bit", bits == 64,
                        "" if bits == 64 else "install a 64-bit OS and Python: torch and onnxruntime have no 32-bit wheels"))
    rep.rows.append(Row("OS", f"{platform.system()} {platform.release()}"))
    machine = platform.machine()
    rep.rows.append(Row("CPU architecture", machine))
    feats = cpu_features(machine)
    rep.rows.append(Row("CPU features", ", ".join(feats) or "none detected"))
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    rep.rows.append(Row("Cores available", str(cores)))
    pins = pinned_versions()
    for name in PINNED:
        have, want = _version(name), pins.get(name)
        if have is None:
            rep.rows.append(Row(name, "not installed", False, FIX_REINSTALL))
        elif want and have.split("+")[0] != want:
            rep.rows.append(Row(name, f"{have} (course tested {want})", False, FIX_REINSTALL))
        else:
            rep.rows.append(Row(name, have))
    try:
        import onnxruntime as ort

        providers = ort.get_available_providers()
        ok = "CPUExecutionProvider" in providers
        rep.rows.append(Row("ORT providers", ", ".join(providers), ok, "" if ok else FIX_REINSTALL))
    except Exception as e:
        rep.rows.append(Row("ORT providers", f"onnxruntime does not import ({type(e).__name__})", False, FIX_REINSTALL))
    from .gpu import FIX, status

    usable, found = status()
    fix = "" if usable else FIX if found == "none found" else FIX_REINSTALL
    rep.rows.append(Row("WebGPU adapter", found, usable, fix))
    try:
        import torch

        cuda = torch.version.cuda
        rep.rows.append(Row("torch build", f"CUDA {cuda}" if cuda else "CPU only"))
    except Exception as e:
        rep.rows.append(Row("torch build", f"torch does not import ({type(e).__name__})", False, FIX_REINSTALL))
    return rep


def main() -> int:
    rep = doctor()
    print(rep)
    return 0 if rep.ok else 1
