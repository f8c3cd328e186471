"""Clients generated from the demo's OpenAPI at their generators' default settings, used against the demo.

openapi-python-client (no configuration file) writes a Python package, imported from a temporary
folder; it sends its requests to the application through Litestar's test client, an
``httpx.Client``. openapi-typescript writes the document's types, against which
``clients/typescript/list_flights.mts`` is compiled (``tsc``, strict) and run with node through
openapi-fetch, over HTTP to the demo served on loopback. Both generators must finish without an
error or a warning. Expectations come from plain SQL over the CSVs. ``openapi-spec-validator``
checks the same document. Run by ``nox -s clients`` (which installs ``clients/typescript`` with
``npm ci``).
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
import uvicorn
from litestar import Litestar
from litestar.testing import TestClient

from litestar_listing.demo.app import create_app
from tests.conftest import unavailable
from tests.demo.reference import column, rows, scalar
from tests.demo.test_demo_api import FLIGHTS_WITH_AIRPORTS, loaded_url

PACKAGE = "demo_client"
TYPESCRIPT = Path(__file__).resolve().parents[2] / "clients" / "typescript"
NODE_BIN = TYPESCRIPT / "node_modules" / ".bin"

# The TypeScript call's filters and order (clients/typescript/list_flights.mts), as SQL.
TS_WHERE = (
    "WHERE f.origin = 'JFK' AND CAST(f.dep_delay AS INTEGER) >= 300 AND f.carrier IN ('AA', 'UA', 'DL', 'B6', 'VX')"
    " AND d.tzone = 'America/Los_Angeles'"
)


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        unavailable(f"{name} is not installed: pip install --group clients")
    return found


def _node_tool(name: str) -> str:
    if shutil.which("node") is None:
        unavailable("node is not installed: apt-get install -y nodejs npm")
    tool = NODE_BIN / name
    if not tool.is_file():
        unavailable(f"{name} is not installed: npm ci --prefix clients/typescript")
    return str(tool)


def _run(command: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300, **options)  # noqa: S603
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.fixture(scope="module")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return loaded_url("sqlite", tmp_path_factory)


@pytest.fixture(scope="module")
def demo(database_url: str) -> Iterator[TestClient[Litestar]]:
    with TestClient(create_app(database_url)) as client:
        yield client


@pytest.fixture(scope="module")
def served(database_url: str) -> Iterator[str]:
    """The demo served over HTTP on a free loopback port, for node; its base URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(database_url), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive(), "the demo server stopped"
        assert time.monotonic() < deadline, "the demo server did not start in 60 s"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture(scope="module")
def document(demo: TestClient[Litestar], tmp_path_factory: pytest.TempPathFactory) -> Path:
    response = demo.get("/schema/openapi.json")
    assert response.status_code == 200
    path = tmp_path_factory.mktemp("openapi") / "openapi.json"
    path.write_bytes(response.content)
    return path


@pytest.fixture(scope="module")
def generated(document: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    folder = tmp_path_factory.mktemp("generated")
    command = [_tool("openapi-python-client"), "generate", "--path", str(document), "--meta", "none"]
    command += ["--output-path", str(folder / PACKAGE)]
    # The generator formats its output with ruff, found on PATH: the one beside this interpreter.
    path = os.pathsep.join([str(Path(_tool("ruff")).parent), os.environ.get("PATH", "")])
    result = _run(command, env={**os.environ, "PATH": path})
    # Its default configuration, and not a warning: every operation and model is generated.
    assert "Warning" not in result.stdout + result.stderr, result.stdout + result.stderr
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))
        for name in [name for name in sys.modules if name == PACKAGE or name.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


def test_the_document_is_valid_openapi(document: Path) -> None:
    _run([_tool("openapi-spec-validator"), str(document)])


def test_the_generated_client_lists_filters_searches_orders_and_pages(
    generated: Any, demo: TestClient[Litestar]
) -> None:
    client = generated.Client(base_url=str(demo.base_url))
    client.set_httpx_client(demo)
    list_flights = importlib.import_module(f"{PACKAGE}.api.flights.list_flights")
    models = importlib.import_module(f"{PACKAGE}.models")
    order = models.ListFlightsOrderByItem

    # Filters of the flight and of a relation, a two-term order and paging: typed arguments, a typed page.
    page = list_flights.sync(
        client=client,
        filters=models.ListFlightsFilters(origin="JFK", dep_delay_gte=300),
        dest_airport_filters=models.ListFlightsDestAirportFilters(dest_airport_tzone="America/Los_Angeles"),
        order_by=[order.DEST, order.DEP_DELAY_DESC],
        count=5,
        page=2,
    )
    where = "WHERE f.origin = 'JFK' AND d.tzone = 'America/Los_Angeles' AND CAST(f.dep_delay AS INTEGER) >= 300"
    assert page.pagination.total == scalar(f"SELECT count(*) {FLIGHTS_WITH_AIRPORTS} {where}")
    expected = column(
        f"SELECT f.id {FLIGHTS_WITH_AIRPORTS} {where} ORDER BY f.dest, CAST(f.dep_delay AS INTEGER) DESC, f.id"
        " LIMIT 5 OFFSET 5"
    )
    assert [flight.id for flight in page.data] == expected
    assert type(page.data[0]).__name__ == "Flight"

    # A list operator (comma-separated) and a datetime range, typed by the document's formats.
    page = list_flights.sync(
        client=client,
        filters=models.ListFlightsFilters(
            carrier_in="HA,AS", time_hour_between="2013-01-01T00:00:00+00:00,2013-01-31T23:59:59+00:00"
        ),
        count=1,
    )
    assert page.pagination.total == scalar(
        "SELECT count(*) FROM flights WHERE carrier IN ('HA', 'AS') AND time_hour < '2013-02-01'"
    )

    # Search over relation paths.
    page = list_flights.sync(client=client, search="hawaiian", count=3)
    search = (
        "WHERE lower(f.tailnum) LIKE '%hawaiian%' OR lower(al.name) LIKE '%hawaiian%'"
        " OR lower(o.name) LIKE '%hawaiian%' OR lower(d.name) LIKE '%hawaiian%'"
    )
    assert page.pagination.total == scalar(f"SELECT count(*) {FLIGHTS_WITH_AIRPORTS} {search}")
    expected = column(f"SELECT f.id {FLIGHTS_WITH_AIRPORTS} {search} ORDER BY f.time_hour DESC, f.id LIMIT 3")
    assert [flight.id for flight in page.data] == expected


def test_the_generated_client_counts_facets(generated: Any, demo: TestClient[Litestar]) -> None:
    client = generated.Client(base_url=str(demo.base_url))
    client.set_httpx_client(demo)
    count = importlib.import_module(f"{PACKAGE}.api.flights.list_flights_facets")
    models = importlib.import_module(f"{PACKAGE}.models")
    facet = models.ListFlightsFacetsFacetItem

    # Two facets of the flights to LAX from JFK, disjunctive: origin's counts leave out its own filter.
    answer = count.sync(
        client=client,
        facet=[facet.CARRIER, facet.ORIGIN],
        filters=models.ListFlightsFacetsFilters(origin="JFK", dest="LAX"),
        facet_limit=3,
    )
    carrier, origin = answer.data
    assert (carrier.facet, origin.facet) == ("carrier", "origin")
    assert answer.total == scalar("SELECT count(*) FROM flights WHERE origin = 'JFK' AND dest = 'LAX'")
    by_carrier = "SELECT carrier, count(*) AS n FROM flights WHERE origin = 'JFK' AND dest = 'LAX' GROUP BY carrier"
    assert [(one.value, one.count) for one in carrier.values] == rows(f"{by_carrier} ORDER BY n DESC, carrier LIMIT 3")
    assert carrier.distinct == scalar(f"SELECT count(*) FROM ({by_carrier})")
    by_origin = "SELECT origin, count(*) AS n FROM flights WHERE dest = 'LAX' GROUP BY origin"
    assert [(one.value, one.count) for one in origin.values] == rows(f"{by_origin} ORDER BY n DESC, origin")


def test_the_generated_client_tells_apart_a_key_and_the_related_rows_key(
    generated: Any, demo: TestClient[Litestar]
) -> None:
    # flight_id and flight__id are one identifier to a generator; each is in a filter object of its own.
    watched = importlib.import_module(f"{PACKAGE}.api.watched_flights.list_watched_flights")
    models = importlib.import_module(f"{PACKAGE}.models")
    order = models.ListWatchedFlightsOrderByItem
    assert (order.FLIGHT_ID.value, order.ID_OF_FLIGHT.value) == ("flight_id", "flight__id")
    assert "flight_id" in models.ListWatchedFlightsFilters.__annotations__
    assert "flight_id" in models.ListWatchedFlightsFlightFilters.__annotations__
    assert callable(watched.sync)


def test_the_generated_client_reads_a_400(generated: Any, demo: TestClient[Litestar]) -> None:
    client = generated.Client(base_url=str(demo.base_url))
    client.set_httpx_client(demo)
    list_flights = importlib.import_module(f"{PACKAGE}.api.flights.list_flights")
    models = importlib.import_module(f"{PACKAGE}.models")
    filters = models.ListFlightsFilters(dep_delay_gt=10**12)
    response = list_flights.sync_detailed(client=client, count=500, filters=filters)
    assert response.status_code == 400
    error = response.parsed
    assert type(error).__name__ == "ListingInvalidQuery"
    assert [entry.key for entry in error.extra] == ["count", "dep_delay__gt"]
    assert json.loads(response.content)["status_code"] == 400


def test_the_typescript_client_lists_filters_orders_and_pages(
    document: Path, served: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    generate, compile_ = _node_tool("openapi-typescript"), _node_tool("tsc")
    folder = tmp_path_factory.mktemp("typescript")
    for name in ("list_flights.mts", "tsconfig.json"):
        shutil.copy(TYPESCRIPT / name, folder / name)
    (folder / "node_modules").symlink_to(TYPESCRIPT / "node_modules", target_is_directory=True)
    result = _run([generate, str(document), "--output", str(folder / "schema.d.ts")])
    assert "warn" not in (result.stdout + result.stderr).lower(), result.stdout + result.stderr
    _run([compile_, "-p", str(folder)])  # strict: the call type-checks against the generated paths
    answer = json.loads(_run(["node", str(folder / "list_flights.mjs"), served]).stdout)

    assert answer["status"] == 200, answer
    # openapi-fetch's default serialization: the order as a repeated parameter, the filters as
    # properties of their objects (deepObject).
    sent = parse_qsl(urlsplit(answer["url"]).query)
    assert ("order_by", "-dep_delay") in sent
    assert ("order_by", "id") in sent
    assert ("filters[carrier__in]", "AA,UA,DL,B6,VX") in sent
    assert ("dest_airport_filters[dest_airport__tzone]", "America/Los_Angeles") in sent
    assert answer["total"] == scalar(f"SELECT count(*) {FLIGHTS_WITH_AIRPORTS} {TS_WHERE}")
    expected = column(
        f"SELECT f.id {FLIGHTS_WITH_AIRPORTS} {TS_WHERE} ORDER BY CAST(f.dep_delay AS INTEGER) DESC, f.id"
        " LIMIT 5 OFFSET 5"
    )
    assert answer["ids"] == expected

    # The facet counts of JFK's flights to LAX: facet repeated, origin counted without its own filter.
    facets = answer["facets"]
    assert facets["status"] == 200, facets
    sent = parse_qsl(urlsplit(facets["url"]).query)
    assert [value for name, value in sent if name == "facet"] == ["carrier", "origin"]
    assert facets["total"] == scalar("SELECT count(*) FROM flights WHERE origin = 'JFK' AND dest = 'LAX'")
    by_carrier = "SELECT carrier, count(*) AS n FROM flights WHERE origin = 'JFK' AND dest = 'LAX' GROUP BY carrier"
    by_origin = "SELECT origin, count(*) AS n FROM flights WHERE dest = 'LAX' GROUP BY origin"
    assert facets["counts"] == [
        ["carrier", [list(row) for row in rows(f"{by_carrier} ORDER BY n DESC, carrier LIMIT 3")]],
        ["origin", [list(row) for row in rows(f"{by_origin} ORDER BY n DESC, origin LIMIT 3")]],
    ]
