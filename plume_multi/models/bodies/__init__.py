"""Bodies: how agents move. ``plume_multi.bodies`` (also ``plume_multi.actions``, its former name).

``Scenario(action_model=...)`` takes a model or a name: ``"cardinal"``, ``"moore"``.
"""

from ..base import Body
from .cardinal import Cardinal
from .continuous import Continuous
from .moore import Moore
from .oriented import Oriented
from .run_tumble import RunTumble

__all__ = ["Body", "Cardinal", "Moore", "Oriented", "RunTumble", "Continuous", "BY_NAME"]

BY_NAME = {"cardinal": Cardinal, "moore": Moore}
