"""What `api_input.find_unsafe_string` enforces, as JSON Schema: no string anywhere in a body (a value or an object's
key, declared or not) holds a NUL. Pure. The OpenAPI document runs every body schema through `with_safe_strings`, so
a request the document calls valid is one the server takes, and one it calls invalid for a NUL is one the server
refuses (Schemathesis checks both ways).

Lone surrogates are refused too; JSON Schema cannot name them, and a JSON encoder that writes valid UTF-8 never sends
one, so the document stays silent on them.
"""

from typing import Any

from sessions_app.core.api_input import SAFE_TEXT_PATTERN

type Json = dict[str, Any]

SAFE_JSON = "SafeJson"
SAFE_JSON_REF: Json = {"$ref": f"#/components/schemas/{SAFE_JSON}"}
SAFE_NAMES: Json = {"pattern": SAFE_TEXT_PATTERN}
SAFE_JSON_SCHEMA: Json = {
    "description": "Any JSON whose strings and keys hold no NUL character",
    "anyOf": [
        {"type": "null"},
        {"type": "boolean"},
        {"type": "number"},
        {"type": "string", "pattern": SAFE_TEXT_PATTERN},
        {"type": "array", "items": SAFE_JSON_REF},
        {"type": "object", "propertyNames": SAFE_NAMES, "additionalProperties": SAFE_JSON_REF},
    ],
}

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "contains")
_SAYS_WHAT_IT_IS = ("type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const", "not")
_FIXED_STRINGS = ("pattern", "format", "enum", "const")


def with_safe_strings(schema: Json | bool) -> Json:
    """`schema` (a JSON Schema of a request body, `$ref`s into `#/components/schemas`) with every string it allows
    and every object key it leaves open bound to text without NUL; a schema that allows anything allows SafeJson."""
    if schema is True or schema == {}:
        return dict(SAFE_JSON_REF)
    if not isinstance(schema, dict):
        return {"not": {}}
    out: Json = dict(schema)
    for key in _SCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {name: with_safe_strings(value) for name, value in out[key].items()}
    for key in _SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [with_safe_strings(value) for value in out[key]]
    for key in _SCHEMA_VALUES:
        if key in out and not (key == "additionalProperties" and out[key] is False):
            out[key] = with_safe_strings(out[key])
    if not any(key in out for key in _SAYS_WHAT_IT_IS):  # `{"default": null, "title": ...}`: any value
        return {**out, **SAFE_JSON_REF}
    kinds = out.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "string" in kinds and not any(key in out for key in _FIXED_STRINGS):
        out["pattern"] = SAFE_TEXT_PATTERN
    if "object" in kinds or "properties" in out:
        out.setdefault("propertyNames", SAFE_NAMES)
        out.setdefault("additionalProperties", dict(SAFE_JSON_REF))
    return out
