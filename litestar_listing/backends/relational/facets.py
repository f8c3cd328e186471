"""What the rows of a relational facet statement mean: each facet's values, counts and number of values.

The statements are the compiler's (``RelationalCompiler.facet_statement``) and run as a list's do
(``RelationalBackend.facet_counts``). Here their rows become ``FacetCounts``, each value typed as
the list's items hold it whatever the driver returned for it: an integer 1 for a boolean on SQLite
and MariaDB, text for a date on SQLite, a member for an enumeration (docs: facets, "The answer").
"""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from litestar_listing.core.facets import Facet, FacetCount, FacetCounts
from litestar_listing.core.fields import ValueType

if TYPE_CHECKING:
    from litestar_listing.core.schema import FieldInfo, ModelGraph

__all__ = ("Read", "facet_counts", "summed_total", "value_reader")

Read = Callable[[Any], object]
"""A facet's non-NULL value as the driver returned it -> as the list's items hold it."""


def _same(value: Any) -> object:
    return value


def _boolean(value: Any) -> object:
    return value if isinstance(value, bool) else bool(value)


def _integer(value: Any) -> object:
    return value if type(value) is int else int(value)


def _float(value: Any) -> object:
    return value if type(value) is float else float(value)


def _decimal(value: Any) -> object:
    # Through its text: a float read from SQLite becomes the decimal it prints as, as Piccolo reads it.
    return value if isinstance(value, Decimal) else Decimal(str(value))


def _date(value: Any) -> object:
    if isinstance(value, dt.datetime):
        return value.date()
    return dt.date.fromisoformat(value) if isinstance(value, str) else value


def _uuid(value: Any) -> object:
    # A driver's own UUID class (asyncpg's) becomes the standard one, as the other backends give it.
    if type(value) is uuid.UUID:
        return value
    return uuid.UUID(bytes=value) if isinstance(value, bytes) else uuid.UUID(str(value))


def _plain(value: Any) -> object:
    return value.value if isinstance(value, enum.Enum) else value


def _datetime(aware: bool) -> Read:  # noqa: FBT001
    def read(value: Any) -> object:
        if isinstance(value, str):
            value = dt.datetime.fromisoformat(value)
        if aware and isinstance(value, dt.datetime) and value.tzinfo is None:
            return value.replace(tzinfo=dt.timezone.utc)  # stored in UTC (docs: design, "Coercion")
        return value

    return read


_READS: Mapping[ValueType, Read] = MappingProxyType(
    {
        ValueType.BOOLEAN: _boolean,
        ValueType.INTEGER: _integer,
        ValueType.FLOAT: _float,
        ValueType.DECIMAL: _decimal,
        ValueType.DATE: _date,
        ValueType.UUID: _uuid,
        ValueType.ENUM: _plain,
    }
)
"""By a field's type, how a value the driver returned is read (the types not here: as it is)."""


def value_reader(graph: ModelGraph, facet: Facet) -> Read:
    """How the values of ``facet``'s statement are read, from the type of what it counts.

    A part of a date: its integer, or its date for ``date``. A JSON key: a value of the key's
    type, a date as its ``YYYY-MM-DD`` text (``JsonKey.values``). A field: as the list's items hold
    it (an enumeration by its value, a datetime in UTC where the column stores an offset).
    """
    if facet.part is not None:
        return _READS[facet.part.part.type]
    key = facet.path.key
    if key is not None:
        return _same if key.type is ValueType.DATE else _READS.get(key.type, _same)
    info = _field(graph, facet)
    if info.type is ValueType.DATETIME:
        return _datetime(info.timezone)
    return _READS.get(info.type, _same)


def _field(graph: ModelGraph, facet: Facet) -> FieldInfo:
    """The field at the end of ``facet``'s path."""
    entity = graph.root_entity
    for step in facet.path.relations:
        entity = graph.entities[entity.relations[step].target]
    return entity.fields[facet.path.field]


def facet_counts(facet: Facet, rows: Sequence[Sequence[Any]], read: Read) -> FacetCounts:
    """The answer for ``facet`` from the rows of its statement (``compiler.FACET_LABELS``: value, count, groups...).

    Every row carries the number of values; none means no listed row, so no value.
    """
    values = tuple(FacetCount(None if row[0] is None else read(row[0]), int(row[1])) for row in rows)
    return FacetCounts(facet, values, int(rows[0][2]) if rows else 0)


def summed_total(rows: Sequence[Sequence[Any]]) -> int:
    """The sum of all the counts of a facet's statement: the rows it counted, once each (``sums_total``)."""
    return int(rows[0][3]) if rows else 0
