"""The demo's row policies (issue 15): the airlines' ``fleet_size`` counts only the flights the
signed-in tenant may see, on every demo backend and database.

Expectations are plain SQL on the reference copy of the data set (``tests/demo/reference.py``).
"""

from __future__ import annotations

import pytest
from litestar.testing import TestClient

from litestar_listing.demo.app import create_app
from tests.demo.reference import scalar
from tests.demo.test_demo_api import DEMO_BACKENDS, DEMO_DATABASES, listing, loaded_url

FLEET = "SELECT count(DISTINCT tailnum) FROM flights WHERE carrier = ?"


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
