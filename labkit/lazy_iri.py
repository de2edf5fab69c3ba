"""Import rfc3987_syntax when jsonschema first checks an "iri", not whenever jsonschema is imported.

jsonschema imports rfc3987_syntax on import, to check the "iri" and "iri-reference" string formats,
and rfc3987_syntax builds about 35 Lark parsers as it is imported: 1.8 s of one core here
(python-jsonschema/jsonschema#1428, jupyter/nbformat#420). nbformat, nbclient, nbval and
jupyter_server import jsonschema, so every grader process, test worker and JupyterLab start paid it,
for two formats no Jupyter schema uses.

`python -m labkit.lazy_iri` (run by `make lab`'s install and by binder/postBuild) copies this file
beside the environment's packages with a one-line .pth, so each Python start of the environment puts
a stand-in in `sys.modules`. jsonschema imports the stand-in; the first use of any of its names
imports the real module, so an "iri" is checked exactly as before. Python started with -S or -I
(the sandbox's own helpers) skips .pth files and imports the real module, as before.
"""
from __future__ import annotations

import importlib
import importlib.util
import shutil
import sys
import sysconfig
import types
from pathlib import Path

NAME = "rfc3987_syntax"
#: the copy in site-packages (a top-level module: importing it must not import labkit)
COPY = "onnx_lab_lazy_iri"


def _real() -> types.ModuleType:
    """The real rfc3987_syntax, imported on first use; it then replaces the stand-in."""
    module = sys.modules.get(NAME)
    if module is not None and not getattr(module, "__labkit_stand_in__", False):
        return module
    stand_in = sys.modules.pop(NAME, None)
    try:
        return importlib.import_module(NAME)
    except BaseException:
        if stand_in is not None:
            sys.modules[NAME] = stand_in
        raise


def _forward(name: str):
    """A name of the real module; a probe for a dunder it lacks (`hasattr(m, "__wrapped__")`, as
    tools that walk `sys.modules` do) answers no without importing it."""
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    return getattr(_real(), name)


def install() -> None:
    """Put the stand-in in sys.modules, when rfc3987_syntax is installed and not yet imported."""
    if NAME in sys.modules:
        return
    spec = importlib.util.find_spec(NAME)
    if spec is None:
        return
    stand_in = types.ModuleType(NAME, "Stand-in that imports rfc3987_syntax on first use (labkit.lazy_iri).")
    stand_in.__labkit_stand_in__ = True
    stand_in.__path__ = list(spec.submodule_search_locations or [])  # a submodule import still works
    stand_in.__file__ = spec.origin  # ipykernel lists every module's __file__ at each kernel start
    stand_in.is_valid_syntax = lambda term, value: _real().is_valid_syntax(term, value)
    stand_in.__getattr__ = _forward
    sys.modules[NAME] = stand_in


def install_in_environment(site_packages: Path | None = None) -> Path:
    """Copy this file and its .pth into `site_packages` (default: this Python's); returns the .pth."""
    target = Path(site_packages or sysconfig.get_paths()["purelib"])
    shutil.copyfile(__file__, target / f"{COPY}.py")
    pth = target / f"{COPY}.pth"
    pth.write_text(f"import {COPY}\n")
    return pth


install()

if __name__ == "__main__":
    install_in_environment()
