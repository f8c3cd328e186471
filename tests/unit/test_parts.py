"""The date parts (docs: query language, "Parts of dates"): the registry, the spans a ranged part compiles
to, and how parameter names resolve to parts.

The spans are checked against the part's own definition (``Part.extract``) day by day over the edges of
the calendar, and by hand where the ends matter (the last year, adjacent values).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

import pytest

from litestar_listing import InvalidQueryError, MemoryBackend, Resource
from litestar_listing.core.fields import ValueType
from litestar_listing.core.parts import PARTS, PartOf
from litestar_listing.plugin.prepared import prepare
from tests.unit.graph import GRAPH

UTC = dt.timezone.utc
YEAR = PartOf(PARTS["year"], ValueType.DATETIME, aware=True)
DAY = PartOf(PARTS["date"], ValueType.DATETIME, aware=False)
DATE_YEAR = PartOf(PARTS["year"], ValueType.DATE)


def test_a_year_is_its_first_midnight_to_the_next_in_utc() -> None:
    first, after = dt.datetime(2013, 1, 1, tzinfo=UTC), dt.datetime(2014, 1, 1, tzinfo=UTC)
    assert YEAR.spans("eq", 2013) == ((first, after),)
    assert YEAR.spans("gt", 2013) == ((after, None),)
    assert YEAR.spans("gte", 2013) == ((first, None),)
    assert YEAR.spans("lt", 2013) == ((None, first),)
    assert YEAR.spans("lte", 2013) == ((None, after),)
    assert YEAR.spans("ne", 2013) == ((None, first), (after, None))


def test_the_last_year_has_no_end() -> None:
    assert DATE_YEAR.spans("eq", 9999) == ((dt.date(9999, 1, 1), None),)
    assert DATE_YEAR.spans("gt", 9999) == ()  # no row
    assert DATE_YEAR.spans("lte", 9999) == ((None, None),)  # every row but NULL
    assert DATE_YEAR.spans("ne", 9999) == ((None, dt.date(9999, 1, 1)),)


def test_values_that_touch_are_one_span_and_their_complement_is_its_gaps() -> None:
    days = (dt.date(2013, 1, 3), dt.date(2013, 1, 1), dt.date(2013, 1, 2), dt.date(2013, 1, 9))
    # Naive: the ends for a column without an offset.
    midnight = [dt.datetime(2013, 1, day, tzinfo=UTC).replace(tzinfo=None) for day in (1, 4, 9, 10)]
    assert DAY.spans("in", days) == ((midnight[0], midnight[1]), (midnight[2], midnight[3]))
    assert DAY.spans("nin", days) == ((None, midnight[0]), (midnight[1], midnight[2]), (midnight[3], None))
    assert DAY.spans("between", (days[1], days[3])) == ((midnight[0], midnight[3]),)


_MEANINGS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda value, given: value == given,
    "ne": lambda value, given: value != given,
    "gt": lambda value, given: value > given,
    "gte": lambda value, given: value >= given,
    "lt": lambda value, given: value < given,
    "lte": lambda value, given: value <= given,
    "in": lambda value, given: value in given,
    "nin": lambda value, given: value not in given,
    "between": lambda value, given: given[0] <= value <= given[1],
}


@pytest.mark.parametrize("operator", list(_MEANINGS))
@pytest.mark.parametrize("part", [YEAR, DAY, DATE_YEAR], ids=["year", "date", "year-of-a-date"])
def test_spans_hold_exactly_the_values_whose_part_matches(part: PartOf, operator: str) -> None:
    start = dt.datetime(2012, 12, 29, 23, tzinfo=UTC)
    moments = [start + dt.timedelta(hours=7 * step) for step in range(40)]
    values: list[Any] = moments
    if part.field_type is ValueType.DATE:
        values = [moment.date() for moment in moments]
    elif not part.aware:
        values = [moment.replace(tzinfo=None) for moment in moments]
    chosen, other = part.extract(values[10]), part.extract(values[-1])
    given: Any = (chosen, other) if operator in {"in", "nin", "between"} else chosen
    spans: Any = part.spans(operator, given)
    for value in values:
        inside = any((low is None or value >= low) and (high is None or value < high) for low, high in spans)
        assert inside == _MEANINGS[operator](part.extract(value), given), (value, spans)


def test_the_parts_of_a_datetime_are_taken_in_utc() -> None:
    # 2013-12-31 20:00 at -05:00 is 2014-01-01 01:00 UTC: a Wednesday, in the first quarter.
    moment = dt.datetime(2013, 12, 31, 20, tzinfo=dt.timezone(dt.timedelta(hours=-5)))
    got = {name: part.extract(moment) for name, part in PARTS.items()}
    assert got == {
        "date": dt.date(2014, 1, 1),
        "year": 2014,
        "quarter": 1,
        "month": 1,
        "day": 1,
        "week_day": 3,
        "hour": 1,
    }


THINGS = Resource("things", MemoryBackend(GRAPH, []), filter_fields=("*", "owner__*"))


def _parse(query: str) -> object:
    return prepare(THINGS).parser.parse(parse_qsl(query, keep_blank_values=True))


def test_a_part_filter_compares_the_field_through_its_part() -> None:
    (item,) = _parse("at__month__in=3,4").filters  # type: ignore[attr-defined]
    assert (item.path.name, item.operator.name, item.value, item.name) == ("at", "in", (3, 4), "at__month")
    assert item.part == PartOf(PARTS["month"], ValueType.DATETIME, aware=True)


def test_a_part_and_its_field_are_two_filters() -> None:
    filters = _parse("at__year=2024&at=2024-03-01T10:00:00Z&at__year=2025").filters  # type: ignore[attr-defined]
    assert [(item.name, item.operator.name, item.value) for item in filters] == [
        ("at__year", "in", (2024, 2025)),
        ("at", "eq", dt.datetime(2024, 3, 1, 10, tzinfo=UTC)),
    ]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("at__month=13", "expected an integer from 1 to 12"),
        ("at__hour__in=0,24", "expected an integer from 0 to 23"),
        ("at__date=2024-02-30", "expected a date as YYYY-MM-DD"),
        ("at__month__ilike=1", "operator 'ilike' does not apply to 'at__month' (integer)"),
        ("name__year=2024", "is not a filter of this resource"),
    ],
)
def test_a_bad_part_filter_is_a_400_naming_it(query: str, message: str) -> None:
    with pytest.raises(InvalidQueryError) as raised:
        _parse(query)
    (error,) = raised.value.errors
    assert error.key == query.partition("=")[0]
    assert message in error.message
