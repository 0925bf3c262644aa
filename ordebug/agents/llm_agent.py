"""LLM agent: an OpenAI-compatible chat model drives the environment through tool calls.

Every env op is one tool; results go back as tool messages (JSON, truncated). Zero-shot prompts state
the task and the scoring rules; few-shot prompts add a worked example of a restorative repair. The
agent stops when the model calls ``submit``, answers without a tool call, or runs out of turns.
"""

from __future__ import annotations

import json

from ordebug.env import DebugEnv

SYSTEM = """You are an operations-research engineer debugging an INFEASIBLE optimisation model.
Goal: find the modelling error (the root cause), repair it so the model solves to OPTIMAL, and keep the
model faithful: you are scored on recovery within few solver calls (only `solve` and `get_iis` count),
on naming the root cause, on keeping the original optimal objective, and on NOT dropping or loosening
correct constraints. Prefer undoing the error (e.g. a flipped sense, a decimal slip in a right-hand side
or a row scale, a wrong coefficient sign, a bad bound, a wrongly integer column, a duplicated
contradictory row) over relaxing constraints. Compare a suspicious row or column with its siblings
(same name pattern, digits replaced by '#'). Call `diagnose` with the root-cause element
('row:NAME' or 'col:NAME') and the conflict set, then `submit`."""

FEW_SHOT = """Example. get_iis -> rows [["cap_t3","upper"],["bal_p0_t3","lower"]], bounds [].
inspect_row cap_t3 -> sense L, rhs 4.1; inspect_row cap_t2 -> rhs 41.0; cap_t4 -> rhs 39.5.
cap_t3 is ten times smaller than its siblings: a decimal slip. set_rhs(row="cap_t3", value=41.0) ->
solve -> optimal. diagnose(root_cause=["row:cap_t3"], conflict=["row:cap_t3","row:bal_p0_t3"]); submit."""


def _tool(name: str, description: str, props: dict | None = None, required: list[str] | None = None) -> dict:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": props or {}, "required": required or []}}}


_S = {"type": "string"}
_N = {"type": "number"}
TOOLS = [
    _tool("solve", "Solve the current model (costs one solver call). Returns status and objective."),
    _tool("get_iis", "Irreducible infeasible subsystem of the current model (costs one solver call)."),
    _tool("inspect_row", "Coefficients, sense and bounds of a row (free).", {"name": _S}, ["name"]),
    _tool("inspect_col", "Bounds, cost, integrality and rows of a column (free).", {"name": _S}, ["name"]),
    _tool("list_rows", "Row names, optionally of one name pattern like 'cap_t#' (free).", {"family_pattern": _S}),
    _tool("list_cols", "Column names, optionally of one name pattern (free).", {"family_pattern": _S}),
    _tool("set_rhs", "Set a row's right-hand side; side auto|lower|upper|both.", {"row": _S, "value": _N, "side": _S},
          ["row", "value"]),
    _tool("set_sense", "Set a row's sense to L (<=), G (>=) or E (=).", {"row": _S, "sense": _S}, ["row", "sense"]),
    _tool("set_bound", "Set a column bound; side lower|upper; value may be 'inf'/'-inf'.",
          {"col": _S, "side": _S, "value": {"type": ["number", "string"]}}, ["col", "side", "value"]),
    _tool("set_coef", "Set the coefficient of a column in a row.", {"row": _S, "col": _S, "value": _N},
          ["row", "col", "value"]),
    _tool("scale_row", "Multiply a row's coefficients by a factor.", {"row": _S, "factor": _N}, ["row", "factor"]),
    _tool("drop_row", "Delete a row (hurts fidelity unless the row itself is the error).", {"row": _S}, ["row"]),
    _tool("set_integrality", "Make a column integer or continuous.", {"col": _S, "integer": {"type": "boolean"}},
          ["col", "integer"]),
    _tool("undo", "Revert the last edit."),
    _tool("diagnose", "Record the diagnosis.", {"root_cause": {"type": "array", "items": _S},
                                                "conflict": {"type": "array", "items": _S}}, ["root_cause"]),
    _tool("submit", "End the episode."),
]
TOOL_NAMES = {t["function"]["name"] for t in TOOLS}


class LLMAgent:
    name = "llm"

    def __init__(self, config, few_shot: bool = False, max_turns: int = 40, max_result_chars: int = 4000):
        if config is None:
            raise ValueError("LLM agent needs an LLM configuration (ASKOPT_LLM_BASE_URL / ASKOPT_LLM_MODEL)")
        self.config = config
        self.few_shot = few_shot
        self.max_turns = max_turns
        self.max_result_chars = max_result_chars

    def run(self, env: DebugEnv) -> None:
        from llm.client import LLMClient

        client = LLMClient(self.config)
        system = SYSTEM + ("\n\n" + FEW_SHOT if self.few_shot else "")
        messages: list[dict] = [{"role": "system", "content": system},
                                {"role": "user", "content": "Model summary:\n" + json.dumps(env.describe())}]
        for _ in range(self.max_turns):
            reply = client.chat(messages, tools=TOOLS)
            messages.append(reply.to_message())
            if not reply.tool_calls:
                break
            for call in reply.tool_calls:
                if call.name not in TOOL_NAMES:
                    result = {"error": f"unknown tool {call.name!r}; tools: {sorted(TOOL_NAMES)}"}
                else:
                    args = call.arguments if isinstance(call.arguments, dict) else {}
                    result = env.step({"op": call.name, **args})
                text = json.dumps(result, default=str)
                if len(text) > self.max_result_chars:
                    text = text[: self.max_result_chars] + "...(truncated)"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
            if env.log.done:
                return
        if not env.log.done:
            env.step({"op": "submit"})
