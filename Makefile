# Two commands do all set-up on a fresh machine with Python 3.10+:
#   make demo   # creates .venv, installs plume_multi with every extra the README uses, runs the demo
#   make test   # builds .venv exactly as make demo does, runs the README's code blocks in it, adds the
#               # test tools (and Debian's chromium for the docs' browser check), runs the tests
# Both install through constraints.txt: the tests run against what make demo installs.
# Then use the package from .venv: `source .venv/bin/activate`, or call .venv/bin/... directly.
#   (make test also runs the tests that need Ray or BenchMARL in .venv-ray: Ray RLlib pins an older
#   Gymnasium, BenchMARL an older TorchRL; and AgileRL's in .venv-agilerl: it pins an older PettingZoo)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RAY_VENV ?= .venv-ray
RAY_BIN := $(RAY_VENV)/bin
AGILERL_VENV ?= .venv-agilerl
AGILERL_BIN := $(AGILERL_VENV)/bin
# AgileRL 2.58 pins PettingZoo < 1.27 and tensordict 0.13 (its own environment); `from agilerl.algorithms
# import IPPO` imports peft, which its requirements leave out.
AGILERL_PACKAGES := "agilerl==2.58.0" "peft>=0.17" "torch==2.13.0"
# --no-compile: pip would write bytecode for all of the 15,000 files each environment installs
# (about 40 s of CPU per environment); Python writes it on first import for the few it imports.
# So the recipes never inherit PYTHONDONTWRITEBYTECODE: with it set, every process of the tests
# compiled each module it imports from source again (measured on the 2-core machine: `import
# plume_multi, plume_multi.training` 9.0 CPU s against 3.5-4.2 with bytecode; collecting the suite
# 24.8 against 10.1 CPU s, in each test worker).
unexport PYTHONDONTWRITEBYTECODE
# constraints.txt: the bounds every environment here installs through (what breaks, and why).
CONSTRAINTS := constraints.txt
INSTALL := -m pip install --quiet --no-compile -c $(CONSTRAINTS)
# Gymnasium 1.2's RecordEpisodeStatistics has no SAME_STEP branch (1.3 added it): that one test
# holds for the newer Gymnasium only.
GYM12_DESELECT := --deselect "tests/envs/test_vector.py::test_record_episode_statistics_counts_the_episodes_the_env_plays[SAME_STEP]"

.PHONY: demo test test-suite test-deps test-ray test-agilerl ray-venv bench docs clean browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# One marker file per installed extra. `all` is make demo's environment.
$(VENV)/.installed-all: pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(BIN)/python $(INSTALL) -e ".[all]"
	touch $@

$(VENV)/.installed-docs: pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(BIN)/python $(INSTALL) -e ".[docs]"
	touch $@

# The test environment is the demo's with the test tools added (the test extra includes every other
# one): first the README's Python blocks run in the demo's environment as make demo leaves it
# (tests/docs_blocks.py, no pytest: a block needing a package only the tests install fails here);
# what they compile stays in the cache for the suite.
$(VENV)/.installed-test: $(VENV)/.installed-all
	$(BIN)/python tests/docs_blocks.py README.md
	$(BIN)/python $(INSTALL) -e ".[test]"
	touch $@ $(VENV)/.installed-docs

$(RAY_BIN)/python:
	$(PYTHON) -m venv $(RAY_VENV)
	$(RAY_BIN)/python -m pip install --quiet --upgrade pip

$(RAY_VENV)/.installed: pyproject.toml $(CONSTRAINTS) | $(RAY_BIN)/python
	$(RAY_BIN)/python $(INSTALL) -e ".[rllib,benchmarl,test-ray]"
	touch $@

ray-venv: $(RAY_VENV)/.installed

$(AGILERL_BIN)/python:
	$(PYTHON) -m venv $(AGILERL_VENV)
	$(AGILERL_BIN)/python -m pip install --quiet --upgrade pip

$(AGILERL_VENV)/.installed: pyproject.toml $(CONSTRAINTS) | $(AGILERL_BIN)/python
	$(AGILERL_BIN)/python $(INSTALL) -e ".[test-ray]" $(AGILERL_PACKAGES)
	touch $@

demo: $(VENV)/.installed-all
	$(BIN)/plume-multi demo
	@echo
	@echo "Next: source $(VENV)/bin/activate   (then plume-multi --help, python examples/train_ppo.py, ...)"

# The headless browser tests/test_docs_site.py looks at the built site with: Debian's chromium
# (about 15 s to install; without root, through sudo). Nothing happens when one is there.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { $(SUDO) apt-get update -qq && \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; }

# The environments and the browser install side by side (each waits mostly on downloads and
# unpacking), and each group of tests starts as soon as its own environment is ready: the suite
# (pytest-xdist: `-n auto`; tests/conftest.py keeps the files that compile the same models on one
# worker and starts the longest first) does not wait for Ray's or AgileRL's environment. The Ray
# tests and AgileRL's run beside the suite, not after it: each of those keeps at most one core busy,
# and less while Ray's runners start or its processes wait on each other, so run after the suite
# they left a core idle for most of their time; beside it, the suite's workers take up that slack,
# and the suite's own tail (one worker finishing its last group) is filled too. -O prints each
# one's output whole, when it ends; -k runs every group even when another failed (make test still
# fails). PLUME_REQUIRE_BROWSER=1: the docs' browser check fails, never skips, without chromium.
test:
	$(MAKE) --no-print-directory -j4 -k -O test-suite test-ray test-agilerl

# Every environment of the tests, without running them.
test-deps:
	@$(MAKE) --no-print-directory -j4 $(VENV)/.installed-test $(RAY_VENV)/.installed $(AGILERL_VENV)/.installed browser

test-suite: $(VENV)/.installed-test browser
	PLUME_REQUIRE_BROWSER=1 $(BIN)/python -m pytest -q -n auto --dist loadfile

# The Ray tests (PLUME_REQUIRE_RAY=1: a missing Ray fails, never skips), then the Gymnasium-facing
# tests again on RLlib's Gymnasium. RAY_worker_niceness=0: Ray starts its workers (RLlib's remote
# runners) at niceness 15, so beside the suite they got almost no CPU and finished last, alone,
# after the suite (two runner tests took 433 and 259 s; the whole group takes 135 s on an idle machine).
test-ray: $(RAY_VENV)/.installed
	RAY_worker_niceness=0 PLUME_REQUIRE_RAY=1 $(RAY_BIN)/python -m pytest -q -m ray tests/integrations/test_rllib.py tests/integrations/test_benchmarl.py \
		tests/test_evaluation.py tests/test_compat.py
	$(RAY_BIN)/python -m pytest -q tests/envs/test_vector.py tests/envs/contracts $(GYM12_DESELECT)

# AgileRL's recipe (PLUME_REQUIRE_AGILERL=1: a missing AgileRL fails, never skips).
test-agilerl: $(AGILERL_VENV)/.installed
	PLUME_REQUIRE_AGILERL=1 $(AGILERL_BIN)/python -m pytest -q tests/integrations/test_agilerl.py

bench: $(VENV)/.installed-all
	$(BIN)/python benchmarks/throughput.py

# The documentation site, built into site/ (open site/index.html; it needs no network).
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) $(RAY_VENV) $(AGILERL_VENV) build site *.egg-info
