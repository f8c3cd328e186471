"""The engine's facet requests: the facetable paths, parsing, disjunctive counts and the ranking rule (docs: facets)."""

from __future__ import annotations

from urllib.parse import parse_qsl

import pytest

from litestar_listing.core.errors import ConfigurationError, InvalidQueryError
from litestar_listing.core.facets import FacetCount, FacetMode, FacetQuery, ranked
from litestar_listing.core.parsing import QueryParser, forced_filter
from litestar_listing.core.parts import PARTS
from litestar_listing.core.query import Combine, Filter
from tests.unit.graph import field_map

FACETS = ("name", "color", "owner__name", "tags__name", "at__month", "day__year")
FIELD_MAP = field_map(facet_fields=FACETS, parts=PARTS)
PARSER = QueryParser(FIELD_MAP)


def facets(query: str, parser: QueryParser = PARSER, forced: tuple[Filter, ...] = ()) -> FacetQuery:
    return parser.parse_facets(parse_qsl(query, keep_blank_values=True), forced)


def errors(query: str) -> list[tuple[str, str]]:
    with pytest.raises(InvalidQueryError) as raised:
        facets(query)
    return [(error.key, error.message) for error in raised.value.errors]


def test_facetable_paths_are_fields_relation_paths_and_parts() -> None:
    facetable = FIELD_MAP.facetable
    assert list(facetable) == list(FACETS)
    assert not facetable["owner__name"].to_many
    assert facetable["tags__name"].to_many
    month = facetable["at__month"]
    assert month.part is not None
    assert month.path.name == "at"


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (("nope",), "has no field 'nope'"),
        (("owner__*",), "explicit paths"),
        (("name__month",), "'month' is not a part of 'name'"),  # a part of no date
        (("day__hour",), "'hour' is not a part of 'day'"),  # the hour of a date
    ],
)
def test_a_path_that_cannot_be_a_facet_stops_the_start(names: tuple[str, ...], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        field_map(facet_fields=names, parts=PARTS)


def test_facets_repeat_or_list_with_commas_in_the_order_asked() -> None:
    asked = facets("facet=tags__name&facet=name,at__month")
    assert [facet.name for facet in asked.facets] == ["tags__name", "name", "at__month"]
    assert [facet.many for facet in asked.facets] == [True, False, False]
    assert asked.limit == 10
    assert asked.mode is FacetMode.DISJUNCTIVE


def test_the_list_parameters_are_read_as_the_list_reads_them() -> None:
    asked = facets("facet=name&name=x&search=y&page=4&count=3&order_by=-name&facet_limit=100&facet_mode=conjunctive")
    assert [item.key for item in asked.query.filters] == ["name"]
    assert asked.query.search is not None
    assert asked.limit == 100
    assert asked.mode is FacetMode.CONJUNCTIVE


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("name=x", [("facet", "expected one or more of: " + ", ".join(FACETS))]),
        ("facet=nmae", [("facet", "'nmae' is not a facet of this resource; did you mean 'name'?")]),
        ("facet=name,name", [("facet", "'name' is listed more than once")]),
        ("facet=" + ",".join(["name"] * 9), [("facet", "expected at most 8 facets, not 9")]),
        ("facet=name&facet_limit=101", [("facet_limit", "expected an integer from 1 to 100")]),
        ("facet=name&facet_mode=any", [("facet_mode", "expected 'disjunctive' or 'conjunctive'")]),
        (
            "facet=name&facet_mode=a&facet_mode=b",
            [("facet_mode", "must be given at most once"), ("facet_mode", "expected 'disjunctive'")],
        ),
        ("facet=name&price=x", [("price", "expected a decimal number")]),
    ],
)
def test_every_bad_parameter_is_named(query: str, expected: list[tuple[str, str]]) -> None:
    got = errors(query)
    assert [key for key, _ in got] == [key for key, _ in expected]
    for (_, message), (_, wanted) in zip(got, expected, strict=True):
        assert message.startswith(wanted)


def test_a_hostile_facet_list_is_counted_not_read() -> None:
    # 100,000 names: refused by their count before any is looked up.
    assert errors("facet=" + ",".join(["x" * 50] * 100_000)) == [("facet", "expected at most 8 facets, not 100000")]


def test_a_resource_without_facets_answers_none() -> None:
    assert errors_of(QueryParser(field_map()), "facet=name") == [("facet", "this resource has no facets")]


def errors_of(parser: QueryParser, query: str) -> list[tuple[str, str]]:
    with pytest.raises(InvalidQueryError) as raised:
        facets(query, parser)
    return [(error.key, error.message) for error in raised.value.errors]


def test_disjunctive_counts_leave_out_the_facet_own_filters_only() -> None:
    forced = (forced_filter(FIELD_MAP, "name", "kept"),)
    asked = facets("facet=name,owner__name,at__month&name__ne=a&color=red&at__month=3&owner_id=2", forced=forced)
    name, owner, month = asked.facets
    # name: its own filter left out (the forced filter on name is the server's and stays).
    assert [item.key for item in asked.counted(name).filters] == ["color", "at__month", "owner_id"]
    assert asked.counted(name).forced_filters == forced
    # owner__name has no filter of its own: owner_id is another path.
    assert asked.counted(owner) is asked.query
    # A part is its own path: at__month's filter is its own.
    assert [item.key for item in asked.counted(month).filters] == ["name__ne", "color", "owner_id"]
    assert any(asked.counted(facet) is not asked.query for facet in asked.facets)


def test_conjunctive_counts_and_or_resources_keep_every_filter() -> None:
    conjunctive = facets("facet=name&name=a&color=red&facet_mode=conjunctive")
    assert conjunctive.counted(conjunctive.facets[0]) is conjunctive.query
    either = facets("facet=name&name=a&color=red", QueryParser(FIELD_MAP, Combine.OR))
    assert either.counted(either.facets[0]) is either.query
    assert all(either.counted(facet) is either.query for facet in either.facets)


def test_values_rank_by_count_then_value_with_none_after_its_equals() -> None:
    counts = {"b": 3, None: 3, "a": 3, "c": 5, "d": 1}
    assert ranked(counts, 10) == (
        FacetCount("c", 5),
        FacetCount("a", 3),
        FacetCount("b", 3),
        FacetCount(None, 3),
        FacetCount("d", 1),
    )
    assert ranked(counts, 2) == (FacetCount("c", 5), FacetCount("a", 3))
    assert ranked({None: 9, 1: 2}, 10) == (FacetCount(None, 9), FacetCount(1, 2))
    assert ranked({}, 10) == ()
