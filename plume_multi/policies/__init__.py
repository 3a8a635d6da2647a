"""Policies: vectorized searchers, each choosing the actions of many agents at once.

* ``baselines``: ``RandomPolicy``, ``RandomBoxPolicy``, ``GradientClimber``, functions of what the
  agents sense (the demo's, the benchmarks' and RL's baselines).
* ``surge_cast``: ``SurgeCast``, surge upwind on a whiff and cast crosswind without one (grid and
  continuous bodies, with a wind sensor or a known upwind direction).
* ``infotaxis``: ``Infotaxis`` (and space-aware infotaxis) on Poisson-hit beliefs, and
  ``run_search``, batched protocol episodes of ``plumes.PoissonHits``.
* ``greedy``: ``Greedy``, the most-likely-source searcher on the same beliefs.
* ``team``: ``Team``, one policy per agent of a world (mixed teams sharing one belief).
* ``perseus``: ``Perseus``, the quasi-optimal policy of the Poisson-hit POMDP as alpha vectors
  (``Perseus.solve``: point-based value iteration; ``save``/``load``, ``load_otto``).

Policies of observations are callables ``obs (M, D) -> actions``; the belief searchers
(``Infotaxis``, ``Greedy``, ``Perseus``) and ``Team`` decide with ``act(sim)`` on a ``Simulator`` or a
front-end that exposes one (``parallel_env``, ``multi_agent_vector_env``).
"""

from .baselines import GradientClimber, RandomBoxPolicy, RandomPolicy
from .greedy import Greedy
from .infotaxis import Infotaxis
from .perseus import Perseus
from .surge_cast import SurgeCast
from .team import Team

__all__ = ["RandomPolicy", "RandomBoxPolicy", "GradientClimber", "SurgeCast", "Infotaxis", "Greedy", "Team", "Perseus"]
