"""``Greedy``: the most-likely-source searcher on Poisson-hit beliefs, for many agents at once."""

from __future__ import annotations

from ..errors import ValidationError
from ..models.plumes.poisson_hits import PoissonHitPlume
from . import team_kernels as tk
from .belief_state import belief_view, scenario_with_belief, shaped_for, simulator_of
from .infotaxis import checked_likelihood
from .team_decide import TEAM_RULES, decide_kinds

__all__ = ["Greedy"]


class Greedy:
    """Greedy search: each agent moves toward the most likely source cell of its belief.

    The target is the cell of highest probability (cells within a relative ``1e-9`` of the
    maximum are tied: the nearest to the agent by squared Euclidean distance wins, then the first
    in row-major order: lowest ``y`` then lowest ``x`` in 2-D, lowest ``z``, ``y``, then ``x`` in
    3-D); the move is the one whose cell is nearest to the target (squared Euclidean distance),
    moves off the grid excluded, ties to the lowest action index. With cardinal moves an agent
    closes its longest offset first. In 2-D (beliefs ``(G, H, W)``, cells ``(x, y)``) and in 3-D
    (``PoissonHits(dims=3)``: beliefs ``(G, D, H, W)``, cells ``(x, y, z)``, the six moves of
    ``Cardinal``). The exploitative searcher of Piro et al. (2025), "most likely state" in Loisy &
    Eloy (2022).

    Among walls (``docs/walls.md``) moves into a solid cell are excluded too, and "nearest to the
    target" is measured along free paths around the walls (ties by the squared Euclidean distance):
    the agent walks around a wall instead of pressing against it.

    Args:
        plume: the Poisson-hit plume (``PoissonHits``, ``WindyPoissonHits``) whose beliefs are read; may
            also be given to ``decide``.
        team_rule: for agents that share a belief, as ``Infotaxis``'s: ``"believer"`` (in agent
            order, each on the belief updated with every earlier agent's move and most likely
            hit) or ``"independent"``.
        likelihood: as ``Infotaxis``'s (``scenario_for`` likewise).

    ``act(sim)`` decides for a ``Simulator`` (or a front-end's simulator) on its ``sensors.Belief``
    state; ``decide(beliefs, positions, groups=None, plume=None, moves=None, active=None)``
    takes the arrays as ``Infotaxis.decide`` does and returns ``(M,)`` int64 actions; ``scores``
    then holds each move's squared distance to the target ``(M, K)`` (among walls the free-path
    distance; ``inf`` off the grid or into a wall). ``decide(..., walls=)`` takes walls as
    ``Infotaxis.decide`` does; ``act`` reads the scenario's.

    Example:
        >>> from plume_multi import Simulator
        >>> from plume_multi.scenarios import poisson_search
        >>> sim = Simulator(poisson_search(1.0, 2.0), num_worlds=8)
        >>> obs = sim.reset(seed=0)
        >>> obs, reward, terminated, truncated = sim.step(Greedy().act(sim))
    """

    # what it works with (plume_multi.capabilities)
    dimensions = (2, 3)
    several_sources = False  # the belief is over one source's cell
    # no needs: it brings its own Belief sensor (a likelihood of the plume) and a grid body
    # (scenario_for, which evaluate calls)

    def __init__(self, *, plume: PoissonHitPlume | None = None, team_rule: str = "believer", likelihood=None):
        if plume is not None and not isinstance(plume, PoissonHitPlume):
            raise ValidationError(f"Greedy.plume: got {plume!r}; expected a Poisson-hit plume (PoissonHits, "
                                  "WindyPoissonHits) or None")
        if team_rule not in TEAM_RULES:
            raise ValidationError(f"Greedy.team_rule: got {team_rule!r}; expected one of {sorted(TEAM_RULES)}")
        self.likelihood = checked_likelihood("Greedy", likelihood)
        self.plume = plume
        self.team_rule = team_rule
        self.scores = None

    def reset(self, mask=None) -> None:
        """No memory to clear (the beliefs are the memory, held by the caller)."""

    def scenario_for(self, scenario):
        """``scenario`` as this searcher acts in it (``Infotaxis.scenario_for``)."""
        return scenario_with_belief("Greedy", scenario, self.likelihood)

    def act(self, sim):
        """Actions ``(B*N,)`` int64 for every agent of ``sim`` (a ``Simulator`` or a front-end with
        ``.simulator``; ``{agent: action}`` for a PettingZoo env)."""
        view = belief_view(simulator_of(sim, "Greedy.act"), "Greedy.act")
        return shaped_for(sim, self.decide(view.beliefs, view.positions, groups=view.groups, plume=view.plume,
                                           moves=view.moves, active=view.active, walls=view.walls))

    def decide(self, beliefs, positions, groups=None, plume: PoissonHitPlume | None = None, moves=None,
               active=None, walls=None):
        """Actions of M agents; arguments as ``Infotaxis.decide``'s."""
        plume = plume if plume is not None else self.plume if self.plume is not None else self.likelihood
        actions, self.scores = decide_kinds("Greedy.decide", plume, beliefs, positions, lambda m: tk.KIND_GREEDY,
                                            self.team_rule, groups=groups, moves=moves, active=active, walls=walls)
        return actions

    __call__ = decide
