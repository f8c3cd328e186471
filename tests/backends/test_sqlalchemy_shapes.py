"""SQLAlchemy: statements built once per query shape, each query running with its own values.

Expected ids come from plain SQL over the same rows; how often statements are built is counted by
wrapping the compiler.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
from collections.abc import AsyncIterator
from decimal import Decimal

import pytest
from sqlalchemy import Dialect, Numeric, String, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from litestar_listing import ListContext, Resource
from litestar_listing.backends.relational.databases import SQLITE
from litestar_listing.backends.relational.shapes import OFFSET, Shapes, Slot, shape_of
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend
from litestar_listing.core.parsing import equality_filter
from litestar_listing.core.query import FieldPath, Filter, ListQuery, Policy
from litestar_listing.plugin.prepared import prepare
from tests.backends.engines import sqlite_engine
from tests.backends.shaped import counted_compiles, crate_rows
from tests.matrix import selected

pytestmark = pytest.mark.skipif(
    not selected(backend="sqlalchemy", database="sqlite"), reason="SQLAlchemy on SQLite is not selected"
)


class Upper(TypeDecorator[str]):
    """Stored upper-cased: a bound value that skipped the column's type would find nothing."""

    impl = String(20)
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else value.upper()


class Base(DeclarativeBase):
    pass


class Crate(Base):
    __tablename__ = "crates"
    id: Mapped[int] = mapped_column(primary_key=True)
    tenant: Mapped[int]
    code: Mapped[str] = mapped_column(Upper)
    weight: Mapped[Decimal] = mapped_column(Numeric(6, 2))
    packed: Mapped[datetime.date]


CRATES = crate_rows("code", ("ab", "cd", "ef", "gh"))


@pytest.fixture
async def engine() -> AsyncIterator[AsyncEngine]:
    async with sqlite_engine("shapes", Base.metadata, [(Crate, CRATES)]) as engine:
        yield engine


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[ListQuery]:
    """The queries statements were compiled for."""
    return counted_compiles(monkeypatch)


def _resource() -> Resource:
    resource = Resource("crates", SQLAlchemyBackend(Crate), search_fields=("code",), default_order=("id",))
    prepare(resource)
    return resource


async def _ids(
    engine: AsyncEngine, resource: Resource, params: list[tuple[str, str]], policies: tuple[Policy, ...] = ()
) -> tuple[list[int], int]:
    query = dataclasses.replace(prepare(resource).parser.parse(params, []), policies=policies)
    async with AsyncSession(engine) as session:
        page = await resource.backend.fetch(query, ListContext(session=session))
    return [item["id"] for item in page.items], page.total


async def _sql(engine: AsyncEngine, where: str, limit: int = 10, offset: int = 0) -> tuple[list[int], int]:
    """The ids of one page and the total by plain SQL (codes are stored upper-cased)."""
    page = f"SELECT id FROM crates WHERE {where} ORDER BY id LIMIT {limit} OFFSET {offset}"
    async with engine.connect() as connection:
        ids = (await connection.execute(text(page))).scalars()
        total = (await connection.execute(text(f"SELECT count(*) FROM crates WHERE {where}"))).scalar_one()
    return list(ids), total


async def test_queries_of_one_shape_share_statements_and_keep_their_values(
    engine: AsyncEngine, builds: list[ListQuery]
) -> None:
    resource = _resource()
    cases = [
        ([("weight__gte", "300.25"), ("page", "2")], "weight >= 300.25", 10),
        ([("weight__gte", "17"), ("page", "5")], "weight >= 17", 40),
        ([("code__in", "ab,ef"), ("packed__lt", "2024-02-01")], "code IN ('AB', 'EF') AND packed < '2024-02-01'", 0),
        ([("code__in", "gh,cd"), ("packed__lt", "2024-03-09")], "code IN ('GH', 'CD') AND packed < '2024-03-09'", 0),
        ([("weight__between", "10,11.5")], "weight BETWEEN 10 AND 11.5", 0),
        ([("weight__between", "200,210")], "weight BETWEEN 200 AND 210", 0),
    ]
    for params, where, offset in cases:
        assert await _ids(engine, resource, params) == await _sql(engine, where, offset=offset), params
    # Three shapes: weight__gte with a page, code__in (two values) with packed__lt, weight__between.
    assert len(builds) == 3
    # Page 101 on is a deferred join (offset 1000 and beyond): a shape of its own, shared by its pages.
    for page in (101, 105, 1):
        expected = await _sql(engine, "1 = 1", offset=(page - 1) * 10)
        assert await _ids(engine, resource, [("page", str(page))]) == expected, page
    assert len(builds) == 5


async def test_row_policies_are_part_of_the_shape(engine: AsyncEngine, builds: list[ListQuery]) -> None:
    resource = _resource()
    params = [("weight__gte", "100")]
    for tenant in (0, 1, 2, 1, 0):
        policies = (Policy("Crate", (equality_filter(FieldPath(("tenant",)), tenant),)),)
        expected = await _sql(engine, f"weight >= 100 AND tenant = {tenant}")
        assert await _ids(engine, resource, params, policies) == expected, tenant
    assert len(builds) == 3  # one per tenant: a policy's values are never bound from another request


def test_a_shape_leaves_out_field_values_and_keeps_everything_else() -> None:
    resource = _resource()

    def shape(params: list[tuple[str, str]]) -> tuple[ListQuery, dict[str, object]]:
        return shape_of(prepare(resource).parser.parse(params, []))

    first, values = shape([("code", "ab"), ("weight__between", "1,2"), ("page", "3")])
    second, _ = shape([("code", "zz"), ("weight__between", "5,9.5"), ("page", "7")])
    assert first == second
    assert values == {"_listing_0": "ab", "_listing_1": Decimal(1), "_listing_2": Decimal(2), OFFSET: 20}
    assert [item.value for item in first.filters if isinstance(item, Filter)] == [
        Slot("_listing_0", str),
        (Slot("_listing_1", Decimal), Slot("_listing_2", Decimal)),
    ]
    # Another page size, a deferred page: other shapes.
    assert shape([("code", "ab"), ("weight__between", "1,2"), ("count", "20")])[0] != first
    assert shape([("code", "ab"), ("weight__between", "1,2"), ("page", "101")])[0] != first
    # The search text and a text operator's value stay in the shape.
    searched, searched_values = shape([("search", "ab"), ("code__istartswith", "c")])
    assert searched == shape([("search", "ab"), ("code__istartswith", "c"), ("page", "4")])[0]
    assert searched != shape([("search", "cd"), ("code__istartswith", "c")])[0]
    assert searched != shape([("search", "ab"), ("code__istartswith", "e")])[0]
    assert searched_values == {OFFSET: 0}


async def test_a_shaped_statement_holds_no_value_and_does_not_run_without_them(engine: AsyncEngine) -> None:
    resource = _resource()
    backend = resource.backend
    assert isinstance(backend, SQLAlchemyBackend)
    compiler = backend.compiler(SQLITE)
    shape, values = shape_of(prepare(resource).parser.parse([("code", "qx-41")], []))
    page, _ = compiler.compile(shape, offset=Slot(OFFSET, int))
    assert "qx-41" not in str(page.compile(compile_kwargs={"literal_binds": False}))
    async with engine.connect() as connection:
        with pytest.raises(Exception, match="_listing_0"):
            await connection.execute(page)
        assert (await connection.execute(page, values)).all() == []


def test_shapes_keep_the_most_recently_used() -> None:
    shapes: Shapes[int] = Shapes(kept=2)
    made: list[str] = []

    def build(key: str) -> int:
        made.append(key)
        return len(made)

    for key in ("a", "b", "a", "c", "b", "a"):
        shapes.get(key, functools.partial(build, key))
    assert made == ["a", "b", "c", "b", "a"]  # "b" went when "c" came; "a" when "b" came back
    assert len(shapes) == 2
    assert shapes.get(["unhashable"], lambda: 7) == 7  # type: ignore[arg-type]
