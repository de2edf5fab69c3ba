"""Blind corpus round 14, lesson 08 (written without seeing the judges).

Truths relied on (onnxruntime-web 1.30.0 under node_modules, read in ort.wasm.mjs and the min/bundle files, and
measured: 65 pages in headless Chromium with WebGPU, each fetch of /ort/* recorded, on this machine):
- `resolveBackendAndExecutionProviders`: `executionProviders || []`; an EMPTY list is the same as unset (all the
  entry's backends of priority >= 0: webgl is -10, so ort.webgl.min.mjs never starts a session: None for it); a listed
  provider the entry lacks is dropped with a warning, the session starts if one is left (["webgpu", "wasm"] on
  ort.wasm.min.mjs works; ["webgpu"] there -> None).
- `importWasmModule`: a bundle uses its embedded .mjs unless `wasmPaths.mjs` or a string prefix is set (same-origin
  entry); `{"wasm": url}` alone keeps the embedded one. The .wasm comes from `wasmPaths.wasm`, else prefix + name,
  else beside the `mjs` override, else beside the .mjs/bundle (import.meta.url).
- Threads never change the files: pthread workers are `new Worker(new URL(import.meta.url))` (the same .mjs, or the
  bundle itself); no isolation just falls back to one thread with a warning (measured: same fetches, session ok).
- The entry itself is always fetched (the page imports it from its own server).

Ambiguities found in the prompt (08.ship):
- `threads` and `isolated` never change the answer: pure distractors (a judge may think threads add the .mjs).
- A dict URL's FILE NAME decides what is fetched (`wasmPaths.wasm` is used as is for any file the loader asks for):
  a dict naming another build's file, or a renamed file / a query string (`...wasm?v=1` is fetched as such) is not
  excluded by "a dict of such URLs". Measured: ort.wasm.min.mjs + {"wasm": ".../ort-wasm-simd-threaded.jsep.wasm"}
  fetches that file and fails (LinkError -> None); ort.min.mjs + {"mjs": ".../ort-wasm-simd-threaded.mjs"} starts a
  wasm session on the plain build (but the webgpu provider then fails: "Failed to initialize JSEP").
- Return form: ship_call turns an empty collection into None and keeps names or paths; anything that is not a
  set/list/tuple (an object with a hostile __eq__, a generator, a dict) is passed through to the comparison as is.
- "in a browser with WebGPU": the JSPI entries also need WebAssembly JSPI ("Suspending" in WebAssembly), which the
  prompt does not promise (this Chromium has it).
"""
from corpus import Right, Wrong


# ---------------------------------------------------------------------------------------------------- Right

def right_by_name_rules(entry, providers, wasm_paths, threads, isolated):
    """No table: the build and providers follow from the entry's name; URLs parsed with urllib."""
    from posixpath import basename
    from urllib.parse import urlsplit

    flavour = entry[len("ort."):].split(".min.mjs")[0].replace(".bundle", "")  # wasm, webgpu, jspi, all, webgl, ""
    if flavour == "webgl":
        return None  # webgl only, and webgl is never picked by default nor listed here
    suffix = {"wasm": "", "webgpu": ".asyncify", "jspi": ".jspi"}.get(flavour, ".jsep")
    has = {"wasm"} if flavour == "wasm" else {"wasm", "webgpu"}
    if providers and not has.intersection(providers):
        return None
    build = "ort-wasm-simd-threaded" + suffix
    mjs_url = wasm_url = prefix = None
    if isinstance(wasm_paths, str):
        prefix = wasm_paths
    elif isinstance(wasm_paths, dict):
        mjs_url, wasm_url = wasm_paths.get("mjs"), wasm_paths.get("wasm")
    files = {entry}
    mjs_name = basename(urlsplit(mjs_url).path) if mjs_url else build + ".mjs"
    if ".bundle." not in entry or mjs_url or prefix:
        files.add(mjs_name)
    if wasm_url:
        files.add(basename(urlsplit(wasm_url).path))
    else:
        files.add(mjs_name[: -len(".mjs")] + ".wasm")  # the .wasm the imported .mjs asks for
    return files


def right_table_paths(entry, providers, wasm_paths, threads, isolated):
    """With labkit.web.ENTRY_POINTS; returns sorted paths under ort/ (names or paths are both allowed)."""
    from labkit import web

    build, eps = web.ENTRY_POINTS[entry]
    if build is None:
        return None
    wanted = list(providers or [])
    if wanted and all(p not in eps for p in wanted):
        return None
    wp = wasm_paths if isinstance(wasm_paths, dict) else {}
    out = ["ort/" + entry]
    embedded = ".bundle." in entry and not isinstance(wasm_paths, str) and not wp.get("mjs")
    if not embedded:
        out.append("ort/" + (wp["mjs"].rsplit("/", 1)[-1] if wp.get("mjs") else build + ".mjs"))
    if wp.get("wasm"):
        out.append("ort/" + wp["wasm"].rsplit("/", 1)[-1])
    elif wp.get("mjs"):
        out.append("ort/" + wp["mjs"].rsplit("/", 1)[-1].removesuffix(".mjs") + ".wasm")
    else:
        out.append(f"ort/{build}.wasm")
    return sorted(out)


def right_empty_for_none(entry, providers, wasm_paths, threads, isolated):
    """A loop over the entry's dist files; an empty frozenset when nothing starts (the check maps it to None)."""
    import re

    from labkit import web

    dist = web.ort_web_dir()
    text = (dist / entry).read_text("utf-8")
    builds = sorted(set(re.findall(r"ort-wasm-simd-threaded(?:\.\w+)?(?=\.mjs)", text)))
    if len(builds) != 1:  # ort.webgl: no WebAssembly build at all
        return frozenset()
    build = builds[0]
    offered = ("wasm",) if build == "ort-wasm-simd-threaded" else ("webgpu", "wasm")
    if providers:
        usable = False
        for p in providers:
            usable = usable or p in offered
        if not usable:
            return frozenset()
    names = [entry]
    if isinstance(wasm_paths, dict) and "mjs" in wasm_paths:
        mjs = wasm_paths["mjs"].split("/")[-1]
        names.append(mjs)
    elif isinstance(wasm_paths, str) or "bundle" not in entry:
        mjs = build + ".mjs"
        names.append(mjs)
    else:
        mjs = build + ".mjs"  # carried inside the bundle
    if isinstance(wasm_paths, dict) and "wasm" in wasm_paths:
        names.append(wasm_paths["wasm"].split("/")[-1])
    else:
        names.append(mjs.replace(".mjs", ".wasm"))
    assert all((dist / n).is_file() for n in names), names
    return frozenset(names)


# ---------------------------------------------------------------------------------------------------- Wrong

def wrong_threads_fetch_mjs(entry, providers, wasm_paths, threads, isolated):
    """Believes a bundle's worker threads import the separate .mjs: adds it when threads really run."""
    from labkit.web import ENTRY_POINTS

    build, eps = ENTRY_POINTS[entry]
    if build is None or (providers and not set(providers) & set(eps)):
        return None
    wp = wasm_paths if isinstance(wasm_paths, dict) else {}
    files = {entry, wp["wasm"].rsplit("/", 1)[-1] if "wasm" in wp else build + ".wasm"}
    bundle = ".bundle." in entry
    real_threads = isinstance(threads, (int, float)) and not isinstance(threads, bool) and threads > 1 and isolated
    if not bundle or isinstance(wasm_paths, str) or "mjs" in wp or real_threads:
        files.add(wp["mjs"].rsplit("/", 1)[-1] if "mjs" in wp else build + ".mjs")
    return files


def wrong_bundle_never_mjs(entry, providers, wasm_paths, threads, isolated):
    """A bundle carries its .mjs, full stop (forgets that a prefix or an mjs URL makes it import one)."""
    from labkit.web import ENTRY_POINTS

    build, eps = ENTRY_POINTS[entry]
    if build is None or (providers and not set(providers) & set(eps)):
        return None
    wp = wasm_paths if isinstance(wasm_paths, dict) else {}
    files = {entry, wp["wasm"].rsplit("/", 1)[-1] if "wasm" in wp else build + ".wasm"}
    if ".bundle." not in entry:
        files.add(wp["mjs"].rsplit("/", 1)[-1] if "mjs" in wp else build + ".mjs")
    return files


def wrong_any_wasmpaths_imports_mjs(entry, providers, wasm_paths, threads, isolated):
    """Any wasmPaths (even {"wasm": url} alone) makes a bundle import the .mjs."""
    from labkit.web import ENTRY_POINTS

    build, eps = ENTRY_POINTS[entry]
    if build is None or (providers and not set(providers) & set(eps)):
        return None
    wp = wasm_paths if isinstance(wasm_paths, dict) else {}
    files = {entry, wp["wasm"].rsplit("/", 1)[-1] if "wasm" in wp else build + ".wasm"}
    if ".bundle." not in entry or wasm_paths is not None:
        files.add(wp["mjs"].rsplit("/", 1)[-1] if "mjs" in wp else build + ".mjs")
    return files


def wrong_providers_ignored(entry, providers, wasm_paths, threads, isolated):
    """Never checks the provider list: ["webgpu"] on the wasm-only entry still 'works'."""
    from labkit.web import ENTRY_POINTS

    build, _ = ENTRY_POINTS[entry]
    if build is None:
        return None
    wp = wasm_paths if isinstance(wasm_paths, dict) else {}
    files = {entry, wp["wasm"].rsplit("/", 1)[-1] if "wasm" in wp else build + ".wasm"}
    if ".bundle." not in entry or isinstance(wasm_paths, str) or "mjs" in wp:
        files.add(wp["mjs"].rsplit("/", 1)[-1] if "mjs" in wp else build + ".mjs")
    return files


def wrong_empty_list_no_session(entry, providers, wasm_paths, threads, isolated):
    """`executionProviders: []` read as 'no provider at all' -> None (ORT Web treats [] like unset)."""
    from labkit.web import ENTRY_POINTS

    build, eps = ENTRY_POINTS[entry]
    chosen = [p for p in eps if p != "webgl"] if providers is None else [p for p in providers if p in eps]
    if build is None or not chosen:
        return None
    wp = wasm_paths if isinstance(wasm_paths, dict) else {}
    files = {entry, wp["wasm"].rsplit("/", 1)[-1] if "wasm" in wp else build + ".wasm"}
    if ".bundle." not in entry or isinstance(wasm_paths, str) or "mjs" in wp:
        files.add(wp["mjs"].rsplit("/", 1)[-1] if "mjs" in wp else build + ".mjs")
    return files


def wrong_all_providers_required(entry, providers, wasm_paths, threads, isolated):
    """Every listed provider must exist, else None (ORT Web drops the missing ones with a warning)."""
    from labkit.web import ENTRY_POINTS

    build, eps = ENTRY_POINTS[entry]
    if build is None or (providers and not set(providers) <= set(eps)):
        return None
    wp = wasm_paths if isinstance(wasm_paths, dict) else {}
    files = {entry, wp["wasm"].rsplit("/", 1)[-1] if "wasm" in wp else build + ".wasm"}
    if ".bundle." not in entry or isinstance(wasm_paths, str) or "mjs" in wp:
        files.add(wp["mjs"].rsplit("/", 1)[-1] if "mjs" in wp else build + ".mjs")
    return files


def wrong_webgl_entry_alone(entry, providers, wasm_paths, threads, isolated):
    """ort.webgl has no WebAssembly, so 'just the entry' (but webgl is never chosen: no session)."""
    from labkit.web import ENTRY_POINTS

    build, eps = ENTRY_POINTS[entry]
    if build is None:
        return {entry}
    if providers and not set(providers) & set(eps):
        return None
    wp = wasm_paths if isinstance(wasm_paths, dict) else {}
    files = {entry, wp["wasm"].rsplit("/", 1)[-1] if "wasm" in wp else build + ".wasm"}
    if ".bundle." not in entry or isinstance(wasm_paths, str) or "mjs" in wp:
        files.add(wp["mjs"].rsplit("/", 1)[-1] if "mjs" in wp else build + ".mjs")
    return files


def wrong_entry_forgotten(entry, providers, wasm_paths, threads, isolated):
    """Lists the runtime's files only: the entry the page imports is a file of dist/ too."""
    from labkit.web import ENTRY_POINTS

    build, eps = ENTRY_POINTS[entry]
    if build is None or (providers and not set(providers) & set(eps)):
        return None
    wp = wasm_paths if isinstance(wasm_paths, dict) else {}
    files = {wp["wasm"].rsplit("/", 1)[-1] if "wasm" in wp else build + ".wasm"}
    if ".bundle." not in entry or isinstance(wasm_paths, str) or "mjs" in wp:
        files.add(wp["mjs"].rsplit("/", 1)[-1] if "mjs" in wp else build + ".mjs")
    return files


def wrong_plain_build_always(entry, providers, wasm_paths, threads, isolated):
    """Always the plain ort-wasm-simd-threaded build, whichever entry (as the lesson's page ships)."""
    from labkit.web import ENTRY_POINTS

    build, eps = ENTRY_POINTS[entry]
    if build is None or (providers and not set(providers) & set(eps)):
        return None
    build = "ort-wasm-simd-threaded"
    wp = wasm_paths if isinstance(wasm_paths, dict) else {}
    files = {entry, wp["wasm"].rsplit("/", 1)[-1] if "wasm" in wp else build + ".wasm"}
    if ".bundle." not in entry or isinstance(wasm_paths, str) or "mjs" in wp:
        files.add(wp["mjs"].rsplit("/", 1)[-1] if "mjs" in wp else build + ".mjs")
    return files


def wrong_isolation_required(entry, providers, wasm_paths, threads, isolated):
    """Thinks asking for threads on a page that is not cross-origin isolated fails the session (it falls back to 1)."""
    from labkit.web import ENTRY_POINTS

    build, eps = ENTRY_POINTS[entry]
    if build is None or (providers and not set(providers) & set(eps)):
        return None
    if isinstance(threads, (int, float)) and not isinstance(threads, bool) and threads > 1 and not isolated:
        return None
    wp = wasm_paths if isinstance(wasm_paths, dict) else {}
    files = {entry, wp["wasm"].rsplit("/", 1)[-1] if "wasm" in wp else build + ".wasm"}
    if ".bundle." not in entry or isinstance(wasm_paths, str) or "mjs" in wp:
        files.add(wp["mjs"].rsplit("/", 1)[-1] if "mjs" in wp else build + ".mjs")
    return files


def wrong_mjs_override_wasm_default(entry, providers, wasm_paths, threads, isolated):
    """With {"mjs": url} on a bundle, thinks the .wasm still comes from beside the bundle, and that the embedded
    module stays in use (no .mjs fetched)."""
    from labkit.web import ENTRY_POINTS

    build, eps = ENTRY_POINTS[entry]
    if build is None or (providers and not set(providers) & set(eps)):
        return None
    wp = wasm_paths if isinstance(wasm_paths, dict) else {}
    files = {entry, wp["wasm"].rsplit("/", 1)[-1] if "wasm" in wp else build + ".wasm"}
    if ".bundle." not in entry or isinstance(wasm_paths, str):
        files.add(wp["mjs"].rsplit("/", 1)[-1] if "mjs" in wp else build + ".mjs")
    return files


# ---------------------------------------------------------------------------------------------------- shortcuts

def shortcut_lesson_files(entry, providers, wasm_paths, threads, isolated):
    """The three files the lesson's site copies (labkit.web.ORT_FILES), whatever the page."""
    from labkit import web

    return set(web.ORT_FILES)


def shortcut_whole_dist(entry, providers, wasm_paths, threads, isolated):
    """Ship all of dist/ (maps left out): the page surely finds what it needs."""
    from labkit import web

    return {p.name for p in web.ort_web_dir().iterdir() if not p.name.endswith(".map")}


def shortcut_caller_frames(entry, providers, wasm_paths, threads, isolated):
    """Looks up the call stack for a collection of dist file names (an expected answer), else the lesson's three."""
    import inspect

    frame = inspect.currentframe().f_back
    while frame is not None:
        for name, value in list(frame.f_locals.items()):
            if (name != "out" and isinstance(value, (set, frozenset, list)) and value and entry in value
                    and all(isinstance(v, str) and v.startswith("ort") for v in value)):
                return set(value)
        frame = frame.f_back
    return {"ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm"}


def shortcut_agreeable(entry, providers, wasm_paths, threads, isolated):
    """Not a set: an object equal to anything (the check's normaliser only rewrites sets, lists and tuples)."""

    class Agreeable:
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        def __iter__(self):
            return iter(())

        def __len__(self):
            return 0

        def __contains__(self, item):
            return True

        __hash__ = object.__hash__

    return Agreeable()


CORPUS = {"08.ship": [
    Right("blind14-ship-name-rules", answer=right_by_name_rules),
    Right("blind14-ship-table-paths", answer=right_table_paths),
    Right("blind14-ship-empty-for-none", answer=right_empty_for_none),
    Wrong("blind14-ship-threads-fetch-mjs", answer=wrong_threads_fetch_mjs),
    Wrong("blind14-ship-bundle-never-mjs", answer=wrong_bundle_never_mjs),
    Wrong("blind14-ship-any-wasmpaths-imports-mjs", answer=wrong_any_wasmpaths_imports_mjs),
    Wrong("blind14-ship-providers-ignored", answer=wrong_providers_ignored),
    Wrong("blind14-ship-empty-list-no-session", answer=wrong_empty_list_no_session),
    Wrong("blind14-ship-all-providers-required", answer=wrong_all_providers_required),
    Wrong("blind14-ship-webgl-entry-alone", answer=wrong_webgl_entry_alone),
    Wrong("blind14-ship-entry-forgotten", answer=wrong_entry_forgotten),
    Wrong("blind14-ship-plain-build-always", answer=wrong_plain_build_always),
    Wrong("blind14-ship-isolation-required", answer=wrong_isolation_required),
    Wrong("blind14-ship-mjs-override-ignored", answer=wrong_mjs_override_wasm_default),
    Wrong("blind14-ship-lesson-files", answer=shortcut_lesson_files, skipped_skill=True),
    Wrong("blind14-ship-whole-dist", answer=shortcut_whole_dist, skipped_skill=True),
    Wrong("blind14-ship-caller-frames", answer=shortcut_caller_frames, skipped_skill=True),
    Wrong("blind14-ship-agreeable-object", answer=shortcut_agreeable, skipped_skill=True),
]}
