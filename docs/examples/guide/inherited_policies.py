"""Row policies that follow relations: invoices and their lines inherit their customer's (docs/guide/scoping.md).

The shape of the Chinook sample database: a customer belongs to a support representative, an invoice
to a customer, an invoice line to an invoice. Only the customer carries the tenant column.
"""

import tempfile
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult, DefineMiddleware
from sqlalchemy import ForeignKey, Numeric, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from litestar_listing import ListingPlugin, Resource, RowPolicy, tenant_scope
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend


class Base(DeclarativeBase):
    pass


class Customer(Base):
    __tablename__ = "customers"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    support_rep_id: Mapped[int | None]


class Invoice(Base):
    __tablename__ = "invoices"
    id: Mapped[int] = mapped_column(primary_key=True)
    customer_id: Mapped[int] = mapped_column(ForeignKey("customers.id"))
    total: Mapped[Decimal] = mapped_column(Numeric(10, 2))
    customer: Mapped[Customer] = relationship(lazy="raise")


class InvoiceLine(Base):
    __tablename__ = "invoice_lines"
    id: Mapped[int] = mapped_column(primary_key=True)
    invoice_id: Mapped[int] = mapped_column(ForeignKey("invoices.id"))
    track: Mapped[str] = mapped_column(String(100))
    invoice: Mapped[Invoice] = relationship(lazy="raise")


@dataclass
class Employee:
    id: int
    is_platform_admin: bool = False


EMPLOYEES = {"jane": Employee(3), "margaret": Employee(4), "root": Employee(1, is_platform_admin=True)}


class BearerAuthentication(AbstractAuthenticationMiddleware):
    """``Authorization: Bearer <name>``; no header means anonymous (user None)."""

    async def authenticate_request(self, connection: ASGIConnection[Any, Any, Any, Any]) -> AuthenticationResult:
        header = connection.headers.get("authorization")
        employee = None if header is None else EMPLOYEES.get(header.removeprefix("Bearer "))
        if header is not None and employee is None:
            raise NotAuthorizedException("unknown token")
        return AuthenticationResult(user=employee, auth=header)


config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{Path(tempfile.mkdtemp()) / 'sales.sqlite'}")

# start-example policies
policies = [
    # A support representative sees the customers they look after; an administrator sees all.
    RowPolicy(Customer, tenant_scope("support_rep_id", company_attribute="id")),
    RowPolicy(Invoice, through="customer"),  # an invoice is visible when its customer is
    RowPolicy(InvoiceLine, through="invoice"),  # a line when its invoice is, so when its customer is
]
invoices = Resource(
    "invoices",
    SQLAlchemyBackend(Invoice, config=config),
    filter_fields=("*", "customer__name"),
    order_fields=("*", "customer__name"),
    default_order=("id",),
)
invoice_lines = Resource(
    "invoice-lines",
    SQLAlchemyBackend(InvoiceLine, config=config),
    filter_fields=("*", "invoice__customer__name", "invoice__total"),
    order_fields=("*", "invoice__total"),
    default_order=("id",),
)
# end-example policies

CUSTOMERS = [(1, "Luís Gonçalves", 3), (2, "Leonie Köhler", 4), (3, "François Tremblay", 3), (4, "Bjørn Hansen", None)]
INVOICES = [(1, 1, "3.98"), (2, 2, "1.98"), (3, 3, "13.86"), (4, 4, "0.99"), (5, 1, "8.91")]
LINES = [
    (1, 1, "Balls to the Wall"),
    (2, 1, "Restless and Wild"),
    (3, 2, "Fast As a Shark"),
    (4, 3, "Princess of the Dawn"),
    (5, 4, "Put The Finger On You"),
    (6, 5, "Let's Get It Up"),
]


async def seed() -> None:
    async with config.get_engine().begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
    async with config.get_session() as session:
        session.add_all([Customer(id=id_, name=name, support_rep_id=rep) for id_, name, rep in CUSTOMERS])
        session.add_all(
            [Invoice(id=id_, customer_id=customer, total=Decimal(total)) for id_, customer, total in INVOICES]
        )
        session.add_all([InvoiceLine(id=id_, invoice_id=invoice, track=track) for id_, invoice, track in LINES])
        await session.commit()


async def dispose() -> None:
    await config.get_engine().dispose()


app = Litestar(
    plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([invoices, invoice_lines], policies=policies)],
    middleware=[DefineMiddleware(BearerAuthentication, exclude=["/schema"])],
    on_startup=[seed],
    on_shutdown=[dispose],
)
