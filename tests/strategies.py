"""Hypothesis strategies shared by the engine tests."""

from hypothesis import strategies as st

from plume_multi import Scenario


@st.composite
def scenarios(draw, max_agents=6, team=None, neighbours=True, fixed_starts=None, max_side=24,
              action_models=("cardinal", "moore")):
    w = draw(st.integers(1, max_side))
    h = draw(st.integers(1, max_side))
    n = draw(st.integers(1, max_agents))
    src = (draw(st.integers(0, w - 1)), draw(st.integers(0, h - 1)))
    k = draw(st.integers(0, n - 1)) if neighbours else 0
    starts = None
    if fixed_starts or (fixed_starts is None and draw(st.booleans()) and draw(st.booleans())):
        starts = tuple((draw(st.integers(0, w - 1)), draw(st.integers(0, h - 1))) for _ in range(n))
    return Scenario(
        grid_size=(w, h),
        source_location=src,
        sigma=draw(st.floats(0.5, 20)),
        n_agents=n,
        goal_radius=draw(st.sampled_from([1e-45, 1.0, 1.5, 2.0, 3.2])),
        max_steps=draw(st.integers(1, 12)),
        start_positions=starts,
        action_model=draw(st.sampled_from(action_models)),
        n_neighbours=k,
        team=draw(st.booleans()) if team is None else team,
    )


def action_lists(scenario, num_worlds, steps):
    n = scenario.n_agents * num_worlds
    return st.lists(st.lists(st.integers(0, scenario.n_actions - 1), min_size=n, max_size=n),
                    min_size=steps, max_size=steps)
