"""SQLAlchemy mapped classes -> the engine's ``ModelGraph`` (fields, types, relations, keys)."""

from __future__ import annotations

import re
from collections import deque
from typing import Any

from sqlalchemy import Column, Index, Table, UniqueConstraint, inspect
from sqlalchemy import types as sa_types
from sqlalchemy.dialects import sqlite
from sqlalchemy.orm import ColumnProperty, Mapper, RelationshipDirection
from sqlalchemy.sql import operators
from sqlalchemy.sql.elements import ColumnElement, TextClause, UnaryExpression

from litestar_listing.core.schema import EntityInfo, FieldInfo, ModelGraph, RelationInfo, ValueType

__all__ = (
    "MappedStorage",
    "attribute_key",
    "field_info",
    "indexed_columns",
    "is_private",
    "model_graph",
    "primary_key_names",
    "public_columns",
    "value_type",
)

_INTEGER_BITS = ((sa_types.SmallInteger, 16), (sa_types.BigInteger, 64), (sa_types.Integer, 32))


def value_type(column_type: sa_types.TypeEngine[Any]) -> tuple[ValueType, dict[str, Any]] | None:
    """Map a column type to a ``ValueType`` and extra ``FieldInfo`` arguments; None if unsupported."""
    if isinstance(column_type, sa_types.TypeDecorator):
        return value_type(column_type.impl_instance)
    if isinstance(column_type, sa_types.Enum):
        if column_type.enum_class is not None:
            return ValueType.ENUM, {"enum": column_type.enum_class}
        return ValueType.TEXT, {}
    if isinstance(column_type, sa_types.Boolean):
        return ValueType.BOOLEAN, {}
    for kind, bits in _INTEGER_BITS:
        if isinstance(column_type, kind):
            return ValueType.INTEGER, {"bits": bits}
    if isinstance(column_type, sa_types.Float):
        return ValueType.FLOAT, {}
    if isinstance(column_type, sa_types.Numeric):
        return (ValueType.DECIMAL if column_type.asdecimal else ValueType.FLOAT), {}
    if isinstance(column_type, sa_types.DateTime):
        return ValueType.DATETIME, {"timezone": bool(column_type.timezone)}
    if isinstance(column_type, sa_types.Date):
        return ValueType.DATE, {}
    if isinstance(column_type, sa_types.Uuid):
        return ValueType.UUID, {}
    if isinstance(column_type, sa_types.String):
        return ValueType.TEXT, {}
    if isinstance(column_type, sa_types.JSON):  # PostgreSQL's JSONB too
        return ValueType.JSON, {}
    return None


def field_info(
    name: str,
    column: ColumnElement[Any],
    *,
    private: bool = False,
    computed: bool = False,
    indexed: bool = False,
    reads: tuple[str, ...] = (),
) -> FieldInfo:
    """Describe a column or a computed expression (``reads``: the models a ``Computed`` value reads).

    ``indexed`` is the caller's: see ``indexed_columns``.

    Raises:
        TypeError: Its SQL type has no ``ValueType``.
    """
    mapped = value_type(column.type)
    if mapped is None:
        msg = f"{name!r} has the SQL type {column.type!r}, which cannot be listed on"
        raise TypeError(msg)
    kind, extra = mapped
    nullable = bool(getattr(column, "nullable", True))
    return FieldInfo(
        name, kind, nullable=nullable, private=private, computed=computed, indexed=indexed, reads=reads, **extra
    )


_ORDERING = frozenset({operators.asc_op, operators.desc_op, operators.nulls_first_op, operators.nulls_last_op})
# ``Index("ix", text("time_hour DESC"))``: a column name with an optional direction, nothing else.
_NAMED_COLUMN = re.compile(
    r'\s*(?:"(?P<quoted>[^"]+)"|(?P<name>\w+))(?:\s+(?:ASC|DESC))?(?:\s+NULLS\s+(?:FIRST|LAST))?\s*', re.IGNORECASE
)


def _leading_column(table: Table, expression: Any) -> Column[Any] | None:
    """The column an index expression is, ordering aside; None for any other expression."""
    while isinstance(expression, UnaryExpression) and expression.modifier in _ORDERING:
        expression = expression.element
    if isinstance(expression, TextClause):
        match = _NAMED_COLUMN.fullmatch(expression.text)
        name = match and (match["quoted"] or match["name"])
        return table.c.get(name) if name else None
    return expression if isinstance(expression, Column) and expression.table is table else None


def _ordered_and_total(index: Index) -> bool:
    """Whether ``index`` is a B-tree over every row: no ``<dialect>_where`` and no other ``<dialect>_using``."""
    for option, value in index.dialect_kwargs.items():
        if value is None:
            continue
        if option.endswith("_where") or (option.endswith("_using") and str(value).lower() != "btree"):
            return False
    return True


def indexed_columns(table: Table) -> frozenset[Column[Any]]:
    """The columns of ``table`` that lead an index it declares (``FieldInfo.indexed``).

    The primary key's first column, the first column of each unique constraint (``unique=True``
    included), and the first expression of each index (``index=True`` included) when it is a column,
    possibly ordered, and the index is a total B-tree. Indexes the database has but the table does
    not declare are not seen.
    """
    leading: set[Column[Any]] = set()
    key = table.primary_key
    if key.columns:
        # The DDL of an implicit key puts its autoincrement column first (SQLAlchemy's compiler does).
        ordered = key.columns_autoinc_first if key._implicit_generated else list(key.columns)  # noqa: SLF001
        leading.add(ordered[0])
    for constraint in table.constraints:
        if isinstance(constraint, UniqueConstraint) and constraint.columns:
            leading.add(next(iter(constraint.columns)))
    for index in table.indexes:
        if index.expressions and _ordered_and_total(index):
            column = _leading_column(table, index.expressions[0])
            if column is not None:
                leading.add(column)
    return frozenset(leading)


def is_private(prop: ColumnProperty[Any]) -> bool:
    """Whether a column is marked ``info={"private": True}`` (on the column or the attribute)."""
    return bool(prop.columns[0].info.get("private") or prop.info.get("private"))


_PUBLIC_COLUMNS: dict[type[Any], tuple[str, ...]] = {}


def public_columns(model: type[Any]) -> tuple[str, ...]:
    """The attribute names of ``model``'s non-private columns, in mapping order (cached per class)."""
    names = _PUBLIC_COLUMNS.get(model)
    if names is None:
        names = _PUBLIC_COLUMNS[model] = tuple(prop.key for prop in inspect(model).column_attrs if not is_private(prop))
    return names


def attribute_key(entity: Any, column: Any) -> str:
    """The attribute name under which ``entity`` (a mapped class or an alias of one) maps ``column``."""
    return str(inspect(entity).mapper.get_property_by_column(column).key)


def primary_key_names(mapper: Mapper[Any]) -> tuple[str, ...]:
    """The attribute names of ``mapper``'s primary key columns, in key order."""
    return tuple(mapper.get_property_by_column(column).key for column in mapper.primary_key)


def _entity(mapper: Mapper[Any]) -> EntityInfo:
    fields: dict[str, FieldInfo] = {}
    leading: dict[Table, frozenset[Column[Any]]] = {}
    for prop in mapper.column_attrs:
        if not isinstance(prop, ColumnProperty) or len(prop.columns) != 1:
            continue
        column = prop.columns[0]
        table = getattr(column, "table", None)
        indexed = False
        if isinstance(table, Table):
            if table not in leading:
                leading[table] = indexed_columns(table)
            indexed = column in leading[table]
        try:
            fields[prop.key] = field_info(prop.key, column, private=is_private(prop), indexed=indexed)
        except TypeError:
            continue
    relations = {
        rel.key: RelationInfo(rel.key, rel.mapper.class_.__name__, to_many=bool(rel.uselist))
        for rel in mapper.relationships
    }
    pk = primary_key_names(mapper)
    return EntityInfo(mapper.class_.__name__, fields, relations, pk)


def model_graph(model: type[Any]) -> ModelGraph:
    """Describe ``model`` and every mapped class reachable from it through relationships."""
    root: Mapper[Any] = inspect(model)
    entities: dict[str, EntityInfo] = {}
    pending: deque[Mapper[Any]] = deque([root])
    while pending:
        mapper = pending.popleft()
        name = mapper.class_.__name__
        if name in entities:
            continue
        entities[name] = _entity(mapper)
        pending.extend(rel.mapper for rel in mapper.relationships)
    return ModelGraph(root.class_.__name__, entities)


def _led_by_primary_key(columns: list[Column[Any]]) -> bool:
    table = columns[0].table
    leading = list(table.primary_key.columns)[: len(columns)] if isinstance(table, Table) else []
    return [column.name for column in leading] == [column.name for column in columns]


class MappedStorage:
    """The tables and columns of a mapped class and the classes it reaches (``core.indexes.IndexStorage``)."""

    def __init__(self, model: type[Any]) -> None:
        self._mappers: dict[str, Mapper[Any]] = {}
        pending: deque[Mapper[Any]] = deque([inspect(model)])
        while pending:
            mapper = pending.popleft()
            if mapper.class_.__name__ not in self._mappers:
                self._mappers[mapper.class_.__name__] = mapper
                pending.extend(rel.mapper for rel in mapper.relationships)

    def table(self, entity: str) -> str:  # noqa: D102
        return str(self._mappers[entity].local_table.name)  # type: ignore[attr-defined]

    def column(self, entity: str, field: str) -> str | None:
        """The column of ``field`` in the entity's own table; None for an expression or another table's column.

        A model of joined-table inheritance reads inherited fields from its parent's table: no index of
        its own table holds them.
        """
        mapper = self._mappers[entity]
        prop = mapper.attrs.get(field)
        if not isinstance(prop, ColumnProperty) or len(prop.columns) != 1:
            return None
        column = prop.columns[0]
        return str(column.name) if isinstance(column, Column) and column.table is mapper.local_table else None

    def row_key(self, entity: str) -> str | None:
        """The primary key column that is SQLite's rowid: the only one, declared ``INTEGER`` there."""
        keys = list(self._mappers[entity].local_table.primary_key.columns)  # type: ignore[attr-defined]
        if len(keys) != 1 or keys[0].type.compile(dialect=sqlite.dialect()) != "INTEGER":
            return None
        return str(keys[0].name)

    def relation_key(self, entity: str, relation: str) -> tuple[str, tuple[str, ...]] | None:  # noqa: D102
        rel = self._mappers[entity].relationships[relation]
        if rel.direction is RelationshipDirection.MANYTOMANY:
            columns = [secondary for _, secondary in rel.synchronize_pairs]
        elif rel.direction is RelationshipDirection.MANYTOONE:
            columns = [local for local, _ in rel.local_remote_pairs]
        else:
            columns = [remote for _, remote in rel.local_remote_pairs]
        stored = [column for column in columns if isinstance(column, Column)]
        if not stored or len(stored) != len(columns) or len({column.table.name for column in stored}) != 1:
            return None
        if _led_by_primary_key(stored):
            return None
        return str(stored[0].table.name), tuple(str(column.name) for column in stored)
