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
# BenchMARL pins an older TorchRL than the main environment's: it lives in .venv-ray too
HAVE_BENCHMARL = importlib.util.find_spec("benchmarl") is not None
if os.environ.get("PLUME_REQUIRE_RAY") == "1" and not (HAVE_RAY and HAVE_BENCHMARL):
    raise RuntimeError("PLUME_REQUIRE_RAY=1 but Ray or BenchMARL is not installed here: run `make test` "
                       "(it builds .venv-ray)")
collect_ignore = ([] if HAVE_RAY else ["integrations/test_rllib.py"]) + (
    [] if HAVE_BENCHMARL else ["integrations/test_benchmarl.py"])
# AgileRL pins an older PettingZoo and another tensordict than either environment's: it lives in
# .venv-agilerl (`make test` runs its file there with PLUME_REQUIRE_AGILERL=1: missing, it fails)
HAVE_AGILERL = importlib.util.find_spec("agilerl") is not None
if os.environ.get("PLUME_REQUIRE_AGILERL") == "1" and not HAVE_AGILERL:
    raise RuntimeError("PLUME_REQUIRE_AGILERL=1 but AgileRL is not installed here: run `make test` "
                       "(it builds .venv-agilerl)")
if not HAVE_AGILERL:
    collect_ignore.append("integrations/test_agilerl.py")


def pytest_configure(config):
    config.addinivalue_line("markers", "ray: needs Ray; `make test` runs these in .venv-ray")
    # Stable-Baselines3 makes a log folder in the system's temporary folder at every `learn()`
    # unless SB3_LOGDIR names one: keep them in one folder of this process, removed at its end
    if "SB3_LOGDIR" not in os.environ:
        import tempfile

        config._sb3_logdir = tempfile.mkdtemp(prefix="plume-multi-tests-sb3-")
        os.environ["SB3_LOGDIR"] = config._sb3_logdir


def pytest_unconfigure(config):
    folder = getattr(config, "_sb3_logdir", None)
    if folder is not None:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop("SB3_LOGDIR", None)


def pytest_collection_modifyitems(config, items):
    if not HAVE_RAY:
        kept = [item for item in items if item.get_closest_marker("ray") is None]
        if len(kept) != len(items):
            config.hook.pytest_deselected(items=[item for item in items if item not in kept])
            items[:] = kept
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: its collection order is the schedule's
        _longest_groups_first(items)


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


# ----------------------------------------------------------------------------------------- pytest-xdist
# `make test` runs the suite on two workers: `pytest -n 2 --dist loadfile`. Every process compiles
# each combination of models it uses (a few seconds to half a minute each; Numba's cache on disk
# serves later processes), so the tests of a file stay on one worker (they share its
# combinations), files that compile the same costly combinations go to one worker together, and
# the longest groups start first so that the short ones even out the end. The scheduler below
# does it for `--dist loadfile` (pytest-xdist's `xdist_group` marks are ignored on pytest 9.2:
# pytest-dev/pytest-xdist#1386). Files are named without their folder; a file not named here is a
# group of its own, handed out after these in collection order.
GROUPS = [  # (group, files), longest first: measured on two cores with an empty cache
    # the documentation's Poisson, puff and plume-following combinations, shared with these files
    ("docs", ("test_docs.py", "test_infotaxis_table.py", "test_poisson_hits_engine.py", "test_puffs_engine.py",
              "test_puffs_state.py", "test_puffs_tools.py", "test_evaluation.py", "test_examples.py", "test_team.py",
              "test_teams_table.py", "test_greedy.py", "test_probes.py", "test_docs_script.py", "test_puffs_regimes.py",
              "test_scene_tools.py", "test_training_tables.py", "test_windy_poisson_hits.py", "test_scenarios.py",
              # the benchmark's tasks run the Poisson teams, the puffs and the plume following of the above
              "test_fronts.py", "test_table.py",
              # the 3-D Poisson search (30 s to compile), which the 3-D task of test_fronts.py runs too
              "test_poisson_hits_3d.py",
              # the puffs' several-agent combination of test_puffs_engine.py
              "test_puffs_sources.py",
              # the tasks' statistics: a tiny run on the Gaussian probes of test_docs_script.py
              "test_task_statistics.py",
              # the standalone puff kernels, which the puffs' benchmark and engine tests above compile too
              "test_puffs.py", "test_hostile_inputs.py",
              # the Bayesian searchers on a puff and a Gaussian plume (Belief with a likelihood), and the
              # tables that run the same combinations tiny
              "test_likelihoods.py", "test_bayesian_plumes_table.py",
              # the Poisson search among walls and its decisions' walled variants: the infotaxis teams'
              # decide_batch and the protocol's runners of the tables above, with the same signatures
              # (on the other worker they compiled them again: about 40 s of CPU). test_capabilities.py:
              # the example, infotaxis behind a wall, runs the same combination
              "test_among_walls.py", "test_walls_search_table.py", "test_capabilities.py")),
    # the full sensor set of tests/models/models_reference.py with every body (about 15 s per combination)
    ("models", ("test_reference.py", "test_properties.py", "test_movie.py", "test_movie_files.py")),
    ("benchmark_models", ("test_models_table.py",)),
    # the default scenario among walls (2-D), a continuous body among 3-D walls, the puffs' scene among walls
    ("walls", ("test_walls.py", "test_walls_table.py", "test_walls_scene.py")),
    # the 3-D combinations (table body with every 3-D sensor, continuous body, the 3-D default; the
    # continuous body over a Movie's volumes)
    ("three_d", ("test_three_dimensions.py", "test_frontends_3d.py", "test_volume.py", "test_movie_3d.py")),
    # the trainers' imports (torch, TorchRL, Tianshou, Stable-Baselines3) once, in one process
    ("trainers", ("test_trainers.py", "test_integrations.py", "test_sb3.py")),
    # Perseus's solver and decisions (1-D, 2-D, 3-D, windy): its tests and its benchmark's tiny run on
    # one worker, so that the two files, the last handed out, never compile the same kernels at once
    ("perseus", ("test_perseus.py", "test_perseus_table.py", "test_perseus_named.py")),
    ("engine_hardening", ("test_simulator_hardening.py",)),  # compiles in fresh processes
    ("engine_cache", ("test_cache.py", "test_compile.py", "test_cache_failures.py")),  # fresh processes, fresh caches
    # strategies.scenarios' combinations (both table bodies, one agent or several, neighbours)
    ("engine", ("test_simulator.py", "test_simulator_properties.py", "test_cli.py")),
    ("benchmark", ("test_bench.py",)),
    # plume-multi render's oriented body with antennae, wind and heading (also drawn by the overlays)
    ("cli_models", ("test_cli_models.py", "test_render_overlays.py", "test_surge_cast.py")),
    ("poisson", ("test_poisson_hits.py", "test_bayesian_protocol.py", "test_numpy_sum.py")),
]
_GROUP_OF = {name: group for group, names in GROUPS for name in names}
_RANK = {group: rank for rank, (group, _) in enumerate(GROUPS)}


def _group(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    return _GROUP_OF.get(path.rsplit("/", 1)[-1], path)


def _longest_groups_first(items):
    first = {}
    for index, item in enumerate(items):
        first.setdefault(_group(item.nodeid), (_RANK.get(_group(item.nodeid), len(GROUPS)), index))
    position = {id(item): index for index, item in enumerate(items)}
    items.sort(key=lambda item: (first[_group(item.nodeid)], position[id(item)]))


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: ignored without pytest-xdist
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        """``--dist loadfile`` with the files of one entry of ``GROUPS`` as one unit of work, the
        units handed out in the workers' collection order (longest first)."""

        def _split_scope(self, nodeid):
            return _group(nodeid)

    config.option.loadscopereorder = False  # that order, not "most tests first"
    return GroupScheduling(config, log)
