"""Case-insensitive matching on SQLite: the SQL both backends compile agrees with ``fold_case`` on any text.

SQLite folds ASCII only, so the backends call a Python function for text outside ASCII and SQLite's
own ``lower()`` for the rest (``NON_ASCII_GLOB``). The traps are characters outside ASCII whose
lowercase is ASCII (KELVIN SIGN -> ``k``), or longer (``İ`` -> ``i̇``), and ASCII text against a
needle outside ASCII.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litestar_listing.core.text import contains_pattern, fold_case
from tests.matrix import backends_of, selected

TRAPS = ["Kelvin", "\u212aelvin", "İstanbul", "istanbul", "STRASSE", "Straße", "ÁLBUM", "álbum", "50% off", "a_b"]
NEEDLES = ["k", "K", "\u212a", "i̇", "İ", "i", "ss", "ß", "á", "Á", "%", "_", "lb"]


def _connection(rows: list[str]) -> sqlite3.Connection:
    from litestar_listing.backends.piccolo import FoldingConnection

    connection = sqlite3.connect(":memory:", factory=FoldingConnection)
    connection.execute('CREATE TABLE things ("name" TEXT)')
    connection.executemany('INSERT INTO things ("name") VALUES (?)', [(row,) for row in rows])
    return connection


def _sqlalchemy_where(needle: str) -> tuple[str, tuple[object, ...]]:
    from sqlalchemy import column, select, table
    from sqlalchemy.dialects import sqlite

    from litestar_listing.backends.sqlalchemy.compiler import STATEMENT_COMPILERS
    from tests.conformance.models import Thing

    compiler = STATEMENT_COMPILERS["sqlite"](Thing, select(Thing), {}, custom_base=False)
    name: Any = column("name")
    statement = select(name).select_from(table("things", name)).where(compiler.ilike(name, contains_pattern(needle)))
    compiled = statement.compile(dialect=sqlite.dialect())
    return str(compiled), tuple(compiled.params[key] for key in compiled.positiontup or ())


def _piccolo_where(needle: str) -> tuple[str, tuple[object, ...]]:
    from litestar_listing.backends.piccolo.compiler import QUERY_COMPILERS
    from litestar_listing.backends.piccolo.introspection import Tables
    from tests.conformance.piccolo_tables import Thing

    compiler = QUERY_COMPILERS["sqlite"](Tables(Thing, None), {}, None)
    condition = compiler.ilike(Thing.name, contains_pattern(needle))
    sql, arguments = condition.compile_string(engine_type="sqlite")
    return f'SELECT "name" FROM things WHERE {sql.replace(chr(34) + "things" + chr(34) + ".", "")}', tuple(arguments)


COMPILERS = {"sqlalchemy": _sqlalchemy_where, "piccolo": _piccolo_where}


@pytest.fixture(scope="module", params=[name for name in backends_of(selected()) if name in COMPILERS])
def where(request: pytest.FixtureRequest) -> Callable[[str], tuple[str, tuple[object, ...]]]:
    return COMPILERS[request.param]


def _expected(rows: list[str], needle: str) -> list[str]:
    return sorted(row for row in rows if fold_case(needle) in fold_case(row))


def _matched(rows: list[str], statement: tuple[str, tuple[object, ...]]) -> list[str]:
    connection = _connection(rows)
    try:
        return sorted(row for (row,) in connection.execute(*statement))
    finally:
        connection.close()


@pytest.mark.parametrize("needle", NEEDLES)
def test_traps(where: Callable[[str], tuple[str, tuple[object, ...]]], needle: str) -> None:
    assert _matched(TRAPS, where(needle)) == _expected(TRAPS, needle)


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.text(max_size=8), max_size=6), needle=st.text(min_size=1, max_size=3))
def test_any_text(where: Callable[[str], tuple[str, tuple[object, ...]]], rows: list[str], needle: str) -> None:
    rows = [row.replace("\x00", "") for row in rows]
    needle = needle.replace("\x00", "") or "a"
    assert _matched(rows, where(needle)) == _expected(rows, needle)
