"""A puff plume meandering in the wind: a GIF of a few hundred frames and one PNG.

pompy's default plume (``plumes.Puffs``: 10 puffs per unit time, a 21 x 21 wind grid driven by
coloured noise) over its default 50 x 25 region, drawn on a 200 x 100 cell grid, concentration on
a log scale (3 decades). Needs the ``movie`` extra for the GIF: pip install 'plume-multi[movie]'.

    python examples/puff_plume_movie.py [--frames 300] [--every 10] [--out recordings] [--png docs/puffs.png]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from plume_multi.models.plumes import PuffPlume, Puffs
from plume_multi.viz.render import render_puffs
from plume_multi.viz.recording import write_movie


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=300, help="frames in the GIF")
    parser.add_argument("--every", type=int, default=10, help="plume steps (of dt = 0.01) per frame")
    parser.add_argument("--spin-up", type=int, default=5000, help="steps run before the first frame")
    parser.add_argument("--size", type=int, nargs=2, default=(200, 100), metavar=("W", "H"))
    parser.add_argument("--scale", type=int, default=2, help="pixels per cell")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("recordings"), help="folder of the GIF")
    parser.add_argument("--png", type=Path, default=None, help="also save one frame here")
    parser.add_argument("--png-frame", type=int, default=100, help="which frame --png saves (else the last)")
    args = parser.parse_args(argv)

    w, h = args.size
    config = Puffs(source=(w * 0.05, h * 0.5), spin_up_steps=args.spin_up)
    plume = PuffPlume(config, (w, h))
    plume.reset(seed=args.seed)
    vmax = float(np.percentile(plume.field_image(0), 99.9)) or None  # one colour scale for all frames
    frames = []
    for _ in range(args.frames):
        for _ in range(args.every):
            plume.step()
        frames.append(render_puffs(plume, scale=args.scale, vmax=vmax))
    args.out.mkdir(parents=True, exist_ok=True)
    gif = write_movie(args.out / "puff_plume.gif", frames, fps=20)
    print(f"{len(frames)} frames, {args.frames * args.every * config.dt:g} time units: {gif}")
    if args.png is not None:
        import imageio.v3 as iio

        args.png.parent.mkdir(parents=True, exist_ok=True)
        k = args.png_frame if 0 <= args.png_frame < len(frames) else len(frames) - 1
        iio.imwrite(args.png, frames[k])
        print(f"frame {k}: {args.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
