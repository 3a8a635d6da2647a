"""Pictures and movies: ``render`` (frames of a world), ``scene`` (what a frame overlays for a
scenario), ``captions`` (a caption strip under a frame), ``recording`` (trajectories, PNGs, movies)."""
