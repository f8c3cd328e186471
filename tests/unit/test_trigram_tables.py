"""SQLite's trigram tables as the advisor makes them, and the candidates a text match asks them for.

A trigram table may only narrow: every row a match holds for must be among its candidates, whatever
the case of either side, since the statement's own match decides among them. Checked against plain
Python over the same rows (``fold_case``, ``in``), on SQLite's own FTS5 (the standard library's).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litestar_listing.backends.relational.databases import SQLITE
from litestar_listing.backends.relational.indexes import (
    TRIGRAM_PHRASES,
    TRIGRAM_TERMS,
    catalog_sql,
    create_index,
    existing_indexes,
    serving,
    trigram_match,
)
from litestar_listing.core.indexes import IndexKey, IndexKind, IndexNeed
from litestar_listing.core.text import LikePattern, contains_pattern, fold_case, parse_like

NEED = IndexNeed("planes", (IndexKey("model", nullable=True),), IndexKind.TRIGRAM, row_key="id")
TABLE = NEED.name

# Letters with more than one case variant, and some that fold alone: the Kelvin sign and the Ohm
# sign fold to k and omega, the dotted capital I to i, final sigma to itself; Georgian Mtavruli
# (Unicode 11) folds to Mkhedruli.
ALPHABET = "aAbBkKK nN12\"'%_İiIıσΣςßẞΩΩωᲐა-"  # noqa: RUF001


@pytest.fixture
def database() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE planes (id INTEGER PRIMARY KEY, model TEXT)")
    connection.executemany("INSERT INTO planes (model) VALUES (?)", [("A320-232",), (None,), ("EMB-145XR",)])
    for statement in create_index(NEED, SQLITE):
        connection.execute(statement)
    yield connection
    connection.close()


def candidates(connection: sqlite3.Connection, pattern: LikePattern, *, folded: bool) -> set[int] | None:
    match = trigram_match(pattern, folded=folded)
    if match is None:
        return None
    rows = connection.execute(f'SELECT rowid FROM "{TABLE}" WHERE "{TABLE}" MATCH ?', (match,))
    return {row[0] for row in rows}


def test_the_table_follows_every_insert_update_and_delete(database: sqlite3.Connection) -> None:
    database.execute("INSERT INTO planes (model) VALUES ('A321-211')")
    database.execute("UPDATE planes SET model = 'MD-88' WHERE model = 'EMB-145XR'")
    database.execute("UPDATE planes SET id = 40 WHERE model = 'A320-232'")
    database.execute("DELETE FROM planes WHERE model = 'A321-211'")
    database.execute(f"INSERT INTO {TABLE}({TABLE}) VALUES ('integrity-check')")
    assert candidates(database, contains_pattern("a32"), folded=True) == {40}
    assert candidates(database, contains_pattern("emb"), folded=True) == set()
    assert candidates(database, contains_pattern("md-"), folded=True) == {3}


def test_the_catalog_lists_the_table_as_the_trigram_index_of_its_column(database: sqlite3.Connection) -> None:
    found = existing_indexes(database.execute(catalog_sql(SQLITE, "planes")).fetchall())
    index = serving(NEED, found)
    assert index is not None
    assert index.name == TABLE
    # Another table's catalog does not list it.
    database.execute("CREATE TABLE engines (id INTEGER PRIMARY KEY, model TEXT)")
    assert [index.name for index in existing_indexes(database.execute(catalog_sql(SQLITE, "engines")))] == [
        "(primary key)"
    ]


def test_a_pattern_without_three_literal_characters_asks_for_nothing() -> None:
    assert trigram_match(contains_pattern("ab"), folded=True) is None
    assert trigram_match(parse_like("a%bc%d_e"), folded=False) is None
    assert trigram_match(parse_like("%abc%"), folded=False) == '("abc")'


def test_a_long_pattern_asks_for_a_bounded_match() -> None:
    match = trigram_match(contains_pattern("Kk" * 500), folded=True)
    assert match is not None
    assert match.count(" AND ") < TRIGRAM_TERMS
    assert match.count('"') // 2 <= TRIGRAM_PHRASES


def test_quotes_are_written_as_fts5_strings() -> None:
    assert trigram_match(contains_pattern('1"2'), folded=False) == '("1""2")'


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    rows=st.lists(st.text(ALPHABET, max_size=12), min_size=1, max_size=12),
    text=st.text(ALPHABET, min_size=1, max_size=6),
    folded=st.booleans(),
    wildcard=st.sampled_from(["", "%", "_"]),
)
def test_every_matching_row_is_a_candidate(rows: Sequence[str], text: str, *, folded: bool, wildcard: str) -> None:
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE TABLE planes (id INTEGER PRIMARY KEY, model TEXT)")
        for statement in create_index(NEED, SQLITE):
            connection.execute(statement)
        connection.executemany("INSERT INTO planes (id, model) VALUES (?, ?)", enumerate(rows, start=1))
        # A LIKE pattern: the text split by a wildcard in its middle, matched anywhere in the value.
        middle = len(text) // 2
        written = (
            text[:middle].replace("%", "").replace("_", "") + wildcard + text[middle:].replace("%", "").replace("_", "")
        )
        pattern = parse_like(f"%{written}%")
        regex = pattern.fold().to_regex() if folded else pattern.to_regex()
        matching = {
            row_id
            for row_id, value in enumerate(rows, start=1)
            if regex.fullmatch(fold_case(value) if folded else value)
        }
        found = candidates(connection, pattern, folded=folded)
        if found is not None:
            assert matching <= found
    finally:
        connection.close()
