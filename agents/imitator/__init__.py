"""Offline (and LLM-backed) Human Imitator: a simulated store manager for testing the consultant agents."""

from agents.imitator.llm import LLMHumanImitator
from agents.imitator.persona import HumanImitator
from agents.imitator.profile import PERSONAS, PersonaProfile, get_profile
from agents.imitator.scoring import accuracy, score_extraction, values_match

__all__ = ["HumanImitator", "LLMHumanImitator", "PERSONAS", "PersonaProfile", "accuracy", "get_profile", "score_extraction",
           "values_match"]
