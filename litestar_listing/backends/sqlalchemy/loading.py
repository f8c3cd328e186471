"""Eager loading on SQLAlchemy: loader options that keep to the row policies, and items of ORM instances.

Items that need no ORM instance are built from plain rows instead (``rows``; docs: eager loading).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import inspect
from sqlalchemy.orm import joinedload, selectinload

from litestar_listing.backends.sqlalchemy.introspection import public_columns
from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.query import LOOKUP_SEP, ListQuery

if TYPE_CHECKING:
    from sqlalchemy.orm.strategy_options import _AbstractLoad

    from litestar_listing.backends.sqlalchemy.compiler import StatementCompiler

__all__ = ("as_dict", "loader_options")


def loader_options(
    model: type[Any], load: Sequence[str], compiler: StatementCompiler, query: ListQuery
) -> list[_AbstractLoad]:
    """Eager-loading options; a loaded relation only loads the rows inside its model's row policy."""
    policies = compiler.policies(query)
    options: list[_AbstractLoad] = []
    for name in load:
        entity: Any = model
        option: Any = None
        for step in name.split(LOOKUP_SEP):
            relationship = inspect(entity).mapper.relationships.get(step)
            if relationship is None:
                msg = f"cannot eager-load {name!r}: {entity.__name__} has no relation {step!r}"
                raise ConfigurationError(msg)
            # select-in for to-many (one query per relation for the whole page), joined for to-one.
            strategy = selectinload if relationship.uselist else joinedload
            attribute = getattr(entity, step)
            target = relationship.mapper.class_
            allowed = compiler.policy_condition((target, ()), target.__name__, policies)
            if allowed is not None:  # a to-one row outside it loads as null
                attribute = attribute.and_(allowed)
            option = strategy(attribute) if option is None else getattr(option, strategy.__name__)(attribute)
            entity = relationship.mapper.class_
        options.append(option)
    return options


def as_dict(instance: Any, load_tree: Mapping[str, Any]) -> dict[str, Any]:
    """The public columns of ``instance`` and its loaded relations of ``load_tree``, nested."""
    item = {key: getattr(instance, key) for key in public_columns(type(instance))}
    for name, subtree in load_tree.items():
        value = getattr(instance, name)
        if value is None:
            item[name] = None
        elif isinstance(value, (list, tuple, set)):
            item[name] = [as_dict(child, subtree) for child in value]
        else:
            item[name] = as_dict(value, subtree)
    return item
