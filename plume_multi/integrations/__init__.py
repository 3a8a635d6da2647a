"""Adapters to RL libraries: ``sb3`` (``SB3VecEnv``, the ``sb3`` extra) and ``rllib`` (RLlib
configs and env runners, the ``rllib`` extra). Nothing is imported until a module is."""
