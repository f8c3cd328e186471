"""The vocabulary every other core module builds on: a field's path and the type of its values.

A leaf: it imports nothing of the package, so ``query``, ``schema`` and ``operators`` can all use it
without importing each other.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ("LOOKUP_SEP", "FieldPath", "ValueType")

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
