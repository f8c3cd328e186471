"""Fair shares over time: each client's lists are charged their cost against a budget per window.

Litestar's own rate limiting counts requests; here a request counts what it costs (``core.cost``), so a
client sending a few very expensive lists is slowed as one sending many cheap ones. The spending is
kept in a Litestar ``Store`` of the application (``app.stores``; memory unless the application
configures the name, e.g. a ``RedisStore`` shared by every worker), and the answers carry the
``RateLimit-*`` headers Litestar's ``RateLimitMiddleware`` writes (docs: admission, "Fair shares").
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
from litestar.middleware.rate_limit import DURATION_VALUES, DurationUnit

from litestar_listing.core.errors import ConfigurationError, RateLimitedError

if TYPE_CHECKING:
    from litestar import Litestar
    from litestar.connection import ASGIConnection

__all__ = ("CostBudget", "Spending", "client_of")

_USER_KEYS = ("id", "pk", "username", "sub")
"""The attributes of ``request.user`` that name a user, the first present wins (``client_of``)."""


def client_of(connection: ASGIConnection[Any, Any, Any, Any]) -> str:
    """Who sends the request, for shares and budgets: ``user:<id>`` when signed in, else ``address:<host>``.

    The user is ``scope["user"]`` as the application's authentication set it, named by its first
    attribute among ``id``, ``pk``, ``username`` and ``sub`` (or itself when it is a ``str`` or an
    ``int``). An anonymous request is its client's address as the ASGI server reports it: behind a
    proxy, run the server so that it reads the proxy's ``X-Forwarded-For`` (uvicorn's
    ``--forwarded-allow-ips``), or every client is the proxy (docs: admission, "Who a client is").
    """
    user = connection.scope.get("user")
    if isinstance(user, (str, int)) and not isinstance(user, bool):
        return f"user:{user}"
    for key in _USER_KEYS:
        value = getattr(user, key, None) if user is not None else None
        if value is not None:
            return f"user:{value}"
    client = connection.scope.get("client")
    return f"address:{client[0] if client else 'unknown'}"


class _Spent(msgspec.Struct, frozen=True):
    """What the store keeps per client: the units spent in the window that ends at ``reset`` (Unix seconds)."""

    spent: float
    reset: float


@dataclass(frozen=True, slots=True)
class Spending:
    """A client's budget after a list was charged (``CostBudget.charge``).

    Attributes:
        headers: The ``RateLimit-Policy``, ``RateLimit-Limit``, ``RateLimit-Remaining`` and
            ``RateLimit-Reset`` headers, as Litestar's rate limiting writes them.
    """

    headers: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class CostBudget:
    """Cost units each client may spend on lists per window (docs: admission, "Fair shares").

    A list is charged its cost once priced, before it waits for admission. A list the window's
    remaining budget does not cover is refused with a 429 whose ``Retry-After`` is the time until
    the window ends, and not charged, unless the client has spent nothing in the window: a list
    costlier than the whole budget is then let through, once per window (the resource's
    ``max_cost`` is what refuses lists for their size).

    Attributes:
        units: Cost units per window, per client.
        window: ``"second"``, ``"minute"``, ``"hour"`` or ``"day"``, as Litestar's ``RateLimitConfig``.
        store: The name of the application's ``Store`` (``app.stores.get``) that keeps the spending;
            shared by every worker when it names a shared store (Redis).
    """

    units: float
    window: DurationUnit = "minute"
    store: str = "listing_budget"

    def __post_init__(self) -> None:
        if self.units <= 0 or self.window not in DURATION_VALUES:
            windows = sorted(DURATION_VALUES)
            msg = f"CostBudget needs units > 0 and a window in {windows}, not {self.units}, {self.window!r}"
            raise ConfigurationError(msg)

    @property
    def seconds(self) -> int:
        """The window's length in seconds."""
        return DURATION_VALUES[self.window]

    async def charge(self, app: Litestar, client: str, cost: float, what: str) -> Spending:
        """Charge ``cost`` units to ``client``'s budget in ``app``'s store.

        The read and the write are two calls of the store, as in Litestar's own rate limiting: two
        workers charging one client at the same instant may both pass on the last units.

        Args:
            app: The application whose store keeps the spending.
            client: Who asks (the plugin's ``client``, ``client_of`` by default).
            cost: The list's cost units.
            what: What is refused, for the message, e.g. ``"listing flights"``.

        Returns:
            The budget after the charge, as headers.

        Raises:
            RateLimitedError: The window's remaining units do not cover ``cost`` (a 429).
        """
        store = app.stores.get(self.store)
        key = f"{type(self).__name__}::{client}"
        now = time.time()
        found = await store.get(key)
        spent = msgspec.json.decode(found, type=_Spent) if found is not None else None
        if spent is None or spent.reset <= now:
            spent = _Spent(0.0, now + self.seconds)
        if spent.spent > 0 and spent.spent + cost > self.units:
            retry_after = max(1, math.ceil(spent.reset - now))
            msg = (
                f"{what} is refused: this client has spent {spent.spent:g} of its {self.units:g} cost units per "
                f"{self.window}, and this list costs {cost:g}; try again in {retry_after} s"
            )
            raise RateLimitedError(msg, retry_after=retry_after, headers=self._headers(spent, now))
        spent = _Spent(spent.spent + cost, spent.reset)
        await store.set(key, msgspec.json.encode(spent), expires_in=max(1, math.ceil(spent.reset - now)))
        return Spending(self._headers(spent, now))

    def _headers(self, spent: _Spent, now: float) -> dict[str, str]:
        return {
            "RateLimit-Policy": f"{self.units:.15g}; w={self.seconds}",
            "RateLimit-Limit": f"{self.units:.15g}",
            "RateLimit-Remaining": str(max(0, math.floor(self.units - spent.spent))),
            "RateLimit-Reset": str(max(0, math.ceil(spent.reset - now))),
        }
