"""Registration: Gymnasium (the single-agent env and its native vectorized form) and PettingZoo.

Only ids and entry-point strings: nothing here imports the front-ends themselves.
"""

from __future__ import annotations

ENV_ID = "PlumeSearch-v0"
ALIAS_ID = "PlumeNav-StaticGaussian-v0"  # the id the original plume_nav_sim package registered
COMPACT_ID = "PlumeSearchCompact-v0"
# N searchers as one Gymnasium Env with Tuple spaces (EPyMARL's gymma convention); no vector form.
AGENTS_ID = "PlumeSearchAgents-v0"
# One id means one observation space in every vectorization mode ("sync", "async" and the vector
# entry point): PlumeSearch-v0 (and its alias) the contract's Dict, PlumeSearchCompact-v0 the flat
# Box(3) of CompactObservation.
_ENTRY_POINTS = {
    ENV_ID: ("plume_multi.envs.single:PlumeSearchEnv", "plume_multi.envs.vector:dict_vector_env"),
    ALIAS_ID: ("plume_multi.envs.single:PlumeSearchEnv", "plume_multi.envs.vector:dict_vector_env"),
    COMPACT_ID: ("plume_multi.envs.single:compact_env", "plume_multi.envs.vector:compact_vector_env"),
}
PETTINGZOO_ID = "plume_multi/plume_search-v0"


def register_envs() -> None:
    """The package's own ids (the benchmark's tasks register theirs: ``tasks.envs``)."""
    register_gymnasium()
    register_pettingzoo()


def register_gymnasium() -> None:
    import gymnasium

    for env_id, (entry_point, vector_entry_point) in _ENTRY_POINTS.items():
        if env_id in gymnasium.registry:
            continue
        gymnasium.register(
            id=env_id,
            entry_point=entry_point,
            vector_entry_point=vector_entry_point,
            # PlumeSearchEnv truncates at its own max_steps (default 1000), as the contract says;
            # no TimeLimit wrapper on top.
            max_episode_steps=None,
            # The env enforces call order itself, raising StateError with the contract's messages.
            order_enforce=False,
        )
    if AGENTS_ID not in gymnasium.registry:
        gymnasium.register(id=AGENTS_ID, entry_point="plume_multi.envs.agent_tuple:AgentTupleEnv",
                           max_episode_steps=None, order_enforce=False,
                           # the checker's single-agent rules (a float reward, a bool terminated) do not apply
                           disable_env_checker=True)


def register_pettingzoo() -> bool:
    """Register ``PETTINGZOO_ID`` in PettingZoo's AEC and parallel registries.

    Returns False when the installed PettingZoo has no registry (versions before 1.25), else True.
    Calling it again is harmless.
    """
    try:
        from pettingzoo import aec_registry, parallel_registry, register
    except ImportError:
        return False
    for kind, registry, factory in (("aec", aec_registry, "env"), ("parallel", parallel_registry, "parallel_env")):
        if PETTINGZOO_ID not in registry:
            register(kind, PETTINGZOO_ID, entry_point=f"plume_multi.envs.pettingzoo:{factory}")
    return True
