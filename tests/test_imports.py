"""``import plume_multi`` stays light: the heavy libraries load on first use, never at import.

The import time itself is measured by ``benchmarks/first_step.py`` (beside ``import numpy, numba``);
here, which modules an import loads, in a fresh interpreter.
"""

import json
import subprocess
import sys

import pytest

HEAVY = ("scipy.stats", "scipy.special", "matplotlib", "torch", "pandas", "tqdm", "rliable", "ray", "gymnasium",
         "pettingzoo",
         "stable_baselines3", "plume_multi.models", "plume_multi.simulator", "plume_multi.evaluation",
         "plume_multi.integrations", "plume_multi.training")


def _loaded_after(code: str) -> set:
    script = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_import_plume_multi_loads_no_heavy_module():
    loaded = _loaded_after("import plume_multi")
    assert not {name for name in loaded if name.split(".")[0] in HEAVY or name in HEAVY
                or any(name.startswith(h + ".") for h in HEAVY)}



@pytest.mark.parametrize("order", ["import gymnasium, pettingzoo, plume_multi", "import plume_multi, gymnasium, pettingzoo"])
def test_the_ids_are_registered_whichever_comes_first_and_every_public_name_is_reached_on_first_use(order):
    code = f"""
{order}
from pettingzoo import aec_registry, parallel_registry
assert "PlumeSearchCompact-v0" in gymnasium.registry and "otto/isotropic-19x19-v0" in gymnasium.registry
assert "plume_multi/plume_search-v0" in aec_registry and "plume_multi/plume_search-v0" in parallel_registry
assert gymnasium.__loader__ is gymnasium.__spec__.loader and type(gymnasium.__loader__).__name__ == "SourceFileLoader"
assert "scipy.stats" not in sys.modules
for name in plume_multi.__all__:
    getattr(plume_multi, name)
from plume_multi import Scenario, plumes, tasks
assert plume_multi.Scenario is __import__("plume_multi.scenario").scenario.Scenario
assert plumes is __import__("plume_multi.models").models.plumes and callable(tasks.evaluate)
"""
    _loaded_after(code)


@pytest.mark.parametrize("name", ["Scenario", "plumes", "evaluate"])
def test_reaching_a_name_loads_what_it_needs_only(name):
    loaded = _loaded_after(f"import plume_multi\nplume_multi.{name}")
    assert "matplotlib" not in loaded and "torch" not in loaded
