"""``Perseus``: a quasi-optimal policy of the olfactory search POMDP, as alpha vectors.

The POMDP (Vergassola et al. 2007; Loisy & Eloy 2022; Heinonen et al. 2023): the agent knows its
cell; the state is the source's cell; an action is one of the body's moves (a move off the grid is
never taken); after a move the agent either stands on the source (the search ends) or observes a
number of hits drawn from the plume's likelihood (or, for any other plume, a detection level drawn
from a likelihood calibrated from it: ``models.likelihoods``, the same centred tables); every step
costs 1, discounted by ``discount``.

Formulation (that of PerseusPOMDP and otto-benchmark, Loisy & Heinonen 2023): the value function is
held over the source's *offset* from the agent, on the doubled grid (``2n - 1`` cells per axis),
not over its cell. The hit law depends on the offset alone, so a move shifts the belief over
offsets and nothing else; an alpha vector computed for beliefs met at one cell then values beliefs
at every other cell. Over absolute cells each vector would hold for one agent cell only (``n^d``
times as many vectors for the same policy). The walls of the domain are in the belief (no mass
outside the grid), and the moves that would leave it are excluded at every decision, so the
offset formulation solves the bounded problem itself; it is refused where the plume is not
translation-invariant (walls inside the domain, a moving target). A calibrated likelihood pools
every (cell, source) pair by its offset: the POMDP solved is the one its belief assumes.

``Perseus.solve(scenario)`` runs point-based value iteration (Spaan & Vlassis 2005) on beliefs met
along the scenario's own episodes (``perseus_solve.py``); ``save`` / ``load`` round-trip the policy
(``perseus_files.py``), ``load_otto`` reads otto-benchmark's converted alpha-vector files.
"""

from __future__ import annotations

import json

import numpy as np

from ..checks import check_real, shown
from ..errors import ValidationError
from . import perseus_kernels as pk
from .belief_state import belief_view, decision_inputs, scenario_with_belief, shaped_for, simulator_of
from .perseus_problem import DEFAULT_DISCOUNT, belief_model, best_values, fit_problem, same_model, three_axes

__all__ = ["Perseus"]

MAX_ABS_VALUE = 1e100  # alpha vectors beyond this are refused: their sums over a grid could overflow


class Perseus:
    """A policy of alpha vectors for the olfactory search POMDP, for M agents at once.

    The value of a belief ``p`` for an agent at cell ``c`` is ``max_i sum_y p(y) alpha_i(y - c)``
    over the vectors whose move keeps the agent in the grid; the agent makes the move of the first
    vector of highest value. The value is minus the expected discounted number of steps to the
    source (a lower bound of it, on the beliefs the solver backed up).

    Args:
        alphas: ``(n_alphas, *centred)`` finite floats, ``centred`` the plume's doubled grid
            (``(2H-1, 2W-1)``, ``(1, 2W-1)`` in 1-D, ``(2D-1, 2H-1, 2W-1)`` in 3-D): entry
            ``[dy + H-1, dx + W-1]`` for the source at offset ``(dx, dy)`` from the agent (the
            layout of ``plume.centred_likelihood``).
        actions: ``(n_alphas,)`` integers, each vector's action (an index into
            ``scenario.moves()``).
        scenario: the scenario whose POMDP the vectors solve: one source that stays, on a cell,
            no walls, a grid body, and a belief model: a Poisson-hit plume (``PoissonHits``,
            ``WindyPoissonHits``: its closed form), or any plume with a
            ``sensors.Belief(likelihood=...)`` (``models.likelihoods``: a ``CalibratedLikelihood``
            of the plume, a mismatched ``PoissonLikelihood``). The policy acts in any scenario
            whose belief follows the same model with the same moves (teams included).
        discount: the discount of the values, in ``(0, 1)`` (otto-benchmark's 0.98).

    ``decide(beliefs, positions, groups=None, moves=None, active=None)`` takes the arrays as
    ``Infotaxis.decide`` does and returns ``(M,)`` int64 actions; ``scores`` then holds the
    value of each move's best vector ``(M, K)`` (``-inf`` off the grid or for a move no vector
    has). Agents that share a belief (a team) each decide on it alone. ``act(sim)`` decides for a
    ``Simulator`` (or a front-end's) on its ``sensors.Belief`` state. ``report`` holds what the
    solver reached (``Perseus.solve``), or None.

    ``likelihood`` is the likelihood solved for (None: a Poisson-hit plume's closed form);
    ``scenario_for(scenario)`` gives a scenario a ``sensors.Belief`` of it, as ``evaluate`` asks
    (as ``Infotaxis.scenario_for``).

    Example:
        >>> from plume_multi import Simulator
        >>> from plume_multi.scenarios import poisson_search
        >>> scenario = poisson_search(1.0, 1.0, grid_size=9)
        >>> policy = Perseus.solve(scenario, beliefs=200, iterations=10)
        >>> sim = Simulator(scenario, num_worlds=4)
        >>> obs = sim.reset(seed=0)
        >>> obs, reward, terminated, truncated = sim.step(policy.act(sim))
    """

    #: What the policy acts in (``fit_problem`` refuses the rest, before anything compiles): the
    #: Poisson-hit plumes with their dimensions (their closed form), the others through a likelihood
    #: (``"likelihoods"``: calibrated from the plume by default, ``calibration``; a recorded movie
    #: too where its source lies on a cell, not listed: no test here runs one), a grid
    #: body's moves, one source that stays on a cell, no walls, the source's cell as the goal, a
    #: ``Belief`` sensor to act on (``scenario_for`` adds it); and then only the likelihood and
    #: moves it was solved for (``check_scenario``).
    CAPABILITIES = {"plumes": {"PoissonHits": (1, 2, 3), "WindyPoissonHits": (2,), "Gaussian": (2, 3),
                               "Puffs": (2,)},
                    "likelihoods": ("closed form", "CalibratedLikelihood", "PoissonLikelihood"),
                    "bodies": ("cardinal", "moore"), "walls": False, "moving_source": False, "several_sources": False,
                    "goal_radius": False, "sensors": ("Belief",)}
    # the same, as the capability table reads it (plume_multi.capabilities)
    dimensions = (2, 3)
    among_walls = False  # walls break the translation invariance that lets one vector serve every cell
    moving_sources = False  # the offset formulation holds for a source that stays
    several_sources = False  # the belief is over one source's cell
    # no needs: it brings its Belief sensor (the likelihood solved for) and a grid body
    # (scenario_for, which evaluate calls); check_scenario then refuses another likelihood or moves

    def __init__(self, alphas, actions, scenario, *, discount: float = DEFAULT_DISCOUNT, report=None):
        problem = fit_problem(scenario)
        if problem:
            raise ValidationError(f"Perseus.scenario: {problem}")
        self.discount = check_real("Perseus", "discount", discount, 0.0, 1.0, low_open=True, high_open=True)
        model = belief_model(scenario)  # the tables solved for: the plume's closed form or a likelihood
        centred = tuple(2 * n - 1 for n in model.shape)
        try:
            vectors = np.asarray(alphas)
        except (TypeError, ValueError):
            vectors = None
        if vectors is None or vectors.ndim != 1 + len(centred) or vectors.shape[1:] != centred \
                or vectors.shape[0] < 1 or vectors.dtype.kind not in "iuf":
            raise ValidationError(f"Perseus.alphas: got {_described(vectors, alphas)}; expected (n_alphas >= 1, "
                                  f"{', '.join(map(str, centred))}) real numbers (the plume's doubled grid)")
        vectors = np.asarray(vectors, dtype=np.float64)
        if not np.all(np.isfinite(vectors)) or np.abs(vectors).max() > MAX_ABS_VALUE:
            raise ValidationError(f"Perseus.alphas: got values that are not finite or beyond {MAX_ABS_VALUE:g}; "
                                  "expected finite values (minus discounted numbers of steps)")
        moves = np.array(scenario.moves(), dtype=np.int64)
        try:
            acts = np.asarray(actions)
        except (TypeError, ValueError):
            acts = None
        if acts is None or acts.shape != (vectors.shape[0],) or (acts.size and acts.dtype.kind not in "iu"):
            raise ValidationError(f"Perseus.actions: got {_described(acts, actions)}; expected ({vectors.shape[0]},) "
                                  "integers, one action per alpha vector")
        if acts.size and (acts.min() < 0 or acts.max() >= len(moves)):
            raise ValidationError(f"Perseus.actions: got actions in {int(acts.min())}..{int(acts.max())}; expected "
                                  f"indices of the body's {len(moves)} moves, 0..{len(moves) - 1}")
        self.scenario = scenario
        self.plume = scenario.plume
        self.model = model
        self.likelihood = None if model is scenario.plume else model
        self.report = report
        self.scores = None
        self._moves = moves
        # the kernels' layout: three axes whatever the dimension; the vectors by offset (one row per
        # offset: perseus_kernels.py); writable arrays (one compiled type)
        self._shape3 = three_axes(model.shape)
        self._table = np.ascontiguousarray(vectors.reshape(vectors.shape[0], -1).T)
        self._actions = np.require(acts, np.int64, ["C", "W", "O"])
        self._moves3 = np.zeros((len(moves), 3), dtype=np.int64)
        self._moves3[:, :moves.shape[1]] = moves

    # -- what it is ---------------------------------------------------------------------------
    @property
    def alphas(self) -> np.ndarray:
        """The alpha vectors ``(n_alphas, *centred)`` float64 (a read-only copy)."""
        out = self._table.T.reshape((-1,) + tuple(2 * n - 1 for n in self.model.shape)).copy()
        out.flags.writeable = False
        return out

    @property
    def actions(self) -> np.ndarray:
        """Each vector's action ``(n_alphas,)`` int64 (read-only view)."""
        out = self._actions.view()
        out.flags.writeable = False
        return out

    @property
    def moves(self) -> np.ndarray:
        """The moves the actions index ``(K, dims)`` int64 (the scenario's body's; a copy)."""
        return self._moves.copy()

    @property
    def n_alphas(self) -> int:
        return int(self._actions.shape[0])

    def __repr__(self) -> str:
        given = "" if self.likelihood is None else f", likelihood={type(self.likelihood).__name__}"
        return (f"Perseus({self.n_alphas} alpha vectors, plume={self.plume.name}{given}, shape={self.model.shape}, "
                f"discount={self.discount})")

    def reset(self, mask=None) -> None:
        """No memory to clear (the beliefs are the memory, held by the caller)."""

    def __deepcopy__(self, memo):
        # evaluate() copies a policy per chunk of worlds: the vectors are never written, so every
        # copy shares them (a 100 MB set copied per chunk cost more than the decisions)
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.scores = None
        memo[id(self)] = twin
        return twin

    # -- where it acts ------------------------------------------------------------------------
    def scenario_for(self, scenario):
        """``scenario`` as the policy acts in it (``evaluate`` calls it): its sensors replaced by
        one ``sensors.Belief`` following the likelihood solved for (none replaced for a
        Poisson-hit plume's closed form when the scenario has a Belief already), a body without a
        table of moves replaced by ``bodies.Cardinal()`` with a warning
        (``belief_state.scenario_with_belief``). ``check_scenario`` then says whether it fits."""
        return scenario_with_belief("Perseus", scenario, self.likelihood)

    def check_scenario(self, scenario, who: str = "Perseus") -> None:
        """Refuse (``ValidationError``) a scenario the vectors do not solve: another plume (for
        a closed form) or belief likelihood (compared by its tables), other moves, walls, a moving
        target. ``evaluate`` asks before anything compiles."""
        problem = fit_problem(scenario)
        if problem:
            raise ValidationError(f"{who}: {problem}")
        if self.likelihood is None and scenario.plume.metadata() != self.plume.metadata():
            raise ValidationError(f"{who}: the scenario's plume is {_plume_text(scenario.plume)}; expected the plume the "
                                  f"alpha vectors were solved for, {_plume_text(self.plume)}")
        model = belief_model(scenario)
        if not same_model(model, self.model):
            raise ValidationError(f"{who}: the scenario's belief follows {model!r}; expected the likelihood the alpha "
                                  f"vectors were solved for, {self.model!r} (Perseus.scenario_for(scenario) gives the "
                                  "scenario a Belief of it)")
        moves = np.asarray(scenario.moves())
        if moves.shape != self._moves.shape or not np.array_equal(moves, self._moves):
            raise ValidationError(f"{who}: the scenario's body moves by {moves.tolist()}; expected the moves the alpha "
                                  f"vectors were solved for, {self._moves.tolist()}")

    def act(self, sim):
        """Actions for every agent of a ``Simulator`` (or of the simulator of a front-end:
        ``parallel_env``, ``multi_agent_vector_env``) whose scenario is the one solved (same plume
        and moves; ``check_scenario``) with a ``sensors.Belief``: ``(B*N,)`` int64, or
        ``{agent: action}`` of the live agents of a PettingZoo env."""
        simulator = simulator_of(sim, "Perseus.act")
        self.check_scenario(simulator.scenario, "Perseus.act")
        view = belief_view(simulator, "Perseus.act")
        return shaped_for(sim, self.decide(view.beliefs, view.positions, groups=view.groups, active=view.active))

    def decide(self, beliefs, positions, groups=None, moves=None, active=None) -> np.ndarray:
        """Actions of M agents.

        Args:
            beliefs: ``(G, *plume.shape)`` float64 probabilities (``(G, H, W)``; ``(G, D, H, W)``
                in 3-D).
            positions: ``(M, 2)`` integer ``(x, y)`` cells inside the grid (``(M, 3)`` in 3-D).
            groups: ``None`` (``G == M``), a team size ``n`` or ``(G+1,)`` offsets, as
                ``Infotaxis.decide``'s; agents of a group each decide on its belief.
            moves: None, or the body's moves, which must be those solved for.
            active: ``(M,)`` bool, or None (all): inactive agents get action 0 and scores
                ``-inf``.

        Returns:
            ``(M,)`` int64 actions (a fresh array); ``self.scores`` ``(M, K)`` float64.
        """
        d = decision_inputs("Perseus.decide", self.model, beliefs, positions, groups,
                            self._moves if moves is None else moves, active)
        if d.moves.shape != self._moves.shape or not np.array_equal(d.moves, self._moves):
            raise ValidationError(f"Perseus.decide: moves {d.moves.tolist()}; expected the moves the alpha vectors "
                                  f"were solved for, {self._moves.tolist()}")
        m = d.positions.shape[0]
        g = d.beliefs.shape[0]
        b3 = np.require(d.beliefs.reshape((g,) + self._shape3), np.float64, ["C", "W"])
        cells = np.zeros((m, 3), dtype=np.int64)
        cells[:, :d.positions.shape[1]] = d.positions
        owner = np.repeat(np.arange(g, dtype=np.int64), np.diff(d.starts))
        act = np.ones(m, dtype=np.bool_) if active is None else np.array(active, dtype=np.bool_)
        scores = np.empty((m, len(self._moves)))
        best = np.empty(m, dtype=np.int64)
        best_values(b3, owner, cells, act, pk.Alphas(self._table, self._actions), self.n_alphas, self._moves3,
                    scores, best)
        self.scores = scores
        stuck = act & (best < 0)
        if stuck.any():
            i = int(np.flatnonzero(stuck)[0])
            raise ValidationError(f"Perseus.decide: agent {i} at {tuple(int(v) for v in d.positions[i])} has no alpha "
                                  f"vector whose move stays inside the grid {self.model.shape[::-1]}; expected a set "
                                  "with a vector for some move allowed there")
        return np.where(best >= 0, self._actions[np.maximum(best, 0)], 0).astype(np.int64)

    __call__ = decide

    # -- files and solving ----------------------------------------------------------------------
    def save(self, path):
        """Write the policy to ``path`` (NumPy ``.npz``: the vectors, their actions and a JSON
        record of the scenario, the discount and the solver's report), whole or not at all.
        Returns the path."""
        from .perseus_files import save

        return save(self, path)

    @classmethod
    def load(cls, path) -> "Perseus":
        """The policy ``save`` wrote to ``path``, its content checked (a ``ValidationError``
        naming the file and what is wrong otherwise)."""
        from .perseus_files import load

        return load(path, cls)

    @classmethod
    def load_otto(cls, path, scenario) -> "Perseus":
        """The alpha-vector policy of an otto-benchmark "converted" file (the pickle its
        ``converter-pbvi-to-otto`` scripts write from Perseus or Sarsop solutions: a dict of
        ``alphas``, ``actions``, ``discount``, ...) for ``scenario`` (its plume and moves: e.g.
        ``scenarios.otto_benchmark(case)``). Only NumPy arrays and plain values are unpickled."""
        from .perseus_files import load_otto

        return load_otto(path, scenario, cls)

    @classmethod
    def solve(cls, scenario, *, beliefs: int = 1000, discount: float = DEFAULT_DISCOUNT, iterations: int = 100,
              seconds: float | None = None, tol: float = 1e-6, explore="infotaxis", epsilon: float = 0.1,
              keep: float = 0.25, seed: int = 0, points=None, start: "Perseus | None" = None,
              progress: bool = False, likelihood=None) -> "Perseus":
        """Point-based value iteration (Perseus; Spaan & Vlassis 2005) on ``scenario``'s POMDP:
        the policy, its ``report`` (a ``perseus_solve.SolveReport``: iterations, times, the lower
        and upper bounds reached on the points, per iteration).

        Belief points are met along the scenario's own episodes (one searcher, worlds seeded
        ``seed, seed + 1, ...``) played by ``explore``, a share ``epsilon`` of its moves random:
        every episode's belief after its first hit, and each later one with probability ``keep``.
        Each iteration backs up points drawn at random among those it has not yet improved, until
        each is worth at least what it was: the points' values never decrease. Deterministic for a
        seed, whatever the thread count. How it works: ``plume_multi/policies/perseus_solve.py``.

        Args:
            scenario: one source that stays on a cell, no walls, the default goal radius; a grid
                body (a continuous one is replaced by ``Cardinal``, with a warning). Its belief
                model: ``likelihood`` if given, else the scenario's ``sensors.Belief``'s, else the
                closed form of a Poisson-hit plume (``PoissonHits`` in 1-D, 2-D or 3-D,
                ``WindyPoissonHits``), else a likelihood calibrated from the plume
                (``calibration.likelihood_for``, cached on disk): the scenario is solved with a
                ``sensors.Belief`` of it (``scenario_for``), and ``policy.scenario`` keeps it. A
                team's scenario is solved for one searcher.
            beliefs: belief points to sample, 1..1,000,000.
            discount: in ``(0, 1)``; values are minus discounted numbers of steps.
            iterations: the iteration budget, >= 1.
            seconds: a wall-time budget of the value iteration (s), or None.
            tol: stop when an iteration raises the points' mean value by at most this (>= 0).
            explore: who plays the exploring episodes: ``"infotaxis"`` (default),
                ``"space-aware-infotaxis"``, ``"greedy"``, ``"random"``, or an object with
                ``act(simulator)`` (a ``Perseus``: the beliefs its own policy meets).
            epsilon: the share of the explorer's moves replaced by random moves, in ``[0, 1]``.
            keep: the probability that a belief met after the first step is kept, in ``(0, 1]``.
            seed: the first episode's seed, and the seed of the random moves and backup order.
            points: ``(beliefs (n, *plume.shape), cells (n, dims))`` to back up instead.
            start: a ``Perseus`` of the same plume, moves and discount whose vectors are the first
                set (go on solving: ``solve(sc, explore=policy, start=policy)``); default one
                vector per move at the floor ``-1 / (1 - discount)``.
            progress: tqdm bars (points, iterations) on stderr.
            likelihood: the observation model to solve for (``models.likelihoods``:
                ``calibration.calibrate(scenario, thresholds)``, a mismatched
                ``PoissonLikelihood(plume, thresholds)``), or None (above).
        """
        from .perseus_solve import solve

        return solve(cls, scenario, beliefs=beliefs, discount=discount, iterations=iterations, seconds=seconds, tol=tol,
                     explore=explore, epsilon=epsilon, keep=keep, seed=seed, points=points, start=start,
                     progress=progress, likelihood=likelihood)

    def record(self) -> dict:
        """The JSON-able record ``save`` writes beside the arrays."""
        return {"format": "plume_multi.Perseus", "version": 1, "scenario": self.scenario.metadata(),
                "discount": self.discount, "report": None if self.report is None else self.report.to_dict()}


def _described(arr, given) -> str:
    if arr is None:
        return shown(given, typed=True)
    return f"shape {arr.shape} and dtype {arr.dtype}"


def _plume_text(plume) -> str:
    return f"{plume.name}({json.dumps(plume.metadata(), sort_keys=True)[:300]})"
