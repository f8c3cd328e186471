"""Beanie resources through Litestar's test client, on the embedded store (or MONGODB_URL).

ObjectId-keyed documents, as real document-store resources have them (docs: backends, "Beanie
(MongoDB)"). Expectations are hand counts over ``NOTES`` below.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from beanie import Document, Link, PydanticObjectId
from bson import ObjectId
from httpx import Response
from litestar import Litestar
from litestar.testing import AsyncTestClient
from pydantic import Field, SecretStr

from litestar_listing import EnrichContext, ListingPlugin, Resource, owner_scope, tenant_scope
from litestar_listing.backends.beanie import BeanieBackend, loading
from litestar_listing.core.parts import PARTS
from tests.apps import user_from_header
from tests.conftest import document_store
from tests.matrix import Store, databases_of, selected

STORES = databases_of(selected(store=Store.DOCUMENT))
pytestmark = pytest.mark.skipif(not STORES, reason="Beanie not selected")


def oid(number: int) -> PydanticObjectId:
    """A fixed ObjectId per number: hex order is numeric order, so ``_id`` ties are predictable."""
    return PydanticObjectId(f"{number:024x}")


class Company(Document):
    name: str

    class Settings:
        name = "api_companies"


class Account(Document):
    name: str
    company: Link[Company]
    password: SecretStr

    class Settings:
        name = "api_accounts"


class Note(Document):
    title: str
    words: int
    owner: Link[Account] | None = None
    company: Link[Company]
    meta: dict[str, str] = Field(default_factory=dict)
    labels: list[str] = Field(default_factory=list)
    deleted_at: dt.datetime | None = None

    class Settings:
        name = "api_notes"


DOCUMENTS = (Company, Account, Note)
ACME, GLOBEX = oid(1), oid(2)
ANN, BOB, CID = oid(11), oid(12), oid(13)  # Ann and Bob at Acme, Cid at Globex
_DELETED = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)

# id, title, words, owner, company, meta, labels, deleted
NOTES: tuple[tuple[int, str, int, PydanticObjectId | None, PydanticObjectId, dict[str, str], list[str], bool], ...] = (
    (21, "Álbum review", 120, ANN, ACME, {"color": "red"}, ["music"], False),
    (22, "album notes", 80, BOB, ACME, {"color": "blue"}, [], False),
    (23, ".* literally", 5, CID, GLOBEX, {}, ["regex", "tricky"], False),
    (24, "Straße", 40, None, GLOBEX, {"color": "red"}, [], False),
    (25, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", 1, ANN, ACME, {}, [], False),
    (26, "old draft", 10, BOB, ACME, {"color": "red"}, ["a", "b", "c"], True),
    (27, '{"$ne": null}', 3, CID, GLOBEX, {"color": "$where"}, [], False),
)
ALIVE = [number for number, *_, deleted in NOTES if not deleted]


async def write() -> None:
    for document in DOCUMENTS:
        await document.delete_all()
    await Company.insert_many([Company(id=ACME, name="Acme"), Company(id=GLOBEX, name="Globex")])
    accounts = [(ANN, "Ann", ACME), (BOB, "bob", ACME), (CID, "Cid", GLOBEX)]
    await Account.insert_many(
        [
            Account(id=key, name=name, company=Company.link_from_id(company), password=SecretStr("secret"))
            for key, name, company in accounts
        ]
    )
    await Note.insert_many(
        [
            Note(
                id=oid(number),
                title=title,
                words=words,
                owner=None if owner is None else Account.link_from_id(owner),
                company=Company.link_from_id(company),
                meta=meta,
                labels=labels,
                deleted_at=_DELETED if deleted else None,
            )
            for number, title, words, owner, company, meta, labels, deleted in NOTES
        ]
    )


@dataclass
class User:
    id: ObjectId
    company_id: ObjectId
    is_platform_admin: bool = False


USERS = {"ann": User(ANN, ACME), "cid": User(CID, GLOBEX), "root": User(oid(99), oid(0), is_platform_admin=True)}


def add_length(items: list[dict[str, Any]], context: EnrichContext) -> None:
    for item in items:
        item["title_length"] = len(item["title"])


def make_app() -> Litestar:
    common: dict[str, Any] = {
        "search_fields": ("title", "owner__name"),
        "order_fields": ("*", "owner__name", "company__name"),
        "default_order": ("-words",),
        "raw_filters": ("meta.color",),
    }
    live = [{"$match": {"deleted_at": None}}]
    resources = [
        Resource("notes", BeanieBackend(Note), enrich=add_length, enrich_fields={"title_length": int}, **common),
        Resource("strict-notes", BeanieBackend(Note), ignore_unknown_filters=False, **common),
        Resource(
            "live-notes",
            BeanieBackend(Note, pipeline=live, computed={"label_count": ({"$size": "$labels"}, int)}),
            scopes=(tenant_scope("company_id"),),
            load=("owner", "owner__company"),
            **common,
        ),
        Resource("my-notes", BeanieBackend(Note), scopes=(owner_scope("owner_id"),), **common),
    ]
    return Litestar(plugins=[ListingPlugin(resources)], middleware=[user_from_header(USERS)])


@pytest.fixture(scope="module", params=STORES)
async def client(request: pytest.FixtureRequest) -> AsyncIterator[AsyncTestClient[Litestar]]:
    async with document_store(request.param, "litestar_listing_api", DOCUMENTS):
        await write()
        async with AsyncTestClient(make_app()) as test_client:
            yield test_client


def numbers(response: Response) -> list[int]:
    assert response.status_code == 200, response.text
    return [int(item["id"], 16) for item in response.json()["data"]]


def total(response: Response) -> int:
    assert response.status_code == 200, response.text
    value: int = response.json()["pagination"]["total"]
    return value


# ---------------------------------------------------------------- envelope, paging, order
async def test_envelope_paging_and_default_order(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/api/v1/notes/", params={"count": 3, "page": 1})
    body = response.json()
    assert body["pagination"] == {"page": 1, "count": 3, "total": 7, "total_pages": 3}
    assert body["status"] == "success"
    assert numbers(response) == [21, 22, 24]  # words 120, 80, 40, then 10 (26), 5, 3, 1: -words
    assert numbers(await client.get("/api/v1/notes/", params={"count": 3, "page": 2})) == [26, 23, 27]
    item = body["data"][2]
    assert item == {
        "id": f"{24:024x}",
        "title": "Straße",
        "words": 40,
        "owner_id": None,
        "company_id": f"{2:024x}",
        "deleted_at": None,
        "meta": {"color": "red"},  # a dict field: a JSON document, listed whole
        "title_length": 6,
    }


async def test_past_the_last_page_keeps_the_total(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/api/v1/notes/", params={"page": 9})
    assert numbers(response) == []
    assert response.json()["pagination"] == {"page": 9, "count": 10, "total": 7, "total_pages": 1}


async def test_order_by_a_link_path_puts_missing_links_last(client: AsyncTestClient[Litestar]) -> None:
    # owner names: Ann (21, 25), Cid (23, 27), bob (22, 26) by code point; no owner (24) last.
    assert numbers(await client.get("/api/v1/notes/", params={"order_by": "owner__name"})) == [
        21, 25, 23, 27, 22, 26, 24,
    ]  # fmt: skip
    assert numbers(await client.get("/api/v1/notes/", params={"order_by": "-owner__name,-words"})) == [
        22, 26, 23, 27, 21, 25, 24,
    ]  # fmt: skip


# ---------------------------------------------------------------- filters
# (docs: query language, "Document-store resources")
async def test_reference_by_name_and_by_id_alias(client: AsyncTestClient[Litestar]) -> None:
    by_name = await client.get("/api/v1/notes/", params={"owner": str(ANN), "order_by": "id"})
    by_alias = await client.get("/api/v1/notes/", params={"owner_id": str(ANN), "order_by": "id"})
    assert numbers(by_name) == numbers(by_alias) == [21, 25]


async def test_reference_combines_with_a_plain_field(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/api/v1/notes/", params={"company_id": str(ACME), "words": "80"})
    assert numbers(response) == [22]


async def test_repeated_reference_is_membership(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/api/v1/notes/", params=[("owner", str(BOB)), ("owner", str(CID)), ("order_by", "id")])
    assert numbers(response) == [22, 23, 26, 27]


async def test_invalid_object_id_is_a_400_in_litestar_shape(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/api/v1/notes/", params={"owner": "not-an-id", "words": "many"})
    assert response.status_code == 400
    body = response.json()
    assert body["status_code"] == 400
    assert [(item["key"], item["source"]) for item in body["extra"]] == [("owner", "query"), ("words", "query")]
    assert "ObjectId" in body["extra"][0]["message"]


async def test_allowlisted_raw_key_passes_through(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/api/v1/notes/", params={"meta.color": "red", "order_by": "id"})
    assert numbers(response) == [21, 24, 26]


async def test_unknown_and_suffixed_keys_are_ignored(client: AsyncTestClient[Litestar]) -> None:
    for key in ("words__gte", "title__ne", "owner__name", "meta.size", "labels", "password", "colour"):
        assert total(await client.get("/api/v1/notes/", params={key: "1"})) == 7, key


async def test_a_resource_may_answer_400_for_unknown_keys(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/api/v1/strict-notes/", params={"words__gte": "1", "title": "x"})
    assert response.status_code == 400
    assert [item["key"] for item in response.json()["extra"]] == ["words__gte"]


# ---------------------------------------------------------------- hostile input: nothing reaches the store
@pytest.mark.parametrize(
    "params",
    [
        {"$where": "sleep(1000) || true"},
        {"$expr": '{"$gt": ["$words", 0]}'},
        {"$function": "x"},
        {"title[$ne]": "x"},
        {"words[$gt]": "0"},
        {"owner[$ne]": str(ANN)},
        {"title.$ne": "x"},
        {"meta.$where": "1"},
        {"company.$id": str(ACME)},
    ],
)
async def test_operator_keys_are_never_applied(client: AsyncTestClient[Litestar], params: dict[str, str]) -> None:
    assert total(await client.get("/api/v1/notes/", params=params)) == 7
    strict = await client.get("/api/v1/strict-notes/", params=params)
    assert strict.status_code == 400
    assert [item["key"] for item in strict.json()["extra"]] == list(params)


async def test_operator_shaped_values_are_plain_text(client: AsyncTestClient[Litestar]) -> None:
    assert numbers(await client.get("/api/v1/notes/", params={"title": '{"$ne": null}'})) == [27]
    assert numbers(await client.get("/api/v1/notes/", params={"meta.color": "$where"})) == [27]
    assert total(await client.get("/api/v1/notes/", params={"title": '{"$gt": ""}'})) == 0


async def test_regex_syntax_in_search_is_literal(client: AsyncTestClient[Litestar]) -> None:
    assert numbers(await client.get("/api/v1/notes/", params={"search": ".*"})) == [23]
    assert total(await client.get("/api/v1/notes/", params={"search": "a.b"})) == 0
    assert total(await client.get("/api/v1/notes/", params={"search": "[a-z]"})) == 0


async def test_catastrophic_pattern_is_harmless_text(client: AsyncTestClient[Litestar]) -> None:
    started = time.perf_counter()
    response = await client.get("/api/v1/notes/", params={"search": "(a+)+$" + "a" * 200})
    # Not a timing assertion on speed: a backtracking regex over note 25 would not return at all.
    assert total(response) == 0
    assert time.perf_counter() - started < 30


async def test_order_by_unexposed_or_store_names_is_a_400(client: AsyncTestClient[Litestar]) -> None:
    for value in ("$natural", "password", "owner__password", "meta.color", "_id", "label_count"):
        response = await client.get("/api/v1/notes/", params={"order_by": value})
        assert response.status_code == 400, value
        assert [item["key"] for item in response.json()["extra"]] == ["order_by"]


# ---------------------------------------------------------------- search (docs: query language, "Search")
async def test_search_ignores_case_by_unicode_folding(client: AsyncTestClient[Litestar]) -> None:
    assert numbers(await client.get("/api/v1/notes/", params={"search": "ÁLBUM", "order_by": "id"})) == [21]
    assert numbers(await client.get("/api/v1/notes/", params={"search": "album", "order_by": "id"})) == [22]
    assert numbers(await client.get("/api/v1/notes/", params={"search": "STRASSE"})) == []
    assert numbers(await client.get("/api/v1/notes/", params={"search": "straße"})) == [24]


async def test_search_through_a_link_path(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/api/v1/notes/", params={"search": "BOB", "order_by": "id"})
    assert numbers(response) == [22, 26]


async def test_search_and_filter_combine_with_and(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/api/v1/notes/", params={"search": "a", "company": str(GLOBEX), "order_by": "id"})
    assert numbers(response) == [23, 24]  # ".* literally" and "Straße"; Cid's name has no "a"


# ---------------------------------------------------------------- pipelines, forced filters, loading
async def test_pipeline_soft_delete_tenant_scope_and_computed_order(client: AsyncTestClient[Litestar]) -> None:
    headers = {"x-user": "ann"}
    response = await client.get("/api/v1/live-notes/", params={"order_by": "-label_count,id"}, headers=headers)
    assert numbers(response) == [21, 22, 25]  # Acme, not deleted; labels 1, 0, 0
    assert [item["label_count"] for item in response.json()["data"]] == [1, 0, 0]


async def test_tenant_scope_cannot_be_overridden(client: AsyncTestClient[Litestar]) -> None:
    headers = {"x-user": "ann"}
    for params in ({"company": str(GLOBEX)}, {"company_id": str(GLOBEX)}):
        response = await client.get("/api/v1/live-notes/", params={**params, "order_by": "id"}, headers=headers)
        assert numbers(response) == [21, 22, 25]
    narrowed = await client.get("/api/v1/live-notes/", params={"company.$id": str(GLOBEX)}, headers=headers)
    assert total(narrowed) == 3  # not allowlisted: ignored, and could only narrow anyway


async def test_platform_admin_sees_every_tenant(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/api/v1/live-notes/", params={"order_by": "id"}, headers={"x-user": "root"})
    assert numbers(response) == ALIVE


async def test_anonymous_tenant_list_is_a_401(client: AsyncTestClient[Litestar]) -> None:
    assert (await client.get("/api/v1/live-notes/")).status_code == 401


async def test_owner_scope_through_the_id_alias(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get(
        "/api/v1/my-notes/", params={"owner": str(BOB), "order_by": "id"}, headers={"x-user": "cid"}
    )
    assert numbers(response) == [23, 27]


async def test_links_are_loaded_for_the_page(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/api/v1/live-notes/", params={"order_by": "id", "count": 2}, headers={"x-user": "cid"})
    assert numbers(response) == [23, 24]
    first, second = response.json()["data"]
    assert first["owner"] == {
        "id": f"{13:024x}",
        "name": "Cid",
        "company_id": f"{2:024x}",
        "company": {"id": f"{2:024x}", "name": "Globex"},
    }
    assert second["owner"] is None


async def test_links_are_read_for_the_page_only(
    client: AsyncTestClient[Litestar], monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[str, str, list[object]]] = []
    find = loading._find

    async def recording(collection: Any, key: str, ids: Sequence[object], session: Any, **options: Any) -> list[Any]:
        asked.append((collection.name, key, list(ids)))
        return await find(collection, key, ids, session, **options)

    monkeypatch.setattr(loading, "_find", recording)
    params: dict[str, str | int] = {"order_by": "id", "count": 2, "page": 2}
    assert numbers(await client.get("/api/v1/live-notes/", params=params, headers={"x-user": "ann"})) == [25]
    # One query per relation and depth, for the one note of the page: its owner, then her company.
    assert asked == [("api_accounts", "_id", [ANN]), ("api_companies", "_id", [ACME])]


# ---------------------------------------------------------------- OpenAPI
async def test_openapi_lists_document_filters(client: AsyncTestClient[Litestar]) -> None:
    schema = (await client.get("/schema/openapi.json")).json()
    parameters = schema["paths"]["/api/v1/notes"]["get"]["parameters"]
    assert [parameter["name"] for parameter in parameters] == ["page", "count", "search", "order_by", "filters"]
    # The filters are the properties of one object, each sent as a parameter of its own.
    filters = parameters[-1]
    assert (filters["style"], filters["explode"]) == ("form", True)
    assert set(filters["schema"]["properties"]) == {
        "id",
        "title",
        "words",
        "owner",
        "owner_id",
        "company",
        "company_id",
        "deleted_at",
        *(f"deleted_at__{part}" for part in PARTS),  # its parts, compared by equality (docs: query language)
        "meta.color",
    }
    month = filters["schema"]["properties"]["deleted_at__month"]
    month = schema["components"]["schemas"][month["$ref"].rsplit("/", 1)[1]] if "$ref" in month else month
    assert (month["type"], month["minimum"], month["maximum"]) == ("integer", 1, 12)
