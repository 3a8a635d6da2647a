"""The puff plume (``plumes.Puffs``) beside pompy doing the same work, in the same process.

Table 1, per world-step: the wind update, the plume update (release, move, spread, remove) of
~1000 live puffs, and the concentration at 16 agents. pompy (its ``WindModel.update``,
``PlumeModel.update`` and ``ConcentrationValueCalculator.calc_conc_list`` over all puffs) starts
from exactly our world's state (wind grid, noise filters, puffs), copied into it.

* ours, 1 world: ``PuffPlume(num_worlds=1).step_and_sample`` (one thread);
* the same with ``Wind(interpolation="spline")``, pompy's bicubic spline (pompy interpolates
  this way; the default bilinear interpolation is cheaper);
* ours, 256 worlds: the same call over 256 worlds (a ``prange`` over worlds on Numba's default
  thread count), its time divided by 256;
* ours with a wind that changes (``Wind(regime="switch-many")``, a switch every 0.3 s here) and
  with three sources sharing the release rate (the same ~1000 live puffs): what turning the wind
  and releasing from several points cost.

Table 2: 256 worlds x 16 agents with ~1000 live puffs each, in agent-steps/s, and how the cost
per world-step grows with the number of live puffs (at 16 agents) and of agents (at ~1000 puffs).

Table 3: the same plume inside the engine, ``Simulator.step`` (moves, sensing, rewards included).

Every world starts from one spun-up plume (copied; the worlds then diverge, each on its own
stream), so that timing starts with a developed plume without spinning up every world.

Usage::

    python benchmarks/puffs.py            # full run (~1 minute)
    python benchmarks/puffs.py --quick    # tiny run, for the tests
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numba
import numpy as np

from plume_multi.models.plumes.puffs import physics as K
from plume_multi.models.plumes import PuffPlume, Puffs, Wind

GRID = (200, 100)  # cells of 0.25 over pompy's default region (50 x 25)
RATE = 25.0  # puffs per unit time: ~1000 live puffs in the default region and wind


def _config(max_puffs: int, interpolation: str = "bilinear", regime: str = "constant", source=(10, 50)) -> Puffs:
    wind = Wind(interpolation=interpolation, regime=regime, switch_every=0.3, switch_jitter=0.03)
    return Puffs(source=source, wind=wind, puff_release_rate=RATE * max_puffs / 1000 / (1 if len(source) == 2 else 3),
                 max_num_puffs=max_puffs, init_num_puffs=10)


def _spun_up(config: Puffs, worlds: int, spin_steps: int, parallel=None) -> PuffPlume:
    """``worlds`` copies of one world advanced ``spin_steps`` steps (world b keeps its own key)."""
    one = PuffPlume(config, GRID, num_worlds=1)
    one.reset(seed=0)
    for _ in range(spin_steps):
        one.step()
    plume = PuffPlume(config, GRID, num_worlds=worlds, parallel=parallel)
    plume.reset(seed=1)
    for name in ("puffs", "n_live", "clock", "wind", "noise", "turn", "next_switch", "switches"):
        getattr(plume.state, name)[:] = getattr(one.state, name)[0]
    return plume


def _agents(n: int, worlds: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform([0, 0], [GRID[0] - 1, GRID[1] - 1], (worlds, n, 2))


def _time(fn, repeats: int, calls: int) -> float:
    """Median seconds per call over ``repeats`` blocks of ``calls`` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def _pompy_from(plume: PuffPlume):
    """pompy's models holding world 0's exact state."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "models" / "plumes"))
    from pompy_reference import pm, pompy_models

    wind, model = pompy_models(plume.config, GRID, seed=("numpy", 0))
    st = plume.state
    wind._u[...] = st.wind[0, 0]
    wind._v[...] = st.wind[0, 1]
    wind._interp_set = False
    wind.noise_gen.state[...] = st.noise[0]
    model.puffs = [pm.Puff(*row) for row in plume.puffs(0)]
    return wind, model


def table_one(quick: bool) -> list[tuple]:
    import pompy.processors as pp

    cap = 200 if quick else 1000
    config = _config(cap)
    spin = 300 if quick else 6000
    one = _spun_up(config, 1, spin)
    many = _spun_up(config, 16 if quick else 256, spin)
    cells1 = _agents(16, 1)
    cellsb = _agents(16, many.num_worlds)
    wind, model = _pompy_from(one)
    calc = pp.ConcentrationValueCalculator(1.0)
    p = one.params
    xs = p.x_min + (cells1[0, :, 0] + 0.5) * p.cell
    ys = p.y_min + (cells1[0, :, 1] + 0.5) * p.cell

    def pompy_step():
        wind.update(config.dt)
        model.update(config.dt)
        calc.calc_conc_list(model.puff_array, xs, ys, 0.0)

    # live puffs: the mean over the timed steps
    live_pompy = []
    t_pompy = _time(lambda: (pompy_step(), live_pompy.append(len(model.puffs))), 3, 2 if quick else 20)
    live_one = []
    t_one = _time(lambda: (one.step_and_sample(cells1), live_one.append(one.state.n_live[0])), 3, 20 if quick else 2000)
    spline = _spun_up(_config(cap, "spline"), 1, spin)
    live_spline = []
    t_spline = _time(lambda: (spline.step_and_sample(cells1), live_spline.append(spline.state.n_live[0])),
                     3, 20 if quick else 2000)
    extra = []
    for label, variant in (("ours, switch-many wind, 1 world", _config(cap, regime="switch-many")),
                           ("ours, 3 sources, 1 world", _config(cap, source=[(10, 50), (10, 30), (10, 70)]))):
        plume = _spun_up(variant, 1, spin)
        live = []
        t = _time(lambda: (plume.step_and_sample(cells1), live.append(plume.state.n_live[0])), 3, 20 if quick else 2000)
        extra.append((label, 1, np.mean(live), t, t_pompy / t))
    live_many = []
    t_many = _time(lambda: (many.step_and_sample(cellsb), live_many.append(many.state.n_live.mean())),
                   3, 2 if quick else 40) / many.num_worlds
    return [
        ("pompy 0.1.1 (NumPy/SciPy)", 1, np.mean(live_pompy), t_pompy, 1.0),
        ("ours, 1 world, 1 thread", 1, np.mean(live_one), t_one, t_pompy / t_one),
        ("ours, spline wind, 1 world", 1, np.mean(live_spline), t_spline, t_pompy / t_spline),
        (f"ours, {many.num_worlds} worlds, {numba.get_num_threads()} threads", many.num_worlds,
         np.mean(live_many), t_many, t_pompy / t_many),
        *extra,
    ]


def table_two(quick: bool) -> list[tuple]:
    """Rows ``(what varies, live puffs, agents, worlds, seconds per call)``."""
    worlds = 8 if quick else 256
    rows = []
    caps = (50, 100) if quick else (250, 500, 1000, 2000)
    agent_counts = (4, 16) if quick else (16, 64, 256)
    for cap in caps:
        plume = _spun_up(_config(cap), worlds, 300 if quick else 6000)  # every cap is reached by then
        cells = _agents(16, worlds)
        plume.step_and_sample(cells)
        t = _time(lambda: plume.step_and_sample(cells), 3, 2 if quick else 20)
        rows.append(("puffs", plume.state.n_live.mean(), 16, worlds, t))
    plume = _spun_up(_config(caps[-2] if not quick else caps[-1]), worlds, 300 if quick else 6000)
    for n in agent_counts:
        cells = _agents(n, worlds)
        plume.step_and_sample(cells)
        t = _time(lambda: plume.step_and_sample(cells), 3, 2 if quick else 20)
        rows.append(("agents", plume.state.n_live.mean(), n, worlds, t))
    return rows


def engine_rows(quick: bool) -> list[tuple]:
    """``Simulator.step`` with the puff plume (cardinal moves, concentration + position sensors):
    rows ``(worlds, agents, live puffs, seconds per step)``."""
    from plume_multi import Scenario, Simulator

    cap = 200 if quick else 1000
    config = _config(cap)
    one = _spun_up(config, 1, 300 if quick else 6000)
    rows = []
    for worlds, agents in ((8, 4),) if quick else ((256, 16), (64, 64)):
        sim = Simulator(Scenario(grid_size=GRID, plume=config, n_agents=agents, max_steps=10**6), num_worlds=worlds)
        sim.reset(seed=0)
        for name in K.world_arrays(config.max_num_puffs, *config.wind_grid(), config.spline):
            sim.state.models[f"plume.{name}"][:] = getattr(one.state, name)[0]  # a developed plume in every world
        rng = np.random.default_rng(0)
        actions = [rng.integers(0, 4, sim.total_agents) for _ in range(8)]
        sim.step(actions[0])
        k = iter(range(10**9))
        t = _time(lambda: sim.step(actions[next(k) & 7]), 3, 2 if quick else 20)
        rows.append((worlds, agents, float(sim.state.models["plume.n_live"].mean()), t))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny run (for the tests)")
    args = parser.parse_args(argv)

    print(f"Numba threads: {numba.get_num_threads()} (the default on this machine)\n")
    print("Per world-step: wind + plume update + concentration at 16 agents")
    print(f"{'implementation':<32}  {'worlds':>6}  {'live puffs':>10}  {'us / world-step':>15}  {'vs pompy':>8}")
    for label, worlds, live, t, ratio in table_one(args.quick):
        print(f"{label:<32}  {worlds:>6}  {live:>10.0f}  {t * 1e6:>15.1f}  {ratio:>7.0f}x")

    print("\nScaling: all worlds in one step_and_sample call (prange over worlds)")
    print(f"{'varied':<6}  {'live puffs':>10}  {'agents':>6}  {'worlds':>6}  {'ms / call':>9}  {'us / world-step':>15}  {'agent-steps/s':>13}")
    for varied, live, n, worlds, t in table_two(args.quick):
        print(f"{varied:<6}  {live:>10.0f}  {n:>6}  {worlds:>6}  {t * 1e3:>9.2f}  {t / worlds * 1e6:>15.1f}  {n * worlds / t / 1e6:>11.2f} M")

    print("\nIn the engine: Simulator.step (cardinal moves, concentration + position sensors)")
    print(f"{'worlds':>6}  {'agents':>6}  {'live puffs':>10}  {'ms / step':>9}  {'us / world-step':>15}  {'agent-steps/s':>13}")
    for worlds, n, live, t in engine_rows(args.quick):
        print(f"{worlds:>6}  {n:>6}  {live:>10.0f}  {t * 1e3:>9.2f}  {t / worlds * 1e6:>15.1f}  {n * worlds / t / 1e6:>11.2f} M")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
