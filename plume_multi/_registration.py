"""Gymnasium registration of the single-agent env and its native vectorized form."""

from __future__ import annotations

ENV_ID = "PlumeSearch-v0"
ALIAS_ID = "PlumeNav-StaticGaussian-v0"  # the reference implementation's id


def register_envs() -> None:
    import gymnasium

    for env_id in (ENV_ID, ALIAS_ID):
        if env_id in gymnasium.registry:
            continue
        gymnasium.register(
            id=env_id,
            entry_point="plume_multi.wrappers.single:PlumeSearchEnv",
            vector_entry_point="plume_multi.envs.vector:vector_env",
            # PlumeSearchEnv truncates at its own max_steps (default 1000), as the contract says;
            # no TimeLimit wrapper on top.
            max_episode_steps=None,
            # The env enforces call order itself, raising StateError with the contract's messages.
            order_enforce=False,
        )
