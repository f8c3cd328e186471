"""A computed value over the listed model itself, counted through an alias under its policy (docs/guide/computed.md).

Projects have sub-projects (``parent``), and each tenant sees its own company's projects only. The
value ``sub_projects`` counts the sub-projects of a listed project that the request may see: the
counted rows are projects too, so the count reads them through an alias, on SQLAlchemy, Piccolo
and Beanie alike. ``app`` serves the SQL resources; ``create_beanie_app(database)`` the Beanie one.
"""

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from beanie import Document, Link, init_beanie
from litestar import Litestar
from litestar.connection import ASGIConnection
from piccolo.columns import ForeignKey, Integer, Varchar
from piccolo.engine.sqlite import SQLiteEngine
from piccolo.querystring import QueryString
from piccolo.table import Table
from pymongo.asynchronous.database import AsyncDatabase
from sqlalchemy import ForeignKey as SAForeignKey
from sqlalchemy import String, func, select
from sqlalchemy.orm import DeclarativeBase, Mapped, aliased, mapped_column

from litestar_listing import Computed, ListingPlugin, Resource, RowPolicy, tenant_scope
from litestar_listing.backends.beanie import BeanieBackend, link_id
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend

FOLDER = Path(tempfile.mkdtemp())
# id, name, company, parent. Website hosting (4) is Globex's sub-project of Acme's Website (1).
PROJECTS = [
    (1, "Website", 1, None),
    (2, "Mobile app", 2, None),
    (3, "Website redesign", 1, 1),
    (4, "Website hosting", 2, 1),
    (5, "Mobile backend", 2, 2),
    (6, "Mobile design", 2, 2),
    (7, "Billing", 1, None),
]
USERS: Mapping[str, Mapping[str, object]] = {
    "ann": {"company_id": 1},  # Acme
    "bob": {"company_id": 2},  # Globex
    "root": {"is_platform_admin": True},
}


def bearer_user(connection: ASGIConnection[Any, Any, Any, Any]) -> Mapping[str, object] | None:
    """``Authorization: Bearer <name>``; anyone else is anonymous."""
    return USERS.get(connection.headers.get("authorization", "").removeprefix("Bearer "))


tenant = tenant_scope("company_id", user=bearer_user)


# ---------------------------------------------------------------- SQLAlchemy
class Base(DeclarativeBase):
    pass


class Project(Base):
    __tablename__ = "projects"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    company_id: Mapped[int]
    parent_id: Mapped[int | None] = mapped_column(SAForeignKey("projects.id"))


config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{FOLDER / 'projects.sqlite'}")

# start-example sqlalchemy
child = aliased(Project)  # the counted rows: sub-projects, read through an alias of the listed model
sub_projects = Computed(
    lambda allowed: (
        select(func.count(child.id))
        .where(child.parent_id == Project.id, allowed(child))  # the policy on the child, not the listed row
        .correlate(Project)
        .scalar_subquery()
    ),
    reads=(Project,),
)
projects = Resource("projects", SQLAlchemyBackend(Project, config=config, computed={"sub_projects": sub_projects}))
# end-example sqlalchemy


# ---------------------------------------------------------------- Piccolo
engine = SQLiteEngine(path=str(FOLDER / "piccolo-projects.sqlite"))


class PiccoloProject(Table, db=engine, tablename="piccolo_projects"):
    id = Integer(primary_key=True)
    name = Varchar(length=100)
    company_id = Integer()
    parent: ForeignKey["PiccoloProject"] = ForeignKey("self", null=True)


# start-example piccolo
piccolo_sub_projects = Computed(
    lambda allowed: QueryString(
        '(SELECT COUNT(*) FROM piccolo_projects AS "child" WHERE "child"."parent" = {} AND {})',
        PiccoloProject.id,  # the listed row, "piccolo_projects"."id"
        allowed(PiccoloProject, "child"),  # the counted rows, "child"."company_id" = ...
    ),
    reads=(PiccoloProject,),
)
piccolo_projects = Resource(
    "piccolo-projects",
    PiccoloBackend(PiccoloProject, engine=engine, computed={"sub_projects": (piccolo_sub_projects, Integer())}),
)
# end-example piccolo


# ---------------------------------------------------------------- Beanie
class MongoProject(Document):
    id: int  # type: ignore[assignment]
    name: str
    company_id: int
    parent: Link["MongoProject"] | None = None

    class Settings:
        name = "guide_projects"


# start-example beanie
# The projects whose parent link holds this project's id: link_id reads a link's $id ($getField).
children = {
    "$lookup": {
        "from": "guide_projects",
        "let": {"project": "$_id"},
        "pipeline": [{"$match": {"$expr": {"$eq": [link_id("$parent"), "$$project"]}}}],
        "as": "children",
    }
}
mongo_sub_projects = Computed(
    lambda allowed: {
        "$size": {"$filter": {"input": "$children", "as": "child", "cond": allowed(MongoProject, "child")}}
    },
    reads=(MongoProject,),
)
mongo_projects = Resource(
    "mongo-projects",
    BeanieBackend(MongoProject, pipeline=[children], computed={"sub_projects": (mongo_sub_projects, int)}),
)
# end-example beanie


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        session.add_all(
            [
                Project(id=id_, name=name, company_id=company, parent_id=parent)
                for id_, name, company, parent in PROJECTS
            ]
        )
        await session.commit()
    await PiccoloProject.alter().drop_table(if_exists=True)
    await PiccoloProject.create_table()
    await PiccoloProject.insert(
        *(
            PiccoloProject(id=id_, name=name, company_id=company, parent=parent)
            for id_, name, company, parent in PROJECTS
        )
    )


async def dispose() -> None:
    await config.get_engine().dispose()


# start-example app
# The row policy of the listed model is the one allowed(...) applies to the counted sub-projects.
listing = ListingPlugin(
    [projects, piccolo_projects],
    policies=[RowPolicy(Project, tenant), RowPolicy(PiccoloProject, tenant)],
)
# end-example app
app = Litestar(plugins=[SQLAlchemyPlugin(config=config), listing], on_startup=[seed], on_shutdown=[dispose])


def create_beanie_app(database: AsyncDatabase[Any]) -> Litestar:
    """The Beanie resource over ``database``; Beanie binds the document class to it at start-up."""

    async def start() -> None:
        await init_beanie(database=database, document_models=[MongoProject])
        await MongoProject.delete_all()
        await MongoProject.insert_many(
            [
                MongoProject(
                    id=id_,
                    name=name,
                    company_id=company,
                    parent=None if parent is None else MongoProject.link_from_id(parent),
                )
                for id_, name, company, parent in PROJECTS
            ]
        )

    listing = ListingPlugin([mongo_projects], policies=[RowPolicy(MongoProject, tenant)])
    return Litestar(plugins=[listing], on_startup=[start])
