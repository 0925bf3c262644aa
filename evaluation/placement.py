"""Where the study's Ray work may run: node labels for the CPU work, GPUs for Monte Carlo scoring.

Why: on a cluster with a GPU worker group (KubeRay, docs/ops.md) the served models (vLLM imitator, LLM endpoints)
need the GPU nodes, and the study's CPU tasks must not fill them. Ray schedules a task on any node with free CPUs,
GPU nodes included, so the study's tasks and dialogue actors carry a label selector (Ray >= 2.49 labels: set on
the CPU worker group with `ray start --labels`, e.g. `askopt.io/pool=cpu`). Scoring can instead ask for a GPU
share: the task then sees a CUDA device and `inventory.montecarlo.choose_backend` runs large evaluations on the
torch kernel. Neither changes a result (the kernels give identical totals), so neither is in StudyConfig.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_LABEL = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._/-]{0,251}[A-Za-z0-9])?$")


@dataclass(frozen=True)
class Placement:
    labels: dict[str, str] = field(default_factory=dict)  # label selector of every study task and actor
    scoring_gpus: float = 0.0  # GPU share per scoring task (0: CPU scoring)

    def __post_init__(self) -> None:
        for k, v in self.labels.items():
            if not _LABEL.match(k) or not _LABEL.match(v.lstrip("!")):
                raise ValueError(f"node-labels: {k}={v} is not allowed; keys and values are Kubernetes-style "
                                 "labels (letters, digits, . _ / -), a value may start with ! (not equal)")
        if not 0 <= self.scoring_gpus <= 8:
            raise ValueError(f"scoring-gpus: {self.scoring_gpus} is not allowed; must be in [0, 8]")

    def task_options(self, scoring: bool = False) -> dict:
        """Extra `ray.remote` options of a study task (scoring tasks may take a GPU share)."""
        opts: dict = {"label_selector": dict(self.labels)} if self.labels else {}
        if scoring and self.scoring_gpus:
            opts["num_gpus"] = self.scoring_gpus
        return opts

    def actor_options(self) -> dict:
        return {"label_selector": dict(self.labels)} if self.labels else {}

    def check(self, cluster_resources: dict) -> None:
        """Refuse at start what could never be scheduled (a task asking for GPUs the cluster lacks would wait
        for ever)."""
        if self.scoring_gpus and cluster_resources.get("GPU", 0) < self.scoring_gpus:
            raise ValueError(f"scoring-gpus: {self.scoring_gpus} is not allowed; the cluster has "
                             f"{cluster_resources.get('GPU', 0):g} GPUs")


NO_PLACEMENT = Placement()


def parse_labels(text: str | None) -> dict[str, str]:
    """`KEY=VALUE[,KEY=VALUE]` (the `ray start --labels` syntax) -> a label selector."""
    out: dict[str, str] = {}
    for item in filter(None, (t.strip() for t in (text or "").split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"node-labels: {item!r} is not allowed; write KEY=VALUE[,KEY=VALUE]")
        out[key.strip()] = value.strip()
    return out
