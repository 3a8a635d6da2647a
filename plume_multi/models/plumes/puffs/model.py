"""Puff plume in a meandering wind (Farrell, Murlis, Long, Li & Cardé 2002), as pompy implements it.

``Wind`` and ``Puffs`` are frozen, validated configurations with pompy's parameter names and
defaults; ``PuffPlume`` runs B independent worlds of the model through the compiled kernels of
``physics.py`` beside this file (standalone: tests, benchmarks, pictures);
``plume_multi.viz.render.render_puffs`` draws one world.

Conventions: ``region = ((x_min, x_max), (y_min, y_max))`` is the physical rectangle (pompy's
``PlumeModel`` default), and the wind grid spans the same region. The cell grid covers the region
from its corner: cell ``(i, j)`` has its centre at ``(x_min + (i + 1/2) cell_size,
y_min + (j + 1/2) cell_size)``; ``cell_size`` defaults to the region width / grid width. The
source is given in cells like every plume. Each step the plume advances one ``dt``; the
concentration is read at height 0, times ``conc_scale``; the wind is reported in cells per step.
"""

from __future__ import annotations

import dataclasses
import math
from collections import namedtuple
from dataclasses import dataclass, replace
from typing import ClassVar, Optional, Tuple, Union

import numpy as np

from ....checks import (CheckedArguments, check_bool, check_choice, check_int, check_point, check_real, fail, is_int,
                        is_real)
from ....engine.api import grid_point, static_flag
from ....engine.jit import njit
from ....engine.refs import pick
from ....engine.threads import PARALLEL_LOCK
from ....errors import ValidationError
from ...units import Units
from ...base import Plume, PlumeKernels, StateArray
from . import limits as L
from ...sources.source_set import (motion_of, move_sources, move_sources_among_walls, parse_source, place_sources,
                                   reach_source, source_cells)
from . import physics as K
from .regimes import check_regime, regime_scalars

__all__ = ["Wind", "Puffs", "PuffPlume", "REACH_RADII"]

REACH_RADII = K.REACH_RADII
MAX_WIND_GRID = 512
MAX_PUFFS = 1 << 20
WALLS_MODES = {"reflect": K.WALLS_REFLECT, "absorb": K.WALLS_ABSORB}  # Puffs.walls
_NO_WALLS = np.zeros((1, 1, 1), np.bool_)
_NO_WALLS.flags.writeable = False


@dataclass(frozen=True)
class Wind(metaclass=CheckedArguments):
    """A meandering 2-D wind: pompy's ``WindModel`` over the plume's region.

    Args:
        u, v: mean velocity (length / time), within +-1e9.
        k_x, k_y: diffusivities of the advection-diffusion update (length^2 / time), 0..1e12.
        noise_gain, noise_damp, noise_bandwidth: the second-order coloured-noise filter that
            drives the corner velocities (gain dimensionless, damping ratio, bandwidth 1 / time;
            each 0..1e6); ``noise_gain=0`` gives a steady uniform wind. With noise, the plume
            checks that pompy's explicit updates stay bounded (``puffs/limits.py``).
        grid: ``(n_x, n_y)`` grid points over the region, corners included (each 2..512).
        interpolation: velocity between grid points: ``"bilinear"`` (fast; the plume statistics
            match pompy's) or ``"spline"``, pompy's bicubic interpolating spline (SciPy's
            ``RectBivariateSpline``; grid >= 4 x 4; about 1.6x the cost of a step).
        regime: how the wind's direction changes, the four plume regimes of Singh et al. (2023),
            drawn per world and episode from the world's stream (``puffs/regimes.py``):
            ``"constant"`` (default), ``"switch-once"`` (turns by ``switch_degrees`` once, at a
            time drawn in ``switch_after``), ``"switch-many"`` (a new direction drawn from
            N(0, ``direction_std``) clipped to +-``direction_max`` degrees every ``switch_every``
            +- ``switch_jitter`` seconds), ``"sparse"`` (constant, puffs released at ``sparsity``
            times the rate). The defaults are theirs: 45 degrees; 0-30 s after the reset; every
            3 +- 0.3 s, 30 degrees, clipped at 60; 0.4.
    """

    u: float = 1.0
    v: float = 0.0
    k_x: float = 20.0
    k_y: float = 20.0
    noise_gain: float = 2.0
    noise_damp: float = 0.1
    noise_bandwidth: float = 0.2
    grid: Tuple[int, int] = (21, 21)
    interpolation: str = "bilinear"
    regime: str = "constant"
    switch_degrees: float = 45.0
    switch_after: Tuple[float, float] = (0.0, 30.0)
    switch_every: float = 3.0
    switch_jitter: float = 0.3
    direction_std: float = 30.0
    direction_max: float = 60.0
    sparsity: float = 0.4

    def __post_init__(self):
        L.check_wind_fields(self)
        check_regime(self)
        for name in ("u", "v", "k_x", "k_y", "noise_gain", "noise_damp", "noise_bandwidth"):
            object.__setattr__(self, name, float(getattr(self, name)))
        rule = f"(n_x, n_y), two integers in 2..{MAX_WIND_GRID}"
        nx, ny = check_point("Wind", "grid", self.grid, integer=True, expected=rule)
        if not (2 <= nx <= MAX_WIND_GRID and 2 <= ny <= MAX_WIND_GRID):
            fail("Wind", "grid", self.grid, rule)
        object.__setattr__(self, "grid", (nx, ny))
        check_choice("Wind", "interpolation", self.interpolation, ("bilinear", "spline"))
        if self.interpolation == "spline" and min(nx, ny) < 4:
            fail("Wind", "grid", self.grid, "at least 4 x 4 points for interpolation='spline'")

    def metadata(self) -> dict:
        """JSON-able description."""
        return {"model": "wind", "u": self.u, "v": self.v, "k_x": self.k_x, "k_y": self.k_y,
                "noise_gain": self.noise_gain, "noise_damp": self.noise_damp,
                "noise_bandwidth": self.noise_bandwidth, "grid": list(self.grid),
                "interpolation": self.interpolation, **self._regime_metadata()}

    def _regime_metadata(self) -> dict:
        record = {"regime": self.regime, "switch_degrees": self.switch_degrees, "switch_after": list(self.switch_after),
                  "switch_every": self.switch_every, "switch_jitter": self.switch_jitter,
                  "direction_std": self.direction_std, "direction_max": self.direction_max, "sparsity": self.sparsity}
        # a constant wind with the regimes' default fields is written as before regimes existed; other
        # values of those fields (unused by a constant wind) are written, so the record loads back equal
        defaults = {f.name: f.default for f in dataclasses.fields(self) if f.name in record}
        if self.regime == "constant" and all(tuple(v) == defaults[k] if isinstance(v, list) else v == defaults[k]
                                             for k, v in record.items()):
            return {}
        return record


# ---------------------------------------------------------------------------------------------
# The compiled functions of the plume (PlumeKernels): P = PuffsParams (the physics' PuffParams and
# the source motion's record), S = PuffState, the world view is the world's index. Positions are
# cells; the wind is in cells per step. The physics gets ``physics(P)``, the same type whatever the
# motion, so it compiles once. The samplers call compiled functions of their own: inlined, the
# puff loop and the wind's spline made every step driver take 20 s more to compile, for no
# measurable speed (a sample sums many puffs).
PuffsParams = namedtuple("PuffsParams", K.PuffParams._fields + ("motion",))
N_PHYSICS = len(K.PuffParams._fields)


@njit(inline="always")
def physics(P):
    return pick(P, K.PuffParams)


@njit(inline="always")
def reset_world(P, S, b, seed, episode, pos, base, n_agents):
    K.reset_world(b, seed, episode, P.spin_up, physics(P), S, P.grid_wind, P.spline, P.turns, P.among_walls)
    # the sources moved by the motion from the first step (the spin-up releases at their starts)
    place_sources(P.sources, None, (P.motion, S.motion), (S.source, S.found), b, seed, episode, (P.width, P.height),
                  K.STREAM_PUFFS, None)


@njit(inline="always")
def advance(P, S, b, t, seed, episode):
    if P.walls_mode == K.WALLS_NONE:
        move_sources((P.motion, S.motion), S.source, b, t, (P.width, P.height), seed, episode, None)
    else:  # a source's move into a solid cell is refused
        move_sources_among_walls((P.motion, S.motion), S.source, b, t, (P.width, P.height), seed, episode, None,
                                 (P.walls, S.wall[b]))
    K.advance_world(b, physics(P), S, P.grid_wind, P.spline, P.turns, P.among_walls)


# 2-D tuples: the puff plume is 2-D (Puffs.dimensions)
@njit(inline="always")
def source(P, S, b, shape):
    return S.source[b, 0, 0], S.source[b, 0, 1]


@njit(inline="always")
def reach(P, S, b, point, goal_d2, team):
    return reach_source(S.source, S.found, b, point[0], point[1], goal_d2, team)


@njit(inline="always")
def sample_cell(P, S, pw, cell):
    return np.float32(K.concentration_at_cell_fn(pw, np.float64(cell[0]), np.float64(cell[1]), physics(P), S))


@njit(inline="always")
def sample_at(P, S, pw, point):
    """Concentration at a float position in cells; 0 farther than half a cell off the grid (as
    every plume: ``engine.api.grid_point``)."""
    inside, point = grid_point(point, (P.width, P.height))
    if not inside:
        return np.float32(0.0)
    return np.float32(K.concentration_at_cell_fn(pw, point[0], point[1], physics(P), S))


@njit(inline="always")
def wind_at(P, S, pw, point):
    return K.wind_at_cell_fn(pw, point[0], point[1], physics(P), S, P.grid_wind, P.spline, P.turns)


KERNELS = PlumeKernels(source=source, sample_cell=sample_cell, sample_at=sample_at, reset_world=reset_world,
                       advance=advance, wind_at=wind_at, reach=reach)


@dataclass(frozen=True)
class Puffs(Plume):
    """The puff plume: odour puffs released at a source, carried by the wind, spreading.

    Args:
        source: ``(x, y)`` in cells (floats allowed); its physical point must lie in ``region``.
            Or a list of 2 to 16 ``(x, y)``: several sources, each releasing its own puffs (its
            own Poisson draws, ``init_num_puffs`` at reset each).
        wind: a ``Wind`` (its ``regime``: winds that change), or a constant ``(u, v)``
            (length / time).
        centre_rel_diff_scale: std of the centre-line-relative puff velocity (length / time^0.5
            in pompy's docs; applied as a velocity N(0, scale^2) per step, times dt, as pompy's
            code does): a scalar or one value per axis (x, y, and z when ``model_z_disp``).
        puff_init_rad: initial puff radius (length), 1e-30..1e30.
        puff_spread_rate: growth of r^2 (length^2 / time), 0..1e30.
        puff_release_rate: mean puffs released per unit time (Poisson), 0..500 / dt; 0 releases
            only the ``init_num_puffs`` at reset.
        init_num_puffs: puffs at the source at reset, <= ``max_num_puffs``.
        max_num_puffs: capacity of a world (releases are capped by the free slots), 1..2**20.
        dt: time per step (time), in (0, 1e6].
        region: ``((x_min, x_max), (y_min, y_max))`` (length, within +-1e15); puffs leaving it are
            removed.
        cell_size: length of a cell side; None: region width / grid width.
        model_z_disp: puffs also wander vertically (the agent reads at height 0).
        puff_mol_amount: amount of odour per puff, 1e-30..1e30.
        conc_scale: the concentration reported is ``conc_scale`` x the model's (1e-30..1e30, not
            clipped). The largest concentration possible, ``max_num_puffs * puff_mol_amount *
            conc_scale / (sqrt(8 pi^3) puff_init_rad^3)``, must be at most 1e30.
        spin_up_steps: steps run at reset before the episode starts, 0..10**6 (0: pompy's
            initial state, ``init_num_puffs`` at the source and a uniform wind).
        source_motion: how the sources move, a ``plume_multi.sources`` model (default
            ``sources.Static()``); puffs are released where a source is when they are released.
            The sources move from the episode's first step (the spin-up releases at their starts).
        walls: what a puff does at a wall of a scenario with walls (``Scenario(walls=...)``):
            ``"reflect"`` (default) off the face it meets, or ``"absorb"``: it is removed. Each step
            a puff moves along x, then along y; a move into a solid cell along an axis is mirrored
            about that cell's face (a reflected move that meets a wall too is not made).

    The wind an agent reads is at most 1e6 cells per step; with a meandering ``Wind``, pompy's
    explicit updates must stay bounded (``puffs/limits.py`` says how each bound is computed).
    """

    source: Tuple[float, float]
    wind: Union[Wind, Tuple[float, float]] = Wind()
    centre_rel_diff_scale: Union[float, Tuple[float, ...]] = 2.0
    puff_init_rad: float = 0.0316
    puff_spread_rate: float = 0.001
    puff_release_rate: float = 10.0
    init_num_puffs: int = 10
    max_num_puffs: int = 1000
    dt: float = 0.01
    region: Tuple[Tuple[float, float], Tuple[float, float]] = ((0.0, 50.0), (-12.5, 12.5))
    cell_size: Optional[float] = None
    model_z_disp: bool = True
    puff_mol_amount: float = 1.0
    conc_scale: float = 1.0
    spin_up_steps: int = 0
    source_motion: object = None
    walls: str = "reflect"

    kernels: ClassVar = KERNELS
    dimensions: ClassVar[tuple] = (2,)  # pompy's puffs move in a plane (read at height 0)
    among_walls: ClassVar = True  # puffs reflect off walls; a moving source's move into a wall is refused

    def __post_init__(self):
        c = "Puffs"
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731
        set_("source", parse_source(c, self.source, allow_random=False, integer=False, default_ok=False))
        for xy in (self.source if self.source_count() > 1 else (self.source,)):
            check_point(c, "source", xy, limit=L.LENGTH,
                        expected=f"(x, y) in cells, or a list of them, finite numbers within +-{L.LENGTH:g}")
        set_("source_motion", motion_of(c, self.source_motion))
        if not isinstance(self.wind, Wind):
            set_("wind", check_point(c, "wind", self.wind, limit=L.SPEED,
                                     expected=f"a plumes.Wind or a constant (u, v) of finite numbers within "
                                              f"+-{L.SPEED:g} (length / time)"))
        set_("dt", check_real(c, "dt", self.dt, 0.0, L.MAX_DT, low_open=True))
        for name in ("puff_init_rad", "puff_mol_amount", "conc_scale"):
            set_(name, check_real(c, name, getattr(self, name), *L.AMOUNT))
        set_("puff_spread_rate", check_real(c, "puff_spread_rate", self.puff_spread_rate, 0.0, L.AMOUNT[1]))
        set_("puff_release_rate", check_real(c, "puff_release_rate", self.puff_release_rate, 0.0, 500.0 / self.dt))
        set_("model_z_disp", check_bool(c, "model_z_disp", self.model_z_disp))
        axes = 3 if self.model_z_disp else 2
        scale = self.centre_rel_diff_scale
        if is_real(scale):
            set_("centre_rel_diff_scale", check_real(c, "centre_rel_diff_scale", scale, 0.0, L.SPEED))
        else:
            values = check_point(c, "centre_rel_diff_scale", scale, length=axes, limit=L.SPEED,
                                 expected=f"a number in [0, {L.SPEED:g}], or {axes} of them "
                                          f"(x, y{', z' if axes == 3 else ''})")
            if min(values) < 0:
                fail(c, "centre_rel_diff_scale", scale, f"numbers >= 0 (x, y{', z' if axes == 3 else ''})")
            set_("centre_rel_diff_scale", values)
        set_("max_num_puffs", check_int(c, "max_num_puffs", self.max_num_puffs, 1, MAX_PUFFS))
        set_("init_num_puffs", check_int(c, "init_num_puffs", self.init_num_puffs, 0, self.max_num_puffs))
        set_("spin_up_steps", check_int(c, "spin_up_steps", self.spin_up_steps, 0, L.MAX_SPIN_UP))
        rule = (f"((x_min, x_max), (y_min, y_max)), finite numbers within +-{L.LENGTH:g}, with x_max - x_min and "
                f"y_max - y_min >= {L.MIN_SIDE:g}")
        if not isinstance(self.region, (tuple, list)) or len(self.region) != 2:
            fail(c, "region", self.region, rule)
        (x0, x1), (y0, y1) = (check_point(c, "region", r, limit=L.LENGTH, expected=rule) for r in self.region)
        if not (x1 - x0 >= L.MIN_SIDE and y1 - y0 >= L.MIN_SIDE):
            fail(c, "region", self.region, rule)
        set_("region", ((x0, x1), (y0, y1)))
        check_choice(c, "walls", self.walls, WALLS_MODES)
        if self.init_num_puffs * self.source_count() > self.max_num_puffs:
            fail(c, "init_num_puffs", self.init_num_puffs,
                 f"at most max_num_puffs / sources = {self.max_num_puffs // self.source_count()} per source")
        if self.cell_size is not None:
            set_("cell_size", check_real(c, "cell_size", self.cell_size, 0.0, L.LENGTH, low_open=True))
            self._check_source(self.cell_size)
            L.check_on_grid(self, self.cell_size)
        L.check_amounts(self)
        if isinstance(self.wind, Wind):
            L.check_meander(self)

    # --- geometry -----------------------------------------------------------------------------

    def resolved_cell_size(self, grid_size) -> float:
        """The cell size on a ``(width, height)`` grid (length), checked to fit the region."""
        w, h = _grid(grid_size)
        (x0, x1), (y0, y1) = self.region
        cell = self.cell_size if self.cell_size is not None else (x1 - x0) / w
        tol = 1e-9 * max(x1 - x0, y1 - y0)
        if w * cell > (x1 - x0) + tol or h * cell > (y1 - y0) + tol:
            what = "cell_size" if self.cell_size is not None else "grid_size"
            raise ValidationError(
                f"Puffs.{what}: a {w}x{h} grid of cells {cell:g} wide covers {w * cell:g} x {h * cell:g}; "
                f"expected it to fit the region {x1 - x0:g} x {y1 - y0:g}")
        return cell

    def cells(self) -> list:
        """Every source's start ``(x, y)`` in cells."""
        return source_cells(self.source)

    def source_count(self) -> int:
        return len(self.cells())

    def source_position(self, cell: float, k: int = 0) -> Tuple[float, float]:
        """Physical ``(x, y)`` of source ``k`` (at its start) for a cell size."""
        (x0, _), (y0, _) = self.region
        cx, cy = self.cells()[k]
        return x0 + (cx + 0.5) * cell, y0 + (cy + 0.5) * cell

    def _check_source(self, cell: float) -> None:
        (x0, x1), (y0, y1) = self.region
        for k in range(self.source_count()):
            px, py = self.source_position(cell, k)
            if not (x0 <= px <= x1 and y0 <= py <= y1):
                raise ValidationError(
                    f"Puffs.source: got {self.source} (cells of {cell:g}: the point ({px:g}, {py:g})); "
                    f"expected points inside the region {self.region}")

    def wind_grid(self) -> Tuple[int, int]:
        """``(n_x, n_y)`` of the wind grid (2 x 2, unused, for a constant wind)."""
        return self.wind.grid if isinstance(self.wind, Wind) else (2, 2)

    def params(self, grid_size, walls=None) -> "PuffsParams":
        """The engine's parameters: ``physics_params`` and the source motion's record."""
        return PuffsParams(*self.physics_params(grid_size, walls), self.source_motion.record())

    def physics_params(self, grid_size, walls=None) -> "K.PuffParams":
        """The kernels' scalars for a ``(width, height)`` cell grid, or the engine's context (its
        ``grid_size``, and its ``walls``); checks that the grid fits the region. ``walls``: a
        ``plume_multi.walls.Walls`` of that grid (or the context's), or None."""
        walls = getattr(grid_size, "walls", None) if walls is None else walls
        grid_size = getattr(grid_size, "grid_size", grid_size)
        cell = self.resolved_cell_size(grid_size)
        self._check_source(cell)
        (x0, x1), (y0, y1) = self.region
        sx, sy = self.source_position(cell)
        scale = self.centre_rel_diff_scale
        sc = (scale,) * 3 if isinstance(scale, float) else tuple(scale) + (0.0,) * (3 - len(scale))
        wind = self.wind
        if isinstance(wind, Wind):
            nx, ny = wind.grid
            bw = wind.noise_bandwidth
            u, v, kx, ky = wind.u, wind.v, wind.k_x, wind.k_y
            na, nb, nc = bw ** 2, 2.0 * wind.noise_damp * bw, wind.noise_gain * bw ** 2
        else:
            nx, ny = 2, 2
            (u, v), kx, ky, na, nb, nc = wind, 0.0, 0.0, 0.0, 0.0, 0.0
        starts = np.array(self.cells(), np.float64).reshape(-1, 2)
        starts.flags.writeable = False
        sparsity = wind.sparsity if isinstance(wind, Wind) and wind.regime == "sparse" else 1.0
        return K.PuffParams(
            dt=self.dt, x_min=x0, x_max=x1, y_min=y0, y_max=y1, cell=cell,
            src_x=sx, src_y=sy, src_z=0.0, r0_sq=self.puff_init_rad ** 2,
            spread=self.puff_spread_rate, release_mean=self.puff_release_rate * self.dt * sparsity,
            init_puffs=self.init_num_puffs, scale_x=sc[0], scale_y=sc[1], scale_z=sc[2],
            model_z=int(self.model_z_disp),
            amp=self.puff_mol_amount / math.sqrt(8.0 * math.pi ** 3) * self.conc_scale,
            grid_wind=static_flag(isinstance(wind, Wind)), u_av=float(u), v_av=float(v), k_x=kx, k_y=ky,
            wdx=(x1 - x0) / (nx - 1), wdy=(y1 - y0) / (ny - 1),
            noise_a=na, noise_b=nb, noise_c=nc,
            spline=static_flag(self.spline),
            spin_up=self.spin_up_steps, src_cx=starts[0, 0], src_cy=starts[0, 1],
            width=int(grid_size[0]), height=int(grid_size[1]), sources=starts,
            **regime_scalars(wind if isinstance(wind, Wind) else None, self.dt),
            walls_mode=K.WALLS_NONE if walls is None else WALLS_MODES[self.walls],
            among_walls=static_flag(walls is not None),
            walls=_NO_WALLS if walls is None else walls.masks,
        )

    # --- the engine's plume interface (docs/developing-models.md) ---------------------------------

    @property
    def random_source(self) -> bool:
        return False

    @property
    def spline(self) -> bool:
        return isinstance(self.wind, Wind) and self.wind.interpolation == "spline"

    def bind(self, grid_size) -> "Puffs":
        """This plume on a ``(width, height)`` grid: the grid must fit the region and the source lie
        in it; ``cell_size`` is fixed to its value on this grid."""
        cell = self.resolved_cell_size(grid_size)
        self._check_source(cell)
        L.check_on_grid(self, cell)
        self.source_motion.check_grid(_grid(grid_size), "Puffs")
        return self if self.cell_size == cell else replace(self, cell_size=cell)

    def units(self, grid_size) -> Units:
        """A cell is ``cell_size`` long (the region's length unit), a step lasts ``dt`` (seconds);
        cell ``(0, 0)`` lies at the region's corner plus half a cell."""
        cell = self.resolved_cell_size(grid_size)
        (x0, _), (y0, _) = self.region
        return Units(cell_size=cell, step_duration=self.dt, origin=(x0 + cell / 2, y0 + cell / 2))

    def check_walls(self, walls) -> None:
        """Every source starts on a cell free in every mask; a moving source's move into a solid
        cell is refused in the step (``sources.source_set.move_sources_among_walls``)."""
        walls.check_sources_free("Puffs", self.cells())

    def fixed_source(self):
        return self.source if self.source_count() == 1 and not self.source_motion.moves else None

    def on_cells(self) -> bool:
        return not self.source_motion.moves and all(float(c).is_integer() for xy in self.cells() for c in xy)

    def concentration_bounds(self) -> tuple:
        return 0.0, math.inf

    def field(self, grid_size):
        return None  # no shared field: every world has its own puffs

    def state_spec(self, scenario) -> dict:
        nx, ny = self.wind_grid()
        walls = getattr(scenario, "walls", None)
        kinds = K.world_arrays(self.max_num_puffs, nx, ny, self.spline, self.source_count(),
                               self.source_motion.state_width())
        ranges = L.state_ranges(self, kinds)
        if scenario is not None:  # the sources stay in the region: its extent in cells of this grid
            cell = self.resolved_cell_size(scenario.grid_size)
            (x0, x1), (y0, y1) = self.region
            ranges["source"] = (-0.5, ((x1 - x0) / cell - 0.5, (y1 - y0) / cell - 0.5), False)
        ranges["wall"] = (0, 0 if walls is None else walls.n_masks - 1, False)  # the index of the world's mask
        return {name: StateArray(dtype, "world", tail, *ranges[name]) for name, (dtype, tail) in kinds.items()}

    def check_state(self, ctx, arrays: dict, world=None) -> list:
        """The live puffs within the region and their radius, their sorted copy's amplitudes, and
        bins that index it from 0 to ``n_live`` (``puffs/limits.py``)."""
        return L.state_problems(self, arrays)

    def wall_index(self, params, state) -> np.ndarray:
        """``(B,)`` the wall mask each world's puffs move among (the engine's draw)."""
        return state.wall

    def state_tuple(self, arrays: dict) -> "K.PuffState":
        nx, ny = self.wind_grid()
        return K.make_state(arrays, nx, ny, self.spline)

    def image(self, params, state, b: int, t: int) -> np.ndarray:
        """``(H, W)`` float32 concentration of world ``b`` at every cell centre."""
        w, h = params.width, params.height
        out = np.empty((h, w))
        K.field_image(int(b), h, w, K.PuffParams(*params[:N_PHYSICS]), state, out)
        return out.astype(np.float32)

    def sources(self, params, state, num_worlds: int) -> np.ndarray:
        return state.source[:, 0].copy()

    def source_positions(self, params, state, num_worlds: int) -> np.ndarray:
        return state.source.copy()

    def sources_found(self, params, state, num_worlds: int):
        return state.found.copy() if self.source_count() > 1 else None

    @classmethod
    def from_fields(cls, fields: dict) -> "Puffs":
        """``metadata()`` read back: the wind is ``{"model": "wind", ...}`` (a ``Wind``) or
        ``{"model": "constant", "u": u, "v": v}``."""
        fields = dict(fields)
        wind = fields.pop("wind", None)
        if isinstance(wind, dict):
            kind = wind.get("model")
            rest = {k: v for k, v in wind.items() if k != "model"}
            if kind == "wind":
                wind = Wind(**{k: tuple(v) if isinstance(v, list) else v for k, v in rest.items()})
            elif kind == "constant" and set(rest) == {"u", "v"}:
                wind = (rest["u"], rest["v"])
            else:
                fail("Puffs", "wind", wind, "{'model': 'wind', ...Wind fields} or {'model': 'constant', 'u': U, 'v': V}")
        if wind is not None:
            fields["wind"] = wind  # field_value leaves a Wind as it is and makes a list a tuple
        return super().from_fields(fields)

    def metadata(self) -> dict:
        """JSON-able description (``from_fields`` reads it back)."""
        wind = self.wind.metadata() if isinstance(self.wind, Wind) else {"model": "constant", "u": self.wind[0], "v": self.wind[1]}
        scale = self.centre_rel_diff_scale
        source = [list(c) for c in self.source] if self.source_count() > 1 else list(self.source)
        motion = {"source_motion": self.source_motion.metadata()} if self.source_motion.moves else {}
        return {
            "family": "plume", "model": "Puffs", "source": source, "wind": wind, **motion,
            "centre_rel_diff_scale": scale if isinstance(scale, float) else list(scale),
            "puff_init_rad": self.puff_init_rad, "puff_spread_rate": self.puff_spread_rate,
            "puff_release_rate": self.puff_release_rate, "init_num_puffs": self.init_num_puffs,
            "max_num_puffs": self.max_num_puffs, "dt": self.dt,
            "region": [list(self.region[0]), list(self.region[1])], "cell_size": self.cell_size,
            "model_z_disp": self.model_z_disp, "puff_mol_amount": self.puff_mol_amount,
            "conc_scale": self.conc_scale, "spin_up_steps": self.spin_up_steps, "walls": self.walls,
        }


def _grid(grid_size) -> Tuple[int, int]:
    try:
        w, h = grid_size
    except (TypeError, ValueError):
        raise ValidationError(f"grid_size: got {grid_size!r}; expected (width, height), two integers >= 1") from None
    if not (is_int(w) and is_int(h) and w >= 1 and h >= 1):
        raise ValidationError(f"grid_size: got {grid_size!r}; expected (width, height), two integers >= 1")
    return int(w), int(h)


class PuffPlume:
    """B independent worlds of a ``Puffs`` model on a ``(width, height)`` cell grid.

    ``reset(seed)`` seeds world ``b`` with ``seed + b``; ``step()`` advances every world by one
    ``dt``; ``sample(cells)`` reads the concentration and the wind at agents' cells. The state is
    ``self.state`` (``kernels.puffs.PuffState``), the scalars ``self.params``. Sources stay at
    their starts here (source motions run in the engine's step).

    ``parallel``: run worlds on Numba's threads (a ``prange`` over worlds; results are identical
    either way); None: only from ``PARALLEL_FROM_WORLDS`` worlds, below which waking the threads
    costs more than it saves. ``walls``: solid cells of the grid, as ``Scenario(walls=...)`` takes
    them (world ``b`` of seed ``s`` moves among the mask the engine draws for ``(s, episode)``);
    puffs reflect off them or are absorbed (``Puffs.walls``).
    """

    PARALLEL_FROM_WORLDS = 16

    def __init__(self, config: Puffs, grid_size, num_worlds: int = 1, parallel: Optional[bool] = None, walls=None):
        if not isinstance(config, Puffs):
            raise ValidationError(f"config: got {type(config).__name__}; expected a plumes.Puffs")
        if not is_int(num_worlds) or num_worlds < 1:
            raise ValidationError(f"num_worlds: got {num_worlds!r}; expected an integer >= 1")
        self.config = config
        self.grid_size = _grid(grid_size)
        if walls is not None:
            from ....walls import Walls

            walls = Walls.of(walls, self.grid_size, name="walls")
        self.walls = walls
        self.params = config.physics_params(self.grid_size, walls)
        nx, ny = config.wind_grid()
        self.state = K.allocate_state(int(num_worlds), config.max_num_puffs, nx, ny, spline=config.spline,
                                      n_sources=config.source_count())
        self.num_worlds = int(num_worlds)
        if parallel is None:
            parallel = self.num_worlds >= self.PARALLEL_FROM_WORLDS
        self.parallel = bool(parallel)
        suffix = "" if self.parallel else "_serial"
        self._reset = getattr(K, "reset_all" + suffix)
        self._advance = getattr(K, "advance_all" + suffix)
        self._sample = getattr(K, "sample_all" + suffix)
        self._step = getattr(K, "step_all" + suffix)

    def reset(self, seed: int = 0, episode: int = 0) -> None:
        """World ``b`` restarts from seed ``seed + b`` (then ``spin_up_steps`` advances)."""
        if not is_int(seed) or seed < 0 or seed + self.num_worlds > 2 ** 63:
            raise ValidationError(f"seed: got {seed!r}; expected an integer in 0..2**63 - num_worlds")
        if not is_int(episode) or episode < 0:
            raise ValidationError(f"episode: got {episode!r}; expected an integer >= 0")
        seeds = np.arange(self.num_worlds, dtype=np.int64) + np.int64(seed)
        with PARALLEL_LOCK:  # the threaded kernels: one launch at a time (engine/threads.py)
            self._reset(seeds, np.int64(episode), np.int64(self.config.spin_up_steps), self.params, self.state)

    def step(self) -> None:
        """Advance every world by one ``dt``."""
        with PARALLEL_LOCK:
            self._advance(self.params, self.state)

    def _cells(self, cells) -> np.ndarray:
        arr = np.asarray(cells, dtype=np.float64)
        if arr.ndim == 2:
            arr = np.broadcast_to(arr, (self.num_worlds,) + arr.shape)
        if arr.ndim != 3 or arr.shape[0] != self.num_worlds or arr.shape[2] != 2 or not np.isfinite(arr).all():
            raise ValidationError(f"cells: got shape {np.shape(cells)}; expected finite (B={self.num_worlds}, M, 2) or (M, 2) cells (x, y)")
        return np.array(arr, order="C")  # a writable copy: mutability is part of the kernels' signature

    def sample(self, cells):
        """Concentration ``(B, M)`` and wind ``(B, M, 2)`` (cells per step) at cells ``(B, M, 2)``."""
        arr = self._cells(cells)
        conc = np.empty(arr.shape[:2])
        wind = np.empty(arr.shape)
        with PARALLEL_LOCK:
            self._sample(arr, self.params, self.state, conc, wind)
        return conc, wind

    def step_and_sample(self, cells):
        """``step()`` then ``sample(cells)`` in one compiled call."""
        arr = self._cells(cells)
        conc = np.empty(arr.shape[:2])
        wind = np.empty(arr.shape)
        with PARALLEL_LOCK:
            self._step(arr, self.params, self.state, conc, wind)
        return conc, wind

    def puffs(self, b: int = 0) -> np.ndarray:
        """World ``b``'s live puffs ``(n, 4)`` [x, y, z, r^2] (physical), oldest first (a copy)."""
        return self.state.puffs[b, :self.state.n_live[b]].copy()

    def wind_grid(self, b: int = 0) -> np.ndarray:
        """World ``b``'s wind at the grid points ``(2, n_x, n_y)`` (u, v; length / time; a copy)."""
        return self.state.wind[b, :, 1:-1, 1:-1].copy()

    def field_image(self, b: int = 0) -> np.ndarray:
        """World ``b``'s concentration at every cell centre, ``(H, W)`` float64 indexed [y, x]."""
        w, h = self.grid_size
        out = np.empty((h, w))
        K.field_image(int(b), h, w, self.params, self.state, out)
        return out
