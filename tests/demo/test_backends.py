"""The demo on both storage backends and every database: wiring, the same answers from SQLAlchemy and Piccolo,
the same answers from every database, and one app mixing the backends.

Expectations of the side-by-side app come from plain SQL over the CSVs (``tests/demo/reference.py``); the
comparison tests hold the two backends to each other over one loaded database, and each database server
to SQLite (loaded whether selected or not: it needs no server).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from litestar import Litestar
from litestar.testing import TestClient
from piccolo.engine.postgres import PostgresEngine
from piccolo.engine.sqlite import SQLiteEngine
from sqlalchemy.pool import QueuePool, StaticPool

from litestar_listing import ListingPlugin, Resource
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend, read_engine
from litestar_listing.demo import app as demo_module
from litestar_listing.demo import cli
from litestar_listing.demo.app import (
    EXAMPLES,
    DemoBackends,
    create_app,
    demo_app,
    piccolo_backends,
    piccolo_engine,
    resources,
    sqlalchemy_backends,
)
from tests.conftest import async_url, postgres_database_url
from tests.demo.reference import column, scalar
from tests.demo.test_demo_api import (
    DEMO_BACKENDS,
    DEMO_DATABASES,
    DEMO_PG_DATABASE,
    FLIGHTS_WITH_AIRPORTS,
    README_EXCHANGES,
    listing,
    loaded_url,
)
from tests.docs.test_guide_examples import answer
from tests.matrix import selected
from tests.openapi_parameters import sent_parameters

pytestmark = pytest.mark.skipif(not DEMO_BACKENDS, reason="the demo runs on the SQLAlchemy and Piccolo backends")
needs_piccolo = pytest.mark.skipif(not selected(backend="piccolo"), reason="compares Piccolo with SQLAlchemy")
needs_sqlalchemy = pytest.mark.skipif(
    not selected(backend="sqlalchemy"), reason="the SQLAlchemy backend is not selected"
)
needs_postgresql = pytest.mark.skipif("postgresql" not in DEMO_DATABASES, reason="PostgreSQL is not selected")
BACKEND_TYPES: dict[str, type[Any]] = {"sqlalchemy": SQLAlchemyBackend, "piccolo": PiccoloBackend}
RESOURCE_NAMES = ["airlines", "airports", "planes", "flights", "weather", "watched-flights"]
UNUSED_SQLITE = "sqlite+aiosqlite:///never-opened.sqlite"  # building an app opens no connection


def listed_resources(app: Litestar) -> tuple[Resource, ...]:
    return app.plugins.get(ListingPlugin).resources


# ------------------------------------------------------------------------------------------ wiring


@pytest.mark.parametrize("backend", DEMO_BACKENDS)
def test_create_app_serves_every_resource_on_the_chosen_backend(backend: str) -> None:
    listed = listed_resources(create_app(UNUSED_SQLITE, backend=backend))
    assert [resource.name for resource in listed] == RESOURCE_NAMES
    assert {type(resource.backend) for resource in listed} == {BACKEND_TYPES[backend]}


def _options(resource: Resource) -> dict[str, Any]:
    skipped = {"backend", "enrich", "scopes"}
    options = {
        field.name: getattr(resource, field.name)
        for field in dataclasses.fields(resource)
        if field.init and field.name not in skipped
    }
    options["scopes"] = [forced.fields for forced in resource.scopes]
    options["enrich"] = resource.enrich is not None
    return options


@needs_piccolo
def test_both_backends_declare_the_same_resources() -> None:
    on_sqlalchemy = listed_resources(create_app(UNUSED_SQLITE, backend="sqlalchemy"))
    on_piccolo = listed_resources(create_app(UNUSED_SQLITE, backend="piccolo"))
    assert [_options(resource) for resource in on_piccolo] == [_options(resource) for resource in on_sqlalchemy]


@needs_piccolo
def test_both_backends_publish_the_same_openapi() -> None:
    docs = {
        backend: create_app(UNUSED_SQLITE, backend=backend).openapi_schema.to_schema()
        for backend in ("sqlalchemy", "piccolo")
    }
    airports = [doc["components"]["schemas"]["Airport"] for doc in docs.values()]
    departures = [schema["properties"].pop("departures") for schema in airports]
    # The one difference: SQLAlchemy cannot tell that the scalar subquery is never NULL, Piccolo takes
    # the declared Integer() (null=False).
    assert departures == [{"oneOf": [{"type": "integer"}, {"type": "null"}]}, {"type": "integer"}]
    # So Litestar 2.22 and 2.23 (the floor is 2.22) leave the nullable one out of ``required``; 2.24
    # lists every field without a default.
    for schema in airports:
        schema["required"] = [name for name in schema["required"] if name != "departures"]
    assert docs["piccolo"] == docs["sqlalchemy"]
    # Not vacuous: the documents describe the six list operations, the flights' facets and their filter parameters.
    operations = {path: item["get"] for path, item in docs["piccolo"]["paths"].items() if path.startswith("/api/v1/")}
    expected = [*(f"/api/v1/{name}" for name in RESOURCE_NAMES), "/api/v1/flights/facets"]
    assert sorted(operations) == sorted(expected)
    parameters = set(sent_parameters(docs["piccolo"], operations["/api/v1/flights"]))
    assert {"dest_airport__tzone", "plane__year__gte", "search", "order_by"} <= parameters


def test_unknown_backend_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"unknown demo backend 'nope'; choose one of sqlalchemy, piccolo, beanie"):
        create_app(UNUSED_SQLITE, backend="nope")


def test_cli_offers_the_app_backends() -> None:
    assert cli.BACKENDS == demo_module.BACKENDS == ("sqlalchemy", "piccolo", "beanie")


@needs_piccolo
@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite+aiosqlite:////var/data/demo.sqlite", "/var/data/demo.sqlite"),
        ("sqlite:///relative/demo.sqlite", "relative/demo.sqlite"),
    ],
)
def test_piccolo_engine_on_sqlite_opens_the_same_file(url: str, path: str) -> None:
    engine = piccolo_engine(url)
    assert isinstance(engine, SQLiteEngine)
    assert engine.path == path


@needs_piccolo
@needs_postgresql
def test_piccolo_engine_on_postgresql_uses_the_same_database() -> None:
    # Piccolo's engines connect when they are built (a server version check): a real server.
    plain = postgres_database_url(DEMO_PG_DATABASE)
    engine = piccolo_engine(async_url(plain))
    assert isinstance(engine, PostgresEngine)
    assert engine.config == {"dsn": plain}
    assert engine.pool is None


@needs_piccolo
def test_piccolo_engine_keeps_an_encoded_password(monkeypatch: pytest.MonkeyPatch) -> None:
    async def no_version_check(_engine: PostgresEngine) -> None:
        return None  # the host below does not exist

    monkeypatch.setattr(PostgresEngine, "check_version", no_version_check)
    engine = piccolo_engine("postgresql+asyncpg://demo:p%40ss%2Fw@db.example:5433/flights")
    assert isinstance(engine, PostgresEngine)
    assert engine.config == {"dsn": "postgresql://demo:p%40ss%2Fw@db.example:5433/flights"}


@needs_piccolo
@pytest.mark.parametrize("url", ["mysql://demo@localhost/flights", "sqlite+aiosqlite:///:memory:", "not a url"])
def test_piccolo_engine_rejects_other_databases(url: str) -> None:
    with pytest.raises(ValueError, match="URL"):
        piccolo_engine(url)


@needs_piccolo
@pytest.mark.parametrize(
    "url", ["mysql://demo@db.invalid/flights", "mysql+asyncmy://demo@db.invalid/flights", "mariadb://db.invalid/f"]
)
def test_piccolo_engine_refuses_mariadb(url: str) -> None:
    # db.invalid does not resolve: the refusal comes before any connection.
    with pytest.raises(ValueError, match="Piccolo has no MySQL engine: the piccolo backend needs a SQLite or"):
        piccolo_engine(url)


# ------------------------------------------------------------------------------------------ lifecycles


@needs_sqlalchemy
@pytest.mark.parametrize("database", DEMO_DATABASES)
def test_sqlalchemy_connections_close_with_the_app(database: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    url = loaded_url(database, tmp_path_factory)
    # Twice: advanced-alchemy gives every config after a process's first numbered app-state keys.
    for _ in range(2):
        backends = sqlalchemy_backends(url)
        backend = backends.airlines
        assert isinstance(backend, SQLAlchemyBackend)
        assert backend.config is not None
        engine = backend.config.get_engine()
        with TestClient(demo_app(resources(backends), [backends])) as client:
            assert listing(client, "/api/v1/airlines/?count=1")["pagination"]["total"] == 16
            # The start-up's connection; on PostgreSQL and MariaDB the count's beside the page's, on
            # SQLite the list's on the read engine.
            pools = [engine.pool]
            reads = read_engine(engine.sync_engine)
            if reads is not None:
                pools.append(reads.pool)
            assert all(isinstance(pool, QueuePool) for pool in pools)
            checked_in = {"sqlite": [1, 1], "postgresql": [2], "mariadb": [2]}[database]
            assert [pool.checkedin() for pool in pools] == checked_in  # type: ignore[attr-defined]
            # Ten pooled connections on PostgreSQL (docs: backends, "Totals on PostgreSQL"), SQLAlchemy's five
            # elsewhere.
            assert engine.pool.size() == (10 if database == "postgresql" else 5)  # type: ignore[attr-defined]
        assert [pool.checkedin() for pool in pools] == [0] * len(pools)  # type: ignore[attr-defined]


@needs_sqlalchemy
def test_sqlalchemy_backends_take_an_in_memory_sqlite_database() -> None:
    # The parse benchmark lists an empty in-memory database: SQLAlchemy's StaticPool takes no pool size.
    backends = sqlalchemy_backends("sqlite+aiosqlite:///:memory:")
    backend = backends.flights
    assert isinstance(backend, SQLAlchemyBackend)
    assert backend.config is not None
    assert isinstance(backend.config.get_engine().pool, StaticPool)


@needs_piccolo
@needs_postgresql
def test_piccolo_pool_opens_and_closes_with_the_app(tmp_path_factory: pytest.TempPathFactory) -> None:
    # On SQLite Piccolo has no pool: each statement opens and closes its own connection.
    backends = piccolo_backends(loaded_url("postgresql", tmp_path_factory))
    backend = backends.flights
    assert isinstance(backend, PiccoloBackend)
    engine = backend.engine
    assert isinstance(engine, PostgresEngine)
    assert _pool(engine) is None
    with TestClient(demo_app(resources(backends), [backends])) as client:
        assert _pool(engine) is not None
        assert listing(client, "/api/v1/flights/?count=1")["pagination"]["total"] == 336_776
    assert _pool(engine) is None


def _pool(engine: PostgresEngine) -> object:
    """The engine's pool, read through a call: mypy would keep its narrowing across the app's lifetime."""
    return engine.pool


@needs_piccolo
@pytest.mark.skipif(not DEMO_DATABASES, reason="no database selected")
def test_cli_serves_the_chosen_backend(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = loaded_url(DEMO_DATABASES[0], tmp_path_factory)
    served: list[Litestar] = []

    def run(app: Litestar, **_options: Any) -> None:
        served.append(app)

    monkeypatch.setattr(uvicorn, "run", run)
    assert cli.main(["demo", "--backend", "piccolo", "--database", url, "--port", "0"]) == 0
    assert "served by the piccolo backend" in capsys.readouterr().out
    [app] = served
    assert {type(resource.backend) for resource in listed_resources(app)} == {PiccoloBackend}
    with TestClient(app) as client:
        body = listing(client, "/api/v1/flights/?count=2")
    assert [item["id"] for item in body["data"]] == column("SELECT id FROM flights ORDER BY time_hour DESC, id LIMIT 2")


def test_cli_refuses_an_unknown_backend(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "--backend", "nope"]) == 2
    assert "'nope' is not one of 'sqlalchemy', 'piccolo', 'beanie'" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ the same answers


@dataclasses.dataclass(frozen=True)
class Case:
    """A request both backends must answer alike; ``empty`` says that its page has no items."""

    path: str
    token: str | None = None
    status: int = 200
    empty: bool = False

    @property
    def id(self) -> str:
        return self.path.removeprefix("/api/v1/") + (f" [{self.token}]" if self.token else "")


def _example_cases() -> list[Case]:
    cases = []
    for label, path in EXAMPLES.items():
        token = re.search(r"Bearer (demo-\w+)", label)
        cases.append(Case(path, token[1] if token else None, 400 if label == "a bad request" else 200))
    return cases


CASES = [
    *_example_cases(),
    # operators
    Case("/api/v1/flights/?dep_delay__lt=-30&arr_delay__isnull=false&order_by=arr_delay&count=7"),
    Case("/api/v1/flights/?month__in=1,2&day=1&hour__lte=6&origin__ne=EWR&order_by=sched_dep_time,-distance"),
    Case("/api/v1/flights/?dep_delay__nin=0,1,2&order_by=-dep_delay&count=3"),
    Case("/api/v1/flights/?tailnum__istartswith=n9&carrier__in=DL,9E&order_by=tailnum&count=5"),
    Case("/api/v1/flights/?tailnum__endswith=AA&flight__gt=1000&order_by=-flight&count=5"),
    Case("/api/v1/flights/?tailnum__in=N14228,N24211,NOPE&order_by=-time_hour&count=100"),
    Case(
        "/api/v1/flights/?time_hour__gte=2013-07-04T08:00:00-04:00&time_hour__lt=2013-07-04T13:00:00Z&order_by=carrier"
    ),
    Case("/api/v1/flights/?time_hour__in=2013-01-01T10:00:00Z,2013-01-01T11:00:00%2B00:00&count=5"),
    Case("/api/v1/airports/?tzone__ne=America/New_York&tzone__isnull=true&count=5"),
    Case("/api/v1/airports/?lat=40.639751"),
    Case("/api/v1/planes/?year__gte=2010&engines=2&order_by=-seats,year&count=10"),
    Case("/api/v1/weather/?precip=0&visib__lt=0.5&order_by=visib,-id&count=3"),
    Case("/api/v1/weather/?wind_gust__gt=40&order_by=-wind_gust,time_hour"),
    # relation filters and order, to-one relations that may be missing
    Case("/api/v1/flights/?dest_airport__name__ilike=international&order_by=-dest_airport__alt&count=5"),
    Case("/api/v1/flights/?plane__manufacturer=AIRBUS&plane__seats__gte=300&order_by=-plane__year&count=5"),
    Case("/api/v1/flights/?dest_airport__faa__isnull=true&order_by=dest,-time_hour&count=5"),
    Case("/api/v1/flights/?order_by=dest_airport__name&count=5"),
    Case("/api/v1/flights/?plane__year__isnull=true&order_by=plane__model&count=3"),
    Case("/api/v1/flights/?plane__model__endswith=-200&order_by=plane__model,-id&count=5"),
    # search
    Case("/api/v1/flights/?search=los angeles&count=5"),
    Case("/api/v1/flights/?search=N14228&order_by=time_hour"),
    Case("/api/v1/airports/?search=kennedy"),
    Case("/api/v1/planes/?search=airbus&manufacturer__ne=AIRBUS&count=10"),
    Case("/api/v1/airports/?search=%25&count=3", empty=True),
    # paging, to the last page and past it
    Case("/api/v1/flights/?count=100&page=3368"),
    Case("/api/v1/flights/?count=100&page=3369", empty=True),
    Case("/api/v1/airports/?order_by=name&count=5&page=100"),
    # tenants and owners
    Case("/api/v1/flights/?carrier=AA&count=3", "demo-ua"),
    Case("/api/v1/flights/?carrier=AA&count=3", "demo-admin"),
    Case("/api/v1/flights/?airline__name__ilike=united&origin=LGA&order_by=-arr_delay&count=4", "demo-admin"),
    Case("/api/v1/flights/?order_by=-plane__year&count=20&page=3000", "demo-ua", empty=True),
    Case("/api/v1/watched-flights/?count=100", "demo-aa"),
    Case("/api/v1/watched-flights/?flight__origin=LGA&order_by=flight__dep_delay", "demo-aa"),
    Case("/api/v1/watched-flights/?user_id=2&note__isnull=false", "demo-aa"),
    Case("/api/v1/watched-flights/?deleted_at__isnull=false", "demo-aa", empty=True),
    Case("/api/v1/watched-flights/?order_by=-flight__time_hour&count=2&page=2", "demo-dl"),
    Case("/api/v1/watched-flights/", "demo-admin"),
    # computed column, enrichment
    Case("/api/v1/airports/?order_by=-departures&count=5"),
    Case("/api/v1/airports/?order_by=departures,-faa&count=5&page=2"),
    Case("/api/v1/airlines/?count=16"),
    Case("/api/v1/airlines/?search=air&order_by=-name"),
    # bad requests
    Case("/api/v1/flights/?count=500&year=twenty&order_by=arrival&plane__password=x", status=400),
    Case("/api/v1/flights/?dep_delay__gte=abc&origin__in=&page=0", status=400),
    Case("/api/v1/flights/?time_hour__gte=yesterday&tailnum__isnull=maybe", status=400),
    Case("/api/v1/airports/?order_by=-nope&alt__like=1%25&departures__gt=0", status=400),
    Case("/api/v1/weather/?search=rain", status=400),
    Case("/api/v1/planes/?seats__between=1", status=400),
    Case("/api/v1/watched-flights/?user__name=Abe", "demo-aa", status=400),
    Case("/api/v1/watched-flights/", status=401),
    Case("/api/v1/flights/", "nope", status=401),
]


@pytest.fixture(scope="module", params=DEMO_DATABASES)
def both(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[TestClient[Litestar], TestClient[Litestar]]]:
    url = loaded_url(request.param, tmp_path_factory)
    with (
        TestClient(create_app(url, backend="sqlalchemy")) as on_sqlalchemy,
        TestClient(create_app(url, backend="piccolo")) as on_piccolo,
    ):
        yield on_sqlalchemy, on_piccolo


@needs_piccolo
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_both_backends_give_the_same_answer(
    both: tuple[TestClient[Litestar], TestClient[Litestar]], case: Case
) -> None:
    headers = {"authorization": f"Bearer {case.token}"} if case.token else {}
    on_sqlalchemy, on_piccolo = (client.get(case.path, headers=headers) for client in both)
    assert (on_sqlalchemy.status_code, on_piccolo.status_code) == (case.status, case.status), on_piccolo.text
    assert on_piccolo.json() == on_sqlalchemy.json()
    if case.status == 200:
        assert bool(on_piccolo.json()["data"]) is not case.empty


SERVER_DATABASES = [database for database in DEMO_DATABASES if database != "sqlite"]
needs_a_server = pytest.mark.skipif(not SERVER_DATABASES, reason="no database server is selected")


def _unhurried_demo(url: str) -> Litestar:
    """``create_app(url)`` without the lists' time limit.

    The comparison is of answers, on two servers at once beside the other CI sessions: a 503 from a
    busy machine would say nothing about them (the time limit is ``test_demo_api``'s to test).
    """
    backends = sqlalchemy_backends(url)
    return demo_app([dataclasses.replace(resource, timeout=None) for resource in resources(backends)], [backends])


@pytest.fixture(scope="module", params=SERVER_DATABASES)
def beside_sqlite(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[TestClient[Litestar], TestClient[Litestar]]]:
    """The SQLAlchemy demo on SQLite and on a database server, each over its own loaded copy."""
    with (
        TestClient(_unhurried_demo(loaded_url("sqlite", tmp_path_factory))) as on_sqlite,
        TestClient(_unhurried_demo(loaded_url(request.param, tmp_path_factory))) as on_server,
    ):
        yield on_sqlite, on_server


@needs_sqlalchemy
@needs_a_server
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_every_database_gives_sqlite_s_answer(
    beside_sqlite: tuple[TestClient[Litestar], TestClient[Litestar]], case: Case
) -> None:
    headers = {"authorization": f"Bearer {case.token}"} if case.token else {}
    on_sqlite, on_server = (client.get(case.path, headers=headers) for client in beside_sqlite)
    assert (on_sqlite.status_code, on_server.status_code) == (case.status, case.status), on_server.text
    assert on_server.json() == on_sqlite.json()
    if case.status == 200:
        assert bool(on_server.json()["data"]) is not case.empty


@needs_sqlalchemy
@needs_a_server
@pytest.mark.parametrize("command", [command for command, _ in README_EXCHANGES])
def test_the_readme_requests_get_sqlite_s_whole_bodies(
    beside_sqlite: tuple[TestClient[Litestar], TestClient[Litestar]], command: str
) -> None:
    # The README quotes parts of some answers (jq); here the whole body of each request.
    whole = command.partition(" | ")[0]
    on_sqlite, on_server = (answer(client, whole) for client in beside_sqlite)
    assert on_server == on_sqlite


def test_the_comparison_covers_every_example() -> None:
    compared = {case.path for case in CASES}
    assert set(EXAMPLES.values()) <= compared
    assert len(CASES) - len(EXAMPLES) >= 12


# ------------------------------------------------------------------------------------------ one app, two backends


@needs_piccolo
@pytest.mark.parametrize("database", DEMO_DATABASES)
def test_one_app_serves_resources_from_both_backends(database: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    url = loaded_url(database, tmp_path_factory)
    on_sqlalchemy, on_piccolo = sqlalchemy_backends(url), piccolo_backends(url)
    chosen: dict[str, DemoBackends] = {
        "airlines": on_sqlalchemy,
        "planes": on_sqlalchemy,
        "weather": on_sqlalchemy,
        "flights": on_piccolo,
        "airports": on_piccolo,
        "watched-flights": on_piccolo,
    }
    listed = [
        resource
        for backends in (on_sqlalchemy, on_piccolo)
        for resource in resources(backends)
        if chosen[resource.name] is backends
    ]
    app = demo_app(listed, [on_sqlalchemy, on_piccolo])
    assert {resource.name: type(resource.backend) for resource in listed_resources(app)} == {
        name: BACKEND_TYPES[backends.name] for name, backends in chosen.items()
    }
    with TestClient(app) as client:
        # SQLAlchemy: enrichment in the request's session.
        airlines = listing(client, "/api/v1/airlines/?order_by=name&count=5")
        assert [item["carrier"] for item in airlines["data"]] == column(
            "SELECT carrier FROM airlines ORDER BY name LIMIT 5"
        )
        for item in airlines["data"]:
            assert item["fleet_size"] == scalar(
                "SELECT count(DISTINCT tailnum) FROM flights WHERE carrier = ?", item["carrier"]
            )
        planes = listing(client, "/api/v1/planes/?year__gte=2010&order_by=-seats&count=5")
        assert planes["pagination"]["total"] == scalar(
            "SELECT count(*) FROM planes WHERE CAST(year AS INTEGER) >= 2010"
        )
        assert [item["tailnum"] for item in planes["data"]] == column(
            "SELECT tailnum FROM planes WHERE CAST(year AS INTEGER) >= 2010"
            " ORDER BY CAST(seats AS INTEGER) DESC, tailnum LIMIT 5"
        )
        weather = listing(
            client, "/api/v1/weather/?origin=LGA&time_hour__gte=2013-06-01T04:00:00Z&time_hour__lt=2013-06-02"
        )
        assert weather["pagination"]["total"] == scalar(
            "SELECT count(*) FROM weather WHERE origin = 'LGA'"
            " AND time_hour >= '2013-06-01T04:00:00Z' AND time_hour < '2013-06-02T00:00:00Z'"
        )
        # Piccolo: relation filters and order, the loaded airline, tenant scoping.
        flights = listing(
            client,
            "/api/v1/flights/?origin=JFK&dest_airport__tzone=America/Los_Angeles&dep_delay__gte=300"
            "&order_by=-dep_delay&count=5",
        )
        where = "WHERE f.origin = 'JFK' AND d.tzone = 'America/Los_Angeles' AND CAST(f.dep_delay AS INTEGER) >= 300"
        assert flights["pagination"]["total"] == scalar(f"SELECT count(*) {FLIGHTS_WITH_AIRPORTS} {where}")
        assert [item["id"] for item in flights["data"]] == column(
            f"SELECT f.id {FLIGHTS_WITH_AIRPORTS} {where} ORDER BY CAST(f.dep_delay AS INTEGER) DESC, f.id LIMIT 5"
        )
        assert all(item["airline"]["carrier"] == item["carrier"] for item in flights["data"])
        united = listing(client, "/api/v1/flights/?carrier=AA&count=1", authorization="Bearer demo-ua")
        assert united["pagination"]["total"] == scalar("SELECT count(*) FROM flights WHERE carrier = 'UA'")
        # Piccolo: the computed column.
        airports = listing(client, "/api/v1/airports/?order_by=-departures&count=4")
        expected = column(
            "SELECT a.faa FROM airports a LEFT JOIN flights f ON f.origin = a.faa"
            " GROUP BY a.faa ORDER BY count(f.id) DESC, a.faa LIMIT 4"
        )
        assert [item["faa"] for item in airports["data"]] == expected
        assert [item["departures"] for item in airports["data"]] == [
            scalar("SELECT count(*) FROM flights WHERE origin = ?", faa) for faa in expected
        ]
        # Piccolo: per-user scoping and soft delete (12 watches per airline user, every 4th deleted).
        watched = listing(client, "/api/v1/watched-flights/?count=100", authorization="Bearer demo-aa")
        assert watched["pagination"]["total"] == 9
        assert {item["user_id"] for item in watched["data"]} == {3}
        assert {item["flight"]["carrier"] for item in watched["data"]} == {"AA"}
