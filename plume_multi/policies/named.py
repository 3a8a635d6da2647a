"""The built-in policies by name (``plume-multi eval --policy NAME``, the benchmark's baselines).

``NAMED[name](scenario, seed)`` makes the policy for ``scenario``; one that cannot act in it
raises a ``ValidationError`` saying why (``CapabilityError`` from the capability table, which
reads the declarations of the class ``CLASSES[name]`` names; ``capability_table()``: the models'
rows and the policies'). ``plume_multi.evaluate`` takes these factories as they are (it calls them
per chunk of worlds with that chunk's seed). ``"perseus"`` solves the scenario's POMDP with
``Perseus.solve`` and a fixed iteration budget, once per process and cached on disk
(``perseus_named``: ``BUDGET``, the cache).
"""

from __future__ import annotations

from ..errors import ValidationError
from ..models import capability_table as _table

__all__ = ["NAMED", "NAMES", "CLASSES", "named_policy", "capability_table"]


def _random(scenario, seed):
    from .baselines import RandomBoxPolicy, RandomPolicy

    if scenario.continuous:
        body = scenario.action_model
        return RandomBoxPolicy(body.low, body.high, seed=seed)
    return RandomPolicy(scenario.n_actions, seed=seed)


def _gradient(scenario, seed):
    from .baselines import GradientClimber

    return GradientClimber(scenario=scenario, seed=seed)


def _surge_cast(scenario, seed):
    from .surge_cast import SurgeCast

    return SurgeCast(scenario, seed=seed)


def _checked(name: str, make):
    """A factory of ``make(scenario, seed)`` that first asks the capability table whether the
    class of ``CLASSES[name]`` can act in the scenario (``CapabilityError`` if not)."""

    def factory(scenario, seed):
        _table.check(scenario, name, table=capability_table())
        return make(scenario, seed)

    return factory


def _infotaxis(space_aware):
    def make(scenario, seed):
        from .infotaxis import Infotaxis

        return Infotaxis(space_aware=space_aware)

    return make


def _scenario_for(factory, kind):
    """``factory`` with the ``scenario_for`` of the Bayesian searcher it makes (``evaluate`` calls it
    first: the scenario then carries that searcher's ``Belief`` sensor)."""

    def scenario_for(scenario):
        if kind == "perseus":
            from .perseus_named import solved

            return solved(scenario).scenario_for(scenario)
        if kind == "greedy":
            from .greedy import Greedy

            return Greedy().scenario_for(scenario)
        from .infotaxis import Infotaxis

        return Infotaxis(space_aware=kind == "space-aware-infotaxis").scenario_for(scenario)

    factory.scenario_for = scenario_for
    return factory


def _greedy(scenario, seed):
    from .greedy import Greedy

    return Greedy()


def _perseus(scenario, seed):
    # the solve's own seed is perseus_named.BUDGET's: every chunk of worlds gets the same vectors
    from .perseus_named import solved

    policy = solved(scenario)
    policy.check_scenario(policy.scenario_for(scenario))
    return policy


# The class each name makes (plume_multi.policies' names; None: it picks by the body, and fits every one)
CLASSES = {"random": None, "gradient": "GradientClimber", "surge-cast": "SurgeCast", "infotaxis": "Infotaxis",
           "space-aware-infotaxis": "Infotaxis", "greedy": "Greedy", "perseus": "Perseus"}
NAMED = {"random": _random, "gradient": _checked("gradient", _gradient), "surge-cast": _checked("surge-cast", _surge_cast),
         "infotaxis": _scenario_for(_checked("infotaxis", _infotaxis(False)), "infotaxis"),
         "space-aware-infotaxis": _scenario_for(_checked("space-aware-infotaxis", _infotaxis(True)), "space-aware-infotaxis"),
         "greedy": _scenario_for(_checked("greedy", _greedy), "greedy"),
         "perseus": _scenario_for(_checked("perseus", _perseus), "perseus")}
NAMES = tuple(NAMED)


def capability_table() -> "_table.CapabilityTable":
    """The capability table: the models' rows, then a row per class of ``plume_multi.policies``
    (``Team`` is made of the others), with ``CLASSES``' names (``plume_multi.capabilities()``)."""
    from .. import policies

    classes = [getattr(policies, n) for n in policies.__all__ if n != "Team"]
    names = {name: getattr(policies, cls) if cls else None for name, cls in CLASSES.items()}
    return _table.CapabilityTable(_table.model_rows() + [_table.row_of(c) for c in classes if isinstance(c, type)], names)


def named_policy(name: str, scenario, seed: int = 0):
    """The built-in policy ``name`` made for ``scenario`` (a ``ValidationError`` if it cannot act there)."""
    if name not in NAMED:
        raise ValidationError(f"policy: got {name!r}; expected one of {list(NAMES)}")
    return NAMED[name](scenario, seed)
