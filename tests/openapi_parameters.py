"""The query parameters an OpenAPI operation documents, by the names a client sends.

A list operation's filters are properties of ``style: form, explode: true`` objects (``filters``,
``<relation>_filters``): each property is sent as a parameter of its own, so the tests read the
document by those names.
"""

from __future__ import annotations

from typing import Any


def resolved(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every ``$ref`` into ``document`` replaced by its target, recursively."""
    if "$ref" in schema:
        target: Any = document
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return resolved(document, target)
    return {key: resolved(document, value) if isinstance(value, dict) else value for key, value in schema.items()}


def sent_parameters(document: dict[str, Any], operation: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each query parameter of ``operation`` as sent, by name: ``{"schema": ..., ...}``, schemas resolved.

    A plain parameter is its own entry (``page``, ``order_by``); each property of a form-exploded
    object is one too, with the name of its object under ``"object"`` and its schema as declared
    under ``"declared"`` (a ``$ref`` to a shared value schema, or inline).
    """
    found: dict[str, dict[str, Any]] = {}
    for parameter in operation["parameters"]:
        schema = resolved(document, parameter["schema"])
        if schema.get("type") == "object" and parameter.get("style", "form") == "form":
            for name, declared in parameter["schema"]["properties"].items():
                found[name] = {"name": name, "object": parameter["name"], "declared": declared}
                found[name]["schema"] = schema["properties"][name]
        else:
            found[parameter["name"]] = {**parameter, "schema": schema}
    return found
