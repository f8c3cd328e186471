"""The one registry of date parts: what a filter may compare instead of a whole date or datetime.

``time_hour__month__in=3,4`` compares the month of ``time_hour`` (docs: query language, "Parts of
dates"). A part is named like a relation step after a date or datetime path and before the operator;
a field or relation of that name wins over the part, as a relation step wins over an operator.

Each part is defined here once, by ``Part.extract`` on a Python value: the memory backend applies it
as written, and the relational compilers must agree with it (the conformance case table checks
that they do). A part that covers one interval of the column's own values (``date``, ``year``) is
compiled as comparisons of the column with the interval's ends (``PartOf.spans``), which an ordinary
index on the column serves; the others are computed per row by the database's own function
(``relational.databases.Database.parts``) and priced as scans (docs: admission, "The cost of a
list"). Parts are in UTC, the time zone every datetime is stored in (docs: design, "Coercion").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from litestar_listing.core.fields import ValueType

__all__ = ("PARTS", "Part", "PartOf", "Span")

Day = dt.date
Span = tuple[object | None, object | None]
"""A half-open interval of a column's values, ``low <= value < high``; None is no bound on that side."""

_DATES = frozenset({ValueType.DATE, ValueType.DATETIME})
_DATETIMES = frozenset({ValueType.DATETIME})


def _day(value: dt.date) -> dt.date:
    if isinstance(value, dt.datetime):
        utc = value if value.tzinfo is None else value.astimezone(dt.timezone.utc)
        return utc.date()
    return value


def _year(value: dt.date | str) -> int:
    # A key of a JSON document holds a date as YYYY-MM-DD text, which need not name a day (2024-02-30):
    # its year is the year it writes. ``year`` is the one part of such a key (docs: query language,
    # "Keys of JSON documents").
    return int(value[:4]) if isinstance(value, str) else _day(value).year


def _hour(value: dt.date) -> int:
    assert isinstance(value, dt.datetime)  # noqa: S101 - the hour applies to datetimes only
    return (value if value.tzinfo is None else value.astimezone(dt.timezone.utc)).hour


def _year_span(year: object) -> tuple[Day, Day | None]:
    assert isinstance(year, int)  # noqa: S101 - coerced within Part.bounds
    return dt.date(year, 1, 1), (dt.date(year + 1, 1, 1) if year < dt.MAXYEAR else None)


def _date_span(day: object) -> tuple[Day, Day | None]:
    assert isinstance(day, dt.date)  # noqa: S101 - coerced as a date
    return day, (day + dt.timedelta(days=1) if day < dt.date.max else None)


@dataclass(frozen=True, slots=True)
class Part:
    """One part of a date or datetime.

    Attributes:
        name: The step in a parameter name, e.g. ``month`` in ``time_hour__month__in``.
        label: Its meaning, for documentation and OpenAPI.
        type: The type of its values: ``INTEGER`` or ``DATE``.
        bounds: For an integer part, its smallest and largest value (a value outside is a 400).
        types: The field types it applies to.
        extract: Its value from a field's (non-NULL) value, a date or datetime (for ``year``, also a
            JSON key's ``YYYY-MM-DD`` text): the definition every backend follows.
        span: For a part that covers one interval of the field's values, that interval from the
            part's value, ``(first day, first day after)`` (None after the last day there is);
            None for a part computed per row.
    """

    name: str
    label: str
    type: ValueType
    types: frozenset[ValueType]
    extract: Callable[[Any], object]
    bounds: tuple[int, int] | None = None
    span: Callable[[object], tuple[Day, Day | None]] | None = None

    @property
    def ranged(self) -> bool:
        """Whether a comparison of the part is a range of the field's own values, which an index serves."""
        return self.span is not None

    def applies_to(self, value_type: ValueType) -> bool:
        """Whether the part is defined for a field of ``value_type``."""
        return value_type in self.types

    def __repr__(self) -> str:
        return f"Part({self.name!r})"


def _registry(*parts: Part) -> Mapping[str, Part]:
    return MappingProxyType({part.name: part for part in parts})


PARTS: Mapping[str, Part] = _registry(
    Part("date", "the date (UTC)", ValueType.DATE, _DATETIMES, _day, span=_date_span),
    Part("year", "the year", ValueType.INTEGER, _DATES, _year, (1, 9999), _year_span),
    Part(
        "quarter", "the quarter, 1 to 4", ValueType.INTEGER, _DATES, lambda value: (_day(value).month + 2) // 3, (1, 4)
    ),
    Part("month", "the month, 1 to 12", ValueType.INTEGER, _DATES, lambda value: _day(value).month, (1, 12)),
    Part("day", "the day of the month, 1 to 31", ValueType.INTEGER, _DATES, lambda value: _day(value).day, (1, 31)),
    Part(
        "week_day",
        "the ISO day of the week, 1 (Monday) to 7 (Sunday)",
        ValueType.INTEGER,
        _DATES,
        lambda value: _day(value).isoweekday(),
        (1, 7),
    ),
    Part("hour", "the hour (UTC), 0 to 23", ValueType.INTEGER, _DATETIMES, _hour, (0, 23)),
)
"""Every date part, by the step a client writes (docs: query language, "Parts of dates")."""


@dataclass(frozen=True, slots=True)
class PartOf:
    """A part of one field: what a filter on ``<path>__<part>`` compares.

    Attributes:
        part: The part.
        field_type: The field's type, ``DATE`` or ``DATETIME``.
        aware: For a datetime field, whether its values carry an offset (``FieldInfo.timezone``):
            the ends of a span are then UTC datetimes, else naive ones in UTC.
        text: The field's dates are ``YYYY-MM-DD`` text (a key of a JSON document): the ends of a
            span are that text.
    """

    part: Part
    field_type: ValueType
    aware: bool = True
    text: bool = False

    @property
    def name(self) -> str:
        """The part's name."""
        return self.part.name

    @property
    def ranged(self) -> bool:
        """Whether the part is compiled as a range of the field (``Part.ranged``)."""
        return self.part.ranged

    def extract(self, value: dt.date) -> object:
        """The part of a field's non-NULL ``value``."""
        return self.part.extract(value)

    def spans(self, operator: str, value: object) -> tuple[Span, ...]:
        """The field's values whose part meets ``operator`` and ``value``, as disjoint spans in order.

        For a ranged part and any operator but ``isnull``, whose meaning is the field's own; an empty
        tuple matches no row. NULL matches no span: the operators that match NULL (``ne``, ``nin``)
        add it as for any field.

        Raises:
            ValueError: the part is not ranged, or the operator is not one of the comparisons, ``in``,
                ``nin`` or ``between``.
        """
        span = self.part.span
        if span is None:
            msg = f"the part {self.name!r} is not a range of its field"
            raise ValueError(msg)
        if operator == "between":
            assert isinstance(value, tuple)  # noqa: S101 - a coerced range
            low, high = value
            return ((self._end(span(low)[0]), self._end(span(high)[1])),)
        if operator in {"eq", "ne", "in", "nin"}:
            chosen = _merged(span(one) for one in (value if isinstance(value, tuple) else (value,)))
            ends = [(self._end(low), self._end(high)) for low, high in chosen]
            return tuple(ends) if operator in {"eq", "in"} else _gaps(ends)
        first, after = span(value)
        bounds: Mapping[str, Span] = {
            "gt": (self._end(after), None),
            "gte": (self._end(first), None),
            "lt": (None, self._end(first)),
            "lte": (None, self._end(after)),
        }
        if operator not in bounds:
            msg = f"the operator {operator!r} does not compare a part"
            raise ValueError(msg)
        if operator == "gt" and after is None:
            return ()
        return (bounds[operator],)

    def _end(self, day: Day | None) -> object | None:
        """A span's end as a value of the field: the day itself, or midnight (UTC) of it."""
        if day is None or self.field_type is ValueType.DATE:
            return day.isoformat() if self.text and day is not None else day
        midnight = dt.datetime(day.year, day.month, day.day)  # noqa: DTZ001 - naive UTC, or given its zone here
        return midnight.replace(tzinfo=dt.timezone.utc) if self.aware else midnight


def _merged(spans: Iterable[tuple[Day, Day | None]]) -> list[tuple[Day, Day | None]]:
    """Spans sorted and joined where they touch or overlap."""
    merged: list[tuple[Day, Day | None]] = []
    for low, high in sorted(spans, key=lambda span: span[0]):
        if merged and (merged[-1][1] is None or low <= merged[-1][1]):
            last_low, last_high = merged[-1]
            merged[-1] = (last_low, None if last_high is None or high is None else max(last_high, high))
        else:
            merged.append((low, high))
    return merged


def _gaps(spans: Sequence[Span]) -> tuple[Span, ...]:
    """What lies outside ``spans`` (sorted, disjoint, every low given), as spans."""
    gaps: list[Span] = []
    start: object | None = None
    for low, high in spans:
        gaps.append((start, low))
        start = high
        if high is None:
            return tuple(gaps)
    gaps.append((start, None))
    return tuple(gaps)
