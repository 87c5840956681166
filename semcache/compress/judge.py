"""The LLM judge of ``compress-eval``: do two answers to one request agree on what matters?

Its request is built here and its verdict parsed here, so the harness and the offline fake
judge (``semcache.compress.testing``) share one wording.
"""

from __future__ import annotations

from typing import Any, Literal

Verdict = Literal["same", "different", "unclear"]

JUDGE_INSTRUCTION = (
    "You compare two answers to the same request. Reply with exactly one word: SAME if they "
    "agree on every fact, number, instruction and conclusion that matters, DIFFERENT otherwise."
)


def judge_messages(request: str, answer_a: str, answer_b: str) -> list[dict[str, Any]]:
    """The judge's chat messages for one pair of answers."""
    return [
        {"role": "system", "content": JUDGE_INSTRUCTION},
        {
            "role": "user",
            "content": f"Request:\n{request}\n\nAnswer A:\n{answer_a}\n\nAnswer B:\n{answer_b}",
        },
    ]


def parse_verdict(text: str) -> Verdict:
    """SAME/DIFFERENT as the first word (any case, punctuation ignored); else 'unclear'."""
    words = text.strip().split()
    first = words[0].strip(".,:;!*\"'").upper() if words else ""
    if first == "SAME":
        return "same"
    if first == "DIFFERENT":
        return "different"
    return "unclear"
