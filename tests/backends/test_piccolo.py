"""The Piccolo backend's own traps: engine choice, SQLite connections, configuration errors.

The query semantics are the conformance table's business; this file covers what only Piccolo has.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qsl

import asyncpg
import pytest
from piccolo.engine.postgres import PostgresEngine
from piccolo.engine.sqlite import SQLiteEngine
from piccolo.querystring import QueryString
from piccolo.table import create_db_tables

from litestar_listing import ConfigurationError, ListContext, Resource
from litestar_listing.backends.piccolo import FoldingConnection, PiccoloBackend, prepare_engine
from litestar_listing.backends.piccolo.compiler import render_condition
from litestar_listing.plugin.prepared import prepare
from tests.conformance import piccolo_tables
from tests.conformance.piccolo_tables import Part, Tag, Thing, User
from tests.conformance.targets import write_piccolo_rows
from tests.conftest import postgres_database_url, scratch_folder
from tests.matrix import selected

pytestmark = pytest.mark.skipif(not selected(backend="piccolo"), reason="the Piccolo backend is not selected")


def _sqlite_engine(name: str) -> SQLiteEngine:
    return SQLiteEngine(path=str(scratch_folder("listing-piccolo") / f"{name}.sqlite"))


async def test_each_backend_runs_on_its_own_engine_in_one_process() -> None:
    # Piccolo resolves a table's engine once per process (piccolo_conf); two resources over the same
    # tables on two databases must still each read their own.
    full, empty = _sqlite_engine("full"), _sqlite_engine("empty")
    await write_piccolo_rows(full)
    with piccolo_tables.bound(empty):
        await create_db_tables(*piccolo_tables.TABLES)
    resources = [Resource(name, PiccoloBackend(Thing, engine=engine)) for name, engine in (("a", full), ("b", empty))]
    totals = []
    for resource in (*resources, *resources):
        prepare(resource)
        page = await resource.backend.fetch(prepare(resource).parser.parse([], []), ListContext())
        totals.append(page.total)
    assert totals == [31, 0, 31, 0]


async def test_the_engine_of_a_call_wins() -> None:
    full, empty = _sqlite_engine("full"), _sqlite_engine("empty")
    await write_piccolo_rows(full)
    with piccolo_tables.bound(empty):
        await create_db_tables(*piccolo_tables.TABLES)
    resource = Resource("things", PiccoloBackend(Thing, engine=empty))
    prepare(resource)
    page = await resource.backend.fetch(prepare(resource).parser.parse([], []), ListContext(session=full))
    assert page.total == 31


def test_sqlite_connections_fold_unicode_case() -> None:
    engine = _sqlite_engine("fold")
    prepare_engine(engine)
    prepare_engine(engine)  # idempotent
    connection = sqlite3.connect(**engine.connection_kwargs)
    try:
        assert connection.execute("SELECT listing_fold('ÁLBUM Ω')").fetchone() == ("álbum ω",)
    finally:
        connection.close()


def test_a_foreign_connection_factory_is_refused() -> None:
    engine = _sqlite_engine("factory")
    engine.connection_kwargs["factory"] = sqlite3.Connection
    with pytest.raises(ConfigurationError, match="FoldingConnection"):
        prepare_engine(engine)


def test_a_subclass_of_the_folding_connection_is_kept() -> None:
    class Custom(FoldingConnection):
        pass

    engine = _sqlite_engine("custom")
    engine.connection_kwargs["factory"] = Custom
    prepare_engine(engine)
    assert engine.connection_kwargs["factory"] is Custom


def test_without_any_engine_the_app_does_not_start() -> None:
    # No engine= and no piccolo_conf on the path: Piccolo cannot find one, and says so at startup.
    with pytest.raises(ConfigurationError, match="engine"):
        PiccoloBackend(Tag).prepare()


def test_only_sqlite_and_postgresql_are_supported() -> None:
    engine: Any = SimpleNamespace(engine_type="cockroach")
    with pytest.raises(ConfigurationError, match=r"PiccoloBackend runs on postgresql, sqlite, not 'cockroach'"):
        PiccoloBackend(Tag, engine=engine).prepare()


@pytest.mark.parametrize(
    ("reverse", "message"),
    [
        ({"parts": Part}, "must be given as a ForeignKey"),
        ({"name": Part.thing}, "collides with Thing.name"),
        ({"tags": Part.thing}, "collides with Thing.tags"),
    ],
)
def test_bad_reverse_relations_are_configuration_errors(reverse: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        PiccoloBackend(Thing, reverse=reverse)


async def test_loading_a_missing_relation_is_a_configuration_error() -> None:
    engine = _sqlite_engine("load")
    resource = Resource("users", PiccoloBackend(User, engine=engine))
    prepare(resource)
    with pytest.raises(ConfigurationError, match="User has no relation 'things'"):
        await resource.backend.fetch(prepare(resource).parser.parse([], []), ListContext(load=("things",)))


def test_conditions_render_without_an_engine() -> None:
    # Rendering Piccolo's own Where would ask Table._meta.db, i.e. piccolo_conf; ours does not.
    condition = Thing.deleted_at.is_null() & (Thing.owner.name == "Alice")
    rendered = render_condition(condition)
    assert rendered.compile_string("postgres") == (
        '("things"."deleted_at" IS NULL AND "things$owner"."name" = $1)',
        ["Alice"],
    )
    assert [column._meta.name for column in rendered.columns] == ["deleted_at", "name"]
    assert render_condition(QueryString("1 = 1")).compile_string("sqlite") == ("1 = 1", [])
    with pytest.raises(TypeError, match="Piccolo condition"):
        render_condition("deleted_at IS NULL")


@pytest.mark.parametrize(
    ("query", "ids"),
    [
        # Manager chains of the fixture: Frank -> Carol -> Bob -> Alice; Eve, Zoë -> Dave; alice -> Alice.
        ("reports__name=Bob", [1]),
        ("reports__name__in=Eve,Carol", [2, 4]),
        ("reports__reports__name=Carol", [1]),
        ("reports__id__isnull=false", [1, 2, 3, 4]),
        ("reports__name__istartswith=ALICE", [1]),  # alice reports to Alice
        ("manager__reports__name=Zoë", [5, 7]),
    ],
)
async def test_a_self_referencing_to_many_relation(query: str, ids: list[int]) -> None:
    # The reason to-many paths are semi-joins: "users" inside a subquery of a "users" query.
    engine = _sqlite_engine("reports")
    await write_piccolo_rows(engine)
    resource = Resource(
        "users",
        PiccoloBackend(User, engine=engine, reverse={"reports": User.manager}),
        filter_fields=("*", "reports__id", "reports__name", "reports__reports__name", "manager__reports__name"),
        default_order=("id",),
    )
    prepare(resource)
    page = await resource.backend.fetch(prepare(resource).parser.parse(parse_qsl(query), []), ListContext())
    assert [item["id"] for item in page.items] == ids
    assert page.total == len(ids)


class _Counted(FoldingConnection):
    opened = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        type(self).opened += 1


async def _total(resource: Resource) -> int:
    page = await resource.backend.fetch(prepare(resource).parser.parse([], []), ListContext())
    assert page.total is not None
    return page.total


async def test_sqlite_lists_share_pooled_connections() -> None:
    # Piccolo alone opens a connection (and aiosqlite a thread) per list; the read pool opens one
    # for any number of lists one after the other.
    engine = _sqlite_engine("pooled")
    await write_piccolo_rows(engine)
    engine.connection_kwargs["factory"] = _Counted
    resource = Resource("things", PiccoloBackend(Thing, engine=engine))
    prepare(resource)
    assert [await _total(resource) for _ in range(5)] == [31] * 5
    assert _Counted.opened == 1


async def test_a_replaced_sqlite_file_is_read_afresh() -> None:
    # A pooled connection keeps the file it opened; once another file takes its path, lists read
    # the new one (here: empty tables).
    engine, empty = _sqlite_engine("replaced"), _sqlite_engine("replacement")
    await write_piccolo_rows(engine)
    with piccolo_tables.bound(empty):
        await create_db_tables(*piccolo_tables.TABLES)
    resource = Resource("things", PiccoloBackend(Thing, engine=engine))
    prepare(resource)
    assert await _total(resource) == 31
    Path(empty.path).replace(engine.path)  # noqa: ASYNC240 - a test's file move
    assert await _total(resource) == 0


async def test_on_postgresql_the_count_runs_on_a_second_pooled_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    # Outside a transaction, with the pool idle, the count runs beside the page on another connection;
    # with a connection lent elsewhere, more than half of the pool would be in use: the count runs
    # after the page on its connection; inside engine.transaction() everything runs on the
    # transaction's.
    if not selected(backend="piccolo", database="postgresql"):
        pytest.skip("Piccolo on PostgreSQL is not selected")
    engine = PostgresEngine(config={"dsn": postgres_database_url("listing_piccolo_apart")}, extensions=())
    await write_piccolo_rows(engine)
    await engine.start_connection_pool(min_size=4, max_size=4)
    try:
        resource = Resource("things", PiccoloBackend(Thing, engine=engine))
        prepare(resource)
        acquired = 0
        acquire = asyncpg.Pool.acquire

        def counted(pool: asyncpg.Pool, *args: Any, **kwargs: Any) -> Any:
            nonlocal acquired
            acquired += 1
            return acquire(pool, *args, **kwargs)

        monkeypatch.setattr(asyncpg.Pool, "acquire", counted)
        query = prepare(resource).parser.parse([("count", "5")], [])
        page = await resource.backend.fetch(query, ListContext())
        assert (page.total, acquired) == (31, 2)
        pool = engine.pool
        assert pool is not None
        elsewhere = await acquire(pool)
        try:
            page = await resource.backend.fetch(query, ListContext())
        finally:
            await pool.release(elsewhere)
        assert (page.total, acquired) == (31, 3)  # 1 + 2 of 4 in use: the page's connection alone
        async with engine.transaction():
            page = await resource.backend.fetch(query, ListContext())
        assert (page.total, acquired) == (31, 4)  # the transaction's own connection, and no other
    finally:
        await engine.close_connection_pool()
