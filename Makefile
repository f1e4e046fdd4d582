# One entry point for humans and CI: `make demo` and `make test` set everything up first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# CPU build for development machines; GPU users install their own torch first.
TORCH ?= torch==2.13.0
STAMP := $(VENV)/.xlpe-installed
# exact versions of everything but torch, so a clone next month installs the same stack
PIP_INSTALL := $(BIN)/pip install -q -c constraints.txt

.PHONY: setup test test-fast demo benchmark

setup: $(STAMP)

$(STAMP): setup.py constraints.txt scripts/install_eflomal.sh xlpe_fairseq_cli/install_eflomal.py
	$(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) --upgrade pip wheel setuptools Cython
	$(PIP_INSTALL) "$(TORCH)"
	# fastBPE's sdist needs Cython at build time and no build isolation
	$(PIP_INSTALL) --no-build-isolation fastbpe==0.1.0
	# eflomal for x86-64-v3, not this CPU: one compiler then gives one alignment on every CPU
	bash scripts/install_eflomal.sh $(BIN)/pip
	$(PIP_INSTALL) -e ".[fairseq,test]"
	touch $@

# one test process per core; a file's tests stay in one process, which builds its fixtures once
test: $(STAMP)
	$(BIN)/python -m pytest tests -q -n auto --dist loadfile

# the fast tier: the unit tests, in minutes (docs/testing.md)
test-fast: $(STAMP)
	$(BIN)/python -m pytest tests -q -n auto --dist loadfile -m unit

demo: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" bash examples/demo.sh $(DEMO_ARGS)

benchmark: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python scripts/benchmark.py $(BENCH_ARGS)
