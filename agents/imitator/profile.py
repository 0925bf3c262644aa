"""Persona profiles: the knobs of a boundedly rational store manager, and the presets built from them.

Every knob is a probability (or count) the imitator draws from once per episode with its seeded generator,
so one (profile, seed) pair always produces the same manager. The presets span the range the extraction agent
must cope with, from a precise expert who knows his distribution to a vague novice who guesses, mixes up units
and contradicts himself.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

__all__ = ["PERSONAS", "PersonaProfile", "get_profile"]


@dataclass(frozen=True)
class PersonaProfile:
    """Per-episode noise. Probabilities are per field (unknown, imprecise, wrong units) or per episode."""

    name: str = "custom"
    p_unknown: float = 0.0  # says "not sure" the first time a field is asked
    p_imprecise: float = 0.0  # rounds numbers ("about 30 cents") or gives a range ("2 or 3 days")
    p_wrong_units: float = 0.0  # demand per week/month, holding cost per week/month/year
    p_contradiction: float = 0.0  # per episode: later restates one fact with a different value
    p_confusion: float = 0.0  # per episode: says "lost sale" but prices shortages per unit per day
    p_volunteer: float = 0.0  # per reply: adds a fact nobody asked for yet
    p_jargon: float = 0.0  # names distributions ("Poisson with mean 6") instead of plain words
    verbosity: float = 0.3  # per reply: chit-chat sentences around the answer (0 terse .. 1 chatty)
    impatience: float = 0.0  # per reply after `patience_turns`: complains and answers tersely
    patience_turns: int = 12
    opening_facts: int = 2  # facts in the opening narrative
    habits: float = 0.0  # per reply: how often the persona's verbal tics show (fillers, hedges, sign-offs)

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if name.startswith("p_") or name in ("verbosity", "impatience", "habits"):
                if not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
                    raise ValueError(f"PersonaProfile.{name} must be a probability in [0, 1], got {value!r}")
        if not isinstance(self.opening_facts, int) or not 0 <= self.opening_facts <= 12:
            raise ValueError(f"PersonaProfile.opening_facts must be an integer in [0, 12], got {self.opening_facts!r}")
        if not isinstance(self.patience_turns, int) or self.patience_turns < 0:
            raise ValueError(f"PersonaProfile.patience_turns must be an integer >= 0, got {self.patience_turns!r}")

    def with_(self, **changes: object) -> PersonaProfile:
        return replace(self, **changes)


PERSONAS: dict[str, PersonaProfile] = {
    "expert": PersonaProfile(
        name="expert", p_unknown=0.0, p_imprecise=0.0, p_wrong_units=0.05, p_contradiction=0.0, p_confusion=0.0,
        p_volunteer=0.3, p_jargon=0.8, verbosity=0.1, impatience=0.0, opening_facts=4, habits=0.2),
    "typical": PersonaProfile(
        name="typical", p_unknown=0.1, p_imprecise=0.2, p_wrong_units=0.2, p_contradiction=0.2, p_confusion=0.2,
        p_volunteer=0.2, p_jargon=0.2, verbosity=0.4, impatience=0.1, opening_facts=2, habits=0.35),
    "vague": PersonaProfile(
        name="vague", p_unknown=0.3, p_imprecise=0.45, p_wrong_units=0.35, p_contradiction=0.4, p_confusion=0.4,
        p_volunteer=0.1, p_jargon=0.0, verbosity=0.7, impatience=0.3, patience_turns=10, opening_facts=1,
        habits=0.5),
}


def get_profile(persona: str | PersonaProfile) -> PersonaProfile:
    if isinstance(persona, PersonaProfile):
        return persona
    try:
        return PERSONAS[persona]
    except KeyError:
        raise ValueError(f"persona: {persona!r} is not allowed; allowed: {', '.join(PERSONAS)}") from None
