"""The case table again on every relational target, with the indexes the advisor gives made: the same answers.

An index changes how a database reads the rows, never which: the descending keys with their NULLs,
the keys of scopes and relations, and the trigram indexes that a search and the ``ilike`` filters
read, their candidates checked by the statement: on PostgreSQL over ``lower(column)``, on SQLite the
FTS5 tables the statements name (docs: indexes, "What the advisor recommends"); and a search whose
paths those indexes all serve reads its candidates from them (docs: indexes, "Search from indexes").
A database of its own holds the fixture with them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import pytest
from sqlalchemy import text

from litestar_listing.backends.base import IndexedSearch, TrigramTable
from litestar_listing.backends.relational.databases import DATABASES, SQLITE, Database
from litestar_listing.backends.relational.indexes import TRIGRAM_EXTENSION, Catalog, create_index
from litestar_listing.core.indexes import IndexKind
from litestar_listing.plugin.indexes import advise, indexed_search, trigram_tables
from tests.conformance import test_conformance
from tests.conformance.cases import CASES, Case
from tests.conformance.fixture import THINGS
from tests.conformance.targets import Target, open_target
from tests.matrix import Store, TestTarget, selected

RELATIONAL = selected(store=Store.SQL)
if not RELATIONAL:
    pytest.skip("the advised indexes are the relational databases'; none is selected", allow_module_level=True)


async def _run(target: Target, sql: str) -> Sequence[Sequence[object]]:
    """``sql`` on the target's database, committed: through its sessions (SQLAlchemy) or its engine (Piccolo)."""
    if target.engine is not None:
        found = await target.engine.run_ddl(sql)
        return [tuple(row.values()) if isinstance(row, dict) else tuple(row) for row in found or ()]
    async with target.sessions() as session:
        result = await session.execute(text(sql))
        rows = result.all() if result.returns_rows else []
        await session.commit()
    return rows


async def _make_advised_indexes(target: Target, database: Database) -> tuple[set[str], set[str]]:
    """Make every index the advisor gives for the target's resources; their names, and their tables."""
    advice = await advise(list(target.resources.values()), read_catalogs=False)
    made = {item.need.name: create_index(item.need, database) for item in advice if item.within is None}
    statements = [statement for made_one in made.values() for statement in made_one]
    if database.name == "postgresql" and any(item.need.kind is IndexKind.TRIGRAM for item in advice):
        statements.insert(0, TRIGRAM_EXTENSION)
    for statement in statements:
        await _run(target, statement)
    return {name for name, made_one in made.items() if made_one}, {item.need.table for item in advice}


@dataclass
class Indexed:
    """A target with the advised indexes made, and the trigram tables of each resource (SQLite's)."""

    target: Target
    trigram_tables: dict[str, frozenset[TrigramTable]]
    indexed_search: dict[str, IndexedSearch | None]


@pytest.fixture(scope="module", params=RELATIONAL, ids=str)
async def indexed(request: pytest.FixtureRequest) -> AsyncIterator[Indexed]:
    test_target: TestTarget = request.param
    async with open_target(test_target, "litestar_listing_conformance_indexed") as loaded:
        database = DATABASES[test_target.database]
        names, tables = await _make_advised_indexes(loaded, database)
        assert len(names) >= 6, names
        # Read back from the catalog, every advised index is there.
        catalog = Catalog(database, "", lambda sql: _run(loaded, sql))
        found = {index.name for table in sorted(tables) for index in await catalog.indexes(table)}
        assert names <= found
        # On SQLite the statements name the trigram tables: those of the searched things' names.
        trigram = {name: await trigram_tables(resource, catalog) for name, resource in loaded.resources.items()}
        if database is SQLITE:
            assert TrigramTable("Thing", "name", "ix_things_name_trgm") in trigram["things"], trigram
        else:
            assert not any(trigram.values())
        searched = {name: await indexed_search(resource, catalog) for name, resource in loaded.resources.items()}
        # The searched paths an index of the listed table serves: none through a to-many relation (tags).
        serves_text = database is not DATABASES["mariadb"]  # MariaDB has no trigram index
        expected = {"name", "note", "owner__name"} if serves_text else {"owner__name"}
        things = searched["things"]
        assert things is not None, searched
        assert things.paths == frozenset(expected), searched
        # The table's rows: counted on SQLite, the planner's estimate elsewhere (none before ANALYZE).
        assert things.rows == len(THINGS) if database is SQLITE else things.rows >= 0, things
        yield Indexed(loaded, trigram, searched)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
async def test_case_with_the_advised_indexes(indexed: Indexed, case: Case) -> None:
    await test_conformance.run_case(
        indexed.target, case, trigram_tables=indexed.trigram_tables, indexed_search=indexed.indexed_search
    )
