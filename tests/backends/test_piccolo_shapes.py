"""Piccolo: statements compiled once per query shape, each query running with its own values.

On every selected Piccolo database. Expected ids and totals come from plain SQL over the same rows
(``sqlite3`` or asyncpg); how often statements are compiled is counted by wrapping the compiler.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import sqlite3
from decimal import Decimal
from typing import Any

import asyncpg
import pytest
from piccolo.columns import Date, Integer, Numeric, Varchar
from piccolo.engine.base import Engine
from piccolo.engine.postgres import PostgresEngine
from piccolo.engine.sqlite import SQLiteEngine
from piccolo.table import Table

from litestar_listing import ListContext, Resource
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.core.parsing import equality_filter
from litestar_listing.core.query import FieldPath, ListQuery, Policy
from litestar_listing.plugin.prepared import prepare
from tests.backends.shaped import counted_compiles, crate_rows
from tests.conftest import postgres_database_url, scratch_folder
from tests.matrix import selected

DATABASES = [target.database for target in selected(backend="piccolo")]
pytestmark = pytest.mark.skipif(not DATABASES, reason="the Piccolo backend is not selected")


class Kind(enum.Enum):
    BOX = "box"
    BAG = "bag"
    TIN = "tin"


class Crate(Table, tablename="shaped_crates"):
    tenant = Integer()
    kind = Varchar(length=8, choices=Kind)
    weight = Numeric(digits=(6, 2))
    packed = Date()


ROWS = crate_rows("kind", ("box", "bag", "tin", "box"))


class Plain:
    """Plain SQL on the test's own connection to the database (``sqlite3`` or asyncpg)."""

    def __init__(self, database: str, location: str) -> None:
        self.database, self.location = database, location

    async def rows(self, sql: str) -> list[tuple[Any, ...]]:
        if self.database == "sqlite":
            with sqlite3.connect(self.location) as connection:
                return list(connection.execute(sql))
        connection = await asyncpg.connect(self.location)
        try:
            return [tuple(row) for row in await connection.fetch(sql)]
        finally:
            await connection.close()

    async def page(self, where: str, offset: int = 0) -> tuple[list[int], int]:
        """The ids of one page of ten in id order, and the total."""
        ids = await self.rows(f"SELECT id FROM shaped_crates WHERE {where} ORDER BY id LIMIT 10 OFFSET {offset}")
        ((total,),) = await self.rows(f"SELECT count(*) FROM shaped_crates WHERE {where}")
        return [id_ for (id_,) in ids], total


@pytest.fixture(params=DATABASES)
async def database(request: pytest.FixtureRequest) -> tuple[Engine[Any], Plain]:
    name: str = request.param
    engine: Engine[Any]
    if name == "sqlite":
        location = str(scratch_folder("listing-piccolo-shapes") / "shapes.sqlite")
        engine = SQLiteEngine(path=location)
    else:
        location = postgres_database_url("listing_piccolo_shapes")
        engine = PostgresEngine(config={"dsn": location}, extensions=())
    Crate._meta.db = engine
    await Crate.alter().drop_table(if_exists=True)
    await Crate.create_table()
    await Crate.insert(*(Crate(**row) for row in ROWS))
    return engine, Plain(name, location)


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[ListQuery]:
    """The queries statements were compiled for."""
    return counted_compiles(monkeypatch)


def _resource(engine: Engine[Any]) -> Resource:
    resource = Resource("crates", PiccoloBackend(Crate, engine=engine), default_order=("id",))
    prepare(resource)
    return resource


async def _ids(
    resource: Resource, params: list[tuple[str, str]], policies: tuple[Policy, ...] = ()
) -> tuple[list[int], int]:
    query = dataclasses.replace(prepare(resource).parser.parse(params, []), policies=policies)
    page = await resource.backend.fetch(query, ListContext())
    assert page.total is not None
    return [item["id"] for item in page.items], page.total


async def test_queries_of_one_shape_share_statements_and_keep_their_values(
    database: tuple[Engine[Any], Plain], builds: list[ListQuery]
) -> None:
    engine, plain = database
    resource = _resource(engine)
    cases = [
        ([("weight__gte", "300.25"), ("page", "2")], "weight >= 300.25", 10),
        ([("weight__gte", "17"), ("page", "5")], "weight >= 17", 40),
        (
            [("kind__in", "box,tin"), ("packed__lt", "2024-02-01")],
            "kind IN ('box', 'tin') AND packed < '2024-02-01'",
            0,
        ),
        (
            [("kind__in", "bag,box"), ("packed__lt", "2024-03-09")],
            "kind IN ('bag', 'box') AND packed < '2024-03-09'",
            0,
        ),
        ([("kind", "tin"), ("weight__between", "10,11.5")], "kind = 'tin' AND weight BETWEEN 10 AND 11.5", 0),
        ([("kind", "bag"), ("weight__between", "200,210")], "kind = 'bag' AND weight BETWEEN 200 AND 210", 0),
    ]
    for params, where, offset in cases:
        assert await _ids(resource, params) == await plain.page(where, offset), params
    # Three shapes: weight__gte with a page, kind__in (two values) with packed__lt, kind with between.
    assert len(builds) == 3
    # Page 101 on is a deferred join (offset 1000 and beyond): a shape of its own, shared by its pages.
    for page in (101, 105, 1):
        assert await _ids(resource, [("page", str(page))]) == await plain.page("1 = 1", (page - 1) * 10), page
    assert len(builds) == 5


async def test_row_policies_are_part_of_the_shape(database: tuple[Engine[Any], Plain], builds: list[ListQuery]) -> None:
    engine, plain = database
    resource = _resource(engine)
    for tenant in (0, 1, 2, 1, 0):
        policies = (Policy("Crate", (equality_filter(FieldPath(("tenant",)), tenant),)),)
        expected = await plain.page(f"weight >= 100 AND tenant = {tenant}")
        assert await _ids(resource, [("weight__gte", "100")], policies) == expected, tenant
    assert len(builds) == 3  # one per tenant: a policy's values are never bound from another request


async def test_in_the_callers_transaction_a_list_sees_its_writes(database: tuple[Engine[Any], Plain]) -> None:
    # Inside engine.transaction() the statements run on the transaction's own connection.
    engine, plain = database
    resource = _resource(engine)
    params = [("kind", "tin"), ("weight__gte", "320")]
    ids, total = await plain.page("kind = 'tin' AND weight >= 320")
    assert await _ids(resource, params) == (ids, total)
    async with engine.transaction():
        extra = Crate(id=5000, tenant=0, kind=Kind.TIN, weight=Decimal(999), packed=datetime.date(2025, 1, 1))
        await Crate.insert(extra)
        assert await _ids(resource, params) == ([*ids, 5000], total + 1)
