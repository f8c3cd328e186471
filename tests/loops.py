"""Event loops a test makes for itself: an async context entered on a new loop, closed with it afterwards.

For property tests: hypothesis calls a plain function per example, while the engines, pools and
clients of the data under test belong to one event loop for the whole run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, contextmanager
from typing import TypeVar

T = TypeVar("T")


@contextmanager
def entered_on_own_loop(manager: AbstractAsyncContextManager[T]) -> Iterator[tuple[T, asyncio.AbstractEventLoop]]:
    """What ``manager`` gives on a new event loop, and that loop; ``manager`` left and the loop closed on exit.

    The caller runs its coroutines with ``loop.run_until_complete``. Leaving ``manager`` (its pools
    disposed, its databases dropped) happens before the loop's async generators are shut down.
    """
    loop = asyncio.new_event_loop()
    stack = AsyncExitStack()
    try:
        yield loop.run_until_complete(stack.enter_async_context(manager)), loop
    finally:
        try:
            loop.run_until_complete(stack.aclose())
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
