"""The protocol episodes behind ``run_search``, compiled: the drawn-source protocol of
``plumes.PoissonHits`` and otto-benchmark's Bayesian protocol, in 2-D and 3-D from one source.

**Drawn source** (``run_world``): the first hit is drawn, the belief(s) start from it, the source is
drawn from that belief (or is the plume's fixed one, the first hit then drawn given its offset;
``start_world``); then each step every agent decides (``team_kernels.decide_group``), moves, and the
search ends when one stands on the source; otherwise each agent draws a hit and the belief(s) are
updated. Among walls (a fixed source; ``solid`` the world's solid cells) the first belief puts no
mass on solid cells and no decision moves into one.

**Bayesian** (``run_bayesian_world``), as ``evaluate.py`` of otto-benchmark (Loisy & Heinonen 2023;
and of otto, Loisy & Eloy 2022) scores a policy when ``DRAW_SOURCE = False``: no source is drawn.
At each step the agent moves; the probability that it has just found the source is its belief at
its new cell, ``p_end``; the episode's expected search time accumulates ``T += p_not_found`` and then
``p_not_found *= 1 - p_end``; if it goes on, a hit is drawn from its predictive law given that the
source is elsewhere, ``Pr(h) = sum_x p(x) L_h(x) / (1 - p_end)``, and the belief is updated with
it. The episode stops when ``p_not_found < stop_p`` (``1e-6``), when ``p_end > 1 - 1e-10``, or
after ``max_steps`` (then it failed); in the isotropic setup of otto and otto-benchmark also when
the agent is stuck, back on the cell it left two steps before for more than ``stuck_after``
(8) steps in a row (then it failed too; ``stuck_after = 0`` turns that off, as their windy setup
does). ``T`` has the same mean as the number of steps of episodes
with a source drawn from the first belief (the policy sees the same law of hits), with a smaller
variance.

Random draws are counter-based (first hit at ``(0, 0)`` of its stream, the hit of agent ``k`` at
step ``t`` at ``(t, k)`` of ``STREAM_HITS``): results never depend on thread count or batch split.

Records: ``SearchSpec(episode, n_agents, shared, max_steps, start, source, stop_p, stuck_after)``
(``start``, ``source`` ``(1, dims)`` int64 cells, ``source[0, 0] < 0`` when drawn), ``Buffers(beliefs,
work, scratch)`` (``(B * G, *belief)`` and the per-thread scratch of ``team_kernels.Scratch``),
``Found(steps, found, first_hit, source)`` and ``Expected(steps, time, not_found, first_hit,
stuck)`` (outputs ``(B,)``, ``source`` ``(B, dims)``), with ``team_kernels``' ``Searchers``,
``Decisions`` and ``WallMasks``.
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np
from numba import prange

from ..engine import rng
from ..engine.jit import njit
from ..models.plumes.poisson_hits.kernels import (STREAM_HITS, cell_of, draw_first_hit, draw_first_hit_at,
                                                  draw_hit, draw_source, draw_weighted, hit_mass, init_belief,
                                                  update_belief)
from .team_kernels import Decisions, Scratch, Searchers, decide_group, solid_of

__all__ = ["SearchSpec", "Buffers", "Found", "Expected", "start_world", "run_world", "run_worlds",
           "run_bayesian_world", "run_bayesian_worlds", "END_TOL"]

END_TOL = 1e-10  # otto-benchmark's EPSILON: p_end > 1 - END_TOL ends the episode

SearchSpec = namedtuple("SearchSpec", "episode n_agents shared max_steps start source stop_p stuck_after")
Buffers = namedtuple("Buffers", "beliefs work scratch")
Found = namedtuple("Found", "steps found first_hit source")
Expected = namedtuple("Expected", "steps time not_found first_hit stuck")


@njit(cache=True)
def _minus(a, b):
    """``a - b`` of two cells (tuples of one length)."""
    if len(a) == 2:
        return (a[0] - b[0], a[1] - b[1])
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(cache=True)
def _same(a, b):
    """Whether the cells ``a`` and ``b`` (tuples of one length) are the same."""
    for k in range(len(a)):
        if a[k] != b[k]:
            return False
    return True


@njit(cache=True)
def _nowhere(cell):
    """``(-1, -1[, -1])``: no cell (of ``cell``'s length)."""
    if len(cell) == 2:
        return (np.int64(-1), np.int64(-1))
    return (np.int64(-1), np.int64(-1), np.int64(-1))


@njit(cache=True, inline="always")
def _move(pos, k, moves, a):
    """Agent ``k`` makes move ``a`` (none when ``a < 0``: no move was allowed)."""
    if a >= 0:
        for c in range(pos.shape[1]):
            pos[k, c] += moves[a, c]


@njit(cache=True)
def start_world(seed, spec, tables, belief, solid):
    """The start of a protocol episode for an agent at ``spec.start``: the first hit, the belief
    after it (``belief``, in place; no mass on ``solid`` cells) and the source, as
    ``plumes.PoissonHits``' reset draws them: the first hit from the first-hit law and the source
    from the belief, or, for a fixed ``spec.source``, the first hit given the source's offset.
    Returns ``(first_hit, source)``, the source a cell tuple."""
    start = cell_of(spec.start, 0, belief)
    if spec.source[0, 0] < 0:
        h0 = draw_first_hit(seed, spec.episode, tables.first_hit_cdf)
        init_belief(belief, tables.likelihood, start, h0, solid)
        return h0, draw_source(seed, spec.episode, belief)
    source = cell_of(spec.source, 0, belief)
    h0 = draw_first_hit_at(seed, spec.episode, tables.likelihood, _minus(source, start))
    init_belief(belief, tables.likelihood, start, h0, solid)
    return h0, source


@njit(cache=True)
def run_world(seed, spec, tables, searchers, beliefs, scratch, out, solid):
    """One drawn-source episode (module docstring) of a world of ``spec.n_agents`` searchers that
    start at ``spec.start``.

    ``searchers``: the world's rows (``pos`` ``(n_agents, dims)`` int32, overwritten; ``kinds``);
    ``beliefs`` ``(1, *belief)`` when ``spec.shared`` (one belief for all agents), else
    ``(n_agents, *belief)``; ``scratch`` one thread's ``Scratch``; ``out`` the world's
    ``Decisions``. Returns ``(steps, found, first_hit, source)``: steps taken (``max_steps`` when
    not found)."""
    p0 = beliefs[0]
    h0, source = start_world(seed, spec, tables, p0, solid)
    n_agents = spec.n_agents
    shared = spec.shared
    for g in range(1, 1 if shared else n_agents):
        beliefs[g] = p0
    pos = searchers.pos
    for k in range(n_agents):
        for c in range(pos.shape[1]):
            pos[k, c] = spec.start[0, c]
    lik = tables.likelihood
    key = rng.stream_key(seed, spec.episode, STREAM_HITS)
    # int64 agent ranges: a literal 0 or 1 would type (and compile) decide_group once more each
    first, count = np.int64(0), np.int64(n_agents)
    for t in range(1, spec.max_steps + 1):
        if shared:
            decide_group(p0, searchers, first, count, tables, scratch, out, solid)
        else:
            for k in range(count):
                decide_group(beliefs[k], searchers, k, k + 1, tables, scratch, out, solid)
        found = False
        for k in range(n_agents):
            _move(pos, k, searchers.moves, out.actions[k])
            if _same(cell_of(pos, k, p0), source):
                found = True
        if found:
            return t, True, h0, source
        for k in range(n_agents):
            cell = cell_of(pos, k, p0)
            hit = draw_hit(key, t, k, lik, _minus(source, cell))
            update_belief(beliefs[0 if shared else k], lik, cell, hit)
    return spec.max_steps, False, h0, source


@njit(cache=True, parallel=True)
def run_worlds(seeds, spec, tables, searchers, buffers, out, results, walls):
    """``run_world`` for each seed ``seeds[b]`` ``(B,)`` int64, in parallel over worlds.

    Per-world buffers are stacked: ``buffers.beliefs`` ``(B * G, *belief)`` with ``G = 1`` if
    ``spec.shared`` else ``n_agents``; ``searchers`` and ``out`` ``B * n_agents`` rows; ``walls`` None
    or a ``WallMasks`` whose ``index`` gives each world's mask. Outputs (``results``, a ``Found``):
    ``(B,)`` steps (int64), found (bool), first hit (int64), ``(B, dims)`` source (int64)."""
    n = spec.n_agents
    g = 1 if spec.shared else n
    for b in prange(seeds.shape[0]):
        tid = numba.get_thread_id()
        rows = Searchers(searchers.pos[b * n:(b + 1) * n], searchers.kinds[b * n:(b + 1) * n],
                         searchers.given[b * n:(b + 1) * n], searchers.moves, searchers.rule)
        s, f, h0, source = run_world(seeds[b], spec, tables, rows, buffers.beliefs[b * g:(b + 1) * g],
                                     Scratch(buffers.work[tid], buffers.scratch[tid]),
                                     Decisions(out.scores[b * n:(b + 1) * n], out.actions[b * n:(b + 1) * n]),
                                     solid_of(walls, b))
        _found(results, b, s, f, h0, source)


# Stores into a record's arrays from a prange body go through a call (see team_kernels._skip).
@njit(cache=True)
def _found(results, b, steps, found, first_hit, source):
    """World ``b``'s outcome into ``results`` (a ``Found``)."""
    results.steps[b] = steps
    results.found[b] = found
    results.first_hit[b] = first_hit
    for k in range(len(source)):
        results.source[b, k] = source[k]


@njit(cache=True)
def _expected(results, b, outcome):
    """Episode ``b``'s outcome ``(steps, expected time, p not found, first hit, stuck)`` into
    ``results`` (an ``Expected``)."""
    results.steps[b] = outcome[0]
    results.time[b] = outcome[1]
    results.not_found[b] = outcome[2]
    results.first_hit[b] = outcome[3]
    results.stuck[b] = outcome[4]


@njit(cache=True)
def _predictive_hit(belief, lik, cell, u):
    """A hit drawn from ``Pr(h) ∝ sum_x p(x) L_h(x - cell)`` with the uniform ``u`` (the ``L_h``
    vanish at the agent's cell, so this is the law given the source is elsewhere)."""
    masses = np.empty(lik.shape[0])
    for hit in range(lik.shape[0]):
        masses[hit] = hit_mass(belief, lik, hit, cell)
    return draw_weighted(masses, 0, u)


@njit(cache=True)
def run_bayesian_world(seed, spec, tables, searchers, beliefs, scratch, out, solid):
    """One episode of the Bayesian protocol (module docstring) for one agent (``searchers`` one row)
    starting at ``spec.start`` (``spec.source`` must say "drawn"); ``beliefs`` ``(1, *belief)``.
    Returns ``(steps, expected_time, p_not_found, first_hit, stuck)``."""
    p = beliefs[0]
    h0, _ = start_world(seed, spec, tables, p, solid)
    pos = searchers.pos
    for c in range(pos.shape[1]):
        pos[0, c] = spec.start[0, c]
    lik = tables.likelihood
    key = rng.stream_key(seed, spec.episode, STREAM_HITS)
    expected = 0.0
    p_not_found = 1.0
    before = _nowhere(cell_of(pos, 0, p))  # the cells one and two steps ago (none yet)
    repeats = 0
    first, one = np.int64(0), np.int64(1)  # not literals (see run_world)
    for t in range(1, spec.max_steps + 1):
        decide_group(p, searchers, first, one, tables, scratch, out, solid)
        two_ago = before
        before = cell_of(pos, 0, p)
        _move(pos, 0, searchers.moves, out.actions[0])
        cell = cell_of(pos, 0, p)
        repeats = repeats + 1 if _same(cell, two_ago) else 0
        p_end = p[cell[::-1]]
        expected += p_not_found
        p_not_found *= 1.0 - p_end
        if p_not_found < spec.stop_p or p_end > 1.0 - END_TOL:
            return t, expected, p_not_found, h0, False
        if t >= spec.max_steps:
            break
        if spec.stuck_after > 0 and repeats > spec.stuck_after:
            return t, expected, p_not_found, h0, True
        hit = _predictive_hit(p, lik, cell, rng.uniform(key, t, 0))
        if update_belief(p, lik, cell, hit) <= 0.0:
            return t, expected, p_not_found, h0, False  # nothing left to find (not reached: hits are drawn possible)
    return spec.max_steps, expected, p_not_found, h0, False


@njit(cache=True, parallel=True)
def run_bayesian_worlds(seeds, spec, tables, searchers, buffers, out, results, walls):
    """``run_bayesian_world`` for each seed ``seeds[b]`` ``(B,)`` int64, in parallel over episodes
    (one agent each: ``searchers``, ``out`` ``B`` rows; ``buffers.beliefs`` ``(B, *belief)``).
    Outputs (``results``, an ``Expected``) ``(B,)``: steps (int64), expected search time and
    probability not found (float64), first hit (int64), stuck (bool)."""
    for b in prange(seeds.shape[0]):
        tid = numba.get_thread_id()
        rows = Searchers(searchers.pos[b:b + 1], searchers.kinds[b:b + 1], searchers.given[b:b + 1],
                         searchers.moves, searchers.rule)
        _expected(results, b, run_bayesian_world(seeds[b], spec, tables, rows, buffers.beliefs[b:b + 1],
                                                 Scratch(buffers.work[tid], buffers.scratch[tid]),
                                                 Decisions(out.scores[b:b + 1], out.actions[b:b + 1]),
                                                 solid_of(walls, b)))
