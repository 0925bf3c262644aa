"""Supply-chain resilience track: a multi-echelon plan LP hit by a disruption.

Plants -> warehouses -> customers over periods, with plant capacities, lane capacities, warehouse
inventory (safety stock as a lower bound, storage as an upper bound) and service-level rows
``sum_w deliver[w,c,t] >= sl * demand[c,t]``. A disruption (plant outage, lane loss, demand spike)
makes demand exceed capacity. The disrupted elements are *locked* (an agent cannot wish the plant back);
recovery must use the stated levers, each with a cost:

* reroute: open a reserve lane (upper bound 0 -> its capacity), cost per unit in the objective;
* inventory: lower a warehouse's safety stock, or buy extra initial stock (balance right-hand side);
* service: relax a service-level row (lost sales, penalty per unit shown in the lever table).

Metrics map onto the benchmark's: recovery (RR@k), bottleneck identification (DA against the disrupted
elements), service level kept (delivered / demand at the recovered plan), steps (solver calls).
"""

from __future__ import annotations

import numpy as np

from ordebug.env import EpisodeLog, family
from ordebug.generators import _Builder
from ordebug.iis import compute_iis
from ordebug.instances import Instance, size_tier
from ordebug.model import INF, LinearModel
from ordebug.solver import SOLVER_SETTINGS, solve, solver_version

DISRUPTIONS = ("plant_outage", "lane_loss", "demand_spike")


def supply_plan(n_plants: int = 3, n_wh: int = 3, n_cust: int = 6, n_periods: int = 4, seed: int = 0,
                tight_lanes: bool = False) -> tuple[LinearModel, dict]:
    """A feasible plan LP plus the data the disruption and lever tables need.

    `tight_lanes`: the L regular lanes together carry (1 + 0.6/L) times the mean period demand (a
    network whose bottleneck is transport, not production): enough for the plan, with inventory
    smoothing the peaks, but the L - 1 surviving lanes of a lost lane fall short over the horizon. With
    the default per-warehouse sizing a lost lane was always rerouted (0 of 24 broke a plan)."""
    rng = np.random.default_rng(seed)
    b = _Builder(f"supply_{n_plants}x{n_wh}x{n_cust}x{n_periods}_s{seed}")
    demand = np.round(rng.uniform(10, 30, (n_cust, n_periods)), 1)
    total = demand.sum(axis=0)
    # Little slack on purpose: a resilience plan is interesting when a disruption can break it.
    pcap = np.round(total.max() * 1.1 / n_plants * rng.uniform(0.95, 1.05, n_plants), 1)
    lanes = {(p, w) for p in range(n_plants) for w in range(n_wh) if (p + w) % n_wh != 2 or n_wh < 3}
    reserve = {(p, w) for p in range(n_plants) for w in range(n_wh)} - lanes
    n_lanes_in = max(1, len(lanes) // n_wh)
    lane_cap = float(np.round(total.max() * 1.25 / (n_wh * n_lanes_in) * 1.15, 1))
    if tight_lanes:
        lane_cap = float(np.round(total.mean() * (1.0 + 0.6 / len(lanes)) / len(lanes), 1))
    dlv_cap = np.round(demand.max(axis=1) * 1.3, 1)
    levers = []
    prod, ship, dlv, inv = {}, {}, {}, {}
    for p in range(n_plants):
        for t in range(n_periods):
            prod[p, t] = b.col(f"prod_p{p}_t{t}", cost=float(np.round(rng.uniform(2, 4), 1)), ub=float(pcap[p]))
    for p, w in sorted(lanes | reserve):
        for t in range(n_periods):
            is_res = (p, w) in reserve
            ship[p, w, t] = b.col(f"ship_p{p}_w{w}_t{t}", cost=8.0 if is_res else float(np.round(rng.uniform(1, 3), 1)),
                                  ub=0.0 if is_res else lane_cap)
            if is_res:
                levers.append({"lever": "reroute", "op": "set_bound", "col": f"ship_p{p}_w{w}_t{t}", "side": "upper",
                               "max": lane_cap, "unit_cost": 8.0})
    for w in range(n_wh):
        for c in range(n_cust):
            for t in range(n_periods):
                dlv[w, c, t] = b.col(f"dlv_w{w}_c{c}_t{t}", cost=float(np.round(rng.uniform(1, 4), 1)),
                                     ub=float(dlv_cap[c]))
    ss = np.round(total.mean() / n_wh * 0.3, 1)
    for w in range(n_wh):
        for t in range(n_periods):
            inv[w, t] = b.col(f"inv_w{w}_t{t}", cost=0.2, lb=float(ss), ub=float(np.round(total.max(), 1)))
            levers.append({"lever": "safety_stock", "op": "set_bound", "col": f"inv_w{w}_t{t}", "side": "lower",
                           "max": 0.0, "unit_cost": 0.5})
    init = float(np.round(ss * 1.5, 1))
    for p in range(n_plants):
        for t in range(n_periods):
            b.row(f"flow_p{p}_t{t}", [(ship[p, w, t], 1.0) for w in range(n_wh) if (p, w, t) in ship] + [(prod[p, t], -1.0)],
                  lower=0.0, upper=0.0)
    for w in range(n_wh):
        for t in range(n_periods):
            terms = [(ship[p, w, t], 1.0) for p in range(n_plants) if (p, w, t) in ship]
            terms += [(dlv[w, c, t], -1.0) for c in range(n_cust)] + [(inv[w, t], -1.0)]
            rhs = 0.0
            if t > 0:
                terms.append((inv[w, t - 1], 1.0))
            else:
                rhs = -init
                levers.append({"lever": "initial_stock", "op": "set_rhs", "row": f"whbal_w{w}_t0", "max": -4 * init,
                               "unit_cost": 3.0})
            b.row(f"whbal_w{w}_t{t}", terms, lower=rhs, upper=rhs)
    for c in range(n_cust):
        for t in range(n_periods):
            b.row(f"serve_c{c}_t{t}", [(dlv[w, c, t], 1.0) for w in range(n_wh)], lower=float(demand[c, t]))
            levers.append({"lever": "service_level", "op": "set_rhs", "row": f"serve_c{c}_t{t}",
                           "max": float(np.round(0.8 * demand[c, t], 1)), "unit_cost": 20.0})
    data = {"demand": demand, "n_plants": n_plants, "n_wh": n_wh, "n_cust": n_cust, "n_periods": n_periods,
            "levers": levers}
    return b.build(), data


def disrupt(model: LinearModel, data: dict, kind: str, rng: np.random.Generator) -> tuple[LinearModel, list[str], str]:
    """Apply a disruption; returns (model, disrupted element keys, description)."""
    new = model.copy()
    T = data["n_periods"]
    t0 = int(rng.integers(0, max(1, T // 2)))
    if kind == "plant_outage":
        p = int(rng.integers(0, data["n_plants"]))
        cols = [f"prod_p{p}_t{t}" for t in range(t0, T)]
        for c in cols:
            new.col_upper[new.col(c)] = 0.0
        return new, [f"col:{c}" for c in cols], f"plant p{p} down from period {t0}"
    if kind == "lane_loss":
        lanes = sorted({n.rsplit("_t", 1)[0] for n in model.col_names if n.startswith("ship_")
                        and model.col_upper[model.col(n)] > 0})
        # The busiest lane at the plan's optimum: losing an idle lane is no disruption.
        x = solve(model).x
        flow = {ln: sum(x[model.col(f"{ln}_t{t}")] for t in range(T)) for ln in lanes}
        lane = max(lanes, key=lambda ln: (flow[ln], rng.random()))
        cols = [f"{lane}_t{t}" for t in range(T)]
        for c in cols:
            new.col_upper[new.col(c)] = 0.0
        return new, [f"col:{c}" for c in cols], f"lane {lane[5:]} lost"
    if kind == "demand_spike":
        c = int(rng.integers(0, data["n_cust"]))
        rows = [f"serve_c{c}_t{t}" for t in range(t0, T)]
        for r in rows:
            i = new.row(r)
            new.row_lower[i] = float(np.round(new.row_lower[i] * 1.5 * data["n_wh"], 1))
        return new, [f"row:{r}" for r in rows], f"demand of customer c{c} x{1.5 * data['n_wh']:g} from period {t0}"
    raise ValueError(f"disruption must be one of {list(DISRUPTIONS)}, got {kind!r}")


def build_resilience(n: int = 24, seed: int = 0, iis_time_limit: float = 10.0) -> list[Instance]:
    """Up to `n` infeasible disrupted plans (disruptions that leave the plan feasible are skipped)."""
    out: list[Instance] = []
    rng = np.random.default_rng(seed)
    k = 0
    while len(out) < n and k < 6 * n:
        kind = DISRUPTIONS[k % len(DISRUPTIONS)]
        size = [(3, 3, 6, 4), (4, 3, 10, 6), (6, 4, 20, 8)][(k // 3) % 3]  # every kind at every size
        model, data = supply_plan(*size, seed=seed * 1000 + k, tight_lanes=kind == "lane_loss")
        k += 1
        base = solve(model)
        if not base.optimal:
            continue
        bad, root, desc = disrupt(model, data, kind, rng)
        if solve(bad).status != "infeasible":
            continue
        iis = compute_iis(bad, time_limit=iis_time_limit)
        if iis.status != "infeasible":
            continue
        levers = [dict(lv) for lv in data["levers"] if f"col:{lv.get('col')}" not in root]
        for lv in levers:  # a spiked demand can only be served in part: its lost-sales lever scales with it
            if f"row:{lv.get('row')}" in root:
                lv["max"] = float(np.round(0.5 * bad.row_lower[bad.row(lv["row"])], 1))
        locked = [r for r in root if r.startswith("col:")]  # capacity lost is lost; demand can be rationed
        out.append(Instance(
            instance_id=f"resilience:{model.name}:{kind}", split="resilience", source=model.name, model=bad,
            operator=kind, root=root, edit={"kind": kind}, description=desc, original_objective=base.objective,
            iis=iis.to_json(), iis_contains_root=bool(set(root) & iis.elements()), solver=solver_version(),
            settings=dict(SOLVER_SETTINGS), size_tier=size_tier(model.num_rows),
            iis_tier="small" if iis.size <= 3 else ("medium" if iis.size <= 10 else "large"),
            meta={"track": "resilience", "locked": locked, "levers": levers,
                  "demand": {f"serve_c{c}_t{t}": float(data["demand"][c, t]) for c in range(data["n_cust"])
                             for t in range(data["n_periods"])}},
            original=bad))
    return out


def resilience_metrics(instance: Instance, log: EpisodeLog) -> dict:
    """Service level kept (delivered / demand, demand after the disruption) and bottleneck identification."""
    demand = instance.meta.get("demand", {})
    m = instance.model
    served = total = 0.0
    for row in demand:
        i = m.row(row)
        dem = float(m.row_lower[i])  # the demand the plan must serve, spike included
        total += dem
        if log.final_x is not None:
            cols, vals = m.row_entries(i)
            served += min(dem, float(vals @ log.final_x[cols]))
    suspects = set(log.diagnosis_root)
    return {"service_level": served / total if total and log.final_x is not None else 0.0,
            "bottleneck_found": float(bool(suspects & set(instance.root)))}


class ResilienceHeuristic:
    """Cheapest-lever-first recovery: name the locked IIS element as the bottleneck, then pull levers
    in increasing unit cost (reroute, safety stock, initial stock, service level) until the plan solves."""

    name = "heuristic"

    @staticmethod
    def _demand_outliers(env, conflict: list[str]) -> list[str]:
        """Service rows in the conflict whose demand is far above the same customer's other periods."""
        out = []
        for el in conflict:
            name = el.split(":", 1)[1]
            if not (el.startswith("row:") and name.startswith("serve_")):
                continue
            mine = env.step({"op": "inspect_row", "name": name})["rhs"]
            prefix = name.rsplit("_t", 1)[0] + "_t"
            others = [env.step({"op": "inspect_row", "name": r})["rhs"]
                      for r in env.step({"op": "list_rows", "family_pattern": family(name)})["rows"]
                      if r.startswith(prefix) and r != name]
            if others and mine > 2.0 * float(np.median(others)):
                out.append(el)
        return out

    def run(self, env) -> None:
        iis = env.step({"op": "get_iis"}) if env.allow_iis else {}
        locked = set(env.instance.meta.get("locked", []))
        conflict = [f"row:{r}" for r, _ in iis.get("rows", [])] + [f"col:{c}" for c, _ in iis.get("col_bounds", [])]
        bottleneck = [e for e in conflict if e in locked] or self._demand_outliers(env, conflict) or conflict[:1]
        in_iis = set(conflict)
        levers = sorted(env.instance.meta.get("levers", []), key=lambda lv: lv["unit_cost"])
        groups: dict[str, list[dict]] = {}
        for lv in levers:
            groups.setdefault(lv["lever"], []).append(lv)
        stages = [("reroute", False), ("safety_stock", False), ("initial_stock", False), ("service_level", True),
                  ("service_level", False)]
        for name, conflict_only in stages:
            group = groups.get(name, [])
            if conflict_only:  # lost sales are expensive: first only the service rows in conflict
                group = [lv for lv in group if f"row:{lv['row']}" in in_iis]
            for lv in group:
                if lv["op"] == "set_bound":
                    env.step({"op": "set_bound", "col": lv["col"], "side": lv["side"], "value": lv["max"]})
                else:
                    env.step({"op": "set_rhs", "row": lv["row"], "value": lv["max"]})
            if not group:
                continue
            res = env.step({"op": "solve"})
            if res.get("status") == "optimal" or env.calls_left < 1:
                break
        env.step({"op": "diagnose", "root_cause": bottleneck or ["row:?"], "conflict": conflict})
        env.step({"op": "submit"})


def is_locked(instance: Instance, key: str) -> bool:
    return key in set(instance.meta.get("locked", []))


__all__ = ["DISRUPTIONS", "INF", "ResilienceHeuristic", "build_resilience", "disrupt", "resilience_metrics",
           "supply_plan", "is_locked"]
