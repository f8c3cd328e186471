"""SQLAlchemy and Piccolo introspection: which fields lead an index the model declares (``FieldInfo.indexed``).

Each expectation is read by hand off the declarations of the conformance, demo and local models
(comments say where from); no database is needed.
"""

from __future__ import annotations

from typing import Any

import pytest
from piccolo.columns import ForeignKey, Integer, Varchar
from piccolo.columns.indexes import IndexMethod
from piccolo.constraints import Unique
from piccolo.table import Table
from sqlalchemy import ForeignKey as ForeignKeyColumn
from sqlalchemy import Index, String, UniqueConstraint, func, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing.backends.piccolo.introspection import Tables
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend
from litestar_listing.backends.sqlalchemy.introspection import model_graph
from litestar_listing.core.schema import ModelGraph
from litestar_listing.demo import models as demo_models
from litestar_listing.demo import piccolo_tables as demo_tables
from tests.conformance import models, piccolo_tables
from tests.matrix import selected

sqlalchemy_only = pytest.mark.skipif(
    not selected(backend="sqlalchemy"), reason="the SQLAlchemy backend is not selected"
)
piccolo_only = pytest.mark.skipif(not selected(backend="piccolo"), reason="the Piccolo backend is not selected")


def indexed(graph: ModelGraph) -> dict[str, set[str]]:
    """Entity name -> the names of its indexed fields."""
    return {name: {f.name for f in entity.fields.values() if f.indexed} for name, entity in graph.entities.items()}


# The conformance models declare no index besides their single-column primary keys.
CONFORMANCE = {name: {"id"} for name in ("Thing", "User", "Company", "Role", "Tag", "Part")}


class StockBase(DeclarativeBase):
    """The local models' own metadata."""


class Stock(StockBase):
    """Every way a SQLAlchemy table declares an index, and indexes that serve no plain lookup."""

    __tablename__ = "indexed_stock"
    __table_args__ = (
        UniqueConstraint("shelf", "bin"),
        Index("ix_indexed_stock_aisle_row", "aisle", "row"),
        Index("ix_indexed_stock_placed", text('"placed" DESC NULLS LAST')),
    )

    warehouse: Mapped[int] = mapped_column(primary_key=True)
    sku: Mapped[int] = mapped_column(primary_key=True)
    shelf: Mapped[int] = mapped_column()
    bin: Mapped[int] = mapped_column()
    aisle: Mapped[int] = mapped_column()
    row: Mapped[int] = mapped_column()
    placed: Mapped[int] = mapped_column()
    serial: Mapped[str] = mapped_column(String, unique=True)
    label: Mapped[str] = mapped_column(String)
    weight: Mapped[int] = mapped_column()
    code: Mapped[str] = mapped_column(String)
    batch: Mapped[int] = mapped_column()
    note: Mapped[str] = mapped_column(String)


Index("ix_indexed_stock_lower_label", func.lower(Stock.label))
Index("ix_indexed_stock_weight", Stock.weight.desc().nulls_last())
Index("ix_indexed_stock_code", Stock.code, postgresql_using="hash")
Index("ix_indexed_stock_batch", Stock.batch, sqlite_where=Stock.batch > 0)


@sqlalchemy_only
def test_sqlalchemy_conformance_models_index_their_keys_only() -> None:
    assert indexed(model_graph(models.Thing)) == CONFORMANCE


@sqlalchemy_only
def test_sqlalchemy_demo_models() -> None:
    assert indexed(model_graph(demo_models.WatchedFlight)) == {
        # user_id leads (user_id, "created_at DESC", id), created_at ("created_at DESC", id); flight_id: its own.
        "WatchedFlight": {"id", "user_id", "created_at", "flight_id"},
        "DemoUser": {"id"},
        # tailnum, dest: index=True; carrier leads (carrier, tailnum), origin (origin, carrier); time_hour leads
        # "time_hour DESC", id; dep_delay "dep_delay DESC NULLS LAST", id (PostgreSQL) and "dep_delay DESC", id.
        # The trigram indexes (PostgreSQL's GIN over lower(column)) serve no ordering: not counted.
        "Flight": {"id", "carrier", "tailnum", "origin", "dest", "time_hour", "dep_delay"},
        "Airline": {"carrier"},
        "Airport": {"faa"},
        "Plane": {"tailnum"},
    }


@sqlalchemy_only
def test_sqlalchemy_declarations() -> None:
    # The first column of the key, of each unique constraint and of each index (a bare column
    # name in text too); not an expression over a column, a hash index nor a partial one.
    assert indexed(model_graph(Stock)) == {"Stock": {"warehouse", "shelf", "aisle", "placed", "serial", "weight"}}


@sqlalchemy_only
def test_sqlalchemy_computed_values_are_never_indexed() -> None:
    backend = SQLAlchemyBackend(models.Thing, computed={"key": models.Thing.id.expression})
    assert backend.model_graph().root_entity.fields["id"].indexed
    assert not backend.computed_fields()["key"].indexed


class Keeper(Table, tablename="indexed_keepers"):
    name = Varchar()


class Crate(Table, tablename="indexed_crates"):
    """Every way a Piccolo table declares an index, and a hash index."""

    code = Varchar(primary_key=True)
    serial = Varchar(unique=True)
    shelf = Integer(index=True)
    label = Varchar(index=True, index_method=IndexMethod.hash)
    aisle = Integer()
    row = Integer()
    note = Varchar()
    keeper = ForeignKey(Keeper, db_column_name="keeper_ref", index=True)
    aisle_row = Unique([aisle, row])


def _graph(table: type[Table], **reverse: Any) -> ModelGraph:
    return Tables(table, reverse=reverse).model_graph()


@piccolo_only
def test_piccolo_conformance_tables_index_their_keys_only() -> None:
    assert indexed(_graph(piccolo_tables.Thing, parts=piccolo_tables.Part.thing)) == CONFORMANCE


@piccolo_only
def test_piccolo_demo_tables() -> None:
    assert indexed(_graph(demo_tables.WatchedFlight)) == {
        "WatchedFlight": {"id", "user_id", "created_at", "flight_id"},  # user, created_at, flight: index=True
        "DemoUser": {"id"},
        # airline, plane, origin_airport, dest_airport, time_hour: index=True (stored as carrier, tailnum,
        # origin, dest), dep_delay: as the SQLAlchemy models, so both backends price a list alike.
        "Flight": {"id", "carrier", "tailnum", "origin", "dest", "time_hour", "dep_delay"},
        "Airline": {"carrier"},
        "Airport": {"faa"},
        "Plane": {"tailnum"},
    }


@piccolo_only
def test_piccolo_declarations() -> None:
    # The key, unique=True, a B-tree index=True (a foreign key under its column name), the first
    # column of Unique([...]); not a hash index nor a second column.
    assert indexed(_graph(Crate)) == {
        "Crate": {"code", "serial", "shelf", "keeper_ref", "aisle"},
        "Keeper": {"id"},
    }


# ------------------------------------------------------------------ the index advisor's table and column names


@sqlalchemy_only
def test_sqlalchemy_storage_names_tables_columns_and_relation_keys() -> None:
    from litestar_listing.backends.sqlalchemy.introspection import MappedStorage

    storage = MappedStorage(models.Thing)
    assert storage.table("Thing") == "things"
    assert storage.column("Thing", "owner_id") == "owner_id"
    assert storage.relation_key("Thing", "owner") == ("things", ("owner_id",))  # a to-one reference's column
    assert storage.relation_key("Thing", "parts") == ("parts", ("thing_id",))  # the related rows' key back
    # The joining table's key to things leads its primary key (thing_id, tag_id): nothing more is needed.
    assert storage.relation_key("Thing", "tags") is None
    assert storage.relation_key("User", "manager") == ("users", ("manager_id",))


class _Inherited(DeclarativeBase):
    pass


class Vehicle(_Inherited):
    __tablename__ = "vehicles"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(20))
    kind: Mapped[str] = mapped_column(String(20))
    __mapper_args__ = {"polymorphic_on": "kind", "polymorphic_identity": "vehicle"}


class Truck(Vehicle):
    __tablename__ = "trucks"
    id: Mapped[int] = mapped_column(ForeignKeyColumn("vehicles.id"), primary_key=True)
    load: Mapped[int]
    __mapper_args__ = {"polymorphic_identity": "truck"}


@sqlalchemy_only
def test_sqlalchemy_storage_leaves_out_inherited_columns() -> None:
    from litestar_listing.backends.sqlalchemy.introspection import MappedStorage

    storage = MappedStorage(Truck)
    assert storage.table("Truck") == "trucks"
    assert storage.column("Truck", "load") == "load"
    assert storage.column("Truck", "name") is None  # the parent's table holds it


@piccolo_only
def test_piccolo_storage_names_tables_columns_and_relation_keys() -> None:
    from litestar_listing.backends.piccolo.introspection import TableStorage

    storage = TableStorage(Tables(piccolo_tables.Thing, {"parts": piccolo_tables.Part.thing}))
    assert storage.table("Thing") == "things"
    assert storage.column("Thing", "owner_id") == "owner_id"
    assert storage.relation_key("Thing", "owner") == ("things", ("owner_id",))
    assert storage.relation_key("Thing", "parts") == ("parts", ("thing_id",))
