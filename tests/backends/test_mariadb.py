"""SQLAlchemy on MariaDB: what the case table cannot show on its code-point test database.

The conformance database is made in ``utf8mb4_nopad_bin``, so that text orders as on the other
servers. Here a table keeps MariaDB's default collation (``utf8mb4_general_ci``: case, accents and
trailing spaces ignored), and every text operator must still answer as the query language says
(docs: backends, "MariaDB"): the expected ids are computed in Python from the same rows, and a facet
counts each text apart. Also: a list that runs out of time puts the session's time limit back, on a
pooled connection no transaction holds; and a MySQL server, or a MariaDB too old, is refused with a
message.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable

import pytest
from sqlalchemy import Integer, String, insert, literal_column, text
from sqlalchemy.dialects.mysql.asyncmy import MySQLDialect_asyncmy
from sqlalchemy.dialects.oracle.oracledb import OracleDialect_oracledb
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, create_async_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import ConfigurationError, ListContext, Resource, UnavailableError
from litestar_listing.backends.relational.databases import MARIADB
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend
from litestar_listing.backends.sqlalchemy.compiler import FOLD_COLLATION
from litestar_listing.backends.sqlalchemy.readers import dialect_database
from litestar_listing.core.text import fold_case
from litestar_listing.plugin.prepared import prepare
from tests.conftest import async_url, mariadb_database_url
from tests.matrix import selected

pytestmark = pytest.mark.skipif(
    not selected(backend="sqlalchemy", database="mariadb"), reason="SQLAlchemy on MariaDB is not selected"
)


class Base(DeclarativeBase):
    pass


class Word(Base):
    __tablename__ = "words"
    # The server's default collation, not the test database's code-point one.
    __table_args__ = {"mysql_collate": "utf8mb4_general_ci", "mysql_charset": "utf8mb4"}
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    text: Mapped[str] = mapped_column(String(50))


WORDS = ("a", "A", "a ", "á", "Straße", "STRASSE", "ẞ", "ß", "50%", "5000", "Ꭰ", "ꭰ", "résumé", "RESUME")  # noqa: RUF001 - Cherokee: lowercase added in Unicode 8
"""Texts a ci, ai and PAD SPACE collation takes for one another; ids are their positions + 1."""


def ids(keep: Callable[[str], bool]) -> list[int]:
    """The ids of ``WORDS`` that ``keep`` holds for, in id order: the expected answer."""
    return [index + 1 for index, word in enumerate(WORDS) if keep(word)]


@pytest.fixture(scope="module")
async def engine() -> AsyncIterator[AsyncEngine]:
    engine = create_async_engine(async_url(mariadb_database_url("listing_mariadb_collations")))
    async with engine.begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
        await connection.run_sync(Base.metadata.create_all)
        await connection.execute(insert(Word), [{"id": n + 1, "text": word} for n, word in enumerate(WORDS)])
    yield engine
    await engine.dispose()


async def listed(engine: AsyncEngine, *params: tuple[str, str], backend: SQLAlchemyBackend | None = None) -> list[int]:
    resource = Resource("words", backend or SQLAlchemyBackend(Word), search_fields=["text"])
    query = prepare(resource).parser.parse([*params, ("order_by", "id"), ("count", "100")], [])
    async with AsyncSession(engine) as session:
        page = await resource.backend.fetch(query, ListContext(session=session))
    return [item["id"] for item in page.items]


@pytest.mark.parametrize("word", ["a", "A", "a ", "ß", "ẞ", "STRASSE"])
async def test_equality_is_exact_whatever_the_collation(engine: AsyncEngine, word: str) -> None:
    assert await listed(engine, ("text", word)) == ids(lambda text: text == word)
    assert await listed(engine, ("text__ne", word)) == ids(lambda text: text != word)
    others = ["A", word]
    assert await listed(engine, ("text__in", ",".join(others))) == ids(lambda text: text in others)
    assert await listed(engine, ("text__nin", ",".join(others))) == ids(lambda text: text not in others)


@pytest.mark.parametrize(("operator", "value", "keep"), [
    ("like", "a%", lambda text: text.startswith("a")),
    ("like", "%e", lambda text: text.endswith("e")),
    ("startswith", "A", lambda text: text.startswith("A")),
    ("endswith", "%", lambda text: text.endswith("%")),
    ("startswith", "5", lambda text: text.startswith("5")),
])  # fmt: skip
async def test_patterns_are_case_and_accent_sensitive(
    engine: AsyncEngine, operator: str, value: str, keep: Callable[[str], bool]
) -> None:
    assert await listed(engine, (f"text__{operator}", value)) == ids(keep)


@pytest.mark.parametrize("value", ["a", "Á", "ß", "ẞ", "strasse", "ꭰ", "RÉSUMÉ", "0%"])
async def test_case_insensitive_means_the_simple_lowercase_mapping(engine: AsyncEngine, value: str) -> None:
    folded = fold_case(value)
    assert await listed(engine, ("text__ilike", value)) == ids(lambda text: folded in fold_case(text))
    assert await listed(engine, ("search", value)) == ids(lambda text: folded in fold_case(text))
    assert await listed(engine, ("text__istartswith", value)) == ids(lambda text: fold_case(text).startswith(folded))


async def test_the_fold_collation_lowercases_every_character_as_python(engine: AsyncEngine) -> None:
    """``FOLD_COLLATION``'s ``LOWER()`` is ``fold_case`` on every code point ``fold_case`` maps (below U+1F000).

    Python 3.11 and later know Unicode 14 or 15, whose simple lowercase mappings are the same there.
    """
    characters = [chr(code) for code in range(0x20, 0x1F000) if not 0xD800 <= code < 0xE000]
    lowered = text(f"SELECT LOWER(CONVERT(:text USING utf8mb4) COLLATE {FOLD_COLLATION})")
    differ: list[str] = []
    async with engine.connect() as connection:
        for start in range(0, len(characters), 8000):
            chunk = characters[start : start + 8000]
            got = (await connection.execute(lowered, {"text": "".join(chunk)})).scalar_one()
            assert len(got) == len(chunk)
            differ += [f"U+{ord(char):04X}" for char, low in zip(chunk, got, strict=True) if low != fold_case(char)]
    assert differ == []


async def test_a_facet_counts_each_text_apart_whatever_the_collation(engine: AsyncEngine) -> None:
    # Grouped as equality compares (docs: design, "Case and patterns"); equal counts ordered in the
    # column's collation, as a list orders them (docs: facets, "The answer"): "a" before "RESUME",
    # which code points put first.
    backend = SQLAlchemyBackend(Word)
    resource = Resource("words", backend, facet_fields=("text",))
    asked = prepare(resource).parser.parse_facets([("facet", "text"), ("facet_limit", "100")], [])
    async with AsyncSession(engine) as session:
        answer = await backend.facet_counts(asked, ListContext(session=session))
    (counted,) = answer.facets
    values = [each.value for each in counted.values]
    assert sorted(values) == sorted(WORDS)
    assert {each.count for each in counted.values} == {1}
    assert counted.distinct == answer.total == len(WORDS)
    assert values.index("a") < values.index("RESUME")


async def test_a_list_out_of_time_puts_the_session_limit_back(engine: AsyncEngine) -> None:
    slow = literal_column("(SELECT SLEEP(2))", Integer)
    backend = SQLAlchemyBackend(Word, computed={"slow": slow})
    resource = Resource("words", backend)
    query = prepare(resource).parser.parse([("order_by", "slow")], [])
    async with AsyncSession(engine) as session:
        before = (await session.execute(text("SELECT @@SESSION.max_statement_time"))).scalar_one()
        await session.commit()  # the list holds nothing: it runs in a transaction of its own
        with pytest.raises(UnavailableError) as raised:
            await backend.fetch(query, ListContext(session=session, deadline=time.monotonic() + 0.3))
        assert raised.value.reason == "timeout"
        after = (await session.execute(text("SELECT @@SESSION.max_statement_time"))).scalar_one()
    assert float(after) == float(before) == 0


async def test_a_count_beside_the_page_puts_its_connection_limit_back(engine: AsyncEngine) -> None:
    backend = SQLAlchemyBackend(Word)
    resource = Resource("words", backend)
    query = prepare(resource).parser.parse([("count", "5")], [])  # a full page: the total is counted
    limits = "SELECT @@SESSION.max_statement_time"
    async with AsyncSession(engine) as session:
        page = await backend.fetch(query, ListContext(session=session, deadline=time.monotonic() + 30))
    assert page.total == len(WORDS)
    async with engine.connect() as first, engine.connect() as second:  # the page's and the count's
        assert engine.pool.checkedout() == 2  # type: ignore[attr-defined]
        values = [(await connection.execute(text(limits))).scalar_one() for connection in (first, second)]
    assert [float(value) for value in values] == [0, 0]


def connected(version: tuple[int, ...], *, mariadb: bool) -> MySQLDialect_asyncmy:
    """SQLAlchemy's MySQL dialect as it is once connected to a server of ``version``."""
    dialect = MySQLDialect_asyncmy()
    dialect.server_version_info = version
    dialect.is_mariadb = mariadb
    return dialect


def test_only_mariadb_from_10_10_is_accepted() -> None:
    assert dialect_database(connected((10, 11, 9), mariadb=True)) is MARIADB
    assert dialect_database(MySQLDialect_asyncmy()) is MARIADB  # not yet connected: known at the first list
    with pytest.raises(ConfigurationError, match="not on MySQL servers"):
        dialect_database(connected((8, 0, 36), mariadb=False))
    with pytest.raises(ConfigurationError, match=r"MariaDB 10\.10 or later, not 10\.6\.18"):
        dialect_database(connected((10, 6, 18), mariadb=True))
    with pytest.raises(
        ConfigurationError, match=r"SQLAlchemyBackend runs on mariadb, postgresql, sqlite, not 'oracle'"
    ):
        dialect_database(OracleDialect_oracledb())  # type: ignore[no-untyped-call]
