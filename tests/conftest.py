import os

from hypothesis import HealthCheck, settings

# Numba compiles on first call (then caches): no per-example deadline. A modest default number of
# examples keeps the suite well under its time budget on two cores; raise it locally with
# HYPOTHESIS_PROFILE=thorough.
settings.register_profile(
    "default", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
