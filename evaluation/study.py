"""Study configuration, the unit list, and seeds.

A study is instances x treatments x trials. Each (instance, treatment, trial) is one *unit* and one row of
results. Seeds come from the config alone (the study seed and the unit's key), never from run order, the
study's name or the output folder, so any unit reruns identically alone and `--out` can be anything:

* instance i:            derive_seed(study.seed_key, "instance", i)            (agents.generator)
* dialogue / consultant: derive_seed(study.seed_key, instance_id, trial)        (shared by A and B of a trial,
                                                                                 so both talk to the same owner)
* Monte Carlo scoring:   derive_seed(study.seed_key, instance_id, "score")      (shared by every unit of an
                                                                                 instance: common random numbers)

`seed_key` is "study/<seed>" (config version 2). Version-1 configs, written before, rooted seeds in
"<name>/<seed>" with the name defaulting to the output folder's basename; they keep that root so a run
started then still resumes identically.
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
SEED_SCHEME = 2  # StudyConfig.version: 2 = seeds from the study seed; 1 = from "<name>/<seed>" (older runs)


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
    # LLMConfig fields of an imitator endpoint (scenario protocol: `askopt imitator serve`, the fine-tuned model);
    # None = the offline persona simulator in-process
    imitator: dict | None = None
    # USD per million tokens by model ("*" = any): {"gpt-4o": {"prompt_per_million": 2.5, "completion_per_million": 10}}
    prices: dict = field(default_factory=dict)
    version: int = SEED_SCHEME

    def __post_init__(self) -> None:
        self.treatments = tuple(self.treatments)
        if self.version not in (1, SEED_SCHEME):
            raise ValueError(f"version: {self.version!r} is not allowed; allowed: 1, {SEED_SCHEME}")
        dupes = sorted({t for t in self.treatments if self.treatments.count(t) > 1})
        if dupes:
            raise ValueError(f"treatments: {','.join(self.treatments)} is not allowed; {', '.join(dupes)} given "
                             "more than once (each treatment runs once per instance and trial)")
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
        """The root of every seed of the study: the study seed (the name is a label only). Version-1 configs
        keep their old "<name>/<seed>" root so their runs resume identically."""
        if self.version < 2:
            return f"{self.name}/{self.seed}"
        return f"study/{self.seed}"

    @property
    def offline(self) -> bool:
        """No model endpoint at all: every role is an in-process stand-in."""
        return not self.llm and not self.imitator

    def to_json(self, redact: bool = True) -> dict:
        d = asdict(self)
        for key in ("llm", "imitator"):
            if redact and d.get(key) and d[key].get("api_key"):
                d[key] = {**d[key], "api_key": "***"}
        d["treatments"] = list(self.treatments)
        return d

    @classmethod
    def from_json(cls, d: dict) -> StudyConfig:
        """A config from its JSON form, every field type-checked (pydantic) with the field named on error;
        unknown keys (from other versions) are ignored."""
        from pydantic import TypeAdapter, ValidationError

        if not isinstance(d, dict):
            raise ValueError(f"config: {type(d).__name__} is not allowed; must be an object of study settings")
        known = {f.name for f in dataclasses.fields(cls)}
        data = {k: v for k, v in d.items() if k in known}
        if "version" not in data:
            data["version"] = 1  # configs from before the version field rooted seeds in name/seed
        try:
            return TypeAdapter(cls).validate_python(data)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            loc = ".".join(str(p) for p in err.get("loc", ()))
            msg = err.get("msg", "is not allowed").removeprefix("Value error, ")
            raise ValueError(f"config.{loc}: {msg}" if loc else f"config.{msg}") from None

    def comparable(self) -> dict:
        """The fields that must match for --resume (everything that changes results)."""
        d = self.to_json()
        d.pop("units_per_task", None)
        if self.version >= 2:
            d.pop("name", None)  # a label: seeds do not depend on it
        for key in ("llm", "imitator"):
            if d.get(key):
                d[key] = {k: v for k, v in d[key].items() if k in ("base_url", "model", "temperature")}
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
    """The StudyConfig in OUT/config.json; ValueError naming the file and the field when it is not one."""
    path = Path(out) / CONFIG_FILE
    try:
        text = path.read_text()
    except IsADirectoryError:
        raise ValueError(f"{path}: is a directory, not a study config") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: is not UTF-8 text") from None
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise ValueError(f"{path}: is nested too deeply to be a study config") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("config"), dict):
        raise ValueError(f"{path}: has no \"config\" object; is this a run directory written by askopt study?")
    try:
        return StudyConfig.from_json(payload["config"])
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
