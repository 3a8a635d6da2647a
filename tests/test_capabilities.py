"""The capability table (``plume_multi.capabilities``), cell by cell.

A cell is a component (a row: plume, body, sensor, reward, policy) in a context: a dimension (2-D,
3-D), and in it walls, sources that move, several sources or a team. For every cell the test
builds the smallest scenario that puts that component in that context, the other parts chosen to
support it (a witness), and:

* where the table says no, asserts the refusal comes up front: our ``ValidationError``
  (``CapabilityError`` from the table, or the model's own constructor for a context it has no way
  to express), in under a second, before any step driver is assembled;
* where it says yes, asserts the scenario is accepted (the table and every model's own checks
  agree), and that a test that runs that cell against its plain NumPy reference exists: ``COVERED``
  names it (a node of tests/, checked to be collected from its file). Running each supported cell
  again here would compile a step driver per combination (5-15 s of CPU each, for about 150
  cells); the named tests already compile and check them. The supported cells that no reference
  test runs yet are listed in ``NOT_YET_COVERED``, and the test holds that list exact, so that
  it can only shrink: a new "yes" needs a reference test.

Each declared pairing (``needs``) is walked the same way against every built-in part of the kind
it needs: refused up front where unmet, accepted where met.
"""

from __future__ import annotations

import ast
import time
from pathlib import Path

import numpy as np
import pytest

import plume_multi
from plume_multi import Scenario, bodies, capabilities, plumes, policies, rewards, sensors, sources
from plume_multi.capabilities import Need
from plume_multi.engine import assemble
from plume_multi.errors import CapabilityError, ValidationError

TESTS = Path(__file__).parent
TABLE = capabilities()
BUILT_IN = [row for row in TABLE.rows if row.built_in]  # (a user's models, of other test modules, have rows too)
AXES = ("plain", "walls", "moving sources", "several sources", "teams")
GRID = {2: (5, 4), 3: (5, 4, 2)}
STARTS = {2: ((0, 0), (1, 0)), 3: ((0, 0, 0), (1, 0, 0))}
SOURCE = {2: (3, 2), 3: (3, 2, 1)}
# a solid cell away from the witnesses' sources and starts
SOLID = {2: (4, 3), 3: (0, 3, 1)}


def _short(cls) -> str:
    return TABLE.row(cls).name


# ----------------------------------------------------------------------------- witnesses
def _gaussian(axis, dims):
    if axis == "moving sources":
        return plumes.Gaussian(source=SOURCE[dims], sigma=2.0, source_motion=sources.Drift((0.25, 0.0)))
    if axis == "several sources":
        return plumes.Gaussian(source=[SOURCE[dims], STARTS[dims][1][:2] + (2,) * (dims - 2)], sigma=2.0)
    return plumes.Gaussian(source=SOURCE[dims], sigma=2.0)


def _poisson(axis, dims):
    if axis == "several sources":
        return None  # one target: no way to ask for several
    if axis == "moving sources":
        return plumes.PoissonHits(1.0, 2.0, dims=dims, grid_size=5, source_motion=sources.RandomWalk(speed=0.5))
    if axis == "walls":  # among walls a source must be fixed
        return plumes.PoissonHits(1.0, 2.0, dims=dims, grid_size=5, source=(3, 2, 1)[:dims])
    return plumes.PoissonHits(1.0, 2.0, dims=dims, grid_size=5)


def _windy(axis, dims):
    if axis in ("moving sources", "several sources"):
        return None  # one target that stays: no way to ask for these
    return plumes.WindyPoissonHits(grid_size=(7, 5), start=(5, 2), source=(1, 2) if axis == "walls" else None)


def _puffs(axis, dims):
    motion = sources.Drift((0.1, 0.0)) if axis == "moving sources" else None
    source = [(2.0, 4.0), (3.0, 3.0)] if axis == "several sources" else (2.0, 4.0)
    return plumes.Puffs(source=source, source_motion=motion)


def _movie(axis, dims):
    if axis in ("moving sources", "several sources"):
        return None  # a recording has one source that stays: no way to ask for these
    shape = (2, 4, 5) if dims == 2 else (2, 2, 4, 5)
    return plumes.Movie(np.full(shape, 100, np.uint8), source=tuple(float(c) for c in SOURCE[dims]))


PLUMES = {plumes.Gaussian: _gaussian, plumes.PoissonHits: _poisson, plumes.Puffs: _puffs, plumes.Movie: _movie,
          plumes.WindyPoissonHits: _windy}
BODIES = {bodies.Cardinal: bodies.Cardinal, bodies.Moore: bodies.Moore, bodies.Oriented: bodies.Oriented,
          bodies.Continuous: bodies.Continuous, bodies.RunTumble: bodies.RunTumble}
SENSORS = {sensors.Concentration: sensors.Concentration, sensors.Position: sensors.Position,
           sensors.Heading: sensors.Heading, sensors.Binary: sensors.Binary, sensors.Antennae: sensors.Antennae,
           sensors.Wind: sensors.Wind, sensors.Neighbours: lambda: sensors.Neighbours(1),
           sensors.History: lambda: sensors.History(sensors.Concentration()), sensors.Hits: sensors.Hits,
           sensors.Belief: sensors.Belief}
REWARDS = {rewards.SparseGoal: rewards.SparseGoal, rewards.StepPenalty: rewards.StepPenalty}
MAKERS = {**PLUMES, **BODIES, **SENSORS, **REWARDS}


def _grid_of(plume, dims):
    if isinstance(plume, plumes.Puffs):
        return (16, 8) if dims == 2 else (16, 8, 2)
    if isinstance(plume, plumes.WindyPoissonHits):
        return None if dims == 2 else (7, 5, 2)  # its own plane, or asked in 3-D
    if isinstance(plume, (plumes.Movie, plumes.PoissonHits)):
        return None  # their own (frames or volumes; dims=2 or 3)
    return GRID[dims]


def _allows(row, axis, dims) -> bool:
    """The table's word on ``row`` in ``axis`` (a plume's "fixed sources" holds for the witnesses,
    whose sources among walls are fixed)."""
    if dims not in row.dimensions:
        return False
    return axis == "plain" or row.supports({"walls": "among_walls", "moving sources": "moving_sources",
                                            "several sources": "several_sources", "teams": "in_teams"}[axis], dims)


def _partner(kinds, need_of, axis, dims, plume=None):
    """The first of ``kinds`` (classes) that meets ``need_of`` and works in the context itself."""
    for cls in kinds:
        if need_of(cls) and _allows(TABLE.row(cls), axis, dims):
            if plume is not None or cls not in PLUMES:
                return cls
            made = PLUMES[cls](axis, dims)
            if made is not None:
                return cls
    return None


def _needs(rows, part):
    return lambda cls: all(n.met_by(cls) for row in rows for n in row.needs if n.part == part)


def witness(row, axis, dims, swap=None, swap_needs=True):
    """``(make, policy, partners)``: ``make()`` builds the scenario of ``row`` in the context
    (raising where refused), ``policy`` the row's class when it is a policy, ``partners`` the
    names of the parts chosen for its needs (they may refuse in its place); None when no scenario
    can put the row there (no plume offers the context with what the row needs). ``swap``: a
    ``(part, class)`` forced into the witness (the needs' walk), whose own needs the other parts
    meet too where ``swap_needs``."""
    cls = row.cls
    forced = dict([swap]) if swap else {}
    rows = [row] + [TABLE.row(c) for c in forced.values() if swap_needs]  # a part swapped in brings its own needs
    partners = set()

    def pick(part, kinds):  # the row itself, the part swapped in, or the first that fits
        if cls in kinds:
            return cls
        chosen = forced.get(part) or _partner(list(kinds), _needs(rows, part), axis, dims)
        if chosen is not None and chosen is not plumes.Gaussian:
            partners.add(chosen.__name__)
        return chosen

    plume_cls, body_cls = pick("plume", PLUMES), pick("body", BODIES)
    if plume_cls is None or body_cls is None:
        return None
    # the sensors: the row's, what the row needs, an odour reading
    chosen = []
    if cls in SENSORS:
        chosen.append(cls)
    if forced.get("sensor"):
        chosen.append(forced["sensor"])
    else:
        for need in row.needs:
            if need.part == "sensor":
                extra = _partner(list(SENSORS), need.met_by, axis, dims)
                if extra is None:
                    return None
                chosen.append(extra)
                partners.add(extra.__name__)
        if not chosen:
            chosen.append(sensors.Concentration)
    reward_cls = cls if cls in REWARDS else rewards.SparseGoal

    def make():
        plume = PLUMES[plume_cls](axis, dims)
        if plume is None:
            raise ValidationError(f"{plume_cls.__name__} has no way to express {axis}")
        grid = _grid_of(plume, dims)
        size = grid or plume.natural_grid_size()
        kw = dict(plume=plume, grid_size=grid, action_model=BODIES[body_cls](),
                  sensors=tuple(SENSORS[s]() for s in chosen), reward=REWARDS[reward_cls](), n_agents=2,
                  start_positions=STARTS[len(size)], team=axis == "teams", max_steps=5)
        if axis == "walls":
            mask = np.zeros(tuple(size)[::-1], bool)
            mask[tuple(SOLID[len(size)])[::-1]] = True
            kw["walls"] = mask
        return Scenario(**kw)

    return make, (cls if row.family == "policy" else None), partners


# every row in 2-D and 3-D, and in each other context in every dimension it runs in
CELLS = [(row, axis, dims) for row in BUILT_IN for axis in AXES for dims in (2, 3)
         if axis == "plain" or dims in row.dimensions]


def _cell_id(cell):
    row, axis, dims = cell
    return f"{row.name}-{axis.replace(' ', '_')}-{dims}D"


@pytest.fixture
def no_assembly(monkeypatch):
    """Fails the test if a step driver is assembled (the first thing compiling does)."""
    calls = []

    def refuse(*args, **kwargs):
        calls.append(args)
        raise AssertionError("a step driver was assembled for a refused combination")

    monkeypatch.setattr(assemble, "assemble", refuse)
    return calls


def _refused_up_front(make, policy, owners, no_assembly):
    start = time.perf_counter()
    with pytest.raises(ValidationError) as info:
        scenario = make()
        if policy is not None:
            plume_multi.evaluate(policy, scenario, 1, progress=False)
    took = time.perf_counter() - start
    assert took < 1.0, (took, str(info.value))
    assert not no_assembly
    if isinstance(info.value, CapabilityError):
        assert info.value.owner in owners, (info.value.owner, owners, str(info.value))
    else:  # the model's own constructor: it has no way to express the context
        assert info.value.owner in owners or any(name in str(info.value) for name in owners), str(info.value)
    return info.value


@pytest.mark.parametrize("cell", CELLS, ids=_cell_id)
def test_every_cell_is_refused_up_front_or_accepted(cell, no_assembly):
    row, axis, dims = cell
    made = witness(row, axis, dims)
    if made is None:
        # no plume offers the context with what the row needs: every one refuses it up front
        assert row.family != "plume"
        return
    make, policy, partners = made
    if row.cls in PLUMES and not _allows(row, axis, dims):
        try:
            expressible = PLUMES[row.cls](axis, dims) is not None
        except ValidationError:
            expressible = True  # its constructor refuses: checked as a refusal below
        if not expressible:
            return  # the plume has no way to be asked for it, and the table says no
    if _allows(row, axis, dims):
        scenario = make()
        capabilities.check(scenario, policy)
        assert not no_assembly
    else:
        _refused_up_front(make, policy, {row.cls.__name__} | partners, no_assembly)


NEEDS = [(row, need, cls) for row in BUILT_IN for need in row.needs
         for cls in {"plume": PLUMES, "body": BODIES, "sensor": SENSORS}[need.part]]


@pytest.mark.parametrize("row, need, candidate", NEEDS,
                         ids=[f"{r.name}-{n.part}-{c.__name__}" for r, n, c in NEEDS])
def test_each_need_is_met_or_refused_up_front(row, need, candidate, no_assembly):
    dims = 2 if 2 in row.dimensions else 3
    made = witness(row, "plain", dims, swap=(need.part, candidate))
    if made is None:  # no part meets both the row's needs and the candidate's: the candidate's refuse
        assert not need.met_by(candidate)
        made = witness(row, "plain", dims, swap=(need.part, candidate), swap_needs=False)
    make, policy, partners = made
    if need.met_by(candidate):
        scenario = make()
        capabilities.check(scenario, policy)
    else:
        err = _refused_up_front(make, policy, {row.cls.__name__} | partners | {candidate.__name__}, no_assembly)
        if err.owner == row.cls.__name__:
            assert err.field == need.part and need.words in str(err), str(err)


# ----------------------------------------------------------------------------- supported cells, run elsewhere
def _cover(node: str, rows: str, *contexts) -> dict:
    return {(f"{name}", axis, dims): node for name in rows.split() for axis, dims in contexts}


PLAIN2, PLAIN3 = ("plain", 2), ("plain", 3)
# The tests that step each supported cell against its plain reference (bit for bit, or the
# protocol runner that is itself checked against otto-benchmark's), by cell: what each test's
# scenarios hold, read from its code.
COVERED = {
    **_cover("tests/models/test_reference.py::test_simulator_matches_reference",
             "plumes.Gaussian plumes.Movie bodies.Moore bodies.Oriented bodies.RunTumble bodies.Continuous "
             "sensors.Concentration sensors.Position sensors.Heading sensors.Binary sensors.Antennae sensors.Wind "
             "sensors.History sensors.Neighbours rewards.SparseGoal rewards.StepPenalty", PLAIN2),
    **_cover("tests/test_simulator.py::test_step_matches_reference", "bodies.Cardinal", PLAIN2),
    **_cover("tests/test_simulator.py::test_step_matches_reference",
             "plumes.Gaussian bodies.Cardinal bodies.Moore sensors.Concentration sensors.Position sensors.Neighbours "
             "rewards.SparseGoal", ("teams", 2)),
    **_cover("tests/models/test_three_dimensions.py::test_table_body_random_source_matches_reference",
             "plumes.Gaussian bodies.Moore sensors.Concentration sensors.Position sensors.History sensors.Neighbours "
             "rewards.SparseGoal", PLAIN3),
    **_cover("tests/models/test_three_dimensions.py::test_continuous_body_fixed_source_matches_reference",
             "bodies.Continuous sensors.Binary sensors.Wind rewards.StepPenalty", PLAIN3),
    **_cover("tests/models/test_three_dimensions.py::test_default_3d_scenario_matches_reference", "bodies.Cardinal",
             PLAIN3),
    **_cover("tests/models/plumes/test_movie_3d.py::test_volumes_match_the_plain_reference_bit_for_bit",
             "plumes.Movie", PLAIN3),
    **_cover("tests/models/test_walls.py::test_the_default_scenario_among_walls_matches_the_reference",
             "plumes.Gaussian bodies.Cardinal bodies.Moore sensors.Concentration sensors.Position rewards.SparseGoal",
             ("walls", 2)),
    **_cover("tests/models/test_walls.py::test_a_continuous_body_among_3d_walls_matches_the_reference",
             "plumes.Gaussian bodies.Continuous sensors.Concentration sensors.Position sensors.Neighbours "
             "rewards.SparseGoal", ("walls", 3)),
    **_cover("tests/models/sources/test_gaussian_sources.py::test_several_sources_match_the_reference",
             "plumes.Gaussian bodies.Moore sensors.Concentration sensors.Position rewards.SparseGoal",
             ("several sources", 2)),
    **_cover("tests/models/sources/test_gaussian_sources.py::test_one_drifting_source_matches_the_reference",
             "plumes.Gaussian bodies.Cardinal sensors.Concentration sensors.Position rewards.SparseGoal",
             ("moving sources", 2)),
    **_cover("tests/models/sources/test_walls_scene.py::test_the_scene_moves_its_sources_among_the_walls_as_the_"
             "reference", "plumes.Puffs bodies.Cardinal", ("walls", 2), ("moving sources", 2), ("several sources", 2)),
    **_cover("tests/models/plumes/test_puffs_engine.py::test_agents_sense_the_standalone_plume_at_their_cells",
             "plumes.Puffs", PLAIN2),
    **_cover("tests/models/plumes/test_poisson_hits_engine.py::test_engine_episodes_equal_the_protocol_runner",
             "plumes.PoissonHits sensors.Hits sensors.Belief policies.Infotaxis", PLAIN2, ("teams", 2)),
    **_cover("tests/models/plumes/test_poisson_hits_3d.py::test_engine_episodes_equal_the_protocol_runner_and_"
             "beliefs_are_the_kernels", "plumes.PoissonHits sensors.Hits sensors.Belief policies.Infotaxis", PLAIN3),
    **_cover("tests/models/plumes/test_windy_poisson_hits.py::test_engine_episodes_equal_the_protocol_runner_and_"
             "beliefs_follow_the_reference", "plumes.WindyPoissonHits", PLAIN2),
    **_cover("tests/models/sources/test_poisson_pursuit.py::test_the_target_walks_as_the_reference_and_the_belief_"
             "follows_it", "plumes.PoissonHits sensors.Hits sensors.Belief", ("moving sources", 2)),
    **_cover("tests/models/sources/test_poisson_pursuit.py::test_the_policies_decide_on_the_belief_one_step_ahead",
             "policies.Infotaxis policies.Greedy", ("moving sources", 2)),
    **_cover("tests/policies/test_greedy.py::test_decisions_match_the_reference_on_random_beliefs", "policies.Greedy",
             PLAIN2),
    **_cover("tests/policies/test_greedy.py::test_3d_decisions_match_the_reference_on_random_beliefs",
             "policies.Greedy", PLAIN3),
    **_cover("tests/policies/test_team.py::test_a_team_on_a_simulator_decides_as_the_reference_and_one_kind_as_that_"
             "policy", "policies.Greedy", ("teams", 2)),
    **_cover("tests/policies/test_among_walls.py::test_infotaxis_among_walls_matches_the_reference", "policies.Infotaxis",
             ("walls", 2), ("walls", 3)),
    **_cover("tests/policies/test_among_walls.py::test_greedy_walks_around_walls_as_the_reference_does",
             "policies.Greedy", ("walls", 2), ("walls", 3)),
    **_cover("tests/policies/test_among_walls.py::test_first_beliefs_and_updates_put_no_mass_inside_walls",
             "sensors.Belief", ("walls", 3)),
    **_cover("tests/policies/test_among_walls.py::test_hits_among_walls_are_the_likelihood_s_draws_and_the_belief_their_"
             "posterior", "plumes.PoissonHits sensors.Hits sensors.Belief", ("walls", 2)),
    **_cover("tests/policies/test_among_walls.py::test_run_search_among_walls_in_3d_and_its_refusals",
             "plumes.PoissonHits", ("walls", 3)),
    **_cover("tests/policies/test_perseus.py::test_decisions_equal_the_reference_for_agents_groups_and_inactive_ones",
             "policies.Perseus", PLAIN2, ("teams", 2), ("teams", 3)),
    **_cover("tests/policies/test_perseus.py::test_solver_matches_a_numpy_perseus_vector_for_vector", "policies.Perseus",
             PLAIN3),
    **_cover("tests/policies/test_team.py::test_a_3d_team_plays_the_protocol_runner_s_episodes_and_decides_as_the_"
             "reference", "plumes.PoissonHits sensors.Hits sensors.Belief policies.Infotaxis policies.Greedy",
             ("teams", 3)),
    **_cover("tests/models/plumes/test_windy_poisson_hits.py::test_a_team_on_one_belief_plays_the_protocol_runner_s_"
             "team_episodes", "plumes.WindyPoissonHits", ("teams", 2)),
    **_cover("tests/models/plumes/test_puffs_engine.py::test_a_team_moves_senses_and_ends_at_the_first_arrival_as_the_"
             "reference", "plumes.Puffs", ("teams", 2)),
    **_cover("tests/policies/test_baselines.py::test_the_policies_steer_the_2d_models_as_their_references",
             "policies.RandomPolicy policies.RandomBoxPolicy policies.GradientClimber policies.SurgeCast", PLAIN2),
    **_cover("tests/policies/test_baselines.py::test_the_policies_steer_the_2d_models_as_their_references",
             "policies.RandomPolicy policies.RandomBoxPolicy policies.GradientClimber policies.SurgeCast "
             "bodies.Continuous bodies.Oriented bodies.RunTumble plumes.Movie rewards.StepPenalty sensors.Antennae "
             "sensors.Binary sensors.Heading sensors.History sensors.Wind", ("teams", 2)),
    **_cover("tests/policies/test_baselines.py::test_the_policies_steer_the_3d_models_as_their_references",
             "policies.RandomPolicy policies.RandomBoxPolicy policies.GradientClimber", PLAIN3),
    **_cover("tests/policies/test_baselines.py::test_the_policies_steer_the_3d_models_as_their_references",
             "policies.RandomPolicy policies.RandomBoxPolicy policies.GradientClimber bodies.Cardinal "
             "bodies.Continuous bodies.Moore plumes.Gaussian plumes.Movie rewards.SparseGoal rewards.StepPenalty "
             "sensors.Binary sensors.Concentration sensors.History sensors.Neighbours sensors.Position sensors.Wind",
             ("teams", 3)),
    **_cover("tests/policies/test_baselines.py::test_the_policies_steer_among_walls_as_their_references",
             "policies.RandomPolicy policies.GradientClimber policies.SurgeCast", ("walls", 2)),
    **_cover("tests/policies/test_baselines.py::test_the_policies_steer_among_walls_as_their_references",
             "policies.RandomBoxPolicy", ("walls", 3)),
    **_cover("tests/policies/test_baselines.py::test_the_policies_steer_among_several_and_moving_sources_as_their_"
             "references", "policies.RandomPolicy policies.GradientClimber policies.SurgeCast",
             ("moving sources", 2), ("several sources", 2)),
    **_cover("tests/policies/test_baselines.py::test_the_policies_steer_among_several_and_moving_sources_as_their_"
             "references", "bodies.Moore", ("moving sources", 2)),
    **_cover("tests/policies/test_baselines.py::test_each_body_and_sensor_steps_among_walls_as_the_reference",
             "bodies.Continuous bodies.Oriented bodies.RunTumble plumes.Movie policies.RandomBoxPolicy "
             "rewards.StepPenalty sensors.Antennae sensors.Binary sensors.Heading sensors.History sensors.Neighbours "
             "sensors.Wind", ("walls", 2)),
    **_cover("tests/policies/test_baselines.py::test_each_body_and_sensor_steps_among_walls_as_the_reference",
             "bodies.Cardinal bodies.Moore plumes.Movie policies.GradientClimber policies.RandomPolicy "
             "rewards.StepPenalty sensors.Binary sensors.History sensors.Wind", ("walls", 3)),
    **_cover("tests/policies/test_baselines.py::test_each_body_and_sensor_steps_among_several_moving_sources_as_the_"
             "reference", "bodies.Continuous bodies.Oriented bodies.RunTumble policies.RandomBoxPolicy "
             "rewards.StepPenalty sensors.Antennae sensors.Binary sensors.Heading sensors.History sensors.Neighbours "
             "sensors.Wind", ("moving sources", 2), ("several sources", 2)),
}


def _supported_cells() -> set:
    out = set()
    for row, axis, dims in CELLS:
        if not _allows(row, axis, dims):
            continue
        made = witness(row, axis, dims)
        if made is None or (row.cls in PLUMES and PLUMES[row.cls](axis, dims) is None):
            continue  # no scenario holds it: nothing to run
        out.add((row.name, axis, dims))
    return out


def _cells(context, rows: str) -> set:
    return {(name, *context) for name in rows.split()}


# Supported cells that no test yet steps against a reference: the table says yes and the scenario is
# accepted (above), but no reference run backs it yet. Each would compile a step of its own that no
# other test needs (the windy Poisson-hit plume among walls; the 3-D Poisson-hit search among walls,
# whose protocol runner tests/policies/test_among_walls.py checks, not the engine's Hits sensor), 10-30
# s of CPU each. The list is held exact: a cell leaves it when a reference test of it is named in
# COVERED, and no new "yes" may join it without one.
NOT_YET_COVERED = {
    *_cells(('walls', 2), "plumes.WindyPoissonHits"),
    *_cells(('walls', 3), "sensors.Hits"),

}


def test_every_supported_cell_is_stepped_against_its_reference():
    supported = _supported_cells()
    covered = {cell for cell in supported if cell in COVERED}
    assert not set(COVERED) - supported, sorted(set(COVERED) - supported)  # no claim for a cell the table refuses
    missing = supported - covered
    assert missing == NOT_YET_COVERED & supported, (sorted(missing - NOT_YET_COVERED),
                                                    sorted(NOT_YET_COVERED & covered))
    for node in set(COVERED.values()):  # each named test is defined in its file
        path, _, name = node.partition("::")
        tree = ast.parse((TESTS.parent / path).read_text())
        assert name in {f.name for f in tree.body if isinstance(f, ast.FunctionDef)}, node


# ----------------------------------------------------------------------------- every door consults the table
# Infotaxis acts on any plume through a likelihood (plume_multi.calibration), of one source: a puff
# plume of two sources is refused up front
PUFFS = dict(grid_size=(16, 8), plume=plumes.Puffs(source=((2.0, 2.0), (2.0, 6.0))), n_agents=2, max_steps=5)
INFOTAXIS_ON_PUFFS = ("Infotaxis does not work with several sources; the scenario has them: use policies.RandomPolicy, "
                      "policies.GradientClimber or policies.SurgeCast")


def _quick_refusal(call, no_assembly) -> CapabilityError:
    start = time.perf_counter()
    with pytest.raises(CapabilityError) as info:
        call()
    assert time.perf_counter() - start < 1.0
    assert not no_assembly
    return info.value


@pytest.mark.parametrize("policy", ["infotaxis", policies.Infotaxis, policies.Infotaxis(), ["random", "infotaxis"],
                                    policies.Team([policies.RandomPolicy(4), policies.Infotaxis()])],
                         ids=["name", "class", "object", "list", "team"])
def test_evaluate_compare_and_sweep_refuse_infotaxis_on_puffs_before_compiling(policy, no_assembly):
    scenario = Scenario(**PUFFS)
    err = _quick_refusal(lambda: plume_multi.evaluate(policy, scenario, 2, progress=False), no_assembly)
    assert str(err) == INFOTAXIS_ON_PUFFS
    assert (err.owner, err.field, err.got) == ("Infotaxis", "several_sources", "several sources")
    assert err.expected == "a scenario without several sources"
    _quick_refusal(lambda: plume_multi.compare(["random", policy], scenario, 2, progress=False), no_assembly)
    _quick_refusal(lambda: plume_multi.evaluation.sweep(policy, scenario, {"max_steps": [3, 4]}, 2, out=None,
                                                        progress=False), no_assembly)


def test_the_cli_and_the_front_ends_refuse_before_compiling(no_assembly, capsys, tmp_path):
    from plume_multi.cli import main
    from plume_multi.scenario import save_scenario

    path = save_scenario(Scenario(**PUFFS), tmp_path / "two-sources.json")
    argv = ["eval", "--policy", "infotaxis", "--scenario", str(path), "--episodes", "2", "--quiet"]
    for _ in range(2):  # the second: the command's modules imported
        start = time.perf_counter()
        code = main(argv)
        took = time.perf_counter() - start
    err = capsys.readouterr().err
    assert code == 2 and "Infotaxis does not work with several sources" in err, err
    assert took < 1.0 and not no_assembly
    err = _quick_refusal(lambda: plume_multi.parallel_env(grid_size=(5, 4, 2), sensors=(sensors.Heading(),)),
                         no_assembly)
    assert err.owner == "Heading" and "the scenario is 3-D" in str(err)
    _quick_refusal(lambda: plume_multi.vector_env(2, sensors=(sensors.Hits(),)), no_assembly)


def _wall_between(dims=2):
    """The issue's first example: a Poisson-hit search, the source fixed, a wall between the start
    and the source (a gap lets a searcher around it)."""
    plume = plumes.PoissonHits(1.0, 2.0, grid_size=9, source=(6, 4))
    mask = np.zeros((9, 9), bool)
    mask[1:, 4] = True  # the column x = 4, open at y = 0
    return dict(plume=plume, sensors=(sensors.Hits(), sensors.Belief()), start_positions=((2, 4),), walls=mask,
                max_steps=200)


def test_infotaxis_among_walls_is_what_the_table_says(request):
    """Refused up front, or it finds the source behind the wall (blind to the walls, infotaxis found
    it in 5-9 % of such episodes, against 100 % without the wall)."""
    example = _wall_between()  # its plume's tables computed here, outside the refusal's time
    if not all(TABLE.row(cls).among_walls for cls in (policies.Infotaxis, sensors.Belief)):
        no_assembly = request.getfixturevalue("no_assembly")
        err = _quick_refusal(lambda: plume_multi.evaluate("infotaxis", Scenario(**example), 2, progress=False),
                             no_assembly)
        assert err.owner in ("Belief", "Infotaxis") and "walls" in str(err)
        return
    result = plume_multi.evaluate("infotaxis", Scenario(**example), 20, seed=0, progress=False)
    assert result.success_rate >= 0.9, result.success_rate


class Gradient(sensors.Sensor):
    """A user's sensor: declares 2-D only and a body with a heading (no kernels needed to be a row:
    the table reads its class)."""

    kernels = sensors.Sensor.kernels
    needs = (Need("body", "oriented", "a body with a heading"),)


def test_a_users_model_is_a_row_and_is_checked_by_its_declarations(no_assembly, monkeypatch):
    from plume_multi.models.base import SensorKernels

    monkeypatch.setattr(Gradient, "kernels", SensorKernels())
    table = capabilities()
    row = table.row(Gradient)
    assert row in table.rows and not row.built_in and row.dimensions == (2,)
    assert f"`{row.name}` | yes | no |" in table.to_markdown()
    err = _quick_refusal(lambda: Scenario(sensors=(Gradient(),)), no_assembly)
    assert (err.owner, err.field) == ("Gradient", "body") and "use bodies.Oriented" in str(err)
    _quick_refusal(lambda: Scenario(grid_size=(5, 4, 2), action_model=bodies.Continuous(), sensors=(Gradient(),)),
                   no_assembly)
    scenario = Scenario(action_model=bodies.Oriented(), sensors=(Gradient(),))
    monkeypatch.setattr(Gradient, "dimensions", ())  # a declaration changed after the scenario was built
    _quick_refusal(lambda: plume_multi.Simulator(scenario), no_assembly)


def test_the_table_is_the_docs_page():
    import importlib.util

    spec = importlib.util.spec_from_file_location("capabilities_hook", TESTS.parent / "docs/hooks/capabilities.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = (TESTS.parent / "docs/capabilities.md").read_text()
    built = hook.on_page_markdown(page, None, None, None)
    assert hook.MARKER in page and hook.MARKER not in built
    assert capabilities().to_markdown() in built  # (with the rows of any user's model defined so far)
    for row in BUILT_IN:
        assert f"| `{row.name}` | {'yes' if 2 in row.dimensions else 'no'} | {'yes' if 3 in row.dimensions else 'no'} |" \
            in built
    assert "(docs/capabilities.md)" in (TESTS.parent / "README.md").read_text()
    assert plume_multi.capabilities().rows == capabilities().rows  # the module is callable as the function


def test_perseus_says_in_its_own_words_what_its_row_says():
    """``Perseus.CAPABILITIES`` (its own summary) and its declarations agree."""
    caps, row = policies.Perseus.CAPABILITIES, TABLE.row(policies.Perseus)
    assert caps["walls"] is row.among_walls is False and caps["moving_source"] is row.moving_sources is False
    assert sorted({d if d > 1 else 2 for dims in caps["plumes"].values() for d in dims}) == list(row.dimensions)
    for name in caps["plumes"]:
        assert all(n.met_by(getattr(plumes, name)) for n in row.needs if n.part == "plume"), name
    for name in caps["bodies"]:
        assert all(n.met_by(type(bodies.BY_NAME[name]())) for n in row.needs if n.part == "body"), name
    # the sensor it acts on it brings itself (scenario_for, as Infotaxis's): no need to declare
    assert caps["sensors"] == ("Belief",) and not [n for n in row.needs if n.part == "sensor"]
    assert callable(policies.Perseus.scenario_for) and row.several_sources is False
