"""Key rules the Responses and Messages adapters rely on (pure functions, no I/O)."""

from __future__ import annotations

import pytest

from semcache.core.fingerprint import request_keys
from semcache.core.policy import CacheControl, decide, offers_tools

MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]
TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]


def keys(protocol: str | None = None, **params: object):
    kwargs = {"model": "openai/gpt-4o-mini", "messages": MESSAGES, **params}
    return request_keys(kwargs, tenant="t", namespace="default", protocol=protocol)


def test_protocol_is_part_of_both_keys() -> None:
    chat, responses, messages = keys(), keys("responses"), keys("messages")
    assert len({chat.exact, responses.exact, messages.exact}) == 3
    assert len({chat.scope, responses.scope, messages.scope}) == 3
    assert keys("responses") == responses  # and stable


def test_cache_control_marks_are_out_of_the_key() -> None:
    mark = {"type": "ephemeral"}
    system = {"role": "system", "content": [{"type": "text", "text": "Be terse."}]}
    marked_system = {
        "role": "system",
        "content": [{"type": "text", "text": "Be terse.", "cache_control": mark}],
        "cache_control": mark,
    }
    plain = request_keys(
        {"model": "openai/gpt-4o-mini", "messages": [system, *MESSAGES], "tools": TOOLS},
        tenant="t",
        namespace="default",
    )
    marked = request_keys(
        {
            "model": "openai/gpt-4o-mini",
            "messages": [marked_system, {**MESSAGES[0], "cache_control": mark}],
            "tools": [{**TOOLS[0], "cache_control": mark}],
        },
        tenant="t",
        namespace="default",
    )
    assert marked == plain
    assert marked.prompt == "What is the capital of France?"  # still a semantic question


@pytest.mark.parametrize("name", ["prompt_cache_key", "safety_identifier", "user", "metadata"])
def test_routing_and_identity_fields_are_out_of_the_key(name: str) -> None:
    assert keys(**{name: {"a": 1} if name == "metadata" else "x"}) == keys()


@pytest.mark.parametrize(
    ("params", "offered"),
    [
        ({}, False),
        ({"tools": TOOLS}, True),
        ({"tools": TOOLS, "tool_choice": "auto"}, True),
        ({"tools": TOOLS, "tool_choice": "required"}, True),
        ({"tools": TOOLS, "tool_choice": "none"}, False),
        ({"tools": []}, False),
        ({"functions": [{"name": "f"}]}, True),
    ],
)
def test_a_request_offering_tools_is_exact_only_by_default(params: dict, offered: bool) -> None:
    assert offers_tools(params) is offered
    control = CacheControl()
    assert decide(params, control, 0.8).semantic is not offered
    assert decide(params, control, 0.8, tools_semantic=True).semantic is True
    assert decide(params, control, 0.8).lookup is True  # exact repeats still hit
