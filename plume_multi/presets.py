"""Ready-made scenarios: ``poisson_search`` (infotaxis' source-tracking POMDP) and
``plume_following`` (a Gaussian plume with a new source every episode, no position sensed)."""

from __future__ import annotations

from .models.plumes.gaussian import Gaussian
from .models.plumes.poisson_hits import PoissonHits
from .models.sensors.antennae import Antennae
from .models.sensors.belief import Belief
from .models.sensors.concentration import Concentration
from .models.sensors.hits import Hits
from .scenario import Scenario

__all__ = ["poisson_search", "plume_following"]


def poisson_search(lambda_over_dx: float = 1.0, R_dt: float = 2.0, *, dims: int = 2, norm: str = "euclidean",
                   n_hits=None, grid_size=None, n_agents: int = 1, team: bool = True, max_steps: int = 1000,
                   sensors=None, source_motion=None) -> Scenario:
    """The olfactory search POMDP of infotaxis (Vergassola et al. 2007; Loisy & Eloy 2022):
    ``plumes.PoissonHits`` on its own ``N x N`` domain (``N x 1`` in 1-D), every agent starting at
    the centre, cardinal moves, 1.0 on finding the source, one episode per source.

    Args:
        lambda_over_dx, R_dt, dims, norm, n_hits, grid_size: the ``PoissonHits`` model.
        n_agents: searchers per world.
        team: the first agent on the source ends the episode for all, and ``sensors.Belief``
            pools the team's hits into one belief.
        max_steps: step cap.
        sensors: default ``(Hits(), Belief())``.
        source_motion: how the target moves (``sources.RandomWalk(speed <= 1, persistence)``: on
            cells; default ``sources.Static()``). The belief then follows its motion, and an agent
            arrives when it stands on the target where it is now.
    """
    plume = PoissonHits(lambda_over_dx, R_dt, dims=dims, norm=norm, n_hits=n_hits, grid_size=grid_size,
                        source_motion=source_motion)
    x0, y0 = plume.start
    return Scenario(plume=plume, n_agents=n_agents, team=team, max_steps=max_steps,
                    start_positions=((x0, y0),) * n_agents,
                    sensors=(Hits(), Belief()) if sensors is None else sensors)


def plume_following(grid_size=(32, 32), sigma: float = 8.0, *, n_agents: int = 1, max_steps: int = 200) -> Scenario:
    """Plume following: a Gaussian plume whose source is drawn anew at every episode
    (``plumes.Gaussian(source="random")``), and a searcher that senses the concentration at its
    cell and at its four neighbouring cells (``sensors.Antennae`` at 90, 0, 270 and 180 degrees,
    one cell away: the order of the cardinal actions UP, RIGHT, DOWN, LEFT) but not its position.
    No map of the grid helps: the policy must follow the plume. 1.0 on reaching the source; cardinal
    moves; ``max_steps`` per episode. The ``--task following`` setup of ``examples/train_ppo.py``.

    Args:
        grid_size: ``(width, height)`` in cells.
        sigma: the plume's spread in cells.
        n_agents: searchers per world.
        max_steps: step cap.
    """
    return Scenario(grid_size=grid_size, n_agents=n_agents, max_steps=max_steps,
                    plume=Gaussian(source="random", sigma=sigma),
                    sensors=(Concentration(), Antennae(angles=(90.0, 0.0, 270.0, 180.0), distance=1.0)))
