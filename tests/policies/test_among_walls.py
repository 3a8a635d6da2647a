"""The belief searchers among walls (docs/walls.md): beliefs with no mass on solid cells, decisions
that never move into one, the Poisson-hit draws the likelihood says, and searches that find the
source behind walls; against the NumPy references of policies_reference.py, in 2-D and 3-D.

The engine runs the Poisson search among walls (PoissonHits + Cardinal + Hits + Belief with a
fixed source), compiled once for this file and tests/benchmarks/test_walls_search_table.py.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from scipy.stats import chisquare

import policies_reference as ref
from plume_multi import Scenario, Simulator, ValidationError, evaluate
from plume_multi.engine import rng
from plume_multi.models.plumes.poisson_hits import PoissonHits
from plume_multi.models.plumes.poisson_hits import kernels as kp
from plume_multi.models.sensors import Belief, Hits
from plume_multi.policies import Greedy, Infotaxis, RandomPolicy, Team
from plume_multi.policies import paths
from plume_multi.policies import team_kernels as tk
from plume_multi.policies.infotaxis import run_search
from plume_multi.policies.team_decide import decide_kinds

KINDS = {"infotaxis": tk.KIND_INFOTAXIS, "space_aware": tk.KIND_SPACE_AWARE, "greedy": tk.KIND_GREEDY,
         "given": tk.KIND_GIVEN}
MOORE = [(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)]


def _load(name):
    path = Path(__file__).resolve().parents[2] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _like(m):
    if m.dims == 3:
        return ref.r3.Likelihood3(m.shape, m.lambda_over_dx, m.R_dt, m.n_hits)
    return ref.nv.Likelihood(m.shape, m.lambda_over_dx, m.R_dt, m.dims, m.n_hits, m.norm)


def _plume(dims):
    return PoissonHits(1.0, 2.0, grid_size=9) if dims == 2 else PoissonHits(1.0, 2.0, dims=3, grid_size=7, n_hits=3)


def _walls(rng_, shape, solid=0.25):
    return rng_.random(shape) < solid


def _free_cell(rng_, mask):
    cells = np.argwhere(~mask)
    return tuple(int(c) for c in cells[rng_.integers(0, len(cells))][::-1])


def _belief(rng_, mask, sharp=3.0):
    p = rng_.random(mask.shape) ** sharp
    p[mask] = 0.0
    p[rng_.random(mask.shape) < 0.1] = 0.0
    return p / p.sum()


# -- free paths -----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(7, 11), (1, 9), (4, 5, 6)])
def test_free_path_distances_are_a_plain_breadth_first_search(shape):
    """Unit steps around the walls; the Manhattan distance where no free path leads (a closed room);
    written in the layout asked for (rows padded to 2W - 1 too)."""
    rng_ = np.random.default_rng(len(shape))
    for trial in range(6):
        mask = _walls(rng_, shape, 0.3)
        if trial == 0 and len(shape) == 2 and shape[0] > 3:  # a closed room: its cells no path reaches
            mask[1:4, 1:4] = True
            mask[2, 2] = False
        start = _free_cell(rng_, mask)
        want = ref.free_path_distances(mask, start)
        w = shape[-1]
        for row in (w, 2 * w - 1):
            plane = row * shape[-2]
            out = np.full(plane * (shape[0] if len(shape) == 3 else 1) + row, np.nan)
            paths.free_path_distances(mask, start, out, np.empty(mask.size, np.int64), (plane, row))
            got = np.stack([out[z * plane:z * plane + shape[-2] * row].reshape(shape[-2], row)[:, :w]
                            for z in range(shape[0] if len(shape) == 3 else 1)])
            np.testing.assert_array_equal(got.reshape(shape), want)
            assert not np.isnan(out[:plane * (shape[0] if len(shape) == 3 else 1)]).any()


# -- beliefs --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dims", [2, 3])
def test_first_beliefs_and_updates_put_no_mass_inside_walls(dims):
    """The first belief is uniform over the other free cells times the first hit's likelihood (the
    NumPy reference); Bayes updates keep solid cells at 0."""
    m, rng_ = _plume(dims), np.random.default_rng(11 + dims)
    like, lik = _like(m), m.centred_likelihood
    for _ in range(4):
        mask = _walls(rng_, m.shape)
        cell = _free_cell(rng_, mask)
        b = np.empty(m.shape)
        assert kp.init_belief(b, lik, cell, 1, mask) > 0
        np.testing.assert_allclose(b, ref.first_belief(like, cell, 1, mask), rtol=1e-12, atol=1e-300)
        assert (b[mask] == 0).all() and abs(b.sum() - 1) < 1e-12
        for _ in range(5):
            cell = _free_cell(rng_, mask)
            hit = int(rng_.integers(0, m.n_hits))
            q = b.copy()
            if kp.update_belief(q, lik, cell, hit) > 0:
                b = q
                assert (b[mask] == 0).all()
    open_ = np.empty(m.shape)
    kp.init_belief(open_, lik, m.start, 2, np.zeros(m.shape, bool))  # no solid cell: the belief of open space
    np.testing.assert_array_equal(open_, m.initial_belief(2))


# -- decisions ------------------------------------------------------------------------------------

@pytest.mark.parametrize("space_aware", [False, True])
@pytest.mark.parametrize("dims", [2, 3])
def test_infotaxis_among_walls_matches_the_reference(dims, space_aware):
    """Moves into a wall are never scored nor chosen; space-aware infotaxis measures its distances
    along free paths. Cells inside the volume (the six moves in one pass) and next to walls."""
    m, rng_ = _plume(dims), np.random.default_rng(3 + dims)
    like, moves = _like(m), [tuple(int(v) for v in row) for row in m.moves]
    beliefs, cells, masks = [], [], []
    for trial in range(8):
        mask = _walls(rng_, m.shape, 0.0 if trial == 0 else 0.2)
        cell = _free_cell(rng_, mask)
        if trial == 1:  # every neighbour free: the 3-D pass over six windows
            cell = tuple(n // 2 for n in m.shape[::-1])
            mask[tuple(slice(c - 1, c + 2) for c in cell[::-1])] = False
        beliefs.append(_belief(rng_, mask))
        cells.append(cell)
        masks.append(mask)
    pol = Infotaxis(space_aware, plume=m)
    got = pol.decide(np.stack(beliefs), cells, walls=np.stack(masks))
    for i in range(len(cells)):
        a, scores = ref.infotaxis_decide(beliefs[i], cells[i], moves, like, masks[i], space_aware)
        assert got[i] == a
        np.testing.assert_array_equal(np.isinf(pol.scores[i]), np.isinf(scores))
        fin = np.isfinite(scores)
        np.testing.assert_allclose(pol.scores[i][fin], scores[fin], rtol=1e-9, atol=1e-12)
        new = tuple(c + s for c, s in zip(cells[i], moves[got[i]]))
        assert not masks[i][new[::-1]]


def test_moore_moves_and_walls_far_away_decide_as_in_open_space():
    """Eight moves (two groups of four windows) among walls, against the reference; walls that are
    not in the way change no decision and no score (free paths are Manhattan's there)."""
    m, rng_ = PoissonHits(1.0, 2.0, grid_size=11), np.random.default_rng(2)
    like = _like(m)
    mask = _walls(rng_, m.shape, 0.15)
    cell = _free_cell(rng_, mask)
    p = _belief(rng_, mask)
    for space_aware in (False, True):
        pol = Infotaxis(space_aware, plume=m)
        a = pol.decide(p[None], [cell], moves=MOORE, walls=mask)[0]
        want, scores = ref.infotaxis_decide(p, cell, MOORE, like, mask, space_aware)
        assert a == want
        fin = np.isfinite(scores)
        np.testing.assert_allclose(pol.scores[0][fin], scores[fin], rtol=1e-9, atol=1e-12)
    far = np.zeros(m.shape, bool)
    far[0, 0] = True  # a solid corner: no shortest path bends around it
    q = _belief(rng_, far)
    for space_aware in (False, True):
        pol = Infotaxis(space_aware, plume=m)
        open_ = pol.decide(q[None], [(5, 5)]), pol.scores.copy()
        walled = pol.decide(q[None], [(5, 5)], walls=far), pol.scores.copy()
        assert open_[0].tolist() == walled[0].tolist()
        np.testing.assert_allclose(walled[1], open_[1], rtol=1e-12)


@pytest.mark.parametrize("dims", [2, 3])
def test_greedy_walks_around_walls_as_the_reference_does(dims):
    m, rng_ = _plume(dims), np.random.default_rng(7 + dims)
    moves = [tuple(int(v) for v in row) for row in m.moves]
    beliefs, cells, masks = [], [], []
    for _ in range(10):
        mask = _walls(rng_, m.shape, 0.25)
        cells.append(_free_cell(rng_, mask))
        beliefs.append(_belief(rng_, mask))
        masks.append(mask)
    g = Greedy(plume=m)
    got = g.decide(np.stack(beliefs), cells, walls=np.stack(masks))
    for i in range(len(cells)):
        a, scores = ref.greedy_decide_among_walls(beliefs[i], cells[i], moves, masks[i])
        assert got[i] == a
        np.testing.assert_array_equal(g.scores[i], scores)
    # a wall between the agent and the target: around it, not against it
    mask = np.zeros(m.shape, bool)
    p = np.zeros(m.shape)
    if dims == 2:
        mask[5, 2:7] = True
        p[7, 4] = 1.0
        cell = (4, 4)
    else:
        mask[4, 1:6, 1:6] = True
        p[6, 3, 3] = 1.0
        cell = (3, 3, 3)
    a = g.decide(p[None], [cell], walls=mask)[0]
    up = moves.index((0, 1) if dims == 2 else (0, 0, 1))
    assert np.isinf(g.scores[0][up]) and a != up and np.isfinite(g.scores[0][a])


@pytest.mark.parametrize("dims", [2, 3])
def test_mixed_teams_among_walls_match_the_sequential_reference(dims):
    """Every kind on one belief; a given move into a wall leaves its agent where it was for the
    believers' update, as the grid bodies do."""
    m, rng_ = _plume(dims), np.random.default_rng(21 + dims)
    like, moves = _like(m), [tuple(int(v) for v in row) for row in m.moves]
    mask = _walls(rng_, m.shape, 0.2)
    cell = _free_cell(rng_, mask)
    blocked = [k for k, s in enumerate(moves) if ref._blocked(tuple(c + d for c, d in zip(cell, s)), m.shape[::-1],
                                                                 mask)]
    if not blocked:  # put a wall in the given agent's way
        mask[tuple(c + d for c, d in zip(cell, moves[0]))[::-1]] = True
        blocked = [0]
    p = _belief(rng_, mask)
    kinds = ["given", "infotaxis", "space_aware", "greedy"]
    given = np.array([blocked[0], 0, 0, 0])
    for rule in ("believer", "independent"):
        got, _ = decide_kinds("test", m, p[None], [cell] * 4, np.array([KINDS[k] for k in kinds]), rule, groups=4,
                              given=given, walls=mask)
        assert got.tolist() == ref.mixed_team_decide(p, [cell] * 4, kinds, moves, like, given=given, rule=rule,
                                                     solid=mask)


def test_decide_refuses_walls_that_contradict_its_inputs():
    m = PoissonHits(1.0, 2.0, grid_size=7)
    pol = Infotaxis(plume=m)
    mask = np.zeros(m.shape, bool)
    mask[2, :5] = True
    p = m.initial_belief(1)  # mass everywhere, the wall's cells included
    with pytest.raises(ValidationError, match="mass on solid cells"):
        pol.decide(p[None], [m.start], walls=mask)
    q = p * ~mask
    q /= q.sum()
    with pytest.raises(ValidationError, match="stands on a solid cell"):
        pol.decide(q[None], [(1, 2)], walls=mask)
    with pytest.raises(ValidationError, match="walls holds 2 masks for 3 beliefs"):
        pol.decide(np.stack([q] * 3), [m.start] * 3, walls=[mask, mask])
    with pytest.raises(ValidationError, match="walls"):
        pol.decide(q[None], [m.start], walls=np.zeros((5, 5), bool))
    closed = np.ones(m.shape, bool)
    closed[3, 3] = closed[0, 0] = False
    r = np.zeros(m.shape)
    r[0, 0] = 1.0
    with pytest.raises(ValidationError, match="no move that stays inside the grid .* and out of walls"):
        Greedy(plume=m).decide(r[None], [(3, 3)], walls=closed)


# -- the plume's draws among walls ----------------------------------------------------------------

def _scenario(geometry, walled=True, n_agents=1, max_steps=300, sensors=None):
    start, source, mask = _load("walls_search").GEOMETRIES[geometry]()
    plume = PoissonHits(1.0, 2.0, grid_size=mask.shape[0], source=source)
    return Scenario(plume=plume, n_agents=n_agents, team=True, max_steps=max_steps, start_positions=(start,) * n_agents,
                    sensors=(Hits(), Belief()) if sensors is None else sensors, walls=mask if walled else None)


def test_hits_among_walls_are_the_likelihood_s_draws_and_the_belief_their_posterior():
    """Walls only block motion and hold no source: every hit is the draw ``kp.draw_hit`` makes at
    the agent's offset from the source (the free-space law the belief's update multiplies by; a
    chi-square test of their law at the most visited offset), the first hit the draw given the
    source's offset, and each belief the NumPy posterior of its hits, 0 inside the walls."""
    mask = np.zeros((11, 11), bool)
    mask[7, 2:9] = True  # a wall between the start (5, 5) and the source (5, 9)
    m = PoissonHits(1.0, 4.0, grid_size=11, source=(5, 9))
    sc = Scenario(plume=m, max_steps=300, start_positions=((5, 5),), sensors=(Hits(), Belief()), walls=mask)
    sim = Simulator(sc, num_worlds=48, autoreset="disabled")
    obs = sim.reset(seed=5)
    policy = RandomPolicy(4, seed=1)
    like = _like(m)
    source = np.array(m.source)
    first = [kp.draw_first_hit_at(5 + b, 0, m.centred_likelihood, tuple(int(v) for v in source - sc.start_positions[0]))
             for b in range(48)]
    np.testing.assert_array_equal(sim.state.models["plume.first_hit"], first)
    beliefs = [ref.first_belief(like, sc.start_positions[0], h, mask) for h in first]
    drawn = {}
    for t in range(1, 31):
        active = sim.state.active.copy()
        obs, _, _, _ = sim.step(policy(obs))
        for b in np.flatnonzero(active):
            cell = tuple(int(v) for v in sim.state.pos[b])
            offset = tuple(int(v) for v in source - cell)
            if offset == (0, 0):
                continue
            hit = int(obs[b, 0])
            key = np.uint64(rng.stream_key(5 + b, 0, kp.STREAM_HITS))
            assert hit == kp.draw_hit(key, t, 0, m.centred_likelihood, offset)
            drawn.setdefault(offset, []).append(hit)
            beliefs[b] = ref.nv.update(beliefs[b], like(hit, *cell), *cell)
    got = sim.state.models["sensor1.belief"]
    for b in range(48):
        if sim.state.active[b]:
            np.testing.assert_allclose(got[b], beliefs[b], rtol=1e-8, atol=1e-15)
        assert (got[b][mask] == 0).all()
    assert sim.validate() == []
    # their law: observed counts of each hit value against the sum over the draws of Pr(h | offset)
    seen = np.zeros(m.n_hits)
    expected = np.zeros(m.n_hits)
    for offset, hits in drawn.items():
        seen += np.bincount(hits, minlength=m.n_hits)
        expected += len(hits) * m.hit_probabilities(float(np.hypot(*offset)))
    keep = expected >= 5
    assert keep.sum() >= 2 and seen.sum() >= 500
    assert chisquare(seen[keep], expected[keep] * seen[keep].sum() / expected[keep].sum()).pvalue > 1e-3


def test_restore_refuses_a_belief_with_mass_inside_a_wall():
    sc = _scenario("wall")
    sim = Simulator(sc, num_worlds=2)
    sim.reset(seed=0)
    snap = dict(sim.snapshot())
    snap["model:sensor1.belief"] = b = snap["model:sensor1.belief"].copy()
    y, x = np.argwhere(sc.walls.mask(0))[0]
    b[0, y, x] = 0.1  # a solid cell of the wall
    b[0] /= b[0].sum()
    with pytest.raises(ValidationError, match="solid cells"):
        sim.restore(snap)


# -- searches -------------------------------------------------------------------------------------

@pytest.mark.parametrize("space_aware,team", [(False, 1), (True, 1), (False, 2)])
def test_the_engine_among_walls_plays_run_search_s_episodes(space_aware, team):
    """``Infotaxis.act`` in a Simulator with walls and ``run_search(walls=...)`` play the same
    episodes (the same first hits, moves and steps)."""
    sc = _scenario("U", n_agents=team, max_steps=120)
    sim = Simulator(sc, num_worlds=16, autoreset="disabled")
    sim.reset(seed=3)
    steps = np.full(16, 120)
    done = np.zeros(16, bool)
    pol = Infotaxis(space_aware)
    for t in range(1, 121):
        _, reward, _, trunc = sim.step(pol.act(sim))
        arrived = (reward.reshape(16, team) > 0).any(axis=1) & ~done
        steps[arrived] = t
        done |= arrived | trunc.reshape(16, team).all(axis=1)
        if done.all():
            break
    res = run_search(sc.plume, 16, team_size=team, space_aware=space_aware, seed=3, max_steps=120,
                     walls=sc.walls)
    np.testing.assert_array_equal(steps, res.steps)
    np.testing.assert_array_equal(sim.state.models["plume.first_hit"], res.first_hit)
    assert res.found.mean() > 0.8


def test_each_world_searches_among_the_mask_it_draws_whatever_the_threads_and_batches():
    """Two masks (a cup, a wall): each episode's world draws one, the engine's and run_search's
    draws agree, and run_search's episodes do not depend on the thread count or the batch split."""
    geometries = _load("walls_search").GEOMETRIES
    (start, source, cup), (_, _, wall) = geometries["U"](), geometries["wall"]()
    plume = PoissonHits(1.0, 2.0, grid_size=cup.shape[0], source=(9, 17))
    sc = Scenario(plume=plume, max_steps=100, start_positions=(start,), sensors=(Hits(), Belief()), walls=[cup, wall])
    sim = Simulator(sc, num_worlds=12, autoreset="disabled")
    sim.reset(seed=40)
    drawn = sim.wall_index.copy()
    assert 0 < drawn.sum() < 12  # both masks drawn
    pol = Infotaxis()
    steps, done = np.full(12, 100), np.zeros(12, bool)
    for t in range(1, 101):
        _, reward, _, trunc = sim.step(pol.act(sim))
        steps[(reward > 0) & ~done] = t
        done |= (reward > 0) | trunc
        if done.all():
            break
    runs = []
    for threads, batch in ((1, 1024), (2, 5)):
        numba.set_num_threads(threads)
        try:
            runs.append(run_search(plume, 12, seed=40, max_steps=100, batch=batch, walls=[cup, wall]))
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    np.testing.assert_array_equal(runs[0].steps, steps)
    np.testing.assert_array_equal(runs[0].steps, runs[1].steps)
    np.testing.assert_array_equal(runs[0].first_hit, runs[1].first_hit)


def test_searchers_find_the_source_behind_walls():
    """A cup around the start, open away from the source (benchmarks/walls_search.py's U): with the
    walls in their beliefs and decisions the searchers find the source (before, blind to the walls:
    infotaxis 0 %, space-aware 57 %, greedy 0 %, a team of two 1.5 % of 200 episodes)."""
    for policy, n_agents, floor in ((Infotaxis(), 1, 0.9), (Infotaxis(space_aware=True), 1, 0.9), (Greedy(), 1, 0.8),
                                    (Team([Infotaxis(), Infotaxis()]), 2, 0.9)):
        res = evaluate(policy, _scenario("U", n_agents=n_agents), 40, seed=100, progress=False)
        assert res.success_rate >= floor, (policy, res.success_rate)


def test_run_search_among_walls_in_3d_and_its_refusals():
    m = PoissonHits(1.0, 2.0, dims=3, grid_size=7, n_hits=3, source=(3, 3, 5))
    mask = np.zeros(m.shape, bool)
    mask[4, 1:6, 1:6] = True  # a floor slab between the start (3, 3, 3) and the source
    res = run_search(m, 12, max_steps=150, walls=mask, seed=2)
    assert res.found.mean() > 0.8 and (res.source == (3, 3, 5)).all()
    for s in range(2, 14):  # the first hit: the draw given the source's offset, as without walls
        assert res.first_hit[s - 2] == kp.draw_first_hit_at(s, 0, m.centred_likelihood, (0, 0, 2))
    with pytest.raises(ValidationError, match="fixed source"):
        run_search(PoissonHits(1.0, 2.0, dims=3, grid_size=7, n_hits=3), 2, walls=mask)
    with pytest.raises(ValidationError, match="fixed source"):
        run_search(PoissonHits(1.0, 2.0, dims=3, grid_size=7, n_hits=3), 2, walls=mask, protocol="bayesian")
    solid_start = mask.copy()
    solid_start[3, 3, 3] = True
    with pytest.raises(ValidationError, match="plume.start"):
        run_search(m, 2, walls=solid_start)
    with pytest.raises(ValidationError, match="run_search: walls"):
        run_search(m, 2, walls=np.zeros((7, 7), bool))
