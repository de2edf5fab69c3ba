# Two commands for learners: `make lab` and `make test`. Everything else is for maintainers.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.labkit-installed
# PyTorch's CPU wheel index keeps the multi-GB CUDA build of torch off Linux machines.
# It is asked for only when it answers within 3 s, so an offline mirror or CI loses no time.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: lab test test-all test-thorough test-fast test-network test-notebooks test-grading test-browser bench assign format solutions course-model system-deps clean

# As root (containers, cloud VMs) JupyterLab needs --allow-root; the URL to open is printed below.
lab: $(STAMP)
	@root=""; if [ "$$(id -u)" = "0" ]; then root="--allow-root"; echo "Running as root: starting JupyterLab with --allow-root."; fi; \
	echo "Open the http://127.0.0.1:8888/lab?token=... URL that JupyterLab prints below (Ctrl-C stops it)."; \
	$(VENV)/bin/jupyter lab --notebook-dir=lessons $$root

# Tests in tiers (markers registered in pyproject.toml; each test belongs to exactly one tier):
#   fast       units, corpus, judges, structure, clean notebooks: no kernel  (`make test-fast`, the inner loop;
#              its tests of seconds each, marked `heavy` in conftest.py, run with the grading tier)
#   network    asks the package index; skips in seconds when it cannot be reached
#   notebooks  nbval runs each solution ONCE under a second CPU code path, compares every output and
#              checks the lesson budgets; the Binder environment (skipped when pip's index is unreachable)
#   grading    the sandboxed grader on every lesson's solution (full marks) and blank lesson (zero, and
#              Run All raises nowhere outside the answer cells), and hostile classes; the `heavy` tests
#   browser    JupyterLab in headless Chromium
# -n 2 uses both cores.
# The fast tier sends each test to whichever worker is idle (--dist load: its module fixtures are cheap, and
# the corpus, its slowest file, no longer holds one worker); the other tiers keep each file on one worker.
PYTEST_ARGS ?= -n 2 --dist loadfile
PYTEST := $(VENV)/bin/python -m pytest
NBVAL := --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg
SLOW := notebooks or grading or browser
# The Binder environment (tests/test_binder.py, ~70 s of pip on one core) is built beside the course's own
# install, which keeps one core busy, and handed to the notebooks tier (LABKIT_BINDER_ENV).
# Then the tiers one after another, each using both cores: every one of them keeps both busy, so a tier run
# beside another only slows it down (the browser tier beside the network tier took 299 s against 284 s).
# `make test` stays within 15 minutes on 2 cores; `make test-all` adds what was moved out to make room:
# the network tier (it checks the package index, not this code: run it when pins or docs/arm64.md change)
# and the `thorough` tests (conftest.py, tests/test_l08.py).
# The fast and grading tiers run as one pytest session in `make test` (one collection, one start of the
# workers, no idle core at the fast tier's end: ~15 s); `make test-fast` and `make test-grading` run each alone.
TIERS := test-notebooks test-browser
FAST := not ($(SLOW) or network or heavy)
GRADING := (grading or heavy) and not (browser or thorough)
test: system-deps
	@binder="$$($(PYTHON) tests/binder_env.py --mkdtemp)"; start=$$(date +%s); \
	$(PYTHON) tests/binder_env.py "$$binder" & bpid=$$!; \
	trap 'kill $$bpid 2>/dev/null; wait $$bpid 2>/dev/null; rm -rf "$$binder"' EXIT; \
	$(MAKE) --no-print-directory $(STAMP) || exit $$?; \
	echo "== install: $$(( $$(date +%s) - start )) s"; \
	$(VENV)/bin/labkit assign --check || exit $$?; \
	start=$$(date +%s); \
	$(PYTEST) tests -m "($(FAST)) or ($(GRADING))" $(PYTEST_ARGS) --durations=15 || exit $$?; \
	echo "== test-fast and test-grading: $$(( $$(date +%s) - start )) s"; \
	wait $$bpid; export LABKIT_BINDER_ENV="$$binder"; \
	for t in $(TIERS); do start=$$(date +%s); \
	  $(MAKE) --no-print-directory $$t || exit $$?; \
	  echo "== $$t: $$(( $$(date +%s) - start )) s"; done

# Everything: `make test`, then the network tier and the `thorough` corpus entries.
test-all: test
	$(MAKE) --no-print-directory test-network
	$(MAKE) --no-print-directory test-thorough

test-fast: $(STAMP)
	$(PYTEST) tests -m "$(FAST)" -n 2 --dist load

# Network tests wait on the index more than on the CPU: spread one by one over both workers.
test-network: $(STAMP)
	$(PYTEST) tests -m "network and not ($(SLOW))" -n 2 --dist load

# nbval runs each solution once, under PyTorch's portable kernels (no AVX2/AVX-512) and one ONNX
# Runtime thread per session (an IPython startup file): the committed outputs come from the native
# path (`make solutions`), so this one run checks that they reproduce and that they hold on any CPU.
# The budgets hold on this path too (it is no slower on 2 cores: one thread per session spins less).
test-notebooks: $(STAMP)
	@ipy="$$(mktemp -d)"; mkdir -p "$$ipy/profile_default/startup"; \
	cp tests/cpu_path/one_ort_thread.py "$$ipy/profile_default/startup/"; \
	ATEN_CPU_CAPABILITY=default IPYTHONDIR="$$ipy" $(PYTEST) tests solutions $(NBVAL) -m "notebooks and not (grading or browser)" $(PYTEST_ARGS) --durations=15; \
	rc=$$?; rm -rf "$$ipy"; exit $$rc

# Each lesson's grading test is a unit of its own and each exercise's corpus entries one unit (conftest.py,
# SPREAD_FILES, CORPUS_FILE), the long ones first, so no file holds one worker for minutes at the end.
# (Three workers were tried: the tier computes more than it waits, and it took 827 s against about 690 s.)
test-grading: $(STAMP)
	$(PYTEST) tests -m "$(GRADING)" $(PYTEST_ARGS) --durations=15

# A heavy exercise's blind corpus entries and its own entries at the notebook's seed, the public checks of
# 11.device_decode and 11.placement (conftest.py), lesson 08's ship rule in Chromium: in `make test-all`.
test-thorough: $(STAMP)
	$(PYTEST) tests -m thorough $(PYTEST_ARGS)

# Browser tests spread one by one (--dist load): each worker starts its own JupyterLab and Chromium,
# which costs less than leaving one core idle while test_browser.py runs on the other.
test-browser: $(STAMP) system-deps
	$(PYTEST) tests -m "browser and not thorough" -n 2 --dist load --durations=15

bench: $(STAMP)
	$(VENV)/bin/labkit bench

assign: $(STAMP)
	$(VENV)/bin/labkit assign

# Maintainers: format the solution notebooks' code ([tool.ruff] in pyproject.toml), then `make assign`.
format: $(STAMP)
	$(VENV)/bin/ruff format solutions

# Re-execute every solution notebook in place (committed outputs are what nbval checks).
solutions: $(STAMP)
	$(VENV)/bin/labkit run-solutions

# Maintainers: retrain the course CNN and lesson 09's transformer that ship in labkit/assets (then `make solutions assign`).
course-model: $(STAMP)
	$(VENV)/bin/labkit course-model
	$(VENV)/bin/labkit course-model --transformer

# PYTHONWARNINGS hides setuptools' 12-line "Editable installation" banner (a note for package authors).
$(STAMP): pyproject.toml package-lock.json labkit/lazy_iri.py binder/lab_config.py binder/jupyter_server_config.json \
          binder/overrides.json binder/custom.css
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --upgrade "pip>=24"
	@extra=""; \
	if [ "$$(uname -s)" = "Linux" ] && $(PY) -c "import urllib.request,sys; urllib.request.urlopen('$(TORCH_INDEX)/torch/', timeout=3)" >/dev/null 2>&1; then \
	  extra="--extra-index-url $(TORCH_INDEX)"; echo "Using PyTorch's CPU wheel index."; \
	else echo "PyTorch's CPU index is not reachable: installing from the default index."; fi; \
	PYTHONWARNINGS='ignore:Editable installation' $(PY) -m pip install --quiet $$extra -e '.[test]'
	@# jsonschema's 1.8-s import of rfc3987_syntax deferred to its first use (every kernel server,
	@# grader process and JupyterLab start imports jsonschema; see labkit/lazy_iri.py).
	@$(PY) -m labkit.lazy_iri
	@# Lesson 08: onnxruntime-web as pinned in package-lock.json (`npm ci`), run by the Node.js from PyPI.
	@$(PY) -m labkit.web install
	@# One kernel in the Launcher: the lessons' "python3", ipykernel's own spec inside .venv (a virtualenv's
	@# specs come before the user's, and its "python" is this .venv's). binder/jupyter_server_config.json
	@# hides every other spec and gives kernels CurveZMQ keys (no "running over TCP without encryption").
	@# binder/lab_config.py installs it with JupyterLab's settings for the course: 88-column code whole at
	@# 1024x768 with the file browser open (overrides.json, custom.css), no news pop-ups.
	@rm -rf $(VENV)/share/jupyter/kernels/onnx-lab
	@$(PY) binder/lab_config.py
	@# The course's own modules compiled once (pip compiles the packages it installs, not an editable one):
	@# every kernel, grader and test process imports them, and where PYTHONDONTWRITEBYTECODE is set (CI
	@# images, Binder) each would compile them again, ~0.15 s of CPU a process.
	@$(PY) -m compileall -q labkit labkit_judges tests binder >/dev/null
	@touch $(STAMP)
	@echo "ONNX Lab is installed in $(VENV)."

# Chromium (browser tests) and bubblewrap (grading sandbox), on Debian-like machines when we are root.
# Elsewhere one line says which tests are skipped and why.
system-deps:
	@missing=""; command -v chromium >/dev/null || missing=" chromium"; command -v bwrap >/dev/null || missing="$$missing bubblewrap"; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null; then \
	  echo "Installing$$missing with apt-get..."; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null) \
	    || echo "Could not install$$missing: the tests that need it will be skipped."; \
	else echo "Not root or no apt-get, so not installing$$missing:$$(case "$$missing" in *chromium*) printf ' browser tests skipped (needs chromium);';; esac)$$(case "$$missing" in *bubblewrap*) printf ' sandboxed grading tests skipped (needs bwrap)';; esac)."; fi

# Also removes the user-wide kernel older versions installed, if it points into this clone.
clean:
	rm -rf $(VENV) .pytest_cache test-artifacts grading-out
	@k="$${XDG_DATA_HOME:-$$HOME/.local/share}/jupyter/kernels/onnx-lab"; \
	if [ -f "$$k/kernel.json" ] && grep -q "$(CURDIR)/$(VENV)/" "$$k/kernel.json"; then rm -rf "$$k"; echo "Removed $$k"; fi
