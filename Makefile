# Two commands do all set-up on a fresh machine with Python 3.10+:
#   make demo   # creates .venv, installs plume_multi with every extra the README uses, runs the demo
#   make test   # creates .venv, installs plume_multi with its test extras, runs the tests
# Then use the package from .venv: `source .venv/bin/activate`, or call .venv/bin/... directly.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# One marker file per installed extra; the test extra includes all the others.
$(VENV)/.installed-all: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[all]"
	touch $@

$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@ $(VENV)/.installed-all $(VENV)/.installed-docs

demo: $(VENV)/.installed-all
	$(BIN)/plume-multi demo
	@echo
	@echo "Next: source $(VENV)/bin/activate   (then plume-multi --help, python examples/train_ppo.py, ...)"

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q

bench: $(VENV)/.installed-all
	$(BIN)/python benchmarks/throughput.py

# The documentation site, built into site/ (open site/index.html).
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) build site *.egg-info
