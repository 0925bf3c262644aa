"""The LLM client layer: one OpenAI-compatible client for every role (extraction, consultants, judge, imitator).

It sits below the agents and knows nothing of inventory: it sends messages, repairs JSON replies, runs tool loops
and counts tokens.
"""
