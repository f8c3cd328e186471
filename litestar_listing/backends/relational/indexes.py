"""The index advisor on SQL databases: each need as DDL, and the indexes a database has already.

``core.indexes`` says which indexes a resource needs. Here each becomes the ``CREATE INDEX`` of a
database (and the same as an Alembic operation or a Piccolo migration's raw step), and a database's
catalog is read to find the indexes that serve a need already: a B-tree whose leading keys are the
need's, in its directions or all reversed, with NULLs where the listing sorts them; a trigram index
over the case-folded column (docs: indexes, "What counts as existing").
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass

from litestar_listing.backends.relational.databases import MARIADB, POSTGRESQL, SQLITE, Database
from litestar_listing.core.indexes import IndexKey, IndexKind, IndexNeed
from litestar_listing.core.text import LikePattern, Wildcard, case_variants, fold_case

__all__ = (
    "SQLITE_TRIGRAM_VERSION",
    "TRIGRAM_DATABASES",
    "TRIGRAM_EXTENSION",
    "TRIGRAM_PHRASES",
    "TRIGRAM_TERMS",
    "TRIGRAM_TOKENIZER",
    "Catalog",
    "ExistingIndex",
    "alembic_operation",
    "catalog_sql",
    "create_index",
    "existing_indexes",
    "serving",
    "trigram_match",
)

TRIGRAM_DATABASES = frozenset({POSTGRESQL.name, SQLITE.name})
"""The databases where a trigram index serves a substring match of the listing's statements:
PostgreSQL's ``pg_trgm`` over ``lower(column)`` as the statements fold case, which its planner reads
by itself; SQLite's FTS5 ``trigram`` tables, which the statements name (``trigram_match``)."""

SQLITE_TRIGRAM_VERSION = (3, 34, 0)
"""The first SQLite whose FTS5 has the ``trigram`` tokenizer (and its ``case_sensitive`` option)."""

TRIGRAM_TOKENIZER = "trigram case_sensitive 1"
"""The tokenizer of the SQLite trigram tables: every character as it is, so that which rows match
never depends on SQLite's own case folding (``trigram_match`` asks for each case variant)."""

TRIGRAM_TERMS = 4
"""The most trigrams of a pattern one SQLite match asks for (those with the fewest case variants first)."""
TRIGRAM_PHRASES = 64
"""The most phrases (trigrams, case variants counted) in one SQLite match: its size stays bounded."""

TRIGRAM_EXTENSION = "CREATE EXTENSION IF NOT EXISTS pg_trgm"
"""What a trigram index needs first on PostgreSQL: ``pg_trgm``, a trusted extension since PostgreSQL 13."""

_PLAIN_NAME = re.compile(r"[a-z_][a-z0-9_]*")


@dataclass(frozen=True, slots=True)
class ExistingIndex:
    """An index a database has, as its catalog describes it.

    Attributes:
        name: Its name (``"PRIMARY"`` for MariaDB's primary key; the primary key of a SQLite rowid
            table, which is no index, is listed as ``"(primary key)"``).
        kind: ``ORDERED`` for a B-tree, ``TRIGRAM`` for PostgreSQL's ``gin_trgm_ops``; None for any other.
        keys: ``(column or expression, descending, NULLs first)`` per key, in order.
    """

    name: str
    kind: IndexKind | None
    keys: tuple[tuple[str, bool, bool], ...]


@dataclass(frozen=True, slots=True)
class Catalog:
    """Where a backend's indexes are read: a database and a way to run ``catalog_sql`` on it.

    Attributes:
        database: The database the backend runs on.
        place: Which server and database, for the advisor's output (a URL without its password).
        rows: Runs a catalog statement and returns its rows.
        release: Closes the connections ``rows`` left open for reuse (a command that ends after
            reading calls it; an application keeps them).
    """

    database: Database
    place: str
    rows: Callable[[str], Awaitable[Sequence[Sequence[object]]]]
    release: Callable[[], Awaitable[None]] | None = None

    async def indexes(self, table: str) -> list[ExistingIndex]:
        """The full indexes of ``table``."""
        return existing_indexes(await self.rows(catalog_sql(self.database, table)))

    async def table_rows(self, table: str) -> int:
        """The rows of ``table``: counted on SQLite, the planner's estimate elsewhere (``table_rows_sql``)."""
        found = await self.rows(table_rows_sql(self.database, table))
        value = found[0][0] if found else None
        return max(0, int(value)) if isinstance(value, int | float) else 0


def _quoted(name: str, database: Database) -> str:
    if _PLAIN_NAME.fullmatch(name):
        return name
    if database is MARIADB:
        return "`" + name.replace("`", "``") + "`"
    return '"' + name.replace('"', '""') + '"'


def _key_sql(key: IndexKey, database: Database) -> str:
    column = _quoted(key.column, database)
    if not key.descending:
        return column
    # PostgreSQL stores NULLs first in a descending key unless told; elsewhere NULLs are the
    # smallest values, last in a descending key by themselves.
    nulls = " NULLS LAST" if database is POSTGRESQL and key.nullable and not key.lookup else ""
    return f"{column} DESC{nulls}"


def create_index(need: IndexNeed, database: Database) -> tuple[str, ...]:
    """The statements that make ``need``'s index on ``database``, in order; none where no such index serves there.

    A trigram need is PostgreSQL's and SQLite's (``TRIGRAM_DATABASES``). PostgreSQL's needs its
    ``pg_trgm`` extension first: ``TRIGRAM_EXTENSION``. SQLite's is an FTS5 table of the column's
    trigrams beside the table (external content: it stores no copy of the text), named by the
    table's integer primary key (``IndexNeed.row_key``; a table without one gets none), the triggers
    that keep it in step with every insert, update and delete, and the statement that fills it from
    the rows already there (docs: indexes, "Trigram indexes on SQLite"); it needs SQLite 3.34 or later
    (``SQLITE_TRIGRAM_VERSION``).
    """
    name, table = _quoted(need.name, database), _quoted(need.table, database)
    if need.kind is not IndexKind.TRIGRAM:
        keys = ", ".join(_key_sql(key, database) for key in need.keys)
        return (f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({keys})",)
    column = _quoted(need.keys[0].column, database)
    if database is POSTGRESQL:
        return (f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING gin (lower({column}) gin_trgm_ops)",)
    if database is not SQLITE or need.row_key is None:
        return ()
    key = _quoted(need.row_key, database)
    options = f"content={_text(need.table)}, content_rowid={_text(need.row_key)}, tokenize={_text(TRIGRAM_TOKENIZER)}"
    # Names and columns are the models', never a client's text.
    add = f"INSERT INTO {name}(rowid, {column}) VALUES (new.{key}, new.{column});"  # noqa: S608
    drop = f"INSERT INTO {name}({name}, rowid, {column}) VALUES ('delete', old.{key}, old.{column});"  # noqa: S608
    triggers = {
        "insert": (f"AFTER INSERT ON {table}", add),
        "delete": (f"AFTER DELETE ON {table}", drop),
        "update": (f"AFTER UPDATE OF {column}, {key} ON {table}", f"{drop} {add}"),
    }
    return (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {name} USING fts5({column}, {options}, detail=none)",
        *(
            f"CREATE TRIGGER IF NOT EXISTS {_quoted(f'{need.name}_{event}', database)} {when} BEGIN {body} END"
            for event, (when, body) in triggers.items()
        ),
        f"INSERT INTO {name}({name}) VALUES ('rebuild')",  # noqa: S608
    )


def _text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def alembic_operation(need: IndexNeed, database: Database) -> tuple[str, ...]:
    """``need`` as Alembic operations for ``database``: ``op.create_index``, or ``op.execute`` of each statement.

    An ``op.execute`` per statement of ``create_index`` for SQLite's trigram tables; none where
    ``create_index`` gives none.
    """
    if need.kind is IndexKind.TRIGRAM:
        if database is not POSTGRESQL:
            return tuple(f"op.execute({statement!r})" for statement in create_index(need, database))
        expression = f"lower({_quoted(need.keys[0].column, database)}) gin_trgm_ops"
        return (f'op.create_index("{need.name}", "{need.table}", [sa.text("{expression}")], postgresql_using="gin")',)
    keys = []
    for key in need.keys:
        spelled = _key_sql(key, database)
        keys.append(f'"{key.column}"' if spelled == key.column else f'sa.text("{spelled}")')
    return (f'op.create_index("{need.name}", "{need.table}", [{", ".join(keys)}])',)


def trigram_match(pattern: LikePattern, *, folded: bool) -> str | None:
    """The FTS5 query of a SQLite trigram table (``create_index``) whose rows include every row ``pattern`` matches.

    Each run of three characters of the pattern's literal text is a trigram that every matching
    row holds; folded (``ilike``, ``search``), it holds one of its case variants (the characters
    that fold to each one, ``core.text.case_variants``), asked for as an OR of phrases. Up to
    ``TRIGRAM_TERMS`` trigrams are ANDed, those with the fewest variants first, at most
    ``TRIGRAM_PHRASES`` phrases in all. The statement still checks each candidate with its own
    match, so the answer is the same with or without the table (docs: indexes, "Trigram indexes on
    SQLite").

    Returns:
        The query, or None where the pattern has no literal run of three characters (every row is
        then read).
    """
    grams: dict[str, tuple[str, ...]] = {}
    for part in pattern:
        if isinstance(part, Wildcard):
            continue
        text = fold_case(part) if folded else part
        for start in range(len(text) - 2):
            gram = text[start : start + 3]
            if gram not in grams:
                choices = [case_variants(char) if folded else char for char in gram]
                grams[gram] = tuple("".join(chars) for chars in itertools.product(*choices))
    chosen: list[tuple[str, ...]] = []
    phrases = 0
    for variants in sorted(grams.values(), key=len):
        if len(chosen) == TRIGRAM_TERMS or phrases + len(variants) > TRIGRAM_PHRASES:
            break
        chosen.append(variants)
        phrases += len(variants)
    if not chosen:
        return None
    return " AND ".join("(" + " OR ".join(_phrase(variant) for variant in variants) + ")" for variants in chosen)


def _phrase(text: str) -> str:
    # An FTS5 string: any characters, a double quote doubled.
    return '"' + text.replace('"', '""') + '"'


def catalog_sql(database: Database, table: str) -> str:
    """The statement that lists ``table``'s full (not partial) indexes on ``database``, one row per key.

    Each row is ``(index_name, kind, key, descending, nulls_first)``, named so: ``kind`` is ``"ordered"``,
    ``"trigram"`` or ``"other"``; ``key`` a column name or PostgreSQL's text of an expression.
    ``table`` is a model's table name, never a client's text; it is written as an SQL string.
    """
    literal = "'" + table.replace("'", "''") + "'"
    if database is POSTGRESQL:
        return (
            "SELECT c.relname AS index_name, CASE WHEN am.amname = 'btree' THEN 'ordered'"  # noqa: S608 - a table name
            " WHEN am.amname = 'gin' AND opc.opcname = 'gin_trgm_ops' THEN 'trigram' ELSE 'other' END AS kind,"
            " pg_get_indexdef(x.indexrelid, k.n, true) AS key, (x.indoption[k.n - 1] & 1) = 1 AS descending,"
            " (x.indoption[k.n - 1] & 2) = 2 AS nulls_first"
            " FROM pg_index AS x JOIN pg_class AS c ON c.oid = x.indexrelid"
            " JOIN pg_class AS t ON t.oid = x.indrelid JOIN pg_am AS am ON am.oid = c.relam"
            " CROSS JOIN LATERAL generate_series(1, x.indnkeyatts) AS k(n)"
            " JOIN pg_opclass AS opc ON opc.oid = x.indclass[k.n - 1]"
            f" WHERE t.relname = {literal} AND pg_table_is_visible(t.oid) AND x.indpred IS NULL AND x.indisvalid"
            " ORDER BY c.relname, k.n"
        )
    if database is SQLITE:
        # NULLs are the smallest values: first in an ascending key. A rowid table's INTEGER PRIMARY
        # KEY is the table's own B-tree, no index: it is listed as one.
        return (
            "SELECT il.name AS index_name, 'ordered' AS kind, ix.name AS key, ix.desc AS descending,"  # noqa: S608
            " NOT ix.desc AS nulls_first"
            f" FROM pragma_index_list({literal}) AS il JOIN pragma_index_xinfo(il.name) AS ix"
            " WHERE ix.key = 1 AND il.partial = 0"
            " UNION ALL SELECT '(primary key)', 'ordered', ti.name, 0, 1"
            f" FROM pragma_table_info({literal}) AS ti WHERE ti.pk > 0"
            # A trigram table of ``create_index``'s form over this table: it serves the folded match.
            " UNION ALL SELECT m.name, 'trigram', 'lower(' || fc.name || ')', 0, 0"
            " FROM sqlite_master AS m, pragma_table_info(m.name) AS fc"
            " WHERE m.type = 'table' AND m.sql LIKE 'CREATE VIRTUAL TABLE % USING fts5(%'"
            f" AND instr(m.sql, {_text('content=' + _text(table) + ',')}) > 0"
            f" AND instr(m.sql, {_text('tokenize=' + _text(TRIGRAM_TOKENIZER))}) > 0"
            " ORDER BY 1"
        )
    return (
        "SELECT INDEX_NAME AS index_name,"  # noqa: S608 - a model's table name
        " CASE WHEN INDEX_TYPE = 'BTREE' AND SUB_PART IS NULL THEN 'ordered' ELSE 'other' END AS kind,"
        " COLUMN_NAME AS `key`, COLLATION = 'D' AS descending, COLLATION <> 'D' AS nulls_first"
        f" FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = {literal}"
        " ORDER BY INDEX_NAME, SEQ_IN_INDEX"
    )


def table_rows_sql(database: Database, table: str) -> str:
    """The statement that gives ``table``'s rows on ``database``: one row, one number.

    SQLite keeps no estimate (without ``ANALYZE``): it counts, through the table's smallest index.
    PostgreSQL and MariaDB give their planner's estimate (``pg_class.reltuples``, -1 before the
    table is first analysed; ``TABLE_ROWS``). ``table`` is a model's table name, never a client's text.
    """
    literal = "'" + table.replace("'", "''") + "'"
    if database is POSTGRESQL:
        return f"SELECT reltuples FROM pg_class WHERE oid = to_regclass({_text(_quoted(table, database))})"  # noqa: S608
    if database is SQLITE:
        return f"SELECT count(*) FROM {_quoted(table, database)}"  # noqa: S608 - a model's table name
    where = f"TABLE_SCHEMA = DATABASE() AND TABLE_NAME = {literal}"
    return f"SELECT TABLE_ROWS FROM information_schema.TABLES WHERE {where}"  # noqa: S608 - a model's table name


def existing_indexes(rows: Iterable[Sequence[object]]) -> list[ExistingIndex]:
    """The indexes of ``catalog_sql``'s rows, keys in order (rows of one index are consecutive)."""
    kinds = {"ordered": IndexKind.ORDERED, "trigram": IndexKind.TRIGRAM}
    found: dict[str, tuple[IndexKind | None, list[tuple[str, bool, bool]]]] = {}
    for name, kind, key, descending, nulls_first in rows:
        entry = found.setdefault(str(name), (kinds.get(str(kind)), []))
        entry[1].append((_plain_key(key), bool(descending), bool(nulls_first)))
    return [ExistingIndex(name, kind, tuple(keys)) for name, (kind, keys) in found.items()]


def _plain_key(key: object) -> str:
    # PostgreSQL writes an expression with casts and quotes: lower((tailnum)::text) -> lower(tailnum).
    text = "" if key is None else str(key)
    text = re.sub(r"::[a-z ]+(\[\])?", "", text).replace('"', "").replace(" ", "")
    return re.sub(r"\(\(([^()]*)\)\)", r"(\1)", text)


def _serves_key(key: IndexKey, found: tuple[str, bool, bool], *, backwards: bool) -> bool:
    column, descending, nulls_first = found
    if column != key.column:
        return False
    if key.lookup:
        return True
    if (descending != key.descending) != backwards:
        return False
    # The listing sorts NULLs last (docs: design, "Ordering"); read backwards, NULLs first are last.
    return not key.nullable or nulls_first == backwards


def serving(need: IndexNeed, indexes: Iterable[ExistingIndex]) -> ExistingIndex | None:
    """The first of ``indexes`` that serves ``need``, or None."""
    for index in indexes:
        if index.kind is not need.kind or len(index.keys) < len(need.keys):
            continue
        if need.kind is IndexKind.TRIGRAM:
            if index.keys[0][0] == f"lower({need.keys[0].column})":
                return index
            continue
        pairs = list(zip(need.keys, index.keys, strict=False))
        if any(
            all(_serves_key(key, found, backwards=backwards) for key, found in pairs) for backwards in (False, True)
        ):
            return index
    return None
