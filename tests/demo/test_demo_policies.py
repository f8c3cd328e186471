"""The demo's row policies: the airlines' ``fleet_size`` (an enrichment) and the airports'
``departures`` (a computed value, orderable) count only the flights the signed-in tenant may see, on
every demo backend and database.

Expectations are plain SQL on the reference copy of the data set (``tests/demo/reference.py``).
"""

from __future__ import annotations

import pytest
from litestar.testing import TestClient

from litestar_listing.demo.app import create_app
from tests.demo.reference import rows, scalar
from tests.demo.test_demo_api import DEMO_BACKENDS, DEMO_DATABASES, listing, loaded_url

FLEET = "SELECT count(DISTINCT tailnum) FROM flights WHERE carrier = ?"
# The airports by departures counted over some carriers' flights (none: every flight), most first, ties by code.
# One pass over the flights (a count per airport in a correlated subquery walks them once per airport).
BUSIEST = """
SELECT a.faa, coalesce(c.n, 0) AS n
FROM airports a LEFT JOIN (
    SELECT origin, count(*) AS n FROM flights WHERE ? IS NULL OR carrier = ? GROUP BY origin
) c ON c.origin = a.faa
ORDER BY n DESC, a.faa LIMIT 4
"""


@pytest.mark.parametrize("database", DEMO_DATABASES)
@pytest.mark.parametrize("backend", DEMO_BACKENDS)
def test_fleet_size_counts_only_the_tenants_flights(
    backend: str, database: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with TestClient(create_app(loaded_url(database, tmp_path_factory), backend=backend)) as client:
        path = "/api/v1/airlines/?carrier=AA&carrier=UA&order_by=carrier"
        united = listing(client, path, authorization="Bearer demo-ua")
        assert {item["carrier"]: item["fleet_size"] for item in united["data"]} == {"AA": 0, "UA": scalar(FLEET, "UA")}
        for token in ("demo-admin", None):  # the admin and an anonymous request see every flight
            headers = {"authorization": f"Bearer {token}"} if token else {}
            everyone = listing(client, path, **headers)
            assert {item["carrier"]: item["fleet_size"] for item in everyone["data"]} == {
                carrier: scalar(FLEET, carrier) for carrier in ("AA", "UA")
            }
        assert scalar(FLEET, "AA") != 0


@pytest.mark.parametrize("database", DEMO_DATABASES)
@pytest.mark.parametrize("backend", DEMO_BACKENDS)
def test_departures_count_only_the_tenants_flights(
    backend: str, database: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with TestClient(create_app(loaded_url(database, tmp_path_factory), backend=backend)) as client:
        path = "/api/v1/airports/?order_by=-departures,faa&count=4"
        for token, carrier in (("demo-ua", "UA"), ("demo-admin", None), (None, None)):
            headers = {"authorization": f"Bearer {token}"} if token else {}
            body = listing(client, path, **headers)
            expected = rows(BUSIEST, carrier, carrier)
            assert [(item["faa"], item["departures"]) for item in body["data"]] == expected
        # The tenant's busiest airports are not everyone's: the count is the tenant's, not a total.
        assert rows(BUSIEST, "UA", "UA") != rows(BUSIEST, None, None)
