"""``total_mode="estimated"`` on every backend x database: the planner's estimate on PostgreSQL, exact elsewhere.

The estimate is checked against ``EXPLAIN`` run by hand over the same table, the exact totals against a
count over the fixture rows in Python.
"""

from __future__ import annotations

import dataclasses
import json

import asyncpg
import pytest

from litestar_listing import list_resource
from litestar_listing.core.text import fold_case
from tests.apps import serving
from tests.conformance.fixture import memory_rows
from tests.conformance.targets import Target
from tests.conformance.test_conformance import target
from tests.nodes import caught_up

__all__ = ("target",)

# The planner cannot see inside lower(name) LIKE '%a%': it estimates every row, where 13 match.
QUERY = [("name__ilike", "a"), ("count", "2")]
WHERE = "lower(name) LIKE '%a%' ESCAPE '\\'"


def exact_total() -> int:
    return sum(1 for row in memory_rows() if row["name"] is not None and "a" in fold_case(row["name"]))


async def planner_estimate(url: str) -> int:
    connection = await asyncpg.connect(url, statement_cache_size=0)
    try:
        await connection.execute("ANALYZE things")
        plan = json.loads(await connection.fetchval(f"EXPLAIN (FORMAT JSON) SELECT 1 FROM things WHERE {WHERE}"))
    finally:
        await connection.close()
    return int(plan[0]["Plan"]["Plan Rows"])


async def list_things(target: Target, **options: object) -> tuple[int, dict[str, str]]:
    resource = dataclasses.replace(target.resources["things"], **options)  # type: ignore[arg-type]
    async with target.context() as context:
        result = await list_resource(resource, None, QUERY, app=serving(resource), session=context.session)
    assert len(result.items) == 2
    return result.pagination.total, dict(result.headers)


async def test_estimated_total_is_the_planners_where_the_backend_can(target: Target) -> None:
    if "syntax:relational" not in target.capabilities:
        pytest.skip("the document-store syntax has no name__ilike")
    database = target.postgres_url
    estimated = "estimated" in target.resources["things"].backend.capabilities.total_modes and database is not None
    expected = max(await planner_estimate(database), 2) if database is not None and estimated else exact_total()
    if database is not None and target.standby_url is not None:
        await caught_up(database, target.standby_url)  # the statistics of ANALYZE, on the standby too
    total, headers = await list_things(target, total_mode="estimated", exact_total_below=0)
    if estimated:
        assert (total, headers["X-Total-Mode"]) == (expected, "estimated")
        assert total != exact_total()  # an estimate, not a count in disguise
    else:
        assert (total, headers["X-Total-Mode"]) == (exact_total(), "exact")


async def test_small_estimates_are_counted_exactly(target: Target) -> None:
    if "syntax:relational" not in target.capabilities:
        pytest.skip("the document-store syntax has no name__ilike")
    total, headers = await list_things(target, total_mode="estimated", exact_total_below=1_000_000)
    assert (total, headers["X-Total-Mode"]) == (exact_total(), "exact")


async def test_exact_mode_sends_no_header(target: Target) -> None:
    if "syntax:relational" not in target.capabilities:
        pytest.skip("the document-store syntax has no name__ilike")
    total, headers = await list_things(target)
    assert total == exact_total()
    assert headers == {}
