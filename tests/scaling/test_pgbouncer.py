"""Lists through pgbouncer in transaction pooling mode, many at once (``tests/nodes.py``).

The conformance table already runs through pgbouncer one case at a time; here its cases run
concurrently, more lists than pgbouncer has server connections, so server connections pass between
clients mid-session: a prepared statement or setting that outlived its transaction would show up
as an error or a wrong page. Expectations are the table's hand counts.
"""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qsl

import asyncpg

from litestar_listing.core.parsing import forced_filter
from litestar_listing.plugin.prepared import prepare
from tests.conformance.cases import CASES, Case
from tests.conformance.targets import Target, target_fixture
from tests.conformance.test_conformance import run_facet_case, with_policies
from tests.matrix import Store, selected
from tests.nodes import POOL_SIZE

TARGETS = [target for target in selected(store=Store.NODE) if target.database == "pgbouncer"]
CONCURRENT = 4 * POOL_SIZE


target = target_fixture(TARGETS, "litestar_listing_pgbouncer")


async def _check(target: Target, case: Case, gate: asyncio.Semaphore) -> None:
    resource = target.resources[case.resource]
    forced = [forced_filter(prepare(resource).field_map, name, value) for name, value in case.forced]
    if case.endpoint == "facets":  # a facet request (docs: facets), through the pooler as a list
        async with gate:
            await run_facet_case(target, case, resource, parse_qsl(case.query, keep_blank_values=True), forced)
        return
    query = with_policies(
        prepare(resource).parser.parse(parse_qsl(case.query, keep_blank_values=True), forced),
        prepare(resource).field_map.graph,
        case,
    )
    async with gate, target.context() as context:
        # The statement timeout is transaction-local: a list with one must not leave it behind.
        page = await resource.backend.fetch(query, context)
    if case.ids is not None:
        assert [item["id"] for item in page.items] == list(case.ids), case.id
    if case.total is not None:
        assert page.total == case.total, case.id


async def test_the_case_table_runs_concurrently_through_the_pooler(target: Target) -> None:
    cases = [case for case in CASES if not case.errors and not case.needs - target.capabilities]
    assert len(cases) > 100
    gate = asyncio.Semaphore(CONCURRENT)
    await asyncio.gather(*(_check(target, case, gate) for case in cases * 2))


async def test_no_statement_or_setting_outlives_its_transaction(target: Target) -> None:
    """After the lists, no server connection holds a prepared statement or a changed statement_timeout."""
    cases = [case for case in CASES if not case.errors and not case.needs - target.capabilities]
    await asyncio.gather(*(_check(target, case, asyncio.Semaphore(CONCURRENT)) for case in cases[:60]))
    assert target.postgres_url is not None
    connections = [await asyncpg.connect(target.postgres_url, statement_cache_size=0) for _ in range(POOL_SIZE)]
    try:
        # Each holds a server connection of the pool for the length of its transaction.
        transactions = [connection.transaction() for connection in connections]
        for transaction in transactions:
            await transaction.start()
        seen = [
            await connection.fetchrow(
                "SELECT (SELECT count(*) FROM pg_prepared_statements) AS prepared,"
                " current_setting('statement_timeout') AS timeout, pg_backend_pid() AS pid"
            )
            for connection in connections
        ]
        for transaction in transactions:
            await transaction.rollback()
    finally:
        for connection in connections:
            await connection.close()
    assert len({row["pid"] for row in seen}) == POOL_SIZE  # every server connection of the pool
    assert [(row["prepared"], row["timeout"]) for row in seen] == [(0, "0")] * POOL_SIZE
