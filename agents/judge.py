"""The judge that stops the end-to-end consultant (treatment B) once a reply holds an actionable policy.

With an LLM endpoint it asks the paper-style yes/no question (`agents.study_prompts.JUDGE_*`); offline the
verdict is the policy parser's: a reply is actionable when a concrete numeric rule was found in it (an
infeasible rule is still a rule: the consultant did commit to it, and it is scored as such).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from agents.policy_parser import parse_policy


@dataclass
class JudgeVerdict:
    actionable: bool
    reason: str
    source: str  # "llm" | "parser"


def parser_verdict(reply: str, capacity: int | None = None) -> JudgeVerdict:
    parsed = parse_policy(reply, capacity=capacity)
    why = parsed.label() if parsed.actionable else parsed.reason
    return JudgeVerdict(parsed.actionable, why, "parser")


def read_verdict(content: str) -> tuple[bool, str] | None:
    """A yes/no verdict from a judge reply: JSON {"actionable": ...} or a leading yes/no; None if neither."""
    text = (content or "").strip()
    m = re.search(r"\{.*\}", text, re.DOTALL)
    if m:
        try:
            data = json.loads(m.group(0))
            value = data.get("actionable", data.get("answer"))
            if isinstance(value, bool):
                return value, str(data.get("reason", ""))
            if isinstance(value, str) and value.strip().lower() in ("yes", "no"):
                return value.strip().lower() == "yes", str(data.get("reason", ""))
        except (json.JSONDecodeError, AttributeError):
            pass
    w = re.match(r"\W*(yes|no)\b", text, re.IGNORECASE)
    if w:
        return w.group(1).lower() == "yes", text[w.end():].strip(" .:-")[:200]
    return None


def judge_reply(reply: str, client=None, capacity: int | None = None) -> JudgeVerdict:
    """LLM yes/no when a client is given (falling back to the parser on an unreadable verdict); else the parser."""
    if client is None:
        return parser_verdict(reply, capacity)
    from agents.study_prompts import JUDGE_SYSTEM, JUDGE_USER

    answer = client.chat(
        [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": JUDGE_USER.format(reply=reply)}]
    ).content
    verdict = read_verdict(answer or "")
    if verdict is None:
        fallback = parser_verdict(reply, capacity)
        return JudgeVerdict(fallback.actionable, f"unreadable judge reply {answer!r:.80}; parser: {fallback.reason}",
                            "parser")
    return JudgeVerdict(verdict[0], verdict[1], "llm")
