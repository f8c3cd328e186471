"""The index advisor of an application: what its resources need, what their databases have, the DDL of the rest.

``advise`` gathers the needs of every resource of an application's ``ListingPlugin`` (``core.indexes``),
one per index however many resources share it, and reads each backend's catalog to mark the needs an
index serves already. ``report`` writes them out as SQL, Alembic operations or a Piccolo migration's
raw step; ``litestar-listing indexes MODULE:APP`` prints it, and ``ListingPlugin(check_indexes=True)``
logs the missing ones at start-up (docs: indexes).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from litestar_listing.backends.base import IndexedSearch, TrigramTable
from litestar_listing.backends.relational.databases import DATABASES, POSTGRESQL, SQLITE, Database
from litestar_listing.backends.relational.indexes import (
    TRIGRAM_EXTENSION,
    Catalog,
    ExistingIndex,
    alembic_operation,
    create_index,
    serving,
)
from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.fields import ValueType
from litestar_listing.core.indexes import IndexKey, IndexKind, IndexNeed, IndexStorage, index_needs, merge_needs
from litestar_listing.plugin.prepared import prepare

if TYPE_CHECKING:
    from litestar_listing.core.schema import ModelGraph
    from litestar_listing.plugin.resource import Resource

__all__ = ("FORMATS", "Advice", "advise", "indexed_search", "log_missing", "report", "trigram_tables")

FORMATS = ("sql", "alembic", "piccolo")
"""The forms ``report`` writes: SQL statements, Alembic operations, a Piccolo migration's raw step."""

Format = Literal["sql", "alembic", "piccolo"]

logger = logging.getLogger("litestar_listing.indexes")


@dataclass(frozen=True, slots=True)
class Advice:
    """One index the resources need, on one database.

    Attributes:
        need: The index.
        database: The database its resources' backend runs on; None where the advisor could not
            tell (a backend without an engine of its own): the report then gives every database's DDL.
        place: Which server and database (``Catalog.place``); empty where unknown.
        read: The database's catalog was read: ``existing`` says whether an index serves it.
        existing: The name of an index of the database that serves it; None for a missing one, or
            where the catalog was not read.
        within: For a need no index serves, the name of a longer advised index that would serve it too
            (its keys lead that index's): creating that one is enough.
    """

    need: IndexNeed
    database: Database | None
    place: str = ""
    read: bool = False
    existing: str | None = None
    within: str | None = None

    @property
    def missing(self) -> bool:
        """The catalog was read, and its database lacks the index.

        No index there serves it, no longer advised one would, and the database has indexes of its kind.
        """
        return self.read and self.database is not None and _to_make(self, self.database, read=True)


def _resource_needs(resource: Resource) -> list[IndexNeed] | None:
    """``resource``'s needs; None for a backend that keeps no SQL tables (``index_storage``)."""
    storage_of = getattr(resource.backend, "index_storage", None)
    if storage_of is None:
        return None
    prepared = prepare(resource)
    scopes = [name for rule in resource.scopes for name in rule.fields]
    return index_needs(resource.name, prepared.field_map, storage_of(), scopes=scopes, orders=prepared.indexed_orders)


async def advise(resources: Sequence[Resource], *, read_catalogs: bool = True, release: bool = False) -> list[Advice]:
    """The indexes ``resources`` need, each marked with the index that serves it, if any.

    Needs of resources on one database are merged (``core.indexes.merge_needs``); a missing need whose
    keys lead another advised index is marked ``within`` it. A resource on a backend without SQL
    tables (the document store) adds nothing.

    Args:
        resources: The resources (``plugin.listing_resources`` of an application).
        read_catalogs: Read each database's catalog (``ListingBackend.index_catalog``); False
            leaves every ``existing`` None and reads nothing.
        release: Close the connections the catalogs were read on (``Catalog.release``): for a
            command that ends after advising; an application keeps its pools.

    Raises:
        ConfigurationError: A resource's declaration does not match its models (``prepare``).
        UnavailableError, OSError: A catalog cannot be read (driver errors pass through as raised).
    """
    groups: dict[str, tuple[Catalog | None, list[IndexNeed]]] = {}
    for resource in resources:
        needs = _resource_needs(resource)
        if needs is None:
            continue
        catalog_of = getattr(resource.backend, "index_catalog", None)
        catalog: Catalog | None = catalog_of() if catalog_of is not None else None
        key = "" if catalog is None else f"{catalog.database.name} {catalog.place}"
        groups.setdefault(key, (catalog, []))[1].extend(needs)
    advice: list[Advice] = []
    for catalog, needs in groups.values():
        merged = merge_needs(needs)
        tables: dict[str, list[ExistingIndex]] = {}
        found: dict[IndexNeed, str | None] = {}
        read = catalog is not None and read_catalogs
        for need in merged:
            existing = None
            if catalog is not None and read:
                if need.table not in tables:
                    tables[need.table] = await catalog.indexes(need.table)
                index = serving(need, tables[need.table])
                existing = None if index is None else index.name
            found[need] = existing
        missing = [need for need in merged if found[need] is None]
        for need in merged:
            within = None
            if found[need] is None:
                # A longer index only: two of one length that lead each other would each wait for the other.
                longer = (other for other in missing if len(other.keys) > len(need.keys) and other.leads(need))
                within = next((other.name for other in longer), None)
            database = None if catalog is None else catalog.database
            place = "" if catalog is None else catalog.place
            advice.append(Advice(need, database, place, read, found[need], within))
        if release and catalog is not None and catalog.release is not None:
            await catalog.release()
    return advice


def _stored(resource: Resource, catalog: Catalog | None) -> tuple[IndexStorage, Catalog] | None:
    """Where ``resource``'s tables are and where their indexes are read (``catalog``, else its backend's own).

    None for a backend without SQL tables or without an engine of its own.
    """
    storage_of = getattr(resource.backend, "index_storage", None)
    catalog_of = getattr(resource.backend, "index_catalog", None)
    if catalog is None and catalog_of is not None:
        catalog = catalog_of()
    if storage_of is None or catalog is None:
        return None
    return storage_of(), catalog


async def trigram_tables(resource: Resource, catalog: Catalog | None = None) -> frozenset[TrigramTable]:
    """The SQLite trigram tables ``resource``'s text matches may read their candidates from.

    Those of ``create_index``'s form over a text field of a model its lists reach, whose table's
    integer primary key names the rows (docs: indexes, "Trigram indexes on SQLite"). The plugin reads
    them once per application when it starts; a table made later is read after a restart. Empty on
    another database, and for a backend without SQL tables or without an engine of its own (a
    session given per call): its lists then read every row, with the same answers.

    Args:
        resource: The resource.
        catalog: Where to read them; None: its backend's own (``index_catalog``).

    Raises:
        ConfigurationError: The resource's declaration does not match its models (``prepare``).
        UnavailableError, OSError: The catalog cannot be read (driver errors pass through as raised).
    """
    found_in = _stored(resource, catalog)
    if found_in is None or found_in[1].database is not SQLITE:
        return frozenset()
    storage, catalog = found_in
    fields: dict[str, list[tuple[str, str, str]]] = {}
    graph = prepare(resource).field_map.graph
    for name in _reached(graph):
        entity = graph.entities[name]
        key = storage.column(name, entity.pk[0]) if len(entity.pk) == 1 else None
        if key is None or storage.row_key(name) != key:
            continue
        for field, info in entity.fields.items():
            column = None if info.type is not ValueType.TEXT or info.computed else storage.column(name, field)
            if column is not None:
                fields.setdefault(storage.table(name), []).append((name, field, column))
    found: set[TrigramTable] = set()
    for table, columns in fields.items():
        for index in await catalog.indexes(table):
            if index.kind is IndexKind.TRIGRAM and index.keys:
                found.update(
                    TrigramTable(name, field, index.name)
                    for name, field, column in columns
                    if index.keys[0][0] == f"lower({column})"
                )
    return frozenset(found)


def _reached(graph: ModelGraph) -> list[str]:
    """The models a path of ``graph`` may reach: the listed one and those its relations lead to.

    Not a model only a computed value reads (``ModelGraph.including``): no text match reaches its fields.
    """
    reached, pending = [graph.root], [graph.root]
    while pending:
        for relation in graph.entities[pending.pop()].relations.values():
            if relation.target not in reached:
                reached.append(relation.target)
                pending.append(relation.target)
    return reached


async def indexed_search(resource: Resource, catalog: Catalog | None = None) -> IndexedSearch | None:
    """The searchable paths of ``resource`` whose matches an index of its listed table finds, and its size.

    A field of the listed model itself: a trigram index over it (on SQLite, its trigram table). A
    path through a to-one relation: an index led by the relation's columns (``flights.carrier``), or
    none needed where the relation is followed by the primary key. A search over these paths alone
    reads its rows from those indexes when they hold few (docs: indexes, "Search from indexes"). The
    plugin reads them once per application when it starts; an index made later is read after a
    restart. None where no path is served, and for a backend without SQL tables or without an engine
    of its own. The size is the table's rows at that moment (``Catalog.table_rows``).

    Args:
        resource: The resource.
        catalog: Where to read them; None: its backend's own (``index_catalog``).

    Raises:
        ConfigurationError: The resource's declaration does not match its models (``prepare``).
        UnavailableError, OSError: The catalog cannot be read (driver errors pass through as raised).
    """
    found_in = _stored(resource, catalog)
    field_map = prepare(resource).field_map
    searchable = field_map.searchable
    if found_in is None or not searchable:
        return None
    storage, catalog = found_in
    root = field_map.graph.root
    table = storage.table(root)
    indexes = await catalog.indexes(table)
    found: set[str] = set()
    for field in searchable:
        need: IndexNeed | None = None
        if field.path.key is not None or (field.hops and field.hops[0].to_many):
            continue
        if not field.hops:
            column = storage.column(root, field.path.field)
            need = None if column is None else IndexNeed(table, (IndexKey(column),), IndexKind.TRIGRAM)
        else:
            looked_up = storage.relation_key(root, field.hops[0].name)
            if looked_up is None:  # the relation's own primary key: the rows are found by it
                found.add(field.path.name)
                continue
            columns = looked_up[1] if looked_up[0] == table else ()
            need = IndexNeed(table, tuple(IndexKey(column, lookup=True) for column in columns)) if columns else None
        if need is not None and serving(need, indexes) is not None:
            found.add(field.path.name)
    return IndexedSearch(frozenset(found), await catalog.table_rows(table)) if found else None


def _piccolo_step(statements: Sequence[str]) -> list[str]:
    body = [f"    await engine.run_ddl({statement!r})" for statement in statements]
    return [
        "from piccolo.engine import engine_finder",
        "",
        "",
        "async def create_indexes() -> None:",
        "    engine = engine_finder()",
        *body,
        "",
        "# in the migration's forwards(): manager.add_raw(create_indexes)",
    ]


def report(
    advice: Sequence[Advice], *, form: Format = "sql", database: str | None = None, missing_only: bool = False
) -> str:
    """The advice as text: per database, each index with its reasons, then the DDL of those to make.

    An index to make is one no index of the database serves (or, where the catalog was not read, any),
    that no other advised index would serve, and of a kind the database has.

    Args:
        advice: ``advise``'s answer.
        form: ``"sql"`` (statements), ``"alembic"`` (``op.create_index`` lines) or ``"piccolo"`` (a raw
            migration step running the statements).
        database: The database to write for (``"postgresql"``, ``"sqlite"``, ``"mariadb"``), for
            example the server an application developed on SQLite runs on; what exists is then not
            shown. None: each index's own database, or every one where it is not known.
        missing_only: Only the indexes to make.

    Raises:
        ConfigurationError: ``form`` or ``database`` is not one the advisor knows.
    """
    if form not in FORMATS:
        msg = f"the form must be one of {', '.join(FORMATS)}, not {form!r}"
        raise ConfigurationError(msg)
    if database is not None and database not in DATABASES:
        names = ", ".join(sorted({value.name for value in DATABASES.values()}))
        msg = f"the database must be one of {names}, not {database!r}"
        raise ConfigurationError(msg)
    every = [POSTGRESQL, DATABASES["sqlite"], DATABASES["mariadb"]]
    sections: dict[tuple[str, str], list[Advice]] = {}
    for item in advice:
        own = every if item.database is None else [item.database]
        for target in [DATABASES[database]] if database is not None else own:
            place = item.place if target is item.database else ""
            sections.setdefault((target.name, place), []).append(item)
    lines: list[str] = []
    for (name, place), items in sections.items():
        target = DATABASES[name]
        known = [item.read and item.database is target for item in items]
        lines.append(f"-- {target.name}" + (f" ({place})" if place else "") + ": " + _tally(items, known, target))
        statements: list[str] = []
        for item, read in zip(items, known, strict=True):
            to_make = _to_make(item, target, read=read)
            if missing_only and not to_make:
                continue
            lines.append(_status(item, target, read=read) + "; ".join(item.need.reasons))
            if not to_make:
                continue
            if item.need.kind is IndexKind.TRIGRAM and target is POSTGRESQL:
                first = f'op.execute("{TRIGRAM_EXTENSION}")' if form == "alembic" else TRIGRAM_EXTENSION
                if first not in statements:
                    statements.append(first)
            made = alembic_operation(item.need, target) if form == "alembic" else create_index(item.need, target)
            statements.extend(made)
        if form == "piccolo" and statements:
            lines += _piccolo_step(statements)
        else:
            lines += [statement + (";" if form == "sql" else "") for statement in statements]
        lines.append("")
    return "\n".join(lines)


def _to_make(item: Advice, target: Database, *, read: bool) -> bool:
    exists = read and item.existing is not None
    return not exists and item.within is None and bool(create_index(item.need, target))


def _tally(items: Sequence[Advice], known: Sequence[bool], target: Database) -> str:
    if not any(known):
        return f"{len(items)} indexes, the database not read"
    exists = sum(item.existing is not None for item, read in zip(items, known, strict=True) if read)
    missing = sum(_to_make(item, target, read=read) for item, read in zip(items, known, strict=True))
    return f"{exists} indexes exist, {missing} missing"


def _status(item: Advice, target: Database, *, read: bool) -> str:
    if read and item.existing is not None:
        return f"-- exists as {item.existing}: "
    if item.within is not None:
        return f"-- served by {item.within}: "
    if not create_index(item.need, target):
        return f"-- no index serves this on {target.name} (every row is read): "
    return f"-- {'missing' if read else 'advised'} {item.need.name}: "


async def log_missing(resources: Sequence[Resource]) -> None:
    """Warn, once per missing index, on the ``litestar_listing.indexes`` logger (``ListingPlugin(check_indexes=True)``).

    A catalog that cannot be read is a warning too: the check never stops the application. The
    connections it read the catalogs on are closed after it (``Catalog.release``), so no connection
    opened before the application serves outlives the loop it was opened on.
    """
    try:
        advice = await advise(resources, release=True)
    except Exception as error:  # noqa: BLE001 - a start-up check only warns
        logger.warning("the index check could not read the database's indexes: %s", error)
        return
    for item in advice:
        if item.missing and item.database is not None:
            logger.warning(
                "missing index for %s on %s: %s (litestar-listing indexes prints every one)",
                "; ".join(item.need.reasons),
                item.database.name,
                create_index(item.need, item.database)[0],
            )
