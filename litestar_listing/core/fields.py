"""The vocabulary every other core module builds on: a field's path and the type of its values.

A leaf: it imports nothing of the package, so ``query``, ``schema`` and ``operators`` can all use it
without importing each other.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ("FILTERS", "LOOKUP_SEP", "FieldPath", "ValueType", "filter_group", "filter_object_entry")

LOOKUP_SEP = "__"
"""Separator between relation steps, the field and the operator in a parameter name.

``author__name__istartswith`` (docs: query language, "Relation paths").
"""


class ValueType(str, enum.Enum):
    """The type of a field's values, which decides coercion and the operators (docs: design, "Coercion")."""

    TEXT = "text"
    INTEGER = "integer"
    FLOAT = "float"
    DECIMAL = "decimal"
    BOOLEAN = "boolean"
    DATE = "date"
    DATETIME = "datetime"
    UUID = "uuid"
    ENUM = "enum"
    IDENTIFIER = "identifier"
    """An opaque store identifier with its own ``coerce`` (e.g. a document store's ObjectId)."""


@dataclass(frozen=True, slots=True)
class FieldPath:
    """A field reached from the listed model through zero or more relations.

    Attributes:
        segments: Relation names followed by the field name, e.g. ``("airline", "name")``.
    """

    segments: tuple[str, ...]

    @classmethod
    def parse(cls, name: str) -> FieldPath:
        """Split ``"airline__name"`` into a path; no validation against any model."""
        return cls(tuple(name.split(LOOKUP_SEP)))

    @property
    def name(self) -> str:
        """The path as written in a query string, e.g. ``airline__name``."""
        return LOOKUP_SEP.join(self.segments)

    @property
    def relations(self) -> tuple[str, ...]:
        """The relation steps, without the final field."""
        return self.segments[:-1]

    @property
    def field(self) -> str:
        """The final field name."""
        return self.segments[-1]

    def __str__(self) -> str:
        return self.name


FILTERS = "filters"
"""The filter object of a resource's own fields; a relation's is ``<relation>_filters`` (``filter_group``)."""


def filter_group(path: FieldPath) -> str:
    """The name of the filter object that holds ``path``'s parameters: ``filters`` or ``<relation>_filters``.

    Own fields are in ``filters``; a relation path is in the object of its first relation
    (``airline__name__istartswith`` in ``airline_filters``). The OpenAPI document declares one query
    parameter per object, and a client may send a filter as a property of its object
    (``filter_object_entry``; docs: query language, "Filter objects"). Client generators make one
    identifier of ``flight_id`` and ``flight__id`` (they merge runs of ``_``); in separate objects
    the two never meet.
    """
    return f"{path.segments[0]}_{FILTERS}" if path.relations else FILTERS


def filter_object_entry(key: str) -> tuple[str, str | None]:
    """Split a parameter name written as a property of a filter object, ``object[name]``.

    ``filters[origin]`` is ``("origin", "filters")``: OpenAPI's ``deepObject`` way of sending an
    object, which some clients use for every object (openapi-fetch by default). Any other name is
    ``(key, None)``. Which object a name belongs in is ``filter_group``'s to say (docs: query
    language, "Filter objects").
    """
    holder, bracket, rest = key.partition("[")
    if not bracket or not holder or not rest.endswith("]"):
        return key, None
    name = rest[:-1]
    if not name or "[" in name or "]" in name:
        return key, None
    return name, holder
