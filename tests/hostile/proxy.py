"""A fault-injecting TCP proxy for tests: forwards loopback connections to a server until told to drop.

``drop()`` cuts every open connection in both directions (as a crashed server or a broken network
would, mid-query) and refuses new ones until ``restore()``. The proxy runs its own event loop in a
thread: Litestar's test client may block the test's loop while the app waits on the proxy.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Iterator

__all__ = ("FaultyProxy", "faulty_proxy")


class FaultyProxy:
    """Forwards ``127.0.0.1:<port>`` to ``upstream``.

    Args:
        host: The upstream host.
        port: The upstream port.
        loop: The loop it serves on (its own thread's).
    """

    def __init__(self, host: str, port: int, loop: asyncio.AbstractEventLoop) -> None:
        self.upstream = (host, port)
        self._loop = loop
        self.port = 0
        self.down = False
        self.accepted = 0
        self._server: asyncio.Server | None = None
        self._starting: asyncio.Task[None] | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Listen on a free loopback port (``self.port``), or again on the same one."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    def drop(self) -> None:
        """Cut every open connection now and refuse new ones (from any thread)."""
        self._in_loop(self._drop)

    def restore(self) -> None:
        """Accept and forward connections again (from any thread)."""
        self._in_loop(self._restore)

    def _in_loop(self, action: Callable[[], None]) -> None:
        done: concurrent.futures.Future[None] = concurrent.futures.Future()

        async def run() -> None:
            action()
            if self._starting is not None:
                await self._starting  # listening again before restore() returns
                self._starting = None
            done.set_result(None)

        self._loop.call_soon_threadsafe(lambda: self._loop.create_task(run()))
        done.result(timeout=5)

    def _drop(self) -> None:
        self.down = True
        # Stop listening too: new connections are refused by the kernel, as by a server that is
        # gone (accepting and resetting them would leave clients half-open transports to clean up).
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            writer.transport.abort()  # a reset, not a polite close: nothing more is delivered
        self._writers.clear()

    def _restore(self) -> None:
        self.down = False
        if self._server is None:
            self._starting = self._loop.create_task(self.start())

    async def close(self) -> None:
        """Stop listening and cut everything."""
        self._drop()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.down:
            writer.transport.abort()
            return
        self.accepted += 1
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, upstream_writer))
        for source, target in ((reader, upstream_writer), (upstream_reader, writer)):
            task = asyncio.create_task(self._pipe(source, target))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pipe(self, source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await source.read(65536):
                target.write(data)
                await target.drain()
        self._writers.discard(target)
        target.transport.abort()


@contextlib.contextmanager
def faulty_proxy(host: str, port: int) -> Iterator[FaultyProxy]:
    """A ``FaultyProxy`` to ``host:port`` serving on its own thread; closed on exit."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="faulty-proxy", daemon=True)
    thread.start()
    proxy = FaultyProxy(host, port, loop)
    asyncio.run_coroutine_threadsafe(proxy.start(), loop).result(timeout=5)
    try:
        yield proxy
    finally:
        asyncio.run_coroutine_threadsafe(proxy.close(), loop).result(timeout=5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        loop.close()
