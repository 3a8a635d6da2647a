# Two commands do all set-up on a fresh machine with Python 3.10+:
#   make demo   # creates .venv, installs plume_multi, runs the 64-agent search demo
#   make test   # creates .venv, installs plume_multi with its test extras, runs the tests
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-core: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[viz]"
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@ $(VENV)/.installed-core

demo: $(VENV)/.installed-core
	$(BIN)/plume-multi demo

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q

bench: $(VENV)/.installed-core
	$(BIN)/python benchmarks/throughput.py

clean:
	rm -rf $(VENV) build *.egg-info
