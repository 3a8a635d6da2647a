"""Puff plume (Farrell et al. 2002, as pompy implements it) in a meandering wind: Numba kernels.

Every function works on one world ``b`` of B independent worlds whose state lives in explicit
arrays allocated once (``PuffState``), so nothing is allocated per step; the ``*_all`` drivers run
a ``prange`` over worlds, and a world's result never depends on the thread count because each
world only touches its own rows and draws from its own counter-based stream.

Units are the model's physical ones (length, time) unless a name says cells: the caller maps
cells onto the region with ``PuffParams.x_min/y_min/cell``. The engine's plume interface
(``world_reset`` ... ``wind_at``, at the end) takes cells and reports the wind in cells per step.

Per world:

* Wind: a ``(nx + 2, ny + 2)`` grid for each velocity component (pompy's layout: the interior
  ``nx x ny`` points span the region, corners included; one ghost ring outside carries the
  boundary condition), advanced by pompy's explicit advection-diffusion update and driven at the
  four corners by eight coloured-noise filters (second order, Euler-Maruyama). Velocity at a point
  is interpolated bilinearly over the interior grid, or (``spline``) by pompy's bicubic
  interpolating spline, refitted after every wind update.
* Puffs: ``(max_puffs, 4)`` rows ``[x, y, z, r^2]``, the live ones first, oldest first (pompy's
  list order, kept through removals).
* Bins: after each advance the live puffs are copied, sorted by a coarse spatial bin, as
  ``[x, y, amplitude at z = 0, -1 / (2 r^2)]``. A bin is at least ``REACH_RADII`` times the
  largest live radius wide, so the 3 x 3 bins around a point hold every puff within that reach;
  a puff left out contributes less than ``exp(-REACH_RADII^2 / 2)`` (3.7e-6 for 5 radii) of its
  own peak value.

Walls (``PuffParams.walls``, a scenario's masks; world ``b`` uses mask ``PuffState.wall[b]``, the
engine's draw for its seed and episode): a puff never ends a step in a solid cell. It moves along x,
then along y; a move that crosses into a solid cell is reflected about that cell's face
(``WALLS_REFLECT``) or removes the puff (``WALLS_ABSORB``).

Random draws: ``rng.stream_key(world_seed, episode, STREAM_PUFFS)`` with counters
``(advance number since reset, index)``, one 64-bit word per draw; within an advance the indices
are 0..7 for the eight wind-noise normals, ``16 + j`` for the Poisson release of source ``j``
(``j < 16``), ``32 + 3 i .. 34 + 3 i`` for the x, y, z normals of puff ``i`` (its place after this
advance's release). The wind's regime (``regimes.py``) draws from a stream of its own.

Sources: ``source`` ``(B, K, 2)`` holds where each releases now (cells; the engine's source motion
moves them), its start ``PuffParams.sources``; a regime turns every wind velocity by its angle
(``turn``).

Choices the compiler sees: ``PuffParams.grid_wind``, ``spline``, ``turns`` and ``among_walls`` are
flags, ``True`` or ``None`` (``engine.api.static_flag``). The functions that branch on them take
them as arguments (``wind_velocity(..., grid, spline)``, ``advance_world(..., grid, spline,
turns, walls)``): Numba drops a branch on an argument that is ``None`` before it types anything,
so a configuration compiles only its own wind, interpolation, regime and walls (a flag that is
True keeps both branches). With run-time ints instead, the cold puff row of
``benchmarks/first_step.py`` took a third longer to its first step (14.9 s against 11.1 s,
``docs/benchmarks.md``). A state whose regime's turn the flags say is never read must hold the turn
its reset left (``limits.state_problems``).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import prange

from ....engine.jit import njit

from ....engine.rng import poisson, random_u64, stream_key
from ....engine.walls import mask_index
from .regimes import regime_step, start_regime, turned

STREAM_PUFFS = 0x428A2F98  # this model's random stream (rng.stream_key)
REACH_RADII = 5.0  # bins reach this many of the largest puff radius
WALLS_NONE, WALLS_REFLECT, WALLS_ABSORB = 0, 1, 2  # PuffParams.walls_mode
BIN_CAP = 32  # at most BIN_CAP bins along each axis (the prefix sum is per step)

# Scalars of one configuration, float64 or int64, so that one compiled signature serves every
# number; the flags (True or None) are the structural choices, each compiled for alone.
PuffParams = namedtuple("PuffParams", [
    "dt",  # time step (time)
    "x_min", "x_max", "y_min", "y_max",  # region (length)
    "cell",  # cell size (length); cell (i, j) has its centre at (x_min + (i + 1/2) cell, ...)
    "src_x", "src_y", "src_z",  # source (length)
    "r0_sq",  # initial squared radius (length^2)
    "spread",  # r^2 growth rate (length^2 / time)
    "release_mean",  # puff_release_rate * dt: mean new puffs per step
    "init_puffs",  # int: puffs released at reset
    "scale_x", "scale_y", "scale_z",  # centre-line-relative velocity std (length / time)
    "model_z",  # int 0/1: z moves with the noise
    "amp",  # puff_mol_amount / sqrt(8 pi^3) * conc_scale
    "grid_wind",  # flag: True the dynamic wind grid, None a constant (u_av, v_av)
    "u_av", "v_av",  # mean wind (length / time)
    "k_x", "k_y",  # wind diffusivities (length^2 / time)
    "wdx", "wdy",  # wind grid spacing (length)
    "noise_a", "noise_b", "noise_c",  # bandwidth^2, 2 damping bandwidth, gain bandwidth^2
    "spline",  # flag: True pompy's bicubic interpolating spline, None bilinear
    "spin_up",  # int: advances run at reset
    "src_cx", "src_cy",  # the source in cells (the goal of the engine's agents)
    "width", "height",  # int: the cell grid
    "sources",  # (K, 2) float64 read-only: every source's start, cells (the first is src_cx, src_cy)
    # the wind's regime (regimes.py): its code, the switch-once turn (degrees) and time window,
    # the switch-many period and jitter (advances), the switch-many directions' std and clip (degrees)
    "regime", "turn", "once_lo", "once_hi", "every", "jitter", "dir_std", "dir_max",
    "turns",  # flag: True when the regime turns the wind (switch-once, switch-many), else None
    "walls_mode",  # int: WALLS_NONE, WALLS_REFLECT or WALLS_ABSORB
    "among_walls",  # flag: True among walls (walls_mode is not WALLS_NONE), else None
    "walls",  # (K, height, width) bool: solid cells ((1, 1, 1) False without walls); world b uses walls[wall[b]]
])

# The arrays of B worlds (leading axis B everywhere).
PuffState = namedtuple("PuffState", [
    "puffs",  # (B, P, 4) float64 [x, y, z, r^2]
    "n_live",  # (B,) int64
    "clock",  # (B,) int64 advances since reset (the first counter of every draw)
    "key",  # (B,) uint64 stream key of the world's episode
    "wind",  # (B, 2, nx + 2, ny + 2) float64 u and v with the ghost ring
    "wind_rate",  # (B, 2, nx, ny) float64 scratch: du/dt, dv/dt
    "noise",  # (B, 2, 8) float64 coloured-noise state (value, derivative) x 8 channels
    "draws",  # (B, 3 P) float64 scratch: this advance's puff normals
    "vel",  # (B, P, 2) float64 scratch: the wind at each puff
    "sorted",  # (B, P, 4) float64 live puffs by bin: [x, y, amp at z = 0, -1 / (2 r^2)]
    "bin_start",  # (B, BIN_CAP * BIN_CAP + 1) int64: bin k holds sorted[bin_start[k]:bin_start[k+1]]
    "bin_dims",  # (B, 2) int64 bins along x, y
    "bin_size",  # (B, 2) float64 bin width, height (length)
    "coef",  # (B, 2, nx, ny) float64 bicubic spline coefficients of u, v (spline only)
    "source",  # (B, K, 2) float64 the sources now, cells (where puffs are released)
    "found",  # (B, K) bool the sources an agent has reached (the engine's record)
    "motion",  # (B, K, W) float64 the source motion's state (the engine's)
    "turn",  # (B, 3) float64 the wind regime's angle now: degrees, its cosine and sine
    "next_switch",  # (B,) int64 the advance at which the regime switches next (-1: never)
    "switches",  # (B,) int64 the regime's switches since reset
    "regime_key",  # (B,) uint64 stream key of the regime's draws (regimes.STREAM)
    "wall",  # (B,) int64 the wall mask of the world's episode (0 without walls)
    "inv_colloc_x",  # (nx, nx) float64 inverse collocation matrix of the x knots (shared)
    "inv_colloc_y",  # (ny, ny) float64 the same along y
    "basis_x",  # (nx - 1, 4, 4) float64 shared: on grid interval j, B-spline a (of span_j - 3 + a)
                # is sum_k basis_x[j, a, k] u^k, u in [0, 1] the position in the interval
    "basis_y",  # (ny - 1, 4, 4) float64 the same along y
])


def spline_knots(n: int) -> np.ndarray:
    """Knots, in grid steps from the first point, of FITPACK's interpolating cubic spline through
    ``n >= 4`` equally spaced points (``RectBivariateSpline(s=0)``): the ends four times, the
    interior points but the first and last two (not-a-knot)."""
    pts = np.arange(n, dtype=np.float64)
    return np.concatenate([[0.0] * 4, pts[2:n - 2], [n - 1.0] * 4])


def inverse_collocation(n: int) -> np.ndarray:
    """``(n, n)`` inverse of the cubic B-spline collocation matrix at the ``n`` grid points."""
    colloc = np.zeros((n, n))
    for j in range(n):
        i = _span(float(j), n)
        colloc[j, i - 3:i + 1] = _cubic_basis(n, i, float(j))
    return np.linalg.inv(colloc)


def basis_polynomials(n: int) -> np.ndarray:
    """``(n - 1, 4, 4)``: on each grid interval, the power coefficients (in the position within
    the interval) of the four cubic B-splines not zero there; exact for cubics (fitted at four
    points), so evaluating needs no division."""
    table = np.zeros((n - 1, 4, 4))
    u = np.array([0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0])
    vander = np.vander(u, 4, increasing=True)
    for j in range(n - 1):
        i = _span(float(j), n)
        values = np.array([_cubic_basis(n, i, j + uk) for uk in u])  # (4 points, 4 splines)
        table[j] = np.linalg.solve(vander, values).T
    return table


SHARED = ("inv_colloc_x", "inv_colloc_y", "basis_x", "basis_y")  # PuffState fields not per world


def world_arrays(max_puffs: int, nx: int, ny: int, spline: bool, n_sources: int = 1, motion_width: int = 0) -> dict:
    """The per-world arrays of ``PuffState``: name -> ``(dtype, shape after the world axis)``."""
    return {
        "puffs": (np.float64, (max_puffs, 4)),
        "n_live": (np.int64, ()),
        "clock": (np.int64, ()),
        "key": (np.uint64, ()),
        "wind": (np.float64, (2, nx + 2, ny + 2)),
        "wind_rate": (np.float64, (2, nx, ny)),
        "noise": (np.float64, (2, 8)),
        "draws": (np.float64, (3 * max_puffs,)),
        "vel": (np.float64, (max_puffs, 2)),
        "sorted": (np.float64, (max_puffs, 4)),
        "bin_start": (np.int64, (BIN_CAP * BIN_CAP + 1,)),
        "bin_dims": (np.int64, (2,)),
        "bin_size": (np.float64, (2,)),
        "coef": (np.float64, (2, nx, ny) if spline else (2, 1, 1)),
        "source": (np.float64, (n_sources, 2)),
        "found": (np.bool_, (n_sources,)),
        "motion": (np.float64, (n_sources, motion_width)),
        "turn": (np.float64, (3,)),
        "next_switch": (np.int64, ()),
        "switches": (np.int64, ()),
        "regime_key": (np.uint64, ()),
        "wall": (np.int64, ()),
    }


def shared_arrays(nx: int, ny: int, spline: bool) -> dict:
    """The constant arrays of ``PuffState`` shared by every world (the spline's tables)."""
    return {
        "inv_colloc_x": inverse_collocation(nx) if spline else np.zeros((1, 1)),
        "inv_colloc_y": inverse_collocation(ny) if spline else np.zeros((1, 1)),
        "basis_x": basis_polynomials(nx) if spline else np.zeros((1, 4, 4)),
        "basis_y": basis_polynomials(ny) if spline else np.zeros((1, 4, 4)),
    }


def make_state(arrays: dict, nx: int, ny: int, spline: bool) -> PuffState:
    """``PuffState`` of the per-world ``arrays`` (by ``world_arrays`` names) and the shared tables."""
    return PuffState(**arrays, **shared_arrays(nx, ny, spline))


def allocate_state(num_worlds: int, max_puffs: int, nx: int, ny: int, spline: bool = False,
                   n_sources: int = 1) -> PuffState:
    """Zeroed state arrays for ``num_worlds`` worlds (``nx, ny`` the wind grid, >= 2 each;
    >= 4 each with ``spline``; ``n_sources`` sources)."""
    b = int(num_worlds)
    arrays = {name: np.zeros((b, *tail), dtype=dtype)
              for name, (dtype, tail) in world_arrays(max_puffs, nx, ny, spline, n_sources).items()}
    return make_state(arrays, nx, ny, spline)


# ---------------------------------------------------------------------------------------------
# Wind


@njit(cache=True, inline="always")
def _grid_velocity(wind, b, p, x, y):
    """Velocity at a physical point: bilinear over the interior grid, clamped to the region."""
    nx = wind.shape[2] - 2
    ny = wind.shape[3] - 2
    fx = (x - p.x_min) / p.wdx
    fy = (y - p.y_min) / p.wdy
    i = int(np.floor(fx))
    j = int(np.floor(fy))
    i = min(max(i, 0), nx - 2)
    j = min(max(j, 0), ny - 2)
    tx = min(max(fx - i, 0.0), 1.0)
    ty = min(max(fy - j, 0.0), 1.0)
    # interior point (i, j) is wind[..., 1 + i, 1 + j]
    w00 = (1.0 - tx) * (1.0 - ty)
    w10 = tx * (1.0 - ty)
    w01 = (1.0 - tx) * ty
    w11 = tx * ty
    u = (w00 * wind[b, 0, 1 + i, 1 + j] + w10 * wind[b, 0, 2 + i, 1 + j]
         + w01 * wind[b, 0, 1 + i, 2 + j] + w11 * wind[b, 0, 2 + i, 2 + j])
    v = (w00 * wind[b, 1, 1 + i, 1 + j] + w10 * wind[b, 1, 2 + i, 1 + j]
         + w01 * wind[b, 1, 1 + i, 2 + j] + w11 * wind[b, 1, 2 + i, 2 + j])
    return u, v


@njit(cache=True, inline="always")
def _span(g, n):
    """Knot span ``i`` (``knots[i] <= g < knots[i + 1]``, basis ``i - 3 .. i``) of ``g`` grid
    steps in ``spline_knots(n)``; ``g`` clamped to ``[0, n - 1]``."""
    j = int(np.floor(g))
    if j <= 1:
        return 3
    if j >= n - 3:
        return n - 1
    return j + 2


@njit(cache=True, inline="always")
def _horner(t, j, a, u):
    return ((t[j, a, 3] * u + t[j, a, 2]) * u + t[j, a, 1]) * u + t[j, a, 0]


@njit(cache=True, inline="always")
def _spline_velocity(b, p, st, x, y):
    """Velocity at a physical point from world ``b``'s bicubic spline coefficients."""
    nx = st.coef.shape[2]
    ny = st.coef.shape[3]
    gx = min(max((x - p.x_min) / p.wdx, 0.0), nx - 1.0)
    gy = min(max((y - p.y_min) / p.wdy, 0.0), ny - 1.0)
    jx = min(int(gx), nx - 2)
    jy = min(int(gy), ny - 2)
    ux = gx - jx
    uy = gy - jy
    r = _span(jx, nx) - 3
    c = _span(jy, ny) - 3
    tx = st.basis_x
    ty = st.basis_y
    bx0 = _horner(tx, jx, 0, ux)
    bx1 = _horner(tx, jx, 1, ux)
    bx2 = _horner(tx, jx, 2, ux)
    bx3 = _horner(tx, jx, 3, ux)
    by0 = _horner(ty, jy, 0, uy)
    by1 = _horner(ty, jy, 1, uy)
    by2 = _horner(ty, jy, 2, uy)
    by3 = _horner(ty, jy, 3, uy)
    bx = (bx0, bx1, bx2, bx3)
    by = (by0, by1, by2, by3)
    return _spline_sum(st.coef, b, 0, r, c, bx, by), _spline_sum(st.coef, b, 1, r, c, bx, by)


@njit(cache=True, inline="always")
def _spline_row(cf, b, comp, row, c, by):
    """``sum_j cf[b, comp, row, c + j] by[j]`` (the four basis values ``by`` of y)."""
    return (cf[b, comp, row, c] * by[0] + cf[b, comp, row, c + 1] * by[1] + cf[b, comp, row, c + 2] * by[2]
            + cf[b, comp, row, c + 3] * by[3])


@njit(cache=True, inline="always")
def _spline_sum(cf, b, comp, r, c, bx, by):
    """``sum_i bx[i] _spline_row(row r + i)``: the spline at a point of basis values ``bx``, ``by``."""
    return (bx[0] * _spline_row(cf, b, comp, r, c, by)
            + bx[1] * _spline_row(cf, b, comp, r + 1, c, by)
            + bx[2] * _spline_row(cf, b, comp, r + 2, c, by)
            + bx[3] * _spline_row(cf, b, comp, r + 3, c, by))


@njit(cache=True, inline="always")
def _knot(n, k):
    """``spline_knots(n)[k]`` without the array."""
    if k <= 3:
        return 0.0
    if k >= n:
        return n - 1.0
    return k - 2.0


@njit(cache=True, inline="always")
def _cubic_basis(n, i, g):
    """The four cubic B-splines ``i - 3 .. i`` of ``spline_knots(n)`` at ``g`` grid steps
    (Cox-de Boor, The NURBS Book A2.2, unrolled)."""
    l1 = g - _knot(n, i)
    l2 = g - _knot(n, i - 1)
    l3 = g - _knot(n, i - 2)
    r1 = _knot(n, i + 1) - g
    r2 = _knot(n, i + 2) - g
    r3 = _knot(n, i + 3) - g
    tmp = 1.0 / (r1 + l1)  # degree 1
    n0 = r1 * tmp
    n1 = l1 * tmp
    tmp = n0 / (r1 + l2)  # degree 2
    m0 = r1 * tmp
    saved = l2 * tmp
    tmp = n1 / (r2 + l1)
    m1 = saved + r2 * tmp
    m2 = l1 * tmp
    tmp = m0 / (r1 + l3)  # degree 3
    b0 = r1 * tmp
    saved = l3 * tmp
    tmp = m1 / (r2 + l2)
    b1 = saved + r2 * tmp
    saved = l2 * tmp
    tmp = m2 / (r3 + l1)
    return b0, b1, saved + r3 * tmp, l1 * tmp


@njit(cache=True, no_cpython_wrapper=True)
def fit_spline(b, st):
    """World ``b``'s spline coefficients of the interior grid: ``C = Bx^-1 Z By^-T``."""
    ax = st.inv_colloc_x
    ay = st.inv_colloc_y
    nx = ax.shape[0]
    ny = ay.shape[0]
    tmp = st.wind_rate  # scratch (B, 2, nx, ny), free between wind updates
    for c in range(2):
        for k in range(nx):
            for j in range(ny):
                acc = 0.0
                for i in range(nx):
                    acc += ax[k, i] * st.wind[b, c, 1 + i, 1 + j]
                tmp[b, c, k, j] = acc
        for k in range(nx):
            for m in range(ny):
                acc = 0.0
                for j in range(ny):
                    acc += tmp[b, c, k, j] * ay[m, j]
                st.coef[b, c, k, m] = acc


@njit(cache=True, inline="always")
def wind_velocity(b, x, y, p, st, grid, spline):
    """Wind ``(u, v)`` (length / time) at physical ``(x, y)`` in world ``b`` (``grid``, ``spline``:
    ``p.grid_wind``, ``p.spline``)."""
    if grid is None:
        return p.u_av, p.v_av
    if spline is None:
        return _grid_velocity(st.wind, b, p, x, y)
    return _spline_velocity(b, p, st, x, y)


# Acklam's rational approximation of the inverse normal CDF (relative error < 1.2e-9): no
# transcendental function for the central 95 % of draws, about 3x cheaper than Box-Muller here.
_A0, _A1, _A2 = -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02
_A3, _A4, _A5 = 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00
_B0, _B1, _B2 = -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02
_B3, _B4 = 6.680131188771972e+01, -1.328068155288572e+01
_C0, _C1, _C2 = -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00
_C3, _C4, _C5 = -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00
_D0, _D1, _D2, _D3 = 7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00
_P_LOW = 0.02425


@njit(cache=True, inline="always")
def inverse_normal_cdf(p):
    """The standard normal quantile of ``p`` in (0, 1) (Acklam's approximation)."""
    if p < _P_LOW:
        q = np.sqrt(-2.0 * np.log(p))
        return ((((((_C0 * q + _C1) * q + _C2) * q + _C3) * q + _C4) * q + _C5)
                / ((((_D0 * q + _D1) * q + _D2) * q + _D3) * q + 1.0))
    if p <= 1.0 - _P_LOW:
        q = p - 0.5
        r = q * q
        return ((((((_A0 * r + _A1) * r + _A2) * r + _A3) * r + _A4) * r + _A5) * q
                / (((((_B0 * r + _B1) * r + _B2) * r + _B3) * r + _B4) * r + 1.0))
    q = np.sqrt(-2.0 * np.log(1.0 - p))
    return -((((((_C0 * q + _C1) * q + _C2) * q + _C3) * q + _C4) * q + _C5)
             / ((((_D0 * q + _D1) * q + _D2) * q + _D3) * q + 1.0))


@njit(cache=True, inline="always")
def std_normal(key, a, c):
    """A standard normal draw, a pure function of ``(key, a, c)``: the quantile of the uniform
    ``(k + 1/2) / 2^53`` (never 0 or 1) taken from ``rng.random_u64(key, a, c)``."""
    k = random_u64(key, a, c) >> np.uint64(11)
    return inverse_normal_cdf((np.float64(k) + 0.5) * (1.0 / 9007199254740992.0))


@njit(cache=True, no_cpython_wrapper=True)
def advance_wind(b, p, st, spline):
    """One ``dt`` of pompy's ``WindModel.update``: coloured noise at the corners, the edges
    interpolated linearly between them, then the explicit advection-diffusion update."""
    wind = st.wind
    noise = st.noise
    key = st.key[b]
    t = st.clock[b]
    dt = p.dt
    sq = np.sqrt(dt)
    for k in range(8):
        n = std_normal(key, t, k)
        x0 = noise[b, 0, k]
        x1 = noise[b, 1, k]
        # pompy: state += dt * A @ state + B @ n * sqrt(dt), with the same rounding order
        noise[b, 0, k] = x0 + (dt * x1 + 0.0)
        noise[b, 1, k] = x1 + (dt * (-p.noise_a * x0 - p.noise_b * x1) + p.noise_c * n * sq)
    nx2 = wind.shape[2]
    ny2 = wind.shape[3]
    for c in range(2):
        mean = p.u_av if c == 0 else p.v_av
        tl = noise[b, 0, 4 * c + 0] + mean
        tr = noise[b, 0, 4 * c + 1] + mean
        bl = noise[b, 0, 4 * c + 2] + mean
        br = noise[b, 0, 4 * c + 3] + mean
        # pompy's edge order: y-min edge, y-max edge, x-min edge, x-max edge (the last two win
        # at the corners, where all agree anyway)
        step_x = 1.0 / (nx2 - 1)  # numpy.linspace(0, 1, n): i * step, the last exactly 1
        step_y = 1.0 / (ny2 - 1)
        for i in range(nx2):
            r = i * step_x if i < nx2 - 1 else 1.0
            wind[b, c, i, 0] = tl + r * (tr - tl)
            wind[b, c, i, ny2 - 1] = bl + r * (br - bl)
        for j in range(ny2):
            r = j * step_y if j < ny2 - 1 else 1.0
            wind[b, c, 0, j] = tl + r * (bl - tl)
            wind[b, c, nx2 - 1, j] = tr + r * (br - tr)
    # divisions, not reciprocals, to round as pompy's NumPy expressions do
    dx2 = 2.0 * p.wdx
    dy2 = 2.0 * p.wdy
    dxx = p.wdx * p.wdx
    dyy = p.wdy * p.wdy
    rate = st.wind_rate
    for i in range(1, nx2 - 1):
        for j in range(1, ny2 - 1):
            u = wind[b, 0, i, j]
            v = wind[b, 1, i, j]
            for c in range(2):
                f = wind[b, c, i, j]
                fe = wind[b, c, i + 1, j]
                fw = wind[b, c, i - 1, j]
                fn = wind[b, c, i, j + 1]
                fs = wind[b, c, i, j - 1]
                rate[b, c, i - 1, j - 1] = (-u * ((fe - fw) / dx2) - v * ((fn - fs) / dy2)
                                            + 0.5 * p.k_x * ((fe - 2.0 * f + fw) / dxx)
                                            + 0.5 * p.k_y * ((fn - 2.0 * f + fs) / dyy))
    for c in range(2):
        for i in range(1, nx2 - 1):
            for j in range(1, ny2 - 1):
                wind[b, c, i, j] += rate[b, c, i - 1, j - 1] * dt
    if spline is not None:
        fit_spline(b, st)


# ---------------------------------------------------------------------------------------------
# Puffs


@njit(cache=True, no_cpython_wrapper=True)
def _rebin(b, p, st):
    """Sort the live puffs of world ``b`` into coarse bins (counting sort) for sampling."""
    puffs = st.puffs
    n = st.n_live[b]
    r2max = p.r0_sq
    for i in range(n):
        if puffs[b, i, 3] > r2max:
            r2max = puffs[b, i, 3]
    reach = REACH_RADII * np.sqrt(r2max)
    width = p.x_max - p.x_min
    height = p.y_max - p.y_min
    # clamped as floats: the int of a ratio beyond 2**63 (tiny puffs in a huge region) is undefined
    nbx = int(min(max(width / reach, 1.0), BIN_CAP))
    nby = int(min(max(height / reach, 1.0), BIN_CAP))
    bw = width / nbx
    bh = height / nby
    st.bin_dims[b, 0] = nbx
    st.bin_dims[b, 1] = nby
    st.bin_size[b, 0] = bw
    st.bin_size[b, 1] = bh
    nb = nbx * nby
    start = st.bin_start
    for k in range(nb + 1):
        start[b, k] = 0
    for i in range(n):
        bx = min(max(int((puffs[b, i, 0] - p.x_min) / bw), 0), nbx - 1)
        by = min(max(int((puffs[b, i, 1] - p.y_min) / bh), 0), nby - 1)
        start[b, by * nbx + bx + 1] += 1
    for k in range(nb):
        start[b, k + 1] += start[b, k]
    srt = st.sorted
    for i in range(n):
        x = puffs[b, i, 0]
        y = puffs[b, i, 1]
        z = puffs[b, i, 2]
        r2 = puffs[b, i, 3]
        bx = min(max(int((x - p.x_min) / bw), 0), nbx - 1)
        by = min(max(int((y - p.y_min) / bh), 0), nby - 1)
        k = by * nbx + bx
        pos = start[b, k]
        start[b, k] = pos + 1
        srt[b, pos, 0] = x
        srt[b, pos, 1] = y
        srt[b, pos, 2] = p.amp / (r2 * np.sqrt(r2)) * np.exp(-z * z / (2.0 * r2))
        srt[b, pos, 3] = -1.0 / (2.0 * r2)
    # start[k] now ends bin k: shift back so that it begins it
    for k in range(nb, 0, -1):
        start[b, k] = start[b, k - 1]
    start[b, 0] = 0


@njit(cache=True, no_cpython_wrapper=True)
def _draw_normals(b, key, t, count, draws):
    for i in range(count):
        draws[b, i] = std_normal(key, t, 32 + i)


@njit(cache=True, no_cpython_wrapper=True)
def _wind_at_puffs(b, n, p, st, grid, spline, turns):
    """The wind at each of the first ``n`` puffs into ``st.vel``. One loop per interpolation, the
    choice made outside: a loop holding both interpolations ran 5x slower (measured)."""
    if grid is None:
        _constant_at_puffs(b, n, p, st)
    elif spline is None:
        _bilinear_at_puffs(b, n, p, st)
    else:
        _spline_at_puffs(b, n, p, st)
    if turns is not None and st.turn[b, 0] != 0.0:
        _turn_at_puffs(b, n, st)


@njit(cache=True, no_cpython_wrapper=True)
def _turn_at_puffs(b, n, st):
    """The wind at the puffs turned by the regime's angle (regimes.py)."""
    vel = st.vel
    for i in range(n):
        u, v = turned(b, st, vel[b, i, 0], vel[b, i, 1])
        vel[b, i, 0] = u
        vel[b, i, 1] = v


@njit(cache=True, no_cpython_wrapper=True)
def _constant_at_puffs(b, n, p, st):
    vel = st.vel
    for i in range(n):
        vel[b, i, 0] = p.u_av
        vel[b, i, 1] = p.v_av


@njit(cache=True, no_cpython_wrapper=True)
def _bilinear_at_puffs(b, n, p, st):
    puffs = st.puffs
    vel = st.vel
    for i in range(n):
        u, v = _grid_velocity(st.wind, b, p, puffs[b, i, 0], puffs[b, i, 1])
        vel[b, i, 0] = u
        vel[b, i, 1] = v


@njit(cache=True, no_cpython_wrapper=True)
def _spline_at_puffs(b, n, p, st):
    puffs = st.puffs
    vel = st.vel
    for i in range(n):
        u, v = _spline_velocity(b, p, st, puffs[b, i, 0], puffs[b, i, 1])
        vel[b, i, 0] = u
        vel[b, i, 1] = v


@njit(cache=True, inline="always")
def _keep(b, i, kept, x, y, p, puffs, draws):
    """Puff ``i`` moved to ``(x, y)``: kept as puff ``kept`` (its z moved, its r^2 grown) when it
    is inside the region (bounds inclusive); returns the puffs kept so far."""
    if x >= p.x_min and x <= p.x_max and y >= p.y_min and y <= p.y_max:
        z = puffs[b, i, 2]
        if p.model_z != 0:
            z += (draws[b, 3 * i + 2] * p.scale_z) * p.dt
        puffs[b, kept, 0] = x
        puffs[b, kept, 1] = y
        puffs[b, kept, 2] = z
        puffs[b, kept, 3] = puffs[b, i, 3] + p.spread * p.dt
        return kept + 1
    return kept


@njit(cache=True, no_cpython_wrapper=True)
def _move(b, n, p, st):
    """Euler step of the first ``n`` puffs; the ones still in the region are compacted in order."""
    puffs = st.puffs
    vel = st.vel
    draws = st.draws
    dt = p.dt
    kept = 0
    for i in range(n):
        x = puffs[b, i, 0] + (vel[b, i, 0] + draws[b, 3 * i] * p.scale_x) * dt
        y = puffs[b, i, 1] + (vel[b, i, 1] + draws[b, 3 * i + 1] * p.scale_y) * dt
        kept = _keep(b, i, kept, x, y, p, puffs, draws)
    return kept


@njit(cache=True, inline="always")
def _first_solid(walls, k, along_x, c0, c1, other):
    """The first solid cell index after ``c0`` up to ``c1`` (included) along one axis of mask ``k``
    of ``walls`` ``(K, H, W)`` (x when ``along_x``, in row ``other``; else y, in column ``other``),
    or -1; cells off the grid are free."""
    h = walls.shape[1]
    w = walls.shape[2]
    if along_x:
        if other < 0 or other >= h:
            return -1
    elif other < 0 or other >= w:
        return -1
    step = 1 if c1 > c0 else -1
    for c in range(c0 + step, c1 + step, step):
        if along_x:
            if 0 <= c < w and walls[k, other, c]:
                return c
        elif 0 <= c < h and walls[k, c, other]:
            return c
    return -1


@njit(cache=True, inline="always")
def _axis_move(mask, along_x, a0, a1, other, axis, mode):
    """A puff's move from ``a0`` to ``a1`` along one axis (physical; ``axis = (low, cell)``: cells
    from ``low``, ``cell`` wide) among the solid cells of mask ``wall`` of ``walls`` (``mask =
    (walls, wall)``): ``(a, removed)``. Through no solid cell: ``a1``. Into one: removed
    (``WALLS_ABSORB``), or reflected about the crossed face, ``2 face - a1``, unless the reflected
    path crosses a solid cell too (then the puff keeps ``a0``)."""
    walls, wall = mask
    low, cell = axis
    c0 = int(np.floor((a0 - low) / cell))
    c1 = int(np.floor((a1 - low) / cell))
    if c1 == c0:
        return a1, False
    k = _first_solid(walls, wall, along_x, c0, c1, other)
    if k < 0:
        return a1, False
    if mode == WALLS_ABSORB:
        return a1, True
    face = low + (k if c1 > c0 else k + 1) * cell
    a = 2.0 * face - a1
    c = int(np.floor((a - low) / cell))
    if c != c0 and _first_solid(walls, wall, along_x, c0, c, other) >= 0:
        return a0, False
    return a, False


@njit(cache=True, no_cpython_wrapper=True)
def _move_among_walls(b, n, p, st):
    """``_move`` among walls: each puff moves along x (in the row of its cell), then along y (in
    the column of its new cell), each axis as ``_axis_move`` says; a puff absorbed, or out of the
    region, is removed."""
    puffs = st.puffs
    vel = st.vel
    draws = st.draws
    wall = st.wall[b]
    dt = p.dt
    kept = 0
    for i in range(n):
        x0 = puffs[b, i, 0]
        y0 = puffs[b, i, 1]
        x = x0 + (vel[b, i, 0] + draws[b, 3 * i] * p.scale_x) * dt
        y = y0 + (vel[b, i, 1] + draws[b, 3 * i + 1] * p.scale_y) * dt
        row = int(np.floor((y0 - p.y_min) / p.cell))
        x, gone = _axis_move((p.walls, wall), True, x0, x, row, (p.x_min, p.cell), p.walls_mode)
        if gone:
            continue
        column = int(np.floor((x - p.x_min) / p.cell))
        y, gone = _axis_move((p.walls, wall), False, y0, y, column, (p.y_min, p.cell), p.walls_mode)
        if gone:
            continue
        kept = _keep(b, i, kept, x, y, p, puffs, draws)
    return kept


@njit(cache=True, inline="always")
def _release(b, j, n, count, p, st):
    """``count`` new puffs at source ``j`` of world ``b`` (physical point of its cell centre), in
    the slots from ``n``; returns the new number of live puffs."""
    x, y = cell_to_physical(st.source[b, j, 0], st.source[b, j, 1], p)
    puffs = st.puffs
    for i in range(n, n + count):
        puffs[b, i, 0] = x
        puffs[b, i, 1] = y
        puffs[b, i, 2] = p.src_z
        puffs[b, i, 3] = p.r0_sq
    return n + count


@njit(cache=True, no_cpython_wrapper=True)
def advance_world(b, p, st, grid, spline, turns, walls):
    """Advance world ``b`` by one ``dt``, as pompy's ``wind.update(dt); plume.update(dt)``
    (``grid, spline, turns, walls``: ``p.grid_wind, p.spline, p.turns, p.among_walls``).

    Wind; a Poisson number of new puffs at the source (capped by the free slots); every live puff
    moves by (wind at the puff + Gaussian centre-line-relative velocity) x dt (among walls:
    reflected off them or absorbed, ``_move_among_walls``), its r^2 grows by spread x dt, and it is
    removed when it leaves the region (bounds inclusive); then re-binning.
    """
    if turns is not None:
        regime_step(b, p, st)
    if grid is not None:
        advance_wind(b, p, st, spline)
    key = st.key[b]
    t = st.clock[b]
    puffs = st.puffs
    cap = puffs.shape[1]
    n = st.n_live[b]
    for j in range(st.source.shape[1]):  # source j's releases at counter 16 + j (< 32: below the puffs')
        if n < cap:
            k = poisson(key, t, 16 + j, p.release_mean)
            n = _release(b, j, n, min(k, cap - n), p, st)
    # Three simple loops, each its own function (normals, wind at the puffs, move and compact):
    # one fused loop, or the three loops inlined in one function, ran up to 20x slower (measured).
    _draw_normals(b, key, t, 3 * n, st.draws)
    _wind_at_puffs(b, n, p, st, grid, spline, turns)
    if walls is None:
        kept = _move(b, n, p, st)
    else:
        kept = _move_among_walls(b, n, p, st)
    st.n_live[b] = kept
    st.clock[b] = t + 1
    _rebin(b, p, st)


@njit(cache=True, no_cpython_wrapper=True)
def reset_world(b, seed, episode, spin_up, p, st, grid, spline, turns, walls):
    """Start world ``b``'s episode: wind at its mean, filters at rest, the regime started, every
    source at its start with ``init_puffs`` puffs; then ``spin_up`` advances (0 for pompy's
    initial state). The flags as ``advance_world``'s."""
    st.key[b] = stream_key(seed, episode, STREAM_PUFFS)
    st.wall[b] = mask_index(seed, episode, p.walls.shape[0])  # the engine's draw: the world's mask
    st.clock[b] = 0
    wind = st.wind
    for i in range(wind.shape[2]):
        for j in range(wind.shape[3]):
            wind[b, 0, i, j] = p.u_av
            wind[b, 1, i, j] = p.v_av
    for k in range(8):
        st.noise[b, 0, k] = 0.0
        st.noise[b, 1, k] = 0.0
    if grid is not None and spline is not None:
        fit_spline(b, st)
    start_regime(b, seed, episode, p, st, turns)
    n = 0
    for j in range(st.source.shape[1]):  # every source at its start, with its initial puffs
        st.source[b, j, 0] = p.sources[j, 0]
        st.source[b, j, 1] = p.sources[j, 1]
        n = _release(b, j, n, p.init_puffs, p, st)
    st.n_live[b] = n
    _rebin(b, p, st)
    for _ in range(spin_up):
        advance_world(b, p, st, grid, spline, turns, walls)


# ---------------------------------------------------------------------------------------------
# Sampling


@njit(cache=True, inline="always")
def concentration_at(b, x, y, p, st):
    """Concentration (x conc_scale) at physical ``(x, y)``, height 0, in world ``b``: the sum of
    the puffs in the 3 x 3 bins around the point (every puff within REACH_RADII radii)."""
    nbx = st.bin_dims[b, 0]
    nby = st.bin_dims[b, 1]
    bx = min(max(int(np.floor((x - p.x_min) / st.bin_size[b, 0])), 0), nbx - 1)
    by = min(max(int(np.floor((y - p.y_min) / st.bin_size[b, 1])), 0), nby - 1)
    x0 = max(bx - 1, 0)
    x1 = min(bx + 1, nbx - 1)
    total = 0.0
    srt = st.sorted
    for yy in range(max(by - 1, 0), min(by + 1, nby - 1) + 1):
        # bins x0..x1 of one row are contiguous in the sorted array
        lo = st.bin_start[b, yy * nbx + x0]
        hi = st.bin_start[b, yy * nbx + x1 + 1]
        for k in range(lo, hi):
            dx = x - srt[b, k, 0]
            dy = y - srt[b, k, 1]
            total += srt[b, k, 2] * np.exp((dx * dx + dy * dy) * srt[b, k, 3])
    return total


@njit(cache=True, inline="always")
def cell_to_physical(cx, cy, p):
    """Physical point of (possibly fractional) cell ``(cx, cy)``: its centre."""
    return p.x_min + (cx + 0.5) * p.cell, p.y_min + (cy + 0.5) * p.cell


@njit(cache=True, inline="always")
def concentration_at_cell(b, cx, cy, p, st):
    """Concentration (x conc_scale) at the centre of (possibly fractional) cell ``(cx, cy)``."""
    x, y = cell_to_physical(cx, cy, p)
    return concentration_at(b, x, y, p, st)


@njit(cache=True, inline="always")
def wind_at_cell(b, cx, cy, p, st, grid, spline, turns):
    """Wind ``(u, v)`` in cells per step at the centre of (possibly fractional) cell ``(cx, cy)``
    (the flags: ``p.grid_wind, p.spline, p.turns``)."""
    x, y = cell_to_physical(cx, cy, p)
    u, v = wind_velocity(b, x, y, p, st, grid, spline)
    if turns is not None:
        u, v = turned(b, st, u, v)
    scale = p.dt / p.cell
    return u * scale, v * scale


@njit(cache=True)
def field_image(b, height, width, p, st, out):
    """Write world ``b``'s concentration at the centre of every cell into ``out`` (H, W) [y, x]."""
    for j in range(height):
        for i in range(width):
            x, y = cell_to_physical(i, j, p)
            out[j, i] = concentration_at(b, x, y, p, st)


# ---------------------------------------------------------------------------------------------
# Drivers over all worlds: a prange over worlds (identical to the serial loop, whatever the thread
# count) and the same loop serial, for small batches where waking threads costs more than it saves.


@njit(cache=True, inline="always")
def _sample_world(b, cells, p, st, conc, wind):
    for m in range(cells.shape[1]):
        conc[b, m] = concentration_at_cell(b, cells[b, m, 0], cells[b, m, 1], p, st)
        u, v = wind_at_cell(b, cells[b, m, 0], cells[b, m, 1], p, st, p.grid_wind, p.spline, p.turns)
        wind[b, m, 0] = u
        wind[b, m, 1] = v


@njit(cache=True, parallel=True)
def reset_all(seeds, episode, spin_up, p, st):
    """Reset every world ``b`` with seed ``seeds[b]``."""
    for u in prange(seeds.shape[0]):
        b = np.int64(u)  # prange's index is unsigned: the serial loop's int64 shares its compiled callees
        reset_world(b, seeds[b], episode, spin_up, p, st, p.grid_wind, p.spline, p.turns, p.among_walls)


@njit(cache=True, parallel=True)
def advance_all(p, st):
    """Advance every world by one ``dt``."""
    for u in prange(st.n_live.shape[0]):
        b = np.int64(u)
        advance_world(b, p, st, p.grid_wind, p.spline, p.turns, p.among_walls)


@njit(cache=True, parallel=True)
def sample_all(cells, p, st, conc, wind):
    """Concentration and wind at agents' cells.

    Args:
        cells: ``(B, M, 2)`` float64 cells ``(x, y)`` (fractional allowed).
        conc: ``(B, M)`` float64 out: concentration x conc_scale.
        wind: ``(B, M, 2)`` float64 out: wind in cells per step.
    """
    for u in prange(cells.shape[0]):
        b = np.int64(u)
        _sample_world(b, cells, p, st, conc, wind)


@njit(cache=True, parallel=True)
def step_all(cells, p, st, conc, wind):
    """Advance every world, then sample at the agents (one call, one prange over worlds)."""
    for u in prange(cells.shape[0]):
        b = np.int64(u)
        advance_world(b, p, st, p.grid_wind, p.spline, p.turns, p.among_walls)
        _sample_world(b, cells, p, st, conc, wind)


@njit(cache=True)
def reset_all_serial(seeds, episode, spin_up, p, st):
    """``reset_all`` on the calling thread."""
    for b in range(seeds.shape[0]):
        reset_world(b, seeds[b], episode, spin_up, p, st, p.grid_wind, p.spline, p.turns, p.among_walls)


@njit(cache=True)
def advance_all_serial(p, st):
    """``advance_all`` on the calling thread."""
    for b in range(st.n_live.shape[0]):
        advance_world(b, p, st, p.grid_wind, p.spline, p.turns, p.among_walls)


@njit(cache=True)
def sample_all_serial(cells, p, st, conc, wind):
    """``sample_all`` on the calling thread."""
    for b in range(cells.shape[0]):
        _sample_world(b, cells, p, st, conc, wind)


@njit(cache=True)
def step_all_serial(cells, p, st, conc, wind):
    """``step_all`` on the calling thread."""
    for b in range(cells.shape[0]):
        advance_world(b, p, st, p.grid_wind, p.spline, p.turns, p.among_walls)
        _sample_world(b, cells, p, st, conc, wind)


# ---------------------------------------------------------------------------------------------
# The same samplers as functions of their own (not inlined): the step drivers call these, so the
# puff loop and the wind interpolation compile once, not once per driver and call site.


@njit(cache=True, no_cpython_wrapper=True)
def concentration_at_cell_fn(b, cx, cy, p, st):
    return concentration_at_cell(b, cx, cy, p, st)


@njit(cache=True, no_cpython_wrapper=True)
def wind_at_cell_fn(b, cx, cy, p, st, grid, spline, turns):
    return wind_at_cell(b, cx, cy, p, st, grid, spline, turns)
