"""TorchRL's ``PettingZooWrapper`` over ``parallel_env``: the episode must not end at the first arrival.

TorchRL's ``PettingZooWrapper`` ends a parallel env's episode as soon as one agent is done
(``done_on_any``, its default for parallel envs). Without black death a searcher that reaches the
source is done and leaves ``env.agents``, so every episode would end at the first arrival, with no
word. ``parallel_env``'s ``reset`` calls ``warn_if_first_arrival_ends_episodes``, which warns, with
the fix, when the caller is such a wrapper. Nothing here imports TorchRL.
"""

from __future__ import annotations

import sys
import warnings

__all__ = ["FIRST_ARRIVAL_WARNING", "warn_if_first_arrival_ends_episodes"]

FIRST_ARRIVAL_WARNING = (
    "TorchRL's PettingZooWrapper ends a parallel env's episode when any agent is done (done_on_any=True, its "
    "default for parallel envs); without black death a searcher that reaches the source is done and leaves "
    "env.agents, so every episode would end at the first arrival. Make the env with "
    "plume_multi.parallel_env(..., black_death=True) (every searcher stays until the world's episode ends), or "
    "wrap it with PettingZooWrapper(env, done_on_any=False, use_mask=True)."
)


def warn_if_first_arrival_ends_episodes(env, depth: int = 2) -> None:
    """Warn (``UserWarning``, once per env) when the function ``depth`` frames up the stack (the
    caller of ``env.reset``) is a method of a TorchRL wrapper that ends episodes at the first done
    agent, and ``env`` lets arrived searchers leave (no black death, several searchers)."""
    if getattr(env, "black_death", True) or len(env.possible_agents) < 2 or getattr(env, "_warned_first_arrival", False):
        return
    if "torchrl" not in sys.modules:  # no wrapper of TorchRL's can be calling
        return
    try:
        caller = sys._getframe(depth).f_locals.get("self")
    except ValueError:  # the stack is shallower than that
        return
    if type(caller).__module__.startswith("torchrl.") and getattr(caller, "done_on_any", False) is True:
        env._warned_first_arrival = True
        warnings.warn(FIRST_ARRIVAL_WARNING, UserWarning, stacklevel=depth + 1)
