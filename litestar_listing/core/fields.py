"""The vocabulary every other core module builds on: a field's path and the type of its values.

A leaf: it imports nothing of the package, so ``query``, ``schema`` and ``operators`` can all use it
without importing each other.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

__all__ = ("FILTERS", "LOOKUP_SEP", "FieldPath", "JsonKey", "ValueType", "filter_group", "filter_object_entry")

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
    JSON = "json"
    """A JSON document: never filtered, ordered or searched whole; the keys a resource declares are
    (``JsonKey``; docs: query language, "Keys of JSON documents")."""


_DATE_TEXT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


@dataclass(frozen=True, slots=True)
class JsonKey:
    """A key inside the JSON document of a field, which a resource declares with its type.

    Attributes:
        keys: The keys from the document's top, e.g. ``("dims", "width")``.
        type: The type of its values: ``TEXT``, ``INTEGER``, ``FLOAT``, ``BOOLEAN`` or ``DATE``
            (``YYYY-MM-DD`` text in the document).
        many: The key holds a list of such values: a filter matches when some element does, as
            through a to-many relation.
    """

    keys: tuple[str, ...]
    type: ValueType
    many: bool = False

    def values(self, document: object) -> tuple[object, ...]:
        """The values of the key in ``document``, a decoded JSON value (the definition every backend follows).

        None where the key is missing, JSON null or of another type than declared; for a list, each
        element of the declared type (docs: query language, "Keys of JSON documents").
        """
        found = self._found(document)
        if not self.many:
            value = self._typed(found)
            return () if value is None else (value,)
        return tuple(value for value in map(self._typed, found) if value is not None) if isinstance(found, list) else ()

    def holds_list(self, document: object) -> bool:
        """Whether ``document`` holds a list at the key (of any elements): ``isnull=false`` of a list key."""
        return isinstance(self._found(document), list)

    def _found(self, document: object) -> object:
        """What ``document`` holds at the key; None where it holds nothing."""
        found: object = document
        for key in self.keys:
            if not isinstance(found, dict) or key not in found:
                return None
            found = found[key]
        return found

    def _typed(self, value: object) -> object | None:
        kind = self.type
        if kind is ValueType.BOOLEAN:
            return value if isinstance(value, bool) else None
        if isinstance(value, bool):
            return None
        if kind is ValueType.INTEGER:
            return value if isinstance(value, int) else None
        if kind is ValueType.FLOAT:
            return float(value) if isinstance(value, (int, float)) else None
        if kind is ValueType.TEXT:
            return value if isinstance(value, str) else None
        # A date: its ISO text, compared as text (``YYYY-MM-DD`` orders as the dates do).
        return value if isinstance(value, str) and _DATE_TEXT.fullmatch(value) else None

    @property
    def name(self) -> str:
        """The keys as a client writes them after the field, e.g. ``dims__width``."""
        return LOOKUP_SEP.join(self.keys)


@dataclass(frozen=True, slots=True)
class FieldPath:
    """A field reached from the listed model through zero or more relations.

    Attributes:
        segments: Relation names followed by the field name, e.g. ``("airline", "name")``.
        key: A key inside the field's JSON document, or None for the field's own value.
    """

    segments: tuple[str, ...]
    key: JsonKey | None = None

    @classmethod
    def parse(cls, name: str) -> FieldPath:
        """Split ``"airline__name"`` into a path; no validation against any model."""
        return cls(tuple(name.split(LOOKUP_SEP)))

    @property
    def name(self) -> str:
        """The path as written in a query string, e.g. ``airline__name``, ``plane__specs__seats``."""
        written = LOOKUP_SEP.join(self.segments)
        return written if self.key is None else f"{written}{LOOKUP_SEP}{self.key.name}"

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
