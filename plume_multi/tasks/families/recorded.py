"""Recorded plumes: a search on movie frames, the user's file in the data-zoo layout or a small
synthetic recording this package generates (for tests, and to try the task without data)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...errors import ValidationError
from ..task import Protocol, Task

__all__ = ["TASKS", "synthetic_frames", "synthetic_volumes", "write_synthetic_recording", "movie_search",
           "SYNTHETIC_SOURCE", "SYNTHETIC_VOLUME_SOURCE"]

SYNTHETIC_SHAPE = (100, 32, 64)  # (t, y, x)
SYNTHETIC_SOURCE = (16, 16)  # (x, y) cells; the same read as (y, x), whichever order a reader takes
SYNTHETIC_FPS = 15.0
SYNTHETIC_VOLUME_SHAPE = (20, 6, 12, 24)  # (t, z, y, x): small, for tests and the documentation
SYNTHETIC_VOLUME_SOURCE = (4, 6, 2)  # (x, y, z) cells


def synthetic_frames() -> np.ndarray:
    """``(100, 32, 64)`` float32 frames ``(t, y, x)`` in [0, 1]: a meandering plume from the cell
    ``(16, 16)`` along +x, widening downwind, its centre line swinging 3 cells with a period of 50
    frames and its strength beating with a period of 20 frames (a stand-in for a recorded plume:
    deterministic, smooth, intermittent downwind)."""
    t, h, w = SYNTHETIC_SHAPE
    tt, y, x = np.meshgrid(np.arange(t, dtype=np.float64), np.arange(h, dtype=np.float64),
                           np.arange(w, dtype=np.float64), indexing="ij")
    return _meander(tt, x, y, SYNTHETIC_SOURCE, 0.0)


def synthetic_volumes() -> np.ndarray:
    """``(20, 6, 12, 24)`` float32 volumes ``(t, z, y, x)`` in [0, 1]: ``synthetic_frames``' plume
    from the cell ``(4, 6, 2)``, its cross-section round (the same spread along z as along y)."""
    t, d, h, w = SYNTHETIC_VOLUME_SHAPE
    tt, z, y, x = np.meshgrid(*(np.arange(n, dtype=np.float64) for n in (t, d, h, w)), indexing="ij")
    sx, sy, sz = SYNTHETIC_VOLUME_SOURCE
    return _meander(tt, x, y, (sx, sy), (z - sz) ** 2)


def _meander(tt, x, y, source, dz2) -> np.ndarray:
    """The synthetic plume at ``(t, x, y)`` from ``source`` ``(x, y)``, ``dz2`` the squared
    distance from the source's plane along z (0 in 2-D)."""
    sx, sy = source
    down = np.maximum(x - sx, 0.0)
    centre = sy + 3.0 * np.sin(2 * np.pi * tt / 50.0 - down / 8.0) * np.minimum(1.0, down / 16.0)
    spread = 1.5 + 0.12 * down
    beat = 0.6 + 0.4 * np.cos(2 * np.pi * (down / 12.0 - tt / 20.0))
    plume = np.exp(-((y - centre) ** 2 + dz2) / (2 * spread**2)) * (1.5 / spread) * np.where(down > 0, beat, 1.0)
    upstream = np.exp(-((x - sx) ** 2 + (y - sy) ** 2 + dz2) / (2 * 1.5**2))
    frames = np.where(x >= sx, plume, upstream)
    return np.clip(frames, 0.0, 1.0).astype(np.float32)


def write_synthetic_recording(path, dims: int = 2) -> Path:
    """Write ``synthetic_frames()`` as the data zoo lays a movie out: an HDF5 file (needs h5py:
    ``pip install "plume-multi[data]"``) with the dataset ``concentration`` ``(t, y, x)`` and its
    attributes ``fps``, ``source_location``, ``schema_version``, ``source_dtype``. With ``dims=3``,
    ``synthetic_volumes()`` instead: ``concentration`` ``(t, z, y, x)``, ``source_location``
    ``(x, y, z)``. Returns the path."""
    try:
        import h5py
    except ImportError:
        raise ValidationError("write_synthetic_recording: HDF5 needs h5py: pip install 'plume-multi[data]'") from None
    if dims not in (2, 3) or isinstance(dims, bool):
        raise ValidationError(f"dims: got {dims!r}; expected 2 (frames) or 3 (volumes)")
    p = Path(path)
    if p.suffix.lower() not in (".h5", ".hdf5"):
        raise ValidationError(f"path: got {str(path)!r}; expected a file name ending in .h5 or .hdf5")
    p.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(p, "w") as f:
        data = f.create_dataset("concentration", data=synthetic_frames() if dims == 2 else synthetic_volumes())
        data.attrs["fps"] = SYNTHETIC_FPS
        source = SYNTHETIC_SOURCE if dims == 2 else SYNTHETIC_VOLUME_SOURCE
        data.attrs["source_location"] = np.array(source, dtype=np.float64)
        data.attrs["schema_version"] = "1.0.0"
        data.attrs["source_dtype"] = "float32"
    return p


def movie_search(frames, source=None) -> Scenario:
    """A searcher on ``Movie(frames)`` (each world starts at a random frame): the concentration at
    its cell and at the four next to it, cardinal moves, success within 2 cells of the source."""
    from ...models.plumes import Movie  # here: the registry builds no scenario
    from ...models.sensors import Antennae, Concentration
    from ...scenario import Scenario

    sensors = (Concentration(), Antennae(angles=(90.0, 0.0, 270.0, 180.0), distance=1.0))
    return Scenario(plume=Movie(frames=frames, source=source), sensors=sensors, goal_radius=2.0)


def synthetic_search() -> Scenario:
    return movie_search(synthetic_frames(), source=SYNTHETIC_SOURCE)


def file_search(path) -> Scenario:
    return movie_search(str(path))


CARD = ("One searcher looks for the source of a recorded plume: every world plays the movie's frames from a "
        "random first frame, one frame per step (wrapping at the end), and the searcher senses the "
        "concentration at its cell and at the four cells next to it, not its position; cardinal moves; "
        "success is coming within 2 cells of the source in {steps} steps. {what}")
REFERENCES = ("Rigolli, Magnoli, Rosasco & Seminara, Learning to predict target location with turbulent odor "
              "plumes, eLife 11, e72196 (2022)",
              "Crimaldi & Koseff, High-resolution measurements of the spatial and temporal scalar structure of a "
              "turbulent plume, Experiments in Fluids 31, 90 (2001)")

TASKS = (
    Task(
        id="recorded/synthetic-v0",
        scenario_factory=synthetic_search,
        protocol=Protocol(episodes=1000, max_steps=300),
        card=CARD.format(steps=300, what=(
            "The movie is the package's synthetic recording (tasks.families.recorded.synthetic_frames: 100 "
            "frames of 64 x 32 cells, a meandering, beating plume from (16, 16)): it needs no data, and "
            "write_synthetic_recording writes it as a file in the data-zoo layout.")),
        references=REFERENCES,
        baselines=("random", "gradient", "infotaxis", "space-aware-infotaxis", "greedy"),
    ),
    Task(
        id="recorded/file-v0",
        scenario_factory=file_search,
        protocol=Protocol(episodes=1000, max_steps=1000),
        card=CARD.format(steps=1000, what=(
            "The movie is the user's file in the data-zoo layout (tasks.make('recorded/file-v0', path=...): a "
            "dataset concentration (t, y, x) in [0, 1] with its source_location; .h5, .zarr, .npz or .npy as "
            "plumes.Movie reads them). Results name the file's task id only: publish the file with them.")),
        references=REFERENCES,
        baselines=("random", "gradient", "infotaxis", "space-aware-infotaxis", "greedy"),
        options=("path",),
    ),
)
