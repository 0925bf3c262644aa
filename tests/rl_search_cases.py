"""Small instances and a base-stock rule shared by the tests of the searches after training (rl.opening,
rl.residual): lost sales, Poisson(4), p = 9, caps that rarely bind."""

from inventory import policies
from inventory.demand import Demand
from inventory.problem import Problem


def small_problem(horizon: int, **kw) -> Problem:
    base = dict(horizon=horizon, demand=Demand.poisson(4), lost_sales=True, holding_cost=1.0, penalty_cost=9.0,
                setup_cost=0.0, lead_time=2, max_inventory=40, max_order=12)
    base.update(kw)
    return Problem(**base)


def base_stock_fn(S: int):
    """A state-policy callable: order up to S on the inventory position."""
    return lambda on, pipe, t: policies.base_stock_rule(on + pipe.sum(axis=1), S)
