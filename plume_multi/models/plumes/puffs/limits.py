"""The bounds of the puff plume's parameters: every value accepted gives finite observations.

A parameter is checked alone (finite, within a range wide enough for any physical unit), then
with the others, where only the combination decides:

* the largest concentration an agent can read, ``max_num_puffs * puff_mol_amount * conc_scale /
  (sqrt(8 pi^3) puff_init_rad^3)`` (every puff on the agent, each at its smallest radius), is at
  most ``MAX_CONCENTRATION`` (a float32 observation holds up to 3.4e38);
* the wind an agent reads, in cells per step, is at most ``MAX_CELLS_PER_STEP``;
* pompy's explicit updates of a meandering wind do not diverge: the coloured-noise filter
  (Euler-Maruyama) is stable (the spectral radius of its step is at most 1), the diffusion step
  is (``dt (k_x / dx^2 + k_y / dy^2) <= 1``), and so is the advection by the wind (its mean plus
  three standard deviations of the meander, ``U``), whose centred differences need diffusion:
  ``c_x^2 / d_x + c_y^2 / d_y <= 2`` with ``c = U dt / dx`` and ``d = k dt / (2 dx^2)`` (the
  von Neumann condition of the 2-D FTCS scheme, Hindmarsh, Gresho & Griffiths 1984).
"""

from __future__ import annotations

import math

import numpy as np

from ....checks import check_real
from ....errors import ValidationError

__all__ = ["MAX_CONCENTRATION", "MAX_CELLS_PER_STEP", "SPEED", "DIFFUSIVITY", "NOISE", "LENGTH", "AMOUNT",
           "MIN_SIDE", "MAX_DT", "MAX_SPIN_UP", "check_wind_fields", "check_amounts", "check_meander", "check_on_grid"]

MAX_CONCENTRATION = 1e30
MAX_CELLS_PER_STEP = 1e6  # as plumes.Gaussian's wind
SPEED = 1e9  # |u|, |v|, centre_rel_diff_scale (length / time)
DIFFUSIVITY = 1e12  # k_x, k_y (length^2 / time)
NOISE = 1e6  # noise_gain, noise_damp, noise_bandwidth
LENGTH = 1e15  # region coordinates (length): their differences stay exact enough
MIN_SIDE = 1e-30  # the region's sides (length): squares of the wind grid's spacing stay normal
AMOUNT = (1e-30, 1e30)  # puff_init_rad, puff_mol_amount, conc_scale
MAX_DT = 1e6  # time per step: r^2 and z stay finite over 2**31 steps
MAX_SPIN_UP = 10**6  # each reset runs them (a larger number reads as a hang)
MEANDER_SIGMAS = 3.0


def check_wind_fields(wind) -> None:
    """Each field of a ``plumes.Wind`` alone (``ValidationError`` naming ``Wind.field``)."""
    for name in ("u", "v"):
        check_real("Wind", name, getattr(wind, name), -SPEED, SPEED)
    for name in ("k_x", "k_y"):
        check_real("Wind", name, getattr(wind, name), 0.0, DIFFUSIVITY)
    for name in ("noise_gain", "noise_damp", "noise_bandwidth"):
        check_real("Wind", name, getattr(wind, name), 0.0, NOISE)


def _culprit(candidates) -> tuple:
    """``("Owner.field", value)`` of the first ``(owner, config, field)`` whose value is not its
    class's default (the one the caller changed, to name in the message), else of the first."""
    for owner, config, name in candidates:
        if getattr(config, name) != type(config).__dataclass_fields__[name].default:
            return f"{owner}.{name}", getattr(config, name)
    owner, config, name = candidates[0]
    return f"{owner}.{name}", getattr(config, name)


def check_amounts(puffs) -> None:
    """The largest concentration a ``Puffs`` can give stays below ``MAX_CONCENTRATION``."""
    factors = {"max_num_puffs": math.log10(puffs.max_num_puffs), "puff_mol_amount": math.log10(puffs.puff_mol_amount),
               "conc_scale": math.log10(puffs.conc_scale), "puff_init_rad": -3.0 * math.log10(puffs.puff_init_rad)}
    log10 = sum(factors.values()) - 0.5 * math.log10(8.0 * math.pi ** 3)
    if log10 > math.log10(MAX_CONCENTRATION):
        biggest = sorted(factors, key=factors.get, reverse=True)
        name, value = _culprit([("Puffs", puffs, field) for field in biggest])
        raise ValidationError(
            f"{name}: got {value:g} (puff_mol_amount={puffs.puff_mol_amount:g}, conc_scale={puffs.conc_scale:g}, "
            f"puff_init_rad={puffs.puff_init_rad:g}, max_num_puffs={puffs.max_num_puffs}): the largest concentration, "
            f"max_num_puffs * puff_mol_amount * conc_scale / (sqrt(8 pi^3) puff_init_rad^3), is 1e{log10:.1f}; "
            f"expected at most {MAX_CONCENTRATION:g} (observations are float32)")


def meander_std(wind) -> float:
    """Stationary standard deviation (length / time) of the corner velocities' coloured noise,
    ``x'' + 2 damp bw x' + bw^2 x = gain bw^2 w``: ``gain sqrt(bw / (4 damp))`` (inf undamped)."""
    if wind.noise_gain == 0.0 or wind.noise_bandwidth == 0.0:
        return 0.0
    if wind.noise_damp == 0.0:
        return math.inf
    return wind.noise_gain * math.sqrt(wind.noise_bandwidth / (4.0 * wind.noise_damp))


def check_meander(puffs) -> None:
    """pompy's explicit wind updates stay bounded for the ``plumes.Wind`` of ``puffs``."""
    wind, dt = puffs.wind, puffs.dt
    (x0, x1), (y0, y1) = puffs.region
    dx = (x1 - x0) / (wind.grid[0] - 1)
    dy = (y1 - y0) / (wind.grid[1] - 1)
    diffusion = dt * (wind.k_x / dx ** 2 + wind.k_y / dy ** 2)
    if diffusion > 1.0:
        name, value = _culprit([("Puffs", puffs, "dt"), ("Wind", wind, "k_x"), ("Wind", wind, "k_y"),
                                ("Wind", wind, "grid"), ("Puffs", puffs, "region")])
        raise ValidationError(
            f"{name}: got {value}; the wind's explicit diffusion update needs dt * (k_x / dx^2 + k_y / dy^2) <= 1 "
            f"(here {diffusion:.3g}): use a smaller dt, smaller diffusivities or a coarser wind grid")
    if meander_std(wind) == 0.0:
        return  # no noise: the wind stays uniform at its mean, exactly
    bw, damp = wind.noise_bandwidth, wind.noise_damp
    step = np.array([[1.0, dt], [-bw * bw * dt, 1.0 - 2.0 * damp * bw * dt]])
    radius = float(np.abs(np.linalg.eigvals(step)).max())
    if not radius <= 1.0 + 1e-12:
        name, value = _culprit([("Wind", wind, "noise_damp"), ("Wind", wind, "noise_bandwidth"), ("Puffs", puffs, "dt")])
        raise ValidationError(
            f"{name}: got {value} (noise_damp={damp:g}, noise_bandwidth={bw:g}, dt={dt:g}): the coloured noise's "
            f"explicit update grows without bound (spectral radius {radius:.15g} > 1); expected noise_bandwidth * dt "
            f"<= 2 * noise_damp (a smaller dt or bandwidth, or more damping)")
    spread = MEANDER_SIGMAS * meander_std(wind)
    ux, uy = abs(wind.u) + spread, abs(wind.v) + spread
    cx, cy = ux * dt / dx, uy * dt / dy
    kx, ky = 0.5 * wind.k_x * dt / dx ** 2, 0.5 * wind.k_y * dt / dy ** 2
    peclet = (cx * cx / kx if kx > 0 else math.inf) + (cy * cy / ky if ky > 0 else math.inf)
    if not peclet <= 2.0:
        name, value = _culprit([("Wind", wind, f) for f in ("noise_gain", "k_x", "k_y", "u", "v", "noise_bandwidth",
                                                             "noise_damp", "grid")]
                               + [("Puffs", puffs, "dt"), ("Puffs", puffs, "region")])
        raise ValidationError(
            f"{name}: got {value}; the wind (its mean plus {MEANDER_SIGMAS:g} standard deviations of the meander: "
            f"{ux:.3g}, {uy:.3g}) outruns the diffusion of pompy's explicit update: c_x^2 / d_x + c_y^2 / d_y = "
            f"{peclet:.3g} (c = U dt / dx, d = k dt / (2 dx^2)); expected at most 2: less noise or a smaller dt, "
            f"larger k_x and k_y, or a coarser wind grid")


def check_on_grid(puffs, cell: float) -> None:
    """The wind an agent reads, in cells per step, stays within ``MAX_CELLS_PER_STEP``."""
    if hasattr(puffs.wind, "u"):
        u, v = puffs.wind.u, puffs.wind.v
        # a meander within its diffusion bound moves at most a wind-grid spacing per step
        (x0, x1), (y0, y1) = puffs.region
        reach = max(abs(u) * puffs.dt, abs(v) * puffs.dt)
        if meander_std(puffs.wind) > 0.0:
            reach = max(reach, (x1 - x0) / (puffs.wind.grid[0] - 1), (y1 - y0) / (puffs.wind.grid[1] - 1))
    else:
        reach = max(abs(puffs.wind[0]), abs(puffs.wind[1])) * puffs.dt
    if reach / cell > MAX_CELLS_PER_STEP:
        raise ValidationError(
            f"Puffs.{'cell_size' if puffs.cell_size is not None else 'region'}: cells of {cell:g} with dt={puffs.dt:g}: the wind reads up to {reach / cell:.3g} cells "
            f"per step; expected at most {MAX_CELLS_PER_STEP:g} (a larger cell_size, a smaller dt or less wind)")


# ---------------------------------------------------------------------------------------------
# The ranges of the state arrays (``Puffs.state_spec``, ``Puffs.check_state``): what the compiled
# functions need to stay inside their arrays and give finite numbers. A state the model reaches by
# stepping is always inside them (the meander's bounds are far out in its tails).

MEANDER_LIMIT = 20.0  # standard deviations of the meander a restored wind may hold
HUGE = 1e100  # |z| and r^2 of a puff: their squares and products stay finite


def wind_limit(puffs) -> float:
    """The largest |u|, |v| (length / time) at a wind grid point, and of the filter's velocity."""
    if hasattr(puffs.wind, "u"):
        mean = max(abs(puffs.wind.u), abs(puffs.wind.v))
        return mean + MEANDER_LIMIT * meander_std(puffs.wind)
    return max(abs(puffs.wind[0]), abs(puffs.wind[1]))


def state_ranges(puffs, kinds: dict) -> dict:
    """``{name: (low, high, integral)}`` of each of the arrays ``kinds`` names (``physics.world_arrays``)."""
    from . import physics as K

    cap = puffs.max_num_puffs
    (x0, x1), (y0, y1) = puffs.region
    extent = np.array([x1 - x0, y1 - y0])
    speed = wind_limit(puffs)
    noise = 0.0 if speed == 0.0 or not hasattr(puffs.wind, "noise_gain") else 2.0 * MEANDER_LIMIT * meander_std(puffs.wind) * max(1.0, puffs.wind.noise_bandwidth)
    coef = speed
    if "coef" in kinds and kinds["coef"][1][1] > 1:  # a spline: coefficients of the interpolating cubic
        nx, ny = puffs.wind.grid
        norm = lambda n: float(np.abs(K.inverse_collocation(n)).sum(axis=1).max())  # noqa: E731
        coef = speed * norm(nx) * norm(ny)
    slack = 1.0 + 1e-9
    return {
        "puffs": (-HUGE, HUGE, False), "n_live": (0, cap, False), "clock": (0, 2**62, False), "key": (None, None, False),
        "wind": (-speed * slack, speed * slack, False), "wind_rate": (None, None, False),
        "noise": (-noise * slack, noise * slack, False), "draws": (None, None, False), "vel": (None, None, False),
        "sorted": (-HUGE, HUGE, False), "bin_start": (0, cap, False), "bin_dims": (1, K.BIN_CAP, False),
        "bin_size": (tuple(extent / K.BIN_CAP / slack), tuple(extent * slack), False),
        "coef": (-coef * slack, coef * slack, False),
        # the sources (region coordinates), which were found, their motions' own numbers, the
        # wind regime's turn and switch clock (plume_multi.sources, puffs/regimes.py)
        "source": (None, None, False), "found": (None, None, False), "motion": (None, None, False),
        "turn": (None, None, False), "next_switch": (None, None, False), "switches": (0, 2**62, False),
        "regime_key": (None, None, False),
    }


def state_problems(puffs, arrays: dict) -> list:
    """``(name, what)`` for the live puffs, their sorted copy and the bins that index it: what
    ``Puffs.check_state`` reports (every array is in its own range already)."""
    out = []
    n_live = arrays["n_live"]
    slots = arrays["puffs"].shape[1]
    live = np.arange(slots)[None, :] < n_live[:, None]  # (B, P)
    (x0, x1), (y0, y1) = puffs.region
    puff = arrays["puffs"]
    r0_sq = puffs.puff_init_rad ** 2

    def report(name, bad, what):
        worlds = np.flatnonzero(bad)
        if worlds.size:
            out.append((name, f"{worlds.size} worlds with {what} (first: world {worlds[0]})"))

    outside = (puff[..., 0] < x0) | (puff[..., 0] > x1) | (puff[..., 1] < y0) | (puff[..., 1] > y1)
    report("puffs", (live & outside).any(axis=1), f"live puffs outside the region {puffs.region}")
    report("puffs", (live & (puff[..., 3] < r0_sq / 1.000001)).any(axis=1),
           f"live puffs of r^2 below puff_init_rad^2 = {r0_sq:g}")
    srt = arrays["sorted"]
    amp = puffs.puff_mol_amount / math.sqrt(8.0 * math.pi ** 3) * puffs.conc_scale / r0_sq ** 1.5
    report("sorted", (live & ((srt[..., 2] < 0) | (srt[..., 2] > amp * 1.000001))).any(axis=1),
           f"live amplitudes outside [0, {amp:g}] (a puff of radius puff_init_rad at height 0)")
    report("sorted", (live & ((srt[..., 3] >= 0) | (srt[..., 3] < -1.000001 / (2.0 * r0_sq)))).any(axis=1),
           f"live exponents -1 / (2 r^2) outside [{-1.0 / (2.0 * r0_sq):g}, 0)")
    if getattr(puffs.wind, "regime", "constant") in ("constant", "sparse"):
        # a wind that never turns: the regime's state stays as its reset left it (the kernels of such
        # a plume do not read it: physics.py's flags)
        turn = arrays["turn"]
        report("turn", (turn[:, 0] != 0.0) | (turn[:, 1] != 1.0) | (turn[:, 2] != 0.0),
               f"a turn, which the wind's regime {getattr(puffs.wind, 'regime', 'constant')!r} never makes "
               "(expected [0, 1, 0]: 0 degrees, its cosine and sine)")
        report("next_switch", arrays["next_switch"] != -1,
               "a switch due, which the wind's regime never makes (expected -1)")
    dims = arrays["bin_dims"]
    start = arrays["bin_start"]
    bins = dims[:, 0] * dims[:, 1]
    k = np.arange(start.shape[1])[None, :]
    used = k <= bins[:, None]
    falls = np.zeros_like(used)
    falls[:, 1:] = used[:, 1:] & (start[:, 1:] < start[:, :-1])
    last = start[np.arange(len(bins)), bins]
    report("bin_start", (start[:, 0] != 0) | falls.any(axis=1) | (last != n_live),
           "bins that do not start at 0, go down, or do not end at n_live (Puffs.n_live) after the "
           "bin_dims[0] * bin_dims[1] bins (Puffs.bin_dims)")
    return out
