"""Every model against its plain reference (tests/models_reference.py), step by step.

Hypothesis draws the numbers (grid sizes, non-square; sources; sigma; wind; frames; headings; turn
sizes; thresholds; antenna angles; noise; seeds; actions) for a fixed set of model combinations
(``COMBOS``: one compiled driver each). A ``Simulator`` must match ``NaiveSim``:

* positions, headings, float positions, random sources, movie clocks, rewards, flags and
  observations exactly, bit for bit. The reference computes in the same precision with the same
  libm functions (``math.exp``/``cos``/``sin``/``log`` are the C library's, as Numba's scalar
  ``np.exp``/... are), so no tolerance is needed: the per-point ``exp`` of a Gaussian with a
  random source included (checked with HYPOTHESIS_PROFILE=thorough, 500 examples per combination).
"""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from plume_multi import Simulator

from models_reference import COMBOS, NaiveSim, random_actions, scenarios


def compare(sc, num_worlds, seed, steps, action_seed):
    sim = Simulator(sc, num_worlds=num_worlds)
    ref = NaiveSim(sc, num_worlds)
    obs = sim.reset(seed=seed)
    expected = ref.reset(seed)
    check_state(sim, ref, sc, "reset")
    np.testing.assert_array_equal(obs, expected, err_msg="reset")
    for k, a in enumerate(random_actions(sc, num_worlds, steps, action_seed)):
        obs, rew, term, trunc = sim.step(a)
        e_obs, e_rew, e_term, e_trunc = ref.step(a)
        where = f"step {k + 1}"
        check_state(sim, ref, sc, where)
        np.testing.assert_array_equal(obs, e_obs, err_msg=where)
        np.testing.assert_array_equal(rew, e_rew, err_msg=where)
        np.testing.assert_array_equal(term, e_term, err_msg=where)
        np.testing.assert_array_equal(trunc, e_trunc, err_msg=where)
        assert sim.validate() == [], where
    return sim, ref


def check_state(sim, ref, sc, where):
    np.testing.assert_array_equal(sim.positions, ref.pos, err_msg=where)
    np.testing.assert_array_equal(sim.active, ref.active, err_msg=where)
    np.testing.assert_array_equal(sim.world_steps, ref.t, err_msg=where)
    np.testing.assert_array_equal(sim.state.world_episode, ref.episode, err_msg=where)
    np.testing.assert_array_equal(sim.sources, ref.sources, err_msg=where)
    w, h = sc.grid_size
    assert (sim.positions >= 0).all() and (sim.positions[:, 0] < w).all() and (sim.positions[:, 1] < h).all()
    if sc.action_model.oriented:
        heading = sim.model_state("body.heading")
        np.testing.assert_array_equal(heading, ref.heading, err_msg=where)
        assert ((heading >= 0.0) & (heading < 360.0)).all(), where
    if sc.continuous:
        xy = sim.model_state("body.xy")
        np.testing.assert_array_equal(xy, ref.xy, err_msg=where)
        assert (xy >= 0).all() and (xy[:, 0] <= w - 1).all() and (xy[:, 1] <= h - 1).all()
    if sc.plume.name == "Movie":
        np.testing.assert_array_equal(sim.model_state("plume.start"), ref.movie_start, err_msg=where)
        for b in range(sim.num_worlds):  # the picture is the frame the world shows
            expected = sc.plume.frames[ref.frame(b)].astype(np.float32) * ref.scale
            np.testing.assert_array_equal(sim.plume_image(b), expected, err_msg=where)


@pytest.mark.parametrize("plume_kind, body_kind", COMBOS, ids=["-".join(c) for c in COMBOS])
@given(data=st.data(), num_worlds=st.integers(1, 3), seed=st.integers(0, 2**40),
       action_seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 20))
def test_simulator_matches_reference(plume_kind, body_kind, data, num_worlds, seed, action_seed, steps):
    sc = data.draw(scenarios(plume_kind, body_kind))
    compare(sc, num_worlds, seed, steps, action_seed)


def test_reference_draws_are_the_kernels_draws():
    """The Python transcription of the hash equals plume_multi.engine.rng, word for word."""
    from numba import njit

    from models_reference import normal, stream_key, uniform
    from plume_multi.engine import rng

    @njit
    def draws(seed, episode, stream, a, b):
        key = rng.stream_key(seed, episode, stream)
        return key, rng.uniform(key, a, b), rng.normal(key, a, b)

    for seed, episode, stream, a, b in ((0, 0, 0x6A09E667, 0, 1), (2**63 - 1, 5, 0x9B05688C, 9, 14),
                                        (12345, 2**31, 0xA54FF53A, 2**31 - 1, 7)):
        key, u, z = draws(seed, episode, stream, a, b)
        assert int(key) == stream_key(seed, episode, stream)
        assert u == uniform(int(key), a, b)
        assert abs(z - normal(int(key), a, b)) <= 4 * np.spacing(abs(z))


def test_oriented_lattice_moves_are_the_documented_cells():
    """``(round(step cos h), round(step sin h))`` with 9-decimal cleanup and halves away from 0."""
    from models_reference import grid_step

    assert grid_step(0.0, 1) == (1, 0)
    assert grid_step(90.0, 1) == (0, 1)
    assert grid_step(180.0, 1) == (-1, 0)
    assert grid_step(270.0, 1) == (0, -1)
    assert grid_step(45.0, 1) == (1, 1)
    assert grid_step(135.0, 1) == (-1, 1)
    assert grid_step(60.0, 1) == (1, 1)      # cos 60 = 0.5 (0.5000000000000001 in float64): away from 0
    assert grid_step(120.0, 1) == (-1, 1)    # cos 120 = -0.4999999999999998: cleaned to -0.5, away from 0
    assert grid_step(30.0, 2) == (2, 1)
