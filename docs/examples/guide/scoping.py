"""Scopes and their forced filters: tenant scoping, per-user scoping and a custom scope rule (docs/guide/scoping.md)."""

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult, DefineMiddleware
from sqlalchemy import String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import ListingPlugin, Resource, ScopeRule, bearer_challenge, owner_scope, tenant_scope
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend


class Base(DeclarativeBase):
    pass


class Ticket(Base):
    __tablename__ = "tickets"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20))
    company_id: Mapped[int]
    owner_id: Mapped[int]


# start-example users
@dataclass
class User:
    id: int
    company_id: int | None
    is_platform_admin: bool = False
    statuses: tuple[str, ...] = ("open", "closed")


USERS = {
    "ann": User(id=1, company_id=1),  # Acme
    "bob": User(id=2, company_id=2, statuses=("open",)),  # Globex, sees open tickets only
    "root": User(id=9, company_id=None, is_platform_admin=True),
    "newcomer": User(id=5, company_id=None),  # not in any company yet
}


class BearerAuthentication(AbstractAuthenticationMiddleware):
    """``Authorization: Bearer <name>``; no header means anonymous (user None)."""

    async def authenticate_request(self, connection: ASGIConnection[Any, Any, Any, Any]) -> AuthenticationResult:
        header = connection.headers.get("authorization")
        if not header:
            return AuthenticationResult(user=None, auth=None)
        user = USERS.get(header.removeprefix("Bearer "))
        if user is None:
            raise NotAuthorizedException("unknown token")
        return AuthenticationResult(user=user, auth=header)


# end-example users


DATABASE = Path(tempfile.mkdtemp()) / "tickets.sqlite"
config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{DATABASE}")


# start-example custom
def visible_statuses(connection: ASGIConnection[Any, Any, Any, Any]) -> Mapping[str, object]:
    """A custom scope rule's build: a tuple value means membership (``status IN (...)``)."""
    user = connection.scope.get("user")
    if user is None:
        raise NotAuthorizedException("authentication is required")
    return {} if user.is_platform_admin else {"status": user.statuses}


status_scope = ScopeRule(fields=("status",), build=visible_statuses)
# end-example custom

# start-example resources
tickets = Resource(
    "tickets",
    SQLAlchemyBackend(Ticket, config=config),
    search_fields=("title",),
    default_order=("id",),
    scopes=(tenant_scope("company_id"), status_scope),
)
my_tickets = Resource(
    "my-tickets",
    SQLAlchemyBackend(Ticket, config=config),
    default_order=("id",),
    scopes=(owner_scope("owner_id"),),
)
tickets_any = Resource(
    "tickets-any",
    SQLAlchemyBackend(Ticket, config=config),
    default_order=("id",),
    combine="or",  # client filters are ORed; the forced filter is still ANDed outside them
    scopes=(tenant_scope("company_id"),),
)
# end-example resources


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        session.add_all(
            [
                Ticket(id=1, title="Printer on fire", status="open", company_id=1, owner_id=1),
                Ticket(id=2, title="VPN drops", status="closed", company_id=1, owner_id=3),
                Ticket(id=3, title="Printer jams", status="open", company_id=2, owner_id=2),
                Ticket(id=4, title="New laptop", status="closed", company_id=2, owner_id=2),
                Ticket(id=5, title="Printer toner", status="open", company_id=1, owner_id=1),
            ]
        )
        await session.commit()


async def dispose() -> None:
    await config.get_engine().dispose()


app = Litestar(
    plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([tickets, my_tickets, tickets_any])],
    middleware=[DefineMiddleware(BearerAuthentication, exclude=["/schema"])],
    exception_handlers={NotAuthorizedException: bearer_challenge("tickets")},
    on_startup=[seed],
    on_shutdown=[dispose],
)
