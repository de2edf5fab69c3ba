# Two commands for learners: `make lab` and `make test`. Everything else is for maintainers.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.labkit-installed
# PyTorch's CPU wheel index keeps the multi-GB CUDA build of torch off Linux machines.
# It is asked for only when it answers within 3 s, so an offline mirror or CI loses no time.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: lab test test-cpu-path bench assign solutions course-model system-deps clean

# As root (containers, cloud VMs) JupyterLab needs --allow-root; the URL to open is printed below.
lab: $(STAMP)
	@root=""; if [ "$$(id -u)" = "0" ]; then root="--allow-root"; echo "Running as root: starting JupyterLab with --allow-root."; fi; \
	echo "Open the http://127.0.0.1:8888/lab?token=... URL that JupyterLab prints below (Ctrl-C stops it)."; \
	$(VENV)/bin/jupyter lab --notebook-dir=lessons $$root

# nbval re-runs solutions/ and compares with their committed outputs; -n 2 uses both cores.
PYTEST_ARGS ?= -n 2 --dist loadfile
NBVAL := --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg
test: $(STAMP) system-deps
	$(VENV)/bin/labkit assign --check
	$(VENV)/bin/python -m pytest tests solutions $(NBVAL) $(PYTEST_ARGS)
	@$(MAKE) --no-print-directory test-cpu-path

# Committed outputs must hold on any CPU: nbval once more over solutions/ with PyTorch's portable
# kernels (no AVX2/AVX-512) and one ONNX Runtime thread per session (an IPython startup file).
test-cpu-path: $(STAMP)
	@echo "nbval again under another CPU code path: ATEN_CPU_CAPABILITY=default, one ONNX Runtime thread."
	@ipy="$$(mktemp -d)"; mkdir -p "$$ipy/profile_default/startup"; \
	cp tests/cpu_path/one_ort_thread.py "$$ipy/profile_default/startup/"; \
	ATEN_CPU_CAPABILITY=default IPYTHONDIR="$$ipy" $(VENV)/bin/python -m pytest solutions $(NBVAL) $(PYTEST_ARGS) -p no:cacheprovider; \
	rc=$$?; rm -rf "$$ipy"; exit $$rc

bench: $(STAMP)
	$(VENV)/bin/labkit bench

assign: $(STAMP)
	$(VENV)/bin/labkit assign

# Re-execute every solution notebook in place (committed outputs are what nbval checks).
solutions: $(STAMP)
	$(VENV)/bin/labkit run-solutions

# Maintainers: retrain the course CNN and lesson 09's transformer that ship in labkit/assets (then `make solutions assign`).
course-model: $(STAMP)
	$(VENV)/bin/labkit course-model
	$(VENV)/bin/labkit course-model --transformer

$(STAMP): pyproject.toml package-lock.json
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --upgrade "pip>=24"
	@extra=""; \
	if [ "$$(uname -s)" = "Linux" ] && $(PY) -c "import urllib.request,sys; urllib.request.urlopen('$(TORCH_INDEX)/torch/', timeout=3)" >/dev/null 2>&1; then \
	  extra="--extra-index-url $(TORCH_INDEX)"; echo "Using PyTorch's CPU wheel index."; \
	else echo "PyTorch's CPU index is not reachable: installing from the default index."; fi; \
	$(PY) -m pip install --quiet $$extra -e '.[test]'
	@# Lesson 08: onnxruntime-web as pinned in package-lock.json (`npm ci`), run by the Node.js from PyPI.
	@$(PY) -m labkit.web install
	@# The kernel lives inside .venv (--sys-prefix): two clones never point at each other's Python.
	@$(PY) -m ipykernel install --sys-prefix --name onnx-lab --display-name "Python (ONNX Lab)" >/dev/null
	@mkdir -p $(VENV)/share/jupyter/lab/settings && cp binder/overrides.json $(VENV)/share/jupyter/lab/settings/
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
