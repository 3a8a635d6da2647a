"""Every array of a snapshot through corruptions, in one subprocess (a crash must not take the test
run down with it): each corrupted snapshot is either refused by ``restore`` with our error naming
the array, or accepted, and then steps on with finite observations and a clean ``validate()``.

The parent compiles the scenario first (``warm``), so the subprocess loads it from the shared
cache instead of compiling it again. Used by tests/test_simulator_hardening.py (the default
scenario: the core arrays) and tests/models/plumes/test_puffs_state.py (the puff plume's arrays).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def corruptions(arr: np.ndarray) -> list:
    """``(label, function)`` pairs, each changing a copy of ``arr`` in place."""
    out = []

    def at_first(value):
        return lambda a: a.reshape(-1).__setitem__(0, value)

    if arr.dtype == np.bool_:
        out += [("flip first", lambda a: a.reshape(-1).__setitem__(0, ~a.reshape(-1)[0])),
                ("flip all", lambda a: np.logical_not(a, out=a))]
    elif arr.dtype.kind == "f":
        for value in (np.nan, np.inf, -np.inf, 1e300, -1e300, 1e30, -1.0, 0.0, 0.5):
            out.append((f"first = {value!r}", at_first(value)))
        out.append(("garbage", lambda a: a.__setitem__(..., np.random.default_rng(0).normal(0, 1e6, a.shape))))
    else:
        info = np.iinfo(arr.dtype)
        for value in (-1, 0, 1, 10**6, info.max, info.min):
            if info.min <= value <= info.max:
                out.append((f"first = {value!r}", at_first(value)))
        out.append(("garbage", lambda a: a.__setitem__(..., np.random.default_rng(0).integers(
            max(info.min, -2**62), min(info.max, 2**62), a.shape, endpoint=True).astype(a.dtype))))
    return out


def _run(scenario_path: str, num_worlds: int, steps: int, seed: int) -> None:
    """The subprocess: one JSON line per (array, corruption)."""
    import warnings

    from plume_multi import Simulator, ValidationError
    from plume_multi.scenario import load_scenario

    warnings.simplefilter("ignore")
    sim = _simulator(load_scenario(scenario_path), num_worlds, steps, seed)
    snap = sim.snapshot()
    arrays = sorted(k for k, v in snap.items() if isinstance(v, np.ndarray) and v.size and k != "seed_base")
    actions = np.zeros(sim.total_agents, np.int64)
    for key in arrays:
        for label, corrupt in corruptions(snap[key]):
            bad = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in snap.items()}
            corrupt(bad[key])
            if np.array_equal(bad[key], snap[key], equal_nan=True):
                continue  # this corruption changes nothing here
            result = {"key": key, "corruption": label}
            try:
                sim.restore(bad)
            except ValidationError as exc:
                result.update(outcome="refused", message=str(exc))
            else:
                finite = bool(np.isfinite(sim.state.obs).all())
                for _ in range(3):
                    obs, reward, *_ = sim.step(actions)
                    finite &= bool(np.isfinite(obs).all() and np.isfinite(reward).all())
                result.update(outcome="accepted", finite=finite, problems=sim.validate())
            print(json.dumps(result), flush=True)
            sim.restore(snap)


def _simulator(scenario, num_worlds: int, steps: int, seed: int):
    from plume_multi import Simulator

    sim = Simulator(scenario, num_worlds=num_worlds, parallel=False)
    sim.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        sim.step(rng.integers(0, sim.n_actions, sim.total_agents))
    return sim


def warm(scenario, num_worlds: int, steps: int, seed: int):
    """Compile (or load) in this process what the subprocess runs: the step, the validation."""
    sim = _simulator(scenario, num_worlds, steps, seed)
    sim.restore(sim.snapshot())
    return sim


def run_in_subprocess(scenario, tmp_path: Path, num_worlds: int = 3, steps: int = 20, seed: int = 5) -> list:
    """Every corruption of every array of the snapshot of ``scenario`` after ``steps`` steps, run
    in one subprocess; returns its results (dicts) and checks that it did not crash."""
    from plume_multi.scenario import save_scenario

    warm(scenario, num_worlds, steps, seed)
    path = save_scenario(scenario, tmp_path / "scenario.json")
    env = {**os.environ, "PLUME_MULTI_QUIET": "1",
           "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE), os.environ.get("PYTHONPATH", "")])}
    code = f"import corruptions; corruptions._run({str(path)!r}, {num_worlds}, {steps}, {seed})"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, f"the subprocess died ({out.returncode}): {out.stderr[-3000:]}"
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


# A core array is checked against the others: a corruption of one may be reported as an
# inconsistency of another (an agent marked active but terminated, a step count that does not
# match the flags), named by that one.
RELATED = {
    "active": ("active", "terminated", "world_done", "ep_length"),
    "terminated": ("terminated", "active"),
    "truncated": ("truncated",),
    "world_done": ("world_done",),
    "world_t": ("world_t", "ep_length", "truncated", "world_done"),
    "ep_length": ("ep_length",),
    "pos": ("pos", "obs", "active"),
    "obs": ("obs",),
    "reward": ("reward",),
    "world_episode": ("world_episode",),
    "world_seed": ("world_seed",),
    "final_obs": ("final_obs",),
    "final_length": ("final_length",),
}


def names_a_field(result: dict) -> bool:
    """The refusal of a corrupted core array names it (or an array it is checked against)."""
    message = result["message"]
    return any(f"{name}" in message for name in RELATED.get(result["key"], (result["key"],)))
