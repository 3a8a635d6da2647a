"""Source motions: how a plume's sources move. ``plume_multi.sources``.

A plume takes one as ``source_motion=`` (``plumes.Gaussian``, ``plumes.Puffs``, ``plumes.PoissonHits``);
it moves every source of the plume, each on its own. ``Static()`` is the default.
"""

from .drift import Drift
from .motion import MotionKernels, SourceMotion
from .random_walk import RandomWalk
from .static import Static
from .waypoints import Waypoints

__all__ = ["SourceMotion", "MotionKernels", "Static", "Drift", "RandomWalk", "Waypoints"]
