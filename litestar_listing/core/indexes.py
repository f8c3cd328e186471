"""The indexes a resource's declaration needs: the rules of the index advisor, on no database.

A resource says which orderings it starts from, which scopes narrow every list, which relations its
paths cross and which fields it searches. Each of those is served by an index or costs a scan of
every row: this module turns the declaration into ``IndexNeed``s, whatever the store. The backend
names the tables and columns (``IndexStorage``); rendering the DDL and finding the indexes a
database already has is the relational backends' part (docs: indexes, "What the advisor recommends").
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.fields import FieldPath
from litestar_listing.core.query import OrderTerm
from litestar_listing.core.schema import FieldMap

__all__ = (
    "MAX_NAME_LENGTH",
    "IndexKey",
    "IndexKind",
    "IndexNeed",
    "IndexStorage",
    "index_needs",
    "merge_needs",
    "order_terms",
)

MAX_NAME_LENGTH = 63
"""The longest index name the advisor gives: PostgreSQL's limit (MariaDB's is 64, SQLite has none)."""


class IndexKind(enum.Enum):
    """How an index is built: which lookups it serves."""

    ORDERED = "ordered"
    """A B-tree over the keys: equality, ranges, and orderings that walk it."""
    TRIGRAM = "trigram"
    """A trigram index over one text column, case-folded: substring matches (``search``, ``ilike``)."""


@dataclass(frozen=True, slots=True)
class IndexKey:
    """One key of an index.

    Attributes:
        column: The column's name in the database.
        descending: The key is stored in descending order.
        nullable: The column may hold NULL, which the listing sorts last in both directions (docs:
            design, "Ordering"): an index serves an ordering only where it stores NULLs there too.
        lookup: The key is only compared for equality (a scope's, a relation's): its direction
            and its NULLs do not matter.
    """

    column: str
    descending: bool = False
    nullable: bool = False
    lookup: bool = False


@dataclass(frozen=True, slots=True)
class IndexNeed:
    """One index a resource needs.

    Attributes:
        table: The table's name in the database.
        keys: The keys in order; a ``TRIGRAM`` need has one.
        kind: How the index is built.
        reasons: Why, one phrase per resource and rule (``"flights: default order -time_hour"``).
        row_key: For a ``TRIGRAM`` need, the table's single integer primary key column (SQLite's
            rowid), by which a trigram table kept beside it names its rows; None where the table has none.
    """

    table: str
    keys: tuple[IndexKey, ...]
    kind: IndexKind = IndexKind.ORDERED
    reasons: tuple[str, ...] = ()
    row_key: str | None = None

    @property
    def identity(self) -> tuple[str, IndexKind, tuple[IndexKey, ...]]:
        """What two needs share when one index serves both: the table, the kind, the keys."""
        return (self.table, self.kind, self.keys)

    @property
    def name(self) -> str:
        """The index name the advisor gives it: ``ix_<table>_<column>[_desc]...`` (``_trgm`` for a trigram index).

        A name longer than ``MAX_NAME_LENGTH`` is cut and ends with a hash of the whole.
        """
        parts = [self.table, *(key.column + ("_desc" if key.descending else "") for key in self.keys)]
        name = "ix_" + "_".join(parts) + ("_trgm" if self.kind is IndexKind.TRIGRAM else "")
        if len(name) <= MAX_NAME_LENGTH:
            return name
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        return name[: MAX_NAME_LENGTH - 9] + "_" + digest

    def leads(self, other: IndexNeed) -> bool:
        """Whether an index built for ``self`` serves ``other`` too: same table and kind, ``other``'s keys leading."""
        if self.table != other.table or self.kind is not other.kind or len(other.keys) > len(self.keys):
            return False
        pairs = list(zip(self.keys, other.keys, strict=False))
        if any(mine.column != theirs.column for mine, theirs in pairs):
            return False
        ordered = [(mine, theirs) for mine, theirs in pairs if not (mine.lookup or theirs.lookup)]
        if all(mine.descending == theirs.descending for mine, theirs in ordered):
            return True
        # Read backwards, an index stores NULLs at the other end: only keys without NULLs reverse.
        return all(
            mine.descending != theirs.descending and not (mine.nullable or theirs.nullable) for mine, theirs in ordered
        )


class IndexStorage(Protocol):
    """Where a backend keeps the entities of a ``ModelGraph``: table and column names."""

    def table(self, entity: str) -> str:
        """The table of ``entity`` (a ``ModelGraph`` entity name)."""
        ...

    def column(self, entity: str, field: str) -> str | None:
        """The column of ``entity``'s ``field``; None for a value that is no column (computed)."""
        ...

    def row_key(self, entity: str) -> str | None:
        """The column of ``entity``'s single integer primary key (on SQLite, the rowid); None for any other key."""
        ...

    def relation_key(self, entity: str, relation: str) -> tuple[str, tuple[str, ...]] | None:
        """The table and columns by which crossing ``entity``'s ``relation`` looks rows up.

        A to-one reference's own columns (``flights.carrier``), a to-many relation's columns that point
        back (``watches.flight_id``), a many-to-many relation's columns of the joining table that point
        at ``entity``; None where the relation is followed by a primary key alone.
        """
        ...


def order_terms(field_map: FieldMap, names: Iterable[str], *, argument: str) -> tuple[OrderTerm, ...]:
    """The terms of an ordering written as in ``order_by`` (``"-dep_delay"``), each an orderable name.

    Raises:
        ConfigurationError: A name is not orderable on the resource; the message names ``argument``.
    """
    terms = []
    for name in names:
        path = name.removeprefix("-")
        if path not in field_map.orderable:
            msg = f"{argument}: {path!r} is not an orderable field of the resource"
            raise ConfigurationError(msg)
        terms.append(OrderTerm(field_map.orderable[path].path, descending=name.startswith("-")))
    return tuple(terms)


def _spelled(terms: Sequence[OrderTerm]) -> str:
    return ",".join(("-" if term.descending else "") + term.path.name for term in terms)


class _Needs:
    """The needs of one resource, as they are found."""

    def __init__(self, resource: str, field_map: FieldMap, storage: IndexStorage) -> None:
        self.resource = resource
        self.field_map = field_map
        self.storage = storage
        self.found: list[IndexNeed] = []

    def add(
        self,
        table: str,
        keys: Sequence[IndexKey],
        reason: str,
        kind: IndexKind = IndexKind.ORDERED,
        row_key: str | None = None,
    ) -> None:
        need = IndexNeed(table, tuple(keys), kind, (f"{self.resource}: {reason}",), row_key)
        if not self.primary_key.leads(need):
            self.found.append(need)

    @property
    def primary_key(self) -> IndexNeed:
        """The listed table's primary key as the index it is: it serves every need its columns lead."""
        root = self.field_map.graph.root_entity
        columns = [self.storage.column(root.name, name) for name in root.pk]
        keys = tuple(IndexKey(column) for column in columns if column is not None)
        return IndexNeed(self.storage.table(root.name), keys if len(keys) == len(columns) else ())

    def own_key(self, path: FieldPath, *, descending: bool = False) -> IndexKey | None:
        """The key of an own, stored field of the listed model; None for any other path."""
        if path.relations or path.key is not None:
            return None
        root = self.field_map.graph.root_entity
        info = root.fields.get(path.field)
        column = None if info is None or info.computed else self.storage.column(root.name, path.field)
        if column is None or info is None:
            return None
        return IndexKey(column, descending=descending, nullable=info.nullable)

    def ordering(self, terms: Sequence[OrderTerm]) -> list[IndexKey] | None:
        """The keys of an index that a walk in ``terms`` (the primary key appended) reads in order."""
        keys = [self.own_key(term.path, descending=term.descending) for term in self.field_map.with_pk(terms)]
        return None if any(key is None for key in keys) else [key for key in keys if key is not None]

    def relations(self) -> None:
        graph = self.field_map.graph
        crossed: dict[tuple[str, str], list[str]] = {}
        exposed = [*self.field_map.filterable.values(), *self.field_map.orderable.values(), *self.field_map.searchable]
        for field in exposed:
            entity = graph.root
            for hop in field.hops:
                crossed.setdefault((entity, hop.name), [])
                entity = hop.target
        for entity, relation in crossed:
            found = self.storage.relation_key(entity, relation)
            if found is None:
                continue
            table, columns = found
            keys = [IndexKey(column, lookup=True) for column in columns]
            self.add(table, keys, f"relation {entity}.{relation}")

    def search(self) -> None:
        for field in self.field_map.searchable:
            entity = field.hops[-1].target if field.hops else self.field_map.graph.root
            column = self.storage.column(entity, field.path.field)
            if column is not None and field.path.key is None:
                key = IndexKey(column, nullable=field.field.nullable)
                table, row_key = self.storage.table(entity), self.storage.row_key(entity)
                self.add(table, [key], f"search {field.path.name}", IndexKind.TRIGRAM, row_key)


def index_needs(
    resource: str,
    field_map: FieldMap,
    storage: IndexStorage,
    *,
    scopes: Sequence[str] = (),
    orders: Sequence[Sequence[OrderTerm]] = (),
) -> list[IndexNeed]:
    """The indexes one resource needs, by the rules of the docs' indexes page, "What the advisor recommends".

    1. Its default order, the primary key appended: the first page and every keyset page walk it.
    2. Each scope field followed by that order: a tenant's first page walks its own part of it.
    3. Each ordering of ``orders`` (``Resource.indexed_orders``), the primary key appended.
    4. Each relation an exposed filter, ordering or search path crosses: the columns its lookups read.
    5. Each searched text column: a trigram index (a substring match reads it on PostgreSQL, and on
       SQLite where the table's primary key is its rowid).

    Orderings through relations or computed values, and scopes on relation paths, are served by the
    relations' own indexes (rule 4) or by none: they add no need of their own.

    Args:
        resource: The resource's name, for the reasons.
        field_map: Its field map.
        storage: Its backend's table and column names.
        scopes: The field paths its scope rules constrain (``ScopeRule.fields``).
        orders: Further orderings to serve from an index.

    Returns:
        The needs in rule order, each with one reason; equal needs are not merged (``merge_needs``).
    """
    needs = _Needs(resource, field_map, storage)
    table = storage.table(field_map.graph.root)
    default = needs.ordering(field_map.default_order)
    if default is not None:
        needs.add(table, default, f"default order {_spelled(field_map.with_pk(field_map.default_order))}")
    for scope in scopes:
        key = needs.own_key(FieldPath.parse(scope))
        if key is not None:
            key = IndexKey(key.column, lookup=True)
            scoped = [key, *(item for item in default or () if item.column != key.column)]
            needs.add(table, scoped, f"scope {scope}" + (" with the default order" if default else ""))
    for terms in orders:
        keys = needs.ordering(terms)
        if keys is not None:
            needs.add(table, keys, f"ordering {_spelled(field_map.with_pk(terms))}")
    needs.relations()
    needs.search()
    return needs.found


def merge_needs(needs: Iterable[IndexNeed]) -> list[IndexNeed]:
    """One need per index: equal needs (``IndexNeed.identity``) merged, their reasons joined, in first-found order."""
    merged: dict[tuple[str, IndexKind, tuple[IndexKey, ...]], IndexNeed] = {}
    for need in needs:
        known = merged.get(need.identity)
        if known is None:
            merged[need.identity] = need
        else:
            reasons = tuple(dict.fromkeys((*known.reasons, *need.reasons)))
            merged[need.identity] = replace(known, reasons=reasons)
    return list(merged.values())
