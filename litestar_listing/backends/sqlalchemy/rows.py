"""Items from plain rows: the page statement run as SQL, its rows turned into items without ORM instances.

Loading ORM entities (identity map, instance state, joined-eager-load adaptation) costs more than
the statement on a small page. When the resource's items need no instance (no ``to_item``) and its
eager loads are to-one, the page selects the listed columns, and each loaded relation's columns
through a LEFT OUTER JOIN under its model's row policy (as ``joinedload(...and_(allowed))`` would),
and the items are built from the row tuples: the same keys, in the same order, with the same
values (the columns' types process them in either case).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, inspect
from sqlalchemy.orm import Mapper, aliased

from litestar_listing.backends.sqlalchemy.introspection import attribute_key, primary_key_names, public_columns
from litestar_listing.core.query import load_tree

__all__ = ("RowPlan", "row_plan")

BY_POSITION = {"_result_disable_adapt_to_context": True}
"""Execution options of a statement whose rows are read by position only.

A statement equal to one already compiled reuses the cached compilation; SQLAlchemy then maps each
of the new statement's column objects to the cached result columns (column comparisons, about 0.3
ms for a page of the demo's flights), which only a lookup by column object needs. The ORM sets the
same option on its own statements.
"""

PolicyOn = Callable[[Any, type[Any]], "ColumnElement[bool] | None"]
"""The row policy condition of a model (the class) on an entity (its alias), or None for none."""


@dataclass(frozen=True)
class _Relation:
    """A loaded to-one relation: its join, its columns in the row, and the relations loaded through it."""

    key: str
    target: type[Any]
    alias: Any  # the target's alias in the page statement (one per plan: the compiler's aliases are its own)
    onclause: ColumnElement[bool]  # the relation's join condition on the alias
    names: tuple[str, ...]  # the target's public columns, selected first
    columns: tuple[ColumnElement[Any], ...]  # those, then its primary key: all NULL means no related row
    children: tuple[_Relation, ...]
    width: int  # its columns and its children's: how many a row holds for it


def _plain(mapper: Mapper[Any]) -> bool:
    """Whether rows of ``mapper`` are instances of its class only (no inheritance, no polymorphism)."""
    return mapper.inherits is None and mapper.polymorphic_on is None


def _relations(parent: Any, model: type[Any], tree: Mapping[str, Any]) -> tuple[_Relation, ...] | None:
    """The loaded relations of ``tree`` from ``parent`` (``model`` or an alias of it); None if one is not to-one."""
    relations = []
    for key, subtree in tree.items():
        relationship = inspect(model).mapper.relationships.get(key)
        if relationship is None or relationship.uselist or relationship.secondary is not None:
            return None
        mapper, pairs = relationship.mapper, relationship.local_remote_pairs
        # Joined on its column pairs alone (much cheaper than the relationship's own join, adapted
        # per statement): a join with conditions of its own is left to the ORM.
        if not _plain(mapper) or not relationship.primaryjoin.compare(and_(*(a == b for a, b in pairs))):
            return None
        target = mapper.class_
        alias = aliased(target)
        onclause = and_(
            *(
                getattr(parent, attribute_key(parent, local)) == getattr(alias, attribute_key(alias, remote))
                for local, remote in pairs
            )
        )
        children = _relations(alias, target, subtree)
        if children is None:
            return None
        names = public_columns(target)
        columns = tuple(getattr(alias, name).__clause_element__() for name in (*names, *primary_key_names(mapper)))
        width = len(columns) + sum(child.width for child in children)
        relations.append(_Relation(key, target, alias, onclause, names, columns, children, width))
    return tuple(relations)


class RowPlan:
    """How a page of ``model`` with the to-one ``relations`` loaded is selected and read as items.

    A row holds the model's public columns (and its primary key, if private), the labelled columns
    of the page statement (computed values, the base statement's own, then the keyset's ordering
    values), then each loaded relation's public columns and primary key, depth first.

    Args:
        model: The listed mapped class.
        relations: The loaded relations (``row_plan`` makes them from the load paths).
    """

    def __init__(self, model: type[Any], relations: tuple[_Relation, ...]) -> None:
        self.model = model
        self.names = public_columns(model)
        self.relations = relations
        # A private primary key is selected too: a DISTINCT of the base statement then merges no
        # two rows of the model, as with the ORM's columns.
        keys = primary_key_names(inspect(model).mapper)
        selected = (*self.names, *(key for key in keys if key not in self.names))
        self.columns = tuple(getattr(model, name).__clause_element__() for name in selected)
        self.loaded = tuple(column for relation in _depth_first(relations) for column in relation.columns)
        self.loaded_width = sum(relation.width for relation in relations)

    def statement(
        self, page: Select[Any], descriptions: Sequence[Mapping[str, Any]], policy_on: PolicyOn
    ) -> Select[Any] | None:
        """``page`` (a ``Select`` of the model, then labelled columns) selecting the row described above.

        ``descriptions`` are ``page.column_descriptions`` (the caller has them already).

        Returns:
            The statement, or None when ``page`` does not start with the model itself (a custom
            base statement of another shape): its items need ORM loading.
        """
        if not descriptions or descriptions[0]["expr"] is not self.model:
            return None
        labelled = [description["expr"] for description in descriptions[1:]]
        statement = page
        for relation in _depth_first(self.relations):
            allowed = policy_on(relation.alias, relation.target)
            onclause = relation.onclause if allowed is None else and_(relation.onclause, allowed)
            statement = statement.outerjoin(relation.alias, onclause)
        columns: list[ColumnElement[Any]] = [*self.columns, *labelled, *self.loaded]
        # The FROM clause is what the new columns, the WHERE clause and the joins imply, as for the
        # page itself. Keeping the old columns' FROMs would list each alias a labelled value reads
        # (a keyset's ordering value guarded by a row policy reads the first hop's alias too) as a
        # FROM of its own beside the join holding it, and the join to the next hop would then have
        # two left sides to choose from.
        rows = statement.with_only_columns(*columns)
        return rows.execution_options(**BY_POSITION)

    def items(self, rows: Sequence[Sequence[Any]], labels: Sequence[str]) -> list[dict[str, Any]]:
        """The items of ``rows``: the model's public columns, the loaded relations, then the labelled columns.

        ``labels`` name the first labelled columns; the ones after them (the keyset's ordering
        values) are not part of an item.
        """
        names, start = self.names, len(self.columns)
        end = start + len(labels)
        items = []
        for row in rows:
            item = dict(zip(names, row[: len(names)], strict=True))
            _read_relations(item, row, len(row) - self.loaded_width, self.relations)
            item.update(zip(labels, row[start:end], strict=True))
            items.append(item)
        return items

    def key_values(self, row: Sequence[Any], key_count: int) -> tuple[Any, ...]:
        """The keyset's ordering values of ``row``: the last ``key_count`` labelled columns."""
        end = len(row) - self.loaded_width
        return tuple(row[end - key_count : end])


def _depth_first(relations: tuple[_Relation, ...]) -> list[_Relation]:
    """``relations`` and the relations loaded through them, each before its own (the row's order)."""
    return [item for relation in relations for item in (relation, *_depth_first(relation.children))]


def _read_relations(item: dict[str, Any], row: Sequence[Any], at: int, relations: tuple[_Relation, ...]) -> int:
    """Put ``relations`` read from ``row`` (from column ``at``) into ``item``; the column after them."""
    for relation in relations:
        width, end = len(relation.names), at + len(relation.columns)
        if all(value is None for value in row[at + width : end]):  # no related row, or none allowed
            item[relation.key] = None
            at += relation.width
        else:
            child = dict(zip(relation.names, row[at : at + width], strict=True))
            at = _read_relations(child, row, end, relation.children)
            item[relation.key] = child
    return at


_PLANS: dict[tuple[type[Any], tuple[str, ...]], RowPlan | None] = {}


def row_plan(model: type[Any], load: Sequence[str]) -> RowPlan | None:
    """The ``RowPlan`` of ``model`` with ``load`` eager-loaded, or None when its items need ORM instances.

    None when ``model`` or a loaded model is part of an inheritance hierarchy (a row may be a
    subclass's, with more columns), or a loaded relation is to-many (its rows would repeat the
    page's), goes through a secondary table, or joins on conditions beyond its column pairs. Kept
    per model and load (both come from code: ``Resource.load``, ``list(load=...)``).
    """
    key = (model, tuple(load))
    if key not in _PLANS:
        relations = _relations(model, model, load_tree(load)) if _plain(inspect(model).mapper) else None
        _PLANS[key] = None if relations is None else RowPlan(model, relations)
    return _PLANS[key]
