"""The engine's parsing of query strings: values, repetition, order, window, and every error."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from urllib.parse import parse_qsl

import pytest

from litestar_listing.backends.base import field_filter
from litestar_listing.core.errors import InvalidQueryError
from litestar_listing.core.parsing import Limits, QueryParser, forced_filter
from litestar_listing.core.query import Combine, FieldPath, ListQuery, OrderTerm, Window
from litestar_listing.core.text import LikePattern, Wildcard
from tests.unit.graph import Color, field_map

PARSER = QueryParser(field_map())


def parse(query: str, parser: QueryParser = PARSER) -> ListQuery:
    return parser.parse(parse_qsl(query, keep_blank_values=True))


def error_keys(query: str, parser: QueryParser = PARSER) -> list[tuple[str, str]]:
    with pytest.raises(InvalidQueryError) as raised:
        parse(query, parser)
    return [(error.key, error.message) for error in raised.value.errors]


def only(query: str) -> tuple[str, str, object]:
    (raw,) = parse(query).filters
    item = field_filter(raw)
    return item.path.name, item.operator.name, item.value


def test_defaults() -> None:
    query = parse("")
    assert query.window == Window(1, 10)
    assert query.search is None
    assert query.filters == ()
    assert query.combine is Combine.AND
    assert query.order == (OrderTerm(FieldPath(("at",)), descending=True), OrderTerm(FieldPath(("id",))))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("name=x", ("name", "eq", "x")),
        ("name=", ("name", "eq", "")),
        ("name__eq=x", ("name", "eq", "x")),
        ("small=-32768", ("small", "eq", -32768)),
        ("weight__gt=1.5e3", ("weight", "gt", 1500.0)),
        ("price__lte=10.10", ("price", "lte", decimal.Decimal("10.10"))),
        ("active=YES", ("active", "eq", True)),
        ("active=0", ("active", "eq", False)),
        ("day__gte=2024-02-29", ("day", "gte", dt.date(2024, 2, 29))),
        ("at__lt=2024-01-01", ("at", "lt", dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc))),
        (
            "at=2024-01-01T02:30:00%2B02:00",
            ("at", "eq", dt.datetime(2024, 1, 1, 0, 30, tzinfo=dt.timezone.utc)),
        ),
        ("at=2024-01-01T00:00:00Z", ("at", "eq", dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc))),
        ("naive_at=2024-01-01T01:00-0100", ("naive_at", "eq", dt.datetime(2024, 1, 1, 2, 0))),  # noqa: DTZ001 - a naive column
        (
            "uid={12345678-1234-5678-1234-567812345678}",
            ("uid", "eq", uuid.UUID(int=0x12345678123456781234567812345678)),
        ),
        (
            "uid=12345678123456781234567812345678",
            ("uid", "eq", uuid.UUID(int=0x12345678123456781234567812345678)),
        ),
        ("color=blue", ("color", "eq", Color.BLUE)),
        ("owner__boss__name=x", ("owner__boss__name", "eq", "x")),
        ("name__isnull=true", ("name", "isnull", True)),
        ("name__in=a,b,a", ("name", "in", ("a", "b"))),
        (
            "name__like=a%25b_\\%25",
            ("name", "like", LikePattern(("a", Wildcard.ANY_RUN, "b", Wildcard.ONE_CHAR, "%"))),
        ),
        ("name__ilike=%25_", ("name", "ilike", "%_")),
        ("tags__name__iendswith=x", ("tags__name", "iendswith", "x")),
    ],
)
def test_values_are_coerced(query: str, expected: tuple[str, str, object]) -> None:
    assert only(query) == expected


def test_repetition_turns_eq_into_in_and_ne_into_nin() -> None:
    assert only("name=a&name=b,c") == ("name", "in", ("a", "b,c"))
    assert only("name__ne=a&name__ne=b") == ("name", "nin", ("a", "b"))
    assert only("small__in=1,2&small__in=3") == ("small", "in", (1, 2, 3))


def test_search_and_order() -> None:
    query = parse("search=%25x_&order_by=-owner__name,name")
    assert query.search is not None
    assert query.search.text == "%x_"
    assert [path.name for path in query.search.paths] == ["name", "owner__name", "tags__name"]
    assert [(term.path.name, term.descending) for term in query.order] == [
        ("owner__name", True),
        ("name", False),
        ("id", False),
    ]
    assert parse("order_by=-id").order == (OrderTerm(FieldPath(("id",)), descending=True),)


def test_a_repeated_order_by_is_one_list_of_terms() -> None:
    # OpenAPI's default array style, as generated clients send it: the same as the comma-separated terms.
    assert parse("order_by=-owner__name&order_by=name").order == parse("order_by=-owner__name,name").order
    assert parse("order_by=name&order_by=-id").order[:2] == (
        OrderTerm(FieldPath(("name",))),
        OrderTerm(FieldPath(("id",)), descending=True),
    )


def test_empty_search_and_order_by_mean_absent() -> None:
    query = parse("search=&order_by=")
    assert query.search is None
    assert query.order == parse("").order


def test_forced_filter_drops_the_client_equality_of_the_same_name() -> None:
    forced = [forced_filter(PARSER.field_map, "owner_id", 7)]
    query = PARSER.parse([("owner_id", "1"), ("owner_id__eq", "2"), ("owner_id__ne", "3")], forced)
    assert [(item.path.name, item.operator.name, item.value) for item in map(field_filter, query.filters)] == [
        ("owner_id", "ne", 3)
    ]
    assert [(item.path.name, item.value) for item in query.forced_filters] == [("owner_id", 7)]


@pytest.mark.parametrize(
    ("query", "key", "fragment"),
    [
        ("page=0", "page", "integer >= 1"),
        ("page=-1", "page", "integer >= 1"),
        ("page=1.5", "page", "integer >= 1"),
        ("count=0", "count", "from 1 to 100"),
        ("count=101", "count", "from 1 to 100"),
        ("count=ten", "count", "from 1 to 100"),
        ("page=9223372036854775807&count=100", "page", "64-bit"),
        ("page=1&page=2", "page", "at most once"),
        ("nope=1", "nope", "not a filter"),
        ("nme=1", "nme", "did you mean 'name'"),
        ("owner__password_hash=x", "owner__password_hash", "not a filter"),
        ("owner__name__bogus=x", "owner__name__bogus", "not a filter"),
        ("small=32768", "small", "from -32768 to 32767"),
        ("small=1.0", "small", "integer"),
        ("small=", "small", "integer"),
        ("weight=nan", "weight", "finite number"),
        ("weight=1e999", "weight", "finite number"),
        ("price=1,5", "price", "decimal"),
        ("active=maybe", "active", "boolean"),
        ("day=2024-02-30", "day", "YYYY-MM-DD"),
        ("at=yesterday", "at", "ISO 8601"),
        ("uid=123", "uid", "UUID"),
        ("color=green", "color", "'red', 'blue'"),
        ("active__gt=true", "active__gt", "does not apply"),
        ("small__like=1", "small__like", "does not apply"),
        ("name__like=abc\\", "name__like", "lone backslash"),
        ("name__gt=a&name__gt=b", "name__gt", "only once"),
        ("name__isnull=perhaps", "name__isnull", "boolean"),
        ("order_by=nope", "order_by", "not an orderable field"),
        ("order_by=owner__boss__name", "order_by", "not an orderable field"),
        ("order_by=name,-name", "order_by", "more than once"),
        ("order_by=name&order_by=-name", "order_by", "more than once"),
        ("order_by=name&order_by=", "order_by", "not an orderable field"),
        (f"page={2**63}", "page", "signed 64-bit integer"),
        ("order_by=name,", "order_by", "not an orderable field"),
        ("search=" + "x" * 257, "search", "at most 256"),
        ("search=a%00b", "search", "NUL"),
        ("name=a%00", "name", "NUL"),
        ("name__in=a,%00", "name__in", "NUL"),
        ("name__like=%00%25", "name__like", "NUL"),
        ("name__istartswith=%00", "name__istartswith", "NUL"),
    ],
)
def test_each_bad_parameter_is_named(query: str, key: str, fragment: str) -> None:
    errors = error_keys(query)
    assert [error_key for error_key, _ in errors] == [key]
    assert fragment in errors[0][1]


def test_ordering_on_a_to_many_path_says_why() -> None:
    # tags__name is filterable and searchable, so the client already knows the to-many relation.
    expected = (
        "cannot be ordered on: 'tags' is a to-many relation, so a row has several values there; only"
        " fields of the listed model and of its to-one relations can be ordered on."
    )
    for term in ("tags__name", "-tags__name", "tags__id", "tags__nope"):
        assert error_keys(f"order_by={term}") == [("order_by", f"{term!r} {expected}")]
    # A to-many relation no exposed path crosses answers as an unknown name: nothing is revealed.
    unexposed = error_keys("order_by=owner__things__name")[0][1]
    assert unexposed == error_keys("order_by=owner__thongs__name")[0][1].replace("thongs", "things")
    # Without the filter and search paths, tags__name is not named either.
    hidden = QueryParser(field_map(filter_fields=["*"], search_fields=["name"]))
    assert "to-many" not in error_keys("order_by=tags__name", hidden)[0][1]


def test_every_bad_parameter_is_listed_at_once() -> None:
    errors = error_keys("page=0&count=1000&nope=1&small=x&order_by=zzz&name=ok")
    assert [key for key, _ in errors] == ["page", "count", "nope", "small", "order_by"]


def test_limits() -> None:
    parser = QueryParser(field_map(), limits=Limits(max_in_values=3, max_filters=2, max_search_length=4))
    assert [key for key, _ in error_keys("name__in=a,b&name__in=c,d", parser)] == ["name__in"]
    assert [key for key, _ in error_keys("name=a&small=1&weight=2", parser)] == ["weight"]
    assert [key for key, _ in error_keys("search=12345", parser)] == ["search"]


def test_search_on_a_resource_without_searchable_fields() -> None:
    parser = QueryParser(field_map(search_fields=[]))
    assert error_keys("search=x", parser) == [("search", "this resource has no searchable fields")]


def test_unknown_filters_can_be_ignored() -> None:
    parser = QueryParser(field_map(), ignore_unknown=True)
    assert field_filter(parse("nope=1&name=x", parser).filters[0]).path.name == "name"
    assert [key for key, _ in error_keys("name__like=\\", parser)] == ["name__like"]


def test_or_combination_is_the_resource_s() -> None:
    assert parse("name=a", QueryParser(field_map(), combine=Combine.OR)).combine is Combine.OR
