"""Piccolo tables of the conformance data set: the same tables, columns and relations as ``models.py``.

Foreign keys name their columns ``<relation>_id`` as the SQLAlchemy models do, so both backends
expose the same fields. ``parts`` has no Piccolo declaration on ``Thing``; the backend gets it as
``reverse={"parts": Part.thing}``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from piccolo.columns import (
    JSONB,
    M2M,
    UUID,
    BigInt,
    Boolean,
    Date,
    DoublePrecision,
    ForeignKey,
    Integer,
    LazyTableReference,
    Numeric,
    Secret,
    Text,
    Timestamptz,
    Varchar,
)
from piccolo.engine.base import Engine
from piccolo.table import Table

from tests.conformance.models import Status

__all__ = ("TABLES", "Company", "Part", "Role", "Tag", "Thing", "ThingTag", "User", "bound")


class Company(Table, tablename="companies"):
    id = Integer(primary_key=True)
    name = Varchar(length=100)
    founded = Date(null=True, default=None)
    profile = JSONB(null=True, default=None)


class Role(Table, tablename="roles"):
    id = Integer(primary_key=True)
    code = Varchar(length=50)
    label = Varchar(length=100, null=True)


class User(Table, tablename="users"):
    id = Integer(primary_key=True)
    name = Varchar(length=100)
    email = Varchar(length=200, null=True)
    company = ForeignKey(Company, null=True, db_column_name="company_id")
    role = ForeignKey(Role, null=True, db_column_name="role_id")
    manager: ForeignKey[User] = ForeignKey("self", null=True, db_column_name="manager_id")
    password_hash = Secret(length=200)  # type: ignore[no-untyped-call]


class Tag(Table, tablename="tags"):
    id = Integer(primary_key=True)
    name = Varchar(length=100)


class Thing(Table, tablename="things"):
    id = Integer(primary_key=True)
    name = Varchar(length=100, null=True, default=None)
    status = Varchar(length=20, choices=Status, null=True, default=None)
    quantity = BigInt(null=True, default=None)
    weight = DoublePrecision(null=True, default=None)
    price = Numeric(digits=(10, 2), null=True, default=None)
    active = Boolean(null=True, default=None)
    release_date = Date(null=True, default=None)
    created_at = Timestamptz()
    uid = UUID(null=True, default=None)
    note = Text(null=True, default=None)
    owner = ForeignKey(User, null=True, db_column_name="owner_id")
    reviewer = ForeignKey(User, null=True, db_column_name="reviewer_id")
    company = ForeignKey(Company, null=False, db_column_name="company_id")
    deleted_at = Timestamptz(null=True, default=None)
    attributes = JSONB(null=True, default=None)
    tags = M2M(LazyTableReference("ThingTag", module_path=__name__))


class ThingTag(Table, tablename="thing_tags"):
    thing = ForeignKey(Thing, db_column_name="thing_id")
    tag = ForeignKey(Tag, db_column_name="tag_id")


class Part(Table, tablename="parts"):
    id = Integer(primary_key=True)
    thing = ForeignKey(Thing, null=False, db_column_name="thing_id")
    name = Varchar(length=100)
    quantity = BigInt(null=True, default=None)
    supplier = ForeignKey(Company, null=True, db_column_name="supplier_id")


TABLES: tuple[type[Table], ...] = (Company, Role, User, Tag, Thing, ThingTag, Part)
"""Parents before children."""


@contextmanager
def bound(engine: Engine[Any]) -> Iterator[None]:
    """Point the tables' own engine at ``engine`` while test data is written with Piccolo's queries.

    The backend never needs this: it runs on the engine it is given.
    """
    previous = [table._meta._db for table in TABLES]
    for table in TABLES:
        table._meta.db = engine
    try:
        yield
    finally:
        for table, db in zip(TABLES, previous, strict=True):
            table._meta._db = db
