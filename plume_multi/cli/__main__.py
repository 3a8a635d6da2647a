"""``python -m plume_multi.cli ...`` is ``plume-multi ...``."""

from . import main

raise SystemExit(main())
