"""Scenarios to and from JSON: ``Scenario.metadata()``'s shape, read back.

    {"grid_size": [128, 128], "n_agents": 16, "max_steps": 500,
     "plume": {"model": "Gaussian", "sigma": 8, "source": "random"},
     "action_model": {"model": "Oriented", "turn_degrees": 45},
     "sensors": [{"model": "Concentration"}, {"model": "Antennae", "distance": 2}],
     "reward": {"model": "StepPenalty", "step_penalty": 0.01}}

Every key is optional (left out: the ``Scenario`` default). Models are ``plume_multi.models.
from_metadata`` dicts (``"family"`` may be left out); ``action_model`` may also be a name
(``"cardinal"``). The derived keys ``Scenario.metadata()`` writes (``source_location`` and
``sigma`` when a plume is given, ``n_neighbours`` when sensors are) are accepted when they agree
with the models, so ``scenario_from_metadata(sc.metadata())`` rebuilds ``sc``.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

from .errors import ValidationError
from .models.registry import from_metadata
from .scenario import Scenario

__all__ = ["scenario_from_metadata", "load_scenario", "save_scenario"]

_FIELDS = {f.name for f in fields(Scenario)}
_MODEL_KEYS = {"plume": "plume", "action_model": "action", "reward": "reward"}
# derived from the plume / the sensors when those are given: Scenario refuses them beside them
_DERIVED = {"source_location": "plume", "sigma": "plume", "n_neighbours": "sensors"}


def _model(key: str, value, family: str):
    if value is None or (key == "action_model" and isinstance(value, str)):
        return value
    try:
        return from_metadata(value, family)
    except ValidationError as exc:
        raise ValidationError(f"Scenario.{key}: {exc}") from None


def _nested_tuples(value):
    return tuple(_nested_tuples(v) for v in value) if isinstance(value, list) else value


def _shorthand(meta: dict) -> dict:
    """``n_neighbours = k`` with the sensors it stands for (Concentration, Position, Neighbours(k)):
    keep the shorthand, so the rebuilt scenario is the one that wrote the metadata."""
    k = meta.get("n_neighbours")
    sensors = meta.get("sensors")
    if not (isinstance(k, int) and k > 0 and isinstance(sensors, list) and len(sensors) == 3):
        return meta
    names = [s.get("model") if isinstance(s, dict) else None for s in sensors]
    if names == ["Concentration", "Position", "Neighbours"] and sensors[2].get("k") == k:
        return {key: value for key, value in meta.items() if key != "sensors"}
    return meta


def scenario_from_metadata(meta: dict) -> Scenario:
    """The ``Scenario`` described by ``meta`` (see the module doc).

    Raises:
        ValidationError: not a dict, an unknown key, a bad model or value, or a derived key that
            disagrees with the models (naming it).
    """
    if not isinstance(meta, dict):
        raise ValidationError(f"scenario: got {type(meta).__name__}; expected a dict of Scenario fields")
    unknown = sorted(set(meta) - _FIELDS)
    if unknown:
        raise ValidationError(f"scenario: got unknown key(s) {unknown}; expected some of {sorted(_FIELDS)}")
    kwargs, derived = {}, {}
    meta = _shorthand(meta)
    for key, value in meta.items():
        if key in _DERIVED and meta.get(_DERIVED[key]) is not None:
            derived[key] = value
        elif key in _MODEL_KEYS:
            kwargs[key] = _model(key, value, _MODEL_KEYS[key])
        elif key == "sensors" and value is not None:
            if not isinstance(value, list) or not value:
                raise ValidationError(f"Scenario.sensors: got {value!r}; expected a non-empty list of sensor dicts")
            kwargs[key] = tuple(_model(key, s, "sensor") for s in value)
        else:
            kwargs[key] = _nested_tuples(value)
    scenario = Scenario(**kwargs)
    built = scenario.metadata()
    for key, value in derived.items():
        want = built[key]
        if key == "n_neighbours":  # the shorthand's Neighbours(k) is in the sensors list
            from .models.sensors import Neighbours

            ks = [s.k for s in scenario.sensors if isinstance(s, Neighbours)]
            if value == 0 or value in ks:
                continue
            want = ks[0] if ks else 0
        if value is not None and _nested_tuples(value) != _nested_tuples(want):
            raise ValidationError(f"Scenario.{key}: got {value!r}, but the {_DERIVED[key]} gives {want!r}; expected "
                                  f"the same value or the key left out")
    return scenario


def load_scenario(path) -> Scenario:
    """The scenario of a JSON file (``scenario_from_metadata`` of its content)."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise ValidationError(f"scenario: cannot read {str(path)!r}: {exc.strerror or exc}") from None
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"scenario: {str(path)!r} is not valid JSON: {exc}") from None
    return scenario_from_metadata(meta)


def save_scenario(scenario: Scenario, path) -> Path:
    """Write ``scenario.metadata()`` as JSON to ``path`` (a ``Movie`` plume must come from a file)."""
    if not isinstance(scenario, Scenario):
        raise ValidationError(f"scenario: got {type(scenario).__name__}; expected a plume_multi.Scenario")
    p = Path(path)
    p.write_text(json.dumps(scenario.metadata(), indent=2) + "\n")
    return p
