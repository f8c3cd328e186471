"""Facet counts on the document stores: the Beanie backend's one aggregation against the memory oracle.

The case table's facet cases (``tests/conformance/cases.py``) are hand-counted; the Beanie target runs the
ones its document-store filters can express. Here the same conformance data is counted on Beanie and on
the memory backend (the reference, docs: facets) for facets the table does not reach: disjunctive counts
that leave a facet's own filters out, parts of dates, paths of two and three links (a missing document
midway), lists of links reached through a back link, JSON keys of every declared type, identifiers, row
policies on every class reached. Then what the backend sends: one ``aggregate``, the shared filters
before ``$facet``, each facet's own ones inside; ``ObjectId`` values as items hold them; the transaction
form; the time limit and a lost server.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import parse_qsl

import pytest
from beanie import Document, Link, PydanticObjectId
from bson import ObjectId
from litestar import Litestar
from litestar.testing import AsyncTestClient
from pymongo.errors import AutoReconnect, ExecutionTimeout

from litestar_listing import ListContext, ListingPlugin, MemoryBackend, Resource
from litestar_listing.backends.base import FacetBackend
from litestar_listing.backends.beanie import BeanieBackend
from litestar_listing.backends.beanie.facets import compile_facets
from litestar_listing.backends.sqlalchemy import model_graph
from litestar_listing.core.errors import UnavailableError
from litestar_listing.core.facets import FacetPage, FacetQuery
from litestar_listing.core.query import Policy
from litestar_listing.plugin.facets import count_facets
from litestar_listing.plugin.policies import resolved_policy
from litestar_listing.plugin.prepared import prepare
from tests.apps import serving
from tests.conformance import beanie_documents
from tests.conformance.fixture import DELETED_IDS, memory_rows
from tests.conformance.models import Thing
from tests.conformance.targets import (
    BEANIE_OPTIONS,
    PART_COUNT,
    THING_JSON_KEYS,
    THINGS_OPTIONS,
    beanie_backend,
    beanie_target,
    count_parts,
)
from tests.conftest import document_store
from tests.matrix import Store, selected

FACETS = (
    "status", "active", "quantity", "weight", "price", "uid", "company_id", "owner_id", "release_date",
    "created_at", "release_date__year", "release_date__quarter", "release_date__month", "release_date__day",
    "release_date__week_day", "created_at__date", "created_at__hour", "company__name", "company__founded__year",
    "owner__name", "owner__role__code", "owner__manager__name", "owner__manager__manager__name", "reviewer__name",
    "tags__name", "parts__name", "parts__quantity", "parts__supplier__name", "attributes__color",
    "attributes__size", "attributes__ratio", "attributes__fragile", "attributes__released",
    "attributes__released__year", "attributes__tags", "attributes__dims__width", "company__profile__tier",
    "company__profile__regions",
)  # fmt: skip
"""Every kind of facet path the backend counts, each on both backends."""

COMBINE = {"things": "and", "things_or": "or", "things_live": "and"}

QUERIES = (
    # Disjunctive: each facet leaves out its own filters, repeated ones (a membership) too.
    "facet=status,active,company_id&status=active&status=draft&active=true",
    "facet=status,active,company_id&status=active&status=draft&active=true&facet_mode=conjunctive",
    "facet=status,company_id,owner_id&company_id=1&owner_id=2",
    "facet=release_date__year,release_date__month,status&release_date__year=2024&status=draft",
    "facet=created_at__date,created_at__hour,release_date__quarter,release_date__day,release_date__week_day&facet_limit=100",
    "facet=quantity,weight,price,uid,release_date,created_at&facet_limit=100",
    "facet=company__name,company__founded__year,reviewer__name,owner__role__code&facet_limit=100",
    "facet=owner__manager__name,owner__manager__manager__name,owner__name&facet_limit=100",
    "facet=tags__name,parts__name,parts__quantity,parts__supplier__name&facet_limit=100",
    "facet=attributes__color,attributes__size,attributes__ratio,attributes__fragile&facet_limit=100",
    "facet=attributes__released,attributes__released__year,attributes__tags,attributes__dims__width&facet_limit=100",
    "facet=company__profile__tier,company__profile__regions,status&facet_limit=100",
    "facet=tags__name,status,owner__name&search=a&status=active",
    "facet=status,parts__supplier__name&facet_limit=2",
    "facet=active&facet_limit=1",
)

POLICIES: Mapping[str, Mapping[str, Any] | None] = {
    "none": {},
    "thing": {"Thing": {"company_id": (1, 3)}},
    "tag": {"Tag": {"id": (1, 3, 6)}},
    "user": {"User": {"company_id": 1}},
    "part": {"Part": {"quantity": (1, 2, 100)}},
    "company": {"Company": {"id": 2}, "User": {"company_id": (1, 2)}},
    "hidden": {"Thing": None},
}
"""Row policies by name: a class's values, None for a class no row of which is visible."""


@pytest.fixture(scope="module", params=selected(store=Store.DOCUMENT), ids=str)
async def resources(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, tuple[Resource, Resource]]]:
    """Per resource name, the Beanie resource and the memory one, over the same data and facets."""
    async with beanie_target(request.param.database, "litestar_listing_facets"):
        graph = model_graph(Thing)
        rows = memory_rows()
        pairs: dict[str, tuple[Resource, Resource]] = {}
        for name, combine in COMBINE.items():
            options: dict[str, Any] = {"json_keys": THING_JSON_KEYS, "facet_fields": FACETS, "combine": combine}
            selected_rows = [row for row in rows if row["id"] not in DELETED_IDS] if name == "things_live" else rows
            memory = MemoryBackend(
                graph, selected_rows, computed={"part_count": PART_COUNT}, values={"part_count": count_parts}
            )
            pairs[name] = (
                Resource(name, beanie_backend(name), **BEANIE_OPTIONS, **options),
                Resource(name, memory, **THINGS_OPTIONS, **options),
            )
        yield pairs


def asked(resource: Resource, query: str, policies: Mapping[str, Any] | None) -> FacetQuery:
    """The facet request ``query`` on ``resource``, with the row policies ``policies`` names."""
    prepared = prepare(resource)
    request, _ = prepared.parse_facets_priced(parse_qsl(query, keep_blank_values=True), [])
    graph = prepared.field_map.graph
    resolved = tuple(
        Policy(name, visible=False) if values is None else resolved_policy(graph.entities[name], values)
        for name, values in (policies or {}).items()
    )
    return dataclasses.replace(request, query=dataclasses.replace(request.query, policies=resolved))


def shown(page: FacetPage) -> tuple[object, ...]:
    """A page as compared: each value with its type (``True == 1``, a store may answer an int for a bool)."""
    facets = tuple(
        (
            counts.facet.name,
            tuple((each.value, type(each.value), each.count) for each in counts.values),
            counts.distinct,
        )
        for counts in page.facets
    )
    return page.total, facets


async def counted(resource: Resource, request: FacetQuery, **context: Any) -> FacetPage:
    backend = resource.backend
    assert isinstance(backend, FacetBackend)
    return await backend.facet_counts(request, ListContext(**context))


@pytest.mark.parametrize("policies", list(POLICIES))
@pytest.mark.parametrize("query", QUERIES)
async def test_the_counts_are_the_memory_backends(
    resources: dict[str, tuple[Resource, Resource]], query: str, policies: str
) -> None:
    beanie, memory = resources["things"]
    expected = await counted(memory, asked(memory, query, POLICIES[policies]))
    got = await counted(beanie, asked(beanie, query, POLICIES[policies]))
    assert shown(got) == shown(expected)


@pytest.mark.parametrize("name", ["things_or", "things_live"])
@pytest.mark.parametrize("query", QUERIES[:4])
async def test_or_resources_and_base_pipelines(
    resources: dict[str, tuple[Resource, Resource]], name: str, query: str
) -> None:
    beanie, memory = resources[name]
    expected = await counted(memory, asked(memory, query, None))
    assert shown(await counted(beanie, asked(beanie, query, None))) == shown(expected)


@pytest.mark.parametrize("query", QUERIES)
async def test_the_transaction_form_counts_the_same(
    resources: dict[str, tuple[Resource, Resource]], query: str
) -> None:
    """MongoDB refuses ``$setWindowFields`` in a transaction: there ``distinct`` has a sub-pipeline of its own."""
    beanie, _ = resources["things"]
    backend = beanie.backend
    assert isinstance(backend, BeanieBackend)
    request = asked(beanie, query, POLICIES["user"])
    window = compile_facets(backend.compiler(request.query), request)
    apart = compile_facets(backend.compiler(request.query), request, distinct_apart=True)
    assert "$setWindowFields" not in repr(apart.pipeline)
    collection = backend.document.get_pymongo_collection()
    results = [await (await collection.aggregate(each.pipeline)).to_list(None) for each in (window, apart)]
    assert shown(apart.answer(results[1][0])) == shown(window.answer(results[0][0]))


# ---------------------------------------------------------------- what the backend sends


class Recording:
    """A collection that records what it is sent and answers as a ``$facet`` on no document does."""

    def __init__(self, error: Exception | None = None) -> None:
        self.calls: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []
        self.error = error

    async def aggregate(self, pipeline: list[dict[str, Any]], **options: Any) -> Any:
        self.calls.append((pipeline, options))
        if self.error is not None:
            raise self.error
        outputs = pipeline[-1]["$facet"]

        class Cursor:
            async def to_list(self, length: int | None) -> list[dict[str, Any]]:
                return [{key: [] for key in outputs}]

        return Cursor()


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> Recording:
    collection = Recording()
    monkeypatch.setattr(beanie_documents.Thing, "get_pymongo_collection", classmethod(lambda cls: collection))
    return collection


def beanie_things(**options: Any) -> Resource:
    keys = {"json_keys": THING_JSON_KEYS, "facet_fields": FACETS}
    return Resource("things", BeanieBackend(beanie_documents.Thing), **{**BEANIE_OPTIONS, **keys, **options})


async def test_one_aggregation_shared_filters_first(recording: Recording) -> None:
    resource = beanie_things()
    facets = "status,owner__name,tags__name,company__name"
    page = await counted(resource, asked(resource, f"facet={facets}&status=active&active=true&search=x", None))
    assert page.total == 0
    assert [(counts.values, counts.distinct) for counts in page.facets] == [((), 0)] * 4
    [(pipeline, options)] = recording.calls
    assert options["allowDiskUse"] is True
    assert "maxTimeMS" not in options
    # Before $facet: the filter no facet leaves out (active), then the search after the lookups it needs.
    *shared, facet = pipeline
    assert shared[0] == {"$match": {"active": True}}
    looked_up = [stage["$lookup"]["as"] for stage in shared if "$lookup" in stage]
    assert looked_up == ["_listing_owner", "_listing_tags"]
    assert next(iter(shared[-1])) == "$match"
    outputs = facet["$facet"]
    assert list(outputs) == ["total", "f0", "f1", "f2", "f3"]
    # status leaves its own filter out; the total and the other facets match it, in their sub-pipelines.
    assert outputs["total"] == [{"$match": {"status": "active"}}, {"$count": "total"}]
    for output in ("f1", "f2", "f3"):
        assert outputs[output][0] == {"$match": {"status": "active"}}
    # owner__name and tags__name read the search's lookups; company__name looks its link up in its own.
    assert [next(iter(stage)) for stage in outputs["f0"][:1]] == ["$group"]
    assert [next(iter(stage)) for stage in outputs["f1"][1:2]] == ["$group"]
    assert [next(iter(stage)) for stage in outputs["f2"][1:4]] == ["$addFields", "$unwind", "$group"]
    assert [next(iter(stage)) for stage in outputs["f3"][1:4]] == ["$addFields", "$lookup", "$group"]
    for output in ("f0", "f1", "f2", "f3"):
        assert outputs[output][-4:] == [
            {"$setWindowFields": {"output": {"distinct": {"$count": {}}}}},
            {"$addFields": {"last": {"$cond": [{"$eq": ["$_id", None]}, 1, 0]}}},
            {"$sort": {"count": -1, "last": 1, "_id": 1}},
            {"$limit": 10},
        ]


class Session:
    """A pymongo session's attributes the backend reads: in a transaction, or reading a snapshot."""

    def __init__(self, *, in_transaction: bool = False, snapshot: bool = False) -> None:
        self.in_transaction = in_transaction
        self.options = dataclasses.make_dataclass("Options", [("snapshot", bool)])(snapshot)


@pytest.mark.parametrize(
    "session", [Session(in_transaction=True), Session(snapshot=True)], ids=["transaction", "snapshot"]
)
async def test_a_transaction_counts_distinct_values_apart(recording: Recording, session: Session) -> None:
    resource = beanie_things()
    await counted(resource, asked(resource, "facet=status,tags__name&facet_limit=3", None), session=session)
    [(pipeline, options)] = recording.calls
    assert options["session"] is session
    outputs = pipeline[-1]["$facet"]
    assert list(outputs) == ["total", "f0", "d0", "f1", "d1"]
    assert outputs["d0"][-1] == {"$count": "distinct"}
    assert "$setWindowFields" not in repr(pipeline)


async def test_a_session_outside_a_transaction_counts_distinct_values_with_a_window(recording: Recording) -> None:
    resource = beanie_things()
    await counted(resource, asked(resource, "facet=status", None), session=Session())
    [(pipeline, _)] = recording.calls
    assert list(pipeline[-1]["$facet"]) == ["total", "f0"]
    assert "$setWindowFields" in repr(pipeline)


@pytest.mark.parametrize(
    ("error", "fragment"),
    [
        (ExecutionTimeout("operation exceeded time limit"), "took longer than 1.5 s"),
        (AutoReconnect("x"), "unreachable"),
    ],
)
async def test_the_time_limit_and_a_lost_server_are_503(
    monkeypatch: pytest.MonkeyPatch, error: Exception, fragment: str
) -> None:
    collection = Recording(error)
    monkeypatch.setattr(beanie_documents.Thing, "get_pymongo_collection", classmethod(lambda cls: collection))
    resource = beanie_things(timeout=1.5)
    with pytest.raises(UnavailableError) as raised:
        await count_facets(resource, None, [("facet", "status")], app=serving(resource))
    assert fragment in str(raised.value)
    [(_, options)] = collection.calls
    assert 1000 < options["maxTimeMS"] <= 1500  # MongoDB itself stops at the time left


# ---------------------------------------------------------------- ObjectId values


class Author(Document):
    name: str

    class Settings:
        name = "facet_authors"


class Note(Document):
    title: str
    author: Link[Author] | None = None

    class Settings:
        name = "facet_notes"


@pytest.mark.parametrize("target", selected(store=Store.DOCUMENT), ids=str)
async def test_object_ids_are_answered_as_items_hold_them(target: Any) -> None:
    async with document_store(target.database, "litestar_listing_facet_ids", (Author, Note)):
        ann, bob = Author(id=PydanticObjectId(), name="Ann"), Author(id=PydanticObjectId(), name="Bob")
        await Author.insert_many([ann, bob])
        by_ann, by_bob = Author.link_from_id(ann.id), Author.link_from_id(bob.id)
        notes = [Note(title="a", author=by_ann), Note(title="b", author=by_ann), Note(title="c", author=by_bob)]
        notes.append(Note(title="d"))
        await Note.insert_many(notes)
        resource = Resource("notes", BeanieBackend(Note), facet_fields=("author_id", "author__name"))
        page = await counted(resource, asked(resource, "facet=author_id,author__name", None))
        by_id, by_name = page.facets
        assert [(each.value, each.count) for each in by_id.values] == [(ann.id, 2), (bob.id, 1), (None, 1)]
        listed = await resource.backend.fetch(prepare(resource).parser.parse([], []), ListContext())
        # ObjectIds, as the items hold them (not their text, which only the response's encoder writes).
        held = [item["author_id"] for item in listed.items if item["author_id"] is not None]
        assert all(isinstance(value, ObjectId) for value in [*held, *(each.value for each in by_id.values[:2])])
        assert [(each.value, each.count) for each in by_name.values] == [("Ann", 2), ("Bob", 1), (None, 1)]
        # Over HTTP as the list writes them: 24-character hex text.
        async with AsyncTestClient(Litestar(plugins=[ListingPlugin([resource])])) as client:
            response = await client.get("/api/v1/notes/facets/", params={"facet": "author_id"})
        assert response.status_code == 200, response.text
        assert [each["value"] for each in response.json()["data"][0]["values"]] == [str(ann.id), str(bob.id), None]
