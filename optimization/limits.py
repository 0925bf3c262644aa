"""Resource limits decided before any work starts: what one optimisation will cost, and a refusal naming the field.

Every entry point that runs `optimization.service.optimize` on input it did not choose (the HTTP apps, the
dialogue's optimisation step, the CLI) calls `check(problem, plan)` first. The estimate is pure arithmetic over
the Problem: nothing here allocates more than a few numbers, so pricing `poisson(3e9)` or a warehouse of
1,000,000 units is as cheap as pricing the bike shop.

What is priced (the three things that have taken a replica past 4 GB):
- demand support: the largest daily demand with non-negligible mass; pmfs and DP transition rows span it;
- the DP: `inventory.dp.state_count` under `inventory.dp.default_bounds` (reused, not re-derived), plus the
  demand convolutions `default_bounds` itself performs (priced with `inventory.dp.batch_periods`) and the
  transition build (available levels x demand support);
- Monte Carlo cells = periods x replications x policies for every simulation stage of the plan: the (s,S)
  lattice screen and its leaders, the base-stock screen over every level 0..max_inventory, and the final
  common-random-number scoring of the candidates plus any `extra` policies.

Rates are measured on this project's 2-core machine (`benchmarks/bench_limits.py` solves plausible problems of
every size and prints the estimate next to the measured CPU time and peak memory); the estimate is an
order-of-magnitude guard, the hard per-request deadline (24 s wall and CPU) and memory cap (1.75 GiB resident) in
`serving.isolation` are the backstop.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from inventory import dp
from inventory.montecarlo import average_run_length
from inventory.problem import Problem

# measured rates (2 shared cores; conservative end of repeated runs)
MC_CELLS_PER_SECOND = 1.0e7  # simulate(): 1.5e7 .. 2.3e7 period-replication-policy cells per second
DP_FLOPS_PER_SECOND = 5.0e8  # Bellman-backup multiply-adds per second (L = 3: 6.6e9 in 12 s on a loaded machine)
CONV_FLOPS_PER_SECOND = 5.0e8  # np.convolve multiply-adds per second
BYTES_PER_CELL_STATE = 8  # int64 per (policy, replication) state array entry
DP_DOUBLING_ALLOWANCE = 16  # the DP's bound doublings: two of them at 4x work each, capped by Limits.dp_max_work

# what inventory.search / optimization.service simulate (kept in step with those modules' defaults)
SS_SCREEN_REPS = 64
SS_FINAL_REPS = 2000
SS_LEADERS = 10
SS_COARSE_POINTS = 13
BS_SCREEN_REPS = 256
BS_FINAL_REPS = 2000
BS_LEADERS = 5

PLAN_METHODS = ("ss", "base_stock", "dp")


class ResourceLimitError(ValueError):
    """A request that would exceed a limit; `field` is the input to change, the message says by how much."""

    def __init__(self, field: str, value, limit: str):
        self.field = field
        self.value = value
        self.limit = limit
        super().__init__(f"{field}: {value!r} is too large for this server; {limit}")


@dataclass(frozen=True)
class Limits:
    """Per-request ceilings. The defaults keep one request under 2 GB and 30 s on the 2-core reference machine."""

    max_demand_support: int = 100_000  # units of daily demand (pmf length)
    max_horizon: int = 3650  # days
    max_lead_time: int = 365  # days (the DP state grows as a power of the lead time)
    max_replications: int = 100_000
    max_policies: int = 50  # extra policies scored beside the candidates
    max_mc_cells: float = 3.0e8  # periods x replications x policies, summed over the plan's stages
    max_memory_bytes: float = 1.5 * 2**30  # peak estimate (the hard cap in serving.isolation is 2 GiB)
    max_seconds: float = 30.0
    max_conv_flops: float = 5.0e9  # demand convolutions in the DP's bounds
    # the DP's own budget on a server, bound doublings included (`dp.solve(max_work=)`): past it the DP answers
    # "bounded" instead of widening. Why: its doublings cannot be priced in advance (a backlog DP at L = 8 went
    # from 0.03 s at its first bounds to 24 s after four doublings).
    dp_max_work: float = 5.0e9


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Plan:
    """What will be run: candidate methods (subset of ss, base_stock, dp), final replications, extra policies."""

    methods: tuple[str, ...] = ("ss", "base_stock", "dp")
    replications: int = 2000
    extra_policies: int = 0
    objective: str = "finite"


@dataclass
class Estimate:
    demand_support: int
    periods: int  # simulated periods per replication (horizon, or warm-up + long run for "average")
    dp_states: int | None = None  # None when the DP is not in the plan
    dp_flops: float = 0.0
    conv_flops: float = 0.0
    mc_cells: dict[str, float] = field(default_factory=dict)
    memory_bytes: float = 0.0
    seconds: float = 0.0

    @property
    def total_cells(self) -> float:
        return float(sum(self.mc_cells.values()))

    def as_dict(self) -> dict:
        d = asdict(self)
        d["total_cells"] = self.total_cells
        return d


def _short(x: float) -> str:
    return f"{x:.3g}"


def _ss_pairs(max_inventory: int) -> int:
    """Upper bound on distinct (s,S) pairs `inventory.search.search_ss` screens: the coarse lattice, then per
    refinement level (step divided by 3) up to 4 windows of 7 x 7 around each of 3 centres."""
    coarse = SS_COARSE_POINTS * (SS_COARSE_POINTS + 1) // 2
    step = max(1, math.ceil(max_inventory / (SS_COARSE_POINTS - 1)))
    levels = 0
    while step > 1:
        step = max(1, step // 3)
        levels += 1
    return coarse + levels * 3 * 4 * 49


def estimate(problem: Problem, plan: Plan = Plan(), limits: Limits = DEFAULT_LIMITS) -> Estimate:
    """Price the plan. Refuses (ResourceLimitError) only where pricing itself would be expensive: a demand
    support or DP bound computation beyond the limits is refused here, before `default_bounds` runs."""
    unknown = [m for m in plan.methods if m not in PLAN_METHODS]
    if unknown:
        raise ValueError(f"methods: {unknown[0]!r} is not allowed; allowed: {', '.join(PLAN_METHODS)}")
    if plan.objective not in ("finite", "average"):
        raise ValueError(f"objective: {plan.objective!r} is not allowed; allowed: finite, average")
    support = int(problem.demand.support_max()) + 1
    if support > limits.max_demand_support:
        raise ResourceLimitError(
            "demand_distribution", problem.demand.describe(),
            f"daily demand reaches {_short(support)} units; the limit is {limits.max_demand_support} "
            "(express demand in larger units, e.g. cases or pallets)")
    if problem.horizon > limits.max_horizon:
        raise ResourceLimitError("time_horizon", problem.horizon, f"the limit is {limits.max_horizon} days")
    if problem.lead_time > limits.max_lead_time:
        raise ResourceLimitError("lead_time", problem.lead_time, f"the limit is {limits.max_lead_time} days")
    periods = problem.horizon if plan.objective == "finite" else sum(average_run_length(problem))
    est = Estimate(demand_support=support, periods=int(periods))
    T = float(periods)
    cells = est.mc_cells
    peak_state = 0.0  # bytes of per-(policy, replication) simulation state at the largest stage
    state_words = problem.lead_time + 8  # pipeline ring + on-hand, in-transit, sums, counts, room
    if "ss" in plan.methods:
        pairs = _ss_pairs(problem.max_inventory)
        cells["ss_screen"] = pairs * SS_SCREEN_REPS * T
        cells["ss_leaders"] = SS_LEADERS * SS_FINAL_REPS * T
        peak_state = max(peak_state, SS_LEADERS * SS_FINAL_REPS * state_words * BYTES_PER_CELL_STATE)
    if "base_stock" in plan.methods:
        levels = problem.max_inventory + 1
        cells["base_stock_screen"] = levels * BS_SCREEN_REPS * T
        cells["base_stock_leaders"] = BS_LEADERS * BS_FINAL_REPS * T
        peak_state = max(peak_state, levels * BS_SCREEN_REPS * state_words * BYTES_PER_CELL_STATE)
    candidates = len(plan.methods)
    cells["final_scoring"] = (candidates + plan.extra_policies) * plan.replications * T
    peak_state = max(peak_state, plan.replications * state_words * BYTES_PER_CELL_STATE)
    # demand matrices: sampled as int64 then cast to int32
    demand_bytes = max(SS_FINAL_REPS, BS_FINAL_REPS, plan.replications) * T * 12

    dp_bytes = 0.0
    if "dp" in plan.methods or "ss" in plan.methods:  # the (s,S) answer is also scored exactly by the DP
        # default_bounds convolves the daily pmf batch_periods (and lead time + 1) times for non-Poisson laws
        if problem.demand.kind != "poisson":
            n = max(dp.batch_periods(problem), problem.lead_time + 1)
            est.conv_flops = 0.5 * n * n * float(support) ** 2
            if est.conv_flops > limits.max_conv_flops:
                fld = "lead_time" if problem.lead_time + 1 >= dp.batch_periods(problem) else "holding_cost"
                val = problem.lead_time if fld == "lead_time" else problem.holding_cost
                raise ResourceLimitError(
                    fld, val, f"the DP's demand bounds would need {_short(est.conv_flops)} convolution steps "
                    f"over {n} periods (setup_cost / holding_cost and lead_time set the span); the limit is "
                    f"{_short(limits.max_conv_flops)}")
        b = dp.default_bounds(problem)
        states, work, entries = dp.state_count(problem, b)
        est.dp_states = int(states)
        dp_iters = problem.horizon if plan.objective == "finite" else 300  # as dp._check_tractable counts
        # dp.solve reports "intractable" without computing past its own ceilings, so only tractable work counts;
        # the doublings may multiply the first solve's work, up to the server's DP budget
        if states <= 3_000_000 and work * dp_iters <= limits.dp_max_work:
            est.dp_flops = float(min(work * dp_iters * DP_DOUBLING_ALLOWANCE, limits.dp_max_work))
            dp_bytes = min(float(entries), 12e6) * 8 * 4  # value + policy tables, a few live copies
        # the transition build: settle() on (available levels x demand support) arrays, ~5 int64 copies
        dp_bytes += float(b.A) * max(support, b.A) * 8 * 5

    est.memory_bytes = peak_state + demand_bytes + dp_bytes
    est.seconds = (est.total_cells / MC_CELLS_PER_SECOND + est.dp_flops / DP_FLOPS_PER_SECOND
                   + est.conv_flops / CONV_FLOPS_PER_SECOND)
    return est


def check(problem: Problem, plan: Plan = Plan(), limits: Limits = DEFAULT_LIMITS) -> Estimate:
    """The estimate, or ResourceLimitError naming the input to change and the limit it crosses."""
    if plan.replications > limits.max_replications:
        raise ResourceLimitError("replications", plan.replications, f"the limit is {limits.max_replications}")
    if plan.extra_policies > limits.max_policies:
        raise ResourceLimitError("evaluate", plan.extra_policies, f"at most {limits.max_policies} policies")
    est = estimate(problem, plan, limits)
    search = sum(v for k, v in est.mc_cells.items() if k != "final_scoring")
    over_cells = est.total_cells > limits.max_mc_cells
    over_mem = est.memory_bytes > limits.max_memory_bytes
    over_time = est.seconds > limits.max_seconds
    if not (over_cells or over_mem or over_time):
        return est
    what = (f"needs ~{_short(est.total_cells)} Monte Carlo cells (limit {_short(limits.max_mc_cells)}), "
            f"~{est.memory_bytes / 2**20:.0f} MiB (limit {limits.max_memory_bytes / 2**20:.0f} MiB), "
            f"~{est.seconds:.0f} s (limit {limits.max_seconds:.0f} s)")
    # name the input whose reduction helps most
    if est.mc_cells.get("final_scoring", 0.0) >= search and est.mc_cells.get("final_scoring", 0.0) > 0:
        if plan.replications > 100:
            raise ResourceLimitError("replications", plan.replications, what + "; use fewer replications")
        raise ResourceLimitError("time_horizon", problem.horizon, what + "; shorten the horizon")
    if est.dp_flops / DP_FLOPS_PER_SECOND > est.total_cells / MC_CELLS_PER_SECOND:
        if problem.horizon > 365:
            raise ResourceLimitError("time_horizon", problem.horizon,
                                     what + "; the exact DP dominates: shorten the horizon or use method ss")
        raise ResourceLimitError("lead_time", problem.lead_time,
                                 what + "; the exact DP dominates (its state grows with the lead time): use method ss")
    if problem.max_inventory * 10 > problem.horizon:
        raise ResourceLimitError("max_inventory", problem.max_inventory,
                                 what + "; the policy search spans every level up to max_inventory")
    raise ResourceLimitError("time_horizon", problem.horizon, what + "; shorten the horizon")
