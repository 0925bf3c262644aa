"""What the LLM emulator says: every study role answered by the offline agents (no model, no randomness).

The emulator (`serving.llm_emulator`) stands in for a hosted chat model in benchmarks and rehearsals. It must
give each role a reply of the right *shape* (the extractor's JSON, a consultant's question or advice, the
judge's yes/no JSON, the imitator's answer, an interpreter's tool call) so the study's real code paths run
unchanged. The content comes from the project's offline agents, recognised by the system prompt:

| role | recognised by | answered by |
|---|---|---|
| extractor (JSON) | `agents.prompts.EXTRACTION_SYSTEM_PROMPT` | an offline `ExtractionAgent` replayed over the manager's messages |
| consultant B | `agents.study_prompts.CONSULTANT_SYSTEM` | the textbook consultant's eight questions, then its advice |
| consultant C | `CONSULTANT_WITH_PARAMETERS_SYSTEM` | the textbook formula on the CSV in the prompt |
| judge | `JUDGE_SYSTEM` | the policy parser's verdict, as `{"actionable": ..., "reason": ...}` |
| imitator | `serving.protocol` scenario message, or `agents.imitator.llm.PERSONA_PROMPT` | the seeded persona simulator |
| interpreter | `INTERPRETATION_SYSTEM_PROMPT` | a tool call when tools are offered, then a sentence about the result |
| generator | `GENERATOR_SYSTEM` | `agents.generator.generate_instance` as the generator's JSON |

Requests are stateless (the whole conversation comes every time), so each reply replays the conversation.
Replays of the extractor are cached by conversation prefix, so a dialogue costs one agent step per request
instead of one per earlier turn; a cache miss (another replica, eviction) just replays from the start.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RoleReply", "answer", "identify_role"]


@dataclass
class RoleReply:
    """The emulated assistant message (content and/or tool calls) and which role produced it."""

    role: str
    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _system(messages: list[dict[str, Any]]) -> str:
    return next((_text(m) for m in messages if m.get("role") == "system"), "")


def identify_role(messages: list[dict[str, Any]]) -> str:
    """The study role a request belongs to, from its system prompt (or the imitator's scenario message)."""
    from serving.protocol import SCENARIO_KEY

    system = _system(messages)
    if SCENARIO_KEY in system:
        return "imitator"
    for marker, role in _MARKERS:
        if system.startswith(marker) or marker in system[:400]:
            return role
    return "generic"


_MARKERS = (
    ("You are the Information Extraction Agent", "extractor"),
    ("You check replies written by an inventory consultant", "judge"),
    ("You are an experienced inventory-management consultant talking with", "consultant_b"),
    ("has given you the complete\nparameter file", "consultant_c"),
    ("You are an experienced inventory-management consultant. A small business", "consultant_c"),
    ("You are role-playing the manager of a small store", "imitator"),
    ("You are the Policy Interpretation Agent", "interpreter"),
    ("You are generating realistic test cases", "generator"),
)


def answer(body: dict[str, Any]) -> RoleReply:
    """The reply to one chat-completions request body (raises ValueError for a request it cannot read)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages: a non-empty list of chat messages is required")
    role = identify_role(messages)
    handler = _HANDLERS[role]
    return handler(body, messages)


# ---- extractor ----------------------------------------------------------------------------------------------------

_EXTRACTOR_CACHE: OrderedDict[str, Any] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 4096
_CONVO = re.compile(r"^(AGENT|USER|SYSTEM): ", re.MULTILINE)


def _key(parts: list[str]) -> str:
    return hashlib.sha1(json.dumps(parts).encode()).hexdigest()


def _user_messages(convo: str) -> list[str]:
    """The manager's earlier messages from the extractor prompt's "AGENT: ... / USER: ..." transcript."""
    marks = list(_CONVO.finditer(convo))
    out = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(convo)
        if m.group(1) == "USER":
            out.append(convo[m.end():end].rstrip("\n"))
    return out


def _replayed_agent(user_messages: list[str]):
    """An offline ExtractionAgent after reading `user_messages` (cached by prefix) and its last turn."""
    from agents.extraction import ExtractionAgent

    n = len(user_messages)
    start, state = 0, None
    with _CACHE_LOCK:
        for k in (n, n - 1):
            if k >= 0 and (hit := _EXTRACTOR_CACHE.get(_key(user_messages[:k]))) is not None:
                _EXTRACTOR_CACHE.move_to_end(_key(user_messages[:k]))
                start, state = k, hit
                break
    if state is None:
        agent = ExtractionAgent()
        turn = agent.start()
    else:
        agent, turn = copy.deepcopy(state)
    for i in range(start, n):
        if agent.done:
            break
        turn = agent.step(user_messages[i])
        if i >= n - 2:  # remember the last two prefixes: the next request extends one of them
            with _CACHE_LOCK:
                _EXTRACTOR_CACHE[_key(user_messages[: i + 1])] = copy.deepcopy((agent, turn))
                while len(_EXTRACTOR_CACHE) > _CACHE_SIZE:
                    _EXTRACTOR_CACHE.popitem(last=False)
    return agent, turn


_LLM_ACTIONS = ("ASK_NEXT_QUESTION", "ASK_CLARIFICATION", "TERMINATE")


def _extractor(body: dict[str, Any], messages: list[dict[str, Any]]) -> RoleReply:
    from inventory.spec import PARAMETERS, format_value

    user = next((_text(m) for m in reversed(messages)
                 if m.get("role") == "user" and "Manager's latest message:" in _text(m)), _text(messages[-1]))
    convo_part, _, latest = user.partition("Manager's latest message:\n")
    convo = convo_part.partition("Conversation so far:\n")[2]
    users = [*_user_messages(convo), latest.strip("\n")]
    agent, turn = _replayed_agent(users)
    table: dict[str, dict[str, Any]] = {}
    for name in PARAMETERS:
        if agent.table.status(name) == "defined":
            table[name] = {"value": format_value(name, agent.table.get(name)), "status": "defined"}
    for clar in getattr(agent, "pending", []) or []:
        for name in clar.fields:
            if name in PARAMETERS:
                table[name] = {"value": None, "status": "conflict"}
    # the LLM backend's schema knows three actions; the offline agent may also confirm ("ASK_CONFIRMATION"),
    # which to the model's schema is a clarification
    action = turn.action if turn.action in _LLM_ACTIONS else "ASK_CLARIFICATION"
    reply = {"reasoning": f"offline rules replayed over {len(users)} message(s)", "updated_table": table,
             "corrections": [], "action": action, "next_prompt": turn.message}
    return RoleReply("extractor", json.dumps(reply))


# ---- consultants and judge -----------------------------------------------------------------------------------------


def _seed_of(body: dict[str, Any], text: str) -> int:
    if isinstance(body.get("seed"), int):
        return int(body["seed"])
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


def _consultant_b(body: dict[str, Any], messages: list[dict[str, Any]]) -> RoleReply:
    from agents.consultant import QUESTIONS, Facts, read_answer, textbook_advice
    from agents.study_prompts import CONSULTANT_NUDGE

    convo = [m for m in messages if m.get("role") in ("user", "assistant")]
    asked = sum(m.get("role") == "assistant" for m in convo)
    nudged = _text(convo[-1]) == CONSULTANT_NUDGE if convo else False
    if asked < len(QUESTIONS) and not nudged:
        return RoleReply("consultant_b", QUESTIONS[asked][1])
    facts = Facts()
    for i, m in enumerate(convo):
        if m.get("role") == "assistant" and i + 1 < len(convo):
            q = next((k for k, (_, text) in enumerate(QUESTIONS) if text == _text(m)), None)
            if q is not None:
                read_answer(QUESTIONS[q][0], _text(convo[i + 1]), facts)
    seed = _seed_of(body, _text(convo[0]) if convo else "")
    return RoleReply("consultant_b", textbook_advice(facts, variant=seed % 3,
                                                     style="up_to" if seed % 2 == 0 else "batch"))


def _consultant_c(body: dict[str, Any], messages: list[dict[str, Any]]) -> RoleReply:
    from agents.consultant import textbook_with_parameters
    from inventory.spec import ParameterTable

    first_user = next((_text(m) for m in messages if m.get("role") == "user"), "")
    m = re.search(r"Parameter file \(CSV\):\n(.*?)\n\n", first_user + "\n\n", re.DOTALL)
    if not m:
        raise ValueError("messages: the consultant-with-parameters prompt carries no 'Parameter file (CSV):' block")
    problem = ParameterTable.from_csv(m.group(1)).to_problem()
    return RoleReply("consultant_c", textbook_with_parameters(problem, seed=_seed_of(body, first_user)).advice)


def _judge(body: dict[str, Any], messages: list[dict[str, Any]]) -> RoleReply:
    from agents.judge import parser_verdict

    user = _text(messages[-1])
    m = re.search(r"<<<\n(.*)\n>>>", user, re.DOTALL)
    verdict = parser_verdict(m.group(1) if m else user)
    return RoleReply("judge", json.dumps({"actionable": verdict.actionable, "reason": verdict.reason}))


# ---- imitator --------------------------------------------------------------------------------------------------------


def _imitator(body: dict[str, Any], messages: list[dict[str, Any]]) -> RoleReply:
    from agents.imitator import HumanImitator
    from inventory.spec import ParameterTable
    from serving.protocol import ChatMessage, read_scenario

    chat = [ChatMessage(role=m.get("role", "user"), content=_text(m)) for m in messages]
    scenario = read_scenario(chat)
    if scenario is not None:
        from serving.imitator_app import cpu_imitator_reply

        return RoleReply("imitator", cpu_imitator_reply(scenario, chat))
    system = _system(messages)
    facts = re.search(r"never mention that you have it\):\n(.*?)\n\n", system, re.DOTALL)
    context = re.search(r"Your business: (.*?)\n", system)
    persona = re.search(r'Persona "([^"]+)"', system)
    if not facts:
        raise ValueError("messages: the imitator's persona prompt lists no facts")
    rows = "\n".join(line[2:] for line in facts.group(1).splitlines() if line.startswith("- "))
    problem = ParameterTable.from_csv("Parameter,Value,Unit,Status\n" + rows).to_problem()
    imitator = HumanImitator(problem, context.group(1) if context else "", persona.group(1) if persona else "typical",
                             _seed_of(body, system))
    questions = [_text(m) for m in messages if m.get("role") == "user"]
    reply = imitator.opening()
    for q in questions[1:]:
        reply = imitator.reply(q)
    return RoleReply("imitator", reply)


# ---- interpreter, generator, anything else ------------------------------------------------------------------------


def _interpreter(body: dict[str, Any], messages: list[dict[str, Any]]) -> RoleReply:
    tools = body.get("tools") or []
    last = messages[-1]
    if last.get("role") == "tool":
        return RoleReply("interpreter", f"According to the calculation: {_text(last)[:400]}")
    if tools and last.get("role") == "user" and re.search(r"\d", _text(last)):
        fn = tools[0].get("function", {})
        params = fn.get("parameters", {}) or {}
        numbers = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", _text(last))]
        args: dict[str, Any] = {}
        for i, (name, spec) in enumerate((params.get("properties") or {}).items()):
            kind = spec.get("type") if isinstance(spec, dict) else None
            value = numbers[i] if i < len(numbers) else 0
            if kind == "array":
                args[name] = [int(x) for x in numbers[i:]]
            else:
                args[name] = int(value) if kind == "integer" else value
        call = {"id": f"call_{_key([_text(last)])[:12]}", "type": "function",
                "function": {"name": fn.get("name", "tool"), "arguments": json.dumps(args)}}
        return RoleReply("interpreter", None, [call])
    m = re.search(r'"label":\s*"([^"]+)"', _system(messages))
    what = f"the recommended policy ({m.group(1)})" if m else "the recommended policy"
    return RoleReply("interpreter", f"In short, follow {what}: check your stock every day, and order when the "
                                    "position (on hand plus on order) falls below the reorder point.")


def _generator(body: dict[str, Any], messages: list[dict[str, Any]]) -> RoleReply:
    from agents.generator import generate_instance
    from inventory.spec import ParameterTable

    user = _text(messages[-1])
    index = int(m.group(1)) if (m := re.search(r"number (\d+)", user)) else 0
    seed = int(m.group(1)) if (m := re.search(r"seed (\d+)", user)) else 0
    inst = generate_instance(f"emulator/{seed}", index)
    data = {"context": inst.context, "item_cost": inst.item_cost,
            "parameters": ParameterTable.from_problem(inst.problem).to_json()}
    return RoleReply("generator", json.dumps(data))


def _generic(body: dict[str, Any], messages: list[dict[str, Any]]) -> RoleReply:
    fmt = (body.get("response_format") or {}).get("type")
    if fmt in ("json_object", "json_schema"):
        return RoleReply("generic", "{}")
    return RoleReply("generic", f"(askopt LLM emulator) I read {len(messages)} message(s).")


_HANDLERS = {
    "extractor": _extractor, "consultant_b": _consultant_b, "consultant_c": _consultant_c, "judge": _judge,
    "imitator": _imitator, "interpreter": _interpreter, "generator": _generator, "generic": _generic,
}
