"""Models the engine is assembled from: plumes, actions, sensors, rewards (one file per model)."""
