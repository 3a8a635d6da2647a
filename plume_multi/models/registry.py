"""Models by name, and models rebuilt from their metadata.

``model_class(family, name)`` finds a model class of a family by its class name (``"Gaussian"``)
or its snake-case name (``"step_penalty"``), case-insensitively. ``from_metadata(meta)`` rebuilds a
model from ``Model.metadata()`` (a JSON-able dict ``{"model": name, "family": ..., **fields}``).
"""

from __future__ import annotations

import dataclasses

from ..checks import shown
from ..errors import ValidationError
from . import bodies, plumes, rewards, sensors, sources
from .base import NESTED_LOADER, Model, field_value

__all__ = ["FAMILIES", "model_class", "model_names", "from_metadata", "field_value"]

FAMILIES = {"plume": plumes, "action": bodies, "sensor": sensors, "reward": rewards, "source_motion": sources}


def _key(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def _classes(family: str) -> dict:
    module = FAMILIES[family]
    out = {}
    for attr in module.__all__:
        cls = getattr(module, attr)
        if isinstance(cls, type) and issubclass(cls, Model) and cls.family == family and cls.kernels is not None:
            out[_key(cls.__name__)] = cls
    return out


def model_names(family: str) -> list:
    """The snake-case names of a family's models (``["cardinal", "continuous", ...]``)."""
    import re

    return sorted(re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower() for cls in _classes(family).values())


def model_class(family: str, name: str) -> type:
    """The model class of ``family`` (``plume``, ``action``, ``sensor``, ``reward``) named ``name``."""
    if family not in FAMILIES:
        raise ValidationError(f"family: got {family!r}; expected one of {sorted(FAMILIES)}")
    if not isinstance(name, str) or _key(name) not in _classes(family):
        article = "an" if family[0] in "aeiou" else "a"
        raise ValidationError(f"model: got {name!r}; expected {article} {family} model, one of {model_names(family)}")
    return _classes(family)[_key(name)]


_value = field_value


def from_metadata(meta: dict, family: str | None = None) -> Model:
    """The model described by ``meta`` (``Model.metadata()``'s shape: ``{"model": "Gaussian",
    "sigma": 8, ...}``; ``"family"`` optional when ``family`` is given). Fields left out take their
    defaults. A ``Movie`` needs ``frames`` as a path (an array's metadata cannot rebuild it); its
    ``checksum``, when given, must be the file's.

    Raises:
        ValidationError: not a dict, an unknown family, model or field, or a bad field value
            (the model's own error).
    """
    if not isinstance(meta, dict):
        raise ValidationError(f"metadata: got {type(meta).__name__}; expected a dict {{'model': NAME, ...fields}}")
    given_family = meta.get("family", family)
    if family is not None and given_family != family:
        raise ValidationError(f"metadata: got the {given_family!r} model {meta.get('model')!r}; expected a {family} model")
    if given_family is None:
        found = [f for f in FAMILIES if isinstance(meta.get("model"), str) and _key(meta["model"]) in _classes(f)]
        if len(found) != 1:
            raise ValidationError(f"metadata: got model {meta.get('model')!r}; expected a model name of one of the "
                                  f"families {sorted(FAMILIES)}")
        given_family = found[0]
    if "model" not in meta:
        raise ValidationError(f"metadata: got keys {sorted(meta)}; expected 'model' (the model's name)")
    cls = model_class(given_family, meta["model"])
    fields = {f.name for f in dataclasses.fields(cls)}
    kwargs = {k: v for k, v in meta.items() if k not in ("model", "family")}
    unknown = sorted(set(kwargs) - fields)
    if unknown:
        raise ValidationError(f"{cls.__name__}: got unknown field(s) {unknown}; expected some of {sorted(fields)}")
    if cls is plumes.Movie:
        return _movie(kwargs)
    return cls.from_fields(kwargs)


def _movie(kwargs: dict) -> Model:
    if not isinstance(kwargs.get("frames"), str):
        raise ValidationError(f"Movie.frames: got {shown(kwargs.get('frames'), 200)}; expected a path to a movie file "
                              "(.npy, .npz, .h5, .zarr) in metadata")
    if "allow_external" in kwargs:  # a file naming a movie must not widen what the movie reads
        raise ValidationError(f"Movie.allow_external: got {shown(kwargs['allow_external'])}; expected the key left "
                              "out of a scenario file: reading outside the named file is chosen in code "
                              "(Movie(..., allow_external=True)), never by a file")
    return plumes.Movie(**{k: _value(v) for k, v in kwargs.items()})


NESTED_LOADER[0] = from_metadata  # Model.from_fields reads nested models through the registry
