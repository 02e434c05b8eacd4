# Two commands on a fresh Debian 12 machine with Python 3.11:
#   make demo   the whole loop on the embedded default (Temporal dev server + local scheduler)
#   make test   installs what the tests need (as root: Slurm 25.11 built from source, pyslurm, MariaDB, ...;
#               PyTorch's CPU build), starts it, runs all tests
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
EXAMPLES_STAMP := $(VENV)/.installed-examples
SLURM_STAMP := $(VENV)/.installed-slurm
# Slurm 25.11, built from shared/vendor's tarball once per machine (deploy/slurm-dev-cluster build)
SLURM_PREFIX ?= /opt/slurm-25.11
SLURM_TARBALL ?= ../shared/vendor/slurm-25.11.7.tar.gz

.PHONY: install demo test test-deps lint clean slurm

install: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || { \
	  echo "installing python3-venv (Debian splits venv out of python3)"; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-venv; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@touch $(STAMP)

# PyTorch (CPU) for the example in docs/examples/pytorch-ddp and its end-to-end tests.
$(EXAMPLES_STAMP): $(STAMP)
	$(BIN)/pip install -q -e '.[dev,examples]'
	@touch $@

# Slurm 25.11 (cached in its prefix while the tarball's sha256 matches) and pyslurm built against
# it (Cython, some minutes; pip caches the wheel, except after Slurm itself was rebuilt). The
# rpath lets pyslurm find libslurm without LD_LIBRARY_PATH.
slurm: $(SLURM_STAMP)

$(SLURM_STAMP): $(STAMP) pyproject.toml $(SLURM_TARBALL)
	SLURM_DEV_PREFIX=$(SLURM_PREFIX) SLURM_DEV_TARBALL=$(SLURM_TARBALL) deploy/slurm-dev-cluster build
	@nocache=""; if [ -f $@ ] && ! cmp -s $@ $(SLURM_PREFIX)/.built-from-sha256; then \
	  echo "Slurm was rebuilt: rebuilding pyslurm against it"; nocache=--no-cache-dir; \
	  $(BIN)/pip uninstall -y -q pyslurm; fi; \
	SLURM_INCLUDE_DIR=$(SLURM_PREFIX)/include SLURM_LIB_DIR=$(SLURM_PREFIX)/lib \
	  LDFLAGS="-Wl,-rpath,$(SLURM_PREFIX)/lib" $(BIN)/pip install -q $$nocache -e '.[dev,slurm]'
	@cp $(SLURM_PREFIX)/.built-from-sha256 $@

demo: install
	$(BIN)/recovery demo

# Debian tools the tests use: systemd-analyze and docker-compose (tests/deploy), Chromium for
# the Temporal UI test (tests/embedded/test_temporal_ui.py, /usr/bin/chromium).
# Installed only when missing, as root; otherwise those tests skip (and fail under CI=true).
test-deps:
	@missing=""; \
	command -v systemd-analyze >/dev/null 2>&1 || missing="$$missing systemd"; \
	command -v docker-compose >/dev/null 2>&1 || missing="$$missing docker-compose"; \
	test -x /usr/bin/chromium || missing="$$missing chromium"; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" != 0 ]; then echo "make test-deps: not root; install$$missing yourself"; \
	else echo "installing$$missing (Debian packages, for the tests)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	  apt-get install -y -qq --no-install-recommends$$missing >/dev/null; fi

test: install $(EXAMPLES_STAMP) test-deps slurm
	SLURM_DEV_PREFIX=$(SLURM_PREFIX) deploy/slurm-dev-cluster start
	$(BIN)/pytest -ra; status=$$?; deploy/slurm-dev-cluster stop; exit $$status

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
