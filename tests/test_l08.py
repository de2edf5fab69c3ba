"""Lesson 08: precise messages for the corpus's wrong answers (tests/corpus/l08.py), what the test
inputs catch, the judges' rules against the installed ONNX Runtime Web (08.ship's also against the requests
headless Chromium makes), hostile answers, the grader's round trip. (Right/wrong scoring and the quiz's
balance: tests/test_corpus.py.)"""
from __future__ import annotations

import numpy as np
import pytest

from labkit import plain
from labkit.checks import collect_answer, evaluate, get, judge_saved
import labkit_judges.l08 as l08

from corpus import l08 as corpus


def messages(r):
    return " ".join(t.message for t in r.tests) + " " + r.message


def _entry(id, name):
    return next(e for e in corpus.CORPUS[id] if e.name == name)


@pytest.mark.parametrize("id, name, text", [
    ("08.rgba_alpha", "red channel", "red channel"),
    ("08.rgba_alpha", "every 4th byte from 0", "red channel"),
    ("08.rgba_alpha", "transposed", "rows and columns swapped"),
    ("08.rgba_alpha", "inverted", "inverted"),
    ("08.rgba_alpha", "scaled to 0..1", "not a fraction"),
    ("08.rgba_alpha", "ink mask", "not a fraction"),
    ("08.threads", "ignores isolation", "no SharedArrayBuffer"),
    ("08.threads", "default = all cores", "min(4, ceil(cores / 2))"),
    ("08.web_model", "the export as is (notes with source paths)", "pkg.torch.onnx"),
    ("08.web_model", "node notes stripped, graph notes left", "the graph's doc_string/metadata_props"),
    ("08.web_model", "the external-data file handed in", "keeps its data in another file"),
    ("08.web_model", "stripped, weights still in the .data file", "keeps its data in another file"),
    ("08.web_model", "the int8 model", "an int8 model?"),
    ("08.web_model", "other weights", "largest difference"),
    ("08.web_model", "float input (preprocessing not baked in)", "the page feeds one uint8 input"),
    ("08.ship", "the .mjs forgotten next to the .wasm", "which then fetches the .wasm"),
    ("08.ship", "every file of dist/", "the whole of dist/"),
    ("08.ship", "webgpu in the providers means the jsep build", "whatever the providers, so the entry decides"),
    ("08.ship", "the wasm provider means the plain build", "is another build"),
    ("08.ship", "a bundle never imports the .mjs", "makes even a bundle import"),
    ("08.ship", "a bundle imports its .mjs too", "the bundle carries"),
    ("08.ship", "any wasmPaths makes a bundle import the .mjs", "imports none when wasmPaths is the .wasm URL alone"),
    ("08.ship", "the entry itself left out", "the page imports"),
    ("08.ship", "source maps shipped too", "developer tools only"),
    ("08.ship", "providers ignored", "InferenceSession.create fails whatever the server sends"),
    ("08.ship", "workers need the .mjs (threads on a bundle)", "Web Workers import the bundle again"),
    ("08.ship", "a worker script for threads", "one threaded build serves every page"),
    ("08.ship", "unset providers fall back to webgl", "but webgl (its priority is negative)"),
])
def test_wrong_answers_get_precise_messages(id, name, text, tmp_path):
    r = evaluate(get(id), _entry(id, name).build(tmp_path))
    assert text in messages(r), messages(r)


def test_rgba_alpha_cases_catch_what_they_should():
    cases = l08._alpha_cases(0)
    assert any(w != h for _, w, h in cases) and any(w == h for _, w, h in cases)
    for rgba, w, h in cases:
        assert rgba.dtype == np.uint8 and rgba.shape == (4 * w * h,)
        px = rgba.reshape(h, w, 4)
        assert all(not np.array_equal(px[..., c], px[..., 3]) for c in range(3))  # channels differ
    assert not np.array_equal(l08._alpha_cases(0)[0][0], l08._alpha_cases(1)[0][0])  # the grader's seed differs


def test_threads_reference_matches_the_corpus_reference():
    for args in l08._thread_cases(5):
        assert corpus.threads_ref(*args) == l08.reference_threads(*args)


def test_threads_reference_follows_the_installed_source():
    """The judge's rule is what ort.wasm.mjs of the pinned onnxruntime-web does (skipped when it is not installed)."""
    from labkit import web

    try:
        default = web.ort_web_source('typeof env2.wasm.numThreads !== "number"', 8)
        fallback = web.ort_web_source("if (numThreads > 1 && !multiThreadSupported)", 11)
    except web.WebSetupError as e:
        pytest.skip(str(e))
    assert "Math.min(4, Math.ceil((numCpuLogicalCores || 1) / 2))" in default
    assert "!self.crossOriginIsolated" in default and "env2.wasm.numThreads = 1;" in default
    assert "flags.numThreads = numThreads = 1;" in fallback


@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), ("artifacts/web/nothing.onnx", "error"), (b"not onnx", "failed"), (42, "error"),
    (b"", "failed"),
])
def test_web_model_hostile(hostile, status):
    r = evaluate(get("08.web_model"), hostile)
    assert r.status == status and r.points == 0, r


# ================================================================ hostile function answers


def stub(*args):
    raise NotImplementedError


@pytest.mark.parametrize("id", ["08.rgba_alpha", "08.threads", "08.ship"])
@pytest.mark.parametrize("hostile, status", [
    (None, "not_attempted"), (stub, "not_attempted"), ("f", "error"),
    (lambda *a: 1 / 0, "failed"), (lambda *a: float("nan"), "failed"), (lambda *a: object(), "failed"),
    (lambda *a: "4", "failed"), (lambda *a: True, "failed"),
])
def test_function_exercises_hostile(id, hostile, status):
    r = evaluate(get(id), hostile)
    assert r.status == status and r.points == 0, r


def test_quiz_hostile():
    ex = get("08.quiz")
    assert evaluate(ex, {k: None for k in QUIZ}).status == "not_attempted"
    assert evaluate(ex, {"q1": 3}).points == 0
    assert evaluate(ex, ["b"]).points == 0



QUIZ = {"q1": "b", "q2": "a", "q3": "c", "q4": "a", "q5": "b", "q6": "c"}


def test_answers_survive_the_grader_round_trip(tmp_path):
    ref = corpus.web_model("ref")(tmp_path)
    for id, answer in (("08.rgba_alpha", corpus.alpha_ref), ("08.threads", corpus.threads_ref), ("08.web_model", ref),
                       ("08.ship", corpus.ship_ref), ("08.quiz", QUIZ)):
        ex = get(id)
        plain.save(collect_answer(ex, answer, 7), tmp_path / id)
        assert judge_saved(ex, tmp_path / id, 7).status == "passed", id
    ex = get("08.web_model")
    plain.save(collect_answer(ex, corpus.web_model("int8")(tmp_path), 7), tmp_path / "int8")
    assert judge_saved(ex, tmp_path / "int8", 7).points <= ex.points / 2


def test_quiz_explanations_speak_to_every_distractor():
    from labkit.checks import judge_spec

    key = judge_spec("08.quiz").key
    for q in get("08.quiz").questions:
        right, explain = key[q.key]
        assert all(f"({k})" in explain for k in q.options if k != right), (q.key, explain)


def test_the_learners_check_fails_an_answer_that_replays_the_notebooks_values():
    """The panel runs a function answer on new inputs too (labkit.checks.evaluate_unseen): values learnt by
    heart from the notebook's cases pass there no more than in the grader."""
    from labkit.checks import evaluate, evaluate_unseen, get
    from labkit_judges.l08 import _thread_cases, reference_threads

    seen = {(repr(r), iso, c): reference_threads(r, iso, c) for r, iso, c in _thread_cases(0)}

    def replay(requested, isolated, cores):
        return seen.get((repr(requested), isolated, cores), 1)

    ex = get("08.threads")
    assert evaluate(ex, replay).status == "passed"
    r = evaluate_unseen(ex, replay, seed=12345)
    assert r.status == "failed" and r.message.startswith("On new test inputs (seed 12345)"), r
    assert evaluate_unseen(ex, reference_threads, seed=12345).status == "passed"


# ================================================================ 08.ship: the files a page fetches


@pytest.mark.parametrize("seed", [0, 1, 2, 20250, 987654])
def test_ship_reference_passes_and_every_test_has_its_pages(seed):
    """The notebook's answer passes on several seeds; each test gets pages of its kind, and the cases hold what
    a shortcut could miss (both forms of a bundle, pages with no session, threads that start)."""
    plan = l08._ship_plan(seed)
    assert evaluate(get("08.ship"), corpus.ship_ref, seed).status == "passed"
    assert l08._ship_cases(seed) == [case for _, case in plan]
    by_test = {name: [case for test, case in plan if test == name] for name in l08.SHIP_TESTS}
    assert all(by_test.values())
    bundles = by_test[l08.SHIP_TESTS[1]]
    assert {len(l08.reference_files(*c)) for c in bundles} == {2, 3}  # the .mjs inside, and imported anyway
    assert any(l08.reference_files(*c) is None for c in by_test[l08.SHIP_TESTS[2]])
    assert all(c[3] > 1 and c[4] for c in by_test[l08.SHIP_TESTS[3]])
    assert any(".bundle." in c[0] and len(l08.reference_files(*c)) == 2 for c in by_test[l08.SHIP_TESTS[3]])
    assert all(f in l08.DIST_FILES for c in l08._ship_cases(seed) for f in l08.reference_files(*c) or ())
    assert l08._ship_cases(seed) != l08._ship_cases(seed + 1)


@pytest.mark.parametrize("form", [set, frozenset, list, tuple, sorted])
def test_ship_accepts_every_form_the_prompt_allows(form):
    def answer(*case):
        files = corpus.ship_ref(*case)
        return None if files is None else form(files)

    assert evaluate(get("08.ship"), answer).status == "passed"


def test_ship_empty_set_counts_as_none_and_names_are_checked():
    def empty(*case):
        return corpus.ship_ref(*case) or set()

    assert evaluate(get("08.ship"), empty).status == "passed"
    r = evaluate(get("08.ship"), lambda *case: [1, 2])
    assert r.points == 0 and "holding an int" in messages(r), messages(r)


def _dist_or_skip():
    from labkit import web

    try:
        return web.ort_web_dir()
    except web.WebSetupError as e:
        pytest.skip(str(e))


def _registered(source: str) -> list[str]:
    """The backends a readable entry registers: its `web/lib/index.ts` part, where the build's flags are
    `if (true)` / `if (false)` blocks around `registerBackend("name", ...)`."""
    import re

    start = source.index("// web/lib/index.ts")
    active, names = [], []
    for line in source[start:].splitlines():
        line = line.strip()
        if re.fullmatch(r"if \((true|false)\) \{", line):
            active.append(line == "if (true) {")
        elif line == "}" and active:
            active.pop()
        elif all(active) and (m := re.match(r'registerBackend\("(\w+)"', line)):
            names.append(m.group(1))
        if line.startswith("export {"):
            break
    return names


def test_ship_facts_follow_the_installed_package():
    """web.ENTRY_POINTS and the judge's dist/ listing are the installed onnxruntime-web: each entry's build (the one
    `ort-wasm-simd-threaded*.mjs` its code names), the providers its readable twin registers (cpu, webnn left
    out), and the source lines that decide when a bundle imports its .mjs."""
    from labkit import web

    dist = _dist_or_skip()
    assert {p.name for p in dist.iterdir()} == l08.DIST_FILES
    assert len(web.entry_point_rows()) == len(web.ENTRY_POINTS)  # raises when a file names another build
    for entry, (build, providers) in web.ENTRY_POINTS.items():
        twin = (dist / entry.replace(".bundle.min.mjs", ".mjs").replace(".min.mjs", ".mjs")).read_text("utf-8")
        assert set(_registered(twin)) - {"cpu", "webnn"} == set(providers), (entry, _registered(twin))
        text = (dist / entry).read_text("utf-8")
        assert (".bundle." in entry) == (f"{build}.wasm" in text if build else False), entry  # the .mjs inside
    assert "let useEmbeddedModule = embeddedWasmModule && !(urlOverride || prefixOverride);" in \
        web.ort_web_source("importWasmModule = async", 2)
    assert "mjsPathOverride,\n  wasmPrefixOverride," in web.ort_web_source("const wasmPaths = flags.wasmPaths", 10)


def _key_pages():
    """The pages the lesson's rule turns on, then every fourth page of the notebook's cases (the browser tier's
    time: about 2.6 s a page; all 26 cases were checked once, 93 s)."""
    wasm = {"wasm": "https://lab.example/ort/ort-wasm-simd-threaded.wasm"}
    pages = [
        ("ort.wasm.min.mjs", ["wasm"], "https://lab.example/ort/", 1, True),          # the lesson's own page
        ("ort.wasm.bundle.min.mjs", ["wasm"], None, 1, True),     # the .mjs inside
        ("ort.wasm.bundle.min.mjs", ["wasm"], "https://lab.example/ort/", 1, True),   # a prefix: imported anyway
        ("ort.wasm.bundle.min.mjs", ["wasm"], wasm, 4, True),     # the .wasm alone: inside, with threads
        ("ort.min.mjs", ["wasm"], None, 1, True),                 # the JSEP build for a wasm-only page
        ("ort.webgpu.bundle.min.mjs", None, None, 4, True),       # asyncify, workers on the bundle
        ("ort.wasm.min.mjs", ["webgpu", "wasm"], None, 2, False),  # webgpu dropped; threads without isolation
        ("ort.wasm.min.mjs", ["webgpu"], None, 1, True),          # no session
        ("ort.webgl.min.mjs", None, None, 1, True),               # unset: webgl is not tried
    ]
    return pages + l08._ship_cases(0)[::4]


@pytest.mark.browser
@pytest.mark.thorough  # ~35 s of Chromium: it checks the judge against the pinned onnxruntime-web (make test-all)
def test_ship_rule_is_what_chromium_fetches(tmp_path):
    """Each page imports its entry from a folder holding all of dist/, sets its providers, wasmPaths (rebased on
    that folder), numThreads, and is served with or without COOP/COEP; the server logs every request. The files
    it fetched are the judge's, and its session starts exactly when the judge says (a page that lists only webgpu
    fails here, where headless Chromium has no GPU adapter, after fetching the same files)."""
    import http.server
    import json
    import threading
    from functools import partial

    from browser_util import CHROMIUM_ARGS, chromium

    dist = _dist_or_skip()
    if chromium() is None:
        pytest.skip("Chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed")
    import onnx
    from onnx import TensorProto, helper

    (tmp_path / "dist").symlink_to(dist, target_is_directory=True)
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "model.onnx")
    log: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript",
                          ".wasm": "application/wasm"}

        def end_headers(self):
            if self.server.isolate:
                self.send_header("Cross-Origin-Opener-Policy", "same-origin")
                self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            self.send_header("Cache-Control", "no-store")
            super().end_headers()

        def log_message(self, *args):
            pass

        def do_GET(self):
            log.append(self.path)
            super().do_GET()

    servers = {}
    for isolate in (True, False):
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(tmp_path)))
        httpd.isolate = isolate
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers[isolate] = httpd

    def js_paths(wasm_paths):
        at = "new URL('dist/', document.baseURI).href"
        if wasm_paths is None:
            return ""
        if isinstance(wasm_paths, str):
            return f"ort.env.wasm.wasmPaths = {at};"
        urls = ", ".join(f"{k}: {at} + {json.dumps(v.rsplit('/', 1)[-1])}" for k, v in wasm_paths.items())
        return f"ort.env.wasm.wasmPaths = {{{urls}}};"

    pages = _key_pages()
    try:
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS, headless=True)
            for i, (entry, providers, wasm_paths, threads, isolated) in enumerate(pages):
                (tmp_path / f"p{i}.html").write_text(f"""<!doctype html><script type="module">
import * as ort from './dist/{entry}';
{js_paths(wasm_paths)}
ort.env.wasm.numThreads = {threads};
try {{
  const s = await ort.InferenceSession.create('model.onnx',
      {{executionProviders: {json.dumps(providers) if providers is not None else 'undefined'}}});
  const out = await s.run({{x: new ort.Tensor('float32', new Float32Array([-1, 2, -3, 4]), [1, 4])}});
  window.result = 'ok ' + Array.from(out.y.data).join(',');
}} catch (e) {{ window.result = 'error ' + e.message; }}
window.threads = ort.env.wasm.numThreads;
</script>""")
                context = browser.new_context()
                page = context.new_page()
                del log[:]
                page.goto(f"http://127.0.0.1:{servers[isolated].server_address[1]}/p{i}.html")
                page.wait_for_function("() => window.threads !== undefined", timeout=60_000)
                result, used = page.evaluate("() => [window.result, window.threads]")
                page.wait_for_timeout(200)  # late worker requests
                context.close()
                fetched = {p.split("?")[0].rsplit("/", 1)[1] for p in log if p.startswith("/dist/")}
                case = (entry, providers, wasm_paths, threads, isolated)
                want = l08.reference_files(*case)
                webgpu_only = providers == ["webgpu"]
                if want is None:
                    assert result.startswith("error no available backend"), (case, result)
                    assert fetched <= {entry}, (case, fetched)
                    continue
                assert fetched == want, (case, sorted(fetched), sorted(want))
                if not webgpu_only:
                    assert result == "ok 0,2,0,4", (case, result)
                    assert used == (threads if isolated else 1), (case, used)
            browser.close()
    finally:
        for httpd in servers.values():
            httpd.shutdown()
            httpd.server_close()


def test_ship_check_fails_an_answer_that_replays_the_notebooks_pages():
    from labkit.checks import evaluate_unseen

    seen = {repr(case): corpus.ship_ref(*case) for case in l08._ship_cases(0)}

    def replay(*case):
        return seen.get(repr(case), {"ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm"})

    ex = get("08.ship")
    assert evaluate(ex, replay).status == "passed"
    r = evaluate_unseen(ex, replay, seed=12345)
    assert r.status == "failed" and r.message.startswith("On new test inputs (seed 12345)"), r
    assert evaluate_unseen(ex, corpus.ship_ref, seed=12345).status == "passed"
