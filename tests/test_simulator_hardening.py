"""The engine refuses bad input with our errors, before anything changes, and never crashes.

Each test names the item of the hardening issue it covers.
"""

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import plume_multi
from plume_multi import Scenario, Simulator, ValidationError


def _sim(autoreset="next_step", **kw):
    sc = Scenario(**{"grid_size": (12, 9), "n_agents": 3, "max_steps": 20, **kw})
    sim = Simulator(sc, 4, autoreset=autoreset)
    sim.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(7):
        sim.step(rng.integers(0, 4, sim.total_agents))
    return sim


def _same(a: dict, b: dict):
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(np.asarray(a[k]), np.asarray(b[k]), err_msg=k)


# ---------------------------------------------------------------- 1. restore checks the content
@pytest.mark.parametrize("key, value, named", [
    ("pos", lambda s: s.__setitem__((0, 0), 10_000), "pos"),
    ("pos", lambda s: s.__setitem__((1, 1), -1), "pos"),
    ("world_t", lambda s: s.__setitem__(0, -4), "world_t"),
    ("obs", lambda s: s.__setitem__((0, 0), np.nan), "obs"),
    ("active", lambda s: s.__setitem__(slice(None), True), "terminated"),
])
def test_restore_refuses_inconsistent_content_and_changes_nothing(key, value, named):
    sim = _sim()
    snap = sim.snapshot()
    bad = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in snap.items()}
    value(bad[key])
    target = _sim()
    before = target.snapshot()
    with pytest.raises(ValidationError, match=named):
        target.restore(bad)
    _same(before, target.snapshot())
    target.step(np.zeros(target.total_agents, np.int64))  # still runs (an out-of-grid position would crash)


@pytest.mark.parametrize("key", ["base_seed", "world_seed", "format", "scenario", "autoreset", "seed_base"])
def test_restore_names_a_missing_key(key):
    sim = _sim()
    snap = sim.snapshot()
    del snap[key]
    before = sim.snapshot()
    with pytest.raises(ValidationError, match=key):
        sim.restore(snap)
    _same(before, sim.snapshot())


def test_restore_names_a_malformed_key_and_the_scenario_field_that_differs():
    sim = _sim()
    snap = sim.snapshot()
    with pytest.raises(ValidationError, match="base_seed"):
        sim.restore({**snap, "base_seed": "five"})
    with pytest.raises(ValidationError, match="pos"):
        sim.restore({**snap, "pos": snap["pos"].astype(np.int64)})
    other = Simulator(Scenario(grid_size=(12, 9), n_agents=3, max_steps=21), 4)
    with pytest.raises(ValidationError, match="max_steps"):
        other.restore(snap)


# ---------------------------------------------------------------- 4. validate() catches each corruption
CORRUPTIONS = {
    "NaN in final_obs": ("same_step", lambda s: s.final_obs.__setitem__((0, 0), np.nan), "final_obs"),
    "negative final_length": ("same_step", lambda s: s.final_length.__setitem__(0, -1), "final_length"),
    "active and terminated": ("next_step", lambda s: s.terminated.__setitem__(np.flatnonzero(s.active)[0], True), "terminated"),
    "truncated early": ("next_step", lambda s: s.truncated.__setitem__(0, True), "truncated"),
    "obs not matching positions": ("next_step", lambda s: s.obs.__setitem__((0, 1), 0.123), "obs"),
    "reward 7": ("next_step", lambda s: s.reward.__setitem__(0, 7.0), "reward"),
    "reward 1e30": ("next_step", lambda s: s.reward.__setitem__(0, 1e30), "reward"),
    "changed world_seed": ("next_step", lambda s: s.world_seed.__setitem__(2, 999), "world_seed"),
}


@pytest.mark.parametrize("name", CORRUPTIONS)
def test_validate_catches(name):
    autoreset, corrupt, field = CORRUPTIONS[name]
    sim = _sim(autoreset)
    assert sim.validate() == []
    corrupt(sim.state)
    problems = sim.validate()
    assert any(p.startswith(field) for p in problems), problems


# ---------------------------------------------------------------- 5. counters never wrap
def test_step_counters_saturate_instead_of_wrapping():
    sim = Simulator(Scenario(grid_size=(5, 5), max_steps=10), 2, autoreset="disabled")
    sim.reset(seed=0)
    top = 2**31 - 1
    sim.state.world_t[:] = top - 2
    sim.state.ep_length[:] = np.where(sim.active, top - 2, 0)
    for _ in range(4):
        _, _, _, truncated = sim.step(np.zeros(2, np.int64))
        assert truncated.all()
    assert (sim.world_steps == top).all()


# ---------------------------------------------------------------- 6. foreign errors become ours
@pytest.mark.parametrize("kwargs, named", [
    (dict(sigma=10**400), "sigma"),
    (dict(goal_radius=10**400), "goal_radius"),
    (dict(action_model=["cardinal"]), "action_model"),
    (dict(action_model={"a": 1}), "action_model"),
    (dict(start_positions=[[0, 0], [1]], n_agents=2), "start_positions"),
    (dict(grid_size={"w": 4, "h": 4}), "grid_size"),
    (dict(grid_size=np.array([[1, 2], [3, 4]])), "grid_size"),
    (dict(source_location=np.array([1.5, 2])), "source_location"),
    (dict(sensors="concentration"), "sensors"),
    (dict(reward="sparse"), "reward"),
    (dict(max_steps=2**40), "max_steps"),
])
def test_scenario_errors_are_ours(kwargs, named):
    with pytest.raises(ValidationError, match=named):
        Scenario(**kwargs)


@pytest.mark.parametrize("kwargs, named", [
    (dict(parallel=1.0), "parallel"),
    (dict(parallel="yes"), "parallel"),
    (dict(num_worlds="four"), "num_worlds"),
    (dict(num_worlds=2**62), "num_worlds"),
    (dict(autoreset=["same_step"]), "autoreset"),
    (dict(field=np.full((4, 4), 0.5)), "field"),
])
def test_simulator_errors_are_ours(kwargs, named):
    with pytest.raises(ValidationError, match=named):
        Simulator(Scenario(grid_size=(5, 5)), **kwargs)


def test_a_configuration_too_big_for_memory_says_how_much_it_needs():
    with pytest.raises(ValidationError, match="GiB"):
        Simulator(Scenario(n_agents=2**24, n_neighbours=4), 2**16)


def test_huge_action_values_are_reported_as_given():
    sim = Simulator(Scenario(grid_size=(5, 5)), 2)
    sim.reset(seed=0)
    before = sim.snapshot()
    with pytest.raises(ValidationError, match=str(2**64 - 1)):
        sim.step(np.array([0, 2**64 - 1], dtype=np.uint64))
    _same(before, sim.snapshot())


# ---------------------------------------------------------------- 2. read-only installs (the cache is never stale: tests/engine/test_cache.py)
_PROBE = """
import warnings, numpy as np
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import plume_multi
    sim = plume_multi.Simulator(plume_multi.Scenario(grid_size=(9, 7), n_agents=2), 3)
    obs = sim.reset(seed=4)
    obs, *_ = sim.step(np.zeros(6, np.int64))
print(repr(obs[:, 0].tolist()))
print(sum("plume_multi" in str(w.message) for w in caught))
print(plume_multi.__file__)
"""


def _copy_package(dest: Path) -> Path:
    src = Path(plume_multi.__file__).parent
    shutil.copytree(src, dest / "plume_multi", ignore=shutil.ignore_patterns("__pycache__"))
    return dest / "plume_multi"


def _run(pythonpath: Path, env_extra: dict) -> list[str]:
    """Run the probe on the copy at ``pythonpath``. ``-S`` skips site-packages' .pth files, so an
    editable install of this checkout cannot shadow the copy; the packages are found by path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PLUME_MULTI_CACHE_DIR", "NUMBA_CACHE_DIR")}
    site_dirs = [p for p in sys.path if p.endswith("site-packages")]
    env.update(env_extra, PYTHONPATH=os.pathsep.join([str(pythonpath), *site_dirs]))
    out = subprocess.run([sys.executable, "-S", "-c", _PROBE], capture_output=True, text=True, env=env,
                         timeout=600, cwd=pythonpath)  # not this checkout: "-c" puts the cwd first
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    assert Path(lines[-1]).is_relative_to(pythonpath), lines[-1]  # the copy ran, not this checkout
    return lines[:-1]


def _make_read_only(path: Path):
    for p in [path, *path.rglob("*")]:
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def test_imports_and_runs_from_a_read_only_install_with_no_writable_cache(tmp_path):
    site = tmp_path / "site"
    _copy_package(site)
    home = tmp_path / "home"
    home.mkdir()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    _make_read_only(site)
    _make_read_only(home)
    _make_read_only(tmp)
    if os.access(site / "plume_multi", os.W_OK):  # root ignores permissions: hide the folders instead
        env = {"HOME": "/proc/self", "XDG_CACHE_HOME": "/proc/self", "TMPDIR": "/proc/self"}
    else:
        env = {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "TMPDIR": str(tmp)}
    lines = _run(site, env)
    reference = Simulator(Scenario(grid_size=(9, 7), n_agents=2), 3)
    reference.reset(seed=4)
    obs, *_ = reference.step(np.zeros(6, np.int64))
    assert lines[0] == repr(obs[:, 0].tolist())
    assert int(lines[1]) <= 1  # one warning at most


# ---------------------------------------------------------------- every core array through corruptions
def test_every_array_of_a_snapshot_through_corruptions_in_a_subprocess(tmp_path):
    """Issue 21's "done when" for the core arrays (the puff plume's own arrays:
    tests/models/plumes/test_puffs_state.py): each corruption is refused with our error naming
    the array (or the one it contradicts), or accepted and stepped on with finite observations."""
    import corruptions

    results = corruptions.run_in_subprocess(Scenario(grid_size=(12, 9), n_agents=3, max_steps=20), tmp_path,
                                            num_worlds=4, steps=7)
    assert {r["key"] for r in results} >= {"pos", "obs", "active", "world_t", "world_episode", "world_seed"}
    for r in results:
        if r["outcome"] == "refused":
            assert r["message"].startswith("snapshot: inconsistent state") and corruptions.names_a_field(r), r
        else:
            assert r["finite"] and r["problems"] == [], r
    assert any(r["key"] == "pos" and r["corruption"] == "garbage" and r["outcome"] == "refused" for r in results)
    assert any(r["key"] == "world_episode" and r["corruption"] == f"first = {2**63 - 1}" and r["outcome"] == "refused"
               for r in results)


def test_field_is_refused_with_a_plume_other_than_the_default():
    """Issue 21, item 9: a field beside another plume was accepted, drawn, and not what the agents
    read. A plume of the user's own that has a field of its own (but reads its own data) too."""
    from dataclasses import dataclass

    from plume_multi import plumes
    from plume_multi.models.plumes import gaussian

    @dataclass(frozen=True)
    class Drawn(plumes.Plume):
        kernels = gaussian.KERNELS

        def fixed_source(self):
            return (1, 1)

        def field(self, grid_size):
            return np.zeros(grid_size[::-1], np.float32)

    for plume, grid in ((Drawn(), (6, 4)), (plumes.Puffs(source=(5, 5)), (100, 50)),
                        (plumes.Gaussian(source="random"), (6, 4))):
        with pytest.raises(ValidationError, match=rf"^field: got an array with the plume {type(plume).__name__}"):
            Simulator(Scenario(grid_size=grid, plume=plume), field=np.ones(grid[::-1]))


def test_impossible_sizes_are_refused_before_any_work_in_under_a_second():
    """Issue 23, item 13: Simulator(Scenario(n_agents=2**24, n_neighbours=2**24 - 1)) took 33 s to
    refuse (naming 33 million observation columns); a step of 2**42 pairs of neighbours is refused
    for its time, before anything is allocated or compiled."""
    import time

    start = time.perf_counter()
    sc = Scenario(n_agents=2**24, n_neighbours=2**24 - 1)
    assert sc.obs_dim == 3 + 2 * (2**24 - 1)
    with pytest.raises(ValidationError, match="GiB"):
        Simulator(sc)
    with pytest.raises(ValidationError, match=r"num_worlds x n_agents: a step would take about 4\.4e\+12 operations"):
        Simulator(Scenario(n_agents=2**21, n_neighbours=1))
    assert time.perf_counter() - start < 1.0
