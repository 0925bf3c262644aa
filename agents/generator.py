"""Problem Generator: seeded study instances (a one-line business context + the ground-truth Problem).

Two sources, one output type (`Instance`):

* `generate_instance` / `generate_instances`: procedural, deterministic in (study seed, index), following the
  paper's sampling rules (see `RULES`). Every random draw comes from a generator seeded by a hash of
  (study, "instance", index), so instance 17 of a study is the same whatever else is generated.
* `LLMGenerator`: asks a chat model with the paper-style generator prompt, then validates the reply with the
  core (`ParameterTable.from_json(...).to_problem()`); an invalid reply is re-asked with the error and, after
  `max_attempts`, recorded as a `GenerationFailure` rather than patched up.

Holding cost convention (documented choice): the paper says "about 30% of the item cost"; we read it as the
usual annual carrying rate, so h = 0.3 x item cost / 365 per unit per day, rounded to cents (min $0.01).
Item costs are drawn per kind of shop ($30-$1,500), giving h between $0.02 and $1.23 a day; the paper's
bike-shop example (h = 0.5) is a ~$600 bike.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

import numpy as np

from inventory.demand import Demand
from inventory.problem import Problem
from inventory.spec import ParameterTable

RULES = {
    "holding_cost": "0.3 * item_cost / 365 per unit per day, rounded to cents (min 0.01)",
    "critical_ratio": "p/(p+h) ~ U(0.80, 0.90) with prob 0.85, else U(0.55, 0.80) or U(0.90, 0.97)",
    "penalty_cost": "h * r / (1 - r), rounded to cents",
    "setup_cost": "integer U{0..5} with prob 0.85, else U{6..20}",
    "demand": "random 90%: normal(m, m/3) 40%, poisson(m) 40%, uniform(m/2, 3m/2) 20%; else deterministic",
    "demand_mean": "U(2, 12) units/day",
    "transition": "lost_sale or backlog, 50/50",
    "lead_time": "integer U{1..10} days",
    "max_inventory": "U{40..100} step 5",
    "max_order": "U{10..min(50, max_inventory)} step 5",
    "risk_tolerance": "integer U{0..5} with prob 0.7, else U{-10..10}",
    "horizon": "U{30..120} step 10 days",
    "perishable": "never (non-perishable goods)",
}

# (kind of shop, product, item cost low, high in $)
SHOPS: tuple[tuple[str, str, float, float], ...] = (
    ("neighbourhood bike shop", "commuter bikes", 350, 900),
    ("phone accessories store", "fast phone chargers", 40, 120),
    ("hardware store", "cordless drills", 60, 250),
    ("garden centre", "ceramic planters", 30, 110),
    ("bookshop", "hardcover atlases", 35, 90),
    ("outdoor outfitter", "two-person tents", 120, 450),
    ("kitchenware boutique", "cast-iron skillets", 40, 140),
    ("toy shop", "wooden train sets", 45, 160),
    ("music store", "acoustic guitars", 150, 800),
    ("pet supply store", "dog crates", 50, 200),
    ("office supply shop", "ergonomic chairs", 150, 600),
    ("electronics kiosk", "bluetooth speakers", 40, 220),
    ("sporting goods store", "tennis rackets", 60, 250),
    ("home appliance dealer", "microwave ovens", 90, 350),
    ("camera shop", "camera tripods", 60, 300),
    ("furniture showroom", "bedside tables", 120, 500),
    ("craft supply store", "sewing machines", 150, 700),
    ("auto parts store", "car batteries", 80, 250),
    ("gaming store", "game controllers", 45, 90),
    ("lighting shop", "designer floor lamps", 90, 400),
    ("ski rental and retail shop", "ski helmets", 60, 220),
    ("marine supply store", "life jackets", 50, 180),
    ("computer store", "mechanical keyboards", 60, 220),
    ("watch retailer", "dive watches", 300, 1500),
    ("school uniform supplier", "winter blazers", 40, 120),
)

PAPER_CELLS = ("poisson-L1", "poisson-L7", "normal-L7")
DESIGNS = ("random", "paper-cells")


def derive_seed(*parts: object) -> int:
    """A stable 63-bit seed from any parts (sha256 of their joined text): no dependence on hash() salting."""
    text = "|".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") & ((1 << 63) - 1)


@dataclass(frozen=True)
class Instance:
    """One study case: what the owner says about the business, and the truth the answers come from."""

    instance_id: str
    index: int
    context: str
    problem: Problem
    cell: str
    item_cost: float
    critical_ratio: float
    source: str = "procedural"

    def to_dict(self) -> dict:
        return {
            "instance_id": self.instance_id,
            "index": self.index,
            "context": self.context,
            "problem": self.problem.to_dict(),
            "cell": self.cell,
            "item_cost": self.item_cost,
            "critical_ratio": self.critical_ratio,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Instance:
        d = dict(d)
        d["problem"] = Problem.from_dict(d["problem"])
        return cls(**d)


def natural_cell(problem: Problem) -> str:
    """The report's cell for an instance of the random design: demand kind x lead-time band."""
    band = "L1-3" if problem.lead_time <= 3 else ("L4-6" if problem.lead_time <= 6 else "L7-10")
    return f"{problem.demand.kind}-{band}"


def _round_to(x: float, step: int) -> int:
    return int(step * round(x / step))


def generate_instance(study_seed: object, index: int, design: str = "random") -> Instance:
    """Instance `index` of a study: a pure function of (study_seed, index, design)."""
    if design not in DESIGNS:
        raise ValueError(f"design: {design!r} is not allowed; allowed: {', '.join(DESIGNS)}")
    rng = np.random.default_rng(derive_seed(study_seed, "instance", index))
    shop, product, lo, hi = SHOPS[int(rng.integers(len(SHOPS)))]
    item_cost = round(float(rng.uniform(lo, hi)), 2)
    h = max(0.01, round(0.3 * item_cost / 365, 2))
    u = rng.random()
    if u < 0.85:
        ratio = float(rng.uniform(0.80, 0.90))
    elif u < 0.93:
        ratio = float(rng.uniform(0.55, 0.80))
    else:
        ratio = float(rng.uniform(0.90, 0.97))
    p = round(h * ratio / (1 - ratio), 2)
    setup = float(rng.integers(0, 6)) if rng.random() < 0.85 else float(rng.integers(6, 21))
    mean = float(rng.uniform(2, 12))
    v = rng.random()
    if v < 0.36:
        demand = Demand.normal(round(mean, 1), round(mean / 3, 2))
    elif v < 0.72:
        demand = Demand.poisson(round(mean, 1))
    elif v < 0.90:
        demand = Demand.uniform(max(0, round(mean / 2)), round(1.5 * mean))
    else:
        demand = Demand.deterministic(max(1, round(mean)))
    lost = bool(rng.random() < 0.5)
    lead = int(rng.integers(1, 11))
    max_inv = _round_to(rng.uniform(40, 100), 5)
    max_order = min(50, max_inv, _round_to(rng.uniform(10, min(50, max_inv)), 5))
    risk = float(rng.integers(0, 6)) if rng.random() < 0.7 else float(rng.integers(-10, 11))
    horizon = _round_to(rng.uniform(30, 120), 10)
    cell = ""
    if design == "paper-cells":
        cell = PAPER_CELLS[index % len(PAPER_CELLS)]
        kind, lead_s = cell.split("-L")
        lead = int(lead_s)
        m = round(mean, 1)
        demand = Demand.poisson(m) if kind == "poisson" else Demand.normal(m, round(m / 3, 2))
    problem = Problem(
        horizon=horizon,
        demand=demand,
        lost_sales=lost,
        holding_cost=h,
        penalty_cost=p,
        setup_cost=setup,
        lead_time=lead,
        max_inventory=max_inv,
        max_order=max_order,
        risk_tolerance=risk,
    )
    article = "An" if shop[0] in "aeiou" else "A"
    context = (
        f"{article} {shop} that sells {product}, bought from the supplier at about ${item_cost:,.0f} each; "
        f"{'unmet demand is lost' if lost else 'customers will wait for back-ordered units'}."
    )
    return Instance(
        instance_id=f"i{index:04d}",
        index=index,
        context=context,
        problem=problem,
        cell=cell or natural_cell(problem),
        item_cost=item_cost,
        critical_ratio=round(p / (p + h), 4) if p + h > 0 else math.nan,
    )


def generate_instances(n: int, study_seed: object = 0, design: str = "random") -> list[Instance]:
    if n < 1:
        raise ValueError(f"instances: {n!r} is not allowed; must be >= 1")
    return [generate_instance(study_seed, i, design) for i in range(n)]


# ---- LLM generator --------------------------------------------------------------------------------------------


@dataclass
class GenerationFailure:
    """A generator reply the core rejected every time; kept so the study reports it instead of hiding it."""

    index: int
    attempts: int
    errors: list[str] = field(default_factory=list)
    last_reply: str = ""


class LLMGenerator:
    """Instances from a chat model with the paper-style prompt, validated by the core before use."""

    def __init__(self, client, max_attempts: int = 3):
        self.client = client
        self.max_attempts = max_attempts

    def generate(self, index: int, seed: int = 0) -> Instance | GenerationFailure:
        from agents.study_prompts import GENERATOR_SYSTEM, GENERATOR_USER
        from llm.client import extract_json_object

        messages = [
            {"role": "system", "content": GENERATOR_SYSTEM},
            {"role": "user", "content": GENERATOR_USER.format(index=index, seed=seed)},
        ]
        errors: list[str] = []
        reply = ""
        for _attempt in range(self.max_attempts):
            reply = self.client.chat(messages).content or ""
            try:
                return self._validate(index, extract_json_object(reply))
            except (ValueError, KeyError, TypeError) as exc:
                errors.append(str(exc))
                messages = [
                    *messages,
                    {"role": "assistant", "content": reply},
                    {"role": "user", "content": f"That case is invalid: {exc}. Reply again with one corrected JSON object."},
                ]
        return GenerationFailure(index=index, attempts=self.max_attempts, errors=errors, last_reply=reply)

    @staticmethod
    def _validate(index: int, data: dict) -> Instance:
        if not isinstance(data, dict) or "parameters" not in data or not isinstance(data["parameters"], dict):
            raise ValueError("reply must be an object with 'context' and a 'parameters' object")
        context = str(data.get("context") or "").strip()
        if not context:
            raise ValueError("context: must be a non-empty sentence")
        problem = ParameterTable.from_json(data["parameters"]).to_problem()
        if problem.perishable:
            raise ValueError("perishability: the study uses non-perishable goods only")
        h, p = problem.holding_cost, problem.penalty_cost
        item_cost = float(data.get("item_cost") or round(h * 365 / 0.3, 2))
        return Instance(
            instance_id=f"g{index:04d}",
            index=index,
            context=context.splitlines()[0],
            problem=problem,
            cell=natural_cell(problem),
            item_cost=item_cost,
            critical_ratio=round(p / (p + h), 4) if p + h > 0 else math.nan,
            source="llm",
        )
