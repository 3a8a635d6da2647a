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

from ..checks import check_choice, check_int, check_memory, check_real
from ..engine.threads import PARALLEL_LOCK
from ..errors import ValidationError
from . import bayesian_protocol as bp
from . import team_kernels as tk
from ..models.plumes.poisson_hits import PoissonHitPlume, PoissonHits
from .belief_state import belief_view, scenario_with_belief, scratch_for, shaped_for, simulator_of, tables_of
from .team_decide import TEAM_RULES, decide_kinds

__all__ = ["Infotaxis", "SearchResult", "run_search", "TEAM_RULES", "PROTOCOLS"]

MAX_COUNT = 2**31 - 1  # episodes, searchers, steps and batch of run_search


class Infotaxis:
    """Infotaxis (or space-aware infotaxis) for M agents at once.

    Args:
        space_aware: minimize ``sum_h (1 - p_end) P(h) log2(D_h + 2^(S_h - 1) - 1/2)`` (Loisy &
            Eloy 2022) instead of the expected entropy ``(1 - p_end) sum_h P(h) S_h`` (bits).
        plume: the ``PoissonHits`` model whose likelihood the beliefs follow; may also be given
            to ``decide``.
        likelihood: the observation model of the beliefs (``plume_multi.models.likelihoods``), or
            None: in ``evaluate`` (``scenario_for``) the Poisson-hit plume's closed form, or a
            likelihood calibrated from the scenario's plume (any plume: ``plume_multi.calibration.calibrate``,
            cached on disk). Give one to study a mismatched model (``PoissonLikelihood`` of a
            ``PoissonHits`` with detection thresholds on a puff plume).
        team_rule: how agents that share a belief choose: ``"believer"`` (in agent order, each
            on the belief updated with the most likely hit of every earlier agent's move) or
            ``"independent"`` (each on the shared belief alone; agents together then move
            together).

    ``decide(beliefs, positions)`` returns actions ``(M,)`` int64 (indices into
    ``plume.moves``); ``scores`` then holds each move's value ``(M, K)`` (``inf`` off the grid or
    into a wall). Moves off the grid or into a wall are never chosen. No memory between calls.
    ``act(sim)`` decides for a ``Simulator`` on the float64 beliefs of its ``sensors.Belief``
    state, among the scenario's walls if it has any, with the likelihood that sensor follows.
    ``scenario_for(scenario)``: the scenario as the searcher acts in it (``evaluate`` calls it):
    its sensors replaced by one ``sensors.Belief(likelihood=...)`` unless it has a Belief already
    and no likelihood was given; a body without a table of moves replaced by ``Cardinal()`` (with
    a warning).

    Among walls (``docs/walls.md``) the beliefs put no mass on solid cells, and space-aware
    infotaxis measures its distance ``D`` along free paths around them (the Manhattan distance
    where the walls are not in the way).

    Example:
        >>> from plume_multi import Simulator
        >>> from plume_multi.scenarios import poisson_search
        >>> sim = Simulator(poisson_search(lambda_over_dx=1.0, R_dt=2.0), num_worlds=64)
        >>> obs = sim.reset(seed=0)
        >>> policy = Infotaxis()
        >>> obs, reward, terminated, truncated = sim.step(policy.act(sim))
    """

    # what it works with (plume_multi.capabilities)
    dimensions = (2, 3)
    several_sources = False  # the belief is over one source's cell
    # no needs: it brings its own Belief sensor (a likelihood of the plume) and a grid body
    # (scenario_for, which evaluate calls)

    def __init__(self, space_aware: bool = False, *, plume: PoissonHits | None = None,
                 team_rule: str = "believer", likelihood=None):
        if not isinstance(space_aware, (bool, np.bool_)):
            raise ValidationError(f"Infotaxis.space_aware: got {space_aware!r}; expected True or False")
        if plume is not None and not isinstance(plume, PoissonHitPlume):
            raise ValidationError(f"Infotaxis.plume: got {plume!r}; expected a Poisson-hit plume (PoissonHits, "
                                  "WindyPoissonHits) or None")
        check_choice("Infotaxis", "team_rule", team_rule, sorted(TEAM_RULES))
        self.likelihood = checked_likelihood("Infotaxis", likelihood)
        self.space_aware = bool(space_aware)
        self.plume = plume
        self.team_rule = team_rule
        self.scores = None

    def reset(self, mask=None) -> None:
        """No memory to clear (the beliefs are the memory, held by the caller)."""

    def scenario_for(self, scenario):
        """``scenario`` as this searcher acts in it (the class docstring; ``belief_state.scenario_with_belief``)."""
        return scenario_with_belief("Infotaxis", scenario, self.likelihood)

    def act(self, sim):
        """Actions for every agent of a ``Simulator`` (or of the simulator of a front-end:
        ``parallel_env``, ``multi_agent_vector_env``) whose scenario has a Poisson-hit plume and a
        ``sensors.Belief``: decided on the beliefs in its state, with its body's moves (a move off the
        grid or into a wall is never chosen). ``(B*N,)`` int64; for a PettingZoo env,
        ``{agent: action}`` of its live agents."""
        view = belief_view(simulator_of(sim, "Infotaxis.act"), "Infotaxis.act")
        return shaped_for(sim, self.decide(view.beliefs, view.positions, groups=view.groups, plume=view.plume,
                                           moves=view.moves, active=view.active, walls=view.walls))

    def decide(self, beliefs, positions, groups=None, plume: PoissonHits | None = None, moves=None,
               active=None, walls=None) -> np.ndarray:
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
            moves: ``(K, 2)`` int ``(dx, dy)`` of each action (``(K, 3)`` in 3-D; default
                ``plume.moves``).
            active: ``(M,)`` bool, or None (all): groups without an active agent are skipped
                (their actions are 0 and their scores ``inf``).
            walls: None, or the solid cells of the beliefs' worlds as ``Scenario(walls=...)`` takes
                them: one bool mask of the grid's shape (every belief's) or one per belief; no
                belief may put mass on a solid cell, no agent stand on one.

        Returns:
            ``(M,)`` int64 actions (a fresh array); ``self.scores`` ``(M, K)`` float64.
        """
        plume = plume if plume is not None else self.plume if self.plume is not None else self.likelihood
        kind = tk.KIND_SPACE_AWARE if self.space_aware else tk.KIND_INFOTAXIS
        actions, self.scores = decide_kinds("Infotaxis.decide", plume, beliefs, positions, lambda m: kind,
                                            self.team_rule, groups=groups, moves=moves, active=active, walls=walls)
        return actions

    __call__ = decide


def checked_likelihood(who: str, likelihood):
    """``likelihood`` when it is None or a likelihood of ``plume_multi.models.likelihoods``."""
    from ..models.likelihoods import Likelihood

    if likelihood is not None and not isinstance(likelihood, Likelihood):
        raise ValidationError(f"{who}.likelihood: got {likelihood!r}; expected None or a likelihood of "
                              "plume_multi.models.likelihoods (calibrate(scenario), PoissonLikelihood(plume))")
    return likelihood


PROTOCOLS = ("drawn", "bayesian")


@dataclass(frozen=True)
class SearchResult:
    """Outcome of ``run_search``: one entry per episode (world).

    Attributes:
        steps: ``(B,)`` int64 steps played (``drawn``: until the source was found, ``max_steps``
            if not; ``bayesian``: until the episode stopped).
        found: ``(B,)`` bool (``bayesian``: the probability not found fell below ``stop_p``; an
            episode stopped as stuck has not).
        first_hit: ``(B,)`` int64 hit drawn at the start.
        source: ``(B, 2)`` int64 source cell ``(x, y)`` (``(-1, -1)`` in the Bayesian protocol).
        max_steps: the step cap.
        search_time: ``(B,)`` float64 each episode's search time: ``steps`` (``drawn``), or the
            expected search time ``sum_t Pr(not found before t)`` (``bayesian``).
        protocol: ``"drawn"`` or ``"bayesian"``.
    """

    steps: np.ndarray
    found: np.ndarray
    first_hit: np.ndarray
    source: np.ndarray
    max_steps: int
    search_time: np.ndarray | None = None
    protocol: str = "drawn"

    def __post_init__(self):
        if self.search_time is None:
            object.__setattr__(self, "search_time", self.steps.astype(np.float64))

    @property
    def mean(self) -> float:
        """Mean search time (steps; capped episodes count ``max_steps``)."""
        return float(self.search_time.mean())

    @property
    def ci95(self) -> float:
        """Half-width of the 95 % confidence interval of ``mean`` (normal approximation)."""
        n = len(self.search_time)
        return float(1.96 * self.search_time.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf

    @property
    def n_capped(self) -> int:
        return int((~self.found).sum())


def _check_search_memory(plume: PoissonHitPlume, n_episodes: int, team_size: int, shared: bool, batch: int) -> None:
    """Refuse, before allocating, the episodes or the team whose arrays ``run_search`` could not
    hold: per episode its results (about 64 bytes), per batch of worlds the beliefs and each
    searcher's position, scores and action."""
    cells = int(np.prod(plume.shape))
    dims = len(plume.shape)
    nb = min(batch, n_episodes)
    per_world = 1 if shared else team_size
    needed = n_episodes * (5 * 8 + 2 + 8 * dims) + nb * (per_world * cells * 8 + team_size * (4 * dims + 8 * 9))
    check_memory("run_search", needed, f"{n_episodes} episodes of {team_size} searcher(s) in batches of {nb}",
                 "Run fewer episodes (in several calls, with seeds that follow on), a smaller team or a smaller batch.")


def run_search(plume: PoissonHitPlume, n_episodes: int, *, team_size: int = 1, shared: bool = True,
               space_aware: bool = False, team_rule: str = "believer", seed: int = 0,
               max_steps: int = 1000, batch: int = 1024, protocol: str = "drawn", stop_p: float = 1e-6,
               stuck_after: int = 0, progress: bool = False, walls=None) -> SearchResult:
    """Play ``n_episodes`` protocol episodes of ``plume`` with infotaxis, in parallel.

    Episode ``i`` is world seed ``seed + i``, episode 0 of its counter-based streams: the result
    is the same for any thread count and any ``batch``.

    Args:
        plume: the model (``PoissonHits`` or ``WindyPoissonHits``); the searchers start at
            ``plume.start``.
        n_episodes: number of episodes (worlds), 1..2**31 - 1; refused before anything is allocated
            when their arrays would not fit in the memory available.
        team_size: searchers per world, all starting at the start cell; the search ends when one
            stands on the source; 1..2**31 - 1.
        shared: the team pools its hits into one belief (``True``) or each keeps its own.
        space_aware: as ``Infotaxis``.
        team_rule: as ``Infotaxis``.
        seed: base seed, 0 <= seed < 2**63 - n_episodes.
        max_steps: step cap, 1..2**31 - 1.
        batch: worlds per kernel call (buffers are allocated for one batch).
        protocol: ``"drawn"`` (default: a source drawn from the first belief, or the plume's
            fixed one; the search time is the number of steps to stand on it) or
            ``"bayesian"`` (otto-benchmark's evaluation: no source, the expected search time;
            one searcher, a drawn source; ``plume_multi.policies.bayesian_protocol``).
        stop_p: the Bayesian protocol stops an episode when the probability that the source is
            not found yet falls below this (otto-benchmark: ``1e-6``), in ``(0, 1)``.
        stuck_after: the Bayesian protocol also stops an episode, as failed, when the agent has
            stood on the cell it left two steps before for more than this many steps in a row
            (otto's isotropic setup: 8; 0, the default, never).
        progress: a tqdm bar over the episodes (on stderr).
        walls: None, or solid cells as ``Scenario(walls=...)`` takes them (a bool mask of the
            plume's grid, a sequence of masks, a ``Walls``): episode ``i`` uses the mask its world
            seed draws, ``walls.mask_index(seed + i, 0, K)``, as a ``Simulator`` does. Walls need
            the ``"drawn"`` protocol with the plume's fixed ``source``, on a free cell, and a free
            start; the first belief puts no mass on solid cells and no searcher moves into one
            (``docs/walls.md``).
    """
    if not isinstance(plume, PoissonHitPlume):
        raise ValidationError(f"run_search: plume={plume!r}; expected a Poisson-hit plume (PoissonHits, WindyPoissonHits)")
    # the kernels count episodes, steps and searchers in 64-bit integers: a cap of 2**63 wrapped to
    # a negative step count (a mean of -9.2e18)
    n_episodes = check_int("run_search", "n_episodes", n_episodes, 1, MAX_COUNT)
    team_size = check_int("run_search", "team_size", team_size, 1, MAX_COUNT)
    max_steps = check_int("run_search", "max_steps", max_steps, 1, MAX_COUNT)
    batch = check_int("run_search", "batch", batch, 1, MAX_COUNT)
    seed = check_int("run_search", "seed", seed, 0, 2**63 - 1)
    if seed + n_episodes >= 2 ** 63:
        raise ValidationError(f"run_search.seed: got {seed!r}; expected seed + n_episodes < 2**63")
    check_choice("run_search", "team_rule", team_rule, sorted(TEAM_RULES))
    for name, v in (("shared", shared), ("space_aware", space_aware), ("progress", progress)):
        if not isinstance(v, (bool, np.bool_)):
            raise ValidationError(f"run_search: {name}={v!r}; expected True or False")
    if not isinstance(protocol, str) or protocol not in PROTOCOLS:
        raise ValidationError(f"run_search: protocol={protocol!r}; expected one of {list(PROTOCOLS)}")
    stop_p = check_real("run_search", "stop_p", stop_p, 0.0, 1.0, low_open=True, high_open=True)
    stuck_after = check_int("run_search", "stuck_after", stuck_after, 0, 2 ** 31 - 1)
    if stuck_after and protocol != "bayesian":
        raise ValidationError(f"run_search: stuck_after={stuck_after}; expected 0 with protocol={protocol!r} (the rule "
                              "belongs to the Bayesian protocol)")
    if plume.motion.moves:
        raise ValidationError(f"run_search: plume.source_motion={plume.motion!r}; expected a target that stays (the "
                              "protocol runner plays a source that stays; a moving target runs in the engine: a "
                              "Simulator with Infotaxis.act)")
    if protocol == "bayesian" and (team_size != 1 or plume.source is not None):
        raise ValidationError(f"run_search: protocol='bayesian' with team_size={team_size!r} and plume.source="
                              f"{plume.source!r}; expected one searcher and a drawn source (the protocol has no source)")
    _check_search_memory(plume, n_episodes, team_size, shared, batch)
    masks = _search_walls(plume, walls, protocol)
    from tqdm.auto import tqdm

    tables = tables_of(plume)
    moves = plume.moves
    dims = len(plume.shape)
    fixed = np.full((1, dims), -1, dtype=np.int64) if plume.source is None else np.array([plume.source], np.int64)
    n = int(team_size)
    per_world = 1 if shared else n
    nb = min(int(batch), int(n_episodes))
    spec = bp.SearchSpec(0, n, bool(shared), int(max_steps), np.array([plume.start], dtype=np.int64), fixed,
                         stop_p, stuck_after)
    beliefs = np.empty((nb * per_world,) + tuple(plume.shape))
    scratch = scratch_for(plume.shape, masks is not None)
    kind = tk.KIND_SPACE_AWARE if space_aware else tk.KIND_INFOTAXIS
    searchers = tk.Searchers(np.empty((nb * n, dims), dtype=np.int32), np.full(nb * n, kind, dtype=np.int64),
                             np.zeros(nb * n, dtype=np.int64), moves, TEAM_RULES[team_rule])
    out = tk.Decisions(np.empty((nb * n, moves.shape[0])), np.empty(nb * n, dtype=np.int64))
    steps = np.empty(n_episodes, dtype=np.int64)
    found = np.empty(n_episodes, dtype=np.bool_)
    first = np.empty(n_episodes, dtype=np.int64)
    source = np.full((n_episodes, dims), -1, dtype=np.int64)
    times = np.empty(n_episodes, dtype=np.float64)
    not_found = np.empty(n_episodes, dtype=np.float64)
    stuck = np.zeros(n_episodes, dtype=np.bool_)
    seeds = np.arange(seed, seed + n_episodes, dtype=np.int64)
    if masks is not None:  # the mask each episode's world draws, as the Simulator's worlds do
        from ..walls import mask_indices

        index = mask_indices(seeds, np.zeros(n_episodes, dtype=np.int64), masks.n_masks)
    # a parallel kernel: one launch at a time (engine/threads.py)
    with PARALLEL_LOCK:
        old = numba.set_parallel_chunksize(1)  # episodes differ in length: hand them out one by one
        try:
            with tqdm(total=n_episodes, desc=f"infotaxis ({protocol})", unit="episode", disable=not progress,
                      leave=False, dynamic_ncols=True) as bar:
                for s0 in range(0, n_episodes, nb):
                    s1 = min(s0 + nb, n_episodes)
                    k = s1 - s0
                    rows = tk.Searchers(searchers.pos[:k * n], searchers.kinds[:k * n], searchers.given[:k * n],
                                        moves, searchers.rule)
                    buffers = bp.Buffers(beliefs[:k * per_world], scratch.work, scratch.scratch)
                    decisions = tk.Decisions(out.scores[:k * n], out.actions[:k * n])
                    wm = None if masks is None else tk.WallMasks(masks.masks, index[s0:s1])
                    if protocol == "drawn":
                        bp.run_worlds(seeds[s0:s1], spec, tables, rows, buffers, decisions,
                                      bp.Found(steps[s0:s1], found[s0:s1], first[s0:s1], source[s0:s1]), wm)
                    else:
                        bp.run_bayesian_worlds(seeds[s0:s1], spec, tables, rows, buffers, decisions,
                                               bp.Expected(steps[s0:s1], times[s0:s1], not_found[s0:s1],
                                                           first[s0:s1], stuck[s0:s1]), wm)
                    bar.update(k)
        finally:
            numba.set_parallel_chunksize(old)
    if protocol == "drawn":
        return SearchResult(steps, found, first, source, int(max_steps))
    return SearchResult(steps, (not_found < stop_p) & ~stuck, first, source, int(max_steps), times, "bayesian")


def _search_walls(plume, walls, protocol: str):
    """``run_search``'s walls as a ``Walls`` (None without), checked against the plume: a fixed
    source and the start on free cells of every mask, the drawn-source protocol."""
    if walls is None:
        return None
    from ..walls import Walls

    masks = Walls.of(walls, plume.natural_grid_size(), name="run_search: walls")
    if protocol != "drawn" or plume.source is None:
        raise ValidationError(f"run_search: walls with protocol={protocol!r} and plume.source={plume.source!r}; "
                              "expected protocol='drawn' and a fixed source (a source drawn from the first belief "
                              "does not know the walls, as in a Scenario)")
    for name, cell in (("plume.source", plume.source), ("plume.start", plume.start)):
        solid = masks.solid_in(cell)
        if solid:
            raise ValidationError(f"run_search: {name}={tuple(cell)} is solid in wall mask {solid[0]}; expected "
                                  "a cell free in every mask")
    return masks
