"""Errors as RFC 9457 problem details with Litestar's ProblemDetailsPlugin, documented so (docs/guide/routes.md)."""

import tempfile
from pathlib import Path
from typing import Any

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from litestar.connection import ASGIConnection
from litestar.plugins.problem_details import ProblemDetailsConfig, ProblemDetailsPlugin
from sqlalchemy import String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import ListingPlugin, Resource, tenant_scope
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend


class Base(DeclarativeBase):
    pass


class Ticket(Base):
    __tablename__ = "tickets"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    company_id: Mapped[int]


USERS: dict[str, dict[str, object]] = {"ann": {"company_id": 1}, "guest": {"name": "guest"}}


def header_user(connection: ASGIConnection[Any, Any, Any, Any]) -> object:
    """The user named by ``X-User`` (a stand-in for real authentication); None: anonymous."""
    return USERS.get(connection.headers.get("x-user", ""))


DATABASE = Path(tempfile.mkdtemp()) / "tickets.sqlite"
config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{DATABASE}")

tickets = Resource(
    "tickets",
    SQLAlchemyBackend(Ticket, config=config),
    default_order=("id",),
    scopes=(tenant_scope("company_id", user=header_user),),  # may answer 401 and 403
)


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        session.add_all(
            [
                Ticket(id=1, title="Printer on fire", company_id=1),
                Ticket(id=2, title="VPN drops", company_id=2),
                Ticket(id=3, title="Printer jams", company_id=1),
            ]
        )
        await session.commit()


async def dispose() -> None:
    await config.get_engine().dispose()


# start-example app
app = Litestar(
    plugins=[
        SQLAlchemyPlugin(config=config),
        ListingPlugin([tickets]),
        # Every HTTPException (the listing's 400, 401, 403 and 503 included) as application/problem+json;
        # the listing reads this plugin when the app is built and documents the same bodies in OpenAPI.
        ProblemDetailsPlugin(ProblemDetailsConfig(enable_for_all_http_exceptions=True)),
    ],
    on_startup=[seed],
    on_shutdown=[dispose],
)
# end-example app
