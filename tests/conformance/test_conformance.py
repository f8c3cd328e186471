"""The ONE conformance case table, run on every selected backend x database.

Expectations in ``cases.py`` are hand counts over ``fixture.py``; a backend that disagrees is wrong.
Cases skip only by a declared capability, never by backend name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

import pytest

from litestar_listing.backends.base import FacetBackend, IndexedSearch, TrigramTable
from litestar_listing.core.errors import InvalidQueryError
from litestar_listing.core.parsing import forced_filter
from litestar_listing.core.query import Filter, ListQuery, Policy
from litestar_listing.core.schema import ModelGraph
from litestar_listing.plugin.policies import resolved_policy
from litestar_listing.plugin.prepared import prepare
from litestar_listing.plugin.resource import Resource
from tests.conformance.cases import CASES, Case
from tests.conformance.targets import Target, target_fixture
from tests.matrix import SELECTED

target = target_fixture(SELECTED)


def test_case_ids_are_unique() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))


def with_policies(query: ListQuery, graph: ModelGraph, case: Case) -> ListQuery:
    """``query`` carrying the row policies of ``case`` (those that follow relations included)."""
    through = dict(case.through)
    values_of = dict(case.policies)
    values_of.update((name, ()) for name in through if name not in values_of)
    policies = tuple(
        Policy(name, visible=False)
        if values is None
        else resolved_policy(graph.entities[name], dict(values), through=through.get(name, ()))
        for name, values in values_of.items()
    )
    return dataclasses.replace(query, policies=policies)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
async def test_case(target: Target, case: Case) -> None:
    await run_case(target, case)


async def run_case(
    target: Target,
    case: Case,
    *,
    count_in_page: bool = False,
    trigram_tables: Mapping[str, frozenset[TrigramTable]] | None = None,
    indexed_search: Mapping[str, IndexedSearch | None] | None = None,
) -> None:
    """Run ``case`` on ``target`` and check what it expects.

    With ``ListContext.count_in_page`` as given, and the trigram tables and indexed searched paths of
    each resource by its name.
    """
    missing = case.needs - target.capabilities
    if missing:
        pytest.skip(f"{target.id} lacks {sorted(missing)}")
    resource = target.resources[case.resource]
    params = parse_qsl(case.query, keep_blank_values=True)
    forced = [forced_filter(prepare(resource).field_map, name, value) for name, value in case.forced]
    if case.endpoint == "facets":
        await run_facet_case(target, case, resource, params, forced)
        return
    if case.errors:
        with pytest.raises(InvalidQueryError) as raised:
            prepare(resource).parse_priced(params, forced)
        assert {error.key for error in raised.value.errors} == set(case.errors)
        return
    query, _ = prepare(resource).parse_priced(params, forced)
    query = with_policies(query, prepare(resource).field_map.graph, case)
    async with target.context() as context:
        tables = frozenset() if trigram_tables is None else trigram_tables.get(case.resource, frozenset())
        searched = None if indexed_search is None else indexed_search.get(case.resource)
        called = dataclasses.replace(
            context,
            load=loads(case),
            count_in_page=count_in_page,
            trigram_tables=tables,
            indexed_search=searched,
        )
        page = await resource.backend.fetch(query, called)
    if case.ids is not None:
        assert [item["id"] for item in page.items] == list(case.ids)
    if case.total is not None:
        assert page.total == case.total
    if case.loaded is not None:
        assert [reached(item, case.load) for item in page.items] == list(case.loaded)


async def run_facet_case(
    target: Target, case: Case, resource: Resource, params: list[tuple[str, str]], forced: list[Filter]
) -> None:
    """Run the facet request of ``case`` on ``target`` and check its answer: values, their types, counts, distinct."""
    prepared = prepare(resource)
    if case.errors:
        with pytest.raises(InvalidQueryError) as raised:
            prepared.parse_facets_priced(params, forced)
        assert {error.key for error in raised.value.errors} == set(case.errors)
        return
    asked, _ = prepared.parse_facets_priced(params, forced)
    asked = dataclasses.replace(asked, query=with_policies(asked.query, prepared.field_map.graph, case))
    assert isinstance(resource.backend, FacetBackend)
    async with target.context() as context:
        answer = await resource.backend.facet_counts(asked, context)
    got = tuple(
        (counts.facet.name, tuple((each.value, each.count) for each in counts.values), counts.distinct)
        for counts in answer.facets
    )
    assert got == case.facets
    # Equal is not enough: True == 1, and a store may hand back an integer for a boolean.
    types = [type(each.value) for counts in answer.facets for each in counts.values]
    assert types == [type(value) for _, values, _ in case.facets for value, _ in values]
    assert answer.total == case.total


def loads(case: Case) -> tuple[str, ...]:
    """The ``ListContext.load`` of ``case``."""
    return (case.load,) if case.load else ()


def reached(item: Mapping[str, Any], path: str) -> tuple[int, ...]:
    """The ids of the rows the loaded ``path`` (``tags``, ``parts__supplier``) reaches from ``item``, in order."""
    rows: list[Mapping[str, Any]] = [item]
    for step in path.split("__"):
        following: list[Mapping[str, Any]] = []
        for row in rows:
            value = row[step]
            following.extend(value if isinstance(value, list) else [] if value is None else [value])
        rows = following
    return tuple(row["id"] for row in rows)
