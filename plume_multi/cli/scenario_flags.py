"""The scenario flags that every command taking a scenario shares (``render``, ``eval``,
``compare``, ``train``), and the ``Scenario`` they describe: the default Gaussian search's numbers
(``--grid``, ``--sigma``, ...), any model by name (``--plume``, ``--body``, ``--sensors``,
``--reward``), walls from files (``--walls``), or a whole scenario (``--scenario FILE.json`` or a
named one such as ``poisson_search:lambda_over_dx=2``)."""

from __future__ import annotations

import inspect

from .. import files
from ..errors import ValidationError
from . import SCENARIO_FLAGS, UsageError, parse_model

__all__ = ["NAMED_SCENARIOS", "add_scenario_arguments", "scenario_from_args"]


def _named_scenarios() -> dict:
    from .. import scenarios

    return {"poisson_search": scenarios.poisson_search, "otto_benchmark": scenarios.otto_benchmark,
            "plume_following": scenarios.plume_following}


# the factories of plume_multi.scenarios reachable by name
NAMED_SCENARIOS = ("poisson_search", "otto_benchmark", "plume_following")


def add_scenario_arguments(parser, *, agents: int, steps: int) -> None:
    """The ``scenario`` argument group; ``agents`` and ``steps`` are the command's defaults."""
    g = parser.add_argument_group("scenario")
    g.add_argument("--scenario", default=None, metavar="FILE.json|NAME",
                   help="the whole scenario: a JSON file (Scenario.metadata()'s shape) or a named one, "
                        f"NAME[:KEY=VALUE,...] with NAME in {', '.join(NAMED_SCENARIOS)} (see below)")
    g.add_argument("--agents", type=int, default=None, metavar="N", help=f"searchers per world (default {agents})")
    g.add_argument("--grid", type=int, nargs=2, default=None, metavar=("WIDTH", "HEIGHT"),
                   help="grid size in cells (default 128 128, or the plume's own size)")
    g.add_argument("--source", type=int, nargs=2, default=None, metavar=("X", "Y"),
                   help="source cell of the default plume (default the centre)")
    g.add_argument("--sigma", type=float, default=None, metavar="S",
                   help="spread of the default plume in cells (default 12)")
    g.add_argument("--steps", type=int, default=None, metavar="N", help=f"step limit of an episode (default {steps})")
    g.add_argument("--goal-radius", type=float, default=None, metavar="R",
                   help="distance to the source that counts as found (default: the source cell only)")
    g.add_argument("--action-model", choices=("cardinal", "moore"), default=None,
                   help="4 moves, or 8 moves + stay (default cardinal; --body takes any body)")
    g.add_argument("--plume", default=None, metavar="MODEL",
                   help="plume model, e.g. gaussian:sigma=8,source=random, puffs, poisson_hits:lambda_over_dx=2")
    g.add_argument("--body", default=None, metavar="MODEL", help="body (action model), e.g. oriented:turn_degrees=45")
    g.add_argument("--sensors", nargs="+", default=None, metavar="MODEL",
                   help="the sensors, in order, e.g. concentration antennae:distance=2 wind heading")
    g.add_argument("--reward", default=None, metavar="MODEL", help="reward model, e.g. step_penalty:step_penalty=0.01")
    g.add_argument("--neighbours", type=int, default=None, metavar="K",
                   help="each agent also senses its K nearest agents (default 0)")
    g.add_argument("--team", action="store_true", default=None,
                   help="the first arrival ends the search for all (and a Belief is pooled)")
    g.add_argument("--walls", nargs="+", default=None, metavar="FILE.npy",
                   help="solid cells: a NumPy file of a bool mask of the grid's shape, (HEIGHT, WIDTH) indexed "
                        "[y, x] (or (DEPTH, HEIGHT, WIDTH)), True where solid; several files: each world draws one "
                        "mask per episode (Scenario(walls=...))")


def _walls(paths):
    """The masks in the ``--walls`` files (one, or a list), read as NumPy arrays (no pickles)."""
    import numpy as np

    masks = []
    for path in paths:
        if not str(path).lower().endswith(".npy"):
            raise UsageError(f"--walls: got {path!r}; expected a .npy file of a bool mask (numpy.save)")
        try:
            masks.append(np.load(path, allow_pickle=False))
        except (OSError, ValueError) as exc:
            raise UsageError(f"--walls: cannot read {path!r}: {exc}") from None
    return masks[0] if len(masks) == 1 else masks


def _scenario_errors(build):
    """``build()``, with a Scenario error turned into a UsageError naming its flag."""
    try:
        return build()
    except ValidationError as exc:
        message = str(exc)
        field = message.split(":")[0].removeprefix("Scenario.")
        flag = SCENARIO_FLAGS.get(field)
        raise UsageError(f"{flag} ({message})" if flag else message) from exc


def _named(spec: str, args, steps: int):
    """The named scenario ``NAME[:KEY=VALUE,...]``, with ``--agents``, ``--steps``, ``--team``."""
    import ast

    name, _, rest = spec.partition(":")
    factory = _named_scenarios()[name]
    params = inspect.signature(factory).parameters
    kwargs = {}
    for piece in rest.split(",") if rest.strip() else []:
        if "=" in piece:
            key, text = (part.strip() for part in piece.split("=", 1))
            if key not in params:
                raise UsageError(f"--scenario: {name} has no parameter {key!r}; expected some of {sorted(params)}")
            try:
                kwargs[key] = ast.literal_eval(text)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                kwargs[key] = text
        else:
            raise UsageError(f"--scenario: got {spec!r}; expected {name}:KEY=VALUE,KEY=VALUE")
    for flag, key, value in (("--agents", "n_agents", args.agents), ("--steps", "max_steps", args.steps),
                             ("--team", "team", args.team)):
        if value is not None:
            if key in kwargs:
                raise UsageError(f"{flag}: got it with --scenario {name}:{key}=...; give one of them")
            kwargs[key] = value
    if params["max_steps"].default is not None:  # otto_benchmark: its case's own cap unless given
        kwargs.setdefault("max_steps", steps)
    try:
        scenario = factory(**kwargs)
    except ValidationError as exc:
        raise UsageError(f"--scenario: {exc}") from None
    except TypeError as exc:  # a keyword the factory does not take
        raise UsageError(f"--scenario: {name}: {exc}") from None
    if args.walls is None:
        return scenario
    walls = _walls(args.walls)
    return _scenario_errors(lambda: scenario.replace(walls=walls))


def scenario_from_args(args, *, agents: int, steps: int):
    """The ``Scenario`` the flags of ``add_scenario_arguments`` describe (``agents`` and ``steps``:
    the command's defaults). Raises ``UsageError`` naming the flag."""
    from ..scenario import Scenario, load_scenario

    for name in ("agents", "steps"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise UsageError(f"--{name}: got {getattr(args, name)}; expected an integer >= 1")
    models = {"plume": args.plume, "action_model": args.body, "reward": args.reward}
    if args.scenario is not None:
        given = [flag for flag, value in (("--plume", args.plume), ("--body", args.body), ("--sensors", args.sensors),
                                          ("--reward", args.reward), ("--source", args.source),
                                          ("--sigma", args.sigma), ("--action-model", args.action_model)) if value]
        if given:
            raise UsageError(f"{given[0]}: got it with --scenario; the scenario gives the models (edit it, or "
                             "leave --scenario out)")
        name = args.scenario.partition(":")[0]
        if name in NAMED_SCENARIOS and not files.is_file(args.scenario):
            for flag, value in (("--grid", args.grid), ("--goal-radius", args.goal_radius),
                                ("--neighbours", args.neighbours)):
                if value is not None:
                    raise UsageError(f"{flag}: got it with --scenario {name}; give the scenario's own parameters "
                                     f"after its name ({name}:KEY=VALUE,...)")
            return _named(args.scenario, args, steps)
        if not args.scenario.lower().endswith(".json") and not files.is_file(args.scenario):
            raise UsageError(f"--scenario: got {args.scenario!r}; expected a JSON file or a named scenario, "
                             f"one of {', '.join(NAMED_SCENARIOS)}")
        try:
            scenario = load_scenario(args.scenario)
        except ValidationError as exc:
            raise UsageError(f"--scenario: {exc}") from None
        changes = {field: value for field, value in (
            ("grid_size", None if args.grid is None else tuple(args.grid)), ("n_agents", args.agents),
            ("max_steps", args.steps), ("goal_radius", args.goal_radius),
            ("n_neighbours", args.neighbours or None), ("team", args.team),
            ("walls", None if args.walls is None else _walls(args.walls))) if value is not None}
        return _scenario_errors(lambda: scenario.replace(**changes) if changes else scenario)
    if args.body is not None and args.action_model is not None:
        raise UsageError("--body: got it with --action-model; give one of them")
    if args.plume is not None:
        for flag, value in (("--sigma", args.sigma), ("--source", args.source)):
            if value is not None:
                raise UsageError(f"{flag}: got it with --plume; give the plume's parameters in --plume "
                                 "(e.g. gaussian:sigma=8,source=10,20)")
    kwargs = dict(grid_size=None if args.grid is None else tuple(args.grid),
                  source_location=None if args.source is None else tuple(args.source), sigma=args.sigma,
                  n_agents=agents if args.agents is None else args.agents,
                  max_steps=steps if args.steps is None else args.steps,
                  action_model=args.action_model or "cardinal", n_neighbours=args.neighbours or 0,
                  team=bool(args.team))
    families = {"plume": "plume", "action_model": "action", "reward": "reward"}
    flags = {"plume": "--plume", "action_model": "--body", "reward": "--reward"}
    for key, spec in models.items():
        if spec is not None:
            kwargs[key] = parse_model(spec, families[key], flags[key])
    if args.sensors is not None:
        kwargs["sensors"] = tuple(parse_model(spec, "sensor", "--sensors") for spec in args.sensors)
    if args.goal_radius is not None:
        kwargs["goal_radius"] = args.goal_radius
    if args.walls is not None:
        kwargs["walls"] = _walls(args.walls)
    return _scenario_errors(lambda: Scenario(**kwargs))
