"""Tests of the source motions and of the plumes' several and moving sources. ``sources_reference.py``
here is their plain reference; the plumes' own references (``tests/models/plumes/``: Poisson hits)
are on ``sys.path`` too."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plumes"))
