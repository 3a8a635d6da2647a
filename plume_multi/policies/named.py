"""The built-in policies by name (``plume-multi eval --policy NAME``, the benchmark's baselines).

``NAMED[name](scenario, seed)`` makes the policy for ``scenario``; one that cannot act in it
raises a ``ValidationError`` saying why. ``plume_multi.evaluate`` takes these factories as they are
(it calls them per chunk of worlds with that chunk's seed).
"""

from __future__ import annotations

from ..errors import ValidationError

__all__ = ["NAMED", "NAMES", "named_policy"]


def _random(scenario, seed):
    from .baselines import RandomBoxPolicy, RandomPolicy

    if scenario.continuous:
        body = scenario.action_model
        return RandomBoxPolicy(body.low, body.high, seed=seed)
    return RandomPolicy(scenario.n_actions, seed=seed)


def _gradient(scenario, seed):
    from ..models.bodies import Cardinal, Continuous, Moore
    from .baselines import GradientClimber

    if not isinstance(scenario.action_model, (Cardinal, Moore, Continuous)):
        raise ValidationError(f"gradient turns to a random one of the cardinal or moore moves (or a continuous "
                              f"body's turns); the body {scenario.action_model.name} has other actions: use random "
                              "or MODULE:NAME")
    return GradientClimber(scenario=scenario, seed=seed)


def _surge_cast(scenario, seed):
    from .surge_cast import SurgeCast

    return SurgeCast(scenario, seed=seed)


def _belief_searcher(make):
    """A factory of ``make()`` that first checks that the scenario has the belief it reads."""

    def factory(scenario, seed):
        from ..models.plumes.poisson_hits import PoissonHitPlume
        from ..models.sensors import Belief

        if not isinstance(scenario.plume, PoissonHitPlume) or not any(isinstance(s, Belief) for s in scenario.sensors):
            raise ValidationError("infotaxis, space-aware-infotaxis and greedy decide on the Poisson-hit "
                                  "belief: the scenario needs a Poisson-hit plume and a Belief sensor (--scenario "
                                  "poisson_search[:...], or --plume poisson_hits --sensors hits belief)")
        return make()

    return factory


def _infotaxis(space_aware):
    def make():
        from .infotaxis import Infotaxis

        return Infotaxis(space_aware=space_aware)

    return make


def _greedy():
    from .greedy import Greedy

    return Greedy()


NAMED = {"random": _random, "gradient": _gradient, "surge-cast": _surge_cast,
         "infotaxis": _belief_searcher(_infotaxis(False)),
         "space-aware-infotaxis": _belief_searcher(_infotaxis(True)), "greedy": _belief_searcher(_greedy)}
NAMES = tuple(NAMED)


def named_policy(name: str, scenario, seed: int = 0):
    """The built-in policy ``name`` made for ``scenario`` (a ``ValidationError`` if it cannot act there)."""
    if name not in NAMED:
        raise ValidationError(f"policy: got {name!r}; expected one of {list(NAMES)}")
    return NAMED[name](scenario, seed)
