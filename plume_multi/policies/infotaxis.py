"""Infotaxis on Poisson-hit beliefs: a vectorized policy, and batched protocol episodes.

``Infotaxis`` chooses, for many agents at once, the move that minimizes the expected entropy of
the next belief about the source (Vergassola, Villermaux & Shraiman, Nature 2007), or the
space-aware value of Loisy & Eloy (2022). Agents that share one belief (a team) choose in turn,
each assuming the earlier ones receive their most likely hit (``team_rule="believer"``).

``run_search`` plays whole episodes of the protocol of ``PoissonHits`` (first hit, belief,
source drawn from it, then infotaxis until the source is found or ``max_steps``), many worlds in
parallel, and returns the search times. The compiled pieces live in
``plume_multi.models.plumes.poisson_hits.kernels``, so the engine can step the same model one step at a time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from ..checks import is_int
from ..engine.threads import PARALLEL_LOCK
from ..errors import ValidationError
from . import infotaxis_kernels as ik
from ..models.plumes.poisson_hits import PoissonHits
from .belief_state import belief_view, decision_inputs, shaped_for, simulator_of

__all__ = ["Infotaxis", "SearchResult", "run_search", "TEAM_RULES"]

TEAM_RULES = {"independent": ik.RULE_INDEPENDENT, "believer": ik.RULE_BELIEVER}


def _tables(plume: PoissonHits):
    return (np.ascontiguousarray(plume.centred_likelihood), np.ascontiguousarray(plume.centred_likelihood_log),
            np.ascontiguousarray(plume.centred_manhattan), np.ascontiguousarray(plume.moves))


class Infotaxis:
    """Infotaxis (or space-aware infotaxis) for M agents at once.

    Args:
        space_aware: minimize ``sum_h (1 - p_end) P(h) log2(D_h + 2^(S_h - 1) - 1/2)`` (Loisy &
            Eloy 2022) instead of the expected entropy ``(1 - p_end) sum_h P(h) S_h`` (bits).
        plume: the ``PoissonHits`` model whose likelihood the beliefs follow; may also be given
            to ``decide``.
        team_rule: how agents that share a belief choose: ``"believer"`` (in agent order, each
            on the belief updated with the most likely hit of every earlier agent's move) or
            ``"independent"`` (each on the shared belief alone; agents together then move
            together).

    ``decide(beliefs, positions)`` returns actions ``(M,)`` int64 (indices into
    ``plume.moves``); ``scores`` then holds each move's value ``(M, K)`` (``inf`` off the grid).
    Moves off the grid are never chosen. No memory between calls. ``act(sim)`` decides for a
    ``Simulator`` on the float64 beliefs of its ``sensors.Belief`` state.

    Example:
        >>> from plume_multi import Simulator
        >>> from plume_multi.presets import poisson_search
        >>> sim = Simulator(poisson_search(lambda_over_dx=1.0, R_dt=2.0), num_worlds=64)
        >>> obs = sim.reset(seed=0)
        >>> policy = Infotaxis()
        >>> obs, reward, terminated, truncated = sim.step(policy.act(sim))
    """

    def __init__(self, space_aware: bool = False, *, plume: PoissonHits | None = None,
                 team_rule: str = "believer"):
        if not isinstance(space_aware, (bool, np.bool_)):
            raise ValidationError(f"Infotaxis.space_aware: got {space_aware!r}; expected True or False")
        if plume is not None and not isinstance(plume, PoissonHits):
            raise ValidationError(f"Infotaxis.plume: got {plume!r}; expected a PoissonHits model or None")
        if team_rule not in TEAM_RULES:
            raise ValidationError(f"Infotaxis.team_rule: got {team_rule!r}; expected one of {sorted(TEAM_RULES)}")
        self.space_aware = bool(space_aware)
        self.plume = plume
        self.team_rule = team_rule
        self.scores = None
        self._buffers = None

    def reset(self, mask=None) -> None:
        """No memory to clear (the beliefs are the memory, held by the caller)."""

    def _buffers_for(self, h: int, w: int, m: int, k: int):
        key = (h, w, m, k)
        if self._buffers is None or self._buffers[0] != key:
            t = numba.config.NUMBA_NUM_THREADS  # scratch per thread, not per agent: it stays in cache
            self._buffers = (key, np.empty((t, h, w)), np.empty((t, 3, h * (2 * w - 1))),
                             np.empty((m, k)), np.empty(m, dtype=np.int64))
        return self._buffers[1:]

    def act(self, sim):
        """Actions for every agent of a ``Simulator`` (or of the simulator of a front-end:
        ``parallel_env``, ``multi_agent_vector_env``) whose scenario has a ``PoissonHits`` plume and a
        ``sensors.Belief``: decided on the beliefs in its state, with its body's moves (a move off the
        grid is never chosen). ``(B*N,)`` int64; for a PettingZoo env, ``{agent: action}`` of its
        live agents."""
        view = belief_view(simulator_of(sim, "Infotaxis.act"), "Infotaxis.act")
        return shaped_for(sim, self.decide(view.beliefs, view.positions, groups=view.groups, plume=view.plume,
                                           moves=view.moves, active=view.active))

    def decide(self, beliefs, positions, groups=None, plume: PoissonHits | None = None, moves=None,
               active=None) -> np.ndarray:
        """Actions of M agents.

        Args:
            beliefs: ``(G, H, W)`` float64, each non-negative and summing to 1 (``(H, W)`` =
                ``plume.shape``).
            positions: ``(M, 2)`` integer ``(x, y)`` cells, inside the grid.
            groups: ``None`` (one belief per agent, ``G == M``), an int ``n`` (teams of ``n``:
                agents ``g*n .. g*n+n-1`` share ``beliefs[g]``, ``M == G * n``), or
                ``(G+1,)`` increasing offsets (agents ``groups[g] .. groups[g+1]-1`` share
                ``beliefs[g]``).
            plume: overrides the one given at construction.
            moves: ``(K, 2)`` int ``(dx, dy)`` of each action (default ``plume.moves``).
            active: ``(M,)`` bool, or None (all): groups without an active agent are skipped
                (their actions are 0 and their scores ``inf``).

        Returns:
            ``(M,)`` int64 actions (a fresh array); ``self.scores`` ``(M, K)`` float64.
        """
        plume = plume if plume is not None else self.plume
        d = decision_inputs("Infotaxis.decide", plume, beliefs, positions, groups, moves, active)
        h, w = plume.shape
        lik, llogl, manh, _ = _tables(plume)
        m = d.positions.shape[0]
        moves = d.moves
        work, scratch, scores, actions = self._buffers_for(h, w, m, moves.shape[0])
        with PARALLEL_LOCK:  # a parallel kernel: one launch at a time (engine/threads.py)
            ik.decide_batch(d.beliefs, d.starts, d.positions, lik, llogl, manh, moves, self.space_aware,
                            TEAM_RULES[self.team_rule], work, scratch, scores, actions, d.group_active)
        self.scores = scores
        return actions.copy()

    __call__ = decide


@dataclass(frozen=True)
class SearchResult:
    """Outcome of ``run_search``: one entry per episode (world).

    Attributes:
        steps: ``(B,)`` int64 steps until the source was found (``max_steps`` if not).
        found: ``(B,)`` bool.
        first_hit: ``(B,)`` int64 hit drawn at the start.
        source: ``(B, 2)`` int64 source cell ``(x, y)``.
        max_steps: the step cap.
    """

    steps: np.ndarray
    found: np.ndarray
    first_hit: np.ndarray
    source: np.ndarray
    max_steps: int

    @property
    def mean(self) -> float:
        """Mean search time (steps; capped episodes count ``max_steps``)."""
        return float(self.steps.mean())

    @property
    def ci95(self) -> float:
        """Half-width of the 95 % confidence interval of ``mean`` (normal approximation)."""
        n = len(self.steps)
        return float(1.96 * self.steps.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf

    @property
    def n_capped(self) -> int:
        return int((~self.found).sum())


def run_search(plume: PoissonHits, n_episodes: int, *, team_size: int = 1, shared: bool = True,
               space_aware: bool = False, team_rule: str = "believer", seed: int = 0,
               max_steps: int = 1000, batch: int = 1024) -> SearchResult:
    """Play ``n_episodes`` protocol episodes of ``plume`` with infotaxis, in parallel.

    Episode ``i`` is world seed ``seed + i``, episode 0 of its counter-based streams: the result
    is the same for any thread count and any ``batch``.

    Args:
        plume: the model.
        n_episodes: number of episodes (worlds), >= 1.
        team_size: searchers per world, all starting at the centre; the search ends when one
            stands on the source.
        shared: the team pools its hits into one belief (``True``) or each keeps its own.
        space_aware, team_rule: as ``Infotaxis``.
        seed: base seed, 0 <= seed < 2**63 - n_episodes.
        max_steps: step cap, >= 1.
        batch: worlds per kernel call (buffers are allocated for one batch).
    """
    if not isinstance(plume, PoissonHits):
        raise ValidationError(f"run_search: plume={plume!r}; expected a PoissonHits model")
    for name, v, lo in (("n_episodes", n_episodes, 1), ("team_size", team_size, 1), ("max_steps", max_steps, 1),
                        ("batch", batch, 1), ("seed", seed, 0)):
        if not is_int(v) or v < lo:
            raise ValidationError(f"run_search: {name}={v!r}; expected an integer >= {lo}")
    if seed + n_episodes >= 2 ** 63:
        raise ValidationError(f"run_search: seed={seed!r}; expected seed + n_episodes < 2**63")
    if team_rule not in TEAM_RULES:
        raise ValidationError(f"run_search: team_rule={team_rule!r}; expected one of {sorted(TEAM_RULES)}")
    for name, v in (("shared", shared), ("space_aware", space_aware)):
        if not isinstance(v, (bool, np.bool_)):
            raise ValidationError(f"run_search: {name}={v!r}; expected True or False")
    lik, llogl, manh, moves = _tables(plume)
    cdf = np.ascontiguousarray(plume.first_hit_cdf)
    h, w = plume.shape
    n = int(team_size)
    per_world = 1 if shared else n
    nb = min(int(batch), int(n_episodes))
    beliefs = np.empty((nb * per_world, h, w))
    threads = numba.config.NUMBA_NUM_THREADS
    work = np.empty((threads, h, w))
    scratch = np.empty((threads, 3, h * (2 * w - 1)))
    pos = np.empty((nb * n, 2), dtype=np.int32)
    scores = np.empty((nb * n, moves.shape[0]))
    actions = np.empty(nb * n, dtype=np.int64)
    steps = np.empty(n_episodes, dtype=np.int64)
    found = np.empty(n_episodes, dtype=np.bool_)
    first = np.empty(n_episodes, dtype=np.int64)
    source = np.empty((n_episodes, 2), dtype=np.int64)
    seeds = np.arange(seed, seed + n_episodes, dtype=np.int64)
    # a parallel kernel: one launch at a time (engine/threads.py)
    with PARALLEL_LOCK:
        old = numba.set_parallel_chunksize(1)  # episodes differ in length: hand them out one by one
        try:
            for s0 in range(0, n_episodes, nb):
                s1 = min(s0 + nb, n_episodes)
                k = s1 - s0
                ik.run_worlds(seeds[s0:s1], 0, n, bool(shared), TEAM_RULES[team_rule], bool(space_aware), cdf,
                              lik, llogl, manh, moves, int(max_steps), beliefs[:k * per_world],
                              work, scratch, pos[:k * n], scores[:k * n],
                              actions[:k * n], steps[s0:s1], found[s0:s1], first[s0:s1], source[s0:s1])
        finally:
            numba.set_parallel_chunksize(old)
    return SearchResult(steps, found, first, source, int(max_steps))
