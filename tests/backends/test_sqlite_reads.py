"""``ReadPool``: the SQLite read connections a list borrows, and what happens to one after a failure or a cancel."""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import pytest

from litestar_listing.backends._sqlite import ReadPool
from tests.conftest import scratch_folder


def _pool() -> tuple[ReadPool, list[sqlite3.Connection], threading.Event]:
    path = str(scratch_folder("listing-reads") / "reads.sqlite")
    setup = sqlite3.connect(path)
    setup.executescript("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1), (2), (3);")
    setup.close()
    opened: list[sqlite3.Connection] = []
    release = threading.Event()

    def connect() -> sqlite3.Connection:
        connection = sqlite3.connect(path, check_same_thread=False)
        connection.create_function("hold", 1, lambda value: release.wait(5) and value)
        opened.append(connection)
        return connection

    return ReadPool(connect, path), opened, release


async def test_lists_one_after_another_borrow_one_connection() -> None:
    pool, opened, _ = _pool()
    for _ in range(3):
        async with pool.snapshot() as snapshot:
            assert await snapshot.fetch("SELECT count(*) FROM t") == [(3,)]
            assert await snapshot.fetch("SELECT id FROM t WHERE id > ?", (1,)) == [(2,), (3,)]
    assert len(opened) == 1
    assert not opened[0].in_transaction  # the read transaction ended with the list
    pool.close()


async def test_a_page_and_its_total_take_one_thread_hop(monkeypatch: pytest.MonkeyPatch) -> None:
    pool, _, _ = _pool()
    hops: list[object] = []
    loop = asyncio.get_running_loop()
    run_in_executor = loop.run_in_executor

    def counted(executor: object, *args: object) -> object:
        hops.append(args)
        return run_in_executor(executor, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(loop, "run_in_executor", counted)
    page = ("SELECT id FROM t WHERE id > ? ORDER BY id LIMIT 2", (0,))
    total = ("SELECT count(*) FROM t WHERE id > ?", (0,))
    async with pool.snapshot() as snapshot:
        assert await snapshot.fetch_page(page, total, lambda rows: rows == 2) == ([(1,), (2,)], [(3,)])
        assert await snapshot.fetch_page(page, total, lambda _rows: False) == ([(1,), (2,)], None)
    assert len(hops) == 2  # one per page, its total included
    pool.close()


async def test_a_failed_list_closes_its_connection() -> None:
    pool, opened, _ = _pool()
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        async with pool.snapshot() as snapshot:
            await snapshot.fetch("SELECT * FROM missing")
    async with pool.snapshot() as snapshot:
        assert await snapshot.fetch("SELECT count(*) FROM t") == [(3,)]
    assert len(opened) == 2
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        opened[0].execute("SELECT 1")
    pool.close()


async def test_a_cancelled_list_closes_its_connection_once_the_statement_ends() -> None:
    pool, opened, release = _pool()

    async def held() -> None:
        async with pool.snapshot() as snapshot:
            await snapshot.fetch("SELECT hold(1)")

    task = asyncio.create_task(held())
    await asyncio.sleep(0.2)  # the statement is under way in its thread
    assert len(opened) == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # Still running in its thread: not lent to the next list, not closed under the statement.
    async with pool.snapshot() as snapshot:
        assert await snapshot.fetch("SELECT count(*) FROM t") == [(3,)]
    assert len(opened) == 2
    release.set()
    for _ in range(100):
        try:
            opened[0].execute("SELECT 1")
        except sqlite3.ProgrammingError:
            break
        await asyncio.sleep(0.02)
    else:
        pytest.fail("the cancelled list's connection stayed open")
    pool.close()
