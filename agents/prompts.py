"""The paper's prompts and the agent's question wording, in one place so backends and tests share them.

The extraction prompt follows the paper's Information Extraction Agent: an explicit parameter table is the
memory; every round the model reads the latest message, fills undefined fields, flags conflicts with defined
ones, and replies with JSON {reasoning, updated_table, action, next_prompt}, where action is one of
ASK_NEXT_QUESTION, ASK_CLARIFICATION, TERMINATE. The interpretation prompt follows the paper's Policy
Interpretation Agent with its two scenarios ((s,S) wins: explain; DQN wins: on-demand expert + tool).
"""

from __future__ import annotations

from inventory.spec import DESCRIPTIONS, PARAMETERS, UNITS

__all__ = [
    "ACTIONS",
    "CLOSING_QUESTION",
    "EXTRACTION_SYSTEM_PROMPT",
    "HINTS",
    "INTERPRETATION_SYSTEM_PROMPT",
    "OPENING",
    "QUESTIONS",
    "extraction_system_prompt",
    "parameter_glossary",
]

ACTIONS = ("ASK_NEXT_QUESTION", "ASK_CLARIFICATION", "TERMINATE")
CLOSING_QUESTION = "Do you have any other questions?"

OPENING = ("Hello! I'm your inventory consultant. Tell me about your business and the product you want to plan "
           "orders for - anything you know about demand, costs, deliveries and storage helps.")

# One plain question per parameter (the offline backend's wording; the LLM writes its own).
QUESTIONS = {
    "time_horizon": "Over how many days should we plan (the planning horizon)?",
    "demand_type": "Is your daily demand random (it varies from day to day) or deterministic (the same every day)?",
    "demand_distribution": "How many units do you sell per day on average, and how much does it vary? "
                           "(e.g. 'about 20 a day, give or take 5', or 'between 10 and 30 a day')",
    "perishability": "Is the product perishable, i.e. do unsold units spoil at the end of the day?",
    "state_transition_model": "When you run out of stock, do customers wait for the next delivery (backlog) or "
                              "buy elsewhere (lost sale)?",
    "holding_cost": "What does it cost you to hold one unit in stock for one day (storage, capital, cooling)?",
    "penalty_cost": "What does a shortage cost you per unit (lost margin plus goodwill)?",
    "setup_cost": "Is there a fixed cost each time you place an order (delivery fee, paperwork), whatever its size? "
                  "How much per order?",
    "lead_time": "How many days pass between placing an order and receiving it (the lead time)?",
    "max_inventory": "How many units can you store at most (your storage capacity)?",
    "max_order": "What is the largest single order you can place (the supplier's or truck's limit), in units?",
    "risk_tolerance": "Last question: how much risk are you willing to take, on a scale from -10 (very risk "
                      "averse: you prefer predictable costs even if they are higher on average) to 10 (risk "
                      "seeking), with 0 neutral?",
}
QUESTION_VARIANTS = {
    ("demand_distribution", "deterministic"): "How many units do you sell each day (the same number every day)?",
    ("penalty_cost", "lost_sale"): "When a customer leaves because you are out of stock, what does each lost unit "
                                   "cost you (lost margin plus goodwill)?",
    ("penalty_cost", "backlog"): "When customers wait for out-of-stock units, what does it cost you per unit per "
                                 "day of waiting (discounts, goodwill)?",
}
# Extra help when the user does not know (why we ask and how to estimate).
HINTS = {
    "time_horizon": "For example a season, a quarter (90 days) or a month (30 days).",
    "demand_type": "If sales differ from day to day, it's random.",
    "demand_distribution": "Think of a normal week: total sales divided by the days open, and the quietest and "
                           "busiest days.",
    "perishability": "Does anything you don't sell today have to be thrown away?",
    "state_transition_model": "Think of the last time you were out of stock: did the customer come back for it?",
    "holding_cost": "Rent and utilities for the space, plus the money tied up in stock, divided per unit per day. "
                    "A few cents to a dollar is typical.",
    "penalty_cost": "Usually at least the profit margin you lose on one unit.",
    "setup_cost": "Delivery charges and the time spent placing an order; say 0 if there is none.",
    "lead_time": "How many days did your last delivery take?",
    "max_inventory": "How many units fit on your shelves and in the back room together?",
    "max_order": "If there is no limit, say so and I'll use your storage capacity.",
    "risk_tolerance": "0 means you only care about the average cost; negative numbers mean you also want it "
                      "predictable.",
}


def parameter_glossary() -> str:
    return "\n".join(f"- {p} [{UNITS[p] or 'category'}]: {DESCRIPTIONS[p]}" for p in PARAMETERS)


EXTRACTION_SYSTEM_PROMPT = """You are the Information Extraction Agent of an inventory-control decision-support \
system. You interview a store manager in plain language and fill a parameter specification table that an \
optimisation engine will solve. The table is your explicit memory and the only state that matters.

The table has exactly these twelve parameters:
{glossary}

Each row has a value, a unit and a status: "undefined" (not stated yet), "defined" (stated and consistent) or \
"conflict" (the manager said something that contradicts it or another field).

Every round you receive the current table and the manager's latest message. Then:
1. Read the latest message and fill every undefined parameter it states, converting to the table's units \
(days; $ per unit per day for holding; $ per order for setup). Write distributions as poisson(mean), \
normal(mean, sd), uniform(low, high), or a single number for deterministic demand. Never invent a value the \
manager did not give; never fill a field by assumption.
2. Detect conflicts with what is already defined and within the message, at least:
   - a value restated differently (e.g. a horizon of 30 days after 90 days);
   - "lost sale" together with a penalty per unit per day (a per-day penalty means customers wait: backlog);
   - demand given per week or per month: ask which conversion to daily demand applies - independent days \
(mean / 7, sd / sqrt(7)) or plain scaling (mean / 7, sd / 7) - unless only a mean is given;
   - max_order above max_inventory;
   - a deterministic demand type with a spread or a distribution;
   - impossible numbers (negative costs, a Poisson mean below 0, risk tolerance outside -10..10).
   Mark such fields "conflict", keep the previous value, and list the fields the manager explicitly corrected \
("actually it's 60 days") in "corrections" instead.
3. Choose exactly one action:
   - ASK_CLARIFICATION if any field is in conflict: name both values and offer numbered choices.
   - ASK_NEXT_QUESTION if a field is undefined: ask about one undefined parameter in plain words, one \
question at a time. Ask about risk_tolerance LAST, on the scale from -10 (very risk averse) to 10 (risk seeking), \
0 neutral.
   - TERMINATE only when all twelve parameters are defined and consistent.
4. Write next_prompt: the message to show the manager (a question or a clarification; for TERMINATE a short \
summary and thanks). Be brief, friendly and concrete; no jargon without a plain explanation.

Reply with one JSON object only:
{{"reasoning": "<what the message said and what you checked>",
  "updated_table": {{"<parameter>": {{"value": "<value or null>", "status": "undefined|defined|conflict"}}, ...}},
  "corrections": ["<parameter the manager explicitly corrected>", ...],
  "action": "ASK_NEXT_QUESTION | ASK_CLARIFICATION | TERMINATE",
  "next_prompt": "<message to the manager>"}}"""


def extraction_system_prompt() -> str:
    return EXTRACTION_SYSTEM_PROMPT.format(glossary=parameter_glossary())


INTERPRETATION_SYSTEM_PROMPT = """You are the Policy Interpretation Agent of an inventory decision-support \
system. The optimisation engine has compared ordering policies for the manager's problem; you explain the \
result to a store manager who is not an expert, in plain words and day-to-day terms.

Problem: {problem}
Optimisation result:
{result}

Scenario rules:
- If the (s,S) policy won: explain s (the reorder point) and S (the order-up-to level) concretely, e.g. \
"check your stock each morning; when stock on hand plus stock already on order falls below s, order enough to \
bring it up to S". Mention the expected cost per day if useful.
- If the DQN policy won: present it as an on-demand expert that recommends how much to order each day from \
the current situation. Ask the manager for the current inventory on hand, the current day (time step) and the \
orders already placed but not yet received (the pipeline, oldest first); then call the tool \
calculate_dqn_order with them and report the recommended order. If the manager is skeptical or wants a simple \
rule, offer the best (s,S) policy as an alternative and say how much more it costs on average ({extra}).
- "How many should I order now?": get the units on hand and the units already on order (ask for what is \
missing), then call calculate_order and report its number exactly; never work an order out yourself.
- "What if <a parameter> changes?": call what_if with the changed parameters and report the old and new policy \
and expected cost from its result.
- "Why this level?": answer with this problem's numbers (daily demand, lead time, costs, capacity, order cap).
- If the policy has s = 0 under lost sales (or S = 0), say plainly that it means never ordering.
- Answer follow-up questions about the policy, the costs, the service level (fill rate) or the parameters \
truthfully from the data above; say so when you do not know.
Always end every reply with exactly: "Do you have any other questions?\""""
