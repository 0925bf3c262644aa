"""One step of approximate policy iteration on a trained Q-network: rollouts on common random numbers next to
the greedy order, fitted back into the network.

Why: at L = 3-4 the counterfactual DQN's orders in the steady periods lean the same way by about half a unit
(docs/rl.md: the DP's orders there alone take the shipped policy from 1.6 % to 0.3 % off the optimum), and the
lean depends on the whole state, not on the inventory position alone, so offsets per position (rl.residual)
remove only part of it. Bootstrapped targets carry that bias; a rollout does not. This is Deep Controlled
Learning's step (policy improvement by rollouts, the result learned by the network), cut to what this problem
needs:

* states: the periods whose order still arrives before the horizon, as the network's own greedy policy visits
  them (after the opening, which rl.opening re-chooses exactly);
* in each state the greedy order a and its neighbours a - 1, a + 1 (when the caps allow) are each followed by
  the greedy policy for `horizon` periods on the same `paths` demand paths, so the three costs differ only by
  the first order (common random numbers);
* the network is then fine-tuned so that Q(s, a +- 1) - Q(s, a) matches the rollout differences (in reward
  units) while every other difference and the level Q(s, a) stay where they were: the network keeps its shape
  and only the decisions next to the greedy one move. The regression over many states averages the rollouts'
  noise, which a per-state choice would not.

The fine-tuned network replaces the trained one only when it beats it on fresh paths by two paired standard
errors (rl.crn_search.clearly_cheaper): the same guard as the opening and the offsets.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass

import numpy as np
import torch

from inventory import dynamics
from inventory.montecarlo import demand_matrix
from inventory.problem import Problem
from rl.crn_search import clearly_cheaper, path_costs, search_replications
from rl.features import Normalisation, encode, order_room
from rl.network import QNetwork
from rl.policy import GreedyQ

DELTAS = np.array([-1, 0, 1])
STATE_SEED_OFFSET = 52_711  # the pilot run that collects states
ROLLOUT_SEED_OFFSET = 83_009  # rollout demands
CHECK_SEED_OFFSET = 97_151  # fresh paths for the final check
PILOT_PATHS = 400
CHUNK_STATES = 2_000  # states per rollout chunk (the time budget is checked between chunks)
ROLLOUT_SHARE = 0.5  # of a round's time left, the part its rollouts may take (the fine-tuning and check follow)


@dataclass(frozen=True)
class RolloutSettings:
    states: int = 16_000  # states sampled from the network's own paths (0: no step)
    paths: int = 32  # demand paths per state, shared by the three orders
    horizon: int = 12  # periods followed after the first order (at most to the end of the horizon)
    epochs: int = 30
    lr: float = 1e-3
    anchor: float = 1.0  # weight of "everything else stays where it was"
    rounds: int = 2  # each round starts from the network the last one kept
    z: float = 2.0  # each round's check: cheaper by z paired standard errors on fresh paths

    def __post_init__(self) -> None:
        for name in ("states", "paths", "horizon", "epochs", "rounds"):
            v = getattr(self, name)
            if not (isinstance(v, int) and v >= 0):
                raise ValueError(f"{name}: {v!r} is not allowed; must be a whole number >= 0")


def visited_states(problem: Problem, policy: GreedyQ, t_from: int, paths: int, seed: int):
    """(on_hand, pipeline, t) of every state the greedy policy visits at t_from <= t < T - L (orders that arrive)."""
    seen = []
    t_to = problem.horizon - problem.lead_time

    def spy(on_hand, pipeline, t):
        if t_from <= t < t_to:
            on = np.asarray(on_hand).reshape(-1)
            seen.append((on.copy(), np.asarray(pipeline).reshape(on.size, -1).copy(), np.full(on.size, t)))
        return policy(on_hand, pipeline, t)

    path_costs(problem, spy, demand_matrix(problem, paths, seed=seed))
    if not seen:
        return None
    return tuple(np.concatenate(x) for x in zip(*seen, strict=True))


def rollout_savings(problem: Problem, policy: GreedyQ, on, pipe, t, paths: int, horizon: int, seed: int,
                    until: float | None = None):
    """Cost of a - 1 and a + 1, each then greedy for `horizon` periods, minus the cost of the greedy order a then
    greedy, mean over `paths` common demand paths.

    Returns (greedy order (n,), savings (n, 3): column 1 is 0, inf where the order is not allowed, and the number
    of states done). On a path where the three branches reach the same state they stay equal to the end (same
    state, same demands, a deterministic policy), so that path is dropped there: the differences are exact and
    most rows stop after L + 1 periods. States go in chunks; with `until` (a time.perf_counter() value) no chunk
    starts after it, the first always runs, and only the states done are returned."""
    n = on.size
    a0 = np.asarray(policy(on, pipe, t)).astype(np.int64)
    room = order_room(problem, on, pipe)
    first = a0[:, None] + DELTAS[None, :]
    allowed = (first >= 0) & (first <= room[:, None])
    dem = demand_matrix(problem, n * paths, periods=horizon, seed=seed).reshape(n, paths, horizon)
    orders = np.clip(first, 0, room[:, None])
    totals = np.zeros((n, DELTAS.size))
    done = 0
    while done < n and (done == 0 or until is None or time.perf_counter() < until):
        hi = min(n, done + CHUNK_STATES)
        totals[done:hi] = _branch_totals(problem, policy, on[done:hi], pipe[done:hi], t[done:hi],
                                         orders[done:hi], dem[done:hi], horizon)
        done = hi
    savings = np.where(allowed, totals - totals[:, [1]], np.inf)[:done]
    return a0[:done], savings, done


def _branch_totals(problem: Problem, policy: GreedyQ, on, pipe, t, orders, dem, horizon: int) -> np.ndarray:
    """(m, 3) mean cost over paths of each branch until the branches meet on a path (the rest is equal)."""
    m, paths = on.size, dem.shape[1]
    K, L = DELTAS.size, problem.lead_time
    rows = m * paths  # one group = (state, path); its K branches are K consecutive rows
    o = np.repeat(on, K * paths)
    pp = np.repeat(pipe, paths * K, axis=0).reshape(-1, L)
    tt = np.repeat(t, K * paths)
    order = np.repeat(orders[:, None, :], paths, axis=1).reshape(-1)  # (state, path, branch) order
    dd = np.repeat(dem.reshape(rows, horizon), K, axis=0)
    group = np.arange(rows)
    sums = np.zeros(rows * K)
    live = np.arange(rows * K)  # rows still simulated (all K branches of a group together)
    for k in range(horizon):
        if k > 0:
            order = np.asarray(policy(o, pp, tt + k))  # GreedyQ runs the network once per distinct state
        st = dynamics.step(problem, o, pp, order, dd[:, k])
        sums[live] += np.where(tt + k < problem.horizon, st.cost, 0.0)
        o, pp = st.on_hand, st.pipeline
        state = np.concatenate([o[:, None], pp], axis=1).reshape(group.size, K, L + 1)
        apart = ~(state == state[:, :1]).all(axis=(1, 2))
        if not apart.all():  # groups whose branches met: nothing left to tell them apart
            keep = np.repeat(apart, K)
            group, live = group[apart], live[keep]
            o, pp, tt, dd = o[keep], pp[keep], tt[keep], dd[keep]
        if group.size == 0:
            break
    return sums.reshape(m, paths, K).mean(axis=1)


def fit_differences(net: QNetwork, obs: np.ndarray, action: np.ndarray, target: np.ndarray, valid: np.ndarray,
                    s: RolloutSettings, seed: int) -> QNetwork:
    """A copy of `net` whose Q(s, a + d) - Q(s, a) for d = -1, +1 match `target` (n, 2) where `valid`, every other
    difference and the level Q(s, a) anchored to the network's own."""
    gen = torch.Generator().manual_seed(seed)
    X = torch.from_numpy(obs)
    A0 = torch.from_numpy(action).long()
    n_act = net.n_actions
    nbr = torch.stack([(A0 - 1).clamp(min=0), (A0 + 1).clamp(max=n_act - 1)], dim=1)
    y = torch.from_numpy(np.where(valid, target, 0.0)).float()
    w = torch.from_numpy(valid).float()
    with torch.no_grad():
        q_old = net(X)
        level_old = q_old.gather(1, A0[:, None])
        diff_old = q_old - level_old
    new = copy.deepcopy(net).train()
    opt = torch.optim.Adam(new.parameters(), lr=s.lr)
    for _ in range(s.epochs):
        perm = torch.randperm(X.shape[0], generator=gen)
        for b in range(0, X.shape[0], 256):
            i = perm[b:b + 256]
            q = new(X[i])
            level = q.gather(1, A0[i][:, None])
            diff = q - level
            fit = (((diff.gather(1, nbr[i]) - y[i]) ** 2) * w[i]).sum() / w[i].sum().clamp(min=1.0)
            others = torch.ones_like(diff).scatter_(1, nbr[i], 0.0)  # the neighbours are fitted, not kept
            keep = (((diff - diff_old[i]) ** 2) * others).mean() + ((level - level_old[i]) ** 2).mean()
            loss = fit + s.anchor * keep
            opt.zero_grad()
            loss.backward()
            opt.step()
    return new.eval()


def improve_network(problem: Problem, net: QNetwork, norm: Normalisation, t_from: int = 0,
                    settings: RolloutSettings | None = None, seed: int = 0,
                    deadline: float | None = None) -> tuple[QNetwork, dict]:
    """(network, info) after up to `settings.rounds` rounds, each one kept only when the fine-tuned network is
    clearly cheaper than the one before it on fresh paths; `net` itself when no round is kept.

    `t_from`: the first period whose state depends on demand (after the opening, which rl.opening fixes).
    `deadline` (a time.perf_counter() value, None: none): a round starts only when the time left is at least what
    the last one took, and a round's rollouts stop taking new states at ROLLOUT_SHARE of the time left, so the
    fine-tuning and the check fit too (a round on fewer states is still checked before it ships)."""
    s = settings or RolloutSettings()
    if s.rounds <= 0 or s.states <= 0 or s.paths <= 0 or s.horizon <= 0:
        return net, {"applied": False, "reason": "switched off"}
    rounds, last = [], 0.0
    for r in range(s.rounds):
        left = math.inf if deadline is None else deadline - time.perf_counter()
        if left <= 0 or (r > 0 and left < last):
            rounds.append({"kept_after_check": False, "reason": "time budget", "seconds_left": round(left, 2)})
            break
        started = time.perf_counter()
        until = None if deadline is None else started + ROLLOUT_SHARE * left
        tuned, info = _one_round(problem, net, norm, t_from, s, seed + 1_000 * r, until)
        last = time.perf_counter() - started
        rounds.append({**info, "seconds": round(last, 2)})
        if tuned is None:
            break
        net = tuned
    kept = sum(1 for info in rounds if info.get("kept_after_check"))
    return net, {"applied": kept > 0, "rounds_kept": kept, "rounds": rounds}


def _one_round(problem: Problem, net: QNetwork, norm: Normalisation, t_from: int, s: RolloutSettings,
               seed: int, until: float | None = None) -> tuple[QNetwork | None, dict]:
    policy = GreedyQ(net, norm, problem)
    seen = visited_states(problem, policy, t_from, search_replications(problem, PILOT_PATHS),
                          seed + STATE_SEED_OFFSET)
    if seen is None:
        return None, {"kept_after_check": False, "reason": "no period whose order arrives before the horizon"}
    pick = np.random.default_rng(seed).choice(seen[0].size, size=min(s.states, seen[0].size), replace=False)
    on, pipe, t = (x[pick] for x in seen)
    a0, saving, done = rollout_savings(problem, policy, on, pipe, t, s.paths, s.horizon, seed + ROLLOUT_SEED_OFFSET,
                                       until)
    on, pipe, t = on[:done], pipe[:done], t[:done]
    valid = np.isfinite(saving[:, [0, 2]])  # a - 1 / a + 1 against the greedy order (inf: not allowed)
    target = -np.where(valid, saving[:, [0, 2]], 0.0) / norm.reward_scale  # Q is -cost / reward_scale
    tuned = fit_differences(net, encode(norm, on, pipe, t), a0, target, valid, s, seed)
    check = demand_matrix(problem, search_replications(problem, 2000), seed=seed + CHECK_SEED_OFFSET)
    before = path_costs(problem, policy, check)
    after = path_costs(problem, GreedyQ(tuned, norm, problem), check)
    kept = clearly_cheaper(after, before, s.z)
    best = np.argmin(saving, axis=1)
    info = {"states": int(done), "lower_better": round(float((best == 0).mean()), 3),
            "higher_better": round(float((best == 2).mean()), 3), "own_cost": round(float(before.mean()), 3),
            "tuned_cost": round(float(after.mean()), 3), "kept_after_check": bool(kept)}
    return (tuned if kept else None), info
