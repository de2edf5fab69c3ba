"""labkit.lazy_iri: jsonschema no longer builds rfc3987_syntax's parsers on import, and an "iri" is
checked exactly as before (fast tier: two short Pythons of the course environment)."""
from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytest.importorskip("rfc3987_syntax")

#: (value, is it an IRI) for the real module and the stand-in alike
CASES = ["http://example.com/é", "http://a b", "mailto:x@y.z", "::not", ""]

PROBE = """
import json, sys, time
if sys.argv[2] == "eager":  # as jsonschema has it without labkit
    sys.modules.pop("rfc3987_syntax", None)
t = time.perf_counter()
import jsonschema, nbformat
imported = round(time.perf_counter() - t, 2)
stand_in = getattr(sys.modules.get("rfc3987_syntax"), "__labkit_stand_in__", False)
v = jsonschema.Draft7Validator({"format": "iri"}, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
ok = [v.is_valid(x) for x in json.loads(sys.argv[1])]
print(json.dumps({"stand_in": stand_in, "imported": imported, "ok": ok,
                  "real_after": not getattr(sys.modules["rfc3987_syntax"], "__labkit_stand_in__", False)}))
"""


def _probe(how: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(CASES), how], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    return json.loads(out)


def test_the_environment_has_the_stand_in_installed():
    purelib = Path(sysconfig.get_paths()["purelib"])
    assert (purelib / "onnx_lab_lazy_iri.pth").read_text().strip() == "import onnx_lab_lazy_iri", \
        "run `make` (or `python -m labkit.lazy_iri`) to install it"


def test_stand_in_defers_the_import_and_checks_the_same():
    lazy, eager = _probe("lazy"), _probe("eager")
    assert lazy["stand_in"] and not eager["stand_in"]
    assert lazy["ok"] == eager["ok"] == [True, False, True, False, False]
    assert lazy["real_after"], "the first check imports the real module in the stand-in's place"
    assert lazy["imported"] < eager["imported"], (lazy, eager)


WALK = """
import sys
import jsonschema
mod = sys.modules["rfc3987_syntax"]
files = [m.__file__ for m in sys.modules.copy().values() if hasattr(m, "__file__") and m.__file__]
probes = [hasattr(mod, n) for n in ("__wrapped__", "__all__", "__version__")]
print(getattr(sys.modules["rfc3987_syntax"], "__labkit_stand_in__", False), mod.__file__ in files)
"""


def test_walking_sys_modules_does_not_import_it():
    """ipykernel lists every module's __file__ when a kernel starts: that alone cost each kernel the
    whole import (about 2.5 s), in the grader, nbval and JupyterLab alike."""
    out = subprocess.run([sys.executable, "-c", WALK], capture_output=True, text=True, timeout=60,
                         check=True).stdout.split()
    assert out == ["True", "True"], out
