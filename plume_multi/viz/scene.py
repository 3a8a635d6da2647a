"""What a picture of one world shows, read from a ``Simulator``: the keywords of ``render_frame``.

``world_overlays(sim, b)`` gives the world's current plume image (a movie's frame of that world),
its sources where they are now, its walls, the agents' headings when the body has one, the antenna
sample points when the scenario has a ``sensors.Antennae``, and the plume's wind at the source. The recorder and every front-end's
``render()`` use it, so all pictures show the same things.
"""

from __future__ import annotations


import numpy as np

__all__ = ["world_overlays", "agent_headings", "antenna_points", "wind_at_source", "has_wind"]


def agent_headings(sim, world: int):
    """``(N,)`` float64 degrees of world ``world``'s agents, or None when the body has no heading."""
    if not sim.scenario.action_model.oriented:
        return None
    n = sim.n_agents
    return np.array(sim.model_state("body.heading")[world * n:(world + 1) * n], dtype=np.float64)


def _locations(sim, world: int) -> np.ndarray:
    """``(N, 2)`` float64 positions (float for continuous bodies, the cell otherwise)."""
    n = sim.n_agents
    rows = slice(world * n, (world + 1) * n)
    if sim.scenario.continuous:
        return np.array(sim.model_state("body.xy")[rows], dtype=np.float64)
    return sim.positions[rows].astype(np.float64)


def antenna_points(sim, world: int):
    """``(N, K, 2)`` float64 ``(x, y)`` where the scenario's ``Antennae`` sample (all of them, in
    sensor order), or None without one. As the sensor: ``distance`` cells from the agent along
    ``heading + angle`` (heading 0 for bodies without one)."""
    from ..models.sensors import Antennae

    antennae = [s for s in sim.scenario.sensors if isinstance(s, Antennae)]
    if not antennae:
        return None
    loc = _locations(sim, world)
    heading = agent_headings(sim, world)
    if heading is None:
        heading = np.zeros(len(loc))
    out = []
    for sensor in antennae:
        rad = np.deg2rad(heading[:, None] + np.asarray(sensor.angles)[None, :])
        out.append(np.stack([loc[:, :1] + sensor.distance * np.cos(rad),
                             loc[:, 1:] + sensor.distance * np.sin(rad)], axis=-1))
    return np.concatenate(out, axis=1)


def wind_at_source(sim, world: int) -> tuple:
    """``(u, v)`` of the plume's wind at world ``world``'s source now (the plume model's own
    ``wind_at``, so a movie's wind follows its frame)."""
    plume = sim.scenario.plume
    kernels = plume.kernels
    params = sim._params["plume"]
    state = sim._model_state(sim.state, "plume")
    t = int(sim.state.world_t[world])
    pw = kernels.view(params, state, world, t)
    sx, sy = sim.sources[world]
    u, v = kernels.wind_at(params, state, pw, (float(sx), float(sy)))
    return float(u), float(v)


def has_wind(scenario) -> bool:
    """True when the scenario's plume has a wind somewhere, or an agent senses it (then a picture
    shows the wind arrow; a calm plume nobody senses gets none, as before)."""
    from ..models.plumes import Wind as MeanderingWind
    from ..models.sensors import Wind

    plume = scenario.plume
    wind = getattr(plume, "_wind", getattr(plume, "wind", None))
    if isinstance(wind, MeanderingWind):  # the puffs' wind model: its mean, or its noise
        wind = (wind.u, wind.v, wind.noise_gain)
    return bool(any(isinstance(s, Wind) for s in scenario.sensors)
                or (wind is not None and np.any(np.asarray(wind, dtype=np.float64) != 0)))


def world_overlays(sim, world: int = 0) -> dict:
    """``render_frame`` keywords for world ``world`` of ``sim``: ``field`` (its current plume image,
    ``(H, W)`` float32), ``source`` (its cell now; a tuple of cells for a plume of several sources), ``headings`` (``(N,)`` degrees or None), ``points`` (``(N, K, 2)`` antenna
    points or None), ``wind`` (``(u, v)`` at the source, or None when ``has_wind`` is False) and
    ``walls`` (the world's ``(H, W)`` wall mask, or None without walls).
    A 3-D world: ``field`` is its ``(D, H, W)`` volume, ``source`` ``(x, y, z)``, ``walls`` its
    ``(D, H, W)`` mask, the others None (``plume_multi.viz.volume`` draws it)."""
    walls = sim.wall_mask(world)
    if sim.scenario.plume.source_count() > 1:  # every source, where it is now
        source = tuple(tuple(int(round(float(c))) for c in xy) for xy in sim.source_positions[world])
    else:
        source = tuple(int(round(float(c))) for c in sim.sources[world])
    if sim.scenario.dims == 3:
        return {"field": sim.plume_image(world), "source": source, "headings": None, "points": None, "wind": None,
                "walls": walls}
    return {"field": sim.plume_image(world), "source": source, "headings": agent_headings(sim, world),
            "points": antenna_points(sim, world),
            "wind": wind_at_source(sim, world) if has_wind(sim.scenario) else None, "walls": walls}
