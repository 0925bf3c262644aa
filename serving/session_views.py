"""What the web page shows once a session has a policy: simulated inventory over the horizon (an SVG drawn here,
no plotting library, no CDN), today's order (the interpretation agent's tool), and the deployment artifacts.

All three read the session's pickled `Consultant` and run in the replica's child process (`serving.isolation`),
like every other computation. The trajectory uses the one set of inventory rules (`inventory.dynamics.step`) on
the project's demand sampler, with the rule the manager is told to follow (`interpretation.presented`), so the
plot, the order form and the chat agree.
"""

from __future__ import annotations

import tempfile
from html import escape
from pathlib import Path

import numpy as np

PLOT_REPLICATIONS = 200
PLOT_SEED = 0
MAX_POINTS = 400  # longer horizons are drawn every k-th day
W, H, LEFT, RIGHT, TOP, BOTTOM = 640, 276, 48, 16, 16, 52
ARTIFACT_FILES = ("config.json", "policy_evaluation_results.csv")  # optimization.artifacts' CONFIG_FILE, RESULTS_FILE


def _session(blob: bytes):
    import cloudpickle

    session = cloudpickle.loads(blob)
    if session.result is None or session.interpreter is None:
        from serving.isolation import Refused

        raise Refused(409, "session_id: no policy yet; finish the interview first", "session_id")
    return session


def trajectory(result, replications: int = PLOT_REPLICATIONS, seed: int = PLOT_SEED) -> dict:
    """On-hand stock at the end of each day under the presented rule: mean, 10th/90th percentiles, one path."""
    from agents.interpretation import presented
    from inventory.dynamics import initial_state, inventory_position, step
    from inventory.sampling import demand_paths

    problem = result.problem
    rule = presented(result)
    policy = result.policy_for(rule.name)
    T = problem.horizon
    demand = demand_paths(problem.demand, replications, T, seed, compiled=False)  # (T, R); no JIT wait
    on_hand, pipeline = initial_state(problem, (replications,))
    stock = np.empty((T, replications), dtype=np.int64)
    position = np.empty((T, replications), dtype=np.int64)
    orders = np.empty((T, replications), dtype=np.int64)
    for t in range(T):
        if policy.needs_state:
            raw = np.asarray(policy.order_from_state(on_hand[None], pipeline[None], t))[0]
        else:
            raw = np.asarray(policy.order_from_position(inventory_position(on_hand, pipeline)[None], t))[0]
        s = step(problem, on_hand, pipeline, raw, demand[t])
        on_hand, pipeline = s.on_hand, s.pipeline
        stock[t], orders[t], position[t] = on_hand, s.order, inventory_position(on_hand, pipeline)
    return {"policy": rule.label, "params": {k: float(v) for k, v in rule.params.items()},
            "days": T, "replications": replications, "max_inventory": problem.max_inventory,
            "mean": stock.mean(axis=1).tolist(), "p10": np.percentile(stock, 10, axis=1).tolist(),
            "p90": np.percentile(stock, 90, axis=1).tolist(), "path": stock[:, 0].tolist(),
            "position": position.mean(axis=1).tolist(),
            "orders_per_day": float((orders > 0).mean())}


def _fmt(v: float) -> str:
    return f"{v:.1f}"


def inventory_svg(tr: dict) -> str:
    """The trajectory as an SVG: 10-90% band, mean, one simulated path, the rule's levels, labelled axes."""
    T = tr["days"]
    k = max(1, -(-T // MAX_POINTS))
    days = list(range(0, T, k))
    levels = {name: v for name, v in tr["params"].items() if name in ("s", "S")}
    top = max([1.0, *tr["p90"], *tr["path"], *tr["position"], *levels.values()]) * 1.08
    x = lambda d: LEFT + (W - LEFT - RIGHT) * (d / max(1, T - 1))  # noqa: E731
    y = lambda v: TOP + (H - TOP - BOTTOM) * (1 - v / top)  # noqa: E731

    def line(series):
        return " ".join(f"{_fmt(x(d))},{_fmt(y(series[d]))}" for d in days)

    band = line(tr["p90"]) + " " + " ".join(f"{_fmt(x(d))},{_fmt(y(tr['p10'][d]))}" for d in reversed(days))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" id="inventory-svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" role="img" aria-label="simulated inventory over the horizon">',
           f'<rect x="{LEFT}" y="{TOP}" width="{W - LEFT - RIGHT}" height="{H - TOP - BOTTOM}" fill="#fafafa" '
           'stroke="#ccc"/>']
    for i in range(5):  # y grid and ticks
        v = top / 1.08 * i / 4
        out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{_fmt(y(v))}" y2="{_fmt(y(v))}" stroke="#eee"/>'
                   f'<text x="{LEFT - 4}" y="{_fmt(y(v) + 4)}" font-size="10" text-anchor="end">{v:.0f}</text>')
    for i in range(6):  # x ticks
        d = round((T - 1) * i / 5)
        out.append(f'<text x="{_fmt(x(d))}" y="{H - BOTTOM + 14}" font-size="10" text-anchor="middle">{d + 1}</text>')
    out.append(f'<polygon class="band" points="{band}" fill="#2a6fb0" fill-opacity="0.18" stroke="none"/>')
    out.append(f'<polyline class="path" points="{line(tr["path"])}" fill="none" stroke="#999" stroke-width="1"/>')
    out.append(f'<polyline class="position" points="{line(tr["position"])}" fill="none" stroke="#b05a2a" '
               'stroke-width="1.5" stroke-dasharray="1 2"/>')
    out.append(f'<polyline class="mean" points="{line(tr["mean"])}" fill="none" stroke="#2a6fb0" '
               'stroke-width="2"/>')
    for name, v in levels.items():
        out.append(f'<line class="level" x1="{LEFT}" x2="{W - RIGHT}" y1="{_fmt(y(v))}" y2="{_fmt(y(v))}" '
                   f'stroke="#b05a2a" stroke-dasharray="4 3"/><text x="{W - RIGHT - 2}" y="{_fmt(y(v) - 3)}" '
                   f'font-size="10" text-anchor="end" fill="#b05a2a">{escape(name)} = {v:g}</text>')
    mid = (LEFT + W - RIGHT) / 2
    out.append(f'<text x="{mid}" y="{H - 20}" font-size="11" text-anchor="middle">day (on hand at the end of the '
               f'day, {tr["replications"]} simulated runs: mean, 10-90% band, one run)</text>'
               f'<text x="{mid}" y="{H - 5}" font-size="11" text-anchor="middle">dotted: mean stock position = on '
               'hand + on the way (what s and S apply to)</text>')
    out.append(f'<text x="12" y="{(TOP + H - BOTTOM) / 2}" font-size="11" text-anchor="middle" '
               f'transform="rotate(-90 12 {(TOP + H - BOTTOM) / 2})">units on hand</text></svg>')
    return "".join(out)


# ---- tasks run in the child process ------------------------------------------------------------------------

def plot_task(blob: bytes) -> str:
    return inventory_svg(trajectory(_session(blob).result))


def order_task(blob: bytes, on_hand: int, in_transit: int) -> dict:
    """The interpretation agent's `calculate_order` tool, with a sentence for the page."""
    session = _session(blob)
    out = session.interpreter.calculate_order(on_hand, in_transit)
    units = "unit" if out["order"] == 1 else "units"
    out["answer"] = (f"Order {out['order']} {units} now: {out['on_hand']} on hand + {out['in_transit']} on the "
                     f"way = stock position {out['position']}; {out['policy']}.")
    return out


def artifacts_task(blob: bytes) -> dict[str, bytes]:
    """config.json and policy_evaluation_results.csv, written by `optimization.artifacts` for this session."""
    from optimization.artifacts import write_artifacts

    result = _session(blob).result
    with tempfile.TemporaryDirectory() as tmp:
        write_artifacts(result, Path(tmp))
        return {name: (Path(tmp) / name).read_bytes() for name in ARTIFACT_FILES}
