"""Ready-made scenarios: the published search problems, one call away.

* ``poisson_search``: the source-tracking POMDP of infotaxis (Vergassola et al. 2007) as otto
  poses it (Loisy & Eloy 2022), isotropic Poisson hits on their own domain;
* ``otto_benchmark``: the four cases of otto-benchmark (Loisy & Heinonen 2023),
  ``isotropic-19x19``, ``isotropic-53x53``, ``windy-medium-detections``, ``windy-low-detections``;
* ``plume_following``: a Gaussian plume with a new source every episode, no position sensed.

(``plume_multi.presets``, this module's former name, still imports, with a ``DeprecationWarning``.)
"""

from __future__ import annotations

import math

from .checks import check_bool, check_int, fail
from .models.plumes.gaussian import Gaussian
from .models.plumes.poisson_hits import PoissonHitPlume, PoissonHits, WindyPoissonHits
from .models.sensors.antennae import Antennae
from .models.sensors.belief import Belief
from .models.sensors.concentration import Concentration
from .models.sensors.hits import Hits
from .scenario import MAX_AGENTS, Scenario

__all__ = ["poisson_search", "otto_benchmark", "plume_following", "OTTO_BENCHMARK_CASES", "otto_benchmark_plume",
           "otto_benchmark_protocol", "otto_protocol"]

# otto-benchmark's cases: the evaluate/parameters/<case>.py files (the rest is its __defaults.py).
OTTO_BENCHMARK_CASES = {
    "isotropic-19x19": dict(lambda_over_dx=1.0, R_dt=1.0),
    "isotropic-53x53": dict(lambda_over_dx=3.0, R_dt=2.0),
    "windy-medium-detections": dict(R_bar=2.5),
    "windy-low-detections": dict(R_bar=0.25),
}
WINDY_STOP_T = 10000  # windy/evaluate/evaluate.py: STOP_t = 10000 when not set
STOP_P = 1e-6  # evaluate/parameters/__defaults.py: STOP_p
STUCK_AFTER = 8  # isotropic/classes/sourcetracking.py, _is_agent_stuck (disabled in the windy one)


def _search(owner: str, plume: PoissonHitPlume, n_agents, team, max_steps, sensors) -> Scenario:
    n_agents = check_int(owner, "n_agents", n_agents, 1, MAX_AGENTS)
    return Scenario(plume=plume, n_agents=n_agents, team=team, max_steps=max_steps,
                    start_positions=(plume.start,) * n_agents, sensors=(Hits(), Belief()) if sensors is None else sensors)


def poisson_search(lambda_over_dx: float = 1.0, R_dt: float = 2.0, *, dims: int = 2, norm: str = "euclidean",
                   n_hits=None, grid_size=None, n_agents: int = 1, team: bool = True, max_steps: int = 1000,
                   sensors=None, source=None, source_motion=None) -> Scenario:
    """The olfactory search POMDP of infotaxis (Vergassola et al. 2007; Loisy & Eloy 2022):
    ``plumes.PoissonHits`` on its own ``N x N`` domain (``N x 1`` in 1-D), every agent starting at
    the centre, cardinal moves, 1.0 on finding the source, one episode per source.

    Args:
        lambda_over_dx: ``PoissonHits.lambda_over_dx``.
        R_dt: ``PoissonHits.R_dt``.
        dims: ``PoissonHits.dims``.
        norm: ``PoissonHits.norm``.
        n_hits: ``PoissonHits.n_hits``.
        grid_size: ``PoissonHits.grid_size``.
        source: ``PoissonHits.source``.
        n_agents: searchers per world.
        team: the first agent on the source ends the episode for all, and ``sensors.Belief``
            pools the team's hits into one belief.
        max_steps: step cap.
        sensors: default ``(Hits(), Belief())``.
        source_motion: how the target moves (``sources.RandomWalk(speed <= 1, persistence)``: on
            cells; default ``sources.Static()``). The belief then follows its motion, and an agent
            arrives when it stands on the target where it is now.
    """
    plume = PoissonHits(lambda_over_dx, R_dt, dims=dims, norm=norm, n_hits=n_hits, grid_size=grid_size, source=source,
                        source_motion=source_motion)
    return _search("poisson_search", plume, n_agents, team, max_steps, sensors)


def otto_benchmark_plume(case: str) -> PoissonHitPlume:
    """The plume of an otto-benchmark case (see ``otto_benchmark``)."""
    if not isinstance(case, str) or case not in OTTO_BENCHMARK_CASES:
        fail("otto_benchmark", "case", case, f"one of {list(OTTO_BENCHMARK_CASES)}")
    kwargs = OTTO_BENCHMARK_CASES[case]
    return WindyPoissonHits(**kwargs) if case.startswith("windy") else PoissonHits(**kwargs)


def otto_benchmark_max_steps(plume: PoissonHitPlume) -> int:
    """otto's (and otto-benchmark's) ``STOP_t``: 10000 in the windy setup; in the isotropic one
    ``4 N`` in 1-D, else ``10 N^d`` (``mu0 < 1e-3``), ``round(5 10^d L / sqrt(mu0))`` (``mu0 < 1``) or
    ``round(5 10^d L)``, with ``mu0 = mu(d = L)`` (its ``autoset_numerical_parameters``)."""
    if isinstance(plume, WindyPoissonHits):
        return WINDY_STOP_T
    if plume.dims == 1:
        return int(round(4 * plume.grid_size))
    L, d = plume.lambda_over_dx, plume.dims
    mu0 = float(plume.mean_hits(L))
    if mu0 < 1e-3:
        return 10 * plume.grid_size ** d
    return int(round(5 * 10 ** d * L / math.sqrt(mu0))) if mu0 < 1 else int(round(5 * 10 ** d * L))


def otto_protocol(plume: PoissonHitPlume) -> dict:
    """The arguments of ``run_search(plume, n, protocol="bayesian", **...)`` that score a policy
    as the ``evaluate.py`` of otto (Loisy & Eloy 2022) and otto-benchmark do: ``max_steps`` (their
    ``STOP_t``), ``stop_p`` (``1e-6``) and ``stuck_after`` (8 in the isotropic setup, whose episodes
    also stop when the agent goes back and forth; 0 in the windy one)."""
    if not isinstance(plume, PoissonHitPlume):
        fail("otto_protocol", "plume", plume, "a Poisson-hit plume (PoissonHits, WindyPoissonHits)")
    return {"max_steps": otto_benchmark_max_steps(plume), "stop_p": STOP_P,
            "stuck_after": 0 if isinstance(plume, WindyPoissonHits) else STUCK_AFTER}


def otto_benchmark_protocol(case: str) -> dict:
    """``otto_protocol`` of the plume of ``case``: how otto-benchmark's ``evaluate.py`` scores it."""
    return otto_protocol(otto_benchmark_plume(case))


def otto_benchmark(case: str, n_agents: int = 1, team: bool = False, *, max_steps: int | None = None,
                   sensors=None) -> Scenario:
    """A case of otto-benchmark (Loisy & Heinonen 2023, Eur. Phys. J. E 46, 17), its POMDP exactly.

    ============================  ===========================================================
    case                          model
    ============================  ===========================================================
    ``isotropic-19x19``           ``PoissonHits(lambda_over_dx=1, R_dt=1)``: 19 x 19, 3 hit values
    ``isotropic-53x53``           ``PoissonHits(lambda_over_dx=3, R_dt=2)``: 53 x 53, 4 hit values
    ``windy-medium-detections``   ``WindyPoissonHits(R_bar=2.5, V_bar=2, tau_bar=150)``: 81 x 41
    ``windy-low-detections``      ``WindyPoissonHits(R_bar=0.25, V_bar=2, tau_bar=150)``: 81 x 41
    ============================  ===========================================================

    Each: its domain, hit law, hit values (the tail lumped), start cell (the centre; ``(65, 20)``
    in the windy cases), first-hit law (drawn; 1 in the windy cases) and prior (uniform over the
    other cells, updated with the first hit); cardinal moves; 1.0 on finding the source; the step
    cap of its evaluation (``STOP_t``: 642, 2188, 10000, 10000). The source of each episode is
    drawn from the belief after the first hit (otto-benchmark's ``DRAW_SOURCE = True``);
    ``run_search(scenario.plume, n, protocol="bayesian", **otto_benchmark_protocol(case))``
    (``plume_multi.policies.infotaxis``) scores a policy as its evaluation does.

    Args:
        case: one of the four names above.
        n_agents: searchers per world, all at the start cell.
        team: ``True``: the first arrival ends the episode for all and the agents pool their
            hits into one belief; ``False``: each keeps its own.
        max_steps: the step cap; default the case's ``STOP_t``.
        sensors: default ``(Hits(), Belief())``.

    Example:
        >>> otto_benchmark("windy-low-detections").grid_size
        (81, 41)
    """
    plume = otto_benchmark_plume(case)
    team = check_bool("otto_benchmark", "team", team)
    cap = otto_benchmark_max_steps(plume) if max_steps is None else max_steps
    return _search("otto_benchmark", plume, n_agents, team, cap, sensors)


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
