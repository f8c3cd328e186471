"""``litestar-listing demo --database PRIMARY --replica STANDBY --workers 2`` on the tests' own nodes.

The demo data is loaded into the primary and streamed to the standby; the served lists must be
answered by the standby, seen in its own ``pg_stat_database`` counters for the demo database.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import asyncpg
import httpx
import pytest

from tests.conftest import node_database_url, scratch_folder
from tests.harness import HOST, SCHEMA_PATH, demo_command, load_demo, running, start
from tests.matrix import Store, selected
from tests.nodes import caught_up

BACKENDS = [target.backend for target in selected(store=Store.NODE) if target.database == "standby"]
DATABASE = "litestar_listing_demo_nodes"


@pytest.fixture(scope="module")
def demo_database() -> tuple[str, str]:
    """The demo data on the primary, replayed on the standby: ``(primary URL, standby URL)``."""
    primary, standby = node_database_url(DATABASE, "primary"), node_database_url(DATABASE, "standby")
    load_demo(primary)
    asyncio.run(caught_up(primary, standby))
    return primary, standby


async def _reads(standby: str) -> int:
    connection = await asyncpg.connect(standby.rsplit("/", 1)[0] + "/postgres", statement_cache_size=0)
    try:
        value = await connection.fetchval("SELECT tup_returned FROM pg_stat_database WHERE datname = $1", DATABASE)
        return int(value or 0)
    finally:
        await connection.close()


def _get(url: str) -> tuple[int, dict[str, object]]:
    response = httpx.get(url, timeout=30)
    return response.status_code, response.json()


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_workers_serve_lists_from_the_replica(backend: str, demo_database: tuple[str, str]) -> None:
    primary, standby = demo_database
    log = Path(scratch_folder("demo-replica")) / f"{backend}.log"
    command = ("--backend", backend, "--database", primary, "--replica", standby, "--workers", "2", "--host", HOST)
    server = start(lambda port: demo_command(*command, "--port", str(port)), log, label="demo", ready_path=SCHEMA_PATH)
    with running(server):
        before = asyncio.run(_reads(standby))
        for _ in range(6):
            status, body = _get(f"{server.base_url}/api/v1/flights/?count=5&order_by=-id")
            assert status == 200
            assert len(body["data"]) == 5  # type: ignore[arg-type]
        deadline = time.monotonic() + 10
        # The standby's statistics are flushed about once a second; the lists read thousands of tuples there.
        while asyncio.run(_reads(standby)) - before < 5 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert asyncio.run(_reads(standby)) - before >= 5
    assert "Started parent process" in server.log_text()  # uvicorn's supervisor of the two workers
