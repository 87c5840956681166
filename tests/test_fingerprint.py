"""The request key: complete over what changes the answer, blind to identity and transport."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semcache.core.fingerprint import EXCLUDED, request_keys
from semcache.errors import InvalidRequest, InvalidRequestType

BASE = {
    "model": "gpt-4o-mini",
    "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "What is the capital of France?"},
    ],
}


def keys(request, tenant="t", namespace="default"):
    return request_keys(request, tenant=tenant, namespace=namespace)


def key(request, **kw):
    return keys(request, **kw).exact


def test_golden_digests_pin_the_format():
    # If these change, every stored entry is orphaned: bump FINGERPRINT_VERSION on purpose.
    k = keys(BASE)
    assert k.exact == "6083774afbb6c347e14e380aebbb8b01158a7f00796dcb23e245033b248feb89"
    assert k.scope == "1495f8336b8c1bed39a470ec5aa1a72cd9ab52bc1576c93c6746e0654fead1c5"
    assert k.prompt == "What is the capital of France?"
    assert k.model == "openai/gpt-4o-mini"


def test_provider_resolution_makes_aliases_one_model():
    assert key(BASE) == key({**BASE, "model": "openai/gpt-4o-mini"})
    assert key(BASE) != key({**BASE, "model": "gpt-4o"})


def test_tenant_and_namespace_partition_every_key():
    base = keys(BASE)
    for other in (keys(BASE, tenant="u"), keys(BASE, namespace="n")):
        assert other.exact != base.exact
        assert other.scope != base.scope


# Each included field, with two values that must give different keys.
INCLUDED_CHANGES = {
    "api_base": ("http://a.example/v1", "http://b.example/v1"),
    "tools": (
        [{"type": "function", "function": {"name": "a", "parameters": {}}}],
        [{"type": "function", "function": {"name": "b", "parameters": {}}}],
    ),
    "functions": ([{"name": "a"}], [{"name": "b"}]),
    "tool_choice": ("auto", "none"),
    "response_format": ({"type": "json_object"}, {"type": "text"}),
    "temperature": (0.0, 0.2),
    "top_p": (0.5, 0.9),
    "max_tokens": (10, 20),
    "max_completion_tokens": (10, 20),
    "stop": (["a"], ["b"]),
    "n": (1, 2),
    "seed": (1, 2),
    "presence_penalty": (0.0, 0.5),
    "frequency_penalty": (0.0, 0.5),
    "logit_bias": ({"50256": -100}, {"50256": 100}),
    "logprobs": (False, True),
    "top_logprobs": (1, 2),
    "reasoning_effort": ("low", "high"),
    "thinking": ({"type": "enabled", "budget_tokens": 100}, {"type": "disabled"}),
    "some_future_param": ("x", "y"),  # unknown means included
    "mock_response": ("a", "b"),
}


@pytest.mark.parametrize("field", sorted(INCLUDED_CHANGES))
def test_changing_any_included_field_changes_the_key(field):
    a, b = INCLUDED_CHANGES[field]
    without = key(BASE)
    with_a = key({**BASE, field: a})
    with_b = key({**BASE, field: b})
    assert len({without, with_a, with_b}) == 3


MESSAGE_CHANGES = [
    lambda m: m[0].__setitem__("content", "You are verbose."),
    lambda m: m[1].__setitem__("content", "What is the capital of Spain?"),
    lambda m: m[1].__setitem__("name", "alice"),
    lambda m: m[0].__setitem__("role", "developer"),
    lambda m: m.insert(1, {"role": "user", "content": "Hi"}),
    lambda m: m.insert(1, {"role": "assistant", "content": "Hello"}),
    lambda m: m[1].__setitem__(
        "content",
        [
            {"type": "text", "text": "What is the capital of France?"},
            {"type": "image_url", "image_url": {"url": "http://x/1.png"}},
        ],
    ),
    lambda m: m.append(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        }
    ),
    lambda m: m.append({"role": "tool", "tool_call_id": "c1", "content": "42"}),
]


@pytest.mark.parametrize("change", range(len(MESSAGE_CHANGES)))
def test_every_message_field_is_in_the_key(change):
    request = copy.deepcopy(BASE)
    MESSAGE_CHANGES[change](request["messages"])
    assert key(request) != key(BASE)


def test_tool_call_id_is_in_the_key():
    def with_tool(call_id):
        return {
            **BASE,
            "messages": [
                *BASE["messages"],
                {"role": "tool", "tool_call_id": call_id, "content": "42"},
            ],
        }

    assert key(with_tool("a")) != key(with_tool("b"))


EXCLUDED_VALUES = {
    "api_key": "sk-secret",
    "metadata": {"trace": 1},
    "user": "alice",
    "request_id": "r1",
    "litellm_call_id": "c1",
    "timeout": 30,
    "request_timeout": 30,
    "num_retries": 3,
    "max_retries": 3,
    "stream": True,
    "stream_options": {"include_usage": True},
    "extra_headers": {"x-trace": "1"},
    "organization": "org-1",
    "aws_secret_access_key": "s",
}


@pytest.mark.parametrize("field", sorted(EXCLUDED_VALUES))
def test_excluded_fields_never_change_the_key(field):
    assert field in EXCLUDED
    assert key({**BASE, field: EXCLUDED_VALUES[field]}) == key(BASE)


def test_text_is_nfc_normalised_and_stripped_and_nothing_else():
    decomposed = "Cafe\u0301 hours?"  # e + combining acute
    composed = "Caf\u00e9 hours?"
    base = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": composed}]}
    same = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"  {decomposed}\n"}]}
    assert key(base) == key(same)
    for different in ("caf\u00e9 hours?", "Caf\u00e9  hours?", "Caf\u00e9 hours"):
        other = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": different}]}
        assert key(other) != key(base)


def test_stop_string_means_one_element_list_and_numbers_compare_as_floats():
    assert key({**BASE, "stop": "END"}) == key({**BASE, "stop": ["END"]})
    assert key({**BASE, "temperature": 0}) == key({**BASE, "temperature": 0.0})
    assert key({**BASE, "temperature": None}) == key(BASE)


def test_scope_excludes_only_the_last_user_message():
    paraphrase = copy.deepcopy(BASE)
    paraphrase["messages"][-1]["content"] = "Tell me France's capital city"
    assert keys(paraphrase).scope == keys(BASE).scope
    assert keys(paraphrase).exact != keys(BASE).exact
    other_system = copy.deepcopy(paraphrase)
    other_system["messages"][0]["content"] = "You answer in French."
    assert keys(other_system).scope != keys(BASE).scope
    assert keys({**BASE, "temperature": 0.3}).scope != keys(BASE).scope


def test_no_scope_when_the_last_message_is_not_user_text():
    tool_last = {**BASE, "messages": [*BASE["messages"], {"role": "assistant", "content": "Paris"}]}
    assert keys(tool_last).scope is None
    image = {
        "model": "gpt-4o-mini",
        "messages": [
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": "http://x/1.png"}}],
            }
        ],
    }
    assert keys(image).scope is None


def test_caller_dict_is_not_mutated():
    request = copy.deepcopy({**BASE, "stop": "x", "temperature": 1})
    before = copy.deepcopy(request)
    key(request)
    assert request == before


@pytest.mark.parametrize(
    ("request_", "field", "error"),
    [
        ({"messages": BASE["messages"]}, "model", InvalidRequest),
        ({**BASE, "model": 3}, "model", InvalidRequestType),
        ({**BASE, "messages": "hi"}, "messages", InvalidRequestType),
        ({**BASE, "messages": []}, "messages", InvalidRequest),
        ({**BASE, "messages": ["hi"]}, "messages[0]", InvalidRequestType),
        (
            {**BASE, "messages": [{"role": "wizard", "content": "x"}]},
            "messages[0].role",
            InvalidRequest,
        ),
        ({**BASE, "messages": [{"role": "user"}]}, "messages[0].content", InvalidRequest),
        (
            {**BASE, "messages": [{"role": "user", "content": 5}]},
            "messages[0].content",
            InvalidRequestType,
        ),
        ({**BASE, "seed": object()}, "seed", InvalidRequestType),
        ({**BASE, "temperature": float("nan")}, "temperature", InvalidRequest),
    ],
)
def test_bad_input_names_the_field(request_, field, error):
    with pytest.raises(error) as info:
        key(request_)
    assert info.value.field == field
    assert field in str(info.value)


# -- properties ----------------------------------------------------------------------------------
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)
param_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12).filter(
    lambda n: (
        n not in EXCLUDED
        and n not in ("model", "messages", "stop", "api_base", "custom_llm_provider")
    )
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    st.dictionaries(param_names, json_values.filter(lambda v: v is not None), max_size=5),
    st.randoms(),
)
def test_key_order_never_matters(params, rnd):
    request = {**BASE, **params}
    items = list(request.items())
    rnd.shuffle(items)
    assert key(dict(items)) == key(request)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    param_names,
    json_values.filter(lambda v: v is not None),
    json_values.filter(lambda v: v is not None),
)
def test_changing_any_parameter_value_changes_the_key(name, a, b):
    from semcache.core.fingerprint import FLOAT_PARAMS

    def norm(v):
        return float(v) if name in FLOAT_PARAMS and type(v) in (int, float) else v

    if norm(a) == norm(b) and type(norm(a)) is type(norm(b)) and repr(norm(a)) == repr(norm(b)):
        return
    assert key({**BASE, name: a}) != key({**BASE, name: b})


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(EXCLUDED)), json_values)
def test_excluded_fields_never_matter(name, value):
    assert key({**BASE, name: value}) == key(BASE)


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=30), st.text(min_size=1, max_size=30))
def test_no_collision_through_concatenation(a, b):
    # Splitting text differently across two messages must never collide.
    one = {
        "model": "m",
        "messages": [{"role": "user", "content": a}, {"role": "user", "content": b}],
    }
    two = {"model": "m", "messages": [{"role": "user", "content": a + b}]}
    assert key(one) != key(two)


def test_unserialisable_big_integer_is_a_clear_error():
    with pytest.raises(InvalidRequestType):
        key({**BASE, "seed": 2**80})


def test_part_text_must_be_a_string():
    request = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "text", "text": {"nested": "x"}}]}],
    }
    with pytest.raises(InvalidRequestType) as info:
        key(request)
    assert info.value.field == "messages[0].content[0].text"
