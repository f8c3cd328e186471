"""SQLAlchemy: eager loads under row policies where one row is reached along two paths of one list.

A project's ``parent`` is a project that may be listed itself and be another's ``subprojects``; a
member may be a project's ``lead`` (with its ``manager`` loaded) and one of its ``members``. The
to-one loads are joined into the page statement, the to-many ones are select-in statements of their
own: each must keep what the other loaded, and both follow the request's row policies (docs:
scoping, "Row policies"; eager loading). Expected items are written out by hand from the rows below.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import Column, ForeignKey, String, Table, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, create_async_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, joinedload, mapped_column, relationship, selectinload

from litestar_listing import ListContext, Resource
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend, model_graph, prepare_engine
from litestar_listing.core.query import Policy
from litestar_listing.plugin.policies import resolved_policy
from litestar_listing.plugin.prepared import prepare
from tests.backends.engines import sqlite_engine
from tests.conftest import async_url, postgres_database_url
from tests.matrix import selected

DATABASES = [
    target.database for target in selected(backend="sqlalchemy") if target.database in {"sqlite", "postgresql"}
]
pytestmark = pytest.mark.skipif(not DATABASES, reason="SQLAlchemy on SQLite or PostgreSQL is not selected")


class Base(DeclarativeBase):
    pass


project_members = Table(
    "project_members",
    Base.metadata,
    Column("project_id", ForeignKey("projects.id"), primary_key=True),
    Column("member_id", ForeignKey("members.id"), primary_key=True),
)


class Member(Base):
    __tablename__ = "members"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(20))
    team: Mapped[int]
    manager_id: Mapped[int | None] = mapped_column(ForeignKey("members.id"))
    manager: Mapped[Member | None] = relationship(lazy="raise", remote_side="Member.id")


class Project(Base):
    __tablename__ = "projects"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(20))
    team: Mapped[int]
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("projects.id"))
    lead_id: Mapped[int | None] = mapped_column(ForeignKey("members.id"))
    parent: Mapped[Project | None] = relationship(lazy="raise", remote_side="Project.id", back_populates="subprojects")
    subprojects: Mapped[list[Project]] = relationship(lazy="raise", back_populates="parent", order_by="Project.id")
    lead: Mapped[Member | None] = relationship(lazy="raise")
    members: Mapped[list[Member]] = relationship(secondary=project_members, lazy="raise", order_by=Member.id)


# Team 2's rows are hidden from team 1: Cy (3) and Cosmos (3).
MEMBERS: list[dict[str, Any]] = [
    {"id": 1, "name": "Ada", "team": 1, "manager_id": None},
    {"id": 2, "name": "Bo", "team": 1, "manager_id": 1},
    {"id": 3, "name": "Cy", "team": 2, "manager_id": 2},
    {"id": 4, "name": "Di", "team": 1, "manager_id": 3},
]
PROJECTS: list[dict[str, Any]] = [
    {"id": 1, "name": "Apollo", "team": 1, "parent_id": None, "lead_id": 2},
    {"id": 2, "name": "Borealis", "team": 1, "parent_id": 1, "lead_id": 3},
    {"id": 3, "name": "Cosmos", "team": 2, "parent_id": 2, "lead_id": 1},
    {"id": 4, "name": "Dune", "team": 1, "parent_id": 3, "lead_id": 4},
]
LINKS = [(1, 2), (1, 3), (2, 1), (2, 4), (3, 2), (4, 1), (4, 3)]  # (project, member)
ROWS: list[tuple[Any, list[dict[str, Any]]]] = [
    (Member, MEMBERS),
    (Project, PROJECTS),
    (project_members, [{"project_id": project, "member_id": member} for project, member in LINKS]),
]

GRAPH = model_graph(Project)
TEAM_ONE = (
    resolved_policy(GRAPH.entities["Project"], {"team": 1}),
    resolved_policy(GRAPH.entities["Member"], {"team": 1}),
)
"""A member of team 1: the projects and members of team 1 only."""
NOTHING_HIDDEN = (Policy("Project"), Policy("Member"))
"""An administrator under policies that restrict others, not them."""


@pytest.fixture(params=DATABASES)
async def engine(request: pytest.FixtureRequest) -> AsyncIterator[AsyncEngine]:
    if request.param == "sqlite":
        async with sqlite_engine("policy-loads", Base.metadata, ROWS) as sqlite:
            yield sqlite
        return
    postgresql = create_async_engine(async_url(postgres_database_url("listing_policy_loads")))
    prepare_engine(postgresql)
    async with postgresql.begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
        for table, rows in ROWS:
            await connection.execute(insert(table), rows)
    yield postgresql
    await postgresql.dispose()


def _project(project_id: int | None) -> dict[str, Any] | None:
    return next((dict(row) for row in PROJECTS if row["id"] == project_id), None)


def _member(member_id: int | None) -> dict[str, Any] | None:
    return next((dict(row) for row in MEMBERS if row["id"] == member_id), None)


async def _items(
    session: AsyncSession, load: tuple[str, ...], policies: tuple[Policy, ...] = ()
) -> list[dict[str, Any]]:
    resource = Resource("projects", SQLAlchemyBackend(Project), default_order=("id",))
    query = dataclasses.replace(prepare(resource).parser.parse([], []), policies=policies)
    page = await resource.backend.fetch(query, ListContext(session=session, load=load))
    return page.items


def _tree(project_id: int, parent: int | None, subprojects: list[int]) -> dict[str, Any]:
    return {**PROJECTS[project_id - 1], "parent": _project(parent), "subprojects": [_project(i) for i in subprojects]}


def _led(project_id: int, lead: int | None, manager: int | None, members: list[int]) -> dict[str, Any]:
    led = None if lead is None else {**MEMBERS[lead - 1], "manager": _member(manager)}
    return {**PROJECTS[project_id - 1], "lead": led, "members": [_member(i) for i in members]}


# Hand-counted from the rows above: under team 1's policies Cosmos (3) and Cy (3) read as missing.
TEAM_ONE_TREES = [_tree(1, None, [2]), _tree(2, 1, []), _tree(4, None, [])]
EVERY_TREE = [_tree(1, None, [2]), _tree(2, 1, [3]), _tree(3, 2, [4]), _tree(4, 3, [])]
TEAM_ONE_LEADS = [_led(1, 2, 1, [2]), _led(2, None, None, [1, 4]), _led(4, 4, None, [1])]
EVERY_LEAD = [_led(1, 2, 1, [2, 3]), _led(2, 3, 2, [1, 4]), _led(3, 1, None, [2]), _led(4, 4, 3, [1, 3])]


@pytest.mark.parametrize(
    ("load", "policies", "expected"),
    [
        (("parent", "subprojects"), TEAM_ONE, TEAM_ONE_TREES),
        (("parent", "subprojects"), NOTHING_HIDDEN, EVERY_TREE),
        (("parent", "subprojects"), (), EVERY_TREE),
        (("lead__manager", "members"), TEAM_ONE, TEAM_ONE_LEADS),
        (("lead__manager", "members"), NOTHING_HIDDEN, EVERY_LEAD),
        (("lead__manager", "members"), (), EVERY_LEAD),
    ],
    ids=["tree-team", "tree-admin", "tree-unrestricted", "lead-team", "lead-admin", "lead-unrestricted"],
)
async def test_a_row_loaded_along_a_joined_and_a_select_in_path_keeps_both(
    engine: AsyncEngine, load: tuple[str, ...], policies: tuple[Policy, ...], expected: list[dict[str, Any]]
) -> None:
    async with AsyncSession(engine) as session:
        assert await _items(session, load, policies) == expected
    # In a transaction the list runs on the session's own connection (on SQLite, outside one, on
    # the read engine's).
    async with AsyncSession(engine) as session, session.begin():
        assert await _items(session, load, policies) == expected


async def test_what_the_session_loaded_before_neither_leaks_into_the_list_nor_is_changed_by_it(
    engine: AsyncEngine,
) -> None:
    async with AsyncSession(engine) as session:
        # Loaded unrestricted first, as the application's own code may: Cy (3) is a member of Apollo.
        apollo = (
            await session.execute(
                select(Project)
                .where(Project.id == 1)
                .options(joinedload(Project.lead).joinedload(Member.manager), selectinload(Project.members))
            )
        ).scalar_one()
        assert [member.id for member in apollo.members] == [2, 3]
        assert await _items(session, ("lead__manager", "members"), TEAM_ONE) == TEAM_ONE_LEADS
        # The session's instances are as the application loaded them, not as team 1 sees them.
        assert [member.id for member in apollo.members] == [2, 3]
        assert apollo.lead is not None
        assert apollo.lead.manager is not None
        assert apollo.lead.manager.id == 1


async def test_the_sessions_pending_writes_are_listed_under_the_policies(engine: AsyncEngine) -> None:
    async with AsyncSession(engine) as session:
        session.add(Project(id=5, name="Eos", team=1, parent_id=1, lead_id=None))
        items = await _items(session, ("parent", "subprojects"), TEAM_ONE)
        eos = {"id": 5, "name": "Eos", "team": 1, "parent_id": 1, "lead_id": None}
        assert [item["id"] for item in items] == [1, 2, 4, 5]
        assert items[0]["subprojects"] == [_project(2), eos]
        assert items[3] == {**eos, "parent": _project(1), "subprojects": []}
