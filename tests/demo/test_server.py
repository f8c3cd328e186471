"""The server harness of ``scripts/``, ``benchmarks/`` and the tests (``tests/harness.py``) on a real process.

The demo data is loaded with the harness into a fresh SQLite file, the demo is served on each
selected SQL backend, and its answers over HTTP are compared with plain SQL over the same file.
"""

from __future__ import annotations

import signal
import sqlite3
import sys
from pathlib import Path

import httpx
import pytest

from litestar_listing.demo.cli import DEMO_BUDGET_UNITS
from tests import harness
from tests.conftest import demo_sqlite_copy
from tests.harness import (
    SCHEMA_PATH,
    Combination,
    ServerError,
    free_port,
    load_demo,
    serve_demo,
    server_errors,
    start,
)
from tests.matrix import Store, backends_of, selected

BACKENDS = backends_of(selected(store=Store.SQL, database="sqlite"))
pytestmark = pytest.mark.skipif(not BACKENDS, reason="the demo is served from SQLite by a selected SQL backend")


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = demo_sqlite_copy(tmp_path_factory.mktemp("served"))
    assert load_demo(f"sqlite:///{path}") > 0  # the CLI's --load-only finds it loaded and leaves it
    return path


def _get(url: str) -> dict[str, object]:
    response = httpx.get(url, timeout=60)
    assert response.status_code == 200
    body: dict[str, object] = response.json()
    return body


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_served_demo_answers_as_the_database_counts(backend: str, demo_file: Path, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with sqlite3.connect(demo_file) as connection:
        (jfk,) = connection.execute("SELECT count(*) FROM flights WHERE origin = 'JFK'").fetchone()
    # The command's own default budget (docs: admission, "Fair shares").
    with serve_demo(Combination(backend, "sqlite", f"sqlite:///{demo_file}"), log, budget=None) as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        paths = _get(server.base_url + SCHEMA_PATH)["paths"]
        assert isinstance(paths, dict)
        assert "/api/v1/flights" in paths
        response = httpx.get(server.base_url + "/api/v1/flights/?origin=JFK&count=3", timeout=60)
        assert response.json()["pagination"] == {"page": 1, "count": 3, "total": jfk, "total_pages": -(-jfk // 3)}
        assert response.headers["ratelimit-policy"] == f"{DEMO_BUDGET_UNITS:g}; w=60"
    assert not server.alive()
    # Ended by the Ctrl+C the harness sent, not killed: uvicorn shuts down gracefully, then returns 0
    # or, from 0.29 on, raises the signal again (-SIGINT).
    assert server.process.returncode in {0, -signal.SIGINT}
    assert server_errors(log) == []


def test_a_server_that_exits_is_an_error_with_its_output(tmp_path: Path) -> None:
    command = [sys.executable, "-c", "print('no such app'); raise SystemExit(3)"]
    with pytest.raises(ServerError, match="no such app"):
        start(lambda _port: command, tmp_path / "server.log", label="broken", ready_path="/")


def test_an_unreachable_postgresql_is_skipped_only_when_nobody_named_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness, "_IN_CI", False)  # CI=true makes it a failure either way
    closed = free_port()  # nothing listens there
    nowhere = f"postgresql://postgres@127.0.0.1:{closed}/test"
    original = harness.postgres_url
    monkeypatch.setattr(harness, "postgres_url", lambda database, server=nowhere: original(database, server))
    urls, notes = harness.prepare_databases(["postgresql"])
    assert urls == {}
    assert [note.split(",")[0] for note in notes] == ["postgresql: skipped"]
    with pytest.raises(ServerError, match="--databases names it: a missing database is a failure"):
        harness.prepare_databases(["postgresql"], chosen=True)
