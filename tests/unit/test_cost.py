"""The cost model (docs: admission, "The cost of a list"): hand-priced lists, monotone ingredients, no statement run.

The expected prices are worked out by hand from ``CostModel``'s default weights: base 1, join 3,
semi-join 6, scan filter 1, search field 3, sort 8, order term 1, computed 4, 0.02 per 1,000 rows
skipped, 0.5 per 100 rows of the page.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from urllib.parse import parse_qsl

import pytest

from litestar_listing import InvalidQueryError, MemoryBackend, Resource
from litestar_listing.core.cost import RESOURCE, Cost, CostModel
from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.schema import EntityInfo, FieldInfo, ModelGraph, ValueType
from litestar_listing.plugin.prepared import prepare
from tests.unit.graph import GRAPH

INDEXED = {"Thing": {"id", "at", "owner_id"}, "User": {"id"}, "Tag": {"id"}}
"""The fields with an index in this test's models: the keys, ``Thing.at`` and ``Thing.owner_id``."""


def _with_indexes(graph: ModelGraph) -> ModelGraph:
    def entity(info: EntityInfo) -> EntityInfo:
        fields = {
            name: dataclasses.replace(field, indexed=name in INDEXED[info.name]) for name, field in info.fields.items()
        }
        return dataclasses.replace(info, fields=MappingProxyType(fields))

    return ModelGraph(graph.root, MappingProxyType({name: entity(info) for name, info in graph.entities.items()}))


MODELS = _with_indexes(GRAPH)
SCORE = FieldInfo("score", ValueType.INTEGER, computed=True)
"""A computed value: orderable, priced as an expression per row."""


def _resource(**options: object) -> Resource:
    settings: dict[str, object] = {
        "filter_fields": ("*", "owner__*", "owner__boss__name", "tags__name"),
        "order_fields": ("*", "owner__name"),
        "search_fields": ("name", "owner__name", "tags__name"),
        "default_order": ("-at",),
    }
    settings.update(options)
    backend = MemoryBackend(MODELS, [], computed={"score": SCORE}, values={"score": lambda row: 0})
    return Resource("things", backend, **settings)  # type: ignore[arg-type]


THINGS = _resource()


def price(query: str, resource: Resource = THINGS) -> Cost:
    prepared = prepare(resource)
    return prepared.price(prepared.parser.parse(parse_qsl(query, keep_blank_values=True)))


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        # The default order's first term, Thing.at, is indexed: no sort. Ten rows: 0.05.
        ("", {RESOURCE: 1.0, "count": 0.05}),
        ("id=3", {RESOURCE: 1.0, "count": 0.05}),  # an indexed equality adds nothing
        ("name=x", {RESOURCE: 1.0, "name": 1.0, "count": 0.05}),  # no index on name: a scan
        ("id__ne=3", {RESOURCE: 1.0, "id__ne": 1.0, "count": 0.05}),  # ne tests every row
        # The owner join is charged once, to the parameter that reaches it first; the boss join too.
        (
            "owner__name__ne=x&owner__boss__name=y",
            {RESOURCE: 1.0, "owner__name__ne": 4.0, "owner__boss__name": 4.0, "count": 0.05},
        ),
        ("tags__name=x", {RESOURCE: 1.0, "tags__name": 7.0, "count": 0.05}),  # a semi-join and a scan
        # name 3; owner__name 3 + its join 3; tags__name 3 + a semi-join 6.
        ("search=a", {RESOURCE: 1.0, "search": 18.0, "count": 0.05}),
        # owner__name then the id tie-breaker: a join, a sort and two terms.
        ("order_by=owner__name", {"order_by": 13.0, RESOURCE: 1.0, "count": 0.05}),
        ("order_by=-at", {RESOURCE: 1.0, "count": 0.05}),  # the index's order adds nothing
        ("order_by=name", {"order_by": 10.0, RESOURCE: 1.0, "count": 0.05}),  # a sort of two terms
        ("order_by=score", {"order_by": 14.0, RESOURCE: 1.0, "count": 0.05}),  # and a computed value
        # A date part: the year and the date are a range of the indexed Thing.at, the others a value per row.
        ("at__year=2024", {RESOURCE: 1.0, "count": 0.05}),
        ("at__date__between=2024-01-01,2024-01-31", {RESOURCE: 1.0, "count": 0.05}),
        ("at__month=3", {RESOURCE: 1.0, "at__month": 1.0, "count": 0.05}),
        ("at__week_day__in=6,7", {RESOURCE: 1.0, "at__week_day__in": 1.0, "count": 0.05}),
        ("at__hour=8", {RESOURCE: 1.0, "at__hour": 1.0, "count": 0.05}),
        # 10,000 rows skipped: 0.2; 100 rows: 0.5.
        ("page=101&count=100", {RESOURCE: 1.0, "page": 0.2, "count": 0.5}),
    ],
)
def test_hand_priced_lists(query: str, parts: dict[str, float]) -> None:
    cost = price(query)
    assert dict(cost.parts) == pytest.approx(parts)
    assert cost.total == pytest.approx(sum(parts.values()))


INGREDIENTS = [
    ("a filter", "", "name=x"),
    ("an unindexed filter instead of an indexed one", "id=3", "name=x"),
    ("a part computed per row instead of a ranged one", "at__year=2024", "at__month=3"),
    ("a relation filter instead of an own one", "name=x", "owner__name=x"),
    ("a to-many filter instead of a to-one one", "owner__name=x", "tags__name=x"),
    ("a search", "", "search=a"),
    ("an order no index serves", "order_by=-at", "order_by=name"),
    ("an order through a relation", "order_by=name", "order_by=owner__name"),
    ("a second order term", "order_by=name", "order_by=name,owner_id"),
    ("an order on a computed value", "order_by=name", "order_by=score"),
    ("a deeper page", "page=2", "page=3"),
    ("a longer page", "count=10", "count=11"),
]


@pytest.mark.parametrize(("ingredient", "before", "after"), INGREDIENTS, ids=[i[0] for i in INGREDIENTS])
def test_each_ingredient_raises_the_cost(ingredient: str, before: str, after: str) -> None:
    assert price(after).total > price(before).total, ingredient


LIST_WEIGHTS = [field.name for field in dataclasses.fields(CostModel) if field.name != "facet"]
"""The weights a list's ingredients use; ``facet`` prices facet requests only."""


@pytest.mark.parametrize("weight", LIST_WEIGHTS)
def test_each_weight_scales_only_its_own_ingredient(weight: str) -> None:
    # Every ingredient at once; doubling one weight adds exactly what that ingredient cost.
    query = "name=x&id=3&owner__boss__name=y&tags__name=z&search=a&order_by=owner__name,score&page=3&count=20"
    base = price(query)
    heavier = price(
        query, _resource(cost=dataclasses.replace(CostModel(), **{weight: 2 * getattr(CostModel(), weight)}))
    )
    assert heavier.total > base.total, f"{weight} priced nothing in {query!r}"
    zero = price(query, _resource(cost=dataclasses.replace(CostModel(), **{weight: 0.0})))
    assert zero.total < base.total
    assert heavier.total - base.total == pytest.approx(base.total - zero.total)


FACETED = _resource(facet_fields=("name", "owner__name", "tags__name", "at__month"))


def facet_price(query: str, resource: Resource = FACETED) -> Cost:
    return prepare(resource).parse_facets_priced(parse_qsl(query, keep_blank_values=True))[1]


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        # Each facet 8 (every matching row grouped); no order, no page, however the list's are sent.
        ("facet=name", {RESOURCE: 1.0, "facet": 8.0}),
        ("facet=name&order_by=name&page=1000&count=100", {RESOURCE: 1.0, "facet": 8.0}),
        ("facet=at__month", {RESOURCE: 1.0, "facet": 8.0}),
        # A to-one path's join once, with the filter through it; a to-many one's semi-join.
        ("facet=owner__name", {RESOURCE: 1.0, "facet": 11.0}),
        ("facet=owner__name&owner__name=x", {RESOURCE: 1.0, "owner__name": 4.0, "facet": 8.0}),
        ("facet=tags__name", {RESOURCE: 1.0, "facet": 14.0}),
        ("facet=name,owner__name,tags__name", {RESOURCE: 1.0, "facet": 33.0}),
        # The list's filters and search as a list prices them.
        ("facet=name&name=x&search=a", {RESOURCE: 1.0, "name": 1.0, "search": 18.0, "facet": 8.0}),
    ],
)
def test_hand_priced_facet_requests(query: str, parts: dict[str, float]) -> None:
    cost = facet_price(query)
    assert dict(cost.parts) == pytest.approx(parts)
    assert cost.total == pytest.approx(sum(parts.values()))


def test_the_facet_weight_scales_the_facets_alone() -> None:
    query = "facet=name,tags__name&name=x"
    heavier = _resource(facet_fields=FACETED.facet_fields, cost=CostModel(facet=16.0))
    assert facet_price(query, heavier).total - facet_price(query).total == pytest.approx(16.0)


def test_a_facet_request_over_the_ceiling_names_the_facets() -> None:
    capped = _resource(facet_fields=FACETED.facet_fields, max_cost=19.0)
    assert facet_price("facet=name", capped).total == pytest.approx(9.0)
    with pytest.raises(InvalidQueryError) as raised:
        facet_price("facet=name,owner__name", capped)  # 1 + 8 + 11 = 20
    assert [error.key for error in raised.value.errors] == ["facet"]


def test_the_costliest_parameters_come_first_without_the_resource_own_part() -> None:
    cost = price("name=x&search=a&page=2001")  # search 18, name 1, page 0.4 (20,000 rows skipped)
    assert [name for name, _ in cost.costliest()] == ["search", "name", "page"]
    assert RESOURCE not in dict(cost.costliest(limit=10))


def test_a_list_over_the_ceiling_is_a_400_naming_what_made_it_expensive() -> None:
    capped = _resource(max_cost=20.0)
    # 1.05 + name 1 + search 18 + order_by 10 = 30.05; without search 12.05, within 20: search made it too expensive.
    with pytest.raises(InvalidQueryError) as raised:
        price("name=x&search=a&order_by=name", capped)
    assert [error.key for error in raised.value.errors] == ["search"]
    assert "it costs 30.1 units, over the 20 this resource allows" in raised.value.errors[0].message
    assert "this parameter adds 18.0" in raised.value.errors[0].message
    # 1.05 + search 18 + order_by 10 + page 0.4 = 29.45, 25.45 over 4: search and order_by.
    with pytest.raises(InvalidQueryError) as raised:
        price("search=a&order_by=name&page=2001", _resource(max_cost=4.0))
    assert [error.key for error in raised.value.errors] == ["search", "order_by"]
    assert price("name=x&order_by=name", capped).total == pytest.approx(12.05)  # under it: priced, not refused


def test_a_ceiling_below_the_resource_own_list_stops_the_start() -> None:
    with pytest.raises(ConfigurationError, match=r"max_cost=0.5 is below the cost of its own list"):
        prepare(_resource(max_cost=0.5))


def test_negative_weights_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="sort"):
        CostModel(sort=-1.0)
