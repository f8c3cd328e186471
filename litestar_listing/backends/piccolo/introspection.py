"""Piccolo tables -> the engine's ``ModelGraph``, and the relation and field lookups the compiler uses.

Piccolo declares to-one relations as ``ForeignKey`` columns and many-to-many ones as ``M2M``; it has
no declaration for the reverse side of a foreign key, so a backend names those (``reverse=``).
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from piccolo.columns import (
    JSON,
    M2M,
    UUID,
    BigInt,
    BigSerial,
    Boolean,
    Column,
    Date,
    ForeignKey,
    Integer,
    Numeric,
    Real,
    Serial,
    SmallInt,
    Text,
    Timestamp,
    Timestamptz,
    Varchar,
)
from piccolo.columns.indexes import IndexMethod
from piccolo.constraints import Unique
from piccolo.table import Table

from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.schema import EntityInfo, FieldInfo, ModelGraph, RelationInfo, ValueType

__all__ = (
    "Relation",
    "TableInfo",
    "TableStorage",
    "Tables",
    "field_info",
    "field_name",
    "indexed_columns",
    "value_type",
)

# Subclasses before their bases: BigInt and SmallInt are Integers, BigSerial is a Serial.
_INTEGER_BITS: tuple[tuple[type[Column], int], ...] = (
    (BigInt, 64),
    (SmallInt, 16),
    (Integer, 32),
    (BigSerial, 64),
    (Serial, 32),
)


def value_type(column: Column) -> tuple[ValueType, dict[str, Any]] | None:
    """Map a column to a ``ValueType`` and extra ``FieldInfo`` arguments; None if unsupported."""
    if isinstance(column, ForeignKey):
        return value_type(column._foreign_key_meta.resolved_target_column)
    choices = column._meta.choices
    if isinstance(choices, type) and issubclass(choices, enum.Enum):
        return ValueType.ENUM, {"enum": choices}
    for kind, bits in _INTEGER_BITS:
        if isinstance(column, kind):
            return ValueType.INTEGER, {"bits": bits}
    simple: tuple[tuple[type[Column], ValueType], ...] = (
        (Boolean, ValueType.BOOLEAN),
        (Real, ValueType.FLOAT),  # Real, Float and DoublePrecision
        (Numeric, ValueType.DECIMAL),  # Numeric and Decimal
        (Date, ValueType.DATE),
        (UUID, ValueType.UUID),
        (Varchar, ValueType.TEXT),  # Varchar, Email and Secret
        (Text, ValueType.TEXT),
        (JSON, ValueType.JSON),  # JSON and JSONB
    )
    for kind, mapped in simple:
        if isinstance(column, kind):
            return mapped, {}
    if isinstance(column, Timestamptz):
        return ValueType.DATETIME, {"timezone": True}
    if isinstance(column, Timestamp):
        return ValueType.DATETIME, {"timezone": False}
    return None


def field_name(column: Column) -> str:
    """The field a column is exposed as: its attribute name, except for a foreign key.

    A ``ForeignKey`` attribute names the relation (``owner`` in ``owner__name``), so its stored value
    is exposed under its column name (``owner_id`` for ``ForeignKey(User, db_column_name="owner_id")``),
    as the row holds it and as a SQLAlchemy model of the same table names it.
    """
    return column._meta.db_column_name if isinstance(column, ForeignKey) else column._meta.name


def field_info(
    name: str, column: Column, *, computed: bool = False, indexed: bool = False, reads: tuple[str, ...] = ()
) -> FieldInfo:
    """Describe a column, or the type of a computed expression (``reads``: the tables a ``Computed`` value reads).

    ``indexed`` is the caller's: see ``indexed_columns``.

    Raises:
        TypeError: Its column type has no ``ValueType``.
    """
    mapped = value_type(column)
    if mapped is None:
        msg = f"{name!r} is a {type(column).__name__} column, which cannot be listed on"
        raise TypeError(msg)
    kind, extra = mapped
    return FieldInfo(
        name,
        kind,
        nullable=bool(column._meta.null),
        private=bool(column._meta.secret),
        computed=computed,
        indexed=indexed,
        reads=reads,
        **extra,
    )


def indexed_columns(table: type[Table]) -> frozenset[str]:
    """The database names of the columns of ``table`` that lead an index it declares (``FieldInfo.indexed``).

    The primary key, every ``unique=True`` column, every ``index=True`` column of a B-tree index
    (a hash, GIN or GiST index serves no range nor ordering), and the first column of each
    ``Unique([...])`` constraint. Indexes the database has but the table does not declare are not seen.
    """
    leading: set[str] = set()
    for column in table._meta.columns:
        meta = column._meta
        if meta.primary_key or meta.unique or (meta.index and meta.index_method == IndexMethod.btree):
            leading.add(meta.db_column_name)
    for constraint in table._meta.constraints:
        if isinstance(constraint, Unique):
            first = constraint.columns[0]
            leading.add(first._meta.db_column_name if isinstance(first, Column) else first)
    return frozenset(leading)


@dataclass(frozen=True, slots=True)
class Relation:
    """One relation of a table, as the compiler follows it.

    Attributes:
        kind: ``"fk"`` (to-one), ``"m2m"`` or ``"reverse"`` (to-many).
        target: The related table.
        column: ``fk``: the foreign key itself. ``m2m``: the joining table's key to this table.
            ``reverse``: the related table's key to this table.
        secondary: ``m2m`` only: the joining table's key to ``target``.
    """

    kind: Literal["fk", "m2m", "reverse"]
    target: type[Table]
    column: ForeignKey[Any]
    secondary: ForeignKey[Any] | None = None

    @property
    def to_many(self) -> bool:
        """True for ``m2m`` and ``reverse``."""
        return self.kind != "fk"

    @property
    def link_table(self) -> type[Table]:
        """The table whose rows link the two sides: the joining table, the related table, or this one."""
        return self.column._meta.table

    @property
    def key(self) -> Column:
        """This side's column the link points at (usually its primary key)."""
        return self.column._foreign_key_meta.resolved_target_column


@dataclass(frozen=True, slots=True)
class TableInfo:
    """What the compiler needs of one table.

    Attributes:
        table: The Piccolo table.
        fields: Listable columns by field name (see ``field_name``), private ones included.
        public: The field names of the non-private ones, in declaration order.
        relations: Relations by name.
    """

    table: type[Table]
    fields: Mapping[str, Column]
    public: tuple[str, ...]
    relations: Mapping[str, Relation]


class Tables:
    """Every table reachable from a root table, described once.

    Args:
        root: The listed table.
        reverse: Reverse relations by name, each given as the foreign key that points back, e.g.
            ``{"parts": Part.thing}`` adds ``parts`` to the table ``Part.thing`` references.

    Raises:
        ConfigurationError: A reverse relation is not a foreign key, or two names collide.
    """

    def __init__(self, root: type[Table], reverse: Mapping[str, ForeignKey[Any]] | None = None) -> None:
        self.root = root
        reverse_by_table: dict[type[Table], dict[str, Relation]] = {}
        for name, key in (reverse or {}).items():
            given: object = key  # checked at run time too: a table or a plain column is a common slip
            if not isinstance(given, ForeignKey):
                msg = f"reverse relation {name!r} must be given as a ForeignKey column, not {key!r}"
                raise ConfigurationError(msg)
            target = key._meta.table
            reverse_by_table.setdefault(key._foreign_key_meta.resolved_references, {})[name] = Relation(
                "reverse", target, key
            )
        self.info: dict[type[Table], TableInfo] = {}
        pending: deque[type[Table]] = deque([root])
        while pending:
            table = pending.popleft()
            if table in self.info:
                continue
            info = self._describe(table, reverse_by_table.get(table, {}))
            self.info[table] = info
            pending.extend(relation.target for relation in info.relations.values())

    @staticmethod
    def _describe(table: type[Table], reverse: Mapping[str, Relation]) -> TableInfo:
        fields: dict[str, Column] = {}
        relations: dict[str, Relation] = {}
        for column in table._meta.columns:
            if isinstance(column, ForeignKey):
                relations[column._meta.name] = Relation("fk", column._foreign_key_meta.resolved_references, column)
            if value_type(column) is not None:
                fields[field_name(column)] = column
        for m2m in table._meta.m2m_relationships:
            relations[m2m._meta.name] = _m2m_relation(m2m)
        for name, relation in reverse.items():
            if name in relations or name in fields:
                msg = f"reverse relation {name!r} collides with {table.__name__}.{name}"
                raise ConfigurationError(msg)
            relations[name] = relation
        public = tuple(name for name, column in fields.items() if not column._meta.secret)
        return TableInfo(table, fields, public, relations)

    def model_graph(self) -> ModelGraph:
        """The engine's view: entities named by class name."""
        entities: dict[str, EntityInfo] = {}
        for table, info in self.info.items():
            leading = indexed_columns(table)
            fields = {
                name: field_info(name, column, indexed=column._meta.db_column_name in leading)
                for name, column in info.fields.items()
            }
            relations = {
                name: RelationInfo(name, relation.target.__name__, to_many=relation.to_many)
                for name, relation in info.relations.items()
            }
            pk = (field_name(table._meta.primary_key),)
            entities[table.__name__] = EntityInfo(table.__name__, fields, relations, pk)
        return ModelGraph(self.root.__name__, entities)


def _m2m_relation(m2m: M2M) -> Relation:
    meta = m2m._meta
    return Relation("m2m", meta.secondary_table, meta.primary_foreign_key, meta.secondary_foreign_key)


class TableStorage:
    """The tables and columns of ``Tables`` (``core.indexes.IndexStorage``)."""

    def __init__(self, tables: Tables) -> None:
        self._info = {table.__name__: info for table, info in tables.info.items()}

    def table(self, entity: str) -> str:  # noqa: D102
        return str(self._info[entity].table._meta.tablename)

    def column(self, entity: str, field: str) -> str | None:  # noqa: D102
        column = self._info[entity].fields.get(field)
        return None if column is None else str(column._meta.db_column_name)

    def row_key(self, entity: str) -> str | None:
        """The primary key column that is SQLite's rowid: a ``Serial`` or an ``Integer`` one."""
        key = self._info[entity].table._meta.primary_key
        return str(key._meta.db_column_name) if isinstance(key, (Serial, Integer)) else None

    def relation_key(self, entity: str, relation: str) -> tuple[str, tuple[str, ...]] | None:  # noqa: D102
        key = self._info[entity].relations[relation].column
        if key._meta.primary_key:
            return None
        return str(key._meta.table._meta.tablename), (str(key._meta.db_column_name),)
