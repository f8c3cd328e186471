"""SQLAlchemy mapped classes -> the engine's ``ModelGraph`` (fields, types, relations, keys)."""

from __future__ import annotations

from collections import deque
from typing import Any

from sqlalchemy import inspect
from sqlalchemy import types as sa_types
from sqlalchemy.orm import ColumnProperty, Mapper
from sqlalchemy.sql.elements import ColumnElement

from litestar_listing.core.schema import EntityInfo, FieldInfo, ModelGraph, RelationInfo, ValueType

__all__ = (
    "attribute_key",
    "field_info",
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
    return None


def field_info(
    name: str, column: ColumnElement[Any], *, private: bool = False, computed: bool = False, reads: tuple[str, ...] = ()
) -> FieldInfo:
    """Describe a column or a computed expression (``reads``: the models a ``Computed`` value reads).

    Raises:
        TypeError: Its SQL type has no ``ValueType``.
    """
    mapped = value_type(column.type)
    if mapped is None:
        msg = f"{name!r} has the SQL type {column.type!r}, which cannot be listed on"
        raise TypeError(msg)
    kind, extra = mapped
    nullable = bool(getattr(column, "nullable", True))
    return FieldInfo(name, kind, nullable=nullable, private=private, computed=computed, reads=reads, **extra)


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
    for prop in mapper.column_attrs:
        if not isinstance(prop, ColumnProperty) or len(prop.columns) != 1:
            continue
        try:
            fields[prop.key] = field_info(prop.key, prop.columns[0], private=is_private(prop))
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
