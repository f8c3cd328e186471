"""Hostile-client tests: tenant isolation under adversarial query strings, and private-field exposure.

Shared here: the conformance data loaded on each selected backend x database (``SELECTED`` of
``tests/matrix.py``, the targets of the conformance table), in databases of its own (``litestar_listing_hostile``...) so
that a conformance run at the same time is not disturbed; each target opened on an event loop of its
own (hypothesis drives synchronous functions); requests that carry a user in ``scope["user"]`` as
an authentication middleware would leave it, with the query string in ``scope["query_string"]``; and
the tally a property keeps of what it checked.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from litestar.connection import ASGIConnection

from litestar_listing.backends.sqlalchemy import model_graph
from litestar_listing.plugin.action import query_items
from litestar_listing.plugin.binding import forced_filters
from litestar_listing.plugin.prepared import prepare
from tests.conformance.models import Thing
from tests.conformance.targets import Target
from tests.conformance.targets import open_target as open_conformance_target
from tests.hostile.strategies import profile_name
from tests.loops import entered_on_own_loop

if TYPE_CHECKING:
    from litestar import Litestar
    from litestar.types import Scope

    from litestar_listing import ListQuery, Resource
    from tests.matrix import TestTarget

GRAPH = model_graph(Thing)
"""The conformance models, as the memory rows nest them."""

__all__ = (
    "HOSTILE_DATABASE",
    "Opened",
    "Tally",
    "open_target",
    "opened_on_own_loop",
    "pruned",
    "request",
    "scoped_query",
)

HOSTILE_DATABASE = "litestar_listing_hostile"
"""The PostgreSQL (SQLAlchemy) and document-store database of these tests; Piccolo's gets ``_piccolo``."""


@asynccontextmanager
async def open_target(target: TestTarget) -> AsyncIterator[Target]:
    """The conformance resources and data on ``target``, in the databases named ``HOSTILE_DATABASE``."""
    async with open_conformance_target(target, HOSTILE_DATABASE) as loaded:
        yield loaded


@dataclass(frozen=True)
class Opened:
    """A loaded target and the event loop its engines, pools and clients belong to."""

    target: Target
    loop: asyncio.AbstractEventLoop


@contextmanager
def opened_on_own_loop(target: TestTarget) -> Iterator[Opened]:
    """``open_target(target)`` on a new event loop, closed with it afterwards."""
    with entered_on_own_loop(open_target(target)) as (loaded, loop):
        yield Opened(loaded, loop)


@dataclass
class Tally:
    """What a property checked on one target: its summary line and its lower bounds read these counts.

    A property that drew only refused or empty queries would have checked nothing; each test asserts
    bounds on these numbers after its run.
    """

    queries: int = 0
    """Query strings run (each asked as several users, or of several pages)."""
    answers: int = 0
    """Answers compared with what they must equal."""
    rejected: int = 0
    """Queries, or answers, refused with a 400 (as the reference refused them)."""
    rows_seen: int = 0
    """Rows in the answers compared."""
    facet_requests: int = 0
    """Facet requests compared (docs: facets)."""
    facets_answered: int = 0
    """Facet answers compared that were a 200 (for each viewer and page: several per request)."""

    def summary(self, target: Target, *, queries: str = "", answers: str = "") -> str:
        """The line shown by ``pytest -rP`` or ``-s``, printed and returned for the assertions' messages.

        Args:
            target: The target the property ran on.
            queries: Said after the number of queries, e.g. ``" (12 seed)"``.
            answers: Said after the number of answers, e.g. ``" (3 rejected)"``.
        """
        line = (
            f"{target.id} ({profile_name()} profile): {self.queries} queries{queries}, "
            f"{self.answers} answers compared{answers}, {self.rows_seen} rows checked"
            + (
                f", {self.facet_requests} facet requests ({self.facets_answered} counts answered)"
                if self.facet_requests
                else ""
            )
        )
        print(line)  # noqa: T201 - the tally, shown by ``pytest -rP`` or ``-s``
        return line


def request(query: str, user: object | None, app: Litestar | None = None) -> ASGIConnection[Any, Any, Any, Any]:
    """A GET request with ``query`` as its raw query string and ``user`` in ``scope["user"]``, served by ``app``.

    ``list_resource(resource, connection)`` reads both from the scope: the parameters through
    ``query_items`` and the forced filters through ``tenant_scope`` (which reads ``scope["user"]``,
    as ``request.user`` would after an authentication middleware). No user: no ``"user"`` key.
    """
    scope: dict[str, Any] = {
        "type": "http",
        "method": "GET",
        "path": "/things/",
        "query_string": query.encode(),
        "headers": [],
    }
    if user is not None:
        scope["user"] = user
    if app is not None:
        scope["app"] = scope["litestar_app"] = app
    return ASGIConnection(cast("Scope", scope))


def scoped_query(resource: Resource, connection: ASGIConnection[Any, Any, Any, Any]) -> ListQuery:
    """The ``ListQuery`` ``resource`` parses from ``connection``, with its forced filters and no row policy.

    What a binding parses (``Binding.parse``) before an application's row policies join; the tests
    that give a query row policies set ``ListQuery.policies`` themselves.
    """
    return prepare(resource).parser.parse(query_items(connection), forced_filters(resource, connection))


def pruned(
    row: Mapping[str, Any], entity: str, rules: Mapping[str, Callable[[Mapping[str, Any]], bool]]
) -> dict[str, Any] | None:
    """A memory row of the conformance data as in a database where every row outside ``rules`` was deleted.

    ``rules``: each policed model's test of a plain row. A deleted to-one row leaves its key and reads
    as missing; a deleted to-many row is gone; the computed ``part_count`` counts the parts that remain.
    None when ``row`` itself is deleted.
    """
    if entity in rules and not rules[entity](row):
        return None
    kept = dict(row)
    for name, relation in GRAPH.entities[entity].relations.items():
        if name not in row:
            continue
        if relation.to_many:
            # A None is a link to a missing row (fixture.MISSING): no row, like a deleted one.
            children = (pruned(child, relation.target, rules) for child in row[name] or () if child is not None)
            kept[name] = [child for child in children if child is not None]
        elif row[name] is not None:
            kept[name] = pruned(row[name], relation.target, rules)
    if entity == "Thing":
        kept["part_count"] = len(kept["parts"])
    return kept
