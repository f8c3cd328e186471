"""MongoDB's documented rules (``mongodb_rules.py``): what they refuse and accept, and that the test store applies them.

Each case is a construct of MongoDB's manual (the field path rule, ``$getField``, ``$lookup``'s forms, variables,
operators by version); the last tests compile every case of the conformance table on Beanie and check what the
backend would send, and show the adapter refusing as a server would.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qsl

import pytest
from pymongo.errors import OperationFailure

from litestar_listing.backends.beanie import MINIMUM_MONGODB, BeanieBackend, Documents, link_id
from litestar_listing.backends.beanie.compiler import PipelineCompiler
from litestar_listing.backends.beanie.facets import compile_facets
from litestar_listing.core.parsing import forced_filter
from litestar_listing.plugin.policies import resolved_policy
from litestar_listing.plugin.prepared import prepare
from tests.conformance import beanie_documents
from tests.conformance.cases import CASES
from tests.conformance.targets import Target, beanie_target
from tests.conformance.test_conformance import with_policies
from tests.document_store import mongomock_adapter
from tests.document_store.mongodb_rules import (
    MINIMUM_VERSION,
    Construct,
    pipeline_constructs,
    query_constructs,
    sort_constructs,
)
from tests.document_store.mongomock_adapter import RulesTally, mongomock_client

LINK_ID = {"$getField": {"field": {"$literal": "$id"}, "input": "$$this.company"}}


def texts(found: list[Construct]) -> list[str]:
    return [construct.text for construct in found]


def test_the_stated_version_is_the_backends() -> None:
    assert MINIMUM_VERSION == MINIMUM_MONGODB == (5, 0)
    assert link_id("$$this.company") == LINK_ID


# ---------------------------------------------------------------- field paths


@pytest.mark.parametrize(
    "pipeline",
    [
        [{"$addFields": {"n": {"$filter": {"input": "$parts", "cond": {"$eq": ["$$this.company.$id", 1]}}}}}],
        [{"$lookup": {"from": "users", "localField": "owner.$id", "foreignField": "_id", "as": "owner_docs"}}],
        [{"$lookup": {"from": "parts", "localField": "_id", "foreignField": "thing.$id", "as": "parts"}}],
        [{"$addFields": {"k": "$owner.$id"}}],
        [{"$sort": {"owner.$id": 1}}],
        [{"$project": {"owner.$id": 1}}],
        [{"$unwind": "$tags.$id"}],
    ],
    ids=["filter-variable", "local-field", "foreign-field", "expression", "sort-key", "projection", "unwind"],
)
def test_a_dollar_component_in_a_field_path_is_refused(pipeline: list[dict[str, Any]]) -> None:
    [found] = pipeline_constructs(pipeline)
    assert found.rule == "field path"
    assert "$id" in found.text


def test_get_field_reads_the_same_fields() -> None:
    cond = {"$eq": [{"$ifNull": [LINK_ID, None]}, {"$literal": 1}]}
    pipeline: list[dict[str, Any]] = [
        {"$addFields": {"n": {"$size": {"$filter": {"input": "$parts", "cond": cond}}}}},
        {"$addFields": {"key": {"$getField": {"field": {"$literal": "$id"}, "input": "$owner"}}}},
        {"$lookup": {"from": "users", "localField": "key", "foreignField": "_id", "as": "owner_docs"}},
    ]
    assert pipeline_constructs(pipeline) == []
    # Before 7.2 a name is a constant: a '$' name through $literal, not as a string read as a path.
    named_by_a_path = [{"$addFields": {"k": {"$getField": {"field": "$id", "input": "$owner"}}}}]
    [found] = pipeline_constructs(named_by_a_path)
    assert found.rule == "shape"
    # From 7.2 the name may be an expression: "$id" is then the path of a field named "id", which is valid.
    assert pipeline_constructs(named_by_a_path, (7, 2)) == []


def test_empty_and_bare_paths_are_refused() -> None:
    assert texts(pipeline_constructs([{"$addFields": {"a": "$"}}])) == ["$"]
    assert texts(pipeline_constructs([{"$addFields": {"a": "$b..c"}}])) == ["$b..c"]
    assert texts(pipeline_constructs([{"$sort": {"": 1}}])) == ["''"]


# ---------------------------------------------------------------- query form


def test_a_query_compares_a_dbrefs_id() -> None:
    assert query_constructs({"owner.$id": 5, "tags.$id": {"$in": [1, 2]}, "ref.$ref": "users"}) == []
    assert query_constructs({"$and": [{"owner.$id": 5}, {"$or": [{"a": 1}, {"company.$id": {"$ne": None}}]}]}) == []
    assert texts(query_constructs({"owner.$name": 5})) == ["owner.$name"]


def test_a_query_knows_its_operators() -> None:
    assert texts(query_constructs({"a": {"$equals": 1}})) == ["$equals"]
    assert texts(query_constructs({"$where2": "x"})) == ["$where2"]
    assert texts(query_constructs({"a": {"$in": 1}})) == ["$in"]
    assert texts(query_constructs({"a": {"$eq": 1, "b": 2}})) == ["$eq, b"]
    # An embedded document and a DBRef are values.
    assert query_constructs({"a": {"b": 1}, "owner": {"$ref": "users", "$id": 5}}) == []
    assert query_constructs({"a": {"$not": {"$in": [1]}}, "t": {"$elemMatch": {"name": "x"}}}) == []


def test_expr_in_a_query_is_an_expression() -> None:
    assert query_constructs({"$expr": {"$eq": [{"$getField": {"field": {"$literal": "$id"}, "input": "$t"}}, 1]}}) == []
    assert texts(query_constructs({"$expr": {"$eq": ["$t.$id", 1]}})) == ["$t.$id"]
    assert texts(query_constructs({"$expr": {"$eq": ["$t", "$$keys"]}})) == ["$$keys"]


def test_a_find_sort_is_a_field_path() -> None:
    assert sort_constructs([("_id", 1), ("name", -1)]) == []
    assert texts(sort_constructs([("owner.$id", 1)])) == ["owner.$id"]
    assert texts(sort_constructs([("a", 2)])) == ["2"]


# ---------------------------------------------------------------- variables


def test_variables_are_bound_where_they_are_read() -> None:
    in_filter = {"$filter": {"input": "$a", "as": "child", "cond": {"$gt": ["$$child.n", "$$ROOT.n"]}}}
    in_map = {"$map": {"input": "$a", "in": "$$this.n"}}
    in_reduce = {"$reduce": {"input": "$a", "initialValue": 0, "in": {"$add": ["$$value", "$$this"]}}}
    in_let = {"$let": {"vars": {"x": 1}, "in": {"$add": ["$$x", 1]}}}
    assert pipeline_constructs([{"$addFields": {"a": in_filter, "b": in_map, "c": in_reduce, "d": in_let}}]) == []
    outside = {"$filter": {"input": "$a", "as": "child", "cond": "$$this.n"}}
    assert texts(pipeline_constructs([{"$addFields": {"a": outside, "b": "$$child"}}])) == ["$$this.n", "$$child"]
    assert texts(pipeline_constructs([{"$addFields": {"a": {"$let": {"vars": {"X": 1}, "in": "$$X"}}}}])) == ["'X'"]


def test_a_lookups_pipeline_sees_its_let_variables_only() -> None:
    match = {"$match": {"$expr": {"$in": [{"$getField": {"field": {"$literal": "$id"}, "input": "$thing"}}, "$$keys"]}}}
    lookup = {"from": "parts", "let": {"keys": ["$_id"]}, "pipeline": [match], "as": "parts"}
    assert pipeline_constructs([{"$lookup": lookup}]) == []
    outer = {"$filter": {"input": "$a", "cond": {"$lookup": "x"}}}
    assert pipeline_constructs([{"$addFields": {"a": outer}}])  # no such expression operator
    leak = {"from": "parts", "pipeline": [{"$match": {"$expr": {"$eq": ["$a", "$$keys"]}}}], "as": "parts"}
    assert texts(pipeline_constructs([{"$lookup": leak}])) == ["$$keys"]


# ---------------------------------------------------------------- operators, stages and versions


def test_operators_are_known_and_new_enough() -> None:
    assert texts(pipeline_constructs([{"$addFields": {"a": {"$frobnicate": 1}}}])) == ["$frobnicate"]
    assert texts(pipeline_constructs([{"$frobnicate": {}}])) == ["$frobnicate"]
    sorted_array = {"$sortArray": {"input": "$a", "sortBy": 1}}
    assert texts(pipeline_constructs([{"$addFields": {"a": sorted_array}}])) == ["$sortArray"]  # 5.2
    assert pipeline_constructs([{"$addFields": {"a": sorted_array}}], (5, 2)) == []
    assert texts(pipeline_constructs([{"$densify": {}}])) == ["$densify"]  # 5.1
    assert texts(pipeline_constructs([{"$addFields": {"a": link_id("$company")}}], (4, 4))) == ["$getField"]
    assert texts(pipeline_constructs([{"$addFields": {"a": "$$USER_ROLES"}}])) == ["$$USER_ROLES"]  # 7.0


def test_lookup_forms_by_version() -> None:
    concise = {"from": "u", "localField": "k", "foreignField": "_id", "pipeline": [{"$match": {"a": 1}}], "as": "u"}
    assert pipeline_constructs([{"$lookup": concise}]) == []
    assert texts(pipeline_constructs([{"$lookup": concise}], (4, 4))) == ["pipeline"]
    assert texts(pipeline_constructs([{"$lookup": {"from": "u", "as": "u"}}])) == ["$lookup"]
    let_without_pipeline = {"from": "u", "let": {}, "localField": "a", "foreignField": "b", "as": "u"}
    assert texts(pipeline_constructs([{"$lookup": let_without_pipeline}])) == ["let"]
    assert texts(pipeline_constructs([{"$lookup": {**concise, "on": 1}}])) == ["on"]


def test_shapes() -> None:
    assert texts(pipeline_constructs([{"$addFields": {"a": {"$eq": [1, 1], "$ne": [1, 2]}}}])) == ["$eq, $ne"]
    assert texts(pipeline_constructs([{"$addFields": {"a": {"b.c": 1}}}])) == ["b.c"]
    assert texts(pipeline_constructs([{"$count": "a.b"}, {"$count": "$a"}])) == ["'a.b'", "'$a'"]
    assert texts(pipeline_constructs([{"$limit": 0}, {"$skip": -1}, {"$skip": 0}])) == ["0", "-1"]
    assert texts(pipeline_constructs([{"$match": {}, "$limit": 1}])) == [repr({"$match": {}, "$limit": 1})]
    assert pipeline_constructs([{"$project": {"a": 1, "b": 0, "c": True, "d": "$a"}}]) == []
    assert texts(pipeline_constructs([{"$project": {"a": "$b.$c"}}])) == ["$b.$c"]


def test_facet_sub_pipelines() -> None:
    counted = [{"$group": {"_id": "$status", "count": {"$sum": 1}}}, {"$sort": {"count": -1}}, {"$limit": 10}]
    lookup = {"from": "users", "localField": "k", "foreignField": "_id", "as": "u"}
    assert (
        pipeline_constructs([{"$facet": {"total": [{"$count": "total"}], "f0": [{"$lookup": lookup}, *counted]}}]) == []
    )
    # The stages the manual refuses there, at any depth of the sub-pipeline.
    refused = [{"$facet": {"a": [{"$out": "x"}], "b": [{"$facet": {"d": []}}], "c": [{"$merge": {"into": "x"}}]}}]
    assert texts(pipeline_constructs(refused)) == ["$out", "$facet", "$merge"]
    # Named as fields, a non-empty document of arrays.
    assert texts(pipeline_constructs([{"$facet": {"a.b": [], "$c": []}}])) == ["a.b", "$c"]
    assert texts(pipeline_constructs([{"$facet": {}}])) == ["{}"]
    assert texts(pipeline_constructs([{"$facet": {"a": {"$count": "n"}}}])) == [repr({"$count": "n"})]
    # Inside, the rules of any pipeline.
    assert texts(pipeline_constructs([{"$facet": {"a": [{"$addFields": {"k": "$owner.$id"}}]}}])) == ["$owner.$id"]


def test_set_window_fields() -> None:
    counted = {"$setWindowFields": {"output": {"distinct": {"$count": {}}, "rows": {"$sum": "$count"}}}}
    assert pipeline_constructs([counted]) == []
    assert texts(pipeline_constructs([counted], (4, 4))) == ["$setWindowFields", "$count", "$sum"]
    assert texts(pipeline_constructs([{"$setWindowFields": {"output": {"n": {"$count": 1}}}}])) == ["1"]
    assert texts(pipeline_constructs([{"$setWindowFields": {"output": {"n": {"$locf": "$a"}}}}])) == ["$locf"]  # 5.2
    # A rank, an order operator or a bounded window needs sortBy.
    ranked: dict[str, Any] = {"output": {"n": {"$rank": {}}}}
    assert texts(pipeline_constructs([{"$setWindowFields": ranked}])) == ["$rank"]
    assert pipeline_constructs([{"$setWindowFields": {**ranked, "sortBy": {"a": 1}}}]) == []
    bounded = {"output": {"n": {"$sum": "$a", "window": {"documents": ["unbounded", "current"]}}}}
    assert texts(pipeline_constructs([{"$setWindowFields": bounded}])) == ["$sum"]
    unbounded = {"output": {"n": {"$sum": "$a", "window": {"documents": ["unbounded", "unbounded"]}}}}
    assert pipeline_constructs([{"$setWindowFields": unbounded}]) == []
    shapes = {"partitionBy": "$a.$id", "by": 1, "output": {"n": {"$sum": 1, "$avg": 1}, "m": {"$frobnicate": 1}}}
    assert texts(pipeline_constructs([{"$setWindowFields": shapes}])) == [
        "by",
        "$a.$id",
        repr({"$sum": 1, "$avg": 1}),
        "$frobnicate",
    ]


def test_a_literal_is_not_read() -> None:
    literal = {"$literal": ["$$nothing", "$a.$id", {"$frobnicate": 1}]}
    assert pipeline_constructs([{"$addFields": {"a": {"$in": ["$b", literal]}}}]) == []


# ---------------------------------------------------------------- the backend and the test store


def test_a_policy_expression_reads_links_with_get_field_and_values_as_literals() -> None:
    documents = Documents(beanie_documents.User)
    info = documents.info(beanie_documents.User)
    # A value beginning with '$' is data: outside $literal it would be read as a field path or a variable.
    policy = resolved_policy(info.entity, {"company_id": 1, "name": ("$name", "$$ROOT")})
    expression = PipelineCompiler(documents).policy_expression(info, policy, "member")
    company = {"$getField": {"field": {"$literal": "$id"}, "input": "$$member.company"}}
    assert expression == {
        "$and": [
            {"$eq": [{"$ifNull": [company, None]}, {"$literal": 1}]},
            {"$in": [{"$ifNull": ["$$member.name", None]}, {"$literal": ["$name", "$$ROOT"]}]},
        ]
    }
    counted = {"$filter": {"input": "$users", "as": "member", "cond": expression}}
    assert pipeline_constructs([{"$addFields": {"n": counted}}]) == []


@pytest.fixture(scope="module")
async def beanie_conformance() -> AsyncIterator[Target]:
    async with beanie_target("mongomock", "litestar_listing_rules") as loaded:
        yield loaded


async def test_every_case_of_the_table_compiles_to_what_mongodb_accepts(beanie_conformance: Target) -> None:
    """Every case the Beanie target runs, compiled (page and total, policies and loads), checked without running.

    A facet case's one aggregation is checked in both forms: outside a transaction and inside one.
    """
    checked = 0
    run = [case for case in CASES if not case.errors and not case.needs - beanie_conformance.capabilities]
    for case in run:
        resource = beanie_conformance.resources[case.resource]
        forced = [forced_filter(prepare(resource).field_map, name, value) for name, value in case.forced]
        params = parse_qsl(case.query, keep_blank_values=True)
        backend = resource.backend
        assert isinstance(backend, BeanieBackend)
        if case.endpoint == "facets":
            asked, _ = prepare(resource).parse_facets_priced(params, forced)
            asked = dataclasses.replace(
                asked, query=with_policies(asked.query, prepare(resource).field_map.graph, case)
            )
            pipelines = [
                compile_facets(backend.compiler(asked.query), asked, distinct_apart=apart).pipeline
                for apart in (False, True)
            ]
        else:
            parsed = prepare(resource).parser.parse(params, forced)
            query = with_policies(parsed, prepare(resource).field_map.graph, case)
            compiled = backend.compiler(query).compile(query, ("tags", "owner", "parts"))
            pipelines = [compiled.count, compiled.page]
        for pipeline in pipelines:
            assert pipeline_constructs(pipeline) == [], f"{case.id}: {pipeline}"
            checked += 1
    assert checked == 2 * len(run) > 300


@pytest.fixture
def tally(monkeypatch: pytest.MonkeyPatch) -> RulesTally:
    """A tally of its own, so that what these tests send on purpose stays out of the run's summary."""
    fresh = RulesTally()
    monkeypatch.setattr(mongomock_adapter, "TALLY", fresh)
    return fresh


async def test_the_store_refuses_what_mongodb_refuses(tally: RulesTally, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(mongomock_adapter.RULES_VARIABLE, raising=False)  # refusing, in a run that records too
    collection = mongomock_client()["litestar_listing_rules_refused"]["things"]
    with pytest.raises(OperationFailure, match=r"refuses this pipeline.*\$\$this\.company\.\$id"):
        await collection.aggregate([{"$addFields": {"a": {"$filter": {"input": "$p", "cond": "$$this.company.$id"}}}}])
    with pytest.raises(OperationFailure, match=r"refuses this query.*\$frobnicate"):
        await collection.find({"a": {"$frobnicate": 1}}).to_list(None)
    with pytest.raises(OperationFailure, match=r"refuses this sort.*owner\.\$id"):
        await collection.find({}).sort("owner.$id", 1).to_list(None)
    assert (tally.pipelines, tally.queries, tally.sorts, tally.constructs) == (1, 2, 1, 3)
    assert await (await collection.aggregate([{"$addFields": {"a": link_id("$company")}}])).to_list(None) == []


async def test_recording_counts_without_refusing(tally: RulesTally, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(mongomock_adapter.RULES_VARIABLE, "record")
    collection = mongomock_client()["litestar_listing_rules_recorded"]["things"]
    assert await (await collection.aggregate([{"$sort": {"owner.$id": 1}}])).to_list(None) == []
    assert tally.constructs == 1
    assert "1 field path" in tally.summary()
    assert "owner.$id" in tally.summary()


async def test_a_client_without_the_rules_checks_nothing(tally: RulesTally) -> None:
    collection = mongomock_client(rules=False)["litestar_listing_rules_off"]["things"]
    assert await (await collection.aggregate([{"$sort": {"owner.$id": 1}}])).to_list(None) == []
    assert (tally.pipelines, tally.constructs) == (0, 0)
