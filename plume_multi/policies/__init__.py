"""Policies: vectorized searchers, each choosing the actions of many agents at once.

* ``baselines``: ``RandomPolicy``, ``RandomBoxPolicy``, ``GradientClimber``, functions of what the
  agents sense (the demo's, the benchmarks' and RL's baselines).
* ``infotaxis``: ``Infotaxis`` on Poisson-hit beliefs, and ``run_search``, batched protocol
  episodes of ``plumes.PoissonHits``.
"""

from .baselines import GradientClimber, RandomBoxPolicy, RandomPolicy
from .infotaxis import Infotaxis

__all__ = ["RandomPolicy", "RandomBoxPolicy", "GradientClimber", "Infotaxis"]
