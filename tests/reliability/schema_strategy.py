"""Hypothesis strategies from the JSON Schema subset the proxy's OpenAPI document uses.

hypothesis-jsonschema 0.23.1 (the latest) fails on the Hypothesis in this environment
(6.170: ``'many' object has no attribute 'more'``), and schemathesis would bring a large
stack for one schema, so this converts the keywords the document uses: ``type`` (object,
array, string, number, integer, boolean, null, or a list of them), ``const``, ``enum``, ``anyOf``,
``properties``/``required``/``additionalProperties`` (true or false), ``minItems``/``maxItems``,
``minimum``/``maximum`` and ``minLength``. An unknown keyword raises, so the document
cannot grow a constraint this silently ignores.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

_KNOWN = {
    "type",
    "const",
    "enum",
    "anyOf",
    "properties",
    "required",
    "additionalProperties",
    "minItems",
    "maxItems",
    "items",
    "minimum",
    "maximum",
    "minLength",
}


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    unknown = set(schema) - _KNOWN
    if unknown:
        raise ValueError(f"schema keywords not supported: {sorted(unknown)}")
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema:
        return st.one_of([from_schema(option) for option in schema["anyOf"]])
    kind = schema.get("type")
    if isinstance(kind, list):  # ["string", "null"]: any of those types
        return st.one_of([from_schema({**schema, "type": one}) for one in kind])
    if kind == "object":
        return _object(schema)
    if kind == "array":
        return st.lists(
            from_schema(schema["items"]),
            min_size=schema.get("minItems", 0),
            max_size=min(schema.get("maxItems", 4), 4),
        )
    if kind == "string":
        return st.text(min_size=schema.get("minLength", 0), max_size=40)
    if kind == "integer":
        return st.integers(schema.get("minimum"), schema.get("maximum", 10**9))
    if kind == "number":
        return st.floats(schema.get("minimum", -1e9), schema.get("maximum", 1e9), allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    raise ValueError(f"schema type not supported: {kind!r}")


def _object(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """The declared properties only (an open object's others are its own to pass on)."""
    if schema.get("additionalProperties", False) not in (True, False):
        raise ValueError("additionalProperties with a schema is not supported")
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    return st.fixed_dictionaries(
        {name: from_schema(properties[name]) for name in properties if name in required},
        optional={
            name: from_schema(sub) for name, sub in properties.items() if name not in required
        },
    )
