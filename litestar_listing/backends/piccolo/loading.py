"""Page items from Piccolo rows, with eager loading (docs: eager loading).

To-one relations are joined into the statement that reads their parent (their columns travel in
the same row); each to-many relation costs one more statement for all the parents of a page,
``... WHERE <link> IN (<parent keys>)``, never one per item.

Row policies (``ListQuery.policies``) reach the loads through a ``Guard``: a to-one row outside its
model's policy is absent (its presence reads NULL, so it loads as null), and a to-many statement
reads only the rows inside the policy.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from piccolo.columns import JSON
from piccolo.querystring import QueryString
from piccolo.table import Table

from litestar_listing.backends.piccolo.compiler import Anchor, opaque, select_statement
from litestar_listing.backends.piccolo.introspection import Relation, Tables
from litestar_listing.core.errors import ConfigurationError

__all__ = ("IN_CHUNK", "Guard", "Node", "Run", "Selection", "load_many", "plan")

IN_CHUNK = 500
"""Parent keys per ``IN`` list of a to-many statement (far below SQLite's and asyncpg's limits)."""

Run = Callable[[QueryString], Awaitable[list[dict[str, Any]]]]
"""Runs one statement on the backend's engine and returns its rows as dicts."""

Guard = Callable[[type[Table], Anchor], "QueryString | None"]
"""The condition a table's row policy puts on its row reached through an anchor, or None for none."""


class Selection:
    """The select list of one statement, under short generated aliases (``c0``, ``c1``, ...).

    Short aliases keep clear of PostgreSQL's 63-byte identifier limit, whatever the path length.
    """

    def __init__(self) -> None:
        self.columns: list[QueryString] = []

    def add(self, expression: Any) -> str:
        """Select ``expression`` (a column or a QueryString); return its alias."""
        alias = f"c{len(self.columns)}"
        self.columns.append(QueryString(f'{{}} AS "{alias}"', expression))
        return alias


@dataclass
class Node:
    """One entity in a statement's rows: the listed table, or one reached by to-one steps.

    Attributes:
        table: Its table.
        fields: ``(field name, alias)`` of its public fields, in declaration order.
        documents: Its JSON fields, which the driver reads as text: decoded into the item.
        presence: The alias of its primary key, for entities that may be absent (a LEFT JOIN that
            found no row); None when it is always present.
        to_one: Nested to-one entities by relation name (joined into the same statement).
        to_many: To-many relations by name: the relation, the alias of this side's key, the subtree.
    """

    table: type[Table]
    fields: list[tuple[str, str]] = field(default_factory=list)
    documents: frozenset[str] = frozenset()
    presence: str | None = None
    to_one: dict[str, Node] = field(default_factory=dict)
    to_many: dict[str, tuple[Relation, str, Mapping[str, Any]]] = field(default_factory=dict)

    def item(self, row: Mapping[str, Any]) -> dict[str, Any] | None:
        """The item dict of this entity in ``row``; None when the joined row is missing."""
        if self.presence is not None and row[self.presence] is None:
            return None
        item = {name: row[alias] for name, alias in self.fields}
        for name in self.documents:
            if isinstance(item[name], str):
                item[name] = json.loads(item[name])
        for name, child in self.to_one.items():
            item[name] = child.item(row)
        return item


def plan(
    tables: Tables,
    table: type[Table],
    anchor: Anchor,
    tree: Mapping[str, Any],
    selection: Selection,
    *,
    optional: bool,
    guard: Guard | None = None,
) -> Node:
    """Select the public fields of ``table`` (reached through ``anchor``) and of the to-one relations in ``tree``.

    An optional entity's presence is its primary key, NULL where ``guard`` (its row policy) does not hold.

    Raises:
        ConfigurationError: ``tree`` names a relation ``table`` does not have.
    """
    info = tables.info[table]
    node = Node(table)
    node.fields = [(name, selection.add(getattr(anchor, info.fields[name]._meta.name))) for name in info.public]
    node.documents = frozenset(name for name in info.public if isinstance(info.fields[name], JSON))
    if optional:
        key = getattr(anchor, table._meta.primary_key._meta.name)
        condition = None if guard is None else guard(table, anchor)
        if condition is not None:  # outside its policy, the row is absent
            key = QueryString("(CASE WHEN {} THEN {} END)", condition, key)
        node.presence = selection.add(key)
    for name, subtree in tree.items():
        relation = info.relations.get(name)
        if relation is None:
            msg = f"cannot eager-load {name!r}: {table.__name__} has no relation {name!r}"
            raise ConfigurationError(msg)
        if relation.to_many:
            key = selection.add(getattr(anchor, relation.key._meta.name))
            node.to_many[name] = (relation, key, subtree)
        else:
            child_anchor = getattr(anchor, relation.column._meta.name)
            node.to_one[name] = plan(
                tables, relation.target, child_anchor, subtree, selection, optional=True, guard=guard
            )
    return node


async def load_many(
    tables: Tables,
    run: Run,
    node: Node,
    pairs: Sequence[tuple[Mapping[str, Any], dict[str, Any]]],
    guard: Guard | None = None,
) -> None:
    """Fill the to-many relations of ``node`` (and of its to-one children) into the items of ``pairs``.

    Args:
        tables: The table descriptions.
        run: Runs a statement.
        node: The entity the rows hold.
        pairs: ``(row, item)`` for every row of the statement that read ``node``.
        guard: The row policies, by table (``Guard``).
    """
    for name, child in node.to_one.items():
        nested = [(row, item[name]) for row, item in pairs if item[name] is not None]
        if nested:
            await load_many(tables, run, child, nested, guard)
    for name, (relation, key_alias, subtree) in node.to_many.items():
        keys = {row[key_alias] for row, _ in pairs} - {None}
        groups = await _children(tables, run, relation, subtree, keys, guard)
        for row, item in pairs:
            item[name] = groups.get(row[key_alias], [])


async def _children(
    tables: Tables, run: Run, relation: Relation, subtree: Mapping[str, Any], keys: set[Any], guard: Guard | None
) -> dict[Any, list[dict[str, Any]]]:
    """The related items of every key in ``keys``, grouped by key, in primary-key order."""
    groups: dict[Any, list[dict[str, Any]]] = {}
    if not keys:
        return groups
    selection = Selection()
    back = relation.column
    parent = selection.add(back)
    # A many-to-many relation reads the joining table and reaches the related rows through its second key.
    anchor = relation.secondary if relation.secondary is not None else relation.target
    node = plan(
        tables, relation.target, anchor, subtree, selection, optional=relation.secondary is not None, guard=guard
    )
    allowed = None if guard is None else guard(relation.target, anchor)
    order = [QueryString("{} ASC", getattr(anchor, relation.target._meta.primary_key._meta.name))]
    ordered_keys = sorted(keys, key=repr)
    pairs: list[tuple[Mapping[str, Any], dict[str, Any]]] = []
    for start in range(0, len(ordered_keys), IN_CHUNK):
        chunk = ordered_keys[start : start + IN_CHUNK]
        where = QueryString("{} IN ({})", back, opaque(QueryString(", ".join("{}" for _ in chunk), *chunk)))
        if allowed is not None:
            where = QueryString("({} AND {})", where, allowed)
        statement = select_statement(relation.link_table, selection.columns, where=where, order=order)
        for row in await run(statement):
            item = node.item(row)
            if item is not None:  # a joining row whose related row is gone
                groups.setdefault(row[parent], []).append(item)
                pairs.append((row, item))
    if pairs:
        await load_many(tables, run, node, pairs, guard)
    return groups
