"""Lesson 08: answers learners write for the canvas's alpha channel, ORT Web's thread count, the web model and the
files a page needs from onnxruntime-web's dist/ (08.ship)."""
from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np

from corpus import Right, Wrong


def alpha_ref(rgba, w, h):
    return np.asarray(rgba, dtype=np.uint8).reshape(h, w, 4)[:, :, 3]


def threads_ref(requested, isolated, cores):
    """The notebook's answer: a JavaScript number (not a bool) with no fraction, above 0; cores || 1."""
    number = isinstance(requested, (int, float)) and not isinstance(requested, bool)
    if not (number and float(requested).is_integer() and requested > 0):  # int(inf) would raise
        return min(4, math.ceil((cores or 1) / 2)) if isolated else 1
    return int(requested) if isolated else 1


def _threads_match(requested, isolated, cores):
    valid = type(requested) in (int, float) and requested >= 1 and requested % 1 == 0
    if isolated and valid:
        return int(requested)
    if isolated:
        return max(1, min(4, -(-(cores or 1) // 2)))
    return 1


def _threads_one_expression(r, iso, c):
    ok = not isinstance(r, bool) and isinstance(r, (int, float)) and r > 0 and float(r).is_integer()
    return (int(r) if ok else min(4, ((c or 1) + 1) // 2)) if iso else 1


# ---------------------------------------------------------------- 08.web_model: files built once per process

_MODELS: dict[str, Path] = {}


def _strip(model):
    model.doc_string = ""
    del model.metadata_props[:]
    for part in [model.graph, *model.graph.node]:
        part.doc_string = ""
        del part.metadata_props[:]
    return model


def _build() -> None:
    import onnx
    import torch

    from labkit import android, quiet
    from labkit.models import DigitsCNN, trained_cnn

    d = Path(tempfile.mkdtemp(prefix="labkit-corpus-l08-"))
    fp32 = android.export_baked(trained_cnn(), d / "fp32.onnx")
    ext = d / "ext.onnx"
    onnx.save(onnx.load(fp32), ext, save_as_external_data=True, all_tensors_to_one_file=True,
              location="ext.onnx.data", size_threshold=0)
    out = {"fp32": fp32, "ext": ext}
    onnx.save(_strip(onnx.load(ext)), d / "ref.onnx")
    out["ref"] = d / "ref.onnx"
    m = onnx.load(ext)  # correct, written differently: a generic walk over every proto with notes
    for proto in [m, m.graph, *m.graph.node, *m.graph.value_info, *m.graph.input, *m.graph.output]:
        proto.ClearField("doc_string")
        proto.ClearField("metadata_props")
    onnx.save(m, d / "right_walk.onnx")
    out["right_walk"] = d / "right_walk.onnx"
    onnx.save(_strip(onnx.load(android.fix_batch_python(fp32, d / "b1.onnx"))), d / "right_b1.onnx")
    out["right_b1"] = d / "right_b1.onnx"
    calib = np.random.default_rng(0).integers(0, 17, (32, 1, 8, 8), dtype=np.uint8)
    out["int8"] = android.quantize_int8(out["ref"], d / "int8.onnx", calib)
    torch.manual_seed(99)
    other = android.export_baked(DigitsCNN().eval(), d / "other.onnx")
    onnx.save(_strip(onnx.load(other)), d / "other_weights.onnx")
    out["other_weights"] = d / "other_weights.onnx"
    with quiet():
        torch.onnx.export(trained_cnn(), (torch.zeros(1, 1, 8, 8),), dynamo=True).save(str(d / "float_in.onnx"))
    onnx.save(_strip(onnx.load(d / "float_in.onnx")), d / "float_in_stripped.onnx")
    out["float_in"] = d / "float_in_stripped.onnx"
    nodes_only = onnx.load(ext)  # graph-level notes left
    for n in nodes_only.graph.node:
        n.doc_string = ""
        del n.metadata_props[:]
    onnx.save(nodes_only, d / "nodes_only.onnx")
    out["nodes_only"] = d / "nodes_only.onnx"
    onnx.save(_strip(onnx.load(ext, load_external_data=False)), d / "ext_stripped.onnx")  # weights stay outside
    out["ext_stripped"] = d / "ext_stripped.onnx"
    _MODELS.update(out)


def web_model(name: str):
    """A corpus `make=` returning one of the built models (built on first use)."""
    def make(tmp):
        if not _MODELS:
            _build()
        return _MODELS[name]
    return make


# ---------------------------------------------------------------- 08.ship: the files a page fetches

def ship_ref(entry, providers, wasm_paths, threads, isolated):
    """The notebook's answer."""
    from labkit import web

    build, offered = web.ENTRY_POINTS[entry]
    if not set(providers or ["webgpu", "wasm"]) & set(offered):
        return None
    mjs_named = isinstance(wasm_paths, str) or "mjs" in (wasm_paths or {})
    inside = ".bundle." in entry and not mjs_named
    return {entry, build + ".wasm"} | (set() if inside else {build + ".mjs"})


_FAMILY_BUILD = {"ort": ".jsep", "ort.all": ".jsep", "ort.webgpu": ".asyncify", "ort.jspi": ".jspi", "ort.wasm": ""}


def _ship_parsed(entry, providers, wasm_paths, threads, isolated):
    """Right, from the file names alone (no table): a sorted list."""
    family = entry.replace(".bundle", "").replace(".min.mjs", "")
    has = {"ort.wasm": {"wasm"}, "ort.webgl": {"webgl"}}.get(family, {"wasm", "webgpu"})
    wanted = set(providers) if providers else {"wasm", "webgpu"}
    if not wanted & has:
        return None
    stem = "ort-wasm-simd-threaded" + _FAMILY_BUILD[family]
    out = [entry, stem + ".wasm"]
    if ".bundle." not in entry or type(wasm_paths) is str or (type(wasm_paths) is dict and "mjs" in wasm_paths):
        out.append(stem + ".mjs")
    return sorted(out)


def _ship_from_urls(entry, providers, wasm_paths, threads, isolated):
    """Right, taking the names of the dict's URLs where the page gives them: a frozenset."""
    from labkit import web

    build, offered = web.ENTRY_POINTS[entry]
    if not any(p in offered for p in (providers or offered)) or build is None:
        return None
    given = {k: v.rsplit("/", 1)[-1] for k, v in wasm_paths.items()} if isinstance(wasm_paths, dict) else {}
    files = [entry, given.get("wasm", build + ".wasm")]
    if "mjs" in given:
        files.append(given["mjs"])
    elif ".bundle." not in entry or isinstance(wasm_paths, str):
        files.append(build + ".mjs")
    return frozenset(files)


def _ship_tuple(entry, providers, wasm_paths, threads, isolated):
    """Right, a tuple built step by step."""
    from labkit import web

    build, offered = web.ENTRY_POINTS[entry]
    usable = [p for p in (providers if providers else ["wasm"]) if p in offered]
    if not usable:
        return None
    files = (entry,)
    bundled = ".bundle." in entry
    if isinstance(wasm_paths, str):
        bundled = False
    elif isinstance(wasm_paths, dict) and wasm_paths.get("mjs"):
        bundled = False
    if not bundled:
        files += (build + ".mjs",)
    return files + (build + ".wasm",)


def _ship_variant(entry, providers, wasm_paths, threads, isolated, build_of=None, mjs=None, map_files=False,
                  with_entry=True, check_providers=True, extra=()):
    """A wrong answer built from the reference with one belief changed."""
    from labkit import web

    build, offered = web.ENTRY_POINTS[entry]
    if check_providers and not set(providers or ["webgpu", "wasm"]) & set(offered):
        return None
    build = build_of(entry, providers) if build_of else (build or "ort-wasm-simd-threaded")
    mjs_named = isinstance(wasm_paths, str) or "mjs" in (wasm_paths or {})
    imports_mjs = (".bundle." not in entry or mjs_named) if mjs is None else mjs(entry, wasm_paths, threads, isolated)
    files = {build + ".wasm"} | ({build + ".mjs"} if imports_mjs else set()) | ({entry} if with_entry else set())
    files |= set(extra)
    if map_files:
        files |= {f + ".map" for f in files if f.startswith("ort.")}
    return files


def _wrong(**belief):
    return lambda *case: _ship_variant(*case, **belief)


def _all_dist(*case):
    from labkit_judges.l08 import DIST_FILES

    return sorted(DIST_FILES)


CORPUS = {
    "08.rgba_alpha": [
        Right("every 4th byte from index 3", answer=lambda rgba, w, h: np.asarray(rgba)[3::4].reshape(h, w)),
        Wrong("the bytes handed back", answer=lambda rgba, w, h: np.asarray(rgba), skipped_skill=True),
        Right("loops", answer=lambda rgba, w, h: np.array([[rgba[4 * (y * w + x) + 3] for x in range(w)] for y in range(h)])),
        Right("list of lists", answer=lambda rgba, w, h: [[int(rgba[(y * w + x) * 4 + 3]) for x in range(w)] for y in range(h)]),
        Wrong("red channel", answer=lambda rgba, w, h: np.asarray(rgba).reshape(h, w, 4)[:, :, 0]),
        Wrong("every 4th byte from 0", answer=lambda rgba, w, h: np.asarray(rgba)[::4].reshape(h, w)),
        Wrong("width and height swapped", answer=lambda rgba, w, h: np.asarray(rgba).reshape(w, h, 4)[:, :, 3]),
        Wrong("transposed", answer=lambda rgba, w, h: alpha_ref(rgba, w, h).T),
        Wrong("planar layout assumed", answer=lambda rgba, w, h: np.asarray(rgba).reshape(4, h, w)[3]),
        Wrong("inverted", answer=lambda rgba, w, h: 255 - alpha_ref(rgba, w, h)),
        Wrong("scaled to 0..1", answer=lambda rgba, w, h: alpha_ref(rgba, w, h) / 255),
        Wrong("ink mask", answer=lambda rgba, w, h: (alpha_ref(rgba, w, h) >= 128).astype(int)),
        Wrong("mean of RGBA", answer=lambda rgba, w, h: np.asarray(rgba).reshape(h, w, 4).mean(axis=2)),
        Wrong("right bytes as float32", outputs_wrong=False,  # the prompt asks for an integer dtype
              answer=lambda rgba, w, h: alpha_ref(rgba, w, h).astype(np.float32)),
        Wrong("right bytes as a list of floats", outputs_wrong=False,
              answer=lambda rgba, w, h: alpha_ref(rgba, w, h).astype(float).tolist()),
    ],
    "08.threads": [
        Right("match on isolation first", answer=_threads_match),
        Right("one expression", answer=_threads_one_expression),
        Wrong("ignores isolation", answer=lambda r, iso, c: r if isinstance(r, int) and r > 0 else min(4, math.ceil(c / 2))),
        Wrong("default = all cores", answer=lambda r, iso, c: (r if isinstance(r, int) and r > 0 else c) if iso else 1),
        Wrong("default rounds down",
              answer=lambda r, iso, c: (r if isinstance(r, int) and r > 0 else min(4, max(1, c // 2))) if iso else 1),
        Wrong("default not capped at 4",
              answer=lambda r, iso, c: (r if isinstance(r, int) and r > 0 else math.ceil(c / 2)) if iso else 1),
        Wrong("caps the request at the cores",
              answer=lambda r, iso, c: (min(r, c) if isinstance(r, int) and r > 0 else min(4, math.ceil(c / 2))) if iso else 1),
        Wrong("default is 1 even when isolated", answer=lambda r, iso, c: (r if isinstance(r, int) and r > 0 else 1) if iso else 1),
        Wrong("non-integer request rounded",
              answer=lambda r, iso, c: (int(r) if r else min(4, math.ceil(c / 2))) if iso and (r or 0) > 0
              else (min(4, math.ceil(c / 2)) if iso else 1)),
        Wrong("always 1", answer=lambda r, iso, c: 1, skipped_skill=True),
    ],
    "08.ship": [
        Right("parsed from the file names, a sorted list", answer=_ship_parsed),
        Right("names taken from the wasmPaths URLs, a frozenset", answer=_ship_from_urls),
        Right("a tuple built step by step", answer=_ship_tuple),
        Wrong("the .mjs forgotten next to the .wasm", answer=_wrong(mjs=lambda e, w, t, i: False)),
        Wrong("every file of dist/", answer=_all_dist, skipped_skill=True),
        Wrong("webgpu in the providers means the jsep build",
              answer=_wrong(build_of=lambda e, p: "ort-wasm-simd-threaded" + (".jsep" if "webgpu" in (p or []) else ""))),
        Wrong("the wasm provider means the plain build", answer=_wrong(
            build_of=lambda e, p: "ort-wasm-simd-threaded" if p is None or "wasm" in p else "ort-wasm-simd-threaded.jsep")),
        Wrong("a bundle never imports the .mjs", answer=_wrong(mjs=lambda e, w, t, i: ".bundle." not in e)),
        Wrong("a bundle imports its .mjs too", answer=_wrong(mjs=lambda e, w, t, i: True)),
        Wrong("any wasmPaths makes a bundle import the .mjs",
              answer=_wrong(mjs=lambda e, w, t, i: ".bundle." not in e or w is not None)),
        Wrong("the entry itself left out", answer=_wrong(with_entry=False)),
        Wrong("source maps shipped too", answer=_wrong(map_files=True)),
        Wrong("providers ignored", answer=_wrong(check_providers=False)),
        Wrong("workers need the .mjs (threads on a bundle)", answer=_wrong(
            mjs=lambda e, w, t, i: ".bundle." not in e or isinstance(w, str) or "mjs" in (w or {}) or (t > 1 and i))),
        Wrong("a worker script for threads", answer=lambda e, p, w, t, i: (
            None if (f := ship_ref(e, p, w, t, i)) is None else f | ({"ort-wasm-simd-threaded.worker.js"} if t > 1 else set()))),
        Wrong("unset providers fall back to webgl", answer=lambda e, p, w, t, i: (
            {e} if p is None and e == "ort.webgl.min.mjs" else ship_ref(e, p, w, t, i))),
        Wrong("the course page's three files, always", answer=lambda *case: [
            "ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm"], skipped_skill=True),
    ],
    "08.web_model": [
        Right("stripped with a generic walk", make=web_model("right_walk")),
        Right("batch fixed to 1, then stripped", make=web_model("right_b1")),
        Wrong("the export as is (notes with source paths)", make=web_model("fp32"), skipped_skill=True),
        Wrong("node notes stripped, graph notes left", make=web_model("nodes_only"), outputs_wrong=False),
        Wrong("the external-data file handed in", make=web_model("ext")),
        Wrong("stripped, weights still in the .data file", make=web_model("ext_stripped")),
        Wrong("the int8 model", make=web_model("int8")),
        Wrong("other weights", make=web_model("other_weights")),
        Wrong("float input (preprocessing not baked in)", make=web_model("float_in")),
    ],
}


# Second-round blind entries (issue 32), measured by this corpus's rule before and after the fixes: tests/corpus/blind2_l08.py.
# Left out of the fast tier: the 25 of 49 measured above 0.15 s an evaluation (they scored by the rule when measured).
from corpus import add_blind, blind2_l08  # noqa: E402

add_blind(CORPUS, blind2_l08, slow={
    'blind2-alpha-blue-channel', 'blind2-alpha-flat', 'blind2-alpha-flat-then-swapped',
    'blind2-alpha-frombuffer-stride', 'blind2-alpha-gray-mean', 'blind2-alpha-index-loops', 'blind2-alpha-int8',
    'blind2-alpha-inverted', 'blind2-alpha-normalized', 'blind2-alpha-one-based-index',
    'blind2-alpha-pixel-rows', 'blind2-alpha-red-channel', 'blind2-alpha-square-only',
    'blind2-alpha-transposed', 'blind2-alpha-width-height-swapped', 'blind2-web-docstrings-only',
    'blind2-web-dropped-scaling', 'blind2-web-generic-walk', 'blind2-web-letter-of-prompt',
    'blind2-web-model-graph-only', 'blind2-web-modelproto-not-path', 'blind2-web-names-not-graph-meta',
    'blind2-web-nodes-only', 'blind2-web-resave-only', 'blind2-web-strip-fields'
})

# Blind round 3 (tests/corpus/blind3_lNN.py): measured first, then added; slow ones scored by hand.
from corpus import add_blind, blind3_l08  # noqa: E402

add_blind(CORPUS, blind3_l08)

# Blind round 11 (tests/corpus/blind11_l08.py, 30 answers to 08.ship by a writer who read only the lesson part before
# it and the pinned package, and checked key pages in Chromium 156 with WebGPU): measured first at seeds 0 and
# 20250 — all 5 right answers scored 0-0.75 of 3 (false rejects) and 1 wrong one full marks. The prompt said "a
# prefix such as 'ort/'", and the writer was right about the browser: import() resolves a relative prefix against
# the imported module, and an "mjs" URL alone becomes the base of the .wasm's URL, which must be absolute ("Invalid
# base URL"); the judge took every string as working (the Chromium test rebased them all). The prompt and the
# cases now give absolute URLs on the page's server: 0 false rejects, and the 3 entries below full marks, each
# right for every page the prompt allows now.
from corpus import blind11_l08  # noqa: E402

add_blind(CORPUS, blind11_l08, reclassify={
    "blind11-trusts-every-url-form": ("right", "wrong only for relative URLs, which the prompt no longer gives"),
    "blind11-returns-tuple": ("right", "the right names in a tuple: a collection of names like the list the prompt "
                                       "allows"),
    "blind11-paths-not-names": ("right", "paths ending in the right names name the same files; the check takes the "
                                         "last part of each"),
})

# Blind round 13 (tests/corpus/blind13_l08.py, 71 answers by a writer who read only the prompt): measured first —
# 3 full marks for wrong answers (08.threads by running ONNX Runtime Web's own source in Node.js; 08.ship treating
# an empty provider list as no provider, a case the check never tried; 08.web_model under another file name, right:
# the lesson uses `web_model` whatever it is called) and 2 over-credits (a model that ignores the image; a
# pass-through of numThreads, an attempt). 08.threads now runs where only NumPy and the standard library import, an
# empty list is a page of 08.ship (onnxruntime-common: no hints means every backend by priority), and a web model
# whose answers do not depend on the image did not do the exercise.
from corpus import blind13_l08  # noqa: E402

add_blind(CORPUS, blind13_l08, reclassify={
    "blind13-webmodel-wrong-name": ("right", "the lesson reads the model from `web_model`, whatever the file's name"),
    "blind13-threads-passthrough": ("attempt", "right when numThreads is a positive integer, wrong for the default: "
                                               "half the rule"),
})

# Blind round 14 (tests/corpus/blind14_l08.py, 18 answers to 08.ship, after the empty provider list): measured
# first — no full marks for a wrong answer, no over-credit, no false reject.
from corpus import blind14_l08  # noqa: E402

add_blind(CORPUS, blind14_l08)
