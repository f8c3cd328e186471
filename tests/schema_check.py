"""A JSON Schema check for the keywords the listing's OpenAPI error bodies use (no jsonschema in the test group).

``problems(document, schema, value)`` lists where ``value`` breaks ``schema`` (``$ref``s resolved in
``document``); a keyword it does not know fails the check rather than passing silently.
"""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, type | tuple[type, ...]] = {
    "object": dict,
    "array": list,
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "null": type(None),
}
_ANNOTATIONS = {"description", "title", "default", "examples"}


def problems(document: dict[str, Any], schema: dict[str, Any], value: Any, where: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema``, as ``"<path>: <what>"``; empty when it conforms."""
    if "$ref" in schema:
        target: Any = document
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return problems(document, target, value, where)
    found: list[str] = []
    for keyword, expected in schema.items():
        if keyword in _ANNOTATIONS:
            continue
        if keyword == "type":
            python = _TYPES[expected]
            if not isinstance(value, python) or (expected in {"integer", "number"} and isinstance(value, bool)):
                return [f"{where}: expected {expected}, got {type(value).__name__}"]
        elif keyword == "const" and value != expected:
            found.append(f"{where}: expected {expected!r}, got {value!r}")
        elif keyword == "enum" and value not in expected:
            found.append(f"{where}: {value!r} not in {expected!r}")
        elif keyword == "minLength" and isinstance(value, str) and len(value) < expected:
            found.append(f"{where}: shorter than {expected}")
        elif keyword == "minItems" and isinstance(value, list) and len(value) < expected:
            found.append(f"{where}: fewer than {expected} items")
        elif keyword == "maxItems" and isinstance(value, list) and len(value) > expected:
            found.append(f"{where}: more than {expected} items")
        elif keyword == "required" and isinstance(value, dict):
            found.extend(f"{where}: missing {name!r}" for name in expected if name not in value)
        elif keyword == "properties" and isinstance(value, dict):
            for name, child in expected.items():
                if name in value:
                    found.extend(problems(document, child, value[name], f"{where}.{name}"))
        elif keyword == "additionalProperties" and isinstance(value, dict) and expected is False:
            extra = set(value) - set(schema.get("properties", {}))
            found.extend(f"{where}: unexpected {name!r}" for name in sorted(extra))
        elif keyword == "items" and isinstance(value, list):
            for index, item in enumerate(value):
                found.extend(problems(document, expected, item, f"{where}[{index}]"))
        elif keyword not in {
            "const",
            "enum",
            "minLength",
            "minItems",
            "maxItems",
            "required",
            "properties",
            "additionalProperties",
            "items",
        }:
            found.append(f"{where}: the check does not know the keyword {keyword!r}")
    return found
