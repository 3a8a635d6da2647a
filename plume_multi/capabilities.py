"""What composes with what: ``capabilities()``, the table of every plume, body, sensor, reward and
policy, gathered from the classes' own declarations (``dimensions``, ``among_walls``,
``moving_sources``, ``several_sources``, ``in_teams``, ``needs``), and ``check(scenario, policy)``.

The table and the check of a scenario's own parts live with the models
(``plume_multi.models.capability_table``: ``Scenario`` and ``Simulator`` check there, before
anything compiles); this module, above the policies, adds the policies' rows and resolves a policy
given by name (``"infotaxis"``), object, class or team, for ``evaluate``, ``compare``, ``sweep``
and the CLI. An unsupported combination raises ``CapabilityError`` (a ``ValidationError``) naming
both parts and what would work instead.
"""

from __future__ import annotations

import sys
import types

from .models import capability_table as _table
from .models.capability_table import CapabilityTable, Need, Row, check_plume, declared, facts
from .policies import named as _named

__all__ = ["capabilities", "CapabilityTable", "Row", "Need", "check", "check_plume", "declared", "facts",
           "policy_classes"]


def capabilities() -> CapabilityTable:
    """The capability table: a row per plume, body, sensor, reward and policy (built-in, then any
    model a user defined on the family bases), each from its class's declarations.

    Example:
        >>> import plume_multi
        >>> table = plume_multi.capabilities()
        >>> row = table.row(plume_multi.plumes.Puffs)
        >>> row.dimensions, row.among_walls
        ((2,), True)
    """
    return _named.capability_table()


def policy_classes(policy) -> list:
    """The classes whose declarations ``policy`` must meet: a policy object's class, a policy
    class, a built-in's name (``"infotaxis"``; ``"infotaxis,greedy"``), or each member of a list,
    mapping or ``policies.Team``. A function (a factory, a callable of observations) declares
    nothing and gives none."""
    return _table.policy_classes(policy, capabilities())


def check(scenario, policy=None, *, table: CapabilityTable | None = None) -> None:
    """Raise ``CapabilityError`` when the parts of ``scenario`` (a ``Scenario``) and the classes of
    ``policy`` (``policy_classes``) do not work together: a part outside its declared dimensions,
    walls, moving or several sources or teams, or a need another part does not meet. Reads
    declarations only: nothing compiles, nothing is allocated."""
    _table.check(scenario, policy, table=table or capabilities())


class _Module(types.ModuleType):
    """This module, callable: ``plume_multi.capabilities()`` is ``capabilities()`` whether the name
    reaches the function or, once imported, the module of the same name."""

    def __call__(self) -> CapabilityTable:
        return capabilities()


sys.modules[__name__].__class__ = _Module
