"""Early stopping on a validation cost, shared by the torch trainer, the RLlib run and the Tune stopper."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class Patience:
    """Counts evaluations without progress on a cost (lower is better).

    `update(cost)` returns True when `cost` is a new best (more than `abs_tol` below it: the caller keeps
    those weights). The count restarts only when the new best beats the old one by more than `rel_tol`
    relative, so a run creeping down by noise-sized steps still stops after `since` reaches the patience.
    """

    rel_tol: float = 1e-3
    abs_tol: float = 0.0
    best: float = math.inf
    since: int = 0

    def update(self, cost: float) -> bool:
        if cost < self.best - self.abs_tol:
            self.since = 0 if cost < self.best * (1 - self.rel_tol) else self.since + 1
            self.best = cost
            return True
        self.since += 1
        return False
