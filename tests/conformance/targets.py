"""The conformance resources, and how each backend of ``tests/matrix.py`` opens them on a database.

``open_target(target)`` is the one way to load the fixture on a registry entry; ``OPENERS`` maps each
backend to its opener, so a new database of a known backend needs no change here. ``target_fixture``
makes the module-scoped ``target`` fixture of a test module from it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
import sqlite3
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, closing
from dataclasses import dataclass
from typing import Any

import pytest
from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig
from litestar import Litestar
from piccolo.columns import Integer
from piccolo.engine.base import Engine
from piccolo.engine.postgres import PostgresEngine
from piccolo.engine.sqlite import SQLiteEngine
from piccolo.querystring import QueryString
from piccolo.table import create_db_tables, drop_db_tables
from sqlalchemy import Table as SQLAlchemyTable
from sqlalchemy import func, insert, select, text
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine

from docs.examples.guide import pooling
from litestar_listing import Computed, ListContext, ListingBackend, MemoryBackend, Resource
from litestar_listing.backends.base import Capabilities
from litestar_listing.backends.beanie import BeanieBackend, link_id
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.relational import execution
from litestar_listing.backends.relational.compiler import SearchForm
from litestar_listing.backends.relational.databases import DATABASES
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend, model_graph, prepare_engine
from litestar_listing.core.schema import FieldInfo, ValueType
from tests.apps import serving
from tests.conformance import beanie_documents, piccolo_tables
from tests.conformance.fixture import DELETED_IDS, dangling_rows, memory_rows, table_rows
from tests.conformance.models import ConformanceBase, Part, Thing
from tests.conftest import (
    async_url,
    document_store,
    mariadb_database_url,
    node_database_url,
    postgres_database_url,
    scratch_folder,
)
from tests.matrix import TestTarget
from tests.nodes import caught_up

THINGS_OPTIONS: Mapping[str, Any] = {
    "filter_fields": (
        "*",
        "owner__*",
        "reviewer__*",
        "company__*",
        "owner__role__*",
        "owner__manager__*",
        "owner__manager__role__code",
        "tags__name",
        "parts__name",
        "parts__quantity",
        "parts__supplier__name",
    ),
    "order_fields": ("*", "owner__name", "owner__role__code", "reviewer__name", "company__name"),
    "search_fields": ("name", "note", "owner__name", "tags__name"),
    "default_order": ("-created_at",),
}
RESOURCES = {"things": "and", "things_or": "or", "things_live": "and", "things_capped": "and"}
CEILINGS = {"things_capped": 40.0}
"""The ``max_cost`` of the resources that have one (docs: admission, "The ceiling")."""
PART_COUNT = FieldInfo("part_count", ValueType.INTEGER, nullable=False, computed=True, reads=("Part",))
"""The computed ``part_count``: on every target a ``Computed`` value counting the parts the Part policy lets through."""


def count_parts(row: Mapping[str, Any]) -> int:
    """The memory oracle of ``part_count``: the parts of ``row`` as the policies let it be seen."""
    return len(row["parts"])


# Prefixes of the capability names the case table writes (``op:ilike``, ``syntax:document``).
_CAPABILITY_PREFIXES = {"operators": "op", "filter_syntax": "syntax", "parts": "part"}


def capability_names(capabilities: Capabilities) -> frozenset[str]:
    """Every field of ``capabilities`` as names a case's ``needs`` can hold.

    A true flag is its field name (``keyset``); a set gives ``<prefix>:<item>`` for each item
    (``op:ilike``); an enum gives ``<prefix>:<value>`` (``syntax:relational``). The prefix is the
    field name unless ``_CAPABILITY_PREFIXES`` shortens it.

    Raises:
        TypeError: A field of a kind this function does not know: a new capability must be nameable.
    """
    names: set[str] = set()
    for item in dataclasses.fields(capabilities):
        value = getattr(capabilities, item.name)
        prefix = _CAPABILITY_PREFIXES.get(item.name, item.name)
        if isinstance(value, bool):
            if value:
                names.add(item.name)
        elif isinstance(value, enum.Enum):
            names.add(f"{prefix}:{value.value}")
        elif isinstance(value, frozenset):
            names.update(f"{prefix}:{member}" for member in value)
        else:
            msg = f"Capabilities.{item.name} ({type(value).__name__}) has no capability name"
            raise TypeError(msg)
    return frozenset(names)


@dataclass
class Target:
    """One backend on one database with the conformance data loaded.

    Attributes:
        postgres_url: A plain ``postgresql://`` URL of its PostgreSQL database, for SQL by hand (through
            pgbouncer on that target: connect with ``statement_cache_size=0``); None on other stores.
        standby_url: The plain URL of the hot standby the lists read, on the ``standby`` targets
            (after writing on ``postgres_url``, wait with ``caught_up``).
    """

    id: str
    resources: dict[str, Resource]
    sessions: Any = None
    engine: Engine[Any] | None = None
    postgres_url: str | None = None
    standby_url: str | None = None

    @property
    def capabilities(self) -> frozenset[str]:
        return capability_names(self.resources["things"].backend.capabilities)

    @functools.cached_property
    def app(self) -> Litestar:
        """An application serving the target's resources, for lists without HTTP (``list_resource(..., app=...)``)."""
        return serving(*self.resources.values())

    @asynccontextmanager
    async def context(self) -> AsyncIterator[ListContext]:
        if self.sessions is None:
            yield ListContext(session=self.engine)
            return
        async with self.sessions() as session:
            yield ListContext(session=session)


THING_JSON_KEYS: Mapping[str, Mapping[str, Any]] = {
    "attributes": {
        "color": str,
        "size": int,
        "ratio": float,
        "fragile": bool,
        "released": dt.date,
        "tags": list[str],
        "dims": {"width": float, "unit": str},
    },
    "company__profile": {"tier": str, "regions": list[str]},
}
"""The declared keys of the JSON fields (``fixture.ATTRIBUTES``, ``fixture.PROFILES``), on backends with
``Capabilities.json_keys``."""


def thing_facets(capabilities: Capabilities, keys: Mapping[str, Any]) -> tuple[str, ...]:
    """The facetable paths of the case table's resources: none where the backend counts no facets.

    Relation paths, the year of ``release_date`` and the JSON keys where the backend offers them.
    """
    if not capabilities.facets:
        return ()
    facets = ["status", "active"]
    if capabilities.relation_paths:
        facets += ["company__name", "owner__name"]
    if capabilities.to_many_paths:
        facets.append("tags__name")
    if "year" in capabilities.parts:
        facets.append("release_date__year")
    if keys:
        facets += ["attributes__color", "attributes__tags"]
    return tuple(facets)


def things_resources(make: Any, shared: Mapping[str, Any] = THINGS_OPTIONS) -> dict[str, Resource]:
    """The case table's resources over ``make(name)``'s backends; ``things_json`` where JSON keys are offered.

    ``things_json`` is ``things`` with ``search`` over two JSON keys besides its own fields.

    Args:
        make: The backend of a resource, by its name.
        shared: The options every resource has (``THINGS_OPTIONS``, ``BEANIE_OPTIONS``).
    """
    resources: dict[str, Resource] = {}
    for name, combine in RESOURCES.items():
        backend = make(name)
        keys = THING_JSON_KEYS if backend.capabilities.json_keys else {}
        options = {**shared, "json_keys": keys, "facet_fields": thing_facets(backend.capabilities, keys)}
        resources[name] = Resource(name, backend, combine=combine, max_cost=CEILINGS.get(name), **options)
        if name == "things" and keys:
            searched = (*shared["search_fields"], "attributes__color", "attributes__tags")
            options["search_fields"] = searched
            resources["things_json"] = Resource("things_json", make(name), **options)
    return resources


def memory_target() -> Target:
    graph = model_graph(Thing)
    rows = memory_rows()

    def make(name: str) -> ListingBackend:
        selected = [row for row in rows if row["id"] not in DELETED_IDS] if name == "things_live" else rows
        return MemoryBackend(graph, selected, computed={"part_count": PART_COUNT}, values={"part_count": count_parts})

    return Target("memory", things_resources(make))


def postgres_target_url(database: str, name: str) -> str | None:
    """The plain URL of PostgreSQL database ``name`` on a target's ``database``; None for SQLite.

    ``pgbouncer``: through the tests' pgbouncer; ``standby``: the tests' primary (written there, read
    on its standby).
    """
    if database in {"pgbouncer", "standby"}:
        return node_database_url(name, "pgbouncer" if database == "pgbouncer" else "primary")
    return postgres_database_url(name) if database == "postgresql" else None


def server_target_url(database: str, name: str) -> str | None:
    """The plain URL of the server database ``name`` on a target's ``database`` (``postgres_target_url``,
    or MariaDB's ``mysql://``); None for SQLite."""
    return mariadb_database_url(name) if database == "mariadb" else postgres_target_url(database, name)


def sqlalchemy_backend(
    name: str,
    replicas: Sequence[AsyncEngine] = (),
    config: SQLAlchemyAsyncConfig | None = None,
    computed: Mapping[str, Any] | None = None,
) -> ListingBackend:
    """``things`` on SQLAlchemy with ``part_count``, and ``computed``'s values besides."""
    part_count = Computed(
        lambda allowed: (
            select(func.count(Part.id))
            .where(Part.thing_id == Thing.id, allowed(Part))
            .correlate(Thing)
            .scalar_subquery()
        ),
        reads=(Part,),
    )
    live = (lambda statement: statement.where(Thing.deleted_at.is_(None))) if name == "things_live" else None
    values = {"part_count": part_count, **(computed or {})}
    return SQLAlchemyBackend(Thing, config=config, statement=live, computed=values, replicas=replicas)


async def write_sqlalchemy_rows(engine: AsyncEngine) -> None:
    """Create the conformance tables anew with SQLAlchemy and insert the fixture rows.

    Some rows refer to a missing row (``fixture.MISSING``): SQLite's foreign keys are off on
    SQLAlchemy's connections, and PostgreSQL's and MariaDB's are not checked while the rows are written.
    """
    async with engine.begin() as connection:
        if connection.dialect.name == "mysql":
            await connection.execute(text("SET SESSION foreign_key_checks = 0"))
        await connection.run_sync(ConformanceBase.metadata.drop_all)
        await connection.run_sync(ConformanceBase.metadata.create_all)
        if connection.dialect.name == "postgresql":
            await connection.execute(text(UNCHECKED_FOREIGN_KEYS))
        for table, rows in table_rows():
            if rows:
                await connection.execute(insert(table), rows)


@asynccontextmanager
async def sqlalchemy_target(database: str, name: str = "litestar_listing_conformance") -> AsyncIterator[Target]:
    """The fixture on SQLAlchemy: a fresh SQLite file, or the PostgreSQL or MariaDB database ``name``."""
    postgres = postgres_target_url(database, name)
    server = server_target_url(database, name)
    if server is None:
        engine = create_async_engine(f"sqlite+aiosqlite:///{scratch_folder(name) / 'conformance.sqlite'}")
    else:
        url = async_url(server)
        engine = pooling.sqlalchemy_engine(url) if database == "pgbouncer" else create_async_engine(url)
    # On the standby target the rows are written on the primary and every list reads the standby.
    standby = node_database_url(name, "standby") if database == "standby" else None
    replicas = [create_async_engine(async_url(standby))] if standby else []
    prepare_engine(engine)
    try:
        await write_sqlalchemy_rows(engine)
        if postgres and standby:
            await caught_up(postgres, standby)
        sessions = async_sessionmaker(engine)
        resources = things_resources(functools.partial(sqlalchemy_backend, replicas=replicas))
        yield Target(f"sqlalchemy:{database}", resources, sessions, postgres_url=postgres, standby_url=standby)
    finally:
        await engine.dispose()
        for replica in replicas:
            await replica.dispose()


def piccolo_backend(
    name: str,
    engine: Engine[Any] | None = None,
    replicas: Sequence[str] = (),
    computed: Mapping[str, Any] | None = None,
) -> ListingBackend:
    """``things`` on Piccolo with ``part_count``, and ``computed``'s values besides (``(expression, column)``)."""
    thing = piccolo_tables.Thing
    part_count = Computed(
        lambda allowed: QueryString(
            '(SELECT COUNT(*) FROM "parts" WHERE "parts"."thing_id" = {} AND {})',
            thing.id,
            allowed(piccolo_tables.Part),
        ),
        reads=(piccolo_tables.Part,),
    )
    return PiccoloBackend(
        thing,
        engine=engine,
        where=thing.deleted_at.is_null() if name == "things_live" else None,
        computed={"part_count": (part_count, Integer()), **(computed or {})},
        reverse={"parts": piccolo_tables.Part.thing},
        replicas=replicas,
    )


def piccolo_engine(database: str, name: str) -> Engine[Any]:
    """A Piccolo engine on a fresh SQLite file or on the PostgreSQL database ``name``."""
    postgres = postgres_target_url(database, name)
    if postgres is None:
        return SQLiteEngine(path=str(scratch_folder(name) / f"{name}.sqlite"))
    if database == "pgbouncer":
        return pooling.piccolo_engine(postgres)
    return PostgresEngine(config={"dsn": postgres}, extensions=())


async def write_piccolo_rows(engine: Engine[Any]) -> None:
    """Create the conformance tables with Piccolo and write the fixture rows through Piccolo's queries.

    The rows that refer to a missing row (``fixture.MISSING``) go last, with the foreign-key checks
    off: on PostgreSQL through Piccolo in a transaction that does not check them, on SQLite (where
    Piccolo turns them on for every connection) through a plain ``sqlite3`` connection.
    """
    with piccolo_tables.bound(engine):
        await drop_db_tables(*reversed(piccolo_tables.TABLES))
        await create_db_tables(*piccolo_tables.TABLES)
        for sqlalchemy_table, rows in table_rows(dangling=False):
            await _insert_piccolo(sqlalchemy_table, rows)
        if isinstance(engine, SQLiteEngine):
            with closing(sqlite3.connect(engine.path)) as connection, connection:
                for table, rows in dangling_rows():
                    names = list(rows[0])
                    marks = ", ".join("?" for _ in names)
                    insert_rows = f"INSERT INTO {table.name} ({', '.join(names)}) VALUES ({marks})"
                    connection.executemany(insert_rows, [tuple(row.values()) for row in rows])
            return
        async with engine.transaction():
            await piccolo_tables.Company.raw(UNCHECKED_FOREIGN_KEYS)
            for sqlalchemy_table, rows in dangling_rows():
                await _insert_piccolo(sqlalchemy_table, rows)


UNCHECKED_FOREIGN_KEYS = "SET LOCAL session_replication_role = replica"
"""PostgreSQL: no foreign-key checks until the transaction ends (as the superuser the tests connect as)."""


async def _insert_piccolo(sqlalchemy_table: SQLAlchemyTable, rows: Sequence[Mapping[str, Any]]) -> None:
    """``rows`` of the conformance table ``sqlalchemy_table`` inserted by its Piccolo table."""
    table = next(table for table in piccolo_tables.TABLES if table._meta.tablename == sqlalchemy_table.name)
    attributes = {column._meta.db_column_name: column._meta.name for column in table._meta.columns}
    instances = [
        table(**{attributes[key]: getattr(value, "value", value) for key, value in row.items()}) for row in rows
    ]
    if instances:
        await table.insert(*instances)


@asynccontextmanager
async def piccolo_target(database: str, name: str = "litestar_listing_conformance") -> AsyncIterator[Target]:
    """The fixture on Piccolo: a fresh SQLite file, or the PostgreSQL database ``<name>_piccolo``.

    A database of its own: its tables have the names of SQLAlchemy's, and both may be open at once.
    """
    name = f"{name}_piccolo"
    engine = piccolo_engine(database, name)
    await write_piccolo_rows(engine)
    postgres = postgres_target_url(database, name)
    # On the standby target the rows are written on the primary and every list reads the standby.
    standby = node_database_url(name, "standby") if database == "standby" else None
    if postgres and standby:
        await caught_up(postgres, standby)
        # Made once the standby has the database: Piccolo asks each engine's server version at once.
        engine.extra_nodes = {"standby": PostgresEngine(config={"dsn": standby}, extensions=())}  # type: ignore[attr-defined]
    engines = [engine, *getattr(engine, "extra_nodes", {}).values()] if isinstance(engine, PostgresEngine) else []
    for one in engines:
        await one.start_connection_pool()
    try:
        make = functools.partial(piccolo_backend, engine=engine, replicas=("standby",) if standby else ())
        resources = things_resources(make)
        yield Target(f"piccolo:{database}", resources, engine=engine, postgres_url=postgres, standby_url=standby)
    finally:
        for one in engines:
            await one.close_connection_pool()


BEANIE_OPTIONS: Mapping[str, Any] = {
    **THINGS_OPTIONS,
    # Document stores filter own fields only (docs: query language, "Document-store resources"); the
    # table's 400 cases need the opt-in error for unknown names instead of the default of ignoring them.
    "filter_fields": ("*",),
    "ignore_unknown_filters": False,
}
# A part's link to its thing is a DBRef, whose $id an expression reads with link_id ($getField): MongoDB's
# documentation refuses "thing.$id" as a foreignField (docs: backends, "MongoDB versions and the test store").
_PARTS_LOOKUP = {
    "$lookup": {
        "from": "parts",
        "let": {"thing": "$_id"},
        "pipeline": [{"$match": {"$expr": {"$eq": [link_id("$thing"), "$$thing"]}}}],
        "as": "part_docs",
    }
}


_PART_COUNT = Computed(
    lambda allowed: {"$size": {"$filter": {"input": "$part_docs", "cond": allowed(beanie_documents.Part)}}},
    reads=(beanie_documents.Part,),
)


def beanie_backend(name: str) -> ListingBackend:
    """The things resources on Beanie: soft delete and the part count come from list pipelines."""
    live = [{"$match": {"deleted_at": None}}] if name == "things_live" else []
    return BeanieBackend(
        beanie_documents.Thing,
        pipeline=[*live, _PARTS_LOOKUP],
        computed={"part_count": (_PART_COUNT, int)},
    )


@asynccontextmanager
async def beanie_target(database: str, name: str = "litestar_listing_conformance") -> AsyncIterator[Target]:
    """The fixture as Beanie documents in the database ``name`` of the document store."""
    async with document_store(database, name, beanie_documents.DOCUMENTS):
        await beanie_documents.write_documents()
        yield Target(f"beanie:{database}", things_resources(beanie_backend, BEANIE_OPTIONS))


@asynccontextmanager
async def _memory(database: str, name: str = "") -> AsyncIterator[Target]:
    yield memory_target()


OPENERS: Mapping[str, Callable[..., AbstractAsyncContextManager[Target]]] = {
    "memory": _memory,
    "sqlalchemy": sqlalchemy_target,
    "piccolo": piccolo_target,
    "beanie": beanie_target,
}
"""Backend -> ``opener(database, name=...)``, the fixture loaded on a fresh database of that name."""


def open_target(target: TestTarget, name: str | None = None) -> AbstractAsyncContextManager[Target]:
    """The conformance resources and data on ``target``; ``name``: the database (each opener's default)."""
    opener = OPENERS[target.backend]
    return opener(target.database) if name is None else opener(target.database, name)


def target_fixture(targets: Sequence[TestTarget], name: str | None = None) -> Any:
    """A module-scoped pytest fixture giving ``open_target(target, name)`` for each of ``targets`` in turn.

    A test module assigns it to the fixture's name: ``target = target_fixture(selected(store=Store.SQL))``;
    its tests take ``target: Target``, with the target's id in theirs.
    """

    @pytest.fixture(scope="module", params=targets, ids=str)
    async def target(request: pytest.FixtureRequest) -> AsyncIterator[Target]:
        async with open_target(request.param, name) as loaded:
            yield loaded

    return target


# ---------------------------------------------------------------- searches read from their candidates
NODES = {"pgbouncer": "postgresql", "standby": "postgresql"}
"""The databases of the node targets."""


def reads_candidates(target: Target) -> bool:
    """Whether ``target``'s database reads a search's candidates (``Database.search_candidates``)."""
    name = target.id.split(":", 1)[-1]
    database = DATABASES.get(NODES.get(name, name))
    return database is not None and database.search_candidates is not None


def forms_chosen(monkeypatch: pytest.MonkeyPatch) -> list[SearchForm]:
    """The forms the searches' probes choose from now on, in order, until ``monkeypatch`` undoes it."""
    chosen: list[SearchForm] = []
    original = execution._search_form

    def recorded(candidates: int, limit: int) -> SearchForm:
        chosen.append(original(candidates, limit))
        return chosen[-1]

    monkeypatch.setattr(execution, "_search_form", recorded)
    return chosen
