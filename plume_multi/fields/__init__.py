"""Plume models: each builds the shared concentration field of a scenario."""

from .gaussian import gaussian_field, validate_field

__all__ = ["gaussian_field", "validate_field"]
