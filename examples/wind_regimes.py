"""The four plume regimes of Singh et al. (2023): a picture of the puff plume in each, and how its
wind turned.

``plumes.Wind(regime=...)``: ``"constant"``, ``"switch-once"`` (a 45-degree turn at a time drawn in
0-30 s), ``"switch-many"`` (a new direction every 3 +- 0.3 s, N(0, 30 degrees) clipped at 60),
``"sparse"`` (0.4 x the puffs). pompy's default plume on a 200 x 100 grid (cells of 0.25, dt 0.01),
the same seed in every panel; the concentration on a log scale (3 decades), the wind's direction
now as an arrow; below, each regime's wind direction over the run. Needs the ``viz`` extra.

    python examples/wind_regimes.py [--steps 4000] [--seed 2] [--png docs/wind_regimes.png]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from plume_multi.models.plumes import PuffPlume, Puffs, Wind
from plume_multi.models.plumes.puffs.regimes import REGIMES


def run(regime: str, steps: int, seed: int, size=(200, 100)):
    """The last concentration image ``(H, W)`` and the wind's angle after each step ``(steps,)``."""
    plume = PuffPlume(Puffs(source=(10, 50), wind=Wind(regime=regime)), size)
    plume.reset(seed=seed)
    angles = np.empty(steps)
    for t in range(steps):
        plume.step()
        angles[t] = plume.state.turn[0, 0]
    return plume.field_image(0), angles


def draw(path: Path, results: dict, dt: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(10, 7.2), dpi=100)
    grid = fig.add_gridspec(3, 2, height_ratios=(1, 1, 0.9))
    top = max(float(f.max()) for f, _ in results.values())
    for k, (regime, (field, angles)) in enumerate(results.items()):
        ax = fig.add_subplot(grid[k // 2, k % 2])
        img = np.log10(np.maximum(field, top * 1e-3) / top) + 3.0
        h, w = field.shape
        ax.imshow(img, origin="lower", cmap="magma", vmin=0.0, vmax=3.0, extent=(-0.5, w - 0.5, -0.5, h - 0.5))
        ax.plot(10, 50, "*", color="red", ms=12, mec="white")
        rad = np.radians(angles[-1])
        ax.annotate("", xy=(w * 0.88 + 14 * np.cos(rad), h * 0.85 + 14 * np.sin(rad)), xytext=(w * 0.88, h * 0.85),
                    arrowprops=dict(arrowstyle="->", color="white", lw=2))
        ax.set_title(f'Wind(regime="{regime}"): {angles[-1]:+.0f} deg now', fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
    ax = fig.add_subplot(grid[2, :])
    for regime, (_, angles) in results.items():
        ax.plot(np.arange(1, len(angles) + 1) * dt, angles, lw=1.5, label=regime)
    ax.set_xlabel("time since the reset (s)")
    ax.set_ylabel("wind direction (deg)")
    ax.legend(loc="upper left", fontsize=8, ncol=4)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4000, help="plume steps of dt = 0.01")
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--png", type=Path, default=Path("wind_regimes.png"))
    args = parser.parse_args(argv)
    results = {regime: run(regime, args.steps, args.seed) for regime in REGIMES}
    for regime, (field, angles) in results.items():
        print(f"{regime:<12} {len(np.unique(angles)):>3} wind directions, {int((field > 0).sum())} cells smell")
    draw(args.png, results, Puffs(source=(10, 50)).dt)
    print(f"picture: {args.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
