"""TorchRL's ``PettingZooWrapper`` over ``parallel_env``: the episode must not end at the first arrival.

TorchRL's ``PettingZooWrapper`` ends a parallel env's episode as soon as one agent is done
(``done_on_any``, its default for parallel envs). Without black death a searcher that reaches the
source is done and leaves ``env.agents``, so every episode would end at the first arrival, with no
word. ``parallel_env``'s ``reset`` calls ``warn_if_first_arrival_ends_episodes``, which warns, with
the fix, when the caller is such a wrapper. Both live in the PettingZoo front-end
(``plume_multi.envs.pettingzoo``), whose ``reset`` calls the check; they are named here for
TorchRL's users. Nothing here imports TorchRL.
"""

from __future__ import annotations

from ..envs.pettingzoo import FIRST_ARRIVAL_WARNING, warn_if_first_arrival_ends_episodes

__all__ = ["FIRST_ARRIVAL_WARNING", "warn_if_first_arrival_ends_episodes"]
