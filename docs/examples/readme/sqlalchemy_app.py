from datetime import datetime

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar
from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from litestar_listing import ListingPlugin, Resource, tenant_scope
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend


class Base(DeclarativeBase):
    pass


class Airline(Base):
    __tablename__ = "airlines"
    carrier: Mapped[str] = mapped_column(String(2), primary_key=True)
    name: Mapped[str] = mapped_column(String(100))


class Flight(Base):
    __tablename__ = "flights"
    id: Mapped[int] = mapped_column(primary_key=True)
    tailnum: Mapped[str | None] = mapped_column(String(10))
    time_hour: Mapped[datetime]
    carrier: Mapped[str] = mapped_column(ForeignKey("airlines.carrier"))
    airline: Mapped[Airline] = relationship()


config = SQLAlchemyAsyncConfig(connection_string="sqlite+aiosqlite:///app.sqlite")
flights = Resource(
    "flights",  # GET /api/v1/flights/
    SQLAlchemyBackend(Flight, config=config),
    filter_fields=("*", "airline__*"),  # own columns, and the airline's columns
    order_fields=("*", "airline__name"),
    search_fields=("tailnum", "airline__name"),
    default_order=("-time_hour",),  # the primary key always breaks ties
    scopes=(tenant_scope("carrier", company_attribute="carrier"),),  # request.user.carrier
    load=("airline",),  # eager loading for the list action
)
app = Litestar(plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([flights])])
