"""What the searches after training share: costs on common random numbers and the rule for taking a change.

Both `rl.opening` (the first orders from the empty start) and `rl.residual` (order offsets in the steady and
the final periods) improve a trained policy by simulating candidates on the same demand paths (all the
candidates of one coordinate in one stacked simulation, `stacked_path_costs`); a candidate
replaces the current policy only when it is cheaper by more than z paired standard errors, and what a search
found must then win again on fresh paths (the best of a hundred candidates on its own numbers is flattered by
them). One definition of each, used by both.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from inventory.montecarlo import simulate
from inventory.policies import StatePolicy
from inventory.problem import Problem

PATH_PERIODS = 240_000  # paths x horizon per simulation: long horizons get fewer paths (never below 200)
MIN_PATHS = 200


def search_replications(problem: Problem, replications: int) -> int:
    """Paths per simulation: as asked, but at most PATH_PERIODS / horizon (and never below MIN_PATHS), so a
    search costs the same whatever the horizon."""
    return max(min(replications, MIN_PATHS), min(replications, PATH_PERIODS // max(1, problem.horizon)))


def path_costs(problem: Problem, fn: Callable, demands: np.ndarray) -> np.ndarray:
    """Total cost of the state policy `fn` on each demand path (the shared Monte Carlo evaluator)."""
    return simulate(problem, StatePolicy(fn=fn, title="search"), demands, detailed=False).cost[0]


def stacked_path_costs(problem: Problem, base: Callable, adjusters: list[Callable], demands: np.ndarray) -> np.ndarray:
    """(len(adjusters), paths): the cost of each candidate `adjust(base orders, on_hand, pipeline, t)` on every
    demand path, in one simulation. The candidates' copies of the paths are stacked, so `base` (the network) runs
    once per period for all of them instead of once per candidate; each row's result is what `path_costs` gives
    that candidate alone (tested)."""
    paths, n = demands.shape[0], len(adjusters)

    def fn(on_hand, pipeline, t):
        out = np.asarray(base(on_hand, pipeline, t)).reshape(-1).astype(np.int64)
        on = np.asarray(on_hand).reshape(-1)
        pipe = np.asarray(pipeline).reshape(on.size, -1)
        return np.concatenate([adjust(out[c * paths:(c + 1) * paths], on[c * paths:(c + 1) * paths],
                                      pipe[c * paths:(c + 1) * paths], t) for c, adjust in enumerate(adjusters)])

    return path_costs(problem, fn, np.tile(demands, (n, 1))).reshape(n, paths)


def clearly_cheaper(trial: np.ndarray, best: np.ndarray, z: float) -> bool:
    """Paired on common random numbers: the mean saving exceeds z standard errors of the path differences, so a
    saving that is only the search numbers' noise does not replace the current policy."""
    diff = trial - best
    se = float(diff.std(ddof=1)) / np.sqrt(diff.size)
    return float(diff.mean()) < -max(z * se, 1e-9)
