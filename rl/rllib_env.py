"""The inventory environment for RLlib's env runners: the registered env creator.

RLlib's default wraps N copies of `InventoryEnv` in a gymnasium SyncVectorEnv, i.e. N Python `step` calls per
vector step; asked for `num_envs` copies, `make_env` returns the numpy-vectorised gymnasium `VectorEnv`
(`rl.vec_env.VectorInventoryEnv`, NEXT_STEP autoreset, the realised demand in the infos), which RLlib's env
runner takes as is with `gym_env_vectorize_mode="vector_entry_point"`.
"""

from __future__ import annotations

from collections.abc import Mapping

from rl.env import InventoryEnv, resolve_problem
from rl.features import Normalisation
from rl.vec_env import VectorInventoryEnv

ENV_NAME = "askopt-inventory-vector"


def register() -> str:
    """Register `make_env` with Tune's env registry (RLlib takes env creators by registered name; the
    registry reaches Tune's trial processes through Ray). Idempotent; returns the name."""
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_env)
    return ENV_NAME


def make_env(config: Mapping | None = None):
    """RLlib env creator: the vectorised env when RLlib asks for `num_envs` copies, else one `InventoryEnv`."""
    config = dict(config or {})
    if "num_envs" in config:
        n = int(config.pop("num_envs"))
        norm = config.get("normalisation")
        norm = Normalisation.from_dict(norm) if isinstance(norm, Mapping) else norm
        return VectorInventoryEnv(resolve_problem(config.get("problem")), n, seed=0, normalisation=norm)
    return InventoryEnv(config)
