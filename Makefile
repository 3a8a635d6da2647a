# Two commands do all set-up on a fresh machine with Python 3.10+:
#   make demo   # creates .venv, installs plume_multi, runs the 64-agent search demo
#   make test   # creates .venv, installs plume_multi with its test extras, runs the tests; then the
#               # same in .venv-ray (Ray RLlib pins an older Gymnasium) for the tests that need Ray
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RAY_VENV ?= .venv-ray
RAY_BIN := $(RAY_VENV)/bin
# Gymnasium 1.2's RecordEpisodeStatistics has no SAME_STEP branch (1.3 added it): that one test
# holds for the newer Gymnasium only.
GYM12_DESELECT := --deselect "tests/test_vector_env.py::test_record_episode_statistics_counts_the_episodes_the_env_plays[SAME_STEP]"

.PHONY: demo test test-ray ray-venv bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-core: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[viz]"
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@ $(VENV)/.installed-core

$(RAY_BIN)/python:
	$(PYTHON) -m venv $(RAY_VENV)
	$(RAY_BIN)/python -m pip install --quiet --upgrade pip

$(RAY_VENV)/.installed: pyproject.toml | $(RAY_BIN)/python
	$(RAY_BIN)/python -m pip install --quiet -e ".[rllib,test-ray]"
	touch $@

ray-venv: $(RAY_VENV)/.installed

demo: $(VENV)/.installed-core
	$(BIN)/plume-multi demo

test: $(VENV)/.installed-test $(RAY_VENV)/.installed
	$(BIN)/python -m pytest -q
	$(MAKE) --no-print-directory test-ray

# The Ray tests (PLUME_REQUIRE_RAY=1: a missing Ray fails, never skips), then the Gymnasium-facing
# tests again on RLlib's Gymnasium.
test-ray: $(RAY_VENV)/.installed
	PLUME_REQUIRE_RAY=1 $(RAY_BIN)/python -m pytest -q -m ray tests/test_rllib.py tests/test_evaluate.py
	$(RAY_BIN)/python -m pytest -q tests/test_vector_env.py tests/contracts $(GYM12_DESELECT)

bench: $(VENV)/.installed-core
	$(BIN)/python benchmarks/throughput.py

clean:
	rm -rf $(VENV) $(RAY_VENV) build *.egg-info
