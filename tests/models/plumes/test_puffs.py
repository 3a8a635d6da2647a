"""The puff plume (plumes.Puffs) against pompy, step by step, and against plain NumPy references."""

import json
import math

import numba
import numpy as np
import pytest
from scipy.stats import norm

from plume_multi import ValidationError
from plume_multi.models.plumes.puffs import physics as K
from plume_multi.models.plumes import PuffPlume, Puffs, Wind
from plume_multi.viz.render import render_puffs
from plume_multi.models.plumes.puffs import REACH_RADII

from pompy_reference import pompy_concentration, pompy_models, pompy_step
from rng_reference import ref_key, ref_u64

GRID = (100, 50)  # cells of 0.5 over pompy's default region (50 x 25)


def _run_both(config, steps, seed, probe_every=25):
    """Run our world 0 and pompy (fed our draws) side by side; yield both puff arrays and the
    concentrations at a few probe cells every ``probe_every`` steps."""
    ours = PuffPlume(config, GRID, num_worlds=1)
    ours.reset(seed=seed)
    wind, plume = pompy_models(config, GRID, seed=seed)
    cells = np.array([[40.0, 25.0], [78.0, 26.0], [86.0, 27.0], [94.0, 28.0], [99.0, 0.0]])  # 3 on the drift line
    xs = ours.params.x_min + (cells[:, 0] + 0.5) * ours.params.cell
    ys = ours.params.y_min + (cells[:, 1] + 0.5) * ours.params.cell
    for step in range(1, steps + 1):
        ours.step()
        pompy_step(wind, plume, config.dt)
        if step % probe_every == 0 or step == steps:
            conc, _ = ours.sample(cells)
            yield step, ours, wind, plume, conc[0], pompy_concentration(plume, xs, ys)


def _assert_same_concentration(ours, c_ours, c_pompy, step, rtol):
    # binning leaves out puffs beyond REACH_RADII radii: each of them weighs < exp(-12.5) x its peak
    r2 = ours.puffs(0)[:, 3]
    left_out = math.exp(-REACH_RADII ** 2 / 2) * (ours.params.amp / r2 ** 1.5).sum()
    np.testing.assert_allclose(c_ours, c_pompy, rtol=rtol, atol=left_out + 1e-300, err_msg=f"step {step}")


def _assert_same_puffs(ours, plume, step):
    mine = ours.puffs(0)
    theirs = plume.puff_array.reshape(-1, 4)
    assert mine.shape == theirs.shape, f"step {step}: {len(mine)} puffs, pompy {len(theirs)}"
    np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-10, err_msg=f"step {step}")


def test_noise_off_fixed_release_equals_pompy():
    """No wind noise, no centre-line noise, only the 10 puffs of t = 0: the same positions,
    radii and concentrations as pompy over 500 steps."""
    config = Puffs(source=(70, 25), wind=Wind(u=4.0, v=0.5, noise_gain=0.0), centre_rel_diff_scale=0.0,
                   puff_release_rate=0.0, dt=0.01)
    probes = 0
    for step, ours, wind, plume, c_ours, c_pompy in _run_both(config, 500, seed=3):
        _assert_same_puffs(ours, plume, step)
        _assert_same_concentration(ours, c_ours, c_pompy, step, rtol=1e-9)
        probes += int((c_pompy > 1e-6).any())
    assert probes > 0  # the probes saw the puffs pass
    assert ours.state.n_live[0] == 0  # they left the region at x = 50, as pompy's did


def test_poisson_release_and_centre_line_noise_equal_pompy_given_the_same_draws():
    """Steady wind, Poisson releases and the random walk of every puff: with pompy drawing our
    numbers, every puff is where pompy puts it (releases, removals and order included)."""
    config = Puffs(source=(70, 25), wind=Wind(u=4.0, v=0.5, noise_gain=0.0), centre_rel_diff_scale=2.0,
                   puff_release_rate=40.0, max_num_puffs=120, dt=0.01)
    counts = []
    for step, ours, wind, plume, c_ours, c_pompy in _run_both(config, 500, seed=11):
        _assert_same_puffs(ours, plume, step)
        _assert_same_concentration(ours, c_ours, c_pompy, step, rtol=1e-8)
        counts.append(len(plume.puffs))
    assert max(counts) == 120  # the cap was reached and released puffs were removed
    assert min(counts[5:]) < 120


def test_wind_field_equals_pompy_given_the_same_noise():
    """The coloured-noise boundary and the advection-diffusion update of the wind grid match
    pompy's ``WindModel`` point for point over 500 steps (noise on, same draws)."""
    config = Puffs(source=(10, 25), wind=Wind(noise_gain=2.0, noise_bandwidth=2.0), puff_release_rate=0.0,
                   init_num_puffs=0)
    ours = PuffPlume(config, GRID)
    ours.reset(seed=5)
    wind, plume = pompy_models(config, GRID, seed=5)
    spread = 0.0
    for step in range(1, 501):
        ours.step()
        pompy_step(wind, plume, config.dt)
        theirs = np.stack([wind._u_int, wind._v_int])
        np.testing.assert_allclose(ours.wind_grid(0), theirs, rtol=1e-10, atol=1e-12, err_msg=f"step {step}")
        np.testing.assert_allclose(ours.state.noise[0], wind.noise_gen.state, rtol=1e-10, atol=1e-14)
        spread = max(spread, float(np.ptp(theirs[1])))
    assert spread > 0.05  # the field did meander


def test_full_model_with_spline_wind_equals_pompy_given_the_same_draws():
    """Every noise on and pompy's bicubic spline for the wind at the puffs: with pompy drawing our
    numbers, every puff is where pompy puts it over 500 steps (the whole model, exactly)."""
    config = Puffs(source=(20, 25), wind=Wind(noise_bandwidth=1.0, interpolation="spline"),
                   puff_release_rate=40.0, max_num_puffs=300)
    for step, ours, wind, plume, c_ours, c_pompy in _run_both(config, 500, seed=2, probe_every=50):
        _assert_same_puffs(ours, plume, step)
        _assert_same_concentration(ours, c_ours, c_pompy, step, rtol=1e-8)
    assert np.ptp(ours.puffs(0)[:, 1]) > 0.5  # the plume spread across the wind


def test_spline_wind_equals_scipy_rect_bivariate_spline():
    from scipy.interpolate import RectBivariateSpline

    plume = PuffPlume(Puffs(source=(10, 25), wind=Wind(interpolation="spline", noise_bandwidth=2.0, grid=(9, 13))), GRID)
    plume.reset(seed=0)
    for _ in range(300):
        plume.step()
    grid = plume.wind_grid(0)
    xs, ys = np.linspace(0, 50, 9), np.linspace(-12.5, 12.5, 13)
    pts = np.concatenate([np.random.default_rng(0).uniform([0, -12.5], [50, 12.5], (300, 2)),
                          [[0, -12.5], [50, 12.5], [25, 0], [12.5, 6.25], [60, 20]]])  # grid points, edges, outside
    ref = np.stack([RectBivariateSpline(xs, ys, grid[c]).ev(np.clip(pts[:, 0], 0, 50), np.clip(pts[:, 1], -12.5, 12.5))
                    for c in range(2)], -1)
    p = plume.params
    assert p.grid_wind is True and p.spline is True  # the spline's flags, the compiler sees them
    mine = np.array([K.wind_velocity(0, x, y, p, plume.state, p.grid_wind, p.spline) for x, y in pts])
    np.testing.assert_allclose(mine, ref, rtol=1e-12, atol=1e-12)
    assert np.ptp(ref[:, 1]) > 0.1


def _pompy_stats(config, grid, steps, seed, xs, ys, every):
    wind, plume = pompy_models(config, grid, seed=("numpy", seed))
    profiles = []
    for step in range(steps):
        pompy_step(wind, plume, config.dt)
        if step % every == 0 and step >= steps // 10:
            profiles.append(pompy_concentration(plume, xs.ravel(), ys.ravel()).reshape(xs.shape))
    return np.array(profiles)


def _batched(series, batches=10):
    """Means and their standard errors by batch means (the series are autocorrelated)."""
    parts = np.array_split(series, batches)
    means = np.array([p.mean(axis=0) for p in parts])
    return series.mean(axis=0), means.std(axis=0, ddof=1) / math.sqrt(batches)


def test_plume_statistics_match_pompy():
    """With every noise on, the time-averaged concentration across the plume at three distances
    downwind, the plume's centroid and width there, and the intermittency (fraction of time
    above a threshold) on the centre line match pompy's over long runs, within the statistical
    error (batch means). A small region and a fast meander keep pompy's run to a few seconds."""
    config = Puffs(source=(1, 20), wind=Wind(u=2.0, k_x=5.0, k_y=5.0, noise_gain=1.0, noise_damp=0.5,
                                              noise_bandwidth=2.0, grid=(11, 11)),
                   region=((0.0, 20.0), (-5.0, 5.0)), puff_release_rate=5.0, dt=0.05,
                   centre_rel_diff_scale=0.5, puff_spread_rate=0.01, cell_size=0.25)
    grid = (80, 40)
    xs_phys = np.array([5.0, 10.0, 15.0])
    ys_phys = np.linspace(-4.5, 4.5, 19)
    xs, ys = np.meshgrid(xs_phys, ys_phys, indexing="ij")  # (3, 19)
    steps, every, threshold = 8000, 4, 0.05
    theirs = _pompy_stats(config, grid, steps, 1, xs, ys, every)

    worlds = 16
    ours = PuffPlume(config, grid, num_worlds=worlds, parallel=False)  # a small job: threads only add overhead
    ours.reset(seed=100)
    cells = np.stack([(xs - 0.0) / 0.25 - 0.5, (ys + 5.0) / 0.25 - 0.5], axis=-1).reshape(-1, 2)
    mine = []
    for step in range(steps // 4):
        ours.step()
        if step % every == 0 and step >= steps // 40:
            conc, _ = ours.sample(cells)
            mine.append(conc.reshape((worlds,) + xs.shape))
    mine = np.concatenate(np.array(mine).swapaxes(0, 1))  # worlds one after the other

    def summaries(profiles):
        dy = ys_phys[1] - ys_phys[0]
        mass = profiles.sum(axis=2) * dy  # (T, 3): integral across the plume
        centroid = (profiles * ys_phys).sum(axis=2) * dy
        second = (profiles * ys_phys ** 2).sum(axis=2) * dy
        above = (profiles[:, :, len(ys_phys) // 2] > threshold).astype(float)
        return mass, centroid, second, above

    for name, a, b in zip(("mass", "centroid", "second moment", "intermittency"), summaries(theirs), summaries(mine)):
        ma, sa = _batched(a)
        mb, sb = _batched(b)
        err = 4.0 * np.sqrt(sa ** 2 + sb ** 2)
        assert np.all(np.abs(ma - mb) <= err + 0.02 * np.abs(ma)), f"{name}: pompy {ma} +- {sa}, ours {mb} +- {sb}"
    # the comparison has power: the plume is intermittent and spreads downwind
    mass, _, second, above = summaries(mine)
    assert 0.05 < above.mean(axis=0)[0] < 0.95
    width = np.sqrt(second.mean(axis=0) / mass.mean(axis=0))
    assert width[2] > width[0]


# --- the binned concentration against a plain NumPy sum over all puffs ------------------------

def reference_concentration(puffs, x, y, amp):
    """Sum over all puffs of amp / r^3 exp(-|p - p_puff|^2 / (2 r^2)) at height 0."""
    px, py, pz, r2 = puffs.T
    d2 = (x[:, None] - px) ** 2 + (y[:, None] - py) ** 2 + pz ** 2
    terms = amp / r2 ** 1.5 * np.exp(-d2 / (2 * r2))
    return terms.sum(axis=1), (amp / r2 ** 1.5).sum()


@pytest.mark.parametrize("steps", [0, 1, 300, 3000])
def test_binned_concentration_matches_all_puffs(steps):
    config = Puffs(source=(10, 50), puff_release_rate=40.0, conc_scale=3.0)
    plume = PuffPlume(config, (200, 100), num_worlds=2)
    plume.reset(seed=7)
    for _ in range(steps):
        plume.step()
    rng = np.random.default_rng(steps)
    cells = np.concatenate([rng.uniform(-0.5, 199.5, (300, 2)) * [1, 0.5],
                            plume.puffs(1)[:200, :2] * 4 + [0, 50]])  # on and near the puffs
    conc, _ = plume.sample(np.broadcast_to(cells, (2,) + cells.shape))
    p = plume.params
    x = p.x_min + (cells[:, 0] + 0.5) * p.cell
    y = p.y_min + (cells[:, 1] + 0.5) * p.cell
    for b in range(2):
        full, peaks = reference_concentration(plume.puffs(b), x, y, p.amp)
        # a puff left out is more than REACH_RADII of its radius away
        bound = math.exp(-REACH_RADII ** 2 / 2) * peaks
        assert np.all(np.abs(conc[b] - full) <= bound + 1e-12 * full)
    assert (full > 1e-6).sum() >= 5  # the probes do sit in the plume


def test_field_image_is_the_concentration_at_cell_centres():
    config = Puffs(source=(4, 5), region=((0.0, 10.0), (-2.5, 2.5)), puff_release_rate=50.0,
                   wind=Wind(grid=(6, 6)))
    plume = PuffPlume(config, (20, 10))
    plume.reset(seed=0)
    for _ in range(200):
        plume.step()
    img = plume.field_image(0)
    assert img.shape == (10, 20)
    jj, ii = np.mgrid[0:10, 0:20]
    full, _ = reference_concentration(plume.puffs(0), (ii.ravel() + 0.5) * 0.5, -2.5 + (jj.ravel() + 0.5) * 0.5, plume.params.amp)
    np.testing.assert_allclose(img.ravel(), full, rtol=1e-6, atol=1e-9)


def test_wind_sensor_reports_cells_per_step():
    config = Puffs(source=(10, 10), wind=(2.0, -0.5), dt=0.05)
    plume = PuffPlume(config, (100, 50))  # cells of 0.5
    plume.reset(seed=0)
    _, wind = plume.sample(np.array([[3.0, 4.0]]))
    np.testing.assert_allclose(wind[0, 0], [2.0 * 0.05 / 0.5, -0.5 * 0.05 / 0.5])


# --- draws ---------------------------------------------------------------------------------------

def test_std_normal_matches_a_python_reference_and_the_normal_law():
    key = ref_key(9, 2, K.STREAM_PUFFS)
    values = np.array([K.std_normal(np.uint64(key), 4, i) for i in range(2000)])
    uniforms = np.array([((ref_u64(key, 4, i) >> 11) + 0.5) / 2.0 ** 53 for i in range(2000)])
    np.testing.assert_allclose(values, norm.ppf(uniforms), rtol=2e-9, atol=2e-9)
    grid = np.concatenate([np.linspace(1e-12, 0.03, 500), np.linspace(0.02, 0.98, 500), np.linspace(0.97, 1 - 1e-12, 500)])
    approx = np.array([K.inverse_normal_cdf(q) for q in grid])
    np.testing.assert_allclose(approx, norm.ppf(grid), rtol=1.2e-9, atol=1e-12)


# --- seeding and threads -------------------------------------------------------------------------

def _trajectory(config, seed, worlds, steps=150, parallel=None):
    plume = PuffPlume(config, GRID, num_worlds=worlds, parallel=parallel)
    plume.reset(seed=seed)
    cells = np.array([[20.0, 25.0], [40.0, 20.0]])
    out = []
    for _ in range(steps):
        conc, wind = plume.step_and_sample(cells)
        out.append((conc.copy(), wind.copy()))
    return plume, out


def test_world_i_of_seed_s_is_world_0_of_seed_s_plus_i():
    config = Puffs(source=(10, 25), puff_release_rate=30.0)
    batch, out = _trajectory(config, 40, worlds=3)
    single, out1 = _trajectory(config, 42, worlds=1)
    np.testing.assert_array_equal(batch.puffs(2), single.puffs(0))
    np.testing.assert_array_equal(np.array([c[2] for c, _ in out]), np.array([c[0] for c, _ in out1]))
    assert not np.array_equal(batch.puffs(0), batch.puffs(1))


def test_same_results_whatever_the_thread_count():
    config = Puffs(source=(10, 25), puff_release_rate=30.0)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        a, out_a = _trajectory(config, 0, worlds=5, parallel=True)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        b, out_b = _trajectory(config, 0, worlds=5, parallel=True)
    finally:
        numba.set_num_threads(before)
    c, out_c = _trajectory(config, 0, worlds=5, parallel=False)
    for other, out in ((b, out_b), (c, out_c)):
        for name in a.state._fields:
            np.testing.assert_array_equal(getattr(a.state, name), getattr(other.state, name), err_msg=name)
        for (ca, wa), (cb, wb) in zip(out_a, out):
            np.testing.assert_array_equal(ca, cb)
            np.testing.assert_array_equal(wa, wb)


def test_spin_up_equals_stepping_after_reset_and_episode_changes_the_draws():
    plain = PuffPlume(Puffs(source=(10, 25)), GRID)
    plain.reset(seed=4)
    for _ in range(50):
        plain.step()
    warm = PuffPlume(Puffs(source=(10, 25), spin_up_steps=50), GRID)
    warm.reset(seed=4)
    np.testing.assert_array_equal(plain.puffs(0), warm.puffs(0))
    warm.reset(seed=4, episode=1)
    assert not np.array_equal(plain.puffs(0), warm.puffs(0))


def test_release_is_capped_by_free_slots():
    plume = PuffPlume(Puffs(source=(10, 25), puff_release_rate=400.0, max_num_puffs=50, init_num_puffs=50), GRID)
    plume.reset(seed=0)
    for _ in range(100):
        plume.step()
        assert plume.state.n_live[0] <= 50
    assert plume.state.n_live[0] == 50


# --- walls ---------------------------------------------------------------------------------------

def _axis_move(wall, along_x, a0, a1, other, low, cell, absorb):
    """Plain reference of a puff's move along one axis among walls: through no solid cell, the
    move; into one, the puff is absorbed, or reflected about the face it crossed unless the
    reflected path crosses a solid cell too (then it keeps a0)."""
    h, w = wall.shape

    def solid(k):
        if along_x:
            return 0 <= other < h and 0 <= k < w and wall[other, k]
        return 0 <= other < w and 0 <= k < h and wall[k, other]

    def first_solid(c0, c1):
        step = 1 if c1 > c0 else -1
        return next((k for k in range(c0 + step, c1 + step, step) if solid(k)), None)

    c0, c1 = math.floor((a0 - low) / cell), math.floor((a1 - low) / cell)
    k = first_solid(c0, c1) if c1 != c0 else None
    if k is None:
        return a1, False
    if absorb:
        return a1, True
    a = 2.0 * (low + (k if c1 > c0 else k + 1) * cell) - a1
    c = math.floor((a - low) / cell)
    if c != c0 and first_solid(c0, c) is not None:
        return a0, False
    return a, False


def _puffs_among_walls(plume, before, wall, absorb):
    """The puffs after one advance of a constant wind with no release, computed from ``before``
    (the live puffs) and the kernels' draws: each moves along x, then y, among walls."""
    p = plume.params
    key, t = int(plume.state.key[0]), int(plume.state.clock[0]) - 1
    out = []
    for i, (x0, y0, z0, r2) in enumerate(before.tolist()):
        dx, dy, dz = (float(K.std_normal(np.uint64(key), t, 32 + 3 * i + c)) for c in range(3))
        x = x0 + (p.u_av + dx * p.scale_x) * p.dt
        y = y0 + (p.v_av + dy * p.scale_y) * p.dt
        x, gone = _axis_move(wall, True, x0, x, math.floor((y0 - p.y_min) / p.cell), p.x_min, p.cell, absorb)
        if not gone:
            y, gone = _axis_move(wall, False, y0, y, math.floor((x - p.x_min) / p.cell), p.y_min, p.cell, absorb)
        if not gone and p.x_min <= x <= p.x_max and p.y_min <= y <= p.y_max:
            out.append((x, y, z0 + (dz * p.scale_z) * p.dt, r2 + p.spread * p.dt))
    return np.array(out).reshape(-1, 4)


@pytest.mark.parametrize("mode", ["reflect", "absorb"])
def test_puffs_reflect_off_walls_or_are_absorbed_as_the_reference(mode):
    """A wall across the wind, two cells from the source: every puff of every step where the plain
    reference puts it, none ever in a solid cell; absorbed puffs are gone, reflected ones pile up."""
    mask = np.zeros((50, 100), bool)
    mask[15:35, 72] = True
    mask[24, 73:76] = True  # a thin wall along the wind, hit by the drift across it
    config = Puffs(source=(70, 25), wind=(6.0, 0.7), centre_rel_diff_scale=3.0, puff_release_rate=0.0,
                   init_num_puffs=200, max_num_puffs=200, walls=mode)
    plume = PuffPlume(config, GRID, num_worlds=1, walls=[mask, mask[::-1].copy()])
    plume.reset(seed=9)
    wall = plume.walls.masks[plume.state.wall[0]]  # the engine's draw for (9, 0)
    p = plume.params
    for step in range(120):
        before = plume.puffs(0)
        plume.step()
        np.testing.assert_array_equal(plume.puffs(0), _puffs_among_walls(plume, before, wall, mode == "absorb"),
                                      err_msg=f"step {step}")
        cells = np.floor((plume.puffs(0)[:, :2] - [p.x_min, p.y_min]) / p.cell).astype(int)
        on_grid = (cells[:, 0] < 100) & (cells[:, 1] >= 0) & (cells[:, 1] < 50)
        assert not wall[cells[on_grid, 1], cells[on_grid, 0]].any()
    alive = plume.state.n_live[0]
    assert (alive < 100) if mode == "absorb" else (alive > 150)


def test_puffs_draw_the_wall_mask_of_their_episode():
    mask = np.zeros((50, 100), bool)
    mask[0, 0] = True
    other = mask[::-1].copy()
    plume = PuffPlume(Puffs(source=(10, 25), walls="absorb"), GRID, num_worlds=8, walls=[mask, other])
    plume.reset(seed=3, episode=2)
    from plume_multi.walls import mask_index

    assert plume.state.wall.tolist() == [mask_index(3 + b, 2, 2) for b in range(8)]
    assert set(plume.state.wall.tolist()) == {0, 1}
    with pytest.raises(ValidationError, match=r"walls: got shape \(25, 100\)"):
        PuffPlume(Puffs(source=(10, 25)), GRID, walls=mask[:25])


# --- configuration -------------------------------------------------------------------------------

def test_metadata_is_json():
    config = Puffs(source=(3.5, 2), wind=(1.0, 0.5), centre_rel_diff_scale=(1.0, 2.0, 0.5))
    meta = json.loads(json.dumps(config.metadata()))
    assert meta["model"] == "Puffs" and meta["family"] == "plume" and meta["wind"] == {"model": "constant", "u": 1.0, "v": 0.5}
    assert json.loads(json.dumps(Puffs(source=(1, 1)).metadata()))["wind"]["grid"] == [21, 21]


@pytest.mark.parametrize("kwargs, field", [
    (dict(source=(1,)), "source"),
    (dict(source=(1, float("nan"))), "source"),
    (dict(source=(1, 1), wind="north"), "wind"),
    (dict(source=(1, 1), dt=0.0), "dt"),
    (dict(source=(1, 1), dt=1.0), "dt"),  # the explicit wind update would diverge
    (dict(source=(1, 1), puff_init_rad=-1.0), "puff_init_rad"),
    (dict(source=(1, 1), puff_spread_rate=-0.1), "puff_spread_rate"),
    (dict(source=(1, 1), puff_release_rate=-1.0), "puff_release_rate"),
    (dict(source=(1, 1), puff_release_rate=1e6), "puff_release_rate"),
    (dict(source=(1, 1), init_num_puffs=20, max_num_puffs=10), "init_num_puffs"),
    (dict(source=(1, 1), max_num_puffs=0), "max_num_puffs"),
    (dict(source=(1, 1), max_num_puffs=10.0), "max_num_puffs"),
    (dict(source=(1, 1), centre_rel_diff_scale=(1.0, 2.0)), "centre_rel_diff_scale"),
    (dict(source=(1, 1), centre_rel_diff_scale=-1.0), "centre_rel_diff_scale"),
    (dict(source=(1, 1), model_z_disp=False, centre_rel_diff_scale=(1.0, 2.0, 3.0)), "centre_rel_diff_scale"),
    (dict(source=(1, 1), region=((0.0, 0.0), (0.0, 1.0))), "region"),
    (dict(source=(1, 1), cell_size=-1.0), "cell_size"),
    (dict(source=(500, 1), cell_size=0.5), "source"),
    (dict(source=(1, 1), model_z_disp=1), "model_z_disp"),
    (dict(source=(1, 1), conc_scale=0.0), "conc_scale"),
    (dict(source=(1, 1), spin_up_steps=-1), "spin_up_steps"),
    (dict(source=(1, 1), walls="bounce"), "walls"),
])
def test_bad_configuration_names_the_field(kwargs, field):
    with pytest.raises(ValidationError, match=rf"Puffs\.{field}"):
        Puffs(**kwargs)


@pytest.mark.parametrize("kwargs, field", [
    (dict(u=float("inf")), "u"), (dict(k_x=-1.0), "k_x"), (dict(noise_gain=-2.0), "noise_gain"),
    (dict(noise_damp="x"), "noise_damp"), (dict(grid=(1, 21)), "grid"), (dict(grid=(21,)), "grid"),
    (dict(interpolation="cubic"), "interpolation"), (dict(grid=(3, 21), interpolation="spline"), "grid"),
])
def test_bad_wind_names_the_field(kwargs, field):
    with pytest.raises(ValidationError, match=rf"Wind\.{field}"):
        Wind(**kwargs)


def test_grid_must_fit_the_region_and_hold_the_source():
    with pytest.raises(ValidationError, match="cell_size"):
        PuffPlume(Puffs(source=(1, 1), cell_size=1.0), (60, 10))
    with pytest.raises(ValidationError, match="source"):
        PuffPlume(Puffs(source=(150, 1)), (100, 50))
    with pytest.raises(ValidationError, match="grid_size"):
        PuffPlume(Puffs(source=(1, 1)), (0, 50))
    assert PuffPlume(Puffs(source=(1, 1)), (200, 100)).params.cell == 0.25


def test_render_draws_the_plume():
    plume = PuffPlume(Puffs(source=(10, 50), spin_up_steps=1500), (200, 100))
    plume.reset(seed=0)
    frame = render_puffs(plume, positions=np.array([[100, 50]]), scale=2)
    assert frame.shape == (200, 400, 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 20  # a field, not a flat colour


# --- any configuration: the binned concentration against the NumPy sum --------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@given(
    width=st.integers(8, 60), height=st.integers(4, 40), cell=st.floats(0.1, 2.0),
    wind_u=st.floats(-2.0, 2.0), wind_v=st.floats(-1.0, 1.0), scale=st.floats(0.0, 3.0),
    init_rad=st.floats(0.01, 1.0), spread=st.floats(0.0, 0.05), rate=st.floats(0.0, 200.0),
    model_z=st.booleans(), steps=st.integers(0, 60), seed=st.integers(0, 2**40),
    fx=st.floats(0.0, 1.0), fy=st.floats(0.0, 1.0),
)
def test_any_config_binned_concentration_matches_numpy(width, height, cell, wind_u, wind_v, scale, init_rad,
                                                        spread, rate, model_z, steps, seed, fx, fy):
    region = ((-1.0, width * cell + 0.5), (-3.0, -3.0 + height * cell))
    config = Puffs(source=(fx * (width - 1), fy * (height - 1)), wind=(wind_u, wind_v), centre_rel_diff_scale=scale,
                   puff_init_rad=init_rad, puff_spread_rate=spread, puff_release_rate=rate, max_num_puffs=200,
                   dt=0.05, region=region, cell_size=cell, model_z_disp=model_z)
    plume = PuffPlume(config, (width, height), num_worlds=1)
    plume.reset(seed=seed)
    for _ in range(steps):
        plume.step()
    puffs = plume.puffs(0)
    assert np.all(puffs[:, 3] > 0)
    assert np.all((puffs[:, 0] >= region[0][0]) & (puffs[:, 0] <= region[0][1]))
    rng = np.random.default_rng(seed % 2**32)
    cells = np.concatenate([rng.uniform(-1, [width, height], (40, 2)),
                            (puffs[:20, :2] - [region[0][0], region[1][0]]) / cell - 0.5])
    conc, wind = plume.sample(cells)
    p = plume.params
    x = p.x_min + (cells[:, 0] + 0.5) * cell
    y = p.y_min + (cells[:, 1] + 0.5) * cell
    if len(puffs):
        full, peaks = reference_concentration(puffs, x, y, p.amp)
    else:
        full, peaks = np.zeros(len(cells)), 0.0
    assert np.all(np.abs(conc[0] - full) <= math.exp(-REACH_RADII ** 2 / 2) * peaks + 1e-12 * full)
    np.testing.assert_allclose(wind[0], np.broadcast_to([wind_u * 0.05 / cell, wind_v * 0.05 / cell], wind[0].shape))


def _pruned_calls(fn, *args):
    """The module-level names ``fn`` still reads after Numba's dead-branch pruning for the types of
    ``args`` (the pass that runs before typing: what it drops is never typed or compiled)."""
    from numba.core import ir
    from numba.core.analysis import compute_cfg_from_blocks, dead_branch_prune
    from numba.core.compiler import run_frontend

    func_ir = run_frontend(fn.py_func)
    dead_branch_prune(func_ir, tuple(numba.typeof(a) for a in args))
    dead = compute_cfg_from_blocks(func_ir.blocks).dead_nodes()
    return {stmt.value.name for label, block in func_ir.blocks.items() if label not in dead for stmt in block.body
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Global)}


def test_a_configuration_compiles_only_its_own_wind_interpolation_regime_and_walls():
    # the flags are True or None, and a branch on a None argument is gone before typing
    walls = np.zeros((25, 50), bool)
    walls[0, 40] = True
    plain = PuffPlume(Puffs(source=(10, 12)), (50, 25))
    rich = PuffPlume(Puffs(source=(10, 12), wind=Wind(interpolation="spline", regime="switch-many")), (50, 25),
                     walls=walls)
    constant = PuffPlume(Puffs(source=(10, 12), wind=(1.0, 0.0)), (50, 25))
    flags = lambda p: (p.grid_wind, p.spline, p.turns, p.among_walls)  # noqa: E731
    assert flags(plain.params) == (True, None, None, None)
    assert flags(rich.params) == (True, True, True, True)
    assert flags(constant.params) == (None, None, None, None)
    optional = {"regime_step", "advance_wind", "_move_among_walls", "_spline_at_puffs", "_turn_at_puffs", "fit_spline",
                "_constant_at_puffs", "_bilinear_at_puffs"}
    reads = {}
    for name, plume in (("plain", plain), ("rich", rich), ("constant", constant)):
        p, st = plume.params, plume.state
        reads[name] = (_pruned_calls(K.advance_world, 0, p, st, *flags(p))
                       | _pruned_calls(K._wind_at_puffs, 0, 1, p, st, *flags(p)[:3])
                       | _pruned_calls(K.advance_wind, 0, p, st, p.spline)
                       | _pruned_calls(K.reset_world, 0, 0, 0, 0, p, st, *flags(p))) & optional
    assert reads["plain"] == {"advance_wind", "_constant_at_puffs", "_bilinear_at_puffs"}  # a True flag keeps both
    assert reads["constant"] == {"_constant_at_puffs"}
    assert reads["rich"] == optional
    # the samplers: the spline's tables and the regime's turn are read only where they are used
    sampled = {}
    for name, plume in (("plain", plain), ("rich", rich)):
        p, st = plume.params, plume.state
        rng = np.random.default_rng(3)  # a wind, its spline and a turn, set by hand: nothing else compiles
        st.wind[...] = rng.normal(size=st.wind.shape)
        st.coef[...] = rng.normal(size=st.coef.shape)
        if p.turns:  # (a turn no regime makes is never read)
            st.turn[0] = (30.0, math.cos(math.radians(30.0)), math.sin(math.radians(30.0)))
        sampler = numba.njit(K.wind_at_cell_fn.py_func)  # K's has no CPython wrapper
        u, v = sampler(0, 3.0, 4.0, p, st, p.grid_wind, p.spline, p.turns)
        blocks = next(iter(sampler.overloads.values())).type_annotation.blocks.values()
        sampled[name] = {stmt.value.attr for block in blocks for stmt in block.body
                         if isinstance(stmt, numba.core.ir.Assign) and isinstance(stmt.value, numba.core.ir.Expr)
                         and stmt.value.op == "getattr"} & {"coef", "basis_x", "turn"}
        # the same wind as the spelled-out interpolation
        x, y = K.cell_to_physical(3.0, 4.0, p)
        ref = (K._spline_velocity(0, p, st, x, y) if p.spline else K._grid_velocity(st.wind, 0, p, x, y))
        ref = K.turned(0, st, *ref)
        assert (u, v) == (ref[0] * p.dt / p.cell, ref[1] * p.dt / p.cell) and u != 0.0
    assert sampled == {"plain": set(), "rich": {"coef", "basis_x", "turn"}}
