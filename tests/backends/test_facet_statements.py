"""A facet request runs one statement per facet and at most one count, on every relational target (docs: facets).

The statements are read where the driver receives them: SQLAlchemy's cursor events (on the engine
and on a SQLite file's read engine), the SQLite connections Piccolo opens (``FoldingConnection``)
and asyncpg's connections. Only those reading the listed table count: a transaction's and a
time limit's statements are not the request's work. The total must be the list's own. A facet
request inside the caller's transaction sees its writes and leaves it usable, and a facet statement
out of time is a timeout, as a list's is.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qsl

import asyncpg
import pytest
from piccolo.querystring import QueryString
from sqlalchemy import event, select, text, update

from litestar_listing import ListContext, UnavailableError
from litestar_listing.backends.base import FacetBackend, ListingBackend
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.piccolo.sqlite import FoldingConnection
from litestar_listing.backends.relational.databases import DATABASES
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend, read_engine
from litestar_listing.core.facets import FacetPage
from litestar_listing.plugin.prepared import prepare
from litestar_listing.plugin.resource import Resource
from tests.conformance import models, piccolo_tables
from tests.conformance.targets import Target, target_fixture
from tests.matrix import SELECTED, Store

TARGETS = [one for one in SELECTED if one.backend in {"sqlalchemy", "piccolo"} and one.store is Store.SQL]
pytestmark = pytest.mark.skipif(not TARGETS, reason="no relational target is selected")

target = target_fixture(TARGETS, "listing_facet_statements")

Seen = list[tuple[int, str]]
"""``(connection, SQL)`` of each statement that read the listed table."""


@contextmanager
def statements(target: Target, monkeypatch: pytest.MonkeyPatch) -> Iterator[Seen]:
    """The statements reading ``things`` that ``target``'s driver runs while the block runs."""
    seen: Seen = []

    def note(connection: object, sql: str) -> None:
        if "things" in sql:
            seen.append((id(connection), sql))

    if target.sessions is not None:
        bind = target.sessions.kw["bind"].sync_engine
        engines = [bind, *filter(None, [read_engine(bind)])]

        def executed(connection: Any, _cursor: Any, sql: str, *_: Any) -> None:
            note(connection.connection.dbapi_connection, sql)

        for engine in engines:
            event.listen(engine, "before_cursor_execute", executed)
        try:
            yield seen
        finally:
            for engine in engines:
                event.remove(engine, "before_cursor_execute", executed)
        return

    def on_sqlite(connection: sqlite3.Connection, sql: str, *arguments: Any) -> sqlite3.Cursor:
        note(connection, sql)
        return sqlite3.Connection.execute(connection, sql, *arguments)

    fetch = asyncpg.Connection.fetch

    async def on_postgres(connection: asyncpg.Connection, sql: str, *arguments: Any, **options: Any) -> Any:
        note(connection, sql)
        return await fetch(connection, sql, *arguments, **options)

    monkeypatch.setattr(FoldingConnection, "execute", on_sqlite)
    monkeypatch.setattr(asyncpg.Connection, "fetch", on_postgres)
    yield seen


@pytest.mark.parametrize(
    ("query", "facets", "counts"),
    [
        # status and company__name count under the list's own query: their counts add up to its total.
        ("facet=status,company__name,tags__name", 3, 0),
        # A row may hold several tags or JSON tags: the list's count runs too.
        ("facet=tags__name,attributes__tags&search=a", 2, 1),
        # status leaves its own filter out (disjunctive): the count runs; company__name's counts add up.
        ("facet=status&status=active", 1, 1),
        ("facet=status,company__name&status=active", 2, 0),
        ("facet=status,owner__name&status__in=active,draft&facet_mode=conjunctive", 2, 0),
    ],
)
@pytest.mark.parametrize("parallel", [True, False], ids=["parallel", "one core"])
async def test_one_statement_per_facet_and_at_most_one_count(
    target: Target, monkeypatch: pytest.MonkeyPatch, query: str, facets: int, counts: int, parallel: bool
) -> None:
    resource = target.resources["things"]
    backend = resource.backend
    assert isinstance(backend, FacetBackend)
    prepared = prepare(resource)
    asked, _ = prepared.parse_facets_priced(parse_qsl(query))
    async with target.context() as context:
        listed = await resource.backend.fetch(asked.query, context)
    with statements(target, monkeypatch) as seen:
        async with target.context() as context:
            answer = await backend.facet_counts(asked, replace(context, parallel=parallel))
    assert answer.total == listed.total
    assert [len(counted.values) > 0 for counted in answer.facets] == [True] * facets
    assert (len(seen), sum("listing_facet" not in sql for _, sql in seen)) == (facets + counts, counts)
    if not parallel:
        assert len({connection for connection, _ in seen}) == 1  # one after the other, on the list's connection


class _RollbackError(Exception):
    """Ends the test's transaction: the target's rows stay as the fixture has them."""


def statuses(page: FacetPage) -> dict[object, int]:
    """The counts of the first facet of ``page``, by value."""
    return {each.value: each.count for each in page.facets[0].values}


async def test_inside_the_callers_transaction_the_facets_see_its_writes(target: Target) -> None:
    resource = target.resources["things"]
    backend = resource.backend
    assert isinstance(backend, FacetBackend)
    asked = prepare(resource).parser.parse_facets([("facet", "status")], [])
    async with target.context() as context:
        before = statuses(await backend.facet_counts(asked, context))
    inside: dict[object, int] = {}
    with suppress(_RollbackError):
        if target.sessions is not None:
            async with target.sessions() as session, session.begin():
                thing = models.Thing
                await session.execute(update(thing).where(thing.id == 1).values(status=models.Status.ARCHIVED))
                inside = statuses(await backend.facet_counts(asked, ListContext(session=session)))
                assert (await session.execute(select(thing.status).where(thing.id == 1))).scalar_one() == "archived"
                raise _RollbackError
        assert target.engine is not None
        with piccolo_tables.bound(target.engine):
            async with target.engine.transaction():
                await piccolo_tables.Thing.update({piccolo_tables.Thing.status: "archived"}).where(
                    piccolo_tables.Thing.id == 1
                )
                inside = statuses(await backend.facet_counts(asked, ListContext(session=target.engine)))
                assert await piccolo_tables.Thing.select(piccolo_tables.Thing.status).where(
                    piccolo_tables.Thing.id == 1
                ).first() == {"status": "archived"}
                raise _RollbackError
    assert before["active"] - 1 == inside["active"]  # thing 1 was active
    assert before["archived"] + 1 == inside["archived"]
    async with target.context() as context:
        assert statuses(await backend.facet_counts(asked, context)) == before


SLEEPS = {"postgresql": "pg_sleep(0.05) IS NOT NULL", "mariadb": "SLEEP(0.05) = 0"}
"""A condition that holds after a twentieth of a second, on each server whose own time limit stops a statement."""


async def test_a_facet_statement_out_of_time_is_a_timeout(target: Target) -> None:
    database = DATABASES[target.id.split(":")[1]]
    if not database.server_timeout:
        pytest.skip(f"{database.name} stops no statement at a deadline (the statement guard has a fixed limit)")
    # A base query that sleeps for each row: the facet's statement, over 31 rows, outlasts the deadline.
    slow = SLEEPS[database.name]
    backend: ListingBackend
    if target.sessions is not None:
        backend = SQLAlchemyBackend(models.Thing, statement=lambda listed: listed.where(text(slow)))
    else:
        backend = PiccoloBackend(piccolo_tables.Thing, engine=target.engine, where=QueryString(slow))
    assert isinstance(backend, FacetBackend)
    resource = Resource("things", backend, facet_fields=("status",))
    asked = prepare(resource).parser.parse_facets([("facet", "status")], [])
    async with target.context() as context:
        with pytest.raises(UnavailableError) as raised:
            await backend.facet_counts(asked, replace(context, deadline=time.monotonic() + 0.3))
    assert raised.value.reason == "timeout"
