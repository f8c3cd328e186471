"""Cost guards: oversized input is a fast 400, a runaway list a bounded 503, on every backend.

The limits (docs: query language, "Limits"; security, "Bounds") answer before any statement runs; a list that takes
longer than its resource's ``timeout`` is cancelled and answered 503 (the store's own guards:
PostgreSQL is asked to cancel, MongoDB gets ``maxTimeMS``). The wall-clock bounds asserted here are
hang checks, generous by design, not speed targets.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

import pytest
from litestar import Litestar
from piccolo.columns import Integer as PiccoloInteger
from piccolo.engine.sqlite import SQLiteEngine
from piccolo.querystring import QueryString
from pymongo.errors import AutoReconnect, ExecutionTimeout
from sqlalchemy import Integer, literal_column, select
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

from litestar_listing import EnrichContext, ListingPlugin, MemoryBackend, Resource, UnavailableError, list_resource
from litestar_listing.backends.beanie import BeanieBackend
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.piccolo import prepare_engine as prepare_piccolo_engine
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend, model_graph, prepare_engine
from litestar_listing.plugin.exceptions import as_http
from tests.apps import serving
from tests.conformance import piccolo_tables
from tests.conformance.fixture import memory_rows
from tests.conformance.models import Thing
from tests.conformance.targets import write_piccolo_rows, write_sqlalchemy_rows
from tests.conftest import scratch_folder
from tests.harness import asgi_get
from tests.matrix import selected

HANG = 10.0
"""Seconds after which an answer counts as a hung worker."""

# A recursive count SQLite needs seconds for: the computed column of a runaway list.
_RUNAWAY = "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50000000) SELECT count(*) FROM c)"


APP = Litestar(
    plugins=[
        ListingPlugin([Resource("things", MemoryBackend(model_graph(Thing), memory_rows()), search_fields=("name",))])
    ]
)


async def timed_get(params: Sequence[tuple[str, str]] | str) -> tuple[int, Any, float]:
    """``served``, with the body decoded from JSON."""
    started = time.perf_counter()
    status, body = await served(params if isinstance(params, str) else urlencode(params))
    return status, json.loads(body), time.perf_counter() - started


async def served(query: str) -> tuple[int, bytes]:
    """``GET /api/v1/things/?<query>`` of the app called as a server would (HTTP clients refuse megabyte URLs)."""
    return await asgi_get(APP, "/api/v1/things/", query)


memory_only = pytest.mark.skipif(
    not selected(backend="memory"), reason="engine limits: checked once, on the memory backend"
)


@memory_only
@pytest.mark.parametrize(
    ("params", "key"),
    [
        ([("id__in", ",".join(str(value) for value in range(10_000)))], "id__in"),
        ([("id", str(value)) for value in range(10_000)], "id"),
        ([("search", "x" * 1_000_000)], "search"),
        ([("page", str(10**18))], "page"),
        ([("page", "1" + "0" * 100_000)], "page"),
        ([("count", str(10**18))], "count"),
        ([("name__like", "%_" * 500_000)], "name__like"),
        ([("name__ilike", "x" * 1_000_000)], "name__ilike"),
    ],
    ids=[
        "in-10000",
        "repeated-10000",
        "search-1MB",
        "page-1e18",
        "page-100000-digits",
        "count-1e18",
        "like-1MB",
        "ilike-1MB",
    ],
)
async def test_oversized_input_is_a_fast_400(params: list[tuple[str, str]], key: str) -> None:
    status, body, elapsed = await timed_get(params)
    assert status == 400, body
    assert {item["key"] for item in body["extra"]} == {key}
    assert elapsed < HANG


@memory_only
async def test_a_megabyte_query_string_of_unknown_names_is_a_400() -> None:
    query = "&".join(f"f{number}={'v' * 20}" for number in range(40_000))  # about 1 MB
    status, body, elapsed = await timed_get(query)
    assert status == 400
    assert body["extra"][0]["message"].startswith("at most 50 filter parameters")
    assert elapsed < HANG


@memory_only
async def test_page_past_a_signed_64_bit_offset_is_a_400() -> None:
    status, body, _ = await timed_get([("page", str(10**18)), ("count", "100")])
    assert status == 400
    assert "64-bit" in body["extra"][0]["message"]


# ---------------------------------------------------------------- runaway lists on SQLite: a bounded 503
def _sqlite_path() -> str:
    return str(scratch_folder("listing-guards") / "guards.sqlite")


@pytest.mark.skipif(not selected(backend="sqlalchemy", database="sqlite"), reason="SQLAlchemy on SQLite")
async def test_runaway_sqlalchemy_list_on_sqlite_is_a_bounded_503() -> None:
    engine = create_async_engine(f"sqlite+aiosqlite:///{_sqlite_path()}")
    prepare_engine(engine, statement_timeout=0.5)
    await write_sqlalchemy_rows(engine)
    sessions = async_sessionmaker(engine)
    runaway = Resource(
        "runaway", SQLAlchemyBackend(Thing, computed={"n": literal_column(_RUNAWAY, Integer)}), timeout=0.3
    )
    plain = Resource("plain", SQLAlchemyBackend(Thing), default_order=("id",))
    app = serving(runaway, plain)
    try:
        async with sessions() as session:
            started = time.perf_counter()
            with pytest.raises(UnavailableError) as raised:
                await list_resource(runaway, None, [("count", "1")], app=app, session=session)
            assert time.perf_counter() - started < HANG
        assert as_http(raised.value).status_code == 503
        assert "took longer than 0.3 s" in str(raised.value)
        async with sessions() as session:
            envelope: Any = (await list_resource(plain, None, [("count", "2")], app=app, session=session)).envelope
        assert [item["id"] for item in envelope.data] == [1, 2]
    finally:
        await engine.dispose()


@pytest.mark.skipif(not selected(backend="piccolo", database="sqlite"), reason="Piccolo on SQLite")
async def test_runaway_piccolo_list_on_sqlite_is_a_bounded_503() -> None:
    engine = SQLiteEngine(path=_sqlite_path())
    prepare_piccolo_engine(engine, statement_timeout=0.5)
    await write_piccolo_rows(engine)
    table = piccolo_tables.Thing
    runaway = Resource(
        "runaway",
        PiccoloBackend(table, engine=engine, computed={"n": (QueryString(_RUNAWAY), PiccoloInteger())}),
        timeout=0.3,
    )
    plain = Resource("plain", PiccoloBackend(table, engine=engine), default_order=("id",))
    app = serving(runaway, plain)
    started = time.perf_counter()
    with pytest.raises(UnavailableError) as raised:
        await list_resource(runaway, None, [("count", "1")], app=app)
    assert time.perf_counter() - started < HANG
    assert as_http(raised.value).status_code == 503
    envelope: Any = (await list_resource(plain, None, [("count", "2")], app=app)).envelope
    assert [item["id"] for item in envelope.data] == [1, 2]


@pytest.mark.skipif(not selected(backend="sqlalchemy", database="sqlite"), reason="SQLAlchemy on SQLite")
async def test_an_enrichment_out_of_time_on_sqlite_is_a_503_not_a_500() -> None:
    # The hook's statement runs on the request's aiosqlite session, whose guard interrupts it.
    engine = create_async_engine(f"sqlite+aiosqlite:///{_sqlite_path()}")
    prepare_engine(engine, statement_timeout=0.3)
    await write_sqlalchemy_rows(engine)
    sessions = async_sessionmaker(engine)

    async def runaway_count(items: list[dict[str, Any]], context: EnrichContext) -> None:
        backend = context.resource.backend
        assert isinstance(backend, SQLAlchemyBackend)
        counted = await backend.session(context.list_context).scalar(select(literal_column(_RUNAWAY, Integer)))
        for item in items:
            item["n"] = counted

    def buggy(items: list[dict[str, Any]], context: EnrichContext) -> None:
        raise KeyError("n")  # not the store's: stays the bug it is (a 500)

    resource = Resource("enriched", SQLAlchemyBackend(Thing), enrich=runaway_count, enrich_fields={"n": int})
    broken = Resource("broken", SQLAlchemyBackend(Thing), enrich=buggy)
    app = serving(resource, broken)
    try:
        async with sessions() as session:
            started = time.perf_counter()
            with pytest.raises(UnavailableError) as raised:
                await list_resource(resource, None, [("count", "1")], app=app, session=session)
            assert time.perf_counter() - started < HANG
        assert as_http(raised.value).status_code == 503
        assert raised.value.reason == "timeout"
        assert "listing enriched took longer than" in str(raised.value)
        async with sessions() as session:
            with pytest.raises(KeyError):
                await list_resource(broken, None, [], app=app, session=session)
    finally:
        await engine.dispose()


@pytest.mark.skipif(not selected(backend="piccolo", database="sqlite"), reason="Piccolo on SQLite")
async def test_an_enrichment_out_of_time_on_piccolo_sqlite_is_a_503_not_a_500() -> None:
    engine = SQLiteEngine(path=_sqlite_path())
    prepare_piccolo_engine(engine, statement_timeout=0.3)
    await write_piccolo_rows(engine)

    async def runaway_count(items: list[dict[str, Any]], context: EnrichContext) -> None:
        backend = context.resource.backend
        assert isinstance(backend, PiccoloBackend)
        rows = await backend.engine_for(context.list_context).run_querystring(QueryString(f"SELECT {_RUNAWAY} AS n"))
        for item in items:
            item["n"] = (rows or [{}])[0]["n"]

    resource = Resource(
        "enriched", PiccoloBackend(piccolo_tables.Thing, engine=engine), enrich=runaway_count, enrich_fields={"n": int}
    )
    with pytest.raises(UnavailableError) as raised:
        await list_resource(resource, None, [("count", "1")], app=serving(resource))
    assert as_http(raised.value).status_code == 503
    assert "listing enriched took longer than" in str(raised.value)


# ---------------------------------------------------------------- MongoDB: maxTimeMS and dropped connections
@pytest.mark.skipif(not selected(backend="beanie"), reason="Beanie not selected")
@pytest.mark.parametrize(
    ("error", "fragment"),
    [
        (ExecutionTimeout("operation exceeded time limit"), "took longer than 1.5 s"),
        (AutoReconnect("x"), "unreachable"),
    ],
)
async def test_mongodb_time_limit_and_connection_errors_are_503(
    monkeypatch: pytest.MonkeyPatch, error: Exception, fragment: str
) -> None:
    from tests.conformance import beanie_documents

    seen: dict[str, Any] = {}

    class Failing:
        async def aggregate(self, pipeline: Any, **options: Any) -> Any:
            seen.update(options)
            raise error

    backend = BeanieBackend(beanie_documents.Thing)
    monkeypatch.setattr(beanie_documents.Thing, "get_pymongo_collection", classmethod(lambda cls: Failing()))
    resource = Resource("things", backend, timeout=1.5)
    with pytest.raises(UnavailableError) as raised:
        await list_resource(resource, None, [], app=serving(resource))
    assert as_http(raised.value).status_code == 503
    assert fragment in str(raised.value)
    assert 1000 < seen["maxTimeMS"] <= 1500  # MongoDB itself stops at the time left
