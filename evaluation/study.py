"""Study configuration, the unit list, and seeds.

A study is instances x treatments x trials. Each (instance, treatment, trial) is one *unit* and one row of
results. Seeds are sha256-derived from names, never from run order, so any unit reruns identically alone:

* instance i:            derive_seed(study.seed_key, "instance", i)            (agents.generator)
* dialogue / consultant: derive_seed(study.seed_key, instance_id, trial)        (shared by A and B of a trial,
                                                                                 so both talk to the same owner)
* Monte Carlo scoring:   derive_seed(study.seed_key, instance_id, "score")      (shared by every unit of an
                                                                                 instance: common random numbers)
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from agents.generator import DESIGNS, Instance, derive_seed, generate_instances

TREATMENTS = ("A", "B", "C")
TREATMENT_NAMES = {
    "A": "hybrid (dialogue -> Optimization Agent)",
    "B": "end-to-end consultant (talks with the owner)",
    "C": "end-to-end consultant given the true parameter file",
}
CONFIG_FILE = "config.json"


@dataclass
class StudyConfig:
    """Everything that decides a study's results (stored as config.json beside them)."""

    name: str = "study"
    instances: int = 12
    trials: int = 1
    treatments: tuple[str, ...] = TREATMENTS
    design: str = "random"  # random | paper-cells
    persona: str = "typical"  # an imitator persona, or "mixed" (cycled by instance)
    seed: int = 0
    replications: int = 1000  # Monte Carlo scoring replications (common random numbers per instance)
    dp_max_states: int = 300_000  # exact optimum / exact policy cost only below this many DP states
    dp_max_work: float = 5e9
    opt_replications: int = 1000  # Optimization Agent final scoring
    opt_search_replications: int = 300
    dqn: bool = False
    max_turns: int = 40
    units_per_task: int = 0  # 0: one task per instance (all its treatments and trials)
    llm: dict | None = None  # LLMConfig fields (api key never written to disk); None = offline stand-ins
    # USD per million tokens by model ("*" = any): {"gpt-4o": {"prompt_per_million": 2.5, "completion_per_million": 10}}
    prices: dict = field(default_factory=dict)
    version: int = 1

    def __post_init__(self) -> None:
        self.treatments = tuple(self.treatments)
        self.prices = dict(self.prices or {})
        from llm.client import price_for

        for model in self.prices:
            price_for(self.prices, model)  # raises ValueError naming prices[model]
        if self.design not in DESIGNS:
            raise ValueError(f"design: {self.design!r} is not allowed; allowed: {', '.join(DESIGNS)}")
        bad = [t for t in self.treatments if t not in TREATMENTS]
        if bad or not self.treatments:
            raise ValueError(f"treatments: {bad or '()'} not allowed; allowed: {', '.join(TREATMENTS)}")
        for name in ("instances", "trials", "replications"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: {v!r} is not allowed; must be a whole number >= 1")

    @property
    def seed_key(self) -> str:
        return f"{self.name}/{self.seed}"

    @property
    def offline(self) -> bool:
        return not self.llm

    def to_json(self, redact: bool = True) -> dict:
        d = asdict(self)
        if redact and d.get("llm") and d["llm"].get("api_key"):
            d["llm"] = {**d["llm"], "api_key": "***"}
        d["treatments"] = list(self.treatments)
        return d

    @classmethod
    def from_json(cls, d: dict) -> StudyConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})

    def comparable(self) -> dict:
        """The fields that must match for --resume (everything that changes results)."""
        d = self.to_json()
        d.pop("units_per_task", None)
        if d.get("llm"):
            d["llm"] = {k: v for k, v in d["llm"].items() if k in ("base_url", "model", "temperature")}
        return d


@dataclass(frozen=True)
class Unit:
    instance_id: str
    instance_index: int
    treatment: str
    trial: int

    @property
    def unit_id(self) -> str:
        return f"{self.instance_id}-{self.treatment}-t{self.trial}"


@dataclass
class StudyPlan:
    config: StudyConfig
    instances: list[Instance]
    units: list[Unit] = field(default_factory=list)

    def by_instance(self) -> dict[str, Instance]:
        return {i.instance_id: i for i in self.instances}


def plan_study(config: StudyConfig) -> StudyPlan:
    instances = generate_instances(config.instances, config.seed_key, config.design)
    units = [
        Unit(inst.instance_id, inst.index, t, trial)
        for inst in instances
        for trial in range(config.trials)
        for t in config.treatments
    ]
    return StudyPlan(config, instances, units)


def dialogue_seed(config: StudyConfig, instance_id: str, trial: int) -> int:
    return derive_seed(config.seed_key, instance_id, trial) % (2**31)


def score_seed(config: StudyConfig, instance_id: str) -> int:
    return derive_seed(config.seed_key, instance_id, "score") % (2**31)


def persona_for(config: StudyConfig, instance_index: int) -> str:
    if config.persona != "mixed":
        return config.persona
    try:
        from agents.imitator import PERSONAS

        names = sorted(PERSONAS)
    except ImportError:
        names = ["typical"]
    return names[instance_index % len(names)]


def write_config(out: Path, config: StudyConfig) -> None:
    out.mkdir(parents=True, exist_ok=True)
    from agents.study_prompts import PROMPT_VERSION

    payload = {"config": config.to_json(), "prompt_version": PROMPT_VERSION}
    (out / CONFIG_FILE).write_text(json.dumps(payload, indent=2, sort_keys=True))


def read_config(out: Path) -> StudyConfig:
    payload = json.loads((out / CONFIG_FILE).read_text())
    return StudyConfig.from_json(payload["config"])
