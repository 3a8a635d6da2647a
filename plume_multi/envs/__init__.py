"""Front-ends: PettingZoo (``pettingzoo``) and the Gymnasium VectorEnv (``vector``)."""
