"""policies.Greedy (most likely source) against the NumPy reference in policies_reference.py, in
2-D and in 3-D (the 3-D decisions on arrays: the beliefs of PoissonHits(dims=3), no Simulator)."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import policies_reference as ref
from plume_multi import StateError, ValidationError
from plume_multi.models.plumes.poisson_hits import PoissonHits
from plume_multi.policies import Greedy
from plume_multi.policies import greedy_kernels as gk

MOVES_CARDINAL = [(0, 1), (1, 0), (0, -1), (-1, 0)]
MOVES_MOORE = [(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1), (0, 0)]
MOVES_CARDINAL_3D = [(0, 1, 0), (1, 0, 0), (0, -1, 0), (-1, 0, 0), (0, 0, 1), (0, 0, -1)]  # Cardinal's in 3-D
MOVES_DIAGONAL_3D = [(1, 1, 1), (-1, 1, 0), (0, -1, -1), (2, 0, 0), (0, 0, 0)]  # any table of steps


def _decide(p, moves, cell, scores, solid=None):
    """The compiled decision for an agent at ``cell`` (scratch rows for the paths among walls)."""
    scratch = np.empty((5, p.size))
    return gk.decide(p, moves, tuple(int(c) for c in cell), scores, solid, scratch)


def _random_belief(rng, shape, sharp=4.0, zeros=0.2, ties=False):
    p = rng.random(shape) ** sharp
    p[rng.random(shape) < zeros] = 0.0
    if ties:  # several cells at the maximum, some equal only to rounding
        cells = rng.choice(p.size, 4, replace=False)
        p.flat[cells] = p.max() * (1 + np.array([0.0, 0.0, 1e-13, -1e-13]))
    return p / p.sum()


@pytest.mark.parametrize("moves", [MOVES_CARDINAL, MOVES_MOORE])
@pytest.mark.parametrize("ties", [False, True])
def test_decisions_match_the_reference_on_random_beliefs(moves, ties):
    rng = np.random.default_rng(1)
    table = np.array(moves, dtype=np.int32)
    for _ in range(60):
        h, w = rng.integers(2, 12, 2)
        p = _random_belief(rng, (h, w), ties=ties)
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        scores = np.empty(len(moves))
        a = _decide(p, table, np.array([x, y]), scores)
        want, want_scores = ref.greedy_decide(p, (x, y), moves)
        assert a == want
        np.testing.assert_array_equal(scores, want_scores)
        target = np.unravel_index(gk.most_likely_cell(p, (x, y)), p.shape)[::-1]
        assert tuple(int(v) for v in target) == ref.greedy_target(p, (x, y))


@pytest.mark.parametrize("moves", [MOVES_CARDINAL_3D, MOVES_DIAGONAL_3D])
def test_3d_decisions_match_the_reference_on_random_beliefs(moves):
    """Volumes of unequal sides (an axis mixed up would show), cells on faces and inside, ties."""
    rng = np.random.default_rng(3)
    table = np.array(moves, dtype=np.int32)
    for trial in range(40):
        d, h, w = rng.integers(1, 7, 3)
        p = _random_belief(rng, (d, h, w), ties=trial % 2 == 1 and d * h * w >= 4)
        cell = np.array([rng.integers(0, w), rng.integers(0, h), rng.integers(0, d)])
        scores = np.empty(len(moves))
        a = _decide(p, table, cell, scores)
        want, want_scores = ref.greedy_decide(p, cell, moves)
        assert a == want
        np.testing.assert_array_equal(scores, want_scores)
        target = np.unravel_index(gk.most_likely_cell(p, tuple(int(c) for c in cell)), p.shape)[::-1]
        assert tuple(int(v) for v in target) == ref.greedy_target(p, cell)


def test_3d_ties_and_paths_are_the_documented_ones():
    moves = np.array(MOVES_CARDINAL_3D, dtype=np.int32)
    scores = np.empty(6)
    # uniform but the agent's cell (2, 1, 2) in a 6 x 5 x 4 volume: the six neighbours tie, the
    # first in (z, y, x) row-major order is the one below (lowest z): the move (0, 0, -1)
    p = np.ones((4, 5, 6))
    p[2, 1, 2] = 0
    p /= p.sum()
    assert gk.most_likely_cell(p, (2, 1, 2)) == (1 * 5 + 1) * 6 + 2
    assert _decide(p, moves, np.array([2, 1, 2]), scores) == 5 and scores.tolist() == [2.0, 2.0, 2.0, 2.0, 4.0, 0.0]
    # the target 3 along x, 1 along y, 2 down z: the longest offset first (+x), then z before y
    q = np.zeros((4, 5, 6))
    q[0, 2, 4] = 1.0
    assert _decide(q, moves, np.array([1, 1, 2]), scores) == 1
    assert _decide(q, moves, np.array([3, 1, 2]), scores) == 5
    assert _decide(q, moves, np.array([4, 1, 1]), scores) == 0  # one up y, one down z: the lower index
    # off the grid (the corner): never chosen, even toward the target
    assert _decide(q, moves, np.array([5, 4, 3]), scores) == 5 and np.isinf(scores[[0, 1, 4]]).all()


def test_ties_and_paths_are_the_documented_ones():
    moves = np.array(MOVES_CARDINAL, dtype=np.int32)
    scores = np.empty(4)
    # a uniform belief but the agent's cell: the four neighbours tie, the first in row-major
    # order (lowest y) is the target, so the agent steps DOWN (action 2)
    p = np.ones((5, 7))
    p[2, 3] = 0
    assert gk.most_likely_cell(p / p.sum(), (3, 2)) == 1 * 7 + 3  # (x, y) = (3, 1)
    assert _decide(p / p.sum(), moves, np.array([3, 2]), scores) == 2
    # the target 3 right and 1 up: the longer offset first (RIGHT), then, on the diagonal, the
    # lowest action (UP before RIGHT)
    q = np.zeros((5, 7))
    q[3, 5] = 1.0
    assert _decide(q, moves, np.array([2, 2]), scores) == 1 and scores.tolist() == [9.0, 5.0, 13.0, 17.0]
    assert _decide(q, moves, np.array([4, 2]), scores) == 0  # one right, one up: UP (index 0) wins the tie
    # off the grid: never chosen
    corner = np.zeros((5, 7))
    corner[0, 0] = 1.0
    assert _decide(corner, moves, np.array([0, 0]), scores) == 0 and scores[2] == scores[3] == np.inf


@pytest.mark.parametrize("dims", [2, 3])
def test_batched_decisions_are_the_single_ones_for_any_thread_count_and_team_rules(dims):
    m = PoissonHits(1.0, 2.0, grid_size=9) if dims == 2 else PoissonHits(1.0, 2.0, dims=3, grid_size=7, n_hits=3)
    like = (ref.nv.Likelihood(m.shape, m.lambda_over_dx, m.R_dt, m.dims, m.n_hits, m.norm) if dims == 2
            else ref.r3.Likelihood3(m.shape, m.lambda_over_dx, m.R_dt, m.n_hits))
    rng = np.random.default_rng(2)
    beliefs = np.stack([_random_belief(rng, m.shape, ties=i % 3 == 0) for i in range(12)])
    pos = rng.integers(0, m.grid_size, (12, dims))
    pos[0] = (0, m.grid_size - 1, 3)[:dims]  # on faces
    moves = [tuple(int(v) for v in row) for row in m.moves]
    single = [ref.greedy_decide(beliefs[i], pos[i], moves) for i in range(12)]
    results = []
    for threads in (1, 2):
        numba.set_num_threads(threads)
        try:
            policy = Greedy(plume=m)
            results.append((policy.decide(beliefs, pos), policy.scores.copy()))
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    assert results[0][0].tolist() == [a for a, _ in single]
    np.testing.assert_array_equal(results[0][1], np.stack([s for _, s in single]))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    # four agents at the start on the first belief: independent choices coincide, believers spread out
    team = np.array([m.start] * 4)
    b0 = m.initial_belief(1)[None]
    independent = Greedy(plume=m, team_rule="independent").decide(b0, team, groups=4)
    believer = Greedy(plume=m).decide(b0, team, groups=4)
    assert len(set(independent.tolist())) == 1 and len(set(believer.tolist())) > 1
    assert believer.tolist() == ref.mixed_team_decide(b0[0], team.tolist(), ["greedy"] * 4, moves, like)


def test_greedy_checks_its_inputs():
    m = PoissonHits(1.0, 2.0, grid_size=7)
    with pytest.raises(StateError, match="Greedy.decide: no plume"):
        Greedy().decide(np.ones((1, 7, 7)) / 49, [[3, 3]])
    with pytest.raises(ValidationError, match="Greedy.team_rule"):
        Greedy(team_rule="swarm")
    with pytest.raises(ValidationError, match="Greedy.plume"):
        Greedy(plume="poisson")
    with pytest.raises(ValidationError, match="Greedy.decide: positions outside"):
        Greedy(plume=m).decide(np.ones((1, 7, 7)) / 49, [[7, 0]])
    with pytest.raises(ValidationError, match="Greedy.decide: beliefs must hold probabilities"):
        Greedy(plume=m).decide(np.full((1, 7, 7), np.nan), [[0, 0]])
    m3 = PoissonHits(1.0, 2.0, dims=3, grid_size=7)  # 3-D: every shape follows the volume's
    volume = m3.initial_belief(1)[None]
    with pytest.raises(ValidationError, match=r"Greedy.decide: beliefs has shape \(1, 7, 7\); expected \(G, 7, 7, 7\)"):
        Greedy(plume=m3).decide(np.ones((1, 7, 7)) / 49, [[3, 3, 3]])
    with pytest.raises(ValidationError, match=r"Greedy.decide: positions has shape \(1, 2\).*expected \(M, 3\)"):
        Greedy(plume=m3).decide(volume, [[3, 3]])
    with pytest.raises(ValidationError, match=r"Greedy.decide: moves has shape \(4, 2\); expected \(K, 3\)"):
        Greedy(plume=m3).decide(volume, [[3, 3, 3]], moves=MOVES_CARDINAL)
    with pytest.raises(ValidationError, match="Greedy.decide: positions outside the 7 x 7 x 7 grid"):
        Greedy(plume=m3).decide(volume, [[3, 7, 3]])
