"""What composes with what: the capability table, gathered from the classes' own declarations.

This module holds the table and the check at the models' level (``Scenario`` and ``Simulator``
check a scenario's parts here); ``plume_multi.capabilities``, above the policies, adds the policies'
rows and resolves a policy given by name, object or team.

Every model class (``plumes``, ``bodies``, ``sensors``, ``rewards``; the family bases of
``plume_multi.models``, a user's models included) and every policy class declares, as class
attributes, what it works with; nothing else lists it:

* ``dimensions``: the dimensions it runs in, ``(2,)`` or ``(2, 3)``.
* ``among_walls``: ``True`` (it works among ``Scenario(walls=...)``), ``False``, or, for a plume,
  ``"fixed sources"`` (among walls only when its sources are given cells that stay: a drawn or
  moving source could land inside a wall).
* ``moving_sources``, ``several_sources``: for a plume, whether it can have sources that move
  (``source_motion=``) or several sources; for the rest, whether it works when the plume's do.
  ``True``, ``False``, or the dimensions where it holds (``(2,)``).
* ``in_teams``: whether it works in ``Scenario(team=True)``.
* ``needs``: a tuple of ``Need``: what it needs of the scenario's other parts (``sensors.Hits``
  needs a Poisson-hit plume, ``sensors.Heading`` a body with a heading, ``policies.Infotaxis`` a
  Poisson-hit plume, a ``Belief`` sensor and a grid body with a table of moves).

``plume_multi.capabilities()`` gathers them into a ``CapabilityTable``: its ``rows`` (one per component),
``to_markdown()`` (the table in the docs), and ``check(scenario, policy=None)``, which
``Scenario``, ``Simulator``, ``evaluate``, ``compare``, ``sweep``, the front-ends (through
``Scenario``) and the CLI call before anything compiles: an unsupported combination raises
``CapabilityError`` (a ``ValidationError``) naming both parts and what would work instead.
Checks of values (a grid too small, a source outside it) stay with the models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import CapabilityError
from .base import Need  # the declarations' vocabulary lives below the models that use it

__all__ = ["CapabilityTable", "Row", "Need", "check", "check_plume", "facts", "declared", "policy_classes", "model_rows",
           "row_of"]

AXES = ("dimensions", "among_walls", "moving_sources", "several_sources", "in_teams")
FAMILIES = ("plume", "body", "sensor", "reward", "policy")
# what a user writes to reach each family's classes
_PREFIX = {"plume": "plumes", "body": "bodies", "sensor": "sensors", "reward": "rewards", "policy": "policies"}


@dataclass(frozen=True)
class Row:
    """One component's declarations: ``family`` (``"plume"``, ``"body"``, ``"sensor"``,
    ``"reward"``, ``"policy"``), ``name`` (as a user writes it, ``"plumes.Puffs"``), ``cls``, and
    the values of ``AXES`` and ``needs`` as the class declares them."""

    family: str
    name: str
    cls: type
    dimensions: tuple
    among_walls: Any
    moving_sources: Any
    several_sources: Any
    in_teams: Any
    needs: tuple
    built_in: bool = True

    def supports(self, axis: str, dims: int) -> bool:
        """True when the component works with ``axis`` (one of ``AXES`` but ``dimensions``) in a
        ``dims``-dimensional scenario (a plume's ``"fixed sources"`` counts as True here)."""
        return _allows(getattr(self, axis), dims)


def _allows(value, dims: int) -> bool:
    if isinstance(value, tuple):
        return dims in value
    return bool(value)


def declared(cls) -> dict:
    """The declarations of ``cls`` (a model or policy class), defaults filled in."""
    out = {"dimensions": tuple(getattr(cls, "dimensions", (2,))),
           "among_walls": getattr(cls, "among_walls", True),
           "moving_sources": getattr(cls, "moving_sources", True),
           "several_sources": getattr(cls, "several_sources", True),
           "in_teams": getattr(cls, "in_teams", True),
           "needs": tuple(getattr(cls, "needs", ()))}
    if getattr(cls, "family", None) == "action" and getattr(cls, "continuous", False) and out["among_walls"] is True:
        # a continuous body stops at a wall's face through its place role; without one it cannot be among walls
        from ..engine import api

        kernels = getattr(cls, "kernels", None)
        if isinstance(kernels, property) or kernels is None or getattr(kernels, "place", api.body_place) is api.body_place:
            out["among_walls"] = False
    return out


def _family(cls) -> str:
    family = getattr(cls, "family", "")
    return {"action": "body"}.get(family, family) or "policy"


def _label(cls) -> str:
    family = _family(cls)
    if cls.__module__.startswith("plume_multi."):
        return f"{_PREFIX[family]}.{cls.__name__}"
    return f"{cls.__module__}.{cls.__name__}"


def row_of(cls) -> Row:
    """The row of a model or policy class, from its declarations."""
    return Row(_family(cls), _label(cls), cls, built_in=cls.__module__.startswith("plume_multi."), **declared(cls))


def _model_classes() -> list:
    """Every concrete model class of the four families: the built-in ones, in their modules'
    order, then every other subclass of a family base defined so far (a user's models)."""
    from . import bodies, plumes, rewards, sensors
    from .base import Body, Model, Plume, Reward, Sensor

    out = []
    for module in (plumes, bodies, sensors, rewards):
        for attr in module.__all__:
            cls = getattr(module, attr)
            if isinstance(cls, type) and issubclass(cls, Model) and cls not in (Plume, Body, Sensor, Reward) \
                    and cls.kernels is not None and cls not in out:
                out.append(cls)
    seen = set(out)
    stack = [Plume, Body, Sensor, Reward]
    while stack:
        base = stack.pop(0)
        for cls in base.__subclasses__():
            stack.append(cls)
            if cls in seen or cls.__module__.startswith("plume_multi.") or cls.__name__.startswith("_") \
                    or cls.kernels is None:
                continue
            seen.add(cls)
            out.append(cls)
    return out


def model_rows() -> list:
    """The rows of every model class (``_model_classes``), in order."""
    return [row_of(cls) for cls in _model_classes()]


class CapabilityTable:
    """What works with what: one ``Row`` per plume, body, sensor, reward and policy.

    ``rows``: the rows (built-in first, then a user's models); ``names``: the built-in policies'
    names (``"infotaxis"``) and the class each makes (``None``: it picks one by the body and fits
    every scenario); ``row(cls)``; ``to_markdown()``; ``check(scenario, policy=None)``: raise
    ``CapabilityError`` for an unsupported combination.
    """

    def __init__(self, rows: list, names: dict | None = None):
        self.rows = tuple(rows)
        self.names = dict(names or {})

    def __iter__(self):
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return f"CapabilityTable({len(self.rows)} rows)"

    def family(self, family: str) -> tuple:
        """The rows of one family (``"plume"``, ``"body"``, ``"sensor"``, ``"reward"``, ``"policy"``)."""
        return tuple(r for r in self.rows if r.family == family)

    def row(self, cls) -> Row:
        """The row of a component class (a row made from its declarations if the table lacks it)."""
        for r in self.rows:
            if r.cls is cls:
                return r
        return row_of(cls)

    def check(self, scenario, policy=None) -> None:
        """Raise ``CapabilityError`` when ``scenario``'s parts (and ``policy``'s: a name, a policy
        object or class, a team of them) do not work together (module ``check``)."""
        check(scenario, policy, table=self)

    def to_markdown(self) -> str:
        """The table as Markdown: one section per family, a row per component, a column per axis."""
        out = []
        titles = {"plume": "Plumes", "body": "Bodies", "sensor": "Sensors", "reward": "Rewards", "policy": "Policies"}
        for family in FAMILIES:
            rows = self.family(family)
            if not rows:
                continue
            out += [f"### {titles[family]}", "",
                    "| component | 2-D | 3-D | walls | moving sources | several sources | teams | needs |",
                    "|---|---|---|---|---|---|---|---|"]
            for r in rows:
                needs = "; ".join(f"{n.words}" + (f" ({n.why})" if n.why else "") for n in r.needs) or "—"
                out.append(f"| `{r.name}` | {_yes(2 in r.dimensions)} | {_yes(3 in r.dimensions)} | "
                           f"{_cell(r.among_walls)} | {_cell(r.moving_sources)} | {_cell(r.several_sources)} | "
                           f"{_cell(r.in_teams)} | {needs} |")
            out.append("")
        return "\n".join(out)


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def _cell(value) -> str:
    if isinstance(value, tuple):
        return " and ".join(f"{d}-D" for d in value) + " only" if value else "no"
    if isinstance(value, str):
        return value
    return _yes(value)


# ----------------------------------------------------------------------------- the check
def policy_classes(policy, table: CapabilityTable | None = None) -> list:
    """The classes whose declarations ``policy`` must meet: a policy object's class, a policy
    class, a built-in's name (``"infotaxis"``; ``"infotaxis,greedy"``: ``table.names``), or each
    member of a list, mapping or team (an object with ``members``, ``policies.Team``). A function
    (a factory, a callable of observations) declares nothing and gives none."""
    from collections.abc import Mapping

    if isinstance(policy, str):
        names = table.names if table is not None else {}
        return [cls for cls in (names.get(part.strip()) for part in policy.split(",")) if cls is not None]
    if isinstance(policy, Mapping):
        return [c for member in policy.values() for c in policy_classes(member, table)]
    if isinstance(policy, (list, tuple)):
        return [c for member in policy for c in policy_classes(member, table)]
    if not isinstance(policy, type) and isinstance(getattr(policy, "members", None), (list, tuple)):
        return [c for member in policy.members for c in policy_classes(member, table)]
    if isinstance(policy, type):
        return [policy] if _declares(policy) else []
    return [type(policy)] if _declares(type(policy)) else []


def _declares(cls) -> bool:
    return any(hasattr(cls, name) for name in (*AXES, "needs"))


def _parts(scenario) -> list:
    """``(part, component)`` of every model of ``scenario``, a wrapper's wrapped sensor included."""
    out = [("plume", scenario.plume), ("body", scenario.action_model)]
    for sensor in scenario.sensors:
        while sensor is not None:
            out.append(("sensor", sensor))
            sensor = sensor.wraps
    out.append(("reward", scenario.reward))
    return out


def facts(scenario) -> dict:
    """What the scenario asks of every part: ``dims``, ``walls``, ``moving`` (the plume's sources
    move), ``several`` (more than one source a world), ``drawn`` (each world draws its sources),
    ``team``."""
    plume = scenario.plume
    return {"dims": len(scenario.grid_size), "walls": scenario.walls is not None, "moving": plume.sources_move(),
            "several": plume.source_count() > 1, "drawn": plume.sources_drawn(), "team": bool(scenario.team)}


def check(scenario, policy=None, *, table: CapabilityTable | None = None) -> None:
    """Raise ``CapabilityError`` when the parts of ``scenario`` (a ``Scenario``), and the classes of
    ``policy`` (``policy_classes``; a name is read in ``table.names``), do not work together: a part
    outside its declared dimensions, walls, moving or several sources or teams, or a need another
    part does not meet. What would work instead is named from ``table`` (the models' rows when
    None). Reads declarations only: nothing compiles, nothing is allocated."""
    f = facts(scenario)
    parts = _parts(scenario)
    if policy is not None:
        parts += [("policy", cls) for cls in policy_classes(policy, table)]
    for part, component in parts:
        cls = _cls(component)
        d = declared(cls)
        name = cls.__name__
        _check_axes(part, name, d, f, tuple(scenario.grid_size), table, parts)
        for need in d["needs"]:
            _check_need(part, name, need, f, parts, table)


def check_plume(plume, grid_size) -> None:
    """The plume's own axes in a scenario of ``grid_size`` (before ``Scenario`` binds it to the
    grid): its dimensions, and whether its moving or several sources run in that dimension."""
    dims = len(grid_size)
    f = {"dims": dims, "walls": False, "moving": plume.sources_move(), "several": plume.source_count() > 1,
         "drawn": False, "team": False}
    _check_axes("plume", plume.name, declared(type(plume)), f, tuple(grid_size), None)


def _refuse(message: str, owner: str, field: str, got: str, expected: str):
    raise CapabilityError(message, owner=owner, field=field, got=got, expected=expected)


def _others(family: str, ok, table) -> str:
    """The built-in components of ``family`` for which ``ok(row)`` holds, as ``"a, b or c"``."""
    table = table or CapabilityTable(model_rows())
    names = [r.name for r in table.family(family) if r.built_in and ok(r)]
    if not names:
        return ""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _check_axes(part, name, d, f, grid, table, parts=None) -> None:
    """Refuse ``name`` (a ``part``, declaring ``d``) outside its dimensions, walls, moving or several
    sources or teams, naming what would work there instead (the built-in components of its family
    that meet the scenario of ``f``, and ``parts`` when given: their needs too)."""
    dims = f["dims"]

    def instead(prefix: str) -> str:
        others = _others(part, lambda r: r.cls.__name__ != name and _meets(r, f, parts), table)
        return f"{prefix}{others}" if others else ""

    if dims not in d["dimensions"]:
        words = " and ".join(f"{x}-D" for x in d["dimensions"])
        _refuse(f"{name} is {words} only; the scenario is {dims}-D (grid_size={grid}): use a {words} scenario"
                + instead(", or "), name, "dimensions", f"{dims}-D", f"a {words} scenario")
    asks = (("moving", "moving_sources", "sources that move"), ("several", "several_sources", "several sources"),
            ("team", "in_teams", "a team (team=True)"))
    for fact, axis, words in asks:
        if f[fact] and not _allows(d[axis], dims):
            where = "" if d[axis] is False else f" in {dims}-D (only in {_cell(d[axis]).replace(' only', '')})"
            _refuse(f"{name} does not work with {words}{where}; the scenario has them" + instead(": use "), name, axis,
                    words, f"a scenario without {words}")
    if f["walls"]:
        value = d["among_walls"]
        if value == "fixed sources":
            if f["drawn"] or f["moving"]:
                _refuse(f"{name}: draws a source in each world and episode or moves it, which could put it inside a "
                        "wall; expected a plume with fixed sources among walls (Scenario(walls=...); plumes.Puffs moves "
                        "its sources among walls)", name, "among_walls", "drawn or moving sources",
                        "fixed sources among walls")
        elif not value:
            why = " (its continuous moves have no place role to stop it at a wall's face)" if part == "body" else ""
            _refuse(f"{name} does not work among walls{why}; the scenario has walls: use walls=None" + instead(", or "),
                    name, "walls", "walls", "walls=None")


def _cls(component) -> type:
    return component if isinstance(component, type) else type(component)


def _meets(row: Row, f: dict, parts) -> bool:
    """True when the component of ``row`` would work with the scenario of ``f`` and ``parts`` (its
    needs unasked when ``parts`` is None)."""
    dims = f["dims"]
    if dims not in row.dimensions:
        return False
    for fact, axis in (("moving", "moving_sources"), ("several", "several_sources"), ("team", "in_teams")):
        if f[fact] and not _allows(getattr(row, axis), dims):
            return False
    if f["walls"] and not (row.among_walls is True
                           or (row.among_walls == "fixed sources" and not (f["drawn"] or f["moving"]))):
        return False
    return parts is None or all(any(n.met_by(_cls(c)) for p, c in parts if p == n.part) for n in row.needs)


def _check_need(part, name, need: Need, f, parts, table) -> None:
    have = [c for p, c in parts if p == need.part]
    if any(need.met_by(_cls(c)) for c in have):
        return
    shown = repr([_cls(c).__name__ for c in have] if need.part == "sensor" else _cls(have[0]).__name__)
    instead = []
    if part == "policy":  # the other policies that work in this scenario as it is
        others = _others("policy", lambda r: r.cls.__name__ != name and _meets(r, f, parts), table)
        if others:
            instead.append(others)
    providers = _others(need.part, lambda r: need.met_by(r.cls), table)
    if providers:
        instead.append(providers if need.part != "sensor" else f"add {providers} to the sensors")
    why = f" ({need.why})" if need.why else ""
    _refuse(f"{name}.{need.part}: got {shown}; expected {need.words}{why}"
            + (f": use {'; or '.join(instead)}" if instead else ""), name, need.part, shown, need.words)
