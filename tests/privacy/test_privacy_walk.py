"""Finding the text in OpenAI requests and responses, and replacing it without mutation."""

from __future__ import annotations

import copy

import pytest

from semcache.errors import ConfigError
from semcache.privacy import replace_texts, request_texts, response_texts

REQUEST = {
    "model": "gpt-4o-mini",
    "temperature": 0,
    "tools": [{"type": "function", "function": {"name": "lookup", "description": "a@b.io"}}],
    "messages": [
        {"role": "system", "content": "be brief"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "mail me at a@b.io"},
                {"type": "image_url", "image_url": {"url": "https://x.io/a@b.io.png"}},
                {"type": "input_text", "text": "second part"},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"email": "a@b.io"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "found"},
        {"role": "assistant", "content": "", "function_call": {"name": "f", "arguments": "{}"}},
    ],
}

RESPONSE = {
    "id": "r1",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "hello a@b.io",
                "reasoning_content": "thinking",
                "tool_calls": [
                    {"id": "t", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
        },
        {"index": 1, "text": "legacy"},
    ],
}


def test_request_texts_cover_every_conversation_string():
    assert [field.where for field in request_texts(REQUEST)] == [
        "messages[0].content",
        "messages[1].content[0].text",
        "messages[1].content[2].text",
        "messages[2].tool_calls[0].function.arguments",
        "messages[3].content",
        "messages[4].content",
        "messages[4].function_call.arguments",
    ]


def test_tool_definitions_and_image_urls_are_not_scanned():
    texts = " ".join(field.text for field in request_texts(REQUEST))
    assert "x.io" not in texts
    assert "description" not in texts


def test_legacy_prompt():
    assert [f.where for f in request_texts({"prompt": "hi"})] == ["prompt"]
    assert [f.where for f in request_texts({"prompt": ["a", "b"]})] == ["prompt[0]", "prompt[1]"]


def test_response_texts():
    assert [field.where for field in response_texts(RESPONSE)] == [
        "choices[0].message.content",
        "choices[0].message.tool_calls[0].function.arguments",
        "choices[0].message.reasoning_content",
        "choices[1].text",
    ]
    assert response_texts({"choices": None}) == []


def test_replace_texts_copies_and_never_mutates():
    before = copy.deepcopy(REQUEST)
    fields = request_texts(REQUEST)
    new = replace_texts(REQUEST, {fields[1].path: "mail me at [EMAIL]", fields[3].path: "{}"})
    assert before == REQUEST
    assert new["messages"][1]["content"][0]["text"] == "mail me at [EMAIL]"
    assert new["messages"][2]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert new["messages"][0] is REQUEST["messages"][0]  # untouched branches are shared
    assert new["messages"][1]["content"][1] is REQUEST["messages"][1]["content"][1]


def test_replace_texts_refuses_a_path_to_a_non_string():
    with pytest.raises(ConfigError, match="not a string"):
        replace_texts(REQUEST, {("messages", 2, "content"): "x"})
