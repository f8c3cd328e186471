"""Non-interference: all a client can read of an answer equals the answer on the data with its invisible rows deleted.

The property (docs: design, "Non-interference"), per selected target, over HTTP: a request is sent
as ``GET`` and as ``HEAD`` to an application whose ``ListingPlugin`` has row policies, over the
conformance data (``tests/conformance/fixture.py``), as a user of company 1, 2, or none, and as the
platform administrator; the same request goes, unpoliced, to the same backend on the same kind of
database holding only the rows that user may see (a *twin*: the fixture written again, then every
invisible row deleted, foreign keys left dangling as a deleted row leaves them). Compared: the status,
every header (``X-Next-Cursor``, ``Link``, ``Content-Length``, the ``X-Listing-*`` cost headers and the
cost budget's ``RateLimit-*``...) and the body, byte for byte, but for the values of the headers that
depend on the clock or the client's history (``HISTORY_HEADERS``); then the pages the cursor leads to,
followed on both sides. The resource has a ceiling (``max_cost``) that some generated requests exceed;
the plugin has admission lanes and a budget. The resource lists things with keyset continuation,
eager-loads several paths that reach the same model (``owner__manager``, ``reviewer``: users), orders
through policed multi-hop paths (``owner__manager__name``, ``owner__company__name``) and lists the
computed ``part_count`` (a ``Computed`` value reading Part under its policy) and, on the SQL backends,
``owner_reports`` (the visible users a visible owner manages: User read through two aliases). A
``users`` resource with ``reports`` (a user's visible direct reports: the listed model counted through
an alias of itself) answers a few fixed requests per user as well (tests/conformance/aliases.py).

Two sets of policies:

* ``direct``: Thing, User, Company and Part by their own company columns, Tag by a share of ids;
* ``inherited`` (targets with ``Capabilities.inherited_policies``): Company by id, a user visible when
  its company is, a thing when its owner is (two levels), a part when its supplier is.

On PostgreSQL, ``test_estimated_totals_never_depend_on_invisible_rows`` lists with
``total_mode="estimated"`` as company 1's user, adds 3,000 rows only company 2 may see and refreshes
the statistics, and lists again: the same answer, counted exactly (the administrator's is an estimate).

Hypothesis settings: ``LISTING_HYPOTHESIS_PROFILE`` (``ci``: 200 examples per target, ``nightly``:
10,000).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import sqlite3
import zlib
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, cast
from urllib.parse import parse_qsl, urlencode

import asyncpg
import httpx
import pytest
from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from hypothesis import given
from litestar import Litestar
from litestar.connection import ASGIConnection
from piccolo.columns import Integer
from piccolo.engine.postgres import PostgresEngine
from piccolo.engine.sqlite import SQLiteEngine
from sqlalchemy.ext.asyncio import create_async_engine

from litestar_listing import (
    CostBudget,
    ListContext,
    ListingBackend,
    ListingPlugin,
    MemoryBackend,
    Resource,
    RowPolicy,
    ScopeRule,
    tenant_scope,
)
from litestar_listing.backends.base import IndexedSearch
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.piccolo import prepare_engine as prepare_piccolo_engine
from litestar_listing.backends.relational.compiler import SearchForm
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend, model_graph, prepare_engine
from litestar_listing.core.cost import counts_with_page
from litestar_listing.core.query import FilterSyntax
from litestar_listing.plugin import plugin as plugin_module
from litestar_listing.plugin.prepared import prepare
from tests.apps import user_from_header
from tests.conformance import beanie_documents, piccolo_tables
from tests.conformance.aliases import beanie_backends, piccolo_values, sqlalchemy_values
from tests.conformance.fixture import COMPANIES, PARTS, TAGS, THINGS, USERS, memory_rows
from tests.conformance.models import Thing, User
from tests.conformance.targets import (
    PART_COUNT,
    THINGS_OPTIONS,
    Target,
    beanie_backend,
    count_parts,
    forms_chosen,
    memory_target,
    piccolo_backend,
    piccolo_engine,
    postgres_target_url,
    reads_candidates,
    server_target_url,
    sqlalchemy_backend,
    thing_facets,
    write_piccolo_rows,
    write_sqlalchemy_rows,
)
from tests.conftest import async_url, scratch_folder
from tests.differential.strategies import Domain
from tests.harness import mariadb_connection
from tests.hostile import HOSTILE_DATABASE, Opened, Tally, pruned
from tests.hostile.strategies import hostile_queries, profile

Ids = Mapping[str, frozenset[int]]
COMPANY_IDS = (1, 2, None)
"""The users' companies; None: a user without a company, who may see no row."""
ADMIN = "admin"
BASE_URL = "http://testserver.local"
LOAD = ("owner__manager", "reviewer", "company", "parts__supplier", "tags")
ORDER = (*THINGS_OPTIONS["order_fields"], "owner__manager__name", "owner__company__name")
TABLES = {"Thing": "things", "User": "users", "Company": "companies", "Part": "parts", "Tag": "tags"}


def _tags_of(company: int | None) -> frozenset[int]:
    return frozenset(() if company is None else (tag for tag, _ in TAGS if tag % 3 == company % 3))


def visible_ids(policy_set: str, company: int | None) -> Ids:
    """The ids of each policed model a user of ``company`` may see: the hand-written reading of the policies."""
    companies = frozenset(key for key, *_ in COMPANIES if key == company)
    if policy_set == "direct":
        users = frozenset(row[0] for row in USERS if row[3] == company and company is not None)
        things = frozenset(row[0] for row in THINGS if row[13] == company)
        parts = frozenset(row[0] for row in PARTS if row[4] == company and company is not None)
    else:  # a user when its company is, a thing when its owner is, a part when its supplier is
        users = frozenset(row[0] for row in USERS if row[3] in companies)
        things = frozenset(row[0] for row in THINGS if row[11] in users)
        parts = frozenset(row[0] for row in PARTS if row[4] in companies)
    return {"Thing": things, "User": users, "Company": companies, "Part": parts, "Tag": _tags_of(company)}


def invisible_ids(visible: Ids) -> Ids:
    """The ids a user with ``visible`` may not see, by model: the rows its twin deletes."""
    every = {
        "Thing": {row[0] for row in THINGS},
        "User": {row[0] for row in USERS},
        "Company": {key for key, *_ in COMPANIES},
        "Part": {row[0] for row in PARTS},
        "Tag": {key for key, _ in TAGS},
    }
    return {name: frozenset(ids - visible[name]) for name, ids in every.items()}


def row_policies(policy_set: str) -> list[RowPolicy]:
    """The plugin's row policies; the user's ``company_id`` (None: no row), an administrator bypasses them."""

    def tags(connection: ASGIConnection[Any, Any, Any, Any]) -> Mapping[str, object]:
        user = connection.scope["user"]
        return {} if user["is_platform_admin"] else {"id": tuple(_tags_of(user["company_id"]))}

    tag = RowPolicy("Tag", ScopeRule(("id",), tags))
    if policy_set == "direct":
        owned = (("Thing", "company_id"), ("User", "company_id"), ("Company", "id"), ("Part", "supplier_id"))
        return [*(RowPolicy(name, tenant_scope(field)) for name, field in owned), tag]
    return [
        RowPolicy("Company", tenant_scope("id")),
        RowPolicy("User", through="company"),
        RowPolicy("Thing", through="owner"),
        RowPolicy("Part", through="supplier"),
        tag,
    ]


def _user_named(name: str) -> dict[str, Any]:
    """The user of an ``x-user`` header: the administrator, ``none`` (no company) or a company's id."""
    if name == ADMIN:
        return {"company_id": None, "is_platform_admin": True}
    return {"company_id": None if name == "none" else int(name), "is_platform_admin": False}


def listed(backend: ListingBackend, *, document: bool, **options: Any) -> Resource:
    """The ``things`` resource of the property over ``backend``."""
    settings: dict[str, Any] = {
        **THINGS_OPTIONS,
        "order_fields": ORDER if not document else THINGS_OPTIONS["order_fields"],
        "load": LOAD,
        "keyset": not document,  # Beanie has no keyset continuation
        "default_order": ("-created_at",),
        # The price of a list: its ceiling's 400 and the X-Listing-* headers (docs: admission).
        "max_cost": CEILING,
        "cost_headers": True,
        # No time limit: the property compares answers, and a 503 of a busy machine (a MariaDB list
        # past 5 s beside the other CI sessions) says nothing about the rows a list may see.
        "timeout": None,
    }
    if document:
        settings.update(filter_fields=("*",), ignore_unknown_filters=False)
    # Facet counts are read like the page (docs: facets, "Security"), where the backend counts them.
    settings["facet_fields"] = thing_facets(backend.capabilities, {})
    return Resource("things", backend, **{**settings, **options})


def listed_users(backend: ListingBackend, *, document: bool) -> Resource:
    """The ``users`` resource of the property: ``reports``, a computed value counting the listed model itself."""
    return Resource("users", backend, default_order=("id",), keyset=not document, timeout=None)


USER_QUERIES = ("order_by=-reports&count=3", "order_by=reports,-id&count=2&page=2", "manager_id__isnull=false&count=4")
"""Requests of ``users``, ordered by the self-referential ``reports`` (a user's visible direct reports)."""


COUNTED_QUERIES = (
    "search=a&order_by=-quantity&count=2",
    "search=o&order_by=name&count=3&page=2",
    "search=e&count=2",
    "search=lbum&count=2",
    "search=str&order_by=-quantity&count=1",
)
"""Requests of ``things`` whose total is read with the page on the SQL backends (docs: design, "Totals"):
searched, sorted by fields no index serves, with pages that neither are the last nor tell the total. On
the databases that read a search's candidates, those of three letters or more read them first
(``every_path_indexed``)."""


@pytest.fixture
def every_path_indexed(monkeypatch: pytest.MonkeyPatch) -> list[SearchForm]:
    """Every searchable path taken as indexed when an application starts; the forms the probes choose.

    So that the searches of the property read their candidates where the database does (docs:
    indexes, "Search from indexes"), whatever indexes the fixture's tables have.
    """

    async def every_path(resource: Resource, catalog: object = None) -> IndexedSearch:
        return IndexedSearch(frozenset(field.path.name for field in prepare(resource).field_map.searchable), 10**6)

    monkeypatch.setattr(plugin_module, "indexed_search", every_path)
    return forms_chosen(monkeypatch)


# ---------------------------------------------------------------- stores: the full data and its twins
@dataclasses.dataclass
class Store:
    """One store of the property: its ``things`` and ``users`` resources (None: no users) and the plugins they need."""

    resource: Resource
    plugins: list[Any] = dataclasses.field(default_factory=list)
    users: Resource | None = None

    @property
    def resources(self) -> list[Resource]:
        return [self.resource] if self.users is None else [self.resource, self.users]


def _delete_sqlite(path: str, invisible: Ids) -> None:
    connection = sqlite3.connect(path)  # foreign keys are not enforced on a plain connection
    try:
        for name, ids in invisible.items():
            if ids:
                marks = ",".join("?" for _ in ids)
                connection.execute(f"DELETE FROM {TABLES[name]} WHERE id IN ({marks})", sorted(ids))
        connection.commit()
    finally:
        connection.close()


def _delete_mariadb(url: str, invisible: Ids) -> None:
    with contextlib.closing(mariadb_connection(url)) as connection, connection.cursor() as cursor:
        cursor.execute("SET SESSION foreign_key_checks = 0")  # keys left dangling, as on PostgreSQL
        for name, ids in invisible.items():
            if ids:
                marks = ",".join("%s" for _ in ids)
                cursor.execute(f"DELETE FROM {TABLES[name]} WHERE id IN ({marks})", sorted(ids))


async def _delete_postgres(url: str, invisible: Ids) -> None:
    connection = await asyncpg.connect(url, statement_cache_size=0)
    try:
        async with connection.transaction():
            # Foreign keys left dangling, as a deleted row leaves the keys that point to it.
            await connection.execute("SET LOCAL session_replication_role = replica")
            for name, ids in invisible.items():
                await connection.execute(f"DELETE FROM {TABLES[name]} WHERE id = ANY($1::bigint[])", sorted(ids))
    finally:
        await connection.close()


@asynccontextmanager
async def sqlalchemy_store(database: str, name: str, invisible: Ids | None) -> AsyncIterator[Store]:
    """``things`` on SQLAlchemy over a database ``name`` holding the fixture without ``invisible`` (None: all)."""
    server = server_target_url(database, name)
    path = str(scratch_folder(name) / "twin.sqlite")
    engine = create_async_engine(async_url(server) if server else f"sqlite+aiosqlite:///{path}")
    prepare_engine(engine)
    await write_sqlalchemy_rows(engine)
    if invisible is not None and database == "mariadb" and server:
        _delete_mariadb(server, invisible)
    elif invisible is not None and server:
        await _delete_postgres(server, invisible)
    elif invisible is not None:
        _delete_sqlite(path, invisible)
    config = SQLAlchemyAsyncConfig(engine_instance=engine)
    reports, owner_reports = sqlalchemy_values()
    things = sqlalchemy_backend("things", config=config, computed={"owner_reports": owner_reports})
    users = SQLAlchemyBackend(User, config=config, computed={"reports": reports})
    try:
        yield Store(listed(things, document=False), [SQLAlchemyPlugin(config)], listed_users(users, document=False))
    finally:
        await engine.dispose()


@asynccontextmanager
async def piccolo_store(database: str, name: str, invisible: Ids | None) -> AsyncIterator[Store]:
    """``things`` on Piccolo over a database ``name`` holding the fixture without ``invisible`` (None: all)."""
    engine = piccolo_engine(database, name)
    await write_piccolo_rows(engine)
    postgres = postgres_target_url(database, name)
    if invisible is not None and postgres:
        await _delete_postgres(postgres, invisible)
    elif invisible is not None and isinstance(engine, SQLiteEngine):
        _delete_sqlite(engine.path, invisible)
    prepare_piccolo_engine(engine)
    pooled = engine if isinstance(engine, PostgresEngine) else None
    if pooled is not None:
        await pooled.start_connection_pool()
    reports, owner_reports = piccolo_values()
    things = piccolo_backend("things", engine=engine, computed={"owner_reports": (owner_reports, Integer())})
    users = PiccoloBackend(piccolo_tables.User, engine=engine, computed={"reports": (reports, Integer())})
    try:
        yield Store(listed(things, document=False), users=listed_users(users, document=False))
    finally:
        if pooled is not None:
            await pooled.close_connection_pool()


def _member_of(ids: frozenset[int]) -> Callable[[Mapping[str, Any]], bool]:
    return lambda row: row["id"] in ids


def memory_store(visible: Ids | None) -> Store:
    rows = memory_rows()
    if visible is not None:
        rules = {name: _member_of(ids) for name, ids in visible.items()}
        rows = [row for row in (pruned(row, "Thing", rules) for row in rows) if row is not None]
    backend = MemoryBackend(
        model_graph(Thing), rows, computed={"part_count": PART_COUNT}, values={"part_count": count_parts}
    )
    return Store(listed(backend, document=False))


# ---------------------------------------------------------------- the scene: clients of every side
@dataclasses.dataclass
class Scene:
    """The policed application over the full data, and the unpoliced twins, one per user and policy set."""

    target: Target
    document: bool
    things: Resource
    users: bool
    policed: dict[str, httpx.AsyncClient]
    twins: dict[tuple[str, str], httpx.AsyncClient]
    beanie_hidden: dict[tuple[str, str], Ids] = dataclasses.field(default_factory=dict)
    tally: Tally = dataclasses.field(default_factory=Tally)

    @property
    def viewers(self) -> list[tuple[str, str]]:
        """(policy set, user) pairs: each company's user and one without a company per set, the administrator once."""
        sets = list(self.policed)
        users = ["none" if company is None else str(company) for company in COMPANY_IDS]
        return [(policy_set, user) for policy_set in sets for user in users] + [(sets[0], ADMIN)]

    async def check_counted(self) -> None:
        """The ``things`` requests whose total is read with their page, for every viewer."""
        for query in COUNTED_QUERIES:
            await self.check(query)

    async def check_users(self) -> None:
        """The ``users`` requests for every viewer: the self-referential ``reports`` and its order."""
        for query in USER_QUERIES:
            await self.compare(f"/api/v1/users/?{query}")

    async def answer(self, client: httpx.AsyncClient, url: str, user: str) -> list[tuple[object, ...]]:
        """GET and HEAD of ``url`` and of the pages its cursor leads to (three at most), as ``user``."""
        answers: list[tuple[object, ...]] = []
        for _ in range(3):
            got = await client.get(url, headers={"x-user": user})
            headed = await client.head(url, headers={"x-user": user})
            answers.append((got.status_code, _headers(got), got.content))
            answers.append((headed.status_code, _headers(headed), headed.content))
            if got.status_code == 200 and "/facets/" in url:
                self.tally.facets_answered += 1
            elif got.status_code == 200:
                self.tally.rows_seen += len(got.json()["data"])
            link = got.headers.get("link")
            if link is None:
                break
            url = link[link.index("/api/") : link.index(">")]
        return answers

    async def check(self, query: str) -> None:
        """``query`` as a list and, where the backend counts facets, as a facet request of every facet."""
        self.tally.queries += 1
        await self.compare(f"/api/v1/things/?{query}")
        facets = self.things.facet_fields
        if facets:
            # The list's own parameters and two facets (more would pass the ceiling), few values (so that
            # distinct counts what is cut), both modes; which facets and which mode follow the query's hash.
            chosen = zlib.crc32(query.encode())
            two = (facets[chosen % len(facets)], facets[(chosen + 1) % len(facets)])
            mode = "conjunctive" if chosen % 3 == 0 else "disjunctive"
            asked = urlencode({"facet": ",".join(two), "facet_limit": 3, "facet_mode": mode})
            await self.compare(f"/api/v1/things/facets/?{query}&{asked}")
            self.tally.facet_requests += 1

    async def compare(self, url: str) -> None:
        """``url`` for every viewer, policed on the full data and unpoliced on its twin: the same answers."""
        for policy_set, user in self.viewers:
            full = await self.answer(self.policed[policy_set], url, user)
            twin = self.twins[policy_set, user]
            hidden = self.beanie_hidden.get((policy_set, user))
            async with _documents_deleted(hidden):
                expected = await self.answer(twin, url, ADMIN)
            self.tally.answers += 1
            where = f"{self.target.id}: {url} as {user} under the {policy_set} policies"
            assert full == expected, f"{where}: answered {full}, with the invisible rows deleted {expected}"


@asynccontextmanager
async def _documents_deleted(hidden: Ids | None) -> AsyncIterator[None]:
    """Beanie's twin: its documents are bound to one database, so the invisible ones leave it for a while."""
    if hidden is None:
        yield
        return
    classes = {cls.__name__: cls for cls in beanie_documents.DOCUMENTS}
    kept: list[tuple[Any, list[Any]]] = []
    for name, ids in hidden.items():
        collection = classes[name].get_pymongo_collection()
        documents = [document async for document in collection.find({"_id": {"$in": sorted(ids)}})]
        if documents:
            await collection.delete_many({"_id": {"$in": sorted(ids)}})
            kept.append((collection, documents))
    try:
        yield
    finally:
        for collection, documents in kept:
            await collection.insert_many(documents)


CEILING = 40.0
"""The things resource's ``max_cost``: some generated requests cost more (a search, relation orders, deep pages)."""
BUDGET = CostBudget(units=1e9, window="day")
"""A budget no run spends: every answer carries its ``RateLimit-*`` headers, alike request after request."""
HISTORY_HEADERS = frozenset({"x-listing-wait", "ratelimit-reset", "ratelimit-remaining"})
"""Headers whose value depends on the clock or on the client's earlier requests (seconds waited, seconds until
the window ends, units left), compared for presence only; what each list is charged, ``X-Listing-Cost``, is
compared."""


def _headers(response: httpx.Response) -> list[tuple[str, str]]:
    """Every header of ``response``, sorted; the value of one of ``HISTORY_HEADERS`` as ``"<history>"``."""
    return sorted(
        (name, "<history>" if name in HISTORY_HEADERS else value) for name, value in response.headers.multi_items()
    )


def _app(store: Store, policies: list[RowPolicy] | None = None) -> Litestar:
    plugin = ListingPlugin(store.resources, policies=policies or [], max_concurrent_lists=4, budget=BUDGET)
    return Litestar(plugins=[*store.plugins, plugin], middleware=[user_from_header(_user_named)])


@asynccontextmanager
async def scene_of(target: Target) -> AsyncIterator[Scene]:
    """The clients of the property on ``target``: each store opened, each application started."""
    backend = target.id.split(":", 1)[0]
    database = target.id.split(":", 1)[1] if ":" in target.id else ""
    document = target.resources["things"].backend.capabilities.filter_syntax is FilterSyntax.DOCUMENT
    sets = ["direct", *(["inherited"] if target.resources["things"].backend.capabilities.inherited_policies else [])]
    async with AsyncExitStack() as stack:

        async def store(name: str, invisible: Ids | None, visible: Ids | None) -> Store:
            if backend == "sqlalchemy":
                return await stack.enter_async_context(sqlalchemy_store(database, name, invisible))
            if backend == "piccolo":
                return await stack.enter_async_context(piccolo_store(database, name, invisible))
            if backend == "beanie":
                users = listed_users(beanie_backends().users, document=True)
                return Store(listed(beanie_backend("things"), document=True), users=users)
            return memory_store(visible)

        async def client(app: Litestar) -> httpx.AsyncClient:
            # The application's start and end on this loop, where the stores' connections live.
            await stack.enter_async_context(app.lifespan())
            transport = httpx.ASGITransport(app=cast("Any", app))
            return await stack.enter_async_context(httpx.AsyncClient(transport=transport, base_url=BASE_URL))

        full = await store(f"{HOSTILE_DATABASE}_{backend}_full", None, None)
        scene = Scene(target, document, full.resource, full.users is not None, {}, {})
        scene.policed = {policy_set: await client(_app(full, row_policies(policy_set))) for policy_set in sets}
        scene.twins[sets[0], ADMIN] = await client(_app(full))
        for policy_set in sets:
            for company in COMPANY_IDS:
                user = "none" if company is None else str(company)
                visible = visible_ids(policy_set, company)
                invisible = invisible_ids(visible)
                if backend == "beanie":
                    scene.twins[policy_set, user] = scene.twins[sets[0], ADMIN]
                    scene.beanie_hidden[policy_set, user] = invisible
                    continue
                twin = await store(f"{HOSTILE_DATABASE}_{backend}_{policy_set}_{user}", invisible, visible)
                scene.twins[policy_set, user] = await client(_app(twin))
        yield scene


def test_every_readable_part_of_an_answer_ignores_invisible_rows(
    opened: Opened, every_path_indexed: list[SearchForm]
) -> None:
    target = opened.target
    if not target.resources["things"].backend.capabilities.row_policies:
        return
    loop = opened.loop

    async def run() -> Scene:
        # The applications start and stop in this task (their lifespans hold cancel scopes); the
        # property's examples come from a thread of their own and run on this loop meanwhile.
        async with scene_of(target) as scene:
            domain = Domain.of(prepare(scene.things).field_map, memory_rows())

            @profile()
            @given(query=hostile_queries(domain, document=scene.document))
            def isolated(query: str) -> None:
                asyncio.run_coroutine_threadsafe(scene.check(query), loop).result()

            await asyncio.to_thread(isolated)
            await scene.check_counted()
            if scene.users:
                await scene.check_users()
            return scene

    scene = loop.run_until_complete(run())
    tally = scene.tally
    summary = tally.summary(target, answers=" (GET and HEAD, up to three pages each)")
    assert tally.queries >= profile().max_examples, summary
    assert tally.rows_seen > tally.queries, summary
    # Every request was compared as a facet request too where the backend counts facets.
    counts_facets = target.resources["things"].backend.capabilities.facets
    assert tally.facet_requests == (tally.queries if counts_facets else 0), summary
    # Most were answered, not refused: the counts themselves were compared (as each viewer).
    assert tally.facets_answered >= tally.facet_requests, summary
    # The searches read from their candidates were compared too, on the database that reads them.
    assert (SearchForm.CANDIDATES in every_path_indexed) is reads_candidates(target), every_path_indexed


def test_the_counted_queries_read_their_total_with_the_page() -> None:
    # Under the ceiling, asked for a total in the page, and with a page that does not tell the total
    # (on the memory oracle, for the administrator: every row), so the property compares that total.
    resource = listed(memory_target().resources["things"].backend, document=False)
    prepared = prepare(resource)
    for query in COUNTED_QUERIES:
        parsed, _ = prepared.parse_priced(parse_qsl(query))
        assert counts_with_page(parsed, prepared.field_map), query
        page = asyncio.run(resource.backend.fetch(parsed, ListContext()))
        assert page.items, query
        assert parsed.total_from_page(len(page.items)) is None, query


# ---------------------------------------------------------------- estimated totals
ESTIMATED_QUERY = "name__ilike=a&count=2"


def _names_with_a(company: int | None) -> int:
    """Hand count: the things of ``company`` (None: every company) whose name holds an ``a``, case folded."""
    return sum(1 for row in THINGS if row[1] is not None and "a" in row[1].lower() and company in (None, row[13]))


async def _add_rows_only_others_see(url: str) -> None:
    """3,000 things of company 2 named ``banana``, and fresh statistics: rows company 1 may not see."""
    connection = await asyncpg.connect(url, statement_cache_size=0)
    try:
        await connection.execute(
            "INSERT INTO things (id, name, created_at, company_id) "
            "SELECT 1000 + n, 'banana', now(), 2 FROM generate_series(1, 3000) AS n"
        )
        await connection.execute("ANALYZE things")
    finally:
        await connection.close()


def test_estimated_totals_never_depend_on_invisible_rows(opened: Opened) -> None:
    """As a tenant, an estimated total is counted exactly: another tenant's rows and statistics change nothing."""
    target = opened.target
    backend, _, database = target.id.partition(":")
    if database != "postgresql" or backend not in {"sqlalchemy", "piccolo"}:
        return
    opener = sqlalchemy_store if backend == "sqlalchemy" else piccolo_store
    name = f"{HOSTILE_DATABASE}_{backend}_estimates"

    async def run() -> None:
        async with opener(database, name, None) as store:
            estimated = dataclasses.replace(store.resource, total_mode="estimated", exact_total_below=0)
            app = _app(dataclasses.replace(store, resource=estimated), row_policies("direct"))
            async with (
                app.lifespan(),
                httpx.AsyncClient(transport=httpx.ASGITransport(app=cast("Any", app)), base_url=BASE_URL) as client,
            ):

                async def answer(user: str) -> httpx.Response:
                    response = await client.get(f"/api/v1/things/?{ESTIMATED_QUERY}", headers={"x-user": user})
                    assert response.status_code == 200, response.text
                    return response

                before = await answer("1")
                assert before.headers["x-total-mode"] == "exact"
                assert before.json()["pagination"]["total"] == _names_with_a(1)
                url = postgres_target_url(database, name)
                assert url is not None
                await _add_rows_only_others_see(url)
                after = await answer("1")
                assert (after.status_code, _headers(after), after.content) == (
                    before.status_code,
                    _headers(before),
                    before.content,
                )
                # Where every row is visible, the planner's estimate stands (and sees the new rows).
                everything = await answer(ADMIN)
                assert everything.headers["x-total-mode"] == "estimated"
                assert everything.json()["pagination"]["total"] > _names_with_a(None)

    opened.loop.run_until_complete(run())
