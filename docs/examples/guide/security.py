"""Limits and security: bounds, private fields, literal text, timeouts (docs/guide/security.md)."""

import tempfile
from pathlib import Path

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from sqlalchemy import String, func, literal, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import Limits, ListingPlugin, Resource
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend, prepare_engine


class Base(DeclarativeBase):
    pass


class Account(Base):
    __tablename__ = "accounts"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    discount: Mapped[str] = mapped_column(String(20))
    password_hash: Mapped[str] = mapped_column(String(200), info={"private": True})


LOCKED = "!"  # no usable password
DATABASE = Path(tempfile.mkdtemp()) / "accounts.sqlite"
config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{DATABASE}")

# start-example limits
accounts = Resource(
    "accounts",
    SQLAlchemyBackend(Account, config=config),
    search_fields=("name", "discount"),
    default_order=("id",),
    limits=Limits(max_count=20, max_in_values=10, max_search_length=50, max_pattern_length=50, max_filters=5),
)
# end-example limits

# start-example timeout
# SQLite has no statement timeout of its own: the guard stops any statement of this engine
# after 0.5 s. Call it before the first connection; the plugin's own call then keeps this limit.
prepare_engine(config.get_engine(), statement_timeout=0.5)

numbers = select(literal(1).label("n")).cte(recursive=True)
numbers = numbers.union_all(select(numbers.c.n + 1).where(numbers.c.n < 100_000_000))
slow_total = select(func.count()).select_from(numbers).scalar_subquery()  # seconds of work per row

reports = Resource(
    "reports",
    SQLAlchemyBackend(Account, config=config, computed={"slow_total": slow_total}),
    timeout=0.5,  # seconds for page, total and eager loading together; past it: 503
)
# end-example timeout


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        session.add_all(
            [
                Account(id=1, name="Ada", discount="50%", password_hash=LOCKED),
                Account(id=2, name="Bea", discount="5 percent", password_hash=LOCKED),
                Account(id=3, name="Cy_", discount="none", password_hash=LOCKED),
            ]
        )
        await session.commit()


async def dispose() -> None:
    await config.get_engine().dispose()


app = Litestar(
    plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([accounts, reports])],
    on_startup=[seed],
    on_shutdown=[dispose],
)
