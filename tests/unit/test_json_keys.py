"""Keys of JSON documents (docs: query language, "Keys of JSON documents"): declaring them, reading them.

``JsonKey.values`` is the definition every backend follows; its expectations here are written by hand.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
from types import MappingProxyType
from typing import Any
from urllib.parse import parse_qsl

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from litestar_listing import ConfigurationError, InvalidQueryError, ListContext, ListingPlugin, MemoryBackend, Resource
from litestar_listing.core.fields import JsonKey, ValueType
from litestar_listing.core.schema import FieldInfo, ModelGraph, json_keys_of
from litestar_listing.plugin.prepared import prepare
from tests.unit.graph import GRAPH

SIZE = JsonKey(("size",), ValueType.INTEGER)
WIDTH = JsonKey(("dims", "width"), ValueType.FLOAT)
TAGS = JsonKey(("tags",), ValueType.TEXT, many=True)


@pytest.mark.parametrize(
    ("key", "document", "values"),
    [
        (SIZE, {"size": 42}, (42,)),
        (SIZE, {"size": "42"}, ()),  # text is not an integer
        (SIZE, {"size": 42.0}, ()),  # nor is a number written with a fraction
        (SIZE, {"size": True}, ()),  # nor a boolean
        (SIZE, {"size": None}, ()),  # JSON null
        (SIZE, {}, ()),
        (SIZE, None, ()),  # no document
        (SIZE, [1, 2], ()),  # not an object
        (WIDTH, {"dims": {"width": 3}}, (3.0,)),  # an integer is a number
        (WIDTH, {"dims": "wide"}, ()),
        (TAGS, {"tags": ["a", 5, None, "b"]}, ("a", "b")),  # elements of another type are none
        (TAGS, {"tags": "a"}, ()),  # not a list: no element
        (JsonKey(("on",), ValueType.BOOLEAN), {"on": False}, (False,)),
        (JsonKey(("on",), ValueType.BOOLEAN), {"on": 0}, ()),
        (JsonKey(("day",), ValueType.DATE), {"day": "2024-02-30"}, ("2024-02-30",)),  # text of the form
        (JsonKey(("day",), ValueType.DATE), {"day": "soon"}, ()),
    ],
)
def test_a_key_reads_only_values_of_its_type(key: JsonKey, document: object, values: tuple[object, ...]) -> None:
    assert key.values(document) == values


def test_a_list_key_holds_a_list_or_nothing() -> None:
    assert TAGS.holds_list({"tags": []})
    assert not TAGS.holds_list({"tags": "a"})
    assert not TAGS.holds_list(None)


def test_declared_types_become_keys() -> None:
    declared = {"size": int, "tags": list[str], "dims": {"width": float, "unit": str}, "made": dt.date}
    assert json_keys_of("specs", declared) == [
        SIZE,
        TAGS,
        WIDTH,
        JsonKey(("dims", "unit"), ValueType.TEXT),
        JsonKey(("made",), ValueType.DATE),
    ]


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ({"in": int}, "not an operator"),
        ({"two words": int}, "letters, digits and single '_'"),
        ({"a__b": int}, "letters, digits and single '_'"),
        ({"size": dict}, "is not str, int, float, bool, date"),
        ({"a": {"b": {"c": {"d": int}}}}, "nests deeper than 3 keys"),
    ],
)
def test_a_bad_declaration_stops_the_app(declared: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        json_keys_of("specs", declared)


def _with_specs(graph: ModelGraph) -> ModelGraph:
    thing = graph.entities["Thing"]
    fields = MappingProxyType({**thing.fields, "specs": FieldInfo("specs", ValueType.JSON)})
    return dataclasses.replace(
        graph, entities=MappingProxyType({**graph.entities, "Thing": dataclasses.replace(thing, fields=fields)})
    )


ROWS: list[dict[str, Any]] = [
    {"id": 1, "specs": {"size": 3, "tags": ["a"]}, "owner": None, "tags": []},
    {"id": 2, "specs": {"size": "3", "tags": "a"}, "owner": None, "tags": []},
    {"id": 3, "specs": None, "owner": None, "tags": []},
]
THINGS = Resource(
    "things",
    MemoryBackend(_with_specs(GRAPH), ROWS),
    json_keys={"specs": {"size": int, "tags": list[str]}},
    search_fields=("specs__tags",),
)


def _ids(query: str) -> list[int]:
    parsed = prepare(THINGS).parser.parse(parse_qsl(f"{query}&order_by=id"))
    page = asyncio.run(THINGS.backend.fetch(parsed, ListContext()))
    return [item["id"] for item in page.items]


@pytest.mark.parametrize(
    ("query", "ids"),
    [
        ("specs__size=3", [1]),
        ("specs__size__isnull=true", [2, 3]),
        ("specs__tags__contains=a", [1]),
        ("specs__tags__isnull=true", [2, 3]),
    ],
)
def test_the_memory_oracle_reads_keys_by_their_definition(query: str, ids: list[int]) -> None:
    assert _ids(query) == ids


def test_the_document_is_no_filter_and_keys_are_typed() -> None:
    field_map = prepare(THINGS).field_map
    assert "specs" not in field_map.filterable
    assert "specs" not in field_map.orderable
    assert field_map.filterable["specs__tags"].field == FieldInfo("specs__tags", ValueType.TEXT, many=True)
    assert "specs__tags" not in field_map.orderable  # a list has no one value to order by
    assert [exposed.path.name for exposed in field_map.searchable] == ["specs__tags"]
    with pytest.raises(InvalidQueryError) as raised:
        prepare(THINGS).parser.parse(parse_qsl("specs__size__contains=3&specs=x"))
    assert [error.key for error in raised.value.errors] == ["specs__size__contains", "specs"]


def test_a_key_of_a_field_that_is_not_json_stops_the_app() -> None:
    resource = Resource("things", MemoryBackend(GRAPH, []), json_keys={"name": {"a": int}})
    with pytest.raises(ConfigurationError, match="'name' is not a JSON field"):
        prepare(resource)


def test_openapi_types_each_key_and_offers_contains_for_lists_only() -> None:
    app = Litestar(plugins=[ListingPlugin([THINGS])])
    with TestClient(app) as client:
        document = client.get("/schema/openapi.json").json()
        (filters,) = [p for p in document["paths"]["/api/v1/things"]["get"]["parameters"] if p["name"] == "filters"]
        properties = filters["schema"]["properties"]
        schemas = document["components"]["schemas"]

        def schema(name: str) -> dict[str, Any]:
            found: dict[str, Any] = properties[name]
            return schemas[found["$ref"].rsplit("/", 1)[-1]] if "$ref" in found else found

        assert schema("specs__size__gte")["type"] == "integer"
        assert "specs__tags__contains" in properties
        assert "specs__size__contains" not in properties
        assert "specs" not in properties
        answer = client.get("/api/v1/things", params={"specs__size": "3"})
        assert [item["id"] for item in answer.json()["data"]] == [1]


def test_a_key_is_priced_as_a_scan_and_a_list_as_a_semi_join_too() -> None:
    # CostModel's defaults: a scan 1, a semi-join 6 (docs: admission, "The cost of a list").
    prepared = prepare(THINGS)

    def parts(query: str) -> dict[str, float]:
        return dict(prepared.price(prepared.parser.parse(parse_qsl(query))).parts)

    assert parts("specs__size=3")["specs__size"] == pytest.approx(1.0)
    assert parts("specs__tags__contains=a")["specs__tags__contains"] == pytest.approx(7.0)
    assert parts("search=a")["search"] == pytest.approx(9.0)  # a searched field 3 and a semi-join 6
