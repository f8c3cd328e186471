"""Computed columns mapped to expressions: listed in items and orderable (docs/guide/computed.md)."""

import tempfile
from pathlib import Path

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from piccolo.columns import Boolean, ForeignKey, Integer, Serial, Varchar
from piccolo.engine.sqlite import SQLiteEngine
from piccolo.querystring import QueryString
from piccolo.table import Table
from sqlalchemy import ForeignKey as SAForeignKey
from sqlalchemy import String, func, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import ListingPlugin, Resource
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend

FOLDER = Path(tempfile.mkdtemp())
PROJECTS = [(1, "Website"), (2, "Mobile app"), (3, "Billing")]
TASKS = [(1, 1, False), (2, 1, True), (3, 2, False), (4, 2, False), (5, 2, False), (6, 3, True)]


# ---------------------------------------------------------------- SQLAlchemy
class Base(DeclarativeBase):
    pass


class Project(Base):
    __tablename__ = "projects"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))


class Task(Base):
    __tablename__ = "tasks"
    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(SAForeignKey("projects.id"))
    done: Mapped[bool]


config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{FOLDER / 'projects.sqlite'}")

# start-example sqlalchemy
open_tasks = (
    select(func.count()).where(Task.project_id == Project.id, Task.done.is_(False)).correlate(Project).scalar_subquery()
)
projects = Resource(
    "projects",
    SQLAlchemyBackend(Project, config=config, computed={"open_tasks": open_tasks}),
    default_order=("-open_tasks",),  # a computed alias may be the default order too
)
# end-example sqlalchemy


# ---------------------------------------------------------------- Piccolo
engine = SQLiteEngine(path=str(FOLDER / "piccolo-projects.sqlite"))


class PiccoloProject(Table, db=engine, tablename="piccolo_projects"):
    id = Serial(primary_key=True)  # declared, so the computed column below can name it with its type
    name = Varchar(length=100)


class PiccoloTask(Table, db=engine, tablename="piccolo_tasks"):
    project = ForeignKey(PiccoloProject)
    done = Boolean()


# start-example piccolo
piccolo_open_tasks = QueryString(
    "(SELECT COUNT(*) FROM piccolo_tasks WHERE piccolo_tasks.project = {} AND NOT piccolo_tasks.done)",
    PiccoloProject.id,
)
piccolo_projects = Resource(
    "piccolo-projects",
    PiccoloBackend(PiccoloProject, engine=engine, computed={"open_tasks": (piccolo_open_tasks, Integer())}),
    default_order=("-open_tasks",),
)
# end-example piccolo


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        session.add_all([Project(id=id_, name=name) for id_, name in PROJECTS])
        session.add_all([Task(id=id_, project_id=project, done=done) for id_, project, done in TASKS])
        await session.commit()
    for table in (PiccoloTask, PiccoloProject):
        await table.alter().drop_table(if_exists=True)
    for table in (PiccoloProject, PiccoloTask):
        await table.create_table()
    await PiccoloProject.insert(*(PiccoloProject(id=id_, name=name) for id_, name in PROJECTS))
    await PiccoloTask.insert(*(PiccoloTask(id=id_, project=project, done=done) for id_, project, done in TASKS))


async def dispose() -> None:
    await config.get_engine().dispose()


app = Litestar(
    plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([projects, piccolo_projects])],
    on_startup=[seed],
    on_shutdown=[dispose],
)
