"""The one operator registry: every lookup a filter parameter may end in (spec §4.4.7).

Backends compile operators by name; a conformance case per operator keeps them in step.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from litestar_listing.core.fields import ValueType

__all__ = ("OPERATORS", "Operator", "ValueKind")


class ValueKind(str, enum.Enum):
    """What the value of a lookup is, before coercion."""

    FIELD = "field"
    """One value of the field's own type."""
    LIST = "list"
    """Comma-separated values of the field's own type."""
    FLAG = "flag"
    """A boolean flag (``isnull``)."""
    TEXT = "text"
    """Literal text; ``%``, ``_`` and ``\\`` are not special."""
    PATTERN = "pattern"
    """A LIKE pattern: ``%`` any run, ``_`` one character, ``\\`` escapes the next character."""
    RANGE = "range"
    """Two comma-separated values of the field's own type, ``low,high`` with ``low <= high``."""


_ORDERED = frozenset(
    {
        ValueType.TEXT,
        ValueType.INTEGER,
        ValueType.FLOAT,
        ValueType.DECIMAL,
        ValueType.DATE,
        ValueType.DATETIME,
    }
)
_RANGED = _ORDERED - {ValueType.TEXT}
"""Numbers, dates and datetimes: text bounds would be ambiguous (a comma in the text) and the
database's collation, not Python's, orders text."""
_TEXT = frozenset({ValueType.TEXT})
_ANY = frozenset(ValueType)


@dataclass(frozen=True, slots=True)
class Operator:
    """One lookup.

    Attributes:
        name: The suffix in a parameter name, e.g. ``gte`` in ``year__gte``.
        label: A readable meaning for documentation and OpenAPI, e.g. ``greater than or equal to``.
        kind: What the value is (see ``ValueKind``).
        types: The field types the lookup applies to.
        repeated_as: The operator a repetition of the parameter turns into (``f=a&f=b`` is
            ``f__in``), or None when repeating it is an error (DESIGN.md, "Repeated parameters").
        matches_null: True when a NULL value satisfies the lookup (``ne``, ``nin``; DESIGN.md, "NULL").
    """

    name: str
    label: str
    kind: ValueKind
    types: frozenset[ValueType]
    repeated_as: str | None = None
    matches_null: bool = False

    def applies_to(self, value_type: ValueType) -> bool:
        """Whether the lookup is defined for a field of ``value_type``."""
        return value_type in self.types

    def __repr__(self) -> str:
        return f"Operator({self.name!r})"


def _registry(*operators: Operator) -> Mapping[str, Operator]:
    return MappingProxyType({operator.name: operator for operator in operators})


OPERATORS: Mapping[str, Operator] = _registry(
    Operator("eq", "equal to", ValueKind.FIELD, _ANY, repeated_as="in"),
    Operator("ne", "not equal to; NULL counts", ValueKind.FIELD, _ANY, "nin", matches_null=True),
    Operator("gt", "greater than", ValueKind.FIELD, _ORDERED),
    Operator("gte", "greater than or equal to", ValueKind.FIELD, _ORDERED),
    Operator("lt", "less than", ValueKind.FIELD, _ORDERED),
    Operator("lte", "less than or equal to", ValueKind.FIELD, _ORDERED),
    Operator("in", "one of the values", ValueKind.LIST, _ANY, repeated_as="in"),
    Operator(
        "nin",
        "none of the values; NULL counts",
        ValueKind.LIST,
        _ANY,
        "nin",
        matches_null=True,
    ),
    Operator("between", "between the two comma-separated bounds low,high, both included", ValueKind.RANGE, _RANGED),
    Operator("isnull", "is NULL (true) or not (false)", ValueKind.FLAG, _ANY),
    Operator("like", "matches the case-sensitive LIKE pattern", ValueKind.PATTERN, _TEXT),
    Operator("ilike", "contains the text, ignoring case", ValueKind.TEXT, _TEXT),
    Operator("startswith", "starts with the text", ValueKind.TEXT, _TEXT),
    Operator("istartswith", "starts with the text, ignoring case", ValueKind.TEXT, _TEXT),
    Operator("endswith", "ends with the text", ValueKind.TEXT, _TEXT),
    Operator("iendswith", "ends with the text, ignoring case", ValueKind.TEXT, _TEXT),
)
"""Every operator, by the suffix a client writes; ``eq`` is the default when there is no suffix."""
