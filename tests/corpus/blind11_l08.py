"""Blind corpus round 11, lesson 08 (written without seeing the judge).

Truth used here (onnxruntime-web 1.30.0 dist/*.mjs, and checked in Chromium 156 with a real page):
* the entry itself is always fetched; ort.webgl.min.mjs has no webgpu/wasm backend, so it never starts a
  session; a listed provider that the entry lacks is dropped, and if none is left, there's no session (an empty
  or unset list means all the entry's providers except webgl);
* a session that starts fetches <build>.wasm; it imports <build>.mjs unless the entry is a .bundle. one
  and neither wasmPaths.mjs nor a (non-empty) prefix string is set (`embeddedWasmModule &&
  !(urlOverride || prefixOverride)`, and the entry is same-origin);  a {"wasm": ...}-only dict keeps
  the embedded module;
* threads / crossOriginIsolated never change the set: workers import the same .mjs (or the bundle) again,
  and numThreads > 1 without isolation just falls back to one thread;
* the form of the URL matters: the .mjs is loaded with a dynamic import(), so a bare prefix such as "ort/"
  (or "") gives `import("ort/ort-wasm-....mjs")` -> "Failed to resolve module specifier" -> no session;
  a relative {"mjs": "./x.mjs"} without a "wasm" key fails too (`new URL(fileName, mjsPathOverride)` ->
  "Invalid base URL"); a prefix that doesn't end in "/" gives a broken .wasm name (prefix + fileName).
"""
from corpus import Right, Wrong


# ---------------------------------------------------------------------------------------------- right

# R1: follow the loader (initializeWebAssembly -> importWasmModule -> locateFile) step by step, returns a set
def right_follow_loader(entry, providers, wasm_paths, threads, isolated):
    import re
    from labkit import web

    build, has = web.ENTRY_POINTS[entry]
    wanted = list(providers) if providers else [p for p in has if p != "webgl"]
    if build is None or not any(p in has for p in wanted):
        return None                      # every requested provider dropped -> no session

    def absolute(u):                     # what `new URL(u)` accepts: it has a scheme
        return re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", u) is not None

    def importable(u):                   # import() needs a URL or a relative specifier, never a bare one
        return absolute(u) or u.startswith(("/", "./", "../"))

    prefix = wasm_paths if isinstance(wasm_paths, str) else None
    mjs_url = wasm_paths.get("mjs") if isinstance(wasm_paths, dict) else None
    wasm_url = wasm_paths.get("wasm") if isinstance(wasm_paths, dict) else None

    shipped = {entry, build + ".wasm"}
    embedded = ".bundle." in entry and not (mjs_url or prefix)
    if not embedded:
        if mjs_url is not None:
            spec = mjs_url
        elif prefix is not None:
            spec = prefix + build + ".mjs"   # normalizeUrl fails on a relative prefix -> fallbackUrl
        else:
            spec = "./" + build + ".mjs"     # resolved against the entry's own URL
        if not importable(spec):
            return None
        shipped.add(build + ".mjs")
    if not wasm_url:                         # locateFile
        if prefix:
            if not prefix.endswith("/"):
                return None                  # prefix + fileName is not a file of dist/
        elif mjs_url and not absolute(mjs_url):
            return None                      # new URL(fileName, "./x.mjs") -> Invalid base URL
    return shipped


# R2: decision table on (bundle?, override kind), URL kinds read with urllib; returns a sorted list
def right_decision_table(entry, providers, wasm_paths, threads, isolated):
    from urllib.parse import urlsplit
    from labkit import web

    build, eps = web.ENTRY_POINTS[entry]
    usable = set(eps) - {"webgl"} if not providers else set(providers) & set(eps)
    if not build or not usable:
        return None

    def kind(u):
        if u is None:
            return "none"
        if urlsplit(u).scheme:
            return "absolute"
        if u.startswith(("/", "./", "../")):
            return "relative"
        return "bare"

    if isinstance(wasm_paths, str):
        form, mjs_kind, has_wasm = "prefix", kind(wasm_paths), False
    elif isinstance(wasm_paths, dict):
        form, mjs_kind, has_wasm = "dict", kind(wasm_paths.get("mjs")), bool(wasm_paths.get("wasm"))
    else:
        form, mjs_kind, has_wasm = "none", "none", False

    bundle = ".bundle." in entry
    if form == "prefix" and wasm_paths == "":
        if not bundle:
            return None                      # import("ort-wasm-....mjs"): bare specifier
        form, mjs_kind = "none", "none"      # "" is falsy: the bundle keeps its embedded module
    if form == "dict" and not wasm_paths.get("mjs"):
        mjs_kind = "none"

    loads_mjs = not bundle or mjs_kind != "none"
    if loads_mjs and mjs_kind == "bare":
        return None
    if form == "prefix" and not wasm_paths.endswith("/"):
        return None
    if form == "dict" and mjs_kind == "relative" and not has_wasm:
        return None
    names = [entry, build + ".wasm"] + ([build + ".mjs"] if loads_mjs else [])
    return sorted(names)


# R3: a tiny simulation of the page (JS URL rules, import(), fetch, 404s) that records what is fetched
def right_simulate_page(entry, providers, wasm_paths, threads, isolated):
    import re
    from urllib.parse import urljoin, urlsplit
    from labkit import web

    served = {p.name for p in web.ort_web_dir().iterdir()}
    page = "https://site.test/index.html"
    script_src = urljoin(page, entry)            # import.meta.url of the entry
    fetched = [script_src]

    class Fail(Exception):
        pass

    def is_abs(u):
        return bool(re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", u))

    def new_url(u, base=None):                   # JS `new URL(u, base)`
        if is_abs(u):
            return u
        if base is None or not is_abs(base):
            raise Fail("Invalid URL")
        return urljoin(base, u)

    def dyn_import(spec):                        # import(spec) from inside the entry module
        if is_abs(spec):
            url = spec
        elif spec.startswith(("/", "./", "../")):
            url = urljoin(script_src, spec)
        else:
            raise Fail("Failed to resolve module specifier")
        fetched.append(url)
        return url

    build, backends = web.ENTRY_POINTS[entry]
    names = providers if providers else [b for b in backends if b != "webgl"]
    if build is None or not [n for n in names if n in backends]:
        return None

    try:
        prefix = wasm_paths if isinstance(wasm_paths, str) else None
        mjs = wasm_paths.get("mjs") if isinstance(wasm_paths, dict) else None
        wasm = wasm_paths.get("wasm") if isinstance(wasm_paths, dict) else None
        embedded = ".bundle." in entry and not (mjs or prefix)
        if embedded:
            module_url = script_src
        else:
            filename = build + ".mjs"
            url = mjs
            if url is None:
                base = prefix if prefix is not None else script_src
                try:
                    url = new_url(filename, base) if base else new_url(filename)
                except Fail:
                    url = (prefix if prefix is not None else "./") + filename
            module_url = dyn_import(url)
        wasm_name = build + ".wasm"
        if wasm:
            where = wasm
        elif prefix:
            where = prefix + wasm_name
        elif mjs and not mjs.startswith("blob:"):
            where = new_url(wasm_name, mjs)
        else:
            where = urljoin(module_url, wasm_name)   # emscripten's scriptDirectory
        fetched.append(urljoin(page, where))
    except Fail:
        return None
    got = {urlsplit(u).path.rsplit("/", 1)[-1] for u in fetched}
    if not got <= served:
        return None                              # a 404 on the .mjs or the .wasm
    return got


# R4: structural pattern matching on the wasmPaths form; what the bundle embeds decides the .mjs
def right_match_forms(entry, providers, wasm_paths, threads, isolated):
    from labkit import web

    build, offered = web.ENTRY_POINTS[entry]
    requested = providers or [p for p in offered if p != "webgl"]
    if build is None or all(p not in offered for p in requested):
        return None

    def kind(u):
        head = u.split("/", 1)[0]
        if ":" in head and head[0].isalpha():
            return "url"
        return "rel" if u[:1] == "/" or u[:2] == "./" or u[:3] == "../" else "bare"

    mjs_file, wasm_file = f"{build}.mjs", f"{build}.wasm"
    bundle = ".bundle." in entry
    match wasm_paths:
        case None:
            mjs_needed, broken = not bundle, False
        case str() as prefix if prefix == "":
            mjs_needed, broken = not bundle, not bundle
        case str() as prefix:
            mjs_needed = True
            broken = kind(prefix) == "bare" or not prefix.endswith("/")
        case {"mjs": str() as m, **rest} if m:
            mjs_needed = True
            broken = kind(m) == "bare" or (kind(m) == "rel" and not rest.get("wasm"))
        case dict():
            mjs_needed, broken = not bundle, False
        case _:
            raise TypeError(f"wasmPaths {wasm_paths!r}")
    if broken:
        return None
    return {entry, wasm_file} | ({mjs_file} if mjs_needed else set())


# R5: own table of builds written out by hand (no labkit), list result, ignores threads on purpose
def right_own_table(entry, providers, wasm_paths, threads, isolated):
    import re
    builds = {
        "wasm": ("ort-wasm-simd-threaded", {"wasm"}),
        "": ("ort-wasm-simd-threaded.jsep", {"webgpu", "wasm"}),
        "all": ("ort-wasm-simd-threaded.jsep", {"webgl", "webgpu", "wasm"}),
        "webgpu": ("ort-wasm-simd-threaded.asyncify", {"webgpu", "wasm"}),
        "jspi": ("ort-wasm-simd-threaded.jspi", {"webgpu", "wasm"}),
        "webgl": (None, {"webgl"}),
    }
    m = re.fullmatch(r"ort\.(?:(?!bundle\.)(\w+)\.)?(bundle\.)?min\.mjs", entry)
    build, eps = builds[m.group(1) or ""]
    bundle = bool(m.group(2))
    live = (set(providers) if providers else eps - {"webgl"}) & eps
    if build is None or not live:
        return None
    scheme = re.compile(r"^[A-Za-z][\w+.-]*:")
    rel = re.compile(r"^\.{0,2}/")
    pre = wasm_paths if type(wasm_paths) is str else None
    d = wasm_paths if type(wasm_paths) is dict else {}
    out = [entry, build + ".wasm"]
    if not bundle or d.get("mjs") or pre:
        spec = d["mjs"] if d.get("mjs") is not None else ("./" if pre is None else pre) + build + ".mjs"
        if not (scheme.match(spec) or rel.match(spec)):
            return None
        out.append(build + ".mjs")
    if not d.get("wasm"):
        if pre and pre[-1] != "/":
            return None
        if not pre and d.get("mjs") and not scheme.match(d["mjs"]):
            return None
    return out


# ---------------------------------------------------------------------------------------------- wrong
# Each wrong answer keeps the rest of the truth and changes one thing (unless it is a shortcut).

# W1: a bundle "still needs its .mjs on the server" -> always entry + .mjs + .wasm
def wrong_bundle_still_fetches_mjs(entry, providers, wasm_paths, threads, isolated):
    import re
    from labkit import web
    build, has = web.ENTRY_POINTS[entry]
    if build is None or not [p for p in (providers or has) if p in has and p != "webgl"]:
        return None
    prefix = wasm_paths if isinstance(wasm_paths, str) else None
    urls = wasm_paths if isinstance(wasm_paths, dict) else {}
    mjs, wasm = urls.get("mjs"), urls.get("wasm")
    spec = mjs if mjs is not None else ("./" if prefix is None else prefix) + build + ".mjs"
    if not re.match(r"[A-Za-z][\w+.-]*:|\.{0,2}/", spec):
        return None
    if not wasm and ((prefix and not prefix.endswith("/"))
                     or (not prefix and mjs and not re.match(r"[A-Za-z][\w+.-]*:", mjs))):
        return None
    return {entry, build + ".mjs", build + ".wasm"}


# W2: "the bundle carries the .mjs, so it never fetches it" (misses that a prefix / mjs URL switches it off)
def wrong_bundle_ignores_overrides(entry, providers, wasm_paths, threads, isolated):
    import re
    from labkit import web
    build, has = web.ENTRY_POINTS[entry]
    if build is None or not [p for p in (providers or has) if p in has and p != "webgl"]:
        return None
    prefix = wasm_paths if isinstance(wasm_paths, str) else None
    urls = wasm_paths if isinstance(wasm_paths, dict) else {}
    mjs, wasm = urls.get("mjs"), urls.get("wasm")
    files = {entry, build + ".wasm"}
    if ".bundle." not in entry:
        spec = mjs if mjs is not None else ("./" if prefix is None else prefix) + build + ".mjs"
        if not re.match(r"[A-Za-z][\w+.-]*:|\.{0,2}/", spec):
            return None
        files.add(build + ".mjs")
    if not wasm and ((prefix and not prefix.endswith("/"))
                     or (not prefix and mjs and not re.match(r"[A-Za-z][\w+.-]*:", mjs))):
        return None
    return files


# W3: any wasmPaths at all (also a {"wasm": ...}-only dict) makes the bundle import its .mjs
def wrong_any_wasmpaths_unbundles(entry, providers, wasm_paths, threads, isolated):
    import re
    from labkit import web
    build, has = web.ENTRY_POINTS[entry]
    if build is None or not [p for p in (providers or has) if p in has and p != "webgl"]:
        return None
    prefix = wasm_paths if isinstance(wasm_paths, str) else None
    urls = wasm_paths if isinstance(wasm_paths, dict) else {}
    mjs, wasm = urls.get("mjs"), urls.get("wasm")
    files = {entry, build + ".wasm"}
    if ".bundle." not in entry or wasm_paths is not None:
        spec = mjs if mjs is not None else ("./" if prefix is None else prefix) + build + ".mjs"
        if not re.match(r"[A-Za-z][\w+.-]*:|\.{0,2}/", spec):
            return None
        files.add(build + ".mjs")
    if not wasm and ((prefix and not prefix.endswith("/"))
                     or (not prefix and mjs and not re.match(r"[A-Za-z][\w+.-]*:", mjs))):
        return None
    return files


# W4: forgets the entry itself ("the page already has it") -> only the runtime files
def wrong_forgets_entry(entry, providers, wasm_paths, threads, isolated):
    ans = right_follow_loader(entry, providers, wasm_paths, threads, isolated)
    if ans is None:
        return None
    return ans - {entry}


# W5: never None: every provider is assumed to start (ignores what the entry has); webgl entry = itself
def wrong_providers_always_start(entry, providers, wasm_paths, threads, isolated):
    from labkit import web
    build, has = web.ENTRY_POINTS[entry]
    if build is None:
        return {entry}
    fake = [p for p in has if p != "webgl"]    # pretend the providers asked for are available
    ans = right_follow_loader(entry, fake, wasm_paths, threads, isolated)
    return ans if ans is not None else {entry}


# W6: every listed provider must exist, else no session (it's really: drop the missing ones with a warning)
def wrong_all_providers_required(entry, providers, wasm_paths, threads, isolated):
    from labkit import web
    build, has = web.ENTRY_POINTS[entry]
    if providers and any(p not in has for p in providers):
        return None
    return right_follow_loader(entry, providers, wasm_paths, threads, isolated)


# W7: unset providers "include webgl, which is first": ort.all / ort.webgl then run on WebGL with no wasm
def wrong_webgl_picked_when_unset(entry, providers, wasm_paths, threads, isolated):
    from labkit import web
    build, has = web.ENTRY_POINTS[entry]
    if not providers and "webgl" in has:
        return {entry}
    return right_follow_loader(entry, providers, wasm_paths, threads, isolated)


# W8: threads: "each Worker needs the separate .mjs", so a threaded, isolated bundle page also ships it
def wrong_threads_need_separate_mjs(entry, providers, wasm_paths, threads, isolated):
    from labkit import web
    ans = right_follow_loader(entry, providers, wasm_paths, threads, isolated)
    if ans is not None and isolated and (threads is None or threads == 0 or threads > 1):
        ans = ans | {web.ENTRY_POINTS[entry][0] + ".mjs"}
    return ans


# W9: numThreads > 1 without crossOriginIsolated "can't make a SharedArrayBuffer, so no session"
def wrong_no_isolation_no_session(entry, providers, wasm_paths, threads, isolated):
    if threads is not None and threads > 1 and not isolated:
        return None
    return right_follow_loader(entry, providers, wasm_paths, threads, isolated)


# W10: takes every wasmPaths form at face value: bare "ort/" prefixes, relative mjs-only URLs all "work"
def wrong_trusts_every_url_form(entry, providers, wasm_paths, threads, isolated):
    from labkit import web
    build, has = web.ENTRY_POINTS[entry]
    wanted = providers or [p for p in has if p != "webgl"]
    if build is None or not set(wanted) & set(has):
        return None
    files = {entry, build + ".wasm"}
    overrides_mjs = isinstance(wasm_paths, str) or (isinstance(wasm_paths, dict) and "mjs" in wasm_paths)
    if ".bundle." not in entry or overrides_mjs:
        files.add(build + ".mjs")
    return files


# W11: guesses the build's file names from the entry name (ort.webgpu -> ...webgpu, ort.all -> ...all)
def wrong_build_name_from_entry(entry, providers, wasm_paths, threads, isolated):
    from labkit import web
    ans = right_follow_loader(entry, providers, wasm_paths, threads, isolated)
    if ans is None:
        return None
    flavour = entry.split(".")[1]
    guess = "ort-wasm-simd-threaded" + ("" if flavour in ("wasm", "bundle", "min") else "." + flavour)
    real = web.ENTRY_POINTS[entry][0]
    return {entry} | {f.replace(real, guess) for f in ans if f != entry}


# W12: "a bundle has the .wasm inside too": embedded bundle ships only itself; .wasm only if a URL names it
def wrong_bundle_embeds_wasm(entry, providers, wasm_paths, threads, isolated):
    from labkit import web
    ans = right_follow_loader(entry, providers, wasm_paths, threads, isolated)
    if ans is None or ".bundle." not in entry:
        return ans
    build = web.ENTRY_POINTS[entry][0]
    if build + ".mjs" in ans:
        return ans
    has_wasm_url = isinstance(wasm_paths, dict) and wasm_paths.get("wasm")
    return ans if has_wasm_url else {entry}


# W13: reads prefixOverride as "where the .wasm lives": only wasmPaths.mjs un-embeds a bundle
def wrong_prefix_only_moves_wasm(entry, providers, wasm_paths, threads, isolated):
    from labkit import web  # noqa: F401  (as the writer left it)
    ans = right_follow_loader(entry, providers, wasm_paths, threads, isolated)
    if ".bundle." in entry and isinstance(wasm_paths, str):
        if wasm_paths and not wasm_paths.endswith("/"):
            return ans
        return right_follow_loader(entry, providers, None, threads, isolated)
    return ans


# W14: when the session can't start, "the server still sends the entry" -> {entry} instead of None
def wrong_failure_ships_entry(entry, providers, wasm_paths, threads, isolated):
    ans = right_follow_loader(entry, providers, wasm_paths, threads, isolated)
    return {entry} if ans is None else ans


# ---------------------------------------------------------------------------------------------- shortcuts

# S1: ship the whole dist/ directory ("the server serves the folder")
def shortcut_ship_all_of_dist(entry, providers, wasm_paths, threads, isolated):
    from labkit import web
    return {p.name for p in web.ort_web_dir().iterdir()}


# S2: the entry plus every .mjs/.wasm runtime build, whatever the page does
def shortcut_every_runtime(entry, providers, wasm_paths, threads, isolated):
    from labkit import web
    return {entry} | {p.name for p in web.ort_web_dir().iterdir() if p.name.startswith("ort-wasm")}


# S3: always None ("hedge: most odd pages fail")
def shortcut_always_none(entry, providers, wasm_paths, threads, isolated):
    return None


# S4: only the entry, no reasoning about builds at all
def shortcut_entry_only(entry, providers, wasm_paths, threads, isolated):
    return [entry]


# S5: guesses from names: every dist file sharing a dot-separated word with the entry name
def shortcut_name_tokens(entry, providers, wasm_paths, threads, isolated):
    from labkit import web
    words = set(entry.split(".")) - {"ort", "min", "mjs"}
    return {p.name for p in web.ort_web_dir().iterdir()
            if words & set(p.name.replace("-", ".").split("."))} | {entry}


# S6: trick on the checker: an (empty) set that claims to equal / contain / cover anything
def shortcut_equal_to_anything(entry, providers, wasm_paths, threads, isolated):
    class Anything(set):
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        def __le__(self, other):
            return True

        def __ge__(self, other):
            return True

        def __contains__(self, item):
            return True

        def issubset(self, other):
            return True

        def issuperset(self, other):
            return True

        __hash__ = None

    return Anything()


# S7: trick on the checker: look up the caller's frames for an expected answer, else ship everything
def shortcut_scrape_caller_frames(entry, providers, wasm_paths, threads, isolated):
    import inspect
    from labkit import web
    names = {p.name for p in web.ort_web_dir().iterdir()}
    frame = inspect.currentframe().f_back
    while frame is not None:
        for key, value in list(frame.f_locals.items()):
            if isinstance(value, (set, frozenset, list, tuple)) and value and entry in value \
                    and all(isinstance(v, str) and v in names for v in value) and len(value) <= 3:
                return set(value)
            if key in ("expected", "want", "truth", "answer_key") and (value is None or isinstance(value, (set, frozenset, list))):
                return value
        frame = frame.f_back
    return names


# S8: trick on the checker's inputs: answer "entry + .mjs + .wasm" and rewrite the mutable inputs so
# that this answer becomes true if the checker re-reads them (providers -> ["wasm"], dict -> absolute URLs)
def shortcut_rewrite_inputs(entry, providers, wasm_paths, threads, isolated):
    from labkit import web
    build = web.ENTRY_POINTS[entry][0]
    if build is None:
        return None
    if isinstance(providers, list):
        providers[:] = ["wasm"]
    if isinstance(wasm_paths, dict):
        wasm_paths.clear()
        wasm_paths["mjs"] = "https://site.test/" + build + ".mjs"
        wasm_paths["wasm"] = "https://site.test/" + build + ".wasm"
    return {entry, build + ".mjs", build + ".wasm"}


# ---------------------------------------------------------------------------------------------- rule breaks
# Right files, but not in the form the prompt asks for (or with side effects).

# O1: the right names as a tuple (the prompt asks for a set or a list)
def rulebreak_returns_tuple(entry, providers, wasm_paths, threads, isolated):
    ans = right_follow_loader(entry, providers, wasm_paths, threads, isolated)
    return None if ans is None else tuple(sorted(ans))


# O2: the right files as paths into dist/ ("dist/ort.wasm.min.mjs"), not names
def rulebreak_paths_not_names(entry, providers, wasm_paths, threads, isolated):
    from labkit import web
    ans = right_follow_loader(entry, providers, wasm_paths, threads, isolated)
    return None if ans is None else {str(web.ort_web_dir() / n) for n in ans}


# O3: the right answer, but it consumes its inputs (pops the dict, empties the providers list)
def rulebreak_mutates_inputs(entry, providers, wasm_paths, threads, isolated):
    ans = right_follow_loader(entry, providers, wasm_paths, threads, isolated)
    if isinstance(wasm_paths, dict):
        wasm_paths.pop("mjs", None)
        wasm_paths.pop("wasm", None)
    if isinstance(providers, list):
        providers.clear()
    return ans


CORPUS = {"08.ship": [
    Right("blind11-follow-loader", answer=right_follow_loader),
    Right("blind11-decision-table", answer=right_decision_table),
    Right("blind11-simulate-page", answer=right_simulate_page),
    Right("blind11-match-forms", answer=right_match_forms),
    Right("blind11-own-table", answer=right_own_table),

    Wrong("blind11-bundle-still-fetches-mjs", answer=wrong_bundle_still_fetches_mjs),
    Wrong("blind11-bundle-ignores-overrides", answer=wrong_bundle_ignores_overrides),
    Wrong("blind11-any-wasmpaths-unbundles", answer=wrong_any_wasmpaths_unbundles),
    Wrong("blind11-forgets-entry", answer=wrong_forgets_entry),
    Wrong("blind11-providers-always-start", answer=wrong_providers_always_start),
    Wrong("blind11-all-providers-required", answer=wrong_all_providers_required),
    Wrong("blind11-webgl-picked-when-unset", answer=wrong_webgl_picked_when_unset),
    Wrong("blind11-threads-need-separate-mjs", answer=wrong_threads_need_separate_mjs),
    Wrong("blind11-no-isolation-no-session", answer=wrong_no_isolation_no_session),
    Wrong("blind11-trusts-every-url-form", answer=wrong_trusts_every_url_form),
    Wrong("blind11-build-name-from-entry", answer=wrong_build_name_from_entry),
    Wrong("blind11-bundle-embeds-wasm", answer=wrong_bundle_embeds_wasm),
    Wrong("blind11-prefix-only-moves-wasm", answer=wrong_prefix_only_moves_wasm),
    Wrong("blind11-failure-ships-entry", answer=wrong_failure_ships_entry),

    Wrong("blind11-ship-all-of-dist", answer=shortcut_ship_all_of_dist, skipped_skill=True),
    Wrong("blind11-every-runtime", answer=shortcut_every_runtime, skipped_skill=True),
    Wrong("blind11-always-none", answer=shortcut_always_none, skipped_skill=True),
    Wrong("blind11-entry-only", answer=shortcut_entry_only, skipped_skill=True),
    Wrong("blind11-name-tokens", answer=shortcut_name_tokens, skipped_skill=True),
    Wrong("blind11-equal-to-anything", answer=shortcut_equal_to_anything, skipped_skill=True),
    Wrong("blind11-scrape-caller-frames", answer=shortcut_scrape_caller_frames, skipped_skill=True),
    Wrong("blind11-rewrite-inputs", answer=shortcut_rewrite_inputs, skipped_skill=True),

    Wrong("blind11-returns-tuple", answer=rulebreak_returns_tuple, outputs_wrong=False),
    Wrong("blind11-paths-not-names", answer=rulebreak_paths_not_names, outputs_wrong=False),
    Wrong("blind11-mutates-inputs", answer=rulebreak_mutates_inputs, outputs_wrong=False),
]}
