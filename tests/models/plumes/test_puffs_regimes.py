"""Winds that change (``plumes.Wind(regime=...)``, ``puffs/regimes.py``): the regimes' draws
against a plain Python reference written from the module's docstring, the turned wind the puffs
ride and the sensors read, the sparse release, validation and metadata."""

import math

import numpy as np
import pytest

from plume_multi import Scenario, Simulator, ValidationError
from plume_multi.models.plumes import PuffPlume, Puffs, Wind
from models_reference import normal, stream_key, uniform

STREAM_REGIME = 0x5BE0CD19  # regimes.STREAM, written out on purpose
GRID = (100, 50)  # cells of 0.5 over pompy's default region


def reference_angles(wind: Wind, dt: float, seed: int, episode: int, advances: int) -> list:
    """The regime's angle (degrees) after the reset and after each of ``advances`` advances."""
    key = stream_key(seed, episode, STREAM_REGIME)
    clip = lambda a: min(max(a, -wind.direction_max), wind.direction_max)  # noqa: E731

    def switch_time(k):
        jitter = wind.switch_jitter / dt * (2.0 * uniform(key, k, 0) - 1.0)
        return math.floor(k * (wind.switch_every / dt) + jitter + 0.5)

    angle, due, k = 0.0, -1, 0
    if wind.regime == "switch-once":
        lo, hi = wind.switch_after[0] / dt, wind.switch_after[1] / dt
        due = math.floor(lo + uniform(key, 0, 0) * (hi - lo) + 0.5)
    elif wind.regime == "switch-many":
        angle, due = clip(wind.direction_std * normal(key, 0, 1)), switch_time(1)
    out = [angle]
    for clock in range(advances):  # an advance first switches when its number is due
        if due >= 0 and clock >= due:
            k += 1
            if wind.regime == "switch-once":
                angle, due = wind.switch_degrees, -1
            else:
                angle, due = clip(wind.direction_std * normal(key, k, 1)), switch_time(k + 1)
        out.append(angle)
    return out


def _plume(regime, **wind_kw):
    wind = Wind(u=2.0, v=0.5, noise_gain=0.0, regime=regime, **wind_kw)
    return Puffs(source=(20, 25), wind=wind, centre_rel_diff_scale=0.0, puff_release_rate=0.0, init_num_puffs=3,
                 dt=0.01)


@pytest.mark.parametrize("regime, kw", [("switch-once", dict(switch_after=(0.5, 2.0))),
                                        ("switch-many", dict(switch_every=0.3, switch_jitter=0.05)),
                                        ("switch-many", dict(switch_every=0.2, switch_jitter=0.0, direction_std=90.0)),
                                        ("constant", {}), ("sparse", {})])
def test_the_regime_turns_as_the_reference_draws(regime, kw):
    config = _plume(regime, **kw)
    plume = PuffPlume(config, GRID, num_worlds=3, parallel=False)
    plume.reset(seed=7, episode=2)
    got = [plume.state.turn[:, 0].copy()]
    for _ in range(300):
        plume.step()
        got.append(plume.state.turn[:, 0].copy())
    got = np.array(got)
    for b in range(3):
        np.testing.assert_array_equal(got[:, b], reference_angles(config.wind, config.dt, 7 + b, 2, 300))
    np.testing.assert_allclose(plume.state.turn[:, 1:], np.stack([np.cos(np.radians(got[-1])),
                                                                  np.sin(np.radians(got[-1]))], 1), atol=1e-15)
    if regime in ("switch-once", "switch-many"):
        assert len(np.unique(got)) > 1


def test_puffs_ride_and_sensors_read_the_turned_wind():
    """A uniform wind (no noise) turned by the regime's angle: every puff moves by R(theta) (u, v)
    dt at each advance, and the wind read at any cell is R(theta) (u, v) in cells per step."""
    config = _plume("switch-many", switch_every=0.1, switch_jitter=0.02)
    plume = PuffPlume(config, GRID, num_worlds=2, parallel=False)
    plume.reset(seed=3)
    u, v = config.wind.u, config.wind.v
    for _ in range(60):
        before = plume.state.puffs[:, :3, :2].copy()
        plume.step()
        theta = np.radians(plume.state.turn[:, 0])  # the angle this advance used
        moved = plume.state.puffs[:, :3, :2] - before
        want = np.stack([u * np.cos(theta) - v * np.sin(theta), u * np.sin(theta) + v * np.cos(theta)], 1) * config.dt
        np.testing.assert_allclose(moved, np.repeat(want[:, None, :], 3, axis=1), rtol=1e-9, atol=1e-12)
        _, wind = plume.sample(np.array([[3.0, 4.0], [60.5, 33.25]]))
        np.testing.assert_allclose(wind, np.repeat(want[:, None, :], 2, axis=1) / plume.params.cell, rtol=1e-9,
                                   atol=1e-12)


def test_sparse_releases_a_thinned_stream():
    """``sparse`` releases at ``sparsity`` times the rate: bit for bit the plume of the constant
    wind at that rate (rates whose products are exact)."""
    sparse = Puffs(source=(20, 25), wind=Wind(regime="sparse", sparsity=0.5), puff_release_rate=8.0, dt=0.25 / 16,
                   max_num_puffs=4000)
    dense = Puffs(source=(20, 25), wind=Wind(), puff_release_rate=4.0, dt=0.25 / 16, max_num_puffs=4000)
    a, b = PuffPlume(sparse, GRID, num_worlds=2), PuffPlume(dense, GRID, num_worlds=2)
    a.reset(seed=1)
    b.reset(seed=1)
    for _ in range(200):
        a.step()
        b.step()
    np.testing.assert_array_equal(a.state.n_live, b.state.n_live)
    np.testing.assert_array_equal(a.puffs(0), b.puffs(0))


def test_the_switch_many_schedule_has_the_papers_statistics():
    """Singh et al.'s switch-many: a switch every 3 +- 0.3 s, directions N(0, 30 deg) clipped at 60."""
    wind = Wind(regime="switch-many")
    angles = np.array([reference_angles(wind, 0.01, seed, 0, 3000) for seed in range(200)])
    switches = np.diff(angles, axis=1) != 0
    gaps = np.diff(np.flatnonzero(switches[0]))
    assert gaps.min() >= 240 and gaps.max() <= 360  # 300 steps +- 30 each side, two jitters apart
    assert abs(switches.sum(axis=1).mean() - 10) <= 1  # 30 s: about ten switches
    drawn = angles[:, 0]
    assert np.abs(drawn).max() == 60.0 and abs(drawn.std() - 30.0) < 4.0


def test_the_engine_steps_the_regime_as_the_standalone_plume():
    config = Puffs(source=(20, 25), wind=Wind(regime="switch-many", switch_every=0.05, switch_jitter=0.01),
                   puff_release_rate=40.0,
                   spin_up_steps=20)
    sim = Simulator(Scenario(grid_size=GRID, plume=config, n_agents=6, max_steps=10_000,
                             start_region=((22, 15), (60, 35))), num_worlds=2, parallel=False)
    sim.reset(seed=4)
    alone = PuffPlume(config, GRID, num_worlds=2, parallel=False)
    alone.reset(seed=4)
    for _ in range(40):
        sim.step(np.zeros(sim.total_agents, np.int64))
        alone.step()
        np.testing.assert_array_equal(sim.model_state("plume.turn"), alone.state.turn)
        np.testing.assert_array_equal(sim.model_state("plume.puffs"), alone.state.puffs)
    snap = sim.snapshot()
    after = [sim.step(np.zeros(sim.total_agents, np.int64))[0].copy() for _ in range(30)]
    sim.restore(snap)
    again = [sim.step(np.zeros(sim.total_agents, np.int64))[0].copy() for _ in range(30)]
    np.testing.assert_array_equal(after, again)


BAD = [
    (dict(regime="windy"), "Wind.regime"),
    (dict(regime=3), "Wind.regime"),
    (dict(switch_degrees=400.0), "Wind.switch_degrees"),
    (dict(switch_after=(5.0, 1.0)), "Wind.switch_after"),
    (dict(switch_after=1.0), "Wind.switch_after"),
    (dict(switch_after=(-1.0, 1.0)), "Wind.switch_after"),
    (dict(switch_every=0.0), "Wind.switch_every"),
    (dict(switch_jitter=2.0), "Wind.switch_jitter"),
    (dict(direction_std=math.nan), "Wind.direction_std"),
    (dict(direction_max=-1.0), "Wind.direction_max"),
    (dict(sparsity=1.5), "Wind.sparsity"),
]


@pytest.mark.parametrize("kwargs, field", BAD)
def test_bad_regime_values_name_the_field(kwargs, field):
    with pytest.raises(ValidationError, match=field.replace(".", r"\.")):
        Wind(**kwargs)


def test_metadata_carries_the_regime():
    assert "regime" not in Wind().metadata()  # the constant wind's metadata is what it was
    meta = Wind(regime="switch-once", switch_degrees=-30.0).metadata()
    assert meta["regime"] == "switch-once" and meta["switch_degrees"] == -30.0
