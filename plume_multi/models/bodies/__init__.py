"""Action models (bodies): how agents move. ``plume_multi.actions``.

``Scenario(action_model=...)`` takes a model or a name: ``"cardinal"``, ``"moore"``.
"""

from .cardinal import Cardinal
from .continuous import Continuous
from .moore import Moore
from .oriented import Oriented
from .run_tumble import RunTumble

__all__ = ["Cardinal", "Moore", "Oriented", "RunTumble", "Continuous", "BY_NAME"]

BY_NAME = {"cardinal": Cardinal, "moore": Moore}
