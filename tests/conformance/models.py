"""SQLAlchemy models of the conformance data set: things with owners, tags, parts and companies.

Every relation is ``lazy="raise"`` so a backend that touches an unloaded relation fails loudly.
"""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from decimal import Decimal
from typing import Any

from advanced_alchemy.types import DateTimeUTC
from sqlalchemy import JSON, BigInteger, Column, ForeignKey, Numeric, String, Table, Text, Uuid
from sqlalchemy import Enum as SAEnum
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

__all__ = ("Company", "ConformanceBase", "Part", "Role", "Status", "Tag", "Thing", "User", "thing_tags")


class ConformanceBase(DeclarativeBase):
    """The declarative base of the conformance models only (its own metadata)."""


class Status(str, enum.Enum):
    """A thing's life-cycle state; stored as its value."""

    DRAFT = "draft"
    ACTIVE = "active"
    ARCHIVED = "archived"


def _enum_values(enum_type: type[enum.Enum]) -> list[str]:
    return [str(member.value) for member in enum_type]


thing_tags = Table(
    "thing_tags",
    ConformanceBase.metadata,
    Column("thing_id", ForeignKey("things.id"), primary_key=True),
    Column("tag_id", ForeignKey("tags.id"), primary_key=True),
)
"""The many-to-many association of things and tags."""


DOCUMENT = JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
"""A JSON document: ``jsonb`` on PostgreSQL, JSON text on SQLite; Python's None is SQL NULL."""


class Company(ConformanceBase):
    """A tenant; also the supplier of parts."""

    __tablename__ = "companies"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(100))
    founded: Mapped[dt.date | None] = mapped_column()
    profile: Mapped[dict[str, Any] | None] = mapped_column(DOCUMENT)


class Role(ConformanceBase):
    """A user's role."""

    __tablename__ = "roles"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    code: Mapped[str] = mapped_column(String(50))
    label: Mapped[str | None] = mapped_column(String(100))


class User(ConformanceBase):
    """An owner or reviewer of things; ``manager`` points to another user."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(100))
    email: Mapped[str | None] = mapped_column(String(200))
    company_id: Mapped[int | None] = mapped_column(ForeignKey("companies.id"))
    role_id: Mapped[int | None] = mapped_column(ForeignKey("roles.id"))
    manager_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    password_hash: Mapped[str] = mapped_column(String(200), info={"private": True})

    company: Mapped[Company | None] = relationship(lazy="raise")
    role: Mapped[Role | None] = relationship(lazy="raise")
    manager: Mapped[User | None] = relationship(lazy="raise", remote_side="User.id")


class Tag(ConformanceBase):
    """A label attached to things (many-to-many)."""

    __tablename__ = "tags"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(100))


class Part(ConformanceBase):
    """A component of one thing (one-to-many), optionally supplied by a company."""

    __tablename__ = "parts"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    thing_id: Mapped[int] = mapped_column(ForeignKey("things.id"))
    name: Mapped[str] = mapped_column(String(100))
    quantity: Mapped[int | None] = mapped_column(BigInteger)
    supplier_id: Mapped[int | None] = mapped_column(ForeignKey("companies.id"))

    supplier: Mapped[Company | None] = relationship(lazy="raise")


class Thing(ConformanceBase):
    """The listed model: one column of every value type, NULLable except ``created_at``."""

    __tablename__ = "things"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    name: Mapped[str | None] = mapped_column(String(100))
    status: Mapped[Status | None] = mapped_column(
        SAEnum(Status, native_enum=False, values_callable=_enum_values, length=20)
    )
    quantity: Mapped[int | None] = mapped_column(BigInteger)
    weight: Mapped[float | None] = mapped_column()
    price: Mapped[Decimal | None] = mapped_column(Numeric(10, 2))
    active: Mapped[bool | None] = mapped_column()
    release_date: Mapped[dt.date | None] = mapped_column()
    created_at: Mapped[dt.datetime] = mapped_column(DateTimeUTC(timezone=True))
    uid: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    note: Mapped[str | None] = mapped_column(Text)
    owner_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    reviewer_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    company_id: Mapped[int] = mapped_column(ForeignKey("companies.id"))
    deleted_at: Mapped[dt.datetime | None] = mapped_column(DateTimeUTC(timezone=True))
    attributes: Mapped[dict[str, Any] | None] = mapped_column(DOCUMENT)

    owner: Mapped[User | None] = relationship(lazy="raise", foreign_keys=[owner_id])
    reviewer: Mapped[User | None] = relationship(lazy="raise", foreign_keys=[reviewer_id])
    company: Mapped[Company] = relationship(lazy="raise")
    tags: Mapped[list[Tag]] = relationship(secondary=thing_tags, lazy="raise", order_by=Tag.id)
    parts: Mapped[list[Part]] = relationship(lazy="raise", order_by=Part.id)
