"""SQLAlchemy: items built from plain rows, and the loads the ORM keeps (a relation joined on more than its keys).

Expected items are written out by hand from the rows the test inserts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import ForeignKey, String, and_, event, true
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from litestar_listing import ListContext, Resource
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend, read_engine
from litestar_listing.plugin.prepared import prepare
from tests.backends.engines import sqlite_engine
from tests.matrix import selected

pytestmark = pytest.mark.skipif(
    not selected(backend="sqlalchemy", database="sqlite"), reason="SQLAlchemy on SQLite is not selected"
)


class Base(DeclarativeBase):
    pass


class Keeper(Base):
    __tablename__ = "keepers"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(20))
    active: Mapped[bool]


class Pet(Base):
    __tablename__ = "pets"
    id: Mapped[int] = mapped_column(primary_key=True)
    keeper_id: Mapped[int | None] = mapped_column(ForeignKey("keepers.id"))
    keeper: Mapped[Keeper | None] = relationship(viewonly=True)
    # Joined on more than the keys: only an active keeper is loaded.
    active_keeper: Mapped[Keeper | None] = relationship(
        primaryjoin=lambda: and_(Pet.keeper_id == Keeper.id, Keeper.active.is_(True)), viewonly=True
    )


class Badge(Base):
    __tablename__ = "badges"
    id: Mapped[int] = mapped_column(primary_key=True, info={"private": True})
    label: Mapped[str] = mapped_column(String(20))


KEEPERS: list[dict[str, Any]] = [{"id": 1, "name": "ada", "active": True}, {"id": 2, "name": "bo", "active": False}]
PETS: list[dict[str, Any]] = [{"id": 1, "keeper_id": 1}, {"id": 2, "keeper_id": 2}, {"id": 3, "keeper_id": None}]


@pytest.fixture
async def engine() -> AsyncIterator[AsyncEngine]:
    badges = [{"id": 1, "label": "gold"}, {"id": 2, "label": "gold"}]
    async with sqlite_engine("rows", Base.metadata, [(Keeper, KEEPERS), (Pet, PETS), (Badge, badges)]) as engine:
        yield engine


async def _items(engine: AsyncEngine, load: tuple[str, ...]) -> tuple[list[dict[str, Any]], int]:
    resource = Resource("pets", SQLAlchemyBackend(Pet), default_order=("id",))
    prepare(resource)
    loaded: list[object] = []

    def record(instance: object, _context: Any) -> None:
        loaded.append(instance)

    event.listen(Base, "load", record, propagate=True)
    try:
        async with AsyncSession(engine) as session:
            page = await resource.backend.fetch(
                prepare(resource).parser.parse([], []), ListContext(session=session, load=load)
            )
    finally:
        event.remove(Base, "load", record)
    return page.items, len(loaded)


async def test_a_to_one_load_on_keys_is_read_from_the_rows(engine: AsyncEngine) -> None:
    assert read_engine(engine.sync_engine) is not None
    items, instances = await _items(engine, ("keeper",))
    assert items == [
        {"id": 1, "keeper_id": 1, "keeper": {"id": 1, "name": "ada", "active": True}},
        {"id": 2, "keeper_id": 2, "keeper": {"id": 2, "name": "bo", "active": False}},
        {"id": 3, "keeper_id": None, "keeper": None},
    ]
    assert instances == 0


async def test_a_relation_joined_on_more_than_its_keys_is_loaded_by_the_orm(engine: AsyncEngine) -> None:
    items, instances = await _items(engine, ("active_keeper",))
    assert items == [
        {"id": 1, "keeper_id": 1, "active_keeper": {"id": 1, "name": "ada", "active": True}},
        {"id": 2, "keeper_id": 2, "active_keeper": None},  # bo is not active
        {"id": 3, "keeper_id": None, "active_keeper": None},
    ]
    assert instances > 0


async def test_a_distinct_base_statement_keeps_rows_that_differ_in_a_private_key_only(engine: AsyncEngine) -> None:
    backend = SQLAlchemyBackend(Badge, statement=lambda statement: statement.distinct())
    resource = Resource("badges", backend, default_order=("label",))
    prepare(resource)
    async with AsyncSession(engine) as session:
        page = await backend.fetch(prepare(resource).parser.parse([], []), ListContext(session=session))
    # Two badges, told apart by their private id alone.
    assert (page.items, page.total) == ([{"label": "gold"}, {"label": "gold"}], 2)


async def test_a_distinct_base_statement_counts_its_merged_rows(engine: AsyncEngine) -> None:
    # Each keeper once per pet (three), merged by DISTINCT: a window count would see the six unmerged rows.
    backend = SQLAlchemyBackend(Keeper, statement=lambda statement: statement.join(Pet, true()).distinct())
    resource = Resource("keepers", backend, default_order=("name",))
    query = prepare(resource).parser.parse([("count", "1")], [])
    async with AsyncSession(engine) as session:
        page = await backend.fetch(query, ListContext(session=session, count_in_page=True))
    assert ([item["name"] for item in page.items], page.total) == (["ada"], 2)
