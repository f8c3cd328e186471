"""The one operator registry: every operator a filter parameter may end in.

The query language says what each means (docs: query language, "Filters and operators"). Backends
compile operators by name; a conformance case per operator keeps them in step.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from litestar_listing.core.fields import ValueType

__all__ = ("MANY", "ONE", "OPERATORS", "PAIR", "Arity", "Element", "Operator", "ValueKind")


class Element(enum.Enum):
    """What one comma-separated part of an operator's value is, before coercion."""

    FIELD = "field"
    """A value of the field's own type."""
    TEXT = "text"
    """Literal text; ``%``, ``_`` and ``\\`` are not special (at most ``Limits.max_pattern_length``)."""
    FLAG = "flag"
    """A boolean flag (``true``/``false``)."""
    PATTERN = "pattern"
    """A LIKE pattern: ``%`` any run, ``_`` one character, ``\\`` escapes the next character (at
    most ``Limits.max_pattern_length``)."""


@dataclass(frozen=True, slots=True)
class Arity:
    """How many elements the value of one operator holds, and how a client writes them.

    Attributes:
        count: Exactly this many comma-separated elements (a tuple of them), 1 for a single element
            (the element itself, commas not special); None for one or more, up to
            ``Limits.max_in_values`` over all repetitions, duplicates dropped (a tuple in first-seen order).
        ascending: The elements must be in non-decreasing order (``low <= high``); else a 400.
        written: How a client writes the elements, for messages, e.g. ``low,high``.
        suffix: Appended to the element's OpenAPI component name for the array schema, e.g. ``List``.
        explode: OpenAPI's ``explode`` for the parameter: False when the elements travel comma-separated
            in one parameter, None (the default, repeated parameters) otherwise.
    """

    count: int | None
    ascending: bool = False
    written: str = ""
    suffix: str = ""
    explode: bool | None = None

    @property
    def single(self) -> bool:
        """Whether the value is one element, not a tuple of them."""
        return self.count == 1

    @property
    def count_message(self) -> str:
        """The 400 message for a wrong number of elements, e.g. ``expected two comma-separated values: low,high``."""
        words = {2: "two", 3: "three", 4: "four"}
        return f"expected {words.get(self.count or 0, str(self.count))} comma-separated values: {self.written}"

    @property
    def order_message(self) -> str:
        """The 400 message for elements out of order, e.g. ``expected low,high with low <= high``."""
        return f"expected {self.written} with {' <= '.join(self.written.split(','))}"


ONE = Arity(1)
MANY = Arity(None, suffix="List")
PAIR = Arity(2, ascending=True, written="low,high", suffix="Range", explode=False)


class ValueKind(enum.Enum):
    """What the value of an operator is: its element and its arity, in one place.

    Parsing (``core/parsing.py``), OpenAPI (``plugin/openapi.py``) and the test strategies read the
    kind's ``element`` and ``arity``; a new kind is a new member here.
    """

    FIELD = ("field", Element.FIELD, ONE)
    """One value of the field's own type."""
    LIST = ("list", Element.FIELD, MANY)
    """Comma-separated values of the field's own type."""
    FLAG = ("flag", Element.FLAG, ONE)
    """A boolean flag (``isnull``)."""
    TEXT = ("text", Element.TEXT, ONE)
    """Literal text; ``%``, ``_`` and ``\\`` are not special."""
    PATTERN = ("pattern", Element.PATTERN, ONE)
    """A LIKE pattern: ``%`` any run, ``_`` one character, ``\\`` escapes the next character."""
    RANGE = ("range", Element.FIELD, PAIR)
    """Two comma-separated values of the field's own type, ``low,high`` with ``low <= high``."""

    element: Element
    arity: Arity

    def __init__(self, label: str, element: Element, arity: Arity) -> None:
        self.label = label
        self.element = element
        self.arity = arity


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
_ANY = frozenset(ValueType) - {ValueType.JSON}
"""Every type a value can be compared as: a JSON document only through its declared keys."""


@dataclass(frozen=True, slots=True)
class Operator:
    """One operator.

    Attributes:
        name: The suffix in a parameter name, e.g. ``gte`` in ``year__gte``.
        label: A readable meaning for documentation and OpenAPI, e.g. ``greater than or equal to``.
        kind: What the value is (see ``ValueKind``).
        types: The field types the operator applies to.
        repeated_as: The operator a repetition of the parameter turns into (``f=a&f=b`` is
            ``f__in``), or None when repeating it is an error (docs: design, "Repeated parameters").
        matches_null: True when a NULL value satisfies the operator (``ne``, ``nin``; docs: design, "NULL").
        indexed: True when an ordinary (B-tree) index on the field serves it: a lookup or a range of
            the index, not a test of every row; the cost model prices the others as scans (docs:
            admission, "The cost of a list").
        lists: Applies to lists of values only (a JSON key declared as a list), not to single values.
    """

    name: str
    label: str
    kind: ValueKind
    types: frozenset[ValueType]
    repeated_as: str | None = None
    matches_null: bool = False
    indexed: bool = False
    lists: bool = False

    def applies_to(self, value_type: ValueType, *, many: bool = False) -> bool:
        """Whether the operator is defined for a field of ``value_type``; ``many``: a list of such values.

        A list takes the operators of its element type, compared with each element, and the list
        operators; a single value takes all but the list operators (docs: query language, "Keys
        of JSON documents").
        """
        return value_type in self.types and (many or not self.lists)

    def __repr__(self) -> str:
        return f"Operator({self.name!r})"


def _registry(*operators: Operator) -> Mapping[str, Operator]:
    return MappingProxyType({operator.name: operator for operator in operators})


OPERATORS: Mapping[str, Operator] = _registry(
    Operator("eq", "equal to", ValueKind.FIELD, _ANY, repeated_as="in", indexed=True),
    Operator("ne", "not equal to; NULL counts", ValueKind.FIELD, _ANY, "nin", matches_null=True),
    Operator("gt", "greater than", ValueKind.FIELD, _ORDERED, indexed=True),
    Operator("gte", "greater than or equal to", ValueKind.FIELD, _ORDERED, indexed=True),
    Operator("lt", "less than", ValueKind.FIELD, _ORDERED, indexed=True),
    Operator("lte", "less than or equal to", ValueKind.FIELD, _ORDERED, indexed=True),
    Operator("in", "one of the values", ValueKind.LIST, _ANY, repeated_as="in", indexed=True),
    Operator(
        "nin",
        "none of the values; NULL counts",
        ValueKind.LIST,
        _ANY,
        "nin",
        matches_null=True,
    ),
    Operator(
        "between",
        "between the two comma-separated bounds low,high, both included",
        ValueKind.RANGE,
        _RANGED,
        indexed=True,
    ),
    Operator("isnull", "is NULL (true) or not (false)", ValueKind.FLAG, _ANY, indexed=True),
    Operator("like", "matches the case-sensitive LIKE pattern", ValueKind.PATTERN, _TEXT),
    Operator("ilike", "contains the text, ignoring case", ValueKind.TEXT, _TEXT),
    Operator("startswith", "starts with the text", ValueKind.TEXT, _TEXT),
    Operator("istartswith", "starts with the text, ignoring case", ValueKind.TEXT, _TEXT),
    Operator("endswith", "ends with the text", ValueKind.TEXT, _TEXT),
    Operator("iendswith", "ends with the text, ignoring case", ValueKind.TEXT, _TEXT),
    Operator("contains", "the list holds the value", ValueKind.FIELD, _ANY, repeated_as="in", lists=True),
)
"""Every operator, by the suffix a client writes; ``eq`` is the default when there is no suffix."""
