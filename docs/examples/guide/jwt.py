"""Scoping with Litestar's own JWTAuth: the user is a dict of the token's claims (docs/guide/scoping.md)."""

import tempfile
from pathlib import Path
from typing import Any

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.security.jwt import JWTAuth, Token
from sqlalchemy import String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import ListingPlugin, Resource, bearer_challenge, owner_scope, tenant_scope
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend


class Base(DeclarativeBase):
    pass


class Ticket(Base):
    __tablename__ = "tickets"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    company_id: Mapped[int]
    owner_id: Mapped[int]


DATABASE = Path(tempfile.mkdtemp()) / "jwt.sqlite"
config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{DATABASE}")


# start-example jwt
async def retrieve_user(token: Token, connection: ASGIConnection[Any, Any, Any, Any]) -> dict[str, Any]:
    """``request.user`` is this dict: the subject and the claims the token was issued with."""
    return {"id": int(token.sub), **token.extras}


jwt_auth = JWTAuth[dict[str, Any]](
    retrieve_user_handler=retrieve_user,
    token_secret="change me: a long random secret from your settings",  # noqa: S106
    exclude=["/schema"],
)

tickets = Resource(
    "tickets",
    SQLAlchemyBackend(Ticket, config=config),
    default_order=("id",),
    scopes=(tenant_scope("company_id"),),  # user["company_id"]; user["is_platform_admin"] skips it
)
my_tickets = Resource(
    "my-tickets",
    SQLAlchemyBackend(Ticket, config=config),
    default_order=("id",),
    scopes=(owner_scope("owner_id"),),  # user["id"]; administrators see every ticket too
)
# The token itself (request.auth) through a getter: its ``extras`` claims, without retrieve_user's dict.
by_claims = Resource(
    "tickets-by-claims",
    SQLAlchemyBackend(Ticket, config=config),
    default_order=("id",),
    scopes=(tenant_scope("company_id", user=lambda connection: connection.auth.extras),),
)
# end-example jwt


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        session.add_all(
            [
                Ticket(id=1, title="Printer on fire", company_id=1, owner_id=1),
                Ticket(id=2, title="VPN drops", company_id=1, owner_id=3),
                Ticket(id=3, title="Printer jams", company_id=2, owner_id=2),
                Ticket(id=4, title="New laptop", company_id=2, owner_id=2),
            ]
        )
        await session.commit()


async def dispose() -> None:
    await config.get_engine().dispose()


# start-example challenge
app = Litestar(
    plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([tickets, my_tickets, by_claims])],
    on_app_init=[jwt_auth.on_app_init],
    # Every 401, JWTAuth's and the scopes', says how to authenticate (RFC 9110, section 11.6.1).
    exception_handlers={NotAuthorizedException: bearer_challenge("tickets")},
    on_startup=[seed],
    on_shutdown=[dispose],
)
# end-example challenge
