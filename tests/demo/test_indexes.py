"""The index advisor on the demo: the indexes the demo creates are the ones it advises, on every database.

The demo declares its indexes on its models; the advisor derives its own from the demo's resources
alone. Each is read back from the database's catalog: every advised index exists, and every index the
demo made serves an advised need.
"""

from __future__ import annotations

import asyncio
import logging
import pathlib

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from sqlalchemy import Integer, String, create_engine, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from litestar_listing import ListingPlugin, Resource
from litestar_listing.backends.relational.indexes import Catalog, serving
from litestar_listing.demo.app import demo_backends, resources
from litestar_listing.demo.cli import main
from litestar_listing.plugin.indexes import advise, report
from tests.demo.test_demo_api import DEMO_TARGETS, loaded_url
from tests.matrix import TestTarget

pytestmark = pytest.mark.skipif(not DEMO_TARGETS, reason="the demo runs on the SQLAlchemy and Piccolo backends")

DEMO_TABLES = ("airlines", "airports", "planes", "flights", "weather", "demo_users", "watched_flights")
# Made by the database, not by the demo: primary keys, and MariaDB's index for a foreign key that
# no declared index leads (named as the key: fk_<table>_<column>_<referred table>).
MADE_BY_THE_DATABASE = ("(primary key)", "PRIMARY", "pk_", "sqlite_autoindex_", "fk_")


@pytest.fixture(scope="module", params=DEMO_TARGETS, ids=str)
def target_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[TestTarget, str]:
    target: TestTarget = request.param
    return target, loaded_url(target.database, tmp_path_factory)


async def test_the_demo_has_every_index_the_advisor_gives(target_url: tuple[TestTarget, str]) -> None:
    target, url = target_url
    advice = await advise(resources(demo_backends(url, target.backend)), release=True)
    assert {item.database.name for item in advice if item.database is not None} == {target.database}
    assert [item.need.name for item in advice if item.missing] == []
    # The flights' own: the default order, the tenant's part of it, the delay ordering, four relations.
    flights = {item.need.name: item.existing for item in advice if item.need.table == "flights"}
    assert flights["ix_flights_time_hour_desc_id"] == "ix_flights_time_hour_id"
    assert flights["ix_flights_carrier_time_hour_desc_id"] == "ix_flights_carrier_time_hour_desc_id"
    assert flights["ix_flights_carrier"] in {"ix_flights_carrier_tailnum", "ix_flights_carrier_time_hour_desc_id"}
    assert flights["ix_flights_origin"] == "ix_flights_origin_carrier"
    delay = "ix_flights_dep_delay_id" if target.database == "postgresql" else "ix_flights_dep_delay_desc_id"
    assert flights["ix_flights_dep_delay_desc_id"] == delay
    # A substring search is served by pg_trgm's index on PostgreSQL, a trigram table on SQLite.
    trigram = flights["ix_flights_tailnum_trgm"]
    assert trigram == ("ix_flights_tailnum_trgm" if target.database in {"postgresql", "sqlite"} else None)


async def test_every_index_the_demo_makes_serves_an_advised_need(target_url: tuple[TestTarget, str]) -> None:
    target, url = target_url
    backends = demo_backends(url, target.backend)
    needs = [item.need for item in await advise(resources(backends), read_catalogs=False, release=True)]
    catalog = backends.flights.index_catalog()  # type: ignore[attr-defined]
    assert isinstance(catalog, Catalog)
    made = [index for table in DEMO_TABLES for index in await catalog.indexes(table)]
    if catalog.release is not None:
        await catalog.release()
    demo_s = [index for index in made if not index.name.startswith(MADE_BY_THE_DATABASE)]
    assert len(demo_s) >= 10
    assert [index.name for index in demo_s if not any(serving(need, [index]) for need in needs)] == []


def _demo_environment(monkeypatch: pytest.MonkeyPatch, url: str, backend: str) -> None:
    monkeypatch.setenv("LISTING_DEMO_DATABASE", url)
    monkeypatch.setenv("LISTING_DEMO_BACKEND", backend)


def test_the_command_prints_the_advice(
    target_url: tuple[TestTarget, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target, url = target_url
    _demo_environment(monkeypatch, url, target.backend)
    assert main(["indexes", "litestar_listing.demo.app:app_from_environment"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"-- {target.database} (")
    assert " 0 missing\n" in out.splitlines()[0] + "\n"
    assert "-- exists as ix_flights_time_hour_id: flights: default order -time_hour,id\n" in out
    assert "CREATE INDEX" not in out


def test_the_command_writes_each_form_offline(
    target_url: tuple[TestTarget, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target, url = target_url
    _demo_environment(monkeypatch, url, target.backend)
    app = "litestar_listing.demo.app:app_from_environment"
    assert main(["indexes", app, "--offline", "--database", "postgresql", "--format", "alembic"]) == 0
    out = capsys.readouterr().out
    # The place of the database is shown where it is the application's own.
    assert out.splitlines()[0].startswith("-- postgresql")
    assert out.splitlines()[0].endswith(": 15 indexes, the database not read")
    assert 'op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")\n' in out
    assert (
        'op.create_index("ix_flights_dep_delay_desc_id", "flights", [sa.text("dep_delay DESC NULLS LAST"), "id"])\n'
        in out
    )
    assert main(["indexes", app, "--offline", "--database", "sqlite", "--format", "piccolo"]) == 0
    out = capsys.readouterr().out
    assert "    await engine.run_ddl('CREATE INDEX IF NOT EXISTS ix_flights_time_hour_desc_id ON flights" in out
    assert '    await engine.run_ddl("CREATE VIRTUAL TABLE IF NOT EXISTS ix_flights_tailnum_trgm USING fts5(' in out
    # The airlines' key is their code, no rowid: SQLite has no trigram table for their names.
    assert "-- no index serves this on sqlite (every row is read): airlines: search name;" in out
    assert main(["indexes", "no_such_module:app"]) == 2


# ------------------------------------------------------------------------------ the start-up check


class _Base(DeclarativeBase):
    pass


class Note(_Base):
    __tablename__ = "notes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    title: Mapped[str] = mapped_column(String(50))
    rank: Mapped[int] = mapped_column(Integer)


def _notes_app(path: pathlib.Path, *, check: bool) -> Litestar:
    from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin

    from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend

    config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{path}")
    notes = Resource("notes", SQLAlchemyBackend(Note, config=config), default_order=("-rank",))
    return Litestar(plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([notes], check_indexes=check)])


class _Kept(logging.Handler):
    """The messages of one logger, kept: Litestar's logging configuration replaces the root's handlers."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_the_start_up_check_warns_of_missing_indexes(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "notes.sqlite"
    engine = create_engine(f"sqlite:///{path}")
    _Base.metadata.create_all(engine)
    statement = "CREATE INDEX IF NOT EXISTS ix_notes_rank_desc_id ON notes (rank DESC, id)"
    kept, logger = _Kept(), logging.getLogger("litestar_listing.indexes")
    logger.addHandler(kept)
    try:
        with TestClient(_notes_app(path, check=False)):
            pass
        assert kept.messages == []
        with TestClient(_notes_app(path, check=True)):
            pass
        message = f"missing index for notes: default order -rank,id on sqlite: {statement}"
        assert kept.messages == [f"{message} (litestar-listing indexes prints every one)"]
        kept.messages.clear()
        with engine.begin() as connection:
            connection.execute(text(statement))
        with TestClient(_notes_app(path, check=True)):
            pass
        assert kept.messages == []
    finally:
        logger.removeHandler(kept)
        engine.dispose()
    assert asyncio.run(advise([])) == []
    assert report([]) == ""


def test_a_search_reads_the_trigram_table_the_application_found(tmp_path: pathlib.Path) -> None:
    # The advisor's trigram table made on the notes' SQLite file: the application finds it when it
    # starts, and a search reads its candidates from it, with the answers plain Python gives.
    from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin

    from litestar_listing.backends.base import TrigramTable
    from litestar_listing.backends.relational.databases import SQLITE
    from litestar_listing.backends.relational.indexes import create_index
    from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend
    from litestar_listing.core.indexes import IndexKind
    from litestar_listing.core.text import fold_case
    from litestar_listing.plugin.binding import ListingState

    path = tmp_path / "notes.sqlite"
    engine = create_engine(f"sqlite:///{path}")
    _Base.metadata.create_all(engine)
    titles = ["Kelvin scale", "KELP forest", "a kelpie", "Ökonomie", "ÖKO-Test", "yolk"]
    config = SQLAlchemyAsyncConfig(connection_string=f"sqlite+aiosqlite:///{path}")
    notes = Resource("notes", SQLAlchemyBackend(Note, config=config), default_order=("id",), search_fields=("title",))
    (need,) = [
        item.need for item in asyncio.run(advise([notes], read_catalogs=False)) if item.need.kind is IndexKind.TRIGRAM
    ]
    with engine.begin() as connection:
        for statement in create_index(need, SQLITE):
            connection.execute(text(statement))
        # Written after the table was made: the triggers index them.
        for number, title in enumerate(titles, start=1):
            connection.execute(
                text("INSERT INTO notes (id, title, rank) VALUES (:id, :title, 0)"), {"id": number, "title": title}
            )
    app = Litestar(plugins=[SQLAlchemyPlugin(config=config), ListingPlugin([notes])])

    def found(client: TestClient[Litestar], term: str) -> list[int]:
        body = client.get("/api/v1/notes/", params={"search": term}).json()
        assert body["pagination"]["total"] == len(body["data"])
        return [item["id"] for item in body["data"]]

    try:
        with TestClient(app) as client:
            state = ListingState.of(app.state)
            assert state is not None
            assert state.bindings[notes].trigram_tables == {TrigramTable("Note", "title", "ix_notes_title_trgm")}
            for term in ("KEL", "elp", "öko", "olk", "ke"):
                expected = [
                    number for number, title in enumerate(titles, start=1) if fold_case(term) in fold_case(title)
                ]
                assert found(client, term) == expected, term
            # The lists read the table: with the first note's trigrams taken out of it, a term of
            # three letters no longer finds that note; two letters read every row and still do.
            with engine.begin() as connection:
                connection.execute(
                    text(f"INSERT INTO {need.name}({need.name}, rowid, title) VALUES ('delete', 1, :title)"),
                    {"title": titles[0]},
                )
            assert found(client, "KEL") == [2, 3]
            assert found(client, "ke") == [1, 2, 3]
            with engine.begin() as connection:
                connection.execute(text(f"INSERT INTO {need.name}({need.name}) VALUES ('rebuild')"))
            assert found(client, "KEL") == [1, 2, 3]
    finally:
        engine.dispose()
