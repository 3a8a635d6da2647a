"""render_frame's headings, points and wind; the recorder and the front-ends pass them."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np
import pytest

import plume_multi as pm
from plume_multi import Scenario, Simulator, ValidationError
from plume_multi.models import bodies, plumes, sensors
from plume_multi.viz.recording import TrajectoryRecorder
from plume_multi.viz.render import POINT_COLOUR, WIND_COLOUR, agent_colours, cell_centre_pixel, marker_radius, render_frame
from plume_multi.viz.scene import antenna_points, world_overlays

W, H = 24, 16
FIELD = np.zeros((H, W), np.float32)  # one colour: every drawn pixel stands out
POS = np.array([[5, 5], [15, 10]])


def _changed(a, b):
    return np.argwhere((a != b).any(axis=-1))


def test_without_the_new_arguments_nothing_changes():
    base = render_frame(FIELD, POS, source=(3, 3), scale=2)
    same = render_frame(FIELD, POS, source=(3, 3), scale=2, headings=None, points=None, wind=None)
    np.testing.assert_array_equal(base, same)


@pytest.mark.parametrize("degrees, direction", [(0, (0, 1)), (90, (-1, 0)), (180, (0, -1)), (270, (1, 0))])
def test_a_heading_is_a_line_out_of_the_marker_in_its_direction(degrees, direction):
    scale = 4
    base = render_frame(FIELD, POS[:1], scale=scale)
    got = render_frame(FIELD, POS[:1], scale=scale, headings=[degrees])
    row, col = cell_centre_pixel(5, 5, H, scale)
    r = marker_radius(W, H, scale)
    new = _changed(got, base)
    assert len(new) > 0
    # every new pixel lies on the ray from the centre along the heading (y up on screen), beyond the square
    dr, dc = direction
    offsets = new - [row, col]
    along = offsets[:, 0] * dr + offsets[:, 1] * dc
    across = offsets[:, 0] * dc - offsets[:, 1] * dr
    assert (along > r).all() and (np.abs(across) <= 1).all()
    assert (got[new[:, 0], new[:, 1]] == agent_colours(1)[0]).all()


def test_points_are_dots_in_the_agents_colours_and_off_grid_ones_are_skipped():
    scale = 6
    base = render_frame(FIELD, POS, scale=scale)
    pts = np.array([[[8.0, 2.0], [-3.0, 2.0]], [[20.0, 12.0], [30.0, 1.0]]])  # one on, one off the grid each
    got = render_frame(FIELD, POS, scale=scale, points=pts)
    colours = agent_colours(2)
    for k, (x, y) in enumerate([(8, 2), (20, 12)]):
        row, col = cell_centre_pixel(x, y, H, scale)
        assert (got[row, col] == colours[k]).all()
    assert len(_changed(got, base)) == 2 * (2 * (marker_radius(W, H, scale) // 3) + 1) ** 2
    plain = render_frame(FIELD, scale=scale, points=[[8.0, 2.0]])
    row, col = cell_centre_pixel(8, 2, H, scale)
    assert (plain[row, col] == POINT_COLOUR).all()


def test_wind_is_an_arrow_in_the_top_right_corner_pointing_along_it():
    scale = 8
    base = render_frame(FIELD, scale=scale)
    ph, pw = base.shape[:2]
    for u, v in [(1.0, 0.0), (0.0, 2.0), (-1.0, -1.0)]:
        got = render_frame(FIELD, scale=scale, wind=(u, v))
        new = _changed(got, base)
        assert len(new) > 5 and (got[new[:, 0], new[:, 1]] == WIND_COLOUR).all()
        assert new[:, 0].max() < ph // 3 and new[:, 1].min() > pw // 2  # the top-right corner
        # the arrow's far end along the wind holds more pixels (the barbs) than the tail
        centre = new.mean(axis=0)
        proj = (new[:, 1] - centre[1]) * u - (new[:, 0] - centre[0]) * v
        assert (proj > 0).sum() > (proj < 0).sum()
    calm = _changed(render_frame(FIELD, scale=scale, wind=(0, 0)), base)
    assert 0 < len(calm) <= 9


@pytest.mark.parametrize("kwargs, message", [
    ({"headings": [0.0]}, r"headings: got shape \(1,\) dtype float64; expected \(2,\) degrees"),
    ({"headings": [0.0, np.nan]}, "headings: contains NaN"),
    ({"headings": ["a", "b"]}, "headings: got shape"),
    ({"points": [1.0, 2.0]}, r"points: got shape \(2,\)"),
    ({"points": np.zeros((3, 1, 2))}, r"points: got shape \(3, 1, 2\); expected \(2, K, 2\)"),
    ({"points": [[np.inf, 0.0]]}, "points: contains NaN or infinite"),
    ({"wind": (1.0,)}, r"wind: got \(1.0,\); expected \(u, v\)"),
    ({"wind": (np.nan, 0)}, "wind: got"),
    ({"wind": "north"}, "wind: got 'north'"),
])
def test_new_inputs_are_validated_naming_the_argument(kwargs, message):
    with pytest.raises(ValidationError, match=message):
        render_frame(FIELD, POS, **kwargs)


def test_headings_need_positions():
    with pytest.raises(ValidationError, match="headings: got headings but no positions"):
        render_frame(FIELD, headings=[0.0])


# ------------------------------------------------------------------ from a simulator
def _oriented_scenario(**kw):
    return Scenario(grid_size=(W, H), n_agents=3, plume=plumes.Gaussian(sigma=5, wind=(1.0, 0.5)),
                    action_model=bodies.Oriented(turn_degrees=45),
                    sensors=(sensors.Concentration(), sensors.Antennae(distance=2), sensors.Wind(),
                             sensors.Heading()), **kw)


def test_world_overlays_read_headings_antenna_points_and_the_wind():
    sim = Simulator(_oriented_scenario(), 2)
    sim.reset(seed=4)
    sim.step(np.array([1, 0, 2, 0, 0, 1]))
    scene = world_overlays(sim, 1)
    np.testing.assert_array_equal(scene["headings"], sim.model_state("body.heading")[3:6])
    assert scene["wind"] == (1.0, 0.5) and scene["source"] == (W // 2, H // 2)
    pts = scene["points"]
    assert pts.shape == (3, 2, 2)
    loc = sim.positions[3:6].astype(float)
    rad = np.deg2rad(scene["headings"][:, None] + np.array([45.0, -45.0]))
    np.testing.assert_allclose(pts[..., 0], loc[:, :1] + 2 * np.cos(rad))
    np.testing.assert_allclose(pts[..., 1], loc[:, 1:] + 2 * np.sin(rad))


def test_antenna_points_match_the_sensor_readings():
    sim = Simulator(_oriented_scenario(), 1)
    sim.reset(seed=2)
    for _ in range(3):
        sim.step(np.array([0, 1, 0]))
    pts = antenna_points(sim, 0)
    field = sim.plume_image(0).astype(np.float64)

    def bilinear(x, y):
        if not (-0.5 <= x <= W - 0.5 and -0.5 <= y <= H - 0.5):  # within half a cell: the edge
            return 0.0
        x, y = min(max(x, 0.0), W - 1.0), min(max(y, 0.0), H - 1.0)
        x0, y0 = min(int(x), W - 1), min(int(y), H - 1)
        x1, y1 = min(x0 + 1, W - 1), min(y0 + 1, H - 1)
        fx, fy = x - x0, y - y0
        top = (1 - fx) * field[y0, x0] + fx * field[y0, x1]
        bottom = (1 - fx) * field[y1, x0] + fx * field[y1, x1]
        return (1 - fy) * top + fy * bottom

    want = np.array([[bilinear(x, y) for x, y in agent] for agent in pts])
    np.testing.assert_allclose(sim.state.obs[:, 1:3], want, atol=1e-6)


def test_the_recorder_draws_headings_points_wind_and_each_steps_movie_frame():
    rng = np.random.default_rng(0)
    frames = rng.random((6, H, W)).astype(np.float32)
    sc = Scenario(n_agents=2, plume=plumes.Movie(frames, source=(3, 4), start=0, wind=(0.0, 1.0)),
                  action_model=bodies.Oriented(), sensors=(sensors.Antennae(),))
    sim = Simulator(sc, 1, autoreset="disabled")
    sim.reset(seed=0)
    rec = TrajectoryRecorder.from_simulator(sim)
    for _ in range(3):
        sim.step(np.array([0, 1]))
        rec.record()
    for t in range(4):
        scene = world_overlays(sim, 0) if t == 3 else None
        picture = rec.frame(t, scale=2)
        headings = rec._overlays[t][1]
        want = render_frame(frames[t], rec.positions[t], source=(3, 4), active=rec.active[t], scale=2,
                            headings=headings, points=rec._overlays[t][2], wind=(0.0, 1.0))
        np.testing.assert_array_equal(picture, want)  # frame t of the movie, not frame 0
        if scene is not None:
            np.testing.assert_array_equal(headings, scene["headings"])
    assert not np.array_equal(rec.frame(0), rec.frame(3))


def test_a_recorder_of_the_default_scenario_draws_as_before():
    sim = Simulator(Scenario(grid_size=(W, H), n_agents=2), 1, autoreset="disabled")
    sim.reset(seed=0)
    rec = TrajectoryRecorder.from_simulator(sim)
    want = render_frame(sim.field, sim.positions, source=sim.scenario.source_location, active=sim.active, scale=3)
    np.testing.assert_array_equal(rec.frame(0, scale=3), want)


MODELS = dict(grid_size=(W, H), plume=plumes.Gaussian(sigma=5, wind=(1.0, 0.5)),
              action_model=bodies.Oriented(turn_degrees=45),
              sensors=(sensors.Concentration(), sensors.Antennae(distance=2), sensors.Wind(), sensors.Heading()))


def test_the_pettingzoo_render_passes_the_overlays():
    from plume_multi.viz.render import display_scale

    env = pm.parallel_env(n_agents=3, render_mode="rgb_array", **MODELS)
    env.reset(seed=3)
    env.step({a: 0 for a in env.agents})
    sim = env._sim
    scene = world_overlays(sim, 0)
    assert scene["headings"] is not None and scene["points"] is not None and scene["wind"] == (1.0, 0.5)
    want = render_frame(scene.pop("field"), sim.positions, active=sim.active, scale=display_scale(W, H), **scene)
    np.testing.assert_array_equal(env.render(), want)
    plain = render_frame(sim.plume_image(0), sim.positions, source=scene["source"], active=sim.active,
                         scale=display_scale(W, H))
    assert not np.array_equal(env.render(), plain)  # the overlays are drawn


def test_the_vector_renders_pass_the_overlays():
    env = pm.multi_agent_vector_env(2, n_agents=3, render_mode="rgb_array", **MODELS)
    env.reset(seed=1)
    sim = env._sim
    frames = env.render()
    for b in range(2):
        scene = world_overlays(sim, b)
        want = render_frame(scene.pop("field"), sim.positions[3 * b:3 * b + 3], active=sim.active[3 * b:3 * b + 3],
                            **scene)
        np.testing.assert_array_equal(frames[b], want)
    venv = pm.vector_env(2, render_mode="rgb_array", plume=plumes.Gaussian(source="random", wind=(0.0, -1.0)))
    venv.reset(seed=5)
    frames = venv.render()
    for b in range(2):
        scene = world_overlays(venv._sim, b)
        assert scene["wind"] == (0.0, -1.0) and scene["headings"] is None
        want = render_frame(scene.pop("field"), venv._sim.positions[b:b + 1], active=venv._sim.active[b:b + 1], **scene)
        np.testing.assert_array_equal(frames[b], want)
