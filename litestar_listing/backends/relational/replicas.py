"""Read replicas: which node serves a list, for both relational backends (docs: scaling, "Read replicas").

A list runs on a replica unless the request needs the primary (the backend decides that from the
request's session: it has written or holds a transaction, or the call asks for the primary). A
replica is skipped while it is known to be down or to lag beyond ``max_lag``; its state is probed at
most once per ``probe_interval`` seconds, so routing costs one extra statement per interval, not per
list. A list that fails on a replica because the replica cannot serve it (unreachable, or a
statement cancelled by a recovery conflict) is run again on the primary, once.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from litestar_listing.backends.base import driver_unavailable

__all__ = ("LAG_QUERY", "Replica", "ReplicaSet", "replica_failed")

N = TypeVar("N")
T = TypeVar("T")

LAG_QUERY = (
    "SELECT CASE WHEN NOT pg_is_in_recovery() THEN NULL"
    " WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0.0"
    " ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0.0)::float8 END"
)
"""Seconds a standby's replay is behind what it has received (0 when it has replayed everything);
NULL on a server that is not in recovery (a promoted standby, or a primary given by mistake)."""

# SQLSTATE 40001 with "conflict with recovery": a standby cancelled the statement to replay WAL.
_RECOVERY_CONFLICT = "conflict with recovery"


def replica_failed(error: BaseException) -> bool:
    """Whether ``error`` means the replica could not serve the list (so the primary should).

    True for an unreachable or failed connection, and for a statement cancelled by a recovery
    conflict; False for a timeout of the list's own deadline (the primary would be no faster) and for
    every other error (a bug, to surface).
    """
    for one in (error, error.__cause__, getattr(error, "orig", None)):
        if one is None:
            continue
        if _RECOVERY_CONFLICT in str(one).lower():
            return True
        mapped = driver_unavailable(one)
        if mapped is not None and mapped.reason != "timeout":
            return True
    return False


@dataclass
class Replica(Generic[N]):
    """One replica and what is known of it.

    Attributes:
        node: The backend's handle: an ``AsyncEngine`` (SQLAlchemy) or an engine of ``extra_nodes`` (Piccolo).
        name: For logs and errors.
        lag: Seconds behind at the last probe (None: never probed, or not a standby).
        checked_at: ``time.monotonic()`` of the last probe.
        down_until: ``time.monotonic()`` before which the replica is not tried.
    """

    node: N
    name: str
    lag: float | None = None
    checked_at: float = float("-inf")
    down_until: float = float("-inf")


@dataclass
class ReplicaSet(Generic[N]):
    """The replicas of one backend, picked in turn among the usable ones.

    Attributes:
        replicas: In the order given.
        max_lag: Seconds of replay lag beyond which a replica is skipped.
        probe_interval: Seconds a probe's answer is trusted.
        down_for: Seconds a replica that failed is skipped before it is tried again.
    """

    replicas: Sequence[Replica[N]]
    max_lag: float = 5.0
    probe_interval: float = 1.0
    down_for: float = 5.0
    _next: int = field(default=0, init=False)

    def __bool__(self) -> bool:
        return bool(self.replicas)

    async def pick(self, probe: Callable[[N], Awaitable[float | None]]) -> Replica[N] | None:
        """The next usable replica, or None when the primary must serve.

        ``probe(node)`` returns the node's lag in seconds (``LAG_QUERY``), None when it is not a
        standby; an exception from it marks the replica down.
        """
        count = len(self.replicas)
        for step in range(count):
            replica = self.replicas[(self._next + step) % count]
            now = time.monotonic()
            if now < replica.down_until:
                continue
            if now - replica.checked_at >= self.probe_interval:
                try:
                    replica.lag = await probe(replica.node)
                except Exception:  # noqa: BLE001 - any failure of the probe means: not this replica now
                    self.failed(replica)
                    continue
                replica.checked_at = time.monotonic()
            if replica.lag is None or replica.lag > self.max_lag:
                continue
            self._next = (self._next + step + 1) % count
            return replica
        return None

    async def serve(self, probe: Callable[[N], Awaitable[float | None]], run: Callable[[N], Awaitable[T]]) -> T | None:
        """``run(node)`` on the next usable replica (see ``pick``); None when the primary must serve.

        None too when the replica tried could not serve (``replica_failed``): it is marked down and the
        caller runs the list on the primary, once. Any other error of ``run`` propagates.
        """
        replica = await self.pick(probe)
        if replica is None:
            return None
        try:
            return await run(replica.node)
        except Exception as error:
            if not replica_failed(error):
                raise
            self.failed(replica)
            return None

    def failed(self, replica: Replica[N]) -> None:
        """Skip ``replica`` for ``down_for`` seconds (it failed to answer)."""
        replica.down_until = time.monotonic() + self.down_for
        replica.checked_at = float("-inf")
