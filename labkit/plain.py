"""Plain data: the only thing that crosses from a learner's code to a verdict.

An answer is reduced to None, bool, int, float, str, lists, str-keyed dicts, numeric numpy
arrays, ONNX model bytes (`OnnxBlob`) and `Raised` (an exception message). Nothing else, so a
verdict never touches an object the learner made (no `__eq__` tricks, no pickles). The same
structure round-trips through a folder of JSON + `.npy` + `.onnx` files for the grader.

A function answer's outputs (`Outputs`, a list) also carry the `form` of each result before it became
plain data ("int", "numpy.int64", "tuple", "bytes", "onnx.ModelProto"...), because the reduction
merges forms a caller tells apart: a judge holds the answer to the form its prompt promises.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MAX_DEPTH = 20


class NotPlain(TypeError):
    """The learner returned something that is not plain data (message says what)."""


@dataclass(frozen=True)
class Raised:
    """A learner's function did not return plain data: what happened ("raised ValueError: ...")."""

    message: str


@dataclass(frozen=True)
class OnnxBlob:
    """The bytes of an ONNX model (parsed by the verdict, never executed as Python)."""

    data: bytes


class Outputs(list):
    """A function answer's outputs as plain data, one per test input, with `forms`: the Python type each
    result had before it became plain data (`form`; "" where the call raised). A list like any other
    for a judge that does not ask."""

    def __init__(self, values: Any = (), forms: Any = ()):
        super().__init__(values)
        self.forms = tuple(str(f) for f in forms)
        if len(self.forms) != len(self):
            raise ValueError(f"{len(self)} outputs but {len(self.forms)} forms")


def form(obj: Any) -> str:
    """The type of a learner's result as a caller would name it: the builtin's name ("int", "tuple",
    "bytes"), else "package.Type" ("numpy.int64", "onnx.ModelProto", "torch.Tensor")."""
    try:
        t = type(obj)
        package = str(getattr(t, "__module__", "") or "").split(".")[0]
        name = str(getattr(t, "__qualname__", "") or t.__name__)
    except Exception:  # a class that hides its names: no builtin, no known package
        return "?"
    return name if package == "builtins" else f"{package}.{name}"


def forms_of(outputs: Any) -> tuple[str, ...] | None:
    """The recorded forms of a function answer's outputs, or None when they were not recorded."""
    return outputs.forms if isinstance(outputs, Outputs) else None


def describe(obj: Any) -> str:
    """A short, learner-readable description of a value's type and shape."""
    if isinstance(obj, np.ndarray):
        return f"an array of shape {obj.shape} and dtype {obj.dtype}"
    if isinstance(obj, OnnxBlob):
        return f"bytes ({len(obj.data)} of them, read as an ONNX model)"
    mod = type(obj).__module__
    if mod.startswith("torch") and hasattr(obj, "shape"):
        return f"a torch tensor of shape {tuple(obj.shape)}"
    if obj is None:
        return "None"
    name = type(obj).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def to_plain(obj: Any, depth: int = 0) -> Any:
    """Convert an answer to plain data, or raise NotPlain saying what was not plain."""
    if depth > MAX_DEPTH:
        raise NotPlain("a value nested too deeply")
    if isinstance(obj, str) and type(obj) is not str:
        return str.__str__(obj)  # a str subclass crosses as the plain str the grader reads (its __eq__ stays home)
    if obj is None or isinstance(obj, (bool, str, Raised, OnnxBlob)):
        return obj
    if isinstance(obj, (int, float)) and type(obj) in (int, float):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if type(obj).__name__ == "ModelProto" and type(obj).__module__.startswith("onnx"):
        return OnnxBlob(obj.SerializeToString())  # a function that returns a model: its bytes cross
    if type(obj) in (bytes, bytearray):
        return OnnxBlob(bytes(obj))  # a function that returns a model's bytes (the verdict parses them)
    if type(obj).__module__.startswith("torch") and hasattr(obj, "detach"):
        obj = obj.detach().cpu().numpy()
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biuf":
            raise NotPlain(f"an array of dtype {obj.dtype} (only numbers are accepted)")
        return np.array(obj, copy=True)
    if type(obj) in (list, tuple):
        return [to_plain(x, depth + 1) for x in obj]
    if isinstance(obj, tuple) and isinstance(getattr(type(obj), "_fields", None), tuple):
        return [to_plain(x, depth + 1) for x in tuple.__iter__(obj)]  # a namedtuple is a tuple with names
    if isinstance(obj, dict):  # an OrderedDict or defaultdict is a dict; the base class's items, no overrides
        out = {}
        for k, v in dict.items(obj):
            if type(k) is not str:
                raise NotPlain(f"a dict with a {type(k).__name__} key (keys must be strings)")
            out[k] = to_plain(v, depth + 1)
        return out
    raise NotPlain(describe(obj))


def save(obj: Any, folder: str | os.PathLike) -> None:
    """Write plain data to `folder` as answer.json plus .npy/.onnx files (atomically)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    counter = [0]

    def enc(x: Any) -> Any:
        if isinstance(x, float) and not math.isfinite(x):
            return {"__float__": repr(x)}
        if isinstance(x, Raised):
            return {"__raised__": x.message}
        if isinstance(x, OnnxBlob):
            counter[0] += 1
            name = f"m{counter[0]}.onnx"
            (folder / name).write_bytes(x.data)
            return {"__onnx__": name}
        if isinstance(x, np.ndarray):
            counter[0] += 1
            name = f"a{counter[0]}.npy"
            np.save(folder / name, x, allow_pickle=False)
            return {"__npy__": name}
        if isinstance(x, list):
            return [enc(v) for v in x]
        if isinstance(x, dict):
            return {"__dict__": {k: enc(v) for k, v in x.items()}}
        return x

    top = {"__outputs__": enc(list(obj)), "forms": list(obj.forms)} if isinstance(obj, Outputs) else enc(obj)
    tmp = folder / "answer.json.tmp"
    tmp.write_text(json.dumps(top))
    os.replace(tmp, folder / "answer.json")


def load(folder: str | os.PathLike) -> Any:
    """Read what `save` wrote. Arrays load with allow_pickle=False; file names stay inside."""
    folder = Path(folder).resolve()

    def inside(name: Any) -> Path:
        if not isinstance(name, str) or "/" in name or "\\" in name or name.startswith("."):
            raise ValueError(f"bad file name in answer: {name!r}")
        return folder / name

    def dec(x: Any) -> Any:
        if isinstance(x, dict):
            if set(x) == {"__float__"} and x["__float__"] in ("nan", "inf", "-inf"):
                return float(x["__float__"])
            if set(x) == {"__raised__"}:
                return Raised(str(x["__raised__"]))
            if set(x) == {"__onnx__"}:
                return OnnxBlob(inside(x["__onnx__"]).read_bytes())
            if set(x) == {"__npy__"}:
                return np.load(inside(x["__npy__"]), allow_pickle=False)
            if set(x) == {"__dict__"} and isinstance(x["__dict__"], dict):
                return {str(k): dec(v) for k, v in x["__dict__"].items()}
            raise ValueError("malformed answer file")
        if isinstance(x, list):
            return [dec(v) for v in x]
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        raise ValueError("malformed answer file")

    top = json.loads((folder / "answer.json").read_text())
    if isinstance(top, dict) and set(top) == {"__outputs__", "forms"}:
        values, forms = dec(top["__outputs__"]), top["forms"]
        if not isinstance(values, list) or not isinstance(forms, list) or \
                not all(isinstance(f, str) for f in forms) or len(forms) != len(values):
            raise ValueError("malformed answer file")
        return Outputs(values, forms)
    return dec(top)


# ---------------------------------------------------------------- test inputs (judge side -> kernel)


@dataclass(frozen=True)
class File:
    """A test input that is a file: the learner's function receives the path of a file holding `data`."""

    name: str
    data: bytes


@dataclass(frozen=True)
class Make:
    """A test input built on the learner side by `factory` ("labkit.material.lNN:name") from plain `args`.

    For harness objects (a session that refuses big batches...) that are not data themselves."""

    factory: str
    args: tuple


_NAME_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def save_inputs(cases: list[tuple], folder: str | os.PathLike) -> None:
    """Write a function exercise's test inputs to `folder` (inputs.json + .npy/.onnx/.bin files)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    counter = [0]

    def blob(data: bytes, ext: str) -> str:
        counter[0] += 1
        name = f"b{counter[0]}.{ext}"
        (folder / name).write_bytes(data)
        return name

    def enc(x: Any) -> Any:
        if x is None or isinstance(x, (bool, str)) or type(x) is int:
            return x
        if type(x) is float:
            return x if math.isfinite(x) else {"__float__": repr(x)}
        if isinstance(x, (bytes, bytearray)):
            return {"__bytes__": blob(bytes(x), "bin")}
        if isinstance(x, np.generic) and x.dtype.kind in "biuf":
            return {"__scalar__": blob(_npy(np.asarray(x)), "npy")}
        if isinstance(x, np.ndarray):
            if x.dtype.kind not in "biuf":
                raise NotPlain(f"test input array of dtype {x.dtype}")
            return {"__npy__": blob(_npy(x), "npy")}
        if type(x).__name__ == "ModelProto" and hasattr(x, "SerializeToString"):
            return {"__proto__": blob(x.SerializeToString(), "onnx")}
        if isinstance(x, File):
            if not set(x.name) <= _NAME_OK or x.name.startswith("."):
                raise ValueError(f"bad input file name {x.name!r}")
            (folder / "files").mkdir(exist_ok=True)
            (folder / "files" / x.name).write_bytes(x.data)
            return {"__file__": x.name}
        if isinstance(x, Make):
            return {"__make__": x.factory, "args": [enc(a) for a in x.args]}
        if isinstance(x, (list, tuple)):
            return {"__tuple__": [enc(v) for v in x]} if isinstance(x, tuple) else [enc(v) for v in x]
        if isinstance(x, dict) and all(type(k) is str for k in x):
            return {"__dict__": {k: enc(v) for k, v in x.items()}}
        raise NotPlain(f"test input {describe(x)}")

    (folder / "inputs.json").write_text(json.dumps([enc(list(c)) for c in cases]))


def _npy(arr: np.ndarray) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def load_inputs(folder: str | os.PathLike) -> list[tuple]:
    """Read what `save_inputs` wrote; `File`s and `Make`s come back as such, for `materialize` to write
    or build per call (the folder itself may be read-only, as in the grader's sandbox)."""
    folder = Path(folder).resolve()

    def inside(name: Any, sub: str = "") -> Path:
        if not isinstance(name, str) or "/" in name or "\\" in name or name.startswith("."):
            raise ValueError(f"bad file name in inputs: {name!r}")
        return folder / sub / name if sub else folder / name

    def dec(x: Any) -> Any:
        if isinstance(x, list):
            return [dec(v) for v in x]
        if not isinstance(x, dict):
            return x
        (key, value), = list(x.items())[:1] or [(None, None)]
        if key == "__float__":
            return float(value)
        if key == "__bytes__":
            return inside(value).read_bytes()
        if key == "__scalar__":
            return np.load(inside(value), allow_pickle=False)[()]
        if key == "__npy__":
            return np.load(inside(value), allow_pickle=False)
        if key == "__proto__":
            import onnx

            return onnx.load_from_string(inside(value).read_bytes())
        if key == "__file__":  # a File again: each call writes it to a fresh, writable folder
            path = inside(value, "files")
            return File(path.name, path.read_bytes())
        if key == "__make__":
            return Make(str(value), tuple(dec(a) for a in x["args"]))
        if key == "__tuple__":
            return tuple(dec(v) for v in value)
        if key == "__dict__":
            return {str(k): dec(v) for k, v in value.items()}
        raise ValueError("malformed inputs file")

    return [tuple(dec(c)) for c in json.loads((folder / "inputs.json").read_text())]


_SCRATCH: tuple[int, Path] | None = None


def _remove_scratch(pid: int, folder: Path) -> None:
    if os.getpid() == pid:  # not in a forked child, whose parent goes on using it
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


def _scratch() -> Path:
    """One folder per process for the `File`s written for calls, removed when the process exits (a
    learner's kernel checks many times; each call's files get a folder of their own inside it)."""
    global _SCRATCH
    if _SCRATCH is None or _SCRATCH[0] != os.getpid() or not _SCRATCH[1].is_dir():
        import atexit
        import tempfile

        _SCRATCH = (os.getpid(), Path(tempfile.mkdtemp(prefix="labkit-inputs-")))
        atexit.register(_remove_scratch, *_SCRATCH)
    return _SCRATCH[1]


def materialize(args: Any, files_dir: Path | None = None) -> Any:
    """Fresh learner-side objects for one call: arrays copied, `Make`s built, `File`s written to
    `files_dir` (a path string is passed on as it is)."""
    import copy
    import importlib

    if isinstance(args, Make):
        module, _, name = args.factory.partition(":")
        if not module.startswith("labkit.material."):
            raise ValueError(f"test input factory {args.factory!r} is not in labkit.material")
        return getattr(importlib.import_module(module), name)(*materialize(args.args, files_dir))
    if isinstance(args, File):
        import tempfile

        folder = files_dir or Path(tempfile.mkdtemp(dir=_scratch()))
        path = folder / args.name
        path.write_bytes(args.data)
        return str(path)
    if isinstance(args, tuple):
        return tuple(materialize(a, files_dir) for a in args)
    if isinstance(args, list):
        return [materialize(a, files_dir) for a in args]
    if isinstance(args, dict):
        return {k: materialize(v, files_dir) for k, v in args.items()}
    return copy.deepcopy(args)
