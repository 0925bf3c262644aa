"""The page's inventory plot (serving/session_views.py) without a server: the trajectory follows the one set of
inventory rules, and the SVG is self-contained."""

from types import SimpleNamespace

from inventory.policies import SSPolicy
from inventory.spec import ParameterTable
from serving.session_views import inventory_svg, trajectory

GT = {"time_horizon": 9, "demand_type": "deterministic", "demand_distribution": "5",
      "perishability": "non_perishable", "state_transition_model": "lost_sale", "holding_cost": 0.5,
      "penalty_cost": 3, "setup_cost": 2, "lead_time": 0, "max_inventory": 40, "max_order": 30,
      "risk_tolerance": 0}


def _result(**changes):
    problem = ParameterTable.from_json({**GT, **changes}).to_problem()
    rule = SimpleNamespace(name="ss", label="(s=10, S=20)", params={"s": 10, "S": 20})
    return SimpleNamespace(problem=problem, winner=rule, best_ss=rule,
                           policy_for=lambda name: SSPolicy(s=10, S=20))


def test_trajectory_follows_the_rule_by_hand():
    # demand 5 a day, no lead time: order up to 20 whenever the position is below 10, then sell 5
    tr = trajectory(_result(), replications=7)
    assert tr["mean"] == [15, 10, 5, 15, 10, 5, 15, 10, 5] == tr["path"] == tr["p10"] == tr["p90"]
    assert tr["position"] == tr["mean"] and tr["days"] == 9 and tr["params"] == {"s": 10.0, "S": 20.0}


def test_lead_time_puts_stock_on_the_way():
    tr = trajectory(_result(lead_time=2), replications=3)
    assert tr["mean"][:2] == [0, 0]  # the first order arrives on day 3; sales before it are lost
    assert tr["position"][0] == 20 and tr["position"][0] > tr["mean"][0]


def test_svg_is_self_contained_with_one_point_per_day():
    svg = inventory_svg(trajectory(_result(time_horizon=30), replications=5))
    assert svg.startswith("<svg") and svg.endswith("</svg>") and "<script" not in svg
    assert svg.count("http") == 1  # only the xmlns
    mean = svg.split('class="mean" points="')[1].split('"')[0].split()
    assert len(mean) == 30 and 's = 10' in svg and 'S = 20' in svg
    long = inventory_svg(trajectory(_result(time_horizon=1000), replications=2))
    assert len(long.split('class="mean" points="')[1].split('"')[0].split()) <= 400  # long horizons thinned
