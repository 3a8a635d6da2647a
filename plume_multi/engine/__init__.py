"""The model-agnostic compiled core: ``jit`` (njit and its cache), ``rng`` (counter-based draws),
``shared`` (start cells, action checks), ``api`` (what model functions receive), ``assemble`` (the
generated step driver), ``compile`` (compiling it, naming a model at fault), ``records``. It imports
nothing from the rest of the package but its errors, and knows no model by name."""
