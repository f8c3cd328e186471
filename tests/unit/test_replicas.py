"""The routing rules of ``backends/relational/replicas.py``, with fake nodes and probes."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import pytest

from litestar_listing.backends.relational.replicas import Replica, ReplicaSet, replica_failed


class _Error(Exception):
    def __init__(self, message: str, sqlstate: str | None = None) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


def test_which_errors_send_the_list_to_the_primary() -> None:
    conflict = _Error("canceling statement due to conflict with recovery", "40001")
    assert replica_failed(conflict)
    wrapped = RuntimeError("(sqlalchemy) failed")
    wrapped.__cause__ = conflict
    assert replica_failed(wrapped)
    assert replica_failed(ConnectionRefusedError("connect call failed"))
    assert replica_failed(_Error("the database system is shutting down", "57P03"))
    # The list's own deadline: the primary would be no faster, so it is a 503, not a retry.
    assert not replica_failed(_Error("canceling statement due to statement timeout", "57014"))
    assert not replica_failed(TimeoutError())
    # A bug is a bug on every node.
    assert not replica_failed(_Error('column "nope" does not exist', "42703"))


def _set(lags: Mapping[str, float | None], **options: float) -> tuple[ReplicaSet[str], list[str]]:
    probed: list[str] = []
    replicas = ReplicaSet([Replica(name, name) for name in lags], **options)
    return replicas, probed


async def test_replicas_are_taken_in_turn_and_probed_once_per_interval() -> None:
    lags = {"a": 0.0, "b": 0.0}
    replicas, probed = _set(lags, probe_interval=60.0)

    async def probe(node: str) -> float | None:
        probed.append(node)
        return lags[node]

    picked = [getattr(await replicas.pick(probe), "name", None) for _ in range(4)]
    assert picked == ["a", "b", "a", "b"]
    assert probed == ["a", "b"]


async def test_lagging_failed_and_non_standby_nodes_are_skipped() -> None:
    lags: dict[str, float | None] = {"late": 9.0, "primary-by-mistake": None, "down": 0.0, "good": 0.1}

    async def probe(node: str) -> float | None:
        if node == "down":
            raise ConnectionRefusedError(node)
        return lags[node]

    replicas, _ = _set(lags, max_lag=1.0, down_for=60.0)
    assert [getattr(await replicas.pick(probe), "name", None) for _ in range(3)] == ["good"] * 3
    assert replicas.replicas[2].down_until > 0


async def test_no_usable_replica_means_the_primary() -> None:
    async def probe(node: str) -> float | None:
        raise ConnectionRefusedError(node)

    replicas, _ = _set({"only": 0.0})
    assert await replicas.pick(probe) is None
    replicas.failed(replicas.replicas[0])
    assert await replicas.pick(probe) is None


async def test_a_replica_marked_down_is_tried_again_after_its_time() -> None:
    async def probe(node: str) -> float | None:
        return 0.0

    replicas, _ = _set({"only": 0.0}, down_for=0.05)
    replicas.failed(replicas.replicas[0])
    assert await replicas.pick(probe) is None
    await asyncio.sleep(0.06)
    replica = await replicas.pick(probe)
    assert replica is not None
    assert replica.name == "only"


@pytest.mark.parametrize("lag", [0.0, 0.99])
async def test_lag_within_the_bound_is_served(lag: float) -> None:
    async def probe(node: str) -> float | None:
        return lag

    replicas, _ = _set({"only": lag}, max_lag=1.0)
    assert await replicas.pick(probe) is not None
