"""What an application forgets to set up stops its start, naming the fix; what shows only in a list is logged.

(docs: in your app, "Start-up checks")
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar, get
from litestar.di import NamedDependency
from litestar.params import SkipValidation
from litestar.testing import TestClient
from piccolo.engine.sqlite import SQLiteEngine

from litestar_listing import (
    ConfigurationError,
    ListingPlugin,
    ListQuery,
    ListResult,
    MemoryBackend,
    Resource,
    listing_route,
    provide_page,
    provide_query,
)
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend, read_engine
from tests.conformance import piccolo_tables
from tests.conformance.models import Thing
from tests.conformance.targets import write_piccolo_rows, write_sqlalchemy_rows
from tests.conftest import postgres_database_url, scratch_folder
from tests.matrix import selected
from tests.unit.graph import GRAPH


def start_failure(app: Litestar) -> str:
    """The message of the ``ConfigurationError`` that stops ``app``'s start.

    Litestar's lifespan runs in a task group, which wraps it in exception groups.
    """
    with pytest.raises(Exception) as raised, TestClient(app):  # noqa: PT011 - unwrapped below
        pass
    error: BaseException = raised.value
    while not isinstance(error, ConfigurationError):
        inner: tuple[BaseException, ...] = getattr(error, "exceptions", ())
        assert len(inner) == 1, repr(error)
        error = inner[0]
    return str(error)


@contextmanager
def logged_errors() -> Iterator[list[str]]:
    """The messages the library logs at ERROR meanwhile (its ``litestar_listing`` logger)."""
    messages: list[str] = []

    class Kept(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    logger = logging.getLogger("litestar_listing")
    handler = Kept(logging.ERROR)
    logger.addHandler(handler)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)


def sqlite_config(name: str) -> SQLAlchemyAsyncConfig:
    folder = scratch_folder(f"listing-start-{name}")
    return SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{folder / 'things.sqlite'}")


# ---------------------------------------------------------------- SQLAlchemy: the session maker
def test_a_sqlalchemy_resource_without_advanced_alchemys_plugin_stops_the_start() -> None:
    config = sqlite_config("no-plugin")
    things = Resource("things", SQLAlchemyBackend(Thing, config=config))
    message = start_failure(Litestar(plugins=[ListingPlugin([things])]))
    assert message.startswith("resource 'things': SQLAlchemyBackend(Thing) takes each request's session")
    assert "Litestar(plugins=[SQLAlchemyPlugin(config=config), ListingPlugin(...)])" in message


def test_a_backend_given_another_config_than_the_plugins_stops_the_start() -> None:
    given, other = sqlite_config("given"), sqlite_config("other")
    things = Resource("things", SQLAlchemyBackend(Thing, config=other))
    message = start_failure(Litestar(plugins=[SQLAlchemyPlugin(config=given), ListingPlugin([things])]))
    assert repr(other.session_maker_app_state_key) in message
    assert f"its session makers are [{given.session_maker_app_state_key!r}]" in message
    assert "pass SQLAlchemyBackend the config object given to the plugin" in message


@pytest.mark.parametrize("plugins_first", [True, False], ids=["advanced-alchemy first", "listing first"])
def test_with_advanced_alchemys_plugin_the_app_starts_and_lists(plugins_first: bool) -> None:
    config = sqlite_config(f"with-plugin-{plugins_first}")
    things = Resource("things", SQLAlchemyBackend(Thing, config=config), filter_fields=("id",))

    async def write_rows() -> None:
        await write_sqlalchemy_rows(config.get_engine())

    async def dispose() -> None:
        # advanced-alchemy disposes the engine only of a config whose state key kept its default name.
        await config.get_engine().dispose()
        reads = read_engine(config.get_engine().sync_engine)
        if reads is not None:
            reads.dispose()

    plugins = [SQLAlchemyPlugin(config=config), ListingPlugin([things])]
    app = Litestar(plugins=plugins if plugins_first else plugins[::-1], on_startup=[write_rows], on_shutdown=[dispose])
    with TestClient(app) as client:
        response = client.get("/api/v1/things/?id__in=1,2")
    assert response.status_code == 200, response.text
    assert response.json()["pagination"]["total"] == 2


def test_a_list_of_an_app_that_never_started_says_what_is_missing_and_is_logged() -> None:
    # Requests without the lifespan (the test client outside ``with``): the session maker was
    # never made. Not advanced-alchemy's KeyError, but the error that names the fix, logged.
    config = sqlite_config("never-started")
    things = Resource("things", SQLAlchemyBackend(Thing, config=config))
    app = Litestar(plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([things])])
    with logged_errors() as messages:
        response = TestClient(app).get("/api/v1/things/")
    assert response.status_code == 500
    assert len(messages) == 1
    assert "SQLAlchemyBackend(Thing) takes each request's session from its advanced-alchemy config" in messages[0]


@pytest.mark.parametrize("served", ["mounted", "listing_route", "provide_page"])
def test_a_route_listing_a_sqlalchemy_resource_without_a_config_stops_the_start(served: str) -> None:
    things = Resource("things", SQLAlchemyBackend(Thing))

    @get("/page", dependencies={"result": provide_page(things)})
    async def page(result: NamedDependency[ListResult]) -> int:
        return result.pagination.total

    handlers: list[Any] = []
    if served == "listing_route":
        handlers.append(listing_route(things, "/mine"))
    elif served == "provide_page":
        handlers.append(page)
    plugin = ListingPlugin([things]) if served == "mounted" else ListingPlugin([], unmounted=[things])
    message = start_failure(Litestar(route_handlers=handlers, plugins=[plugin]))
    assert "SQLAlchemyBackend(Thing) has no config, so the routes that list it" in message
    assert "SQLAlchemyBackend(Thing, config=config)" in message


def test_without_a_config_handlers_that_pass_their_session_start() -> None:
    # The resource's own handlers give it a session, or only parse its query: nothing to refuse.
    things = Resource("things", SQLAlchemyBackend(Thing))

    @get("/query", dependencies={"list_query": provide_query(things)})
    async def query(list_query: SkipValidation[ListQuery]) -> int:
        return list_query.window.page

    app = Litestar(route_handlers=[query], plugins=[ListingPlugin([], unmounted=[things])])
    with TestClient(app) as client:
        assert client.get("/query?page=3").json() == 3


# ---------------------------------------------------------------- Piccolo: the pool and the replicas
def test_a_piccolo_replica_the_engine_does_not_have_stops_the_start() -> None:
    engine = SQLiteEngine(path=str(scratch_folder("listing-start-replica") / "things.sqlite"))
    things = Resource("things", PiccoloBackend(piccolo_tables.Thing, engine=engine, replicas=("standby",)))
    message = start_failure(Litestar(plugins=[ListingPlugin([things])]))
    assert "replicas ['standby'] are not among the engine's extra_nodes []" in message


async def test_a_piccolo_sqlite_engine_has_no_pool_to_start() -> None:
    engine = SQLiteEngine(path=str(scratch_folder("listing-start-sqlite") / "things.sqlite"))
    await write_piccolo_rows(engine)
    things = Resource("things", PiccoloBackend(piccolo_tables.Thing, engine=engine))
    with TestClient(Litestar(plugins=[ListingPlugin([things])])) as client:
        assert client.get("/api/v1/things/").json()["pagination"]["total"] == 31


@pytest.mark.skipif(not selected(backend="piccolo", database="postgresql"), reason="Piccolo on PostgreSQL")
async def test_a_postgresql_engine_whose_pool_was_never_started_stops_the_start() -> None:
    from piccolo.engine.postgres import PostgresEngine

    engine = PostgresEngine(config={"dsn": postgres_database_url("listing_start_pool")}, extensions=())
    await write_piccolo_rows(engine)
    things = Resource("things", PiccoloBackend(piccolo_tables.Thing, engine=engine))
    message = start_failure(Litestar(plugins=[ListingPlugin([things])]))
    assert "the connection pool of its engine was not started when the application started" in message
    assert "await engine.start_connection_pool()" in message

    # Started by the application's own start-up hook, which runs before the check.
    async def open_pool() -> None:
        await engine.start_connection_pool()

    async def close_pool() -> None:
        await engine.close_connection_pool()

    app = Litestar(plugins=[ListingPlugin([things])], on_startup=[open_pool], on_shutdown=[close_pool])
    with TestClient(app) as client:
        assert client.get("/api/v1/things/").json()["pagination"]["total"] == 31
    # Or listed without a pool, knowingly.
    unpooled = Resource("things", PiccoloBackend(piccolo_tables.Thing, engine=engine, require_pool=False))
    with TestClient(Litestar(plugins=[ListingPlugin([unpooled])])) as client:
        assert client.get("/api/v1/things/").json()["pagination"]["total"] == 31


# ---------------------------------------------------------------- Beanie: the bound document class
def test_a_document_class_init_beanie_never_bound_stops_the_start() -> None:
    pytest.importorskip("mongomock_motor")
    from beanie import Document, init_beanie

    from litestar_listing.backends.beanie import BeanieBackend
    from tests.document_store.mongomock_adapter import mongomock_client

    class Note(Document):
        title: str

        class Settings:
            name = "start_check_notes"

    notes = Resource("notes", BeanieBackend(Note))
    message = start_failure(Litestar(plugins=[ListingPlugin([notes])]))
    assert "Note is not initialised: await init_beanie(database=..., document_models=[Note, ...])" in message

    async def bind() -> None:
        await init_beanie(database=mongomock_client()["start_checks"], document_models=[Note])

    with TestClient(Litestar(plugins=[ListingPlugin([notes])], on_startup=[bind])) as client:
        assert client.get("/api/v1/notes/").json()["pagination"]["total"] == 0


# ---------------------------------------------------------------- a resource in no plugin: logged at its first list
def test_a_resource_no_plugin_serves_is_logged_at_its_first_list() -> None:
    lonely = Resource("lonely", MemoryBackend(GRAPH, []))

    @get("/count", dependencies={"result": provide_page(lonely)})
    async def count(result: NamedDependency[ListResult]) -> int:
        return result.pagination.total

    # Without any ListingPlugin nothing sees the dependency at start (docs: in your app, "Start-up
    # checks"): its first use fails, with a 500 and the fix in the log, debug or not.
    with logged_errors() as messages, TestClient(Litestar(route_handlers=[count])) as client:
        assert client.get("/count").status_code == 500
    assert len(messages) == 1
    assert "ListingPlugin([...], unmounted=[lonely])" in messages[0]


def test_a_start_failure_is_not_logged_as_a_list() -> None:
    orphan = Resource("orphan", MemoryBackend(GRAPH, []))
    with logged_errors() as messages, pytest.raises(ConfigurationError, match="was not given it"):
        Litestar(route_handlers=[listing_route(orphan, "/orphans")], plugins=[ListingPlugin([])])
    assert messages == []
