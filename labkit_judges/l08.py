"""Lesson 08 exercise specs (what the learner sees, references, test inputs, quiz answers): a web-ready model,
ONNX Runtime Web's thread count, the files a page needs from the package, the quiz, and the canvas's alpha channel
(a bonus in the optional part)."""
from __future__ import annotations

import math

import numpy as np

from labkit.checks import Question, TestResult, error_line, exercise, expect_close, quiz
from labkit.checks.differential import same
from labkit.external_data import external_tensors
from labkit.plain import OnnxBlob, Raised, describe
from labkit.web import ENTRY_POINTS

#: canvas sizes (width, height) of the alpha cases: mostly not square, so rows and columns cannot be swapped unseen
_ALPHA_SIZES = [(7, 3), (5, 9), (280, 280), (16, 4)]
_ALPHA_NAMES = ["a 7x3 canvas", "a 5x9 canvas", "the page's 280x280 canvas", "a 16x4 canvas with a thin stroke"]


def _alpha_cases(seed: int) -> list[tuple]:
    """(rgba, width, height): `rgba` is what ImageData.data holds, RGBA bytes row by row (length 4*w*h)."""
    rng = np.random.default_rng(seed + 808)
    cases = []
    for w, h in _ALPHA_SIZES:
        px = rng.integers(0, 256, size=(h, w, 4), dtype=np.uint8)  # every channel different from the others
        if w == 16:
            px[..., 3] = 0
            px[1, 2:14, 3] = 255  # one stroke in the alpha channel only
        cases.append((px.reshape(-1).copy(), w, h))
    return cases


def _thread_cases(seed: int) -> list[tuple]:
    """(requested numThreads, crossOriginIsolated, navigator.hardwareConcurrency), as the prompt promises them:
    `requested` is the page's JavaScript value (None when unset, a bool, an int, or a float: 5.0 is the integer 5
    there), `cores` a number or None (a browser that does not report it)."""
    rng = np.random.default_rng(seed + 818)
    cores = lambda: int(rng.choice([1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32]))
    cases: list[tuple] = []
    for isolated in (True, False):
        # a whole float above 4: never the default, so reading it as invalid shows
        for requested in (1, 2, int(rng.integers(3, 9)), int(rng.integers(9, 33)), float(rng.integers(5, 9))):
            cases.append((requested, isolated, cores()))
        for requested in (None, 0, -2, 2.5, True, math.inf, math.nan):  # a float may be any float, inf and NaN too
            for c in (1, 2, 3, 5, 8, int(rng.integers(9, 65)), None):
                cases.append((requested, isolated, c))
    order = rng.permutation(len(cases))
    return [cases[i] for i in order]


# ---------------------------------------------------------------- 08.rgba_alpha


def reference_alpha(rgba, width: int, height: int) -> np.ndarray:
    """ImageData.data (RGBA bytes row by row) -> the alpha channel as a (height, width) uint8 array."""
    return np.asarray(rgba, dtype=np.uint8).reshape(height, width, 4)[:, :, 3]


@exercise('08.rgba_alpha', title="Read the ink from the canvas's RGBA bytes", points=2, kind='function', bonus=True,
          hint=[
              'ImageData.data is one flat array of RGBA bytes, pixel after pixel, row by row; alpha is the 4th byte of each pixel.',
              'np.asarray, reshape to (height, width, 4) and index the last axis.',
          ],
          cases=_alpha_cases, tests=tuple(_ALPHA_NAMES), skill=tuple(_ALPHA_NAMES))
def _rgba_alpha(outputs, seed):
    for name, (rgba, w, h), got in zip(_ALPHA_NAMES, _alpha_cases(seed), outputs):
        want = reference_alpha(rgba, w, h)
        t = same(name, got, want, forms=("array", "list"), integer=True)  # any integer dtype, or a list of rows
        if not t.passed and not isinstance(got, Raised):
            try:
                arr = np.asarray(got, dtype=np.float64)
            except (TypeError, ValueError):
                arr = None
            px = np.asarray(rgba).reshape(h, w, 4)
            if arr is not None and arr.shape == (w, h) and w != h:
                t.message += " (rows and columns swapped: the bytes go row by row, so the shape is (height, width))"
            elif arr is not None and arr.shape == want.shape:
                for c, label in ((0, "red"), (1, "green"), (2, "blue")):
                    if np.array_equal(arr, px[:, :, c]):
                        t.message += f" (that is the {label} channel: alpha is the 4th byte of each pixel)"
                if np.array_equal(arr, 255 - want):
                    t.message += " (inverted: return alpha itself, 255 where the ink is)"
                elif arr.max() <= 1.0 and want.max() > 1:
                    t.message += " (expected the bytes 0..255, not a fraction or a yes/no ink mask)"
        yield t


# ---------------------------------------------------------------- 08.threads


def valid_request(requested) -> bool:
    """ONNX Runtime Web's test, `typeof n === "number" && Number.isInteger(n) && n > 0`, on the JavaScript value as
    Python holds it: a bool is no number there (`true` is a boolean), and a whole float is an integer (one number
    type: 3.0 is 3)."""
    return type(requested) in (int, float) and float(requested).is_integer() and requested > 0


def reference_threads(requested, cross_origin_isolated: bool, cores: int | None) -> int:
    """The number of threads ONNX Runtime Web 1.30's WebAssembly backend ends up using.

    Unset or invalid (not a positive integer, `valid_request`): 1 without cross-origin isolation, else
    min(4, ceil(cores / 2)), with `cores || 1`. Set above 1 without cross-origin isolation: no
    SharedArrayBuffer, so it warns and falls back to 1. Otherwise exactly what was asked (no cap).
    """
    if not valid_request(requested):
        return min(4, math.ceil((cores or 1) / 2)) if cross_origin_isolated else 1
    if requested > 1 and not cross_origin_isolated:
        return 1
    return int(requested)


THREAD_TESTS = ("numThreads set to a positive integer",
                "numThreads unset, 0, negative, not an integer or not a number (the default)")


def _threads_group(outputs, seed, explicit: bool):
    cases = _thread_cases(seed)
    picked = [(args, got) for args, got in zip(cases, outputs) if valid_request(args[0]) == explicit]
    for (requested, iso, cores), got in picked:
        want = reference_threads(requested, iso, cores)
        if isinstance(got, Raised):
            return False, f"your function {got.message}"
        if isinstance(got, bool) or not isinstance(got, (int, float)) or got != want:
            why = ("without cross-origin isolation there is no SharedArrayBuffer, hence one thread"
                   if not iso else
                   "a bool is not a number in JavaScript: the default applies" if type(requested) is bool else
                   "hardwareConcurrency not reported: the source takes (cores || 1)" if cores is None else
                   "the default is min(4, ceil(cores / 2)) when isolated" if not explicit else
                   "JavaScript has one number type: a whole float is an integer, asked for like any other"
                   if type(requested) is float else
                   "when isolated, ONNX Runtime Web uses exactly the number asked for")
            return False, (f"numThreads={requested!r}, crossOriginIsolated={iso}, {cores} cores: expected {want}, "
                           f"got {describe(got) if not isinstance(got, (int, float)) else got!r} ({why})")
    return True, f"right on all {len(picked)} cases"


@exercise('08.threads', title='How many threads will ONNX Runtime Web use?', points=3, kind='function',
          tools=('numpy',),
          hint=[
              'Two questions in turn: is numThreads a positive integer (if not, the default applies, and it depends on crossOriginIsolated)? Can this page share memory between threads at all?',
              'Read the source printed above the exercise: type() rather than isinstance (True is an int in Python, not a number in JavaScript), float.is_integer, min, math.ceil.',
          ],
          cases=_thread_cases, tests=THREAD_TESTS, skill=THREAD_TESTS)
def _threads(outputs, seed):
    for explicit, name in zip((True, False), THREAD_TESTS):
        ok, msg = _threads_group(outputs, seed, explicit)
        yield TestResult(name, ok, msg)


# ---------------------------------------------------------------- 08.web_model

N_COMPARE = 24
_WEB_STEPS = ["one self-contained file", "same answers as the course CNN, one digit at a time",
              "no exporter notes (source paths, stack traces, doc strings)"]


def reference_cnn():
    """The course CNN (tests replace this with an untrained one to stay fast)."""
    from labkit.models import trained_cnn

    return trained_cnn()


def reference_probabilities(raw: np.ndarray) -> np.ndarray:
    """Probabilities of the course CNN with its preprocessing baked in (torch) on raw uint8 digits."""
    import torch

    from labkit import android

    with torch.no_grad():
        return android.with_preprocessing(reference_cnn())(torch.from_numpy(np.asarray(raw, dtype=np.uint8))).numpy()


def _compare_digits(seed: int) -> np.ndarray:
    from labkit.data import digits

    x = digits(raw=True).x_test
    return x[np.sort(np.random.default_rng(seed + 828).choice(len(x), N_COMPARE, replace=False))]


def _notes(model) -> list[str]:
    """Where a model still carries doc strings or metadata (what the exporter wrote about your machine)."""
    found = []
    if model.doc_string:
        found.append("the model's doc_string")
    if model.metadata_props:
        found.append(f"{len(model.metadata_props)} model metadata_props")
    g = model.graph
    if g.doc_string or g.metadata_props:
        found.append("the graph's doc_string/metadata_props")
    nodes = [n for n in g.node if n.doc_string or n.metadata_props]
    if nodes:
        keys = sorted({p.key for n in nodes for p in n.metadata_props})[:3]
        found.append(f"{len(nodes)} nodes' metadata ({', '.join(keys) or 'doc_string'})")
    return found


def _nothing_stripped(model) -> bool:
    """Every place the exporter wrote notes still has them: the graph's and every node's."""
    g = model.graph
    return bool(g.doc_string or g.metadata_props) and bool(g.node) and \
        all(n.doc_string or n.metadata_props for n in g.node)


#: every step is the exercise: one file, the same answers, nothing about your machine
@exercise('08.web_model', title='Prepare the model for the web', points=3, kind='onnx',
          hint=[
              'A web page fetches one URL: every weight must be inside the file, and nothing the exporter wrote about your machine (doc strings, metadata) may be left on the model, the graph or any node.',
              'onnx.load (it reads the external data in), the doc_string and metadata_props fields, ClearField, onnx.save.',
          ],
          tests=tuple(_WEB_STEPS), skill=tuple(_WEB_STEPS))
def _web_model(answer, seed):
    from labkit.checks import DidNotDo

    def rest(after: int, why: str):
        for name in _WEB_STEPS[after + 1:]:
            yield TestResult(name, False, f"not checked: {why}")

    if isinstance(answer, Raised) or not isinstance(answer, OnnxBlob):
        msg = (f"your function {answer.message}" if isinstance(answer, Raised)
               else f"expected the path of an .onnx file, got {describe(answer)}")
        yield TestResult(_WEB_STEPS[0], False, msg)
        yield from rest(0, "no model")
        return
    import onnx

    try:
        model = onnx.load_from_string(answer.data)
    except Exception as e:
        yield TestResult(_WEB_STEPS[0], False, f"not a valid ONNX file ({type(e).__name__})")
        yield from rest(0, "not an ONNX file")
        return
    external = external_tensors(model)  # run_judge refuses such a model first; kept for direct calls
    if external:
        where = {w for _, w in external}
        yield TestResult(_WEB_STEPS[0], False,
                         f"{len(external)} weights live in another file ({', '.join(sorted(where))}): the page fetches "
                         "one URL, so every weight must be inside the one .onnx file")
        yield from rest(0, "the weights are not in the file")
        return
    from labkit.checks import ort_session

    try:
        sess = ort_session(answer)
    except Exception as e:
        yield TestResult(_WEB_STEPS[0], False, f"ONNX Runtime cannot load it: {error_line(e)}")
        yield from rest(0, "the model does not load")
        return
    yield TestResult(_WEB_STEPS[0], True, f"{len(answer.data):,} bytes, every weight inside")
    inp = sess.get_inputs()[0]
    if len(sess.get_inputs()) != 1 or inp.type != "tensor(uint8)":
        yield TestResult(_WEB_STEPS[1], False,
                         "the page feeds one uint8 input (raw pixels 0..16, preprocessing baked in); this model takes "
                         + ", ".join(f"{i.name} {i.type} {i.shape}" for i in sess.get_inputs()))
        yield from rest(1, "the outputs are wrong, so the rest does not count")
        return
    x = _compare_digits(seed)
    try:
        got = np.concatenate([np.asarray(sess.run(None, {inp.name: x[i:i + 1]})[0]) for i in range(len(x))])
    except Exception as e:
        yield TestResult(_WEB_STEPS[1], False, f"running it on one digit failed: {error_line(e)}")
        yield from rest(1, "the model does not run")
        return
    want = reference_probabilities(x)
    # the same fp32 weights give these probabilities within ~2e-7 (rounding order); weights cast to fp16 and back
    # drift by 2e-5..4e-4: a copy of the model, not a smaller one, is asked for
    t = expect_close(_WEB_STEPS[1], got, want, rtol=0, atol=5e-6)
    if not t.passed:
        if got.shape == want.shape:
            diff = float(np.abs(got - want).max())
            agree = float((got.argmax(1) == want.argmax(1)).mean())
            t.message += f"; largest difference {diff:.3g}, same digit for {agree:.0%}"
        if any(n.op_type in ("QuantizeLinear", "DequantizeLinear") or n.op_type.startswith("QLinear")
               for n in model.graph.node):
            t.message += " — this is an int8 model? This exercise asks for the fp32 one"
        elif any(i.data_type == onnx.TensorProto.FLOAT16 for i in model.graph.initializer):
            t.message += " — weights stored as float16 change the answers: this exercise asks for the fp32 model as it is"
        yield t
        if got.ndim == 2 and len(got) > 1 and float(np.ptp(got, axis=0).max()) < 1e-6:
            yield DidNotDo(f"it gives the same answer for all {len(got)} digits: a model that does not look at "
                           "the image is not the course CNN prepared for the web")
        yield from rest(1, "the outputs are wrong, so the rest does not count")
        return
    yield t
    notes = _notes(model)
    if notes and _nothing_stripped(model):
        yield DidNotDo("the graph and every node still carry the exporter's notes: this is the exported model "
                       "saved again, nothing was taken out")
    yield TestResult(_WEB_STEPS[2], not notes,
                     "nothing about your machine in the file" if not notes else
                     "still in the file: " + "; ".join(notes) + " — a web page's model is public")


# ---------------------------------------------------------------- 08.ship
#
# Which files of onnxruntime-web's dist/ a page fetches (1.30.0; tests/test_l08.py checks this rule against the
# installed source and against the requests headless Chromium makes, page by page):
# * the entry it imports, which names one WebAssembly build (`ENTRY_POINTS`): that build's `.mjs` and `.wasm`;
# * a `.bundle.` entry carries the build's `.mjs` inside and imports none, unless `ort.env.wasm.wasmPaths` is a
#   prefix string or names the `mjs` (`useEmbeddedModule = embeddedWasmModule && !(urlOverride || prefixOverride)`);
# * `InferenceSession.create` initializes every listed provider the entry has (left unset: all but webgl, whose
#   priority is negative); none left: no session, whatever is served;
# * threads are Web Workers that import the same `.mjs` (or the bundle) again: more requests, no other file, and
#   isolation changes only whether they start. Source maps are fetched by developer tools only.

#: every file of onnxruntime-web 1.30.0's dist/ (tests/test_l08.py compares it with the installed folder)
DIST_FILES = frozenset(
    [f"ort-wasm-simd-threaded{b}.{x}" for b in ("", ".jsep", ".asyncify", ".jspi") for x in ("mjs", "wasm")]
    + [f"ort{f}.{k}" for f in ("", ".all", ".wasm", ".webgpu", ".jspi", ".webgl") for k in ("js", "mjs")]
    + [f"ort{f}.{k}{m}" for f in ("", ".all", ".wasm", ".webgpu", ".jspi", ".webgl", ".node")
       for k in ("min.js", "min.mjs") for m in ("", ".map")]
    + [f"ort{f}.bundle.min.mjs{m}" for f in ("", ".all", ".wasm", ".webgpu", ".jspi") for m in ("", ".map")])

SHIP_TESTS = ("entries that import their build (.min.mjs)", "bundles (.bundle.min.mjs), with and without wasmPaths",
              "execution providers the entry lacks", "threads on a cross-origin isolated page")
#: where the page says its .mjs/.wasm are: absolute URLs on the page's own server, as the lesson's page builds them
#: (new URL('ort/', document.baseURI).href). A relative one is no good: import() resolves it against the imported
#: module, and a "mjs" URL alone is the base of the .wasm's URL, which must be absolute ("Invalid base URL")
_PREFIXES = ("https://lab.example/ort/", "https://lab.example/static/onnxruntime/", "https://lab.example/dist/")


def reference_files(entry: str, providers, wasm_paths, threads: int, isolated: bool) -> set[str] | None:
    """The files of dist/ a page needs and fetches; None when no listed provider is in `entry` (no session)."""
    runtime, offered = ENTRY_POINTS[entry]
    used = [p for p in (providers or ("webgpu", "wasm")) if p in offered]  # unset: every one but webgl
    if not used:
        return None
    if set(used) == {"webgl"}:  # not in the cases (their providers are wasm and webgpu); what the source does
        return {entry}
    files = {entry, f"{runtime}.wasm"}
    if ".bundle." not in entry or isinstance(wasm_paths, str) or "mjs" in (wasm_paths or {}):
        files.add(f"{runtime}.mjs")
    return files


def _wasm_paths(rng, form: str, runtime: str | None):
    """`ort.env.wasm.wasmPaths` as the page sets it: unset, a prefix, or URLs of the build's own files."""
    at = str(rng.choice(_PREFIXES))
    if runtime is None:  # ort.webgl has no WebAssembly build to point at
        return at if form == "prefix" else None
    return {"unset": None, "prefix": at, "wasm": {"wasm": f"{at}{runtime}.wasm"},
            "mjs": {"mjs": f"{at}{runtime}.mjs"},
            "both": {"mjs": f"{at}{runtime}.mjs", "wasm": f"{at}{runtime}.wasm"}}[form]


def _ship_plan(seed: int) -> list[tuple[str, tuple]]:
    """(test name, case) for every page, in a shuffled order; a case is (entry, providers, wasm_paths, threads,
    isolated), as the prompt promises: providers a list of "webgpu"/"wasm" (maybe empty) or None."""
    rng = np.random.default_rng(seed + 838)
    separate = [e for e, (r, _) in ENTRY_POINTS.items() if r and ".bundle." not in e]
    bundles = [e for e in ENTRY_POINTS if ".bundle." in e]
    forms = ("unset", "prefix", "wasm", "mjs", "both")

    def working(entry):  # providers that start a session with this entry (the browser has WebGPU)
        if "webgpu" in ENTRY_POINTS[entry][1]:
            return [["wasm"], ["webgpu", "wasm"], ["wasm", "webgpu"], ["webgpu"], None]
        return [["wasm"], ["webgpu", "wasm"], None]

    def pick(options):
        return options[int(rng.integers(len(options)))]

    def single():  # one thread at work: threads 1, or asked for without isolation
        return pick([(1, True), (1, False), (2, False), (4, False), (8, False)])

    def page(entry, providers, form, threads_iso):
        return (entry, providers, _wasm_paths(rng, form, ENTRY_POINTS[entry][0]), *threads_iso)

    plan = []
    for entry in separate + [pick(separate)]:
        plan.append((SHIP_TESTS[0], page(entry, pick(working(entry)), pick(forms), single())))
    # an empty list is unset (onnxruntime-common: `backendHints.length === 0 ? backendsSortedByPriority`)
    plan.append((SHIP_TESTS[0], page(pick(separate), [], pick(forms), single())))
    for entry, form in zip(bundles * 2, list(rng.permutation(forms * 2))):
        plan.append((SHIP_TESTS[1], page(entry, pick(working(entry)), str(form), single())))
    wasm_only = ["ort.wasm.min.mjs", "ort.wasm.bundle.min.mjs"]
    with_gpu = [e for e in ENTRY_POINTS if "webgpu" in ENTRY_POINTS[e][1]]
    for entry, providers in ((pick(wasm_only), ["webgpu"]),
                             ("ort.webgl.min.mjs", pick([["wasm"], ["webgpu", "wasm"], ["webgpu"]])),
                             ("ort.webgl.min.mjs", None),
                             (pick(wasm_only), pick([["webgpu", "wasm"], ["wasm", "webgpu"]])),
                             (pick(with_gpu), ["webgpu"]),
                             (pick(["ort.all.min.mjs", "ort.all.bundle.min.mjs"]), pick([["webgpu"], None]))):
        plan.append((SHIP_TESTS[2], page(entry, providers, pick(forms), single())))
    for entry, form in [(pick(separate), pick(forms)), (pick(separate), pick(forms)), (pick(bundles), "unset"),
                        (pick(bundles), pick(["unset", "wasm"]))]:  # the bundles use their own .mjs
        plan.append((SHIP_TESTS[3], page(entry, pick(working(entry)), form, (pick([2, 4, 8]), True))))
    order = rng.permutation(len(plan))
    return [plan[i] for i in order]


def _ship_cases(seed: int) -> list[tuple]:
    return [case for _, case in _ship_plan(seed)]


def _shipped(got) -> tuple[set[str] | None, str]:
    """The answer's files as bare names (None: no files), or why it is no answer ("" when it is one)."""
    if isinstance(got, Raised):
        return None, f"your function {got.message}"
    if got is None:
        return None, ""
    if isinstance(got, list) and all(isinstance(f, str) for f in got):
        return {f.rstrip("/").rsplit("/", 1)[-1] for f in got} or None, ""
    return None, (f"expected a set (or list) of file names such as 'ort.wasm.min.mjs', or None; got "
                  f"{describe(got)}" + (" holding " + describe(got[0]) if isinstance(got, list) and got else ""))


def _page(case) -> str:
    entry, providers, wasm_paths, threads, isolated = case
    return (f"import '{entry}', executionProviders={providers!r}, wasmPaths={wasm_paths!r}, numThreads={threads}, "
            f"{'isolated' if isolated else 'not isolated'}")


def _ship_why(case, want: set[str] | None, got: set[str] | None) -> str:
    """Why the answer's files are not the page's: the first mistake found, said as the package does it."""
    entry, providers, wasm_paths, threads, isolated = case
    runtime, offered = ENTRY_POINTS[entry]
    if want is None:
        if not providers:
            return (f"left {'unset' if providers is None else 'empty'}, the page tries every provider of the entry "
                    f"but webgl (its priority is "
                    f"negative), and {entry} has only {', '.join(offered)}: no session")
        return (f"none of {providers} is in {entry} (it has {', '.join(offered)}): InferenceSession.create fails "
                "whatever the server sends")
    if got is None:
        used = [p for p in (providers or ("webgpu", "wasm")) if p in offered]
        return (f"{entry} has {' and '.join(used)}: the session starts, with files from the server"
                + (" (an empty list is unset: every provider of the entry but webgl is tried)" if providers == []
                   else ""))
    extra, missing = got - want, want - got
    unknown = sorted(f for f in extra if f not in DIST_FILES)
    if unknown:
        return (f"{unknown[0]!r} is not in onnxruntime-web 1.30's dist/ (one threaded build serves every page, "
                "with or without isolation; its Web Workers import the build's .mjs or the bundle again)"
                if "worker" in unknown[0] or "threaded" not in unknown[0] and "wasm" in unknown[0] else
                f"{unknown[0]!r} is not the name of a file in onnxruntime-web 1.30's dist/")
    if len(got) > 10:
        return f"{len(got)} files, of which the page fetches {len(want)}"
    if any(f.endswith(".map") for f in extra):
        return "source maps (.map) are fetched by the browser's developer tools only, never by the page"
    if entry in missing:
        return f"the page imports {entry} itself"
    others = sorted(f for f in extra if f.startswith("ort-wasm") and f not in (f"{runtime}.mjs", f"{runtime}.wasm"))
    if others:
        return (f"{others[0]} is another build: {entry} loads {runtime}.mjs/.wasm (web.ENTRY_POINTS) whatever the "
                "providers, so the entry decides")
    if any(f.startswith("ort.") for f in extra):
        return f"the page imports one entry point, {entry}, not {sorted(f for f in extra if f.startswith('ort.'))}"
    if f"{runtime}.wasm" in missing:
        return (f"every page that runs WebAssembly fetches {runtime}.wasm, a bundle too (only the .mjs is inside "
                "it)")
    bundle = ".bundle." in entry
    if f"{runtime}.mjs" in missing:
        return (f"wasmPaths={wasm_paths!r} makes even a bundle import {runtime}.mjs from there (the bundle uses "
                "its own copy only when wasmPaths is unset or names the .wasm alone)" if bundle else
                f"{entry} imports {runtime}.mjs, which then fetches the .wasm")
    if f"{runtime}.mjs" in extra:
        return (f"the bundle carries {runtime}.mjs inside and imports none when wasmPaths is "
                f"{'unset' if wasm_paths is None else 'the .wasm URL alone'}"
                + (f"; its {threads} Web Workers import the bundle again, no other file"
                   if threads > 1 and isolated else ""))
    return f"missing {sorted(missing)}, not fetched {sorted(extra)}"


def _ship_judge(outputs, seed):
    from labkit.checks import DidNotDo

    plan = _ship_plan(seed)
    sizes = [len(_shipped(got)[0] or ()) for got in outputs]
    if sizes and min(s for s in sizes) >= 20:
        yield DidNotDo(f"it serves {min(sizes)} or more files for every page, the whole of dist/: choosing which "
                       "ones is the exercise")
    for name in SHIP_TESTS:
        picked = [(case, got) for (test, case), got in zip(plan, outputs) if test == name]
        for case, out in picked:
            got, why = _shipped(out)
            want = reference_files(*case)
            if why:
                yield TestResult(name, False, why)
                break
            if got != want:
                show = lambda fs: ("None" if fs is None else "{" + ", ".join(sorted(fs)) + "}" if len(fs) <= 6
                                   else "{" + ", ".join(sorted(fs)[:3]) + f", ... {len(fs)} files" + "}")
                yield TestResult(name, False, f"{_page(case)}: expected {show(want)}, got {show(got)} "
                                              f"({_ship_why(case, want, got)})")
                break
        else:
            yield TestResult(name, True, f"right on all {len(picked)} pages")


@exercise('08.ship', title='Which files must the server send?', points=3, kind='function',
          hint=[
              'Three questions, page by page: can it start a session at all (is one of its providers in the entry)? '
              'Which WebAssembly build does the entry load? Does the page import that build\'s .mjs, or does a bundle '
              'carry it inside? Then ask what threads and isolation change.',
              'web.ENTRY_POINTS[entry] gives the build\'s file stem and its providers; the source lines above '
              'the exercise show which values of wasmPaths (a str, the keys of an object) make a bundle import its '
              '.mjs; a Python set of names is the answer.',
          ],
          cases=_ship_cases, tests=SHIP_TESTS, skill=SHIP_TESTS, call="labkit.web:ship_call")
def _ship(outputs, seed):
    yield from _ship_judge(outputs, seed)


_QUIZ_KEY = {
    "q1": ("b", "ORT Web checks for SharedArrayBuffer, which browsers give only to cross-origin isolated pages; the "
                "model still loads (a), and the headers are about shared memory, not WebGPU (c)."),
    "q2": ("a", "The measurement above: the .wasm runtime is megabytes, the model and the scripts tens of kilobytes. "
                "int8 shrinks the model (b) but not the runtime; the JavaScript (c) is small."),
    "q3": ("c", "Float addition is not associative, so another summation order changes the last bits. The browser "
                "computes in float32, not float16 (a), and 1e-7 is far below the 1e-4 the course allows (b)."),
    "q4": ("a", "Compare like with like: the same int8 file in both runtimes. Against fp32 (b) the int8 rounding "
                "alone exceeds 1e-4; int8 results are deterministic, not random (c)."),
    "q5": ("b", "The model takes the raw uint8 pixels and divides by 16 itself, so no copy of the preprocessing can "
                "drift. ORT Web takes uint8 inputs fine (a), and JavaScript divides exactly enough (c)."),
    "q6": ("c", "Uploading inputs and downloading outputs has a fixed cost that a tiny CNN never earns back; keep "
                "'wasm' after 'webgpu' so browsers without WebGPU still run. Not always faster (a), and WebGPU is a "
                "browser API (b)."),
}

quiz('08.quiz', title='Models in web pages', points=3, questions=[
    Question('q1', 'Your page sets ort.env.wasm.numThreads = 4, but the server sends no COOP/COEP headers. What happens?', {
        'a': 'Loading fails with a SharedArrayBuffer error',
        'b': 'ORT Web warns and falls back to one thread',
        'c': 'It runs 4 threads: the headers only matter for WebGPU',
    }, answer='b', why=(
        'ORT Web checks for SharedArrayBuffer, which browsers give only to cross-origin isolated '
        'pages; without it ONNX Runtime Web warns and runs on one thread. The model still loads (a), '
        'and the headers are about shared memory, not WebGPU (c).')),
    Question('q2', "On a first visit to this lesson's page, which file is most of the download?", {
        'a': 'The WebAssembly build of ONNX Runtime, the .wasm',
        'b': 'The model, which is why int8 matters most on the web',
        'c': 'The JavaScript of the page and of onnxruntime-web',
    }, answer='a', why=(
        'The measurement above: the .wasm runtime is megabytes, the model and the scripts tens of '
        'kilobytes. int8 shrinks the model but not the runtime (b), and the JavaScript (c) is small.')),
    Question('q3', 'fp32 in the browser and in Python differ by about 1e-7, not 0. Why?', {
        'a': 'The browser computes in float16 to save memory',
        'b': 'A bug: the same model must give identical bits',
        'c': 'WebAssembly kernels sum the floats in another order',
    }, answer='c', why=(
        "Different kernels (WebAssembly SIMD vs your CPU's native code) add the floats in another "
        'order, and float addition is not associative, so the last bits change. The browser computes '
        'in float32, not float16 (a), and 1e-7 is far below the 1e-4 the course allows (b).')),
    Question('q4', "What should the browser's outputs of the int8 model be compared with?", {
        'a': 'ORT in Python on the same int8 file',
        'b': 'The fp32 PyTorch model, within 1e-4',
        'c': 'Nothing: int8 outputs change on every run',
    }, answer='a', why=(
        'Compare like with like: the same int8 file in both runtimes (same predicted digits, '
        'probabilities very close). Against fp32 (b) the int8 rounding alone exceeds 1e-4, and int8 '
        'results are deterministic (c).')),
    Question('q5', 'Why is the division by 16 inside the model instead of in app.js?', {
        'a': 'ORT Web cannot take uint8 inputs at all',
        'b': 'So page and Python cannot preprocess differently',
        'c': 'JavaScript cannot divide integers exactly',
    }, answer='b', why=(
        'The model takes the raw uint8 pixels and divides by 16 itself, so no copy of the '
        'preprocessing can drift. ORT Web takes uint8 inputs fine (a), and JavaScript divides exactly '
        'enough (c).')),
    Question('q6', "When is it worth trying the WebGPU execution provider (executionProviders: ['webgpu', 'wasm'])?", {
        'a': 'Always: a GPU beats WebAssembly on any model',
        'b': 'Never: WebGPU only exists in Node.js',
        'c': "For big models with 'wasm' as the fallback",
    }, answer='c', why=(
        'Uploading inputs and downloading outputs has a fixed cost that a tiny CNN never earns back; '
        "keep 'wasm' after 'webgpu' so browsers without WebGPU still run. A GPU is not always faster "
        '(a), and WebGPU is a browser API (b).')),
])
