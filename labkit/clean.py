"""`labkit clean`: drop what a notebook run leaves behind that is not content, so a re-run solution
diffs only where its outputs changed. nbdev's `clean_nb` is the model.

Dropped: widget state and papermill's run record (notebook metadata), each cell's execution timings and
papermill record, widget views in outputs (their state is gone; the text/plain beside them stays, ipywidgets' repr of a
container replaced by one line, WIDGET_NOTE), and
what changes on every run without meaning anything: the kernel's temporary file names in warnings
(`/tmp/ipykernel_123/456.py` -> `<ipython-input>`) and object addresses in reprs (`<X at 0x7f..>` -> `<X>`,
which `tests/nbval_sanitize.cfg` also strips from the outputs a run produces).

Kept, because nbval needs them or people do: every output, cell ids, tags and the other cell metadata
JupyterLab and `labkit assign` use (`editable`, `deletable`, `jupyter`, `slideshow`), and execution
counts (nbval does not compare a cell whose execution count is empty).
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

#: notebook metadata that stays (nbdev keeps a similar short list); `labkit` holds {"requires": [...]}
NB_METADATA_KEYS = ("kernelspec", "language_info", "labkit")
#: cell metadata that stays
CELL_METADATA_KEYS = ("tags", "editable", "deletable", "jupyter", "slideshow", "labkit")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: the text a widget's output keeps (labkit's widgets write it, `clean` puts it in place of ipywidgets' repr):
#: the same words the course's CSS shows where a widget view has lost its state
WIDGET_NOTE = "(an interactive widget: run this cell again to see it)"
#: ipywidgets' repr of a container widget, `VBox(children=(HTML(value='<style>...` (every child spelled out)
WIDGET_REPR = re.compile(r"^[A-Za-z_]+\(children=")
IPYKERNEL_FILE = re.compile(r"/tmp/ipykernel_\d+/\d+\.py")
ADDRESS_IN_REPR = re.compile(r"(<[^<>\n]*?) at 0x[0-9a-fA-F]+(>)")


def _text(value: Any, fix) -> Any:
    """Apply `fix` to a notebook text field, which is a string or a list of lines."""
    if isinstance(value, str):
        return fix(value)
    if isinstance(value, list):
        return [fix(v) if isinstance(v, str) else v for v in value]
    return value


def _clean_output(out: dict) -> None:
    if out.get("output_type") == "stream":
        out["text"] = _text(out.get("text", ""), lambda s: IPYKERNEL_FILE.sub("<ipython-input>", s))
    data = out.get("data")
    if isinstance(data, dict):
        if WIDGET_VIEW in data and len(data) > 1:
            del data[WIDGET_VIEW]
        plain = data.get("text/plain")
        if plain is not None and WIDGET_REPR.match("".join(plain) if isinstance(plain, list) else str(plain)):
            data["text/plain"] = WIDGET_NOTE
        for mime in list(data):
            if mime.startswith("text/"):
                data[mime] = _text(data[mime], lambda s: ADDRESS_IN_REPR.sub(r"\1\2", s))


def clean_notebook(nb: dict) -> dict:
    """Return a cleaned copy of notebook `nb` (a dict or NotebookNode as nbformat reads it)."""
    nb = copy.deepcopy(nb)
    nb["metadata"] = {k: v for k, v in nb.get("metadata", {}).items() if k in NB_METADATA_KEYS}
    for cell in nb.get("cells", []):
        cell["metadata"] = {k: v for k, v in cell.get("metadata", {}).items() if k in CELL_METADATA_KEYS}
        for out in cell.get("outputs", []):
            _clean_output(out)
    return nb


def _dump(nb: dict) -> str:
    """The text nbformat writes (as papermill does), with JupyterLab's final newline."""
    import nbformat

    return nbformat.writes(nbformat.from_dict(nb)).rstrip("\n") + "\n"


def clean_file(path: str | Path, check: bool = False) -> bool:
    """Clean one notebook file in place (or only compare, with `check`); True when it was already clean."""
    path = Path(path)
    nb = json.loads(path.read_text(encoding="utf-8"))
    cleaned = clean_notebook(nb)
    if cleaned == nb:
        return True
    if not check:
        path.write_text(_dump(cleaned), encoding="utf-8")
    return False


def _notebooks(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for p in map(Path, paths):
        found += sorted(p.glob("*.ipynb")) if p.is_dir() else [p]
    return found


def main(argv: list[str] | None = None) -> int:
    """`labkit clean [--check] [PATH...]` (default: solutions/ and lessons/ of the course)."""
    parser = argparse.ArgumentParser(prog="labkit clean", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="notebooks or folders (default: solutions/ and lessons/)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a notebook is not clean")
    args = parser.parse_args(argv)
    if not args.paths:
        from .fsutil import course_root

        root = course_root()
        args.paths = [str(root / "solutions"), str(root / "lessons")]
    paths = _notebooks(args.paths)
    missing = [p for p in paths if not p.is_file()]
    if missing:
        print(f"labkit clean: no such notebook: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    dirty = []
    for p in paths:
        try:
            if not clean_file(p, check=args.check):
                dirty.append(p)
        except (OSError, ValueError) as e:
            print(f"labkit clean: {p} is not a readable notebook ({e})", file=sys.stderr)
            return 2
    dirty = [Path(os.path.relpath(p)) if not os.path.relpath(p).startswith("..") else p for p in dirty]
    if args.check:
        for p in dirty:
            print(f"{p}: not clean (widget state, run metadata or run-specific text): run `labkit clean {p}`")
        return 1 if dirty else 0
    for p in dirty:
        print(f"cleaned {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
