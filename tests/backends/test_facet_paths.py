"""Every kind of facet path and value type, counted on the relational targets as the memory oracle counts them.

The case table's facets are hand-counted over a few paths; here every field type of the fixture (text,
enumeration, boolean, integer, float, decimal, date, datetime, UUID), to-one paths of one and two
relations, to-many paths (through a joining table, a reverse key, and a to-one step after one), the parts
of dates and datetimes, JSON keys of every declared type, lists of them and keys of a related row's
document, under filters, a search and row policies: the values, their types, their order, the number of
values and the total must be the oracle's (docs: facets). A base statement that merges the rows it reads
more than once (SQLAlchemy's ``DISTINCT``) counts each row once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl

import pytest

from litestar_listing.backends.base import FacetBackend
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend
from litestar_listing.core.facets import FacetPage
from litestar_listing.plugin.prepared import prepare
from litestar_listing.plugin.resource import Resource
from tests.conformance import models
from tests.conformance.cases import Case
from tests.conformance.targets import THING_JSON_KEYS, THINGS_OPTIONS, Target, memory_target, target_fixture
from tests.conformance.test_conformance import with_policies
from tests.matrix import SELECTED, Store

TARGETS = [one for one in SELECTED if one.backend in {"sqlalchemy", "piccolo"} and one.store is Store.SQL]
pytestmark = pytest.mark.skipif(not TARGETS, reason="no relational target is selected")

target = target_fixture(TARGETS, "listing_facet_paths")

PATHS = (
    "status",
    "active",
    "name",
    "quantity",
    "weight",
    "price",
    "release_date",
    "created_at",
    "uid",
    "deleted_at",
    "owner__name",
    "owner__email",
    "owner__role__code",
    "owner__manager__name",
    "company__name",
    "company__founded",
    "reviewer__name",
    "tags__name",
    "parts__name",
    "parts__quantity",
    "parts__supplier__name",
    "release_date__year",
    "release_date__month",
    "release_date__week_day",
    "created_at__date",
    "created_at__hour",
    "created_at__quarter",
    "company__founded__year",
    "attributes__color",
    "attributes__size",
    "attributes__ratio",
    "attributes__fragile",
    "attributes__released",
    "attributes__released__year",
    "attributes__tags",
    "attributes__dims__width",
    "company__profile__tier",
    "company__profile__regions",
)
QUERIES = ("", "status=active", "search=a", "company__name=Acme&tags__name=red", "owner__name__isnull=false")
POLICIES: Sequence[tuple[tuple[str, Any], ...]] = (
    (),
    (("User", (("company_id", 1),)),),
    (("Tag", (("id", (2, 4, 6)),)),),
    (("Company", (("id", (1, 3)),)),),
    (("Part", (("id", (1, 2, 3)),)),),
    (("Thing", (("company_id", 2),)),),
)
ORACLE = memory_target()


def faceted(resource: Resource) -> Resource:
    """``resource``'s backend with every path of ``PATHS`` a facet."""
    return Resource(
        "things", resource.backend, **{**THINGS_OPTIONS, "json_keys": THING_JSON_KEYS, "facet_fields": PATHS}
    )


async def counted(on: Target, resource: Resource, query: str, case: Case) -> FacetPage:
    prepared = prepare(resource)
    asked, _ = prepared.parse_facets_priced(parse_qsl(query))
    asked = dataclasses.replace(asked, query=with_policies(asked.query, prepared.field_map.graph, case))
    backend = resource.backend
    assert isinstance(backend, FacetBackend)
    async with on.context() as context:
        return await backend.facet_counts(asked, context)


def answer(page: FacetPage) -> tuple[object, ...]:
    """What a facet page says, each value with its type (``True == 1`` and ``"a" == Status.A`` would hide a type)."""
    return page.total, [
        (counts.facet.name, [(each.value, type(each.value), each.count) for each in counts.values], counts.distinct)
        for counts in page.facets
    ]


@pytest.mark.parametrize("policies", POLICIES, ids=lambda policies: ",".join(name for name, _ in policies) or "none")
@pytest.mark.parametrize("filtered", QUERIES, ids=lambda query: query or "all")
async def test_every_path_counts_as_the_oracle(
    target: Target, filtered: str, policies: tuple[tuple[str, Any], ...]
) -> None:
    mine, oracle = faceted(target.resources["things"]), faceted(ORACLE.resources["things"])
    case = Case("facet:paths", "", policies=policies)
    for start in range(0, len(PATHS), 8):  # Limits.max_facets a request
        query = f"facet={','.join(PATHS[start : start + 8])}&facet_limit=100&{filtered}"
        assert answer(await counted(target, mine, query, case)) == answer(await counted(ORACLE, oracle, query, case))


async def test_a_distinct_base_statement_counts_each_row_once(target: Target) -> None:
    if target.sessions is None:
        pytest.skip("a base statement is SQLAlchemy's (SQLAlchemyBackend(statement=...))")
    # Joined to its tags, a thing is read once per tag, and DISTINCT merges them again.
    backend = SQLAlchemyBackend(models.Thing, statement=lambda listed: listed.join(models.Thing.tags).distinct())
    resource = Resource("things", backend, facet_fields=("status",))
    asked = prepare(resource).parser.parse_facets([("facet", "status")], [])
    async with target.context() as context:
        listed = await backend.fetch(prepare(resource).parser.parse([], []), context)
        answer = await backend.facet_counts(asked, context)
    assert answer.total == listed.total == sum(each.count for each in answer.facets[0].values) == 16
