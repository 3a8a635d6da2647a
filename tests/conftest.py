import os

from hypothesis import HealthCheck, settings

# Numba compiles on first call (then caches): no per-example deadline. A modest default number of
# examples keeps the suite well under its time budget on two cores; raise it locally with
# HYPOTHESIS_PROFILE=thorough.
settings.register_profile(
    "default", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


# ----------------------------------------------------------------------------------------- Ray
# Ray RLlib pins an older Gymnasium than the rest of the suite, so it lives in its own virtual
# environment: `make test` runs the suite in .venv, then the tests marked `ray` (and
# test_rllib.py) in .venv-ray with PLUME_REQUIRE_RAY=1. Without Ray they are deselected, never
# skipped; with PLUME_REQUIRE_RAY=1 a missing Ray is an error.
import importlib.util

import pytest

HAVE_RAY = importlib.util.find_spec("ray") is not None
if os.environ.get("PLUME_REQUIRE_RAY") == "1" and not HAVE_RAY:
    raise RuntimeError("PLUME_REQUIRE_RAY=1 but Ray is not installed here: run `make test` (it builds .venv-ray)")
collect_ignore = [] if HAVE_RAY else ["integrations/test_rllib.py"]


def pytest_configure(config):
    config.addinivalue_line("markers", "ray: needs Ray; `make test` runs these in .venv-ray")


def pytest_collection_modifyitems(config, items):
    if HAVE_RAY:
        return
    kept = [item for item in items if item.get_closest_marker("ray") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


@pytest.fixture(scope="session")
def ray_local():
    """A local Ray with 2 CPUs for the whole session (shut down at its end)."""
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()
