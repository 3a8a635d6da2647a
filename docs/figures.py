"""The pictures of the model pages, drawn from the package's own models.

`mkdocs build` draws them (docs/hooks/figures.py) and serves each as ``figures/<family>/<Model>.png``,
so a picture always shows the models of the code it documents. To look at them without the site:

    python docs/figures.py OUT_FOLDER            # every picture, as PNG files
    python docs/figures.py OUT_FOLDER Gaussian   # the ones whose name contains "Gaussian"

A model's section on its family's page shows its picture (``![...](../figures/plumes/Gaussian.png)``).
Adding one: a function that draws on a matplotlib ``Figure``, registered with ``@figure("family",
"Model")``. Numbers come from the models themselves (fields, move tables, likelihoods,
parameters), never from a run of the compiled step: drawing every picture takes a few seconds
(the only compiled code it calls is two small functions of ``Oriented``'s move table).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Callable

import numpy as np

import matplotlib

matplotlib.use("Agg")  # the build has no display
from matplotlib.figure import Figure  # noqa: E402  (after choosing the backend)
from matplotlib.patches import Arc, Circle, FancyArrowPatch, Rectangle  # noqa: E402

from plume_multi import bodies, plumes, rewards, sensors, sources  # noqa: E402
from plume_multi.models.bodies.oriented import grid_step  # noqa: E402

FIGURES: dict[str, tuple[Callable[[Figure], None], tuple[float, float]]] = {}
DPI = 90
SOURCE = dict(marker="*", color="#e8282a", markersize=13, markeredgecolor="white", linestyle="none")
AGENT = dict(marker="s", color="#ffb000", markersize=8, markeredgecolor="black", linestyle="none")


def figure(family: str, model: str, size: tuple[float, float] = (7.0, 2.7)):
    """Register a drawing as the picture of ``family``'s ``model`` (``figures/<family>/<model>.png``)."""

    def register(draw: Callable[[Figure], None]):
        FIGURES[f"{family}/{model}"] = (draw, size)
        return draw

    return register


def render(name: str) -> bytes:
    """The PNG of one registered picture."""
    draw, size = FIGURES[name]
    fig = Figure(figsize=size, dpi=DPI, layout="constrained")
    draw(fig)
    out = io.BytesIO()
    fig.savefig(out, format="png", metadata={"Software": None})
    return out.getvalue()


def render_all(only: str = "") -> dict[str, bytes]:
    """``{"figures/<family>/<Model>.png": png}`` for every registered picture whose name contains ``only``."""
    return {f"figures/{name}.png": render(name) for name in FIGURES if only in name}


# ------------------------------------------------------------------------------------ helpers
def _field_axes(ax, field, title=None, vmax=1.0):
    h, w = field.shape
    ax.imshow(field, origin="lower", cmap="viridis", vmin=0.0, vmax=vmax, extent=(-0.5, w - 0.5, -0.5, h - 0.5))
    ax.set_xlabel("x (cells)")
    ax.set_ylabel("y (cells)")
    if title:
        ax.set_title(title, fontsize=10)


def _arrow(ax, start, end, colour="black", width=1.6, label=None, style="-|>", **text):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=12, color=colour, linewidth=width))
    if label is not None:
        ax.text(*end, label, **{"fontsize": 9, "ha": "center", "va": "center", **text})


def _grid_axes(ax, half=2, title=None):
    for v in np.arange(-half - 0.5, half + 1.0):
        ax.axhline(v, color="#cccccc", linewidth=0.8)
        ax.axvline(v, color="#cccccc", linewidth=0.8)
    ax.set_xlim(-half - 0.5, half + 0.5)
    ax.set_ylim(-half - 0.5, half + 0.5)
    ax.set_aspect("equal")
    ax.set_xticks(range(-half, half + 1))
    ax.set_yticks(range(-half, half + 1))
    ax.set_xlabel("dx (cells)")
    ax.set_ylabel("dy (cells)")
    if title:
        ax.set_title(title, fontsize=10)


def _grid_step(heading: float, step: int) -> tuple[int, int]:
    """``Oriented``'s (and ``RunTumble``'s) forward move of ``step`` cells along ``heading``: the
    package's own compiled function, called from Python."""
    dx, dy = grid_step(float(heading), int(step))
    return int(dx), int(dy)


def _gaussian(grid=(64, 48), source=(20, 30), sigma=8.0):
    plume = plumes.Gaussian(source=source, sigma=sigma)
    return plume, plume.field(grid)


# ------------------------------------------------------------------------------------ plumes
@figure("plumes", "Gaussian")
def draw_gaussian(fig):
    plume, field = _gaussian()
    left, right = fig.subplots(1, 2, width_ratios=(1.3, 1))
    _field_axes(left, field, "Gaussian(source=(20, 30), sigma=8) on 64 x 48")
    left.plot(*plume.source, **SOURCE)
    for k in (1, 2):
        left.add_patch(Circle(plume.source, k * plume.sigma, fill=False, color="white", linestyle="--", linewidth=0.9))
    d = np.linspace(0, 3.5, 200)
    right.plot(d, np.exp(-d ** 2 / 2), color="#1f77b4")
    for k in (1, 2):
        right.plot(k, np.exp(-k ** 2 / 2), "o", color="black", markersize=4)
        right.annotate(f"{np.exp(-k ** 2 / 2):.2f} at {k} sigma", (k, np.exp(-k ** 2 / 2)), xytext=(6, 6),
                       textcoords="offset points", fontsize=8)
    right.set_xlabel("distance from the source / sigma")
    right.set_ylabel("C")
    right.set_title("profile through the source", fontsize=10)


def demo_recording(T=40, width=64, height=48) -> np.ndarray:
    """A small recording ``(T, H, W)`` uint8: a meandering filament drifting in +x."""
    t = np.arange(T)[:, None, None]
    y = np.arange(height)[None, :, None]
    x = np.arange(width)[None, None, :]
    centre = height / 2 + 6 * np.sin(2 * np.pi * (x / 40.0 - t / T))
    spread = 1.5 + 0.08 * x
    c = np.exp(-((y - centre) ** 2) / (2 * spread ** 2)) * np.exp(-x / 90.0)
    c *= 0.6 + 0.4 * np.cos(2 * np.pi * (x / 12.0 - 2 * t / T)) ** 2   # patchy along the filament
    return np.round(255 * c).astype(np.uint8)


@figure("plumes", "WindyPoissonHits", size=(7.6, 2.7))
def draw_windy_poisson_hits(fig):
    left, right = fig.subplots(1, 2)
    model = plumes.WindyPoissonHits(R_bar=2.5)
    h, w = model.shape
    x0, y0 = model.start
    # the mean hits an agent at the start receives from a source at each cell (the table holds them
    # by the agent's offset from the source: [y0 - sy + H-1, x0 - sx + W-1])
    mean = model.centred_mean_hits[y0:y0 + h, x0:x0 + w][::-1, ::-1]
    image = left.imshow(np.log10(np.maximum(mean, 1e-6)), origin="lower", cmap="magma", vmin=-6,
                        extent=(-0.5, w - 0.5, -0.5, h - 0.5))
    left.plot(x0, y0, **AGENT)
    left.set_xlabel("source x (wind blows to +x)")
    left.set_ylabel("source y")
    left.set_title("log10 mean hits at the start", fontsize=10)
    fig.colorbar(image, ax=left, fraction=0.046)
    prior = model.initial_belief(1)
    image = right.imshow(prior, origin="lower", cmap="viridis", extent=(-0.5, w - 0.5, -0.5, h - 0.5))
    right.plot(x0, y0, **AGENT)
    right.set_xlabel("x")
    right.set_title("belief after the first hit", fontsize=10)
    fig.colorbar(image, ax=right, fraction=0.046)


@figure("plumes", "Movie", size=(7.0, 2.3))
def draw_movie(fig):
    movie = plumes.Movie(demo_recording(), source=(0, 24), start=0)
    axes = fig.subplots(1, 3, sharey=True)
    for ax, frame in zip(axes, (0, 10, 20)):
        _field_axes(ax, movie.frames[frame] / 255.0, f"frame {frame} (uint8 / 255)")
        ax.plot(*movie.source, **SOURCE)
        if ax is not axes[0]:
            ax.set_ylabel("")
    fig.suptitle("a world that started on frame 0 shows frame k after k steps", fontsize=9)


@figure("plumes", "MovieVolumes", size=(7.0, 2.3))
def draw_movie_volumes(fig):
    from plume_multi.tasks.families.recorded import synthetic_volumes

    movie = plumes.Movie(synthetic_volumes(), source=(4.0, 6.0, 2.0), start=0)
    volume = movie.frames[0] / 255.0 if movie.frames.dtype == np.uint8 else movie.frames[0]  # (D, H, W)
    x, y, z = (int(round(c)) for c in movie.source)
    axes = fig.subplots(1, 3)
    for ax, plane, title, point in ((axes[0], volume[z], f"z = {z} (x, y)", (x, y)),
                                    (axes[1], volume[:, y, :], f"y = {y} (x, z)", (x, z)),
                                    (axes[2], volume[:, :, x], f"x = {x} (y, z)", (y, z))):
        _field_axes(ax, plane, title, vmax=max(float(volume.max()), 1e-9))
        ax.plot(*point, **SOURCE)
    axes[1].set_ylabel("z (cells)")
    axes[2].set_xlabel("y (cells)")
    axes[2].set_ylabel("z (cells)")
    fig.suptitle("a volume (T, D, H, W): frame 0 through the source, three orthogonal slices", fontsize=9)


@figure("plumes", "PoissonHits")
def draw_poisson_hits(fig):
    left, right = fig.subplots(1, 2)
    d = np.linspace(1, 20, 200)
    for L in (1.0, 2.0, 3.0):
        left.semilogy(d, plumes.PoissonHits(L, 2.0).mean_hits(d), label=f"L = {L:g}")
    left.set_xlabel("distance d to the source (cells)")
    left.set_ylabel("mean hits per step")
    left.set_title("R_dt = 2, 2-D", fontsize=10)
    left.legend(fontsize=8)
    model = plumes.PoissonHits(1.0, 2.0)
    p = model.hit_probabilities(d)
    bottom = np.zeros_like(d)
    for h in range(model.n_hits):
        name = f"h = {h}" if h < model.n_hits - 1 else f"h >= {h}"
        right.fill_between(d, bottom, bottom + p[:, h], label=name, alpha=0.85)
        bottom += p[:, h]
    right.set_xlabel("distance d to the source (cells)")
    right.set_ylabel("Pr(h | d)")
    right.set_title(f"hits of L = 1, R_dt = 2 (n_hits = {model.n_hits})", fontsize=10)
    right.set_ylim(0, 1)
    right.legend(fontsize=7, loc="center right")


# ------------------------------------------------------------------------------------ bodies
def _draw_moves(ax, body, title):
    _grid_axes(ax, 1, title)
    ax.plot(0, 0, **AGENT)
    for action, ((dx, dy), name) in enumerate(zip(body.moves(), body.ACTION_NAMES)):
        if dx == 0 and dy == 0:
            ax.add_patch(Circle((0, 0), 0.3, fill=False, color="#1f77b4", linewidth=1.5))
            ax.text(0.32, -0.38, f"{action} {name}", fontsize=7, ha="left")
            continue
        _arrow(ax, (0.12 * dx, 0.12 * dy), (0.8 * dx, 0.8 * dy), "#1f77b4")
        ax.text(dx * 1.0, dy * 1.0 - 0.28, f"{action} {name}", fontsize=7, ha="center")


@figure("bodies", "Cardinal")
def draw_cardinal(fig):
    left, right = fig.subplots(1, 2)
    _draw_moves(left, bodies.Cardinal(), "Cardinal(): Discrete(4)")
    # clamping: RIGHT from the right edge leaves the agent where it is
    right.set_title("moves are clamped into the grid", fontsize=10)
    w, h = 5, 4
    for v in range(w + 1):
        right.axvline(v - 0.5, color="#cccccc", linewidth=0.8)
    for v in range(h + 1):
        right.axhline(v - 0.5, color="#cccccc", linewidth=0.8)
    right.add_patch(Rectangle((-0.5, -0.5), w, h, fill=False, linewidth=2))
    right.plot(w - 1, 1, **AGENT)
    _arrow(right, (w - 1, 1.15), (w - 1, 1.85), "#1f77b4")
    right.text(w - 1.4, 2.0, "0 UP: to (4, 2)", fontsize=8, ha="right", va="center")
    right.annotate("1 RIGHT: stays at (4, 1)", (w - 1, 1), xytext=(-150, -18), textcoords="offset points",
                   fontsize=8, arrowprops=dict(arrowstyle="->"))
    right.set_xlim(-0.5, w + 0.3)
    right.set_ylim(-0.5, h - 0.5)
    right.set_aspect("equal")
    right.set_xlabel("x (cells)")
    right.set_ylabel("y (cells)")


@figure("bodies", "Moore")
def draw_moore(fig):
    ax = fig.subplots()
    _draw_moves(ax, bodies.Moore(), "Moore(): Discrete(9), clockwise from UP, then stay")


@figure("bodies", "Oriented")
def draw_oriented(fig):
    left, right = fig.subplots(1, 2)
    body = bodies.Oriented(turn_degrees=45.0)
    turn = body.turn_degrees
    table = body.params(None)  # the model's own tables: its lattice of headings and their forward moves
    _grid_axes(left, 1, f"turn_degrees={turn:g}: forward from each heading")
    left.plot(0, 0, **AGENT)
    for h, dx, dy in zip(table.heading_table, table.move_x, table.move_y):
        if h != h:  # NaN: an unused slot of the table
            continue
        _arrow(left, (0.15 * np.cos(np.radians(h)), 0.15 * np.sin(np.radians(h))), (0.75 * dx, 0.75 * dy), "#1f77b4")
        left.text(dx, dy + 0.3, f"{h:g}", fontsize=7, ha="center")
    _grid_axes(right, 1, "the actions, from heading 45")
    h = 45.0
    right.plot(0, 0, **AGENT)
    dx, dy = _grid_step(h, 1)
    _arrow(right, (0.12, 0.12), (dx * 0.85, dy * 0.85), "#1f77b4")
    right.text(0.95, 1.3, "0 FORWARD: to (1, 1)", fontsize=7, ha="center", va="center", color="#1f77b4")
    for sign, name, colour, place in ((1, "1 LEFT: heading 90,\nno move", "#2ca02c", (-0.95, 0.95)),
                                      (-1, "2 RIGHT: heading 0,\nno move", "#d62728", (0.95, -0.95))):
        g = h + sign * turn
        _arrow(right, (0.5 * np.cos(np.radians(h)), 0.5 * np.sin(np.radians(h))),
               (0.5 * np.cos(np.radians(g)), 0.5 * np.sin(np.radians(g))), colour, width=1.2,
               style="-|>")
        right.text(*place, name, fontsize=7, ha="center", va="center", color=colour)


@figure("bodies", "RunTumble")
def draw_run_tumble(fig):
    ax = fig.subplots()
    # an illustration of the two actions (headings from NumPy here, from the world's stream in the engine)
    rng = np.random.default_rng(7)
    x, y, h = 0, 0, 30.0
    xs, ys, tumbles = [x], [y], []
    for t in range(48):
        tumble = t % 8 == 7
        if tumble:
            h = rng.uniform(0, 360)
            tumbles.append((x, y))
        dx, dy = _grid_step(h, 1)
        x, y = x + dx, y + dy
        xs.append(x)
        ys.append(y)
    ax.plot(xs, ys, "-o", color="#1f77b4", markersize=3, linewidth=1, label="0 RUN: one step along the heading")
    tx, ty = zip(*tumbles)
    ax.plot(tx, ty, "o", color="#d62728", markersize=7, label="1 TUMBLE: new heading, uniform in [0, 360), then run")
    ax.plot(0, 0, **AGENT)
    ax.set_aspect("equal")
    ax.set_xlabel("x (cells)")
    ax.set_ylabel("y (cells)")
    ax.set_title("RunTumble(step=1): a tumble every 8 steps", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))


@figure("bodies", "Continuous")
def draw_continuous(fig):
    body = bodies.Continuous(max_speed=1.0, max_turn_degrees=30.0)
    ax = fig.subplots()
    x, y, h = 1.0, 1.0, 0.0
    pts = [(x, y)]
    for t in range(24):
        speed = float(np.clip(0.8 + 0.4 * np.sin(t / 3.0), body.low[0], body.high[0]))
        turn = float(np.clip(45 * np.sin(t / 4.0), body.low[1], body.high[1]))  # asked 45, clipped to 30
        h = (h + turn) % 360.0
        x, y = x + speed * np.cos(np.radians(h)), y + speed * np.sin(np.radians(h))
        pts.append((x, y))
    px, py = np.array(pts).T
    for v in np.arange(-0.5, 12):
        ax.axvline(v, color="#eeeeee", linewidth=0.8)
        ax.axhline(v, color="#eeeeee", linewidth=0.8)
    ax.plot(np.round(px), np.round(py), "s", color="#bbbbbb", markersize=9, label="cell: (round(x), round(y))")
    ax.plot(px, py, "-o", color="#1f77b4", markersize=3, linewidth=1, label="float position (x, y)")
    ax.set_aspect("equal")
    ax.set_xlabel("x (cells)")
    ax.set_ylabel("y (cells)")
    ax.set_title("Continuous(max_speed=1, max_turn_degrees=30): turn, then move speed", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))


# ------------------------------------------------------------------------------------ sensors
def _field_with_agent(ax, agent=(34, 22), title=None):
    plume, field = _gaussian()
    _field_axes(ax, field, title)
    ax.plot(*plume.source, **SOURCE)
    ax.plot(*agent, **AGENT)
    return plume, field


@figure("sensors", "Concentration", size=(4.2, 2.7))
def draw_concentration(fig):
    ax = fig.subplots()
    _, field = _field_with_agent(ax, title="Concentration(): C at the agent's cell")
    ax.annotate(f"C = {field[22, 34]:.3f}", (34, 22), xytext=(10, -20), textcoords="offset points", color="white",
                fontsize=9, arrowprops=dict(arrowstyle="->", color="white"))


@figure("sensors", "Position", size=(4.2, 2.7))
def draw_position(fig):
    ax = fig.subplots()
    w, h = 64, 48
    ax.add_patch(Rectangle((0, 0), w - 1, h - 1, fill=False))
    ax.plot(40, 12, **AGENT)
    ax.annotate(f"(40 / {w - 1}, 12 / {h - 1}) = ({40 / (w - 1):.3f}, {12 / (h - 1):.3f})", (40, 12),
                xytext=(-120, 25), textcoords="offset points", fontsize=8, arrowprops=dict(arrowstyle="->"))
    ax.set_xticks([0, w - 1], ["0", f"{w - 1}\n(reads 1)"])
    ax.set_yticks([0, h - 1], ["0", f"{h - 1} (reads 1)"])
    ax.set_xlim(-3, w + 2)
    ax.set_ylim(-3, h + 2)
    ax.set_aspect("equal")
    ax.set_title("Position(): x / (W - 1), y / (H - 1)", fontsize=10)


@figure("sensors", "Heading", size=(4.2, 2.7))
def draw_heading(fig):
    ax = fig.subplots()
    h = 60.0
    c, s = np.cos(np.radians(h)), np.sin(np.radians(h))
    ax.add_patch(Circle((0, 0), 1, fill=False, color="#cccccc"))
    _arrow(ax, (0, 0), (c, s), "#1f77b4", label=None)
    ax.plot([c, c], [0, s], ":", color="grey")
    ax.plot([0, c], [s, s], ":", color="grey")
    ax.text(c / 2, -0.12, f"cos h = {c:.2f}", ha="center", fontsize=8)
    ax.text(-0.08, s, f"sin h = {s:.2f}", ha="right", va="center", fontsize=8)
    ax.add_patch(Arc((0, 0), 0.5, 0.5, theta1=0, theta2=h))
    ax.text(0.32, 0.12, "h = 60", fontsize=8)
    ax.set_xlim(-1.3, 1.3)
    ax.set_ylim(-1.2, 1.2)
    ax.set_aspect("equal")
    ax.set_xlabel("+x (heading 0)")
    ax.set_title("Heading(): (cos h, sin h)", fontsize=10)


@figure("sensors", "Binary", size=(4.2, 2.7))
def draw_binary(fig):
    ax = fig.subplots()
    sensor = sensors.Binary(threshold=0.5)
    plume, field = _gaussian()
    _field_axes(ax, (field > sensor.threshold).astype(np.float32) * 0.8 + 0.1 * field,
                f"Binary(threshold={sensor.threshold:g}): 1 where C > threshold")
    ax.contour(field, levels=[sensor.threshold], colors="white", linewidths=1)
    ax.plot(*plume.source, **SOURCE)
    for (x, y) in ((26, 34), (40, 16)):
        ax.plot(x, y, **AGENT)
        ax.text(x + 2, y, f"reads {int(field[y, x] > sensor.threshold)}", color="white", fontsize=8, va="center")


@figure("sensors", "Antennae", size=(4.2, 2.7))
def draw_antennae(fig):
    ax = fig.subplots()
    sensor = sensors.Antennae(angles=(45, -45), distance=4.0)
    agent, heading = (32, 24), 150.0
    plume, field = _field_with_agent(ax, agent, f"Antennae(angles=(45, -45), distance={sensor.distance:g})")
    rad = np.radians(heading)
    _arrow(ax, agent, (agent[0] + 5 * np.cos(rad), agent[1] + 5 * np.sin(rad)), "white", label=None)
    for j, angle in enumerate(sensor.angles):
        a = np.radians(heading + angle)
        point = (agent[0] + sensor.distance * np.cos(a), agent[1] + sensor.distance * np.sin(a))
        ax.plot([agent[0], point[0]], [agent[1], point[1]], color="#ffb000", linewidth=1)
        ax.plot(*point, "o", color="#ffb000", markersize=5)
        ax.text(point[0], point[1] + 0.8, f"antenna_{j}", color="white", fontsize=8, ha="center")
    ax.set_xlim(agent[0] - 14, agent[0] + 6)
    ax.set_ylim(agent[1] - 6, agent[1] + 10)


@figure("sensors", "Wind", size=(4.2, 2.7))
def draw_wind(fig):
    ax = fig.subplots()
    u, v, h = 1.0, 0.4, 45.0
    c, s = np.cos(np.radians(h)), np.sin(np.radians(h))
    forward, left = u * c + v * s, -u * s + v * c
    ax.plot(0, 0, **AGENT)
    _arrow(ax, (0, 0), (u, v), "#1f77b4", label=f"wind (u, v) = ({u:g}, {v:g})", va="bottom", ha="left")
    _arrow(ax, (0, 0), (0.8 * c, 0.8 * s), "black", width=1.0)
    ax.text(0.8 * c - 0.05, 0.8 * s + 0.1, "heading 45", fontsize=8, ha="right")
    _arrow(ax, (0, 0), (forward * c, forward * s), "#2ca02c", width=1.0)
    _arrow(ax, (0, 0), (-left * s, left * c), "#d62728", width=1.0)
    ax.text(-1.3, -0.55, f"wind_forward = {forward:+.2f}\nwind_left = {left:+.2f}", fontsize=8)
    ax.set_xlim(-1.4, 1.8)
    ax.set_ylim(-0.8, 1.2)
    ax.set_aspect("equal")
    ax.set_title("Wind(): the wind in the body's frame", fontsize=10)


@figure("sensors", "Neighbours", size=(4.2, 2.7))
def draw_neighbours(fig):
    ax = fig.subplots()
    w, h, k = 24, 16, 2
    pos = np.array([[8, 6], [11, 7], [6, 10], [18, 12], [15, 3], [3, 2]])
    me = 0
    d2 = ((pos - pos[me]) ** 2).sum(1).astype(float)
    d2[me] = np.inf
    nearest = np.lexsort((np.arange(len(pos)), d2))[:k]   # squared distance, ties by index
    ax.plot(*pos.T, **{**AGENT, "color": "#bbbbbb"})
    ax.plot(*pos[me], **AGENT)
    for j, n in enumerate(nearest):
        dx, dy = pos[n] - pos[me]
        _arrow(ax, tuple(pos[me]), tuple(pos[n]), "#1f77b4", width=1.0)
        ax.text(*(pos[me] + pos[n]) / 2 + (0.3, 0.5), f"j={j}: ({dx}/{w - 1}, {dy}/{h - 1})", fontsize=7)
    ax.set_xlim(-0.5, w - 0.5)
    ax.set_ylim(-0.5, h - 0.5)
    ax.set_aspect("equal")
    ax.set_xlabel("x (cells)")
    ax.set_ylabel("y (cells)")
    ax.set_title(f"Neighbours(k={k}): offsets to the {k} nearest", fontsize=10)


@figure("sensors", "History", size=(4.2, 2.7))
def draw_history(fig):
    ax = fig.subplots()
    sensor = sensors.History(sensors.Concentration(), steps=4)
    _, field = _gaussian()
    path = [(44 - t, 18 + t // 2) for t in range(12)]
    readings = np.array([field[y, x] for x, y in path])
    t = np.arange(len(readings))
    ax.plot(t, readings, "-o", color="#bbbbbb", markersize=4)
    last = t[-sensor.steps:]
    ax.plot(last, readings[-sensor.steps:], "o", color="#1f77b4", markersize=7)
    for j, (tt, r) in enumerate(zip(last, readings[-sensor.steps:])):
        ax.text(tt, r + 0.03, f"t-{sensor.steps - 1 - j}", fontsize=7, ha="center")
    ax.set_xlabel("step")
    ax.set_ylabel("concentration")
    ax.set_title("History(Concentration(), steps=4): last 4, oldest first", fontsize=9)


@figure("sensors", "Hits", size=(4.2, 2.7))
def draw_hits(fig):
    ax = fig.subplots()
    model = plumes.PoissonHits(1.0, 2.0)
    width = 0.25
    for j, d in enumerate((1.0, 3.0, 6.0)):
        p = model.hit_probabilities(d)
        ax.bar(np.arange(model.n_hits) + (j - 1) * width, p, width, label=f"d = {d:g}")
    ax.set_xticks(range(model.n_hits), [str(h) if h < model.n_hits - 1 else f">={h}" for h in range(model.n_hits)])
    ax.set_xlabel("hits h in one step")
    ax.set_ylabel("Pr(h | d)")
    ax.set_title("Hits() with PoissonHits(1, 2)", fontsize=10)
    ax.legend(fontsize=8)


@figure("sensors", "Belief", size=(7.0, 2.6))
def draw_belief(fig):
    model = plumes.PoissonHits(1.0, 2.0)
    axes = fig.subplots(1, 3, sharey=True)
    for ax, first in zip(axes, range(1, 4)):
        if first >= model.n_hits:
            ax.axis("off")
            continue
        belief = model.initial_belief(first)
        _field_axes(ax, belief, f"after a first hit of {first}", vmax=belief.max())
        ax.plot(*model.start, **{**AGENT, "markersize": 4})
        if ax is not axes[0]:
            ax.set_ylabel("")
    fig.suptitle("Belief(): the posterior of the source cell (19 x 19, agent at the centre)", fontsize=9)


# ------------------------------------------------------------------------------------ rewards
@figure("rewards", "SparseGoal", size=(4.2, 2.5))
def draw_sparse_goal(fig):
    ax = fig.subplots()
    goal, step = rewards.SparseGoal().values()
    arrival = 12
    r = np.full(arrival, step)
    r[-1] = goal
    ax.bar(np.arange(1, arrival + 1), r, color=["#1f77b4"] * (arrival - 1) + ["#2ca02c"])
    ax.set_xlabel("step")
    ax.set_ylabel("reward")
    ax.set_title(f"SparseGoal(): arrival at step {arrival}, return {r.sum():g}", fontsize=10)


@figure("rewards", "StepPenalty", size=(7.0, 2.5))
def draw_step_penalty(fig):
    left, right = fig.subplots(1, 2)
    model = rewards.StepPenalty(goal_reward=1.0, step_penalty=0.05)
    goal, step = model.values()
    arrival = 12
    r = np.full(arrival, step)
    r[-1] = goal
    left.bar(np.arange(1, arrival + 1), r, color=["#d62728"] * (arrival - 1) + ["#2ca02c"])
    left.axhline(0, color="black", linewidth=0.6)
    left.set_xlabel("step")
    left.set_ylabel("reward")
    left.set_title(f"StepPenalty(1.0, 0.05): return {r.sum():.2f}", fontsize=10)
    T = np.arange(1, 201)
    for penalty in (0.0, 0.005, 0.01):
        g, s = rewards.StepPenalty(step_penalty=penalty).values()
        right.plot(T, g + s * (T - 1), label=f"step_penalty = {penalty:g}")
    right.set_xlabel("arrival step T")
    right.set_ylabel("return")
    right.set_title("return = goal_reward - step_penalty (T - 1)", fontsize=10)
    right.legend(fontsize=8)


# ------------------------------------------------------------------------------------ sources
def _track(motion, starts, steps=200, grid=(64, 48), seed=3):
    """``(steps + 1, K, 2)``: sources moved by ``motion``'s own functions (their Python code,
    the draws from the package's counter-based streams), as the plume's step moves them."""
    starts = np.array(starts, np.float64)
    xy = starts[None].copy()
    state = np.zeros((1, len(starts), motion.state_width()))
    record = motion.record()
    kernels = motion.kernels
    m = record.view(np.recarray)[0] if record is not None else None
    out = [xy[0].copy()]
    for k in range(len(starts)):
        kernels.start.py_func(m, state, xy, 0, k, seed, 0, None)
    for t in range(1, steps + 1):
        for k in range(len(starts)):
            kernels.move.py_func(m, state, xy, 0, k, t, tuple(grid), seed, 0, None)
        out.append(xy[0].copy())
    return np.array(out)


def _tracks_axes(ax, track, title, grid=(64, 48)):
    w, h = grid
    ax.add_patch(Rectangle((-0.5, -0.5), w, h, fill=False, color="#888888"))
    for k in range(track.shape[1]):
        ax.plot(track[:, k, 0], track[:, k, 1], linewidth=1.2)
        ax.plot(*track[0, k], "o", mfc="none", color="black", markersize=6)
        ax.plot(*track[-1, k], **SOURCE)
    ax.set_xlim(-2, w + 1)
    ax.set_ylim(-2, h + 1)
    ax.set_aspect("equal")
    ax.set_xlabel("x (cells)")
    ax.set_ylabel("y (cells)")
    ax.set_title(title, fontsize=9)


STARTS = [(12, 12), (32, 36), (52, 20)]


@figure("sources", "Static", size=(4.2, 2.7))
def draw_static(fig):
    _tracks_axes(fig.subplots(), _track(sources.Static(), STARTS), "Static(): three sources stay put")


@figure("sources", "Drift", size=(4.2, 2.7))
def draw_drift(fig):
    motion = sources.Drift(velocity=(0.9, 0.35))
    _tracks_axes(fig.subplots(), _track(motion, STARTS), "Drift(velocity=(0.9, 0.35)), 200 steps")


@figure("sources", "RandomWalk", size=(7.0, 2.5))
def draw_random_walk(fig):
    for ax, persistence in zip(fig.subplots(1, 3), (1.0, 10.0, 100.0)):
        motion = sources.RandomWalk(speed=0.5, persistence=persistence)
        _tracks_axes(ax, _track(motion, STARTS, steps=300), f"speed 0.5, persistence {persistence:g}")


@figure("sources", "Waypoints", size=(4.2, 2.7))
def draw_waypoints(fig):
    points = ((50, 40), (56, 8), (8, 8))
    motion = sources.Waypoints(points=points, speed=0.8, loop=True)
    ax = fig.subplots()
    _tracks_axes(ax, _track(motion, STARTS[:2], steps=250), "Waypoints(3 points, speed=0.8, loop=True)")
    ax.plot(*np.array(points).T, "s", color="#444444", markersize=5)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    out = Path(argv[0])
    for path, png in render_all(argv[1] if len(argv) > 1 else "").items():
        target = out / path.removeprefix("figures/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(png)
        print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
