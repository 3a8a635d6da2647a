"""Pictures of 3-D worlds: the x-y, x-z and y-z panels of ``render_volume`` and the 3-D recorder.

The recorder runs the 3-D default scenario (one agent per world), a combination
tests/models/test_three_dimensions.py compiles too.
"""

from types import SimpleNamespace

import numpy as np
import pytest

from plume_multi import Scenario, Simulator
from plume_multi.errors import ValidationError
from plume_multi.viz.recording import TrajectoryRecorder
from plume_multi.viz.render import SOURCE_COLOUR, agent_colours, render_frame
from plume_multi.viz.volume import GAP, render_volume, world_volume_frame

W, H, D = 7, 5, 3


def panels(frame, scale):
    """The three panels of a frame (bottom-aligned, separated by GAP pixels)."""
    widths = (W * scale, W * scale, H * scale)
    heights = (H * scale, D * scale, D * scale)
    out, col = [], 0
    for w, h in zip(widths, heights):
        out.append(frame[frame.shape[0] - h:, col:col + w])
        col += w + GAP
    return out


def test_each_panel_is_render_frame_of_the_projection_or_the_slice():
    rng = np.random.default_rng(0)
    volume = rng.random((D, H, W)).astype(np.float32)
    agents = np.array([[1, 2, 0], [6, 4, 2]])
    source = (3, 1, 2)
    trajectories = np.array([[[0, 0, 0], [6, 3, 2]], [[1, 2, 0], [6, 4, 2]]])
    scale = 4
    frame = render_volume(volume, agents, source=source, trajectories=trajectories, scale=scale)
    assert frame.shape == (max(H, D) * scale, (2 * W + H) * scale + 2 * GAP, 3)
    views = [(volume.max(axis=0), [0, 1]), (volume.max(axis=1), [0, 2]), (volume.max(axis=2), [1, 2])]
    for panel, (field, axes) in zip(panels(frame, scale), views):
        expected = render_frame(field, agents[:, axes], source=np.array(source)[axes], trails=trajectories[..., axes],
                                scale=scale)
        np.testing.assert_array_equal(panel, expected)
    sliced = render_volume(volume, agents, mode="slice", scale=scale)  # through the first agent (1, 2, 0)
    views = [(volume[0], [0, 1]), (volume[:, 2, :], [0, 2]), (volume[:, :, 1], [1, 2])]
    for panel, (field, axes) in zip(panels(sliced, scale), views):
        np.testing.assert_array_equal(panel, render_frame(field, agents[:, axes], scale=scale))


def test_the_source_and_the_agents_are_where_their_cells_are():
    volume = np.zeros((D, H, W), np.float32)
    frame = render_volume(volume, np.array([[5, 1, 2]]), source=(2, 3, 1), scale=8)
    xy, xz, yz = panels(frame, 8)
    colour = agent_colours(1)[0]
    assert (xy[(H - 1 - 1) * 8 + 4, 5 * 8 + 4] == colour).all()  # (x, y) = (5, 1), y upward
    assert (xz[(D - 1 - 2) * 8 + 4, 5 * 8 + 4] == colour).all()  # (x, z) = (5, 2)
    assert (yz[(D - 1 - 2) * 8 + 4, 1 * 8 + 4] == colour).all()  # (y, z) = (1, 2)
    assert (xy[(H - 1 - 3) * 8 + 4, 2 * 8 + 4] == SOURCE_COLOUR).all()
    assert (yz[(D - 1 - 1) * 8 + 4, 3 * 8 + 4] == SOURCE_COLOUR).all()


@pytest.mark.parametrize("kwargs, message", [
    (dict(volume=np.zeros((4, 4))), r"volume: got shape \(4, 4\)"),
    (dict(positions=np.array([[0, 0, 3]])), "positions: cells outside the 7x5x3 grid"),
    (dict(positions=np.array([[0, 0]])), r"positions: got shape \(1, 2\)"),
    (dict(source=(0, 5, 0)), "source: cells outside"),
    (dict(mode="mean"), "mode: got 'mean'"),
    (dict(scale=0), "scale: got 0"),
    (dict(positions=np.zeros((2, 3), int), trajectories=np.zeros((4, 1, 3), int)), r"trajectories: got shape \(4, 1, 3\)"),
])
def test_bad_arguments_are_refused_by_name(kwargs, message):
    kwargs = {"volume": np.zeros((D, H, W), np.float32), **kwargs}
    volume = kwargs.pop("volume")
    with pytest.raises(ValidationError, match=message):
        render_volume(volume, **kwargs)


def test_the_recorder_draws_a_3d_search_with_its_trajectories(tmp_path):
    sim = Simulator(Scenario(grid_size=(W, H, D), sigma=2.0, max_steps=30), num_worlds=2, autoreset="disabled")
    sim.reset(seed=5)
    rec = TrajectoryRecorder.from_simulator(sim, world=1)
    rng = np.random.default_rng(0)
    for _ in range(6):
        sim.step(rng.integers(0, 6, 2))
        rec.record()
    assert rec.positions.shape == (7, 1, 3) and rec.grid_size == (W, H, D)
    np.testing.assert_array_equal(rec.positions[-1], sim.positions[1:2])
    frame = rec.frame(-1, trail=3, scale=2)
    np.testing.assert_array_equal(frame, render_volume(sim.field, sim.positions[1:2], source=rec.source,
                                                       active=sim.active[1:2], trajectories=rec.positions[3:6], scale=2))
    np.testing.assert_array_equal(world_volume_frame(sim, 1, scale=2),
                                  render_volume(sim.field, sim.positions[1:2], source=rec.source,
                                                active=sim.active[1:2], scale=2))
    assert rec.save_png(tmp_path / "search.png").stat().st_size > 0
    assert rec.save_movie(tmp_path / "search.gif", fps=10, scale=2).stat().st_size > 0
    with pytest.raises(ValidationError, match=r"expected \(N, 3\) integer cells \(x, y, z\)"):
        rec.record(np.zeros((1, 2), int))
    with pytest.raises(ValidationError, match="expected a 3-D simulator"):
        world_volume_frame(SimpleNamespace(dims=2), 0)  # a 2-D simulator says dims == 2
