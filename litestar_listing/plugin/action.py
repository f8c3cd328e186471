"""The list action: parse, admit, fetch under a deadline, enrich, wrap in the envelope, add the extension headers.

``list_resource`` and ``parse_query`` are its entry points for code (a handler of the application's
own, a background job); the mounted route, ``listing_route`` and ``provide_page`` run ``list_action``
with the resource's binding (docs: design, "The flow of one list"). It raises the library's errors
(``InvalidQueryError``, ``UnavailableError``, ``ConfigurationError``), which the ``ListingPlugin``'s
exception handlers (``plugin.exceptions``) answer over HTTP, and lets through the 401 and 403 of a
scope rule, Litestar's own exceptions (docs: in your app, "Errors").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl

from litestar_listing.backends.base import ListContext, Page
from litestar_listing.core.cost import counts_with_page
from litestar_listing.core.errors import ConfigurationError, ListingError, UnavailableError, UnsupportedQueryError
from litestar_listing.core.parsing import QueryString
from litestar_listing.core.query import ListQuery
from litestar_listing.plugin.admission import Admitted, lane_of
from litestar_listing.plugin.binding import binding_of
from litestar_listing.plugin.enrichment import enrich_page
from litestar_listing.plugin.envelope import ListResult, pagination
from litestar_listing.plugin.exceptions import logged, unsupported
from litestar_listing.plugin.keyset import cursor_past_total, next_page_headers
from litestar_listing.plugin.prepared import check_load_relations, prepare
from litestar_listing.plugin.reach import check_load_row_policies
from litestar_listing.plugin.resource import EnrichContext

if TYPE_CHECKING:
    from litestar import Litestar
    from litestar.connection import ASGIConnection

    from litestar_listing.core.cost import Cost
    from litestar_listing.plugin.binding import Binding
    from litestar_listing.plugin.resource import Resource

__all__ = (
    "admitted_to_store",
    "in_store",
    "list_action",
    "list_resource",
    "may_estimate",
    "parse_query",
    "query_items",
    "raw_query",
)


async def list_resource(
    resource: Resource,
    connection: ASGIConnection[Any, Any, Any, Any] | None,
    params: Sequence[tuple[str, str]] | None = None,
    *,
    app: Litestar | None = None,
    load: Sequence[str] | None = None,
    session: Any = None,
    primary: bool | None = None,
) -> ListResult:
    """The list action of ``resource`` for ``connection``: parse, fetch the page and total, enrich, wrap.

    It answers as the route the ``ListingPlugin`` mounts: the same envelope, headers and errors,
    under the row policies and admission of the application serving the resource (docs: design,
    "Binding").

    Args:
        resource: A resource given to the application's ``ListingPlugin`` (mounted or ``unmounted``).
        connection: The request (query parameters and forced filters are read from it), or None.
        params: Query parameters to use instead of the request's.
        app: The application whose ``ListingPlugin`` serves the resource, for a list without a
            request (a background job); None: the request's.
        load: Relations to eager-load for this call, instead of ``resource.load`` (docs: eager loading).
        session: A session or connection for the backend instead of the request's.
        primary: Read from the primary (True) or let the backend pick a replica (False) for this
            call; None follows ``resource.primary`` (docs: scaling, "Which node answers").

    Returns:
        The ``ListResult``: the envelope (``result.envelope``, the body the mounted route answers),
        its items and pagination, and the extension headers (``result.response()`` answers both).

    Raises:
        InvalidQueryError: Bad query parameters; the plugin answers 400, one ``extra`` entry each.
        UnavailableError: The store did not answer within ``resource.timeout``, or is unreachable, or
            no list could be admitted in time; the plugin answers 503 with ``Retry-After``.
        ConfigurationError: No application serving the resource is known (``binding_of``), the
            resource has forced filters (or reaches a model with a row policy) and ``connection`` is
            None, or ``load`` names no relation or reaches a scoped model without a row policy.
        NotAuthorizedException, PermissionDeniedException: A scope rule, or the listed model's row
            policy, refuses the request (401, 403).
    """
    binding = binding_of(resource, connection, app, used_by="a call of list_resource")
    return await list_action(binding, connection, params, load=load, session=session, primary=primary)


def parse_query(
    resource: Resource,
    params: Sequence[tuple[str, str]] | QueryString,
    connection: ASGIConnection[Any, Any, Any, Any] | None = None,
    *,
    app: Litestar | None = None,
) -> ListQuery:
    """Parse query parameters into ``resource``'s ``ListQuery`` with the forced filters and row policies of a request.

    Nothing is fetched (``resource.backend.fetch(query, context)`` lists it). ``params`` are pairs,
    or the ``QueryString`` read from a request within ``resource.limits``. The row policies are
    those of the application serving the resource (docs: design, "Binding").

    Raises:
        InvalidQueryError: Every bad parameter at once (the plugin answers 400).
        ConfigurationError: Neither ``connection`` nor ``app`` names an application whose
            ``ListingPlugin`` serves the resource, or the resource has forced filters (or reaches a
            model with a row policy) and ``connection`` is None.
        NotAuthorizedException, PermissionDeniedException: A scope rule, or the listed model's row
            policy, refuses the request (401, 403).
    """
    return binding_of(resource, connection, app, used_by="a call of parse_query").parse(params, connection)


ReadT = TypeVar("ReadT")

_BACKSTOP_GRACE = 0.5
"""Seconds after ``Resource.timeout`` at which the call itself is cancelled, if the store did not stop."""


async def list_action(
    binding: Binding,
    connection: ASGIConnection[Any, Any, Any, Any] | None,
    params: Sequence[tuple[str, str]] | None = None,
    *,
    load: Sequence[str] | None,
    session: Any,
    primary: bool | None,
) -> ListResult:
    """The list of ``connection`` as ``binding``'s application serves it: parse, admit, fetch, enrich, wrap.

    Args:
        binding: The listed resource in the application serving it (its row policies and admission).
        connection: The request (query parameters and forced filters are read from it), or None.
        params: Query parameters to use instead of the request's.
        load: Relations to eager-load instead of ``resource.load`` (docs: eager loading).
        session: A session or connection for the backend instead of the request's.
        primary: Read from the primary (True) or a replica (False); None follows ``resource.primary``.

    Returns:
        The envelope and the extension headers: ``X-Next-Cursor`` and ``Link`` (``keyset``, when a
        next page exists), ``X-Total-Mode`` (``total_mode="estimated"``).

    Raises:
        InvalidQueryError: Bad query parameters, a cursor past the list's end, or a parameter the
            store cannot answer (400).
        UnavailableError: No admission within the queue timeout (``reason="busy"``), the store did
            not answer within ``resource.timeout`` (``"timeout"``) or at all (``"connection"``) (503).
        ConfigurationError: Forced filters without ``connection``, a ``load`` that is no relation
            or reaches an unguarded scoped model, an enrichment that replaced items, or a store the
            application did not set up (no session, an unbound document class); logged
            (``exceptions.logged``).
    """
    try:
        return await _list(binding, connection, params, load=load, session=session, primary=primary)
    except ConfigurationError as error:
        logged(error)
        raise


async def _list(
    binding: Binding,
    connection: ASGIConnection[Any, Any, Any, Any] | None,
    params: Sequence[tuple[str, str]] | None,
    *,
    load: Sequence[str] | None,
    session: Any,
    primary: bool | None,
) -> ListResult:
    resource = binding.resource
    if params is None:
        read = QueryString.read(raw_query(connection), resource.limits)
        query, cost = binding.parse_priced(read, connection)
        params = read.pairs
    else:
        query, cost = binding.parse_priced(params, connection)
    if load is not None:
        try:
            check_load_relations(prepare(resource).field_map.graph, load)
        except ConfigurationError as error:
            msg = f"resource {resource.name!r}: {error}"
            raise ConfigurationError(msg) from error
        check_load_row_policies(resource, binding.policies, load)  # the start-up check, per call
    primary = resource.primary if primary is None else primary
    headers: dict[str, str] = {}
    async with admitted_to_store(binding, connection, cost, headers, f"listing {resource.name}") as admitted:
        # An expensive list runs on one core of the database (docs: admission, "One core per expensive list").
        parallel = admitted.lane == "cheap"
        result = await _list_admitted(
            binding, connection, query, params, load, session, primary=primary, parallel=parallel
        )
    if headers:
        result = replace(result, headers={**result.headers, **headers})
    return result


@contextlib.asynccontextmanager
async def admitted_to_store(
    binding: Binding,
    connection: ASGIConnection[Any, Any, Any, Any] | None,
    cost: Cost,
    headers: dict[str, str],
    what: str,
) -> AsyncIterator[Admitted]:
    """Charge the client's budget, wait for admission, and hold it while the block reads the store.

    The budget's ``RateLimit-*`` headers, and after the block the ``X-Listing-*`` headers of
    ``Resource.cost_headers``, are added to ``headers``; the admission is logged (``observed``).
    One rule for every read of a resource's store: a list, a facet request (docs: admission).

    Args:
        binding: The resource as the application serves it.
        connection: The request, or None.
        cost: The read's price (``core.cost``): it decides the lane and what the budget charges.
        headers: The answer's headers, added to.
        what: What waits, for the errors' messages (``"listing flights"``).

    Yields:
        How the read was admitted: its lane and its wait.

    Raises:
        RateLimitedError: The client's budget is spent (429).
        UnavailableError: No place came free within the queue timeout (503).
    """
    resource = binding.resource
    budget, admission = binding.budget, binding.admission
    client = "" if connection is None else binding.client(connection)
    if budget is not None and connection is not None:
        spending = await budget.charge(connection.app, client, cost.total, what)
        headers.update(spending.headers)
    admitting: contextlib.AbstractAsyncContextManager[Admitted] = (
        contextlib.nullcontext(Admitted(lane_of(cost.total, binding.expensive_cost), 0.0))
        if admission is None
        else admission.admitted(what, cost=cost.total, client=client)
    )
    async with admitting as admitted:
        yield admitted
    observed(resource, client, cost, admitted, what)
    if resource.cost_headers:
        headers.update(cost_headers(cost, admitted))


async def _list_admitted(
    binding: Binding,
    connection: ASGIConnection[Any, Any, Any, Any] | None,
    query: ListQuery,
    params: Sequence[tuple[str, str]],
    load: Sequence[str] | None,
    session: Any,
    *,
    primary: bool,
    parallel: bool,
) -> ListResult:
    resource = binding.resource
    total_mode = resource.total_mode if may_estimate(resource, query) else "exact"
    # The timeout starts now: time spent waiting for admission is bounded by its own queue_timeout.
    context = ListContext(
        request=connection,
        session=session,
        load=tuple(resource.load if load is None else load),
        deadline=None if resource.timeout is None else time.monotonic() + resource.timeout,
        keyset=resource.keyset,
        total_mode=total_mode,
        exact_total_below=resource.exact_total_below,
        primary=primary,
        parallel=parallel,
        count_in_page=total_mode == "exact" and counts_with_page(query, prepare(resource).field_map),
        trigram_tables=binding.trigram_tables,
        indexed_search=binding.indexed_search,
    )
    page = await _fetch(resource, query, context)
    window = query.window
    if query.after is not None and window.offset + len(page.items) > page.total:
        if page.total_mode == "estimated":  # the planner may be short: the count decides
            page = await _fetch(resource, query, replace(context, total_mode="exact"))
        if window.offset + len(page.items) > page.total:
            raise cursor_past_total(page.total)
    with _store_errors(resource):  # the hook's own statements fail as the list's do
        await enrich_page(resource, page, EnrichContext(connection, resource, context, query, binding.policies))
    headers: dict[str, str] = {}
    if resource.total_mode == "estimated":
        headers["X-Total-Mode"] = page.total_mode
    if resource.keyset:
        headers.update(next_page_headers(query, page, connection, params))
    prepared = prepare(resource)
    paging = pagination(window.page, window.count, page.total)
    envelope = prepared.envelope(data=page.items, pagination=paging, message=prepared.message, status="success")
    return ListResult(envelope=envelope, items=page.items, pagination=paging, headers=headers)


ADMISSION_LOGGER = logging.getLogger("litestar_listing.admission")
"""Where each list's cost, lane and wait are logged (``observed``): expensive lists at INFO, the others at DEBUG."""


def observed(resource: Resource, client: str, cost: Cost, admitted: Admitted, what: str = "") -> None:
    """Log one list's cost, lane and wait on ``ADMISSION_LOGGER`` (docs: admission, "Observing costs").

    Lists of the expensive lane are logged at INFO, the others at DEBUG (Litestar's default logging
    shows INFO). The message names what ran (``what``, ``"listing <resource>"`` by default; a facet
    request's is ``"counting facets of <resource>"``), the client, the cost with its costliest
    parameters, the lane and the wait; the same values are the record's attributes
    ``listing_resource``, ``listing_client``, ``listing_cost``, ``listing_parts`` (``{parameter:
    units}``), ``listing_lane`` and ``listing_wait`` (seconds), for a structured handler.
    """
    level = logging.INFO if admitted.lane == "expensive" else logging.DEBUG
    if not ADMISSION_LOGGER.isEnabledFor(level):
        return
    costliest = ", ".join(f"{name} {units:.1f}" for name, units in cost.costliest())
    ADMISSION_LOGGER.log(
        level,
        "%s for %s: cost %.1f (%s), %s lane, waited %.3f s",
        what or f"listing {resource.name}",
        client or "no request",
        cost.total,
        costliest or "no parameter",
        admitted.lane,
        admitted.waited,
        extra={
            "listing_resource": resource.name,
            "listing_client": client,
            "listing_cost": cost.total,
            "listing_parts": dict(cost.parts),
            "listing_lane": admitted.lane,
            "listing_wait": admitted.waited,
        },
    )


def cost_headers(cost: Cost, admitted: Admitted) -> dict[str, str]:
    """``X-Listing-Cost`` (units), ``X-Listing-Lane`` and ``X-Listing-Wait`` (seconds), for ``Resource.cost_headers``.

    None of them depends on a row: the cost is the query's and the models', the lane the cost's, the
    wait the other lists' (docs: admission, "Observing costs").
    """
    return {
        "X-Listing-Cost": f"{cost.total:.1f}",
        "X-Listing-Lane": admitted.lane,
        "X-Listing-Wait": f"{admitted.waited:.3f}",
    }


def may_estimate(resource: Resource, query: ListQuery) -> bool:
    """Whether ``query``'s total may be the planner's estimate: only when no row of the table is hidden from it.

    The planner's statistics describe the whole table. Under a scope (forced filters), a row policy
    or a base list query that leaves rows out, an estimate would depend on rows the caller may not
    see (another tenant's, soft-deleted ones): such a list is counted exactly whatever
    ``Resource.total_mode`` says, and ``X-Total-Mode`` says ``exact`` (docs: design, "Estimated
    totals").
    """
    return not (query.forced_filters or query.policies or resource.backend.narrows_rows)


async def _fetch(resource: Resource, query: ListQuery, context: ListContext) -> Page:
    """The backend's page, its errors made the client's (``in_store``)."""
    return await in_store(resource, resource.backend.fetch(query, context))


async def in_store(resource: Resource, reading: Awaitable[ReadT]) -> ReadT:
    """Await ``reading`` from ``resource``'s store, its errors made the client's (``_store_errors``).

    Raises:
        UnavailableError: The store timed out (``reason="timeout"``) or failed; the message says
            what to do.
        InvalidQueryError: The store cannot answer a parameter.
    """
    # The stores stop their own statements at ``timeout`` (PostgreSQL, MongoDB, the SQLite
    # guard); cancelling the call a little later is the backstop for everything else.
    backstop = None if resource.timeout is None else resource.timeout + _BACKSTOP_GRACE
    with _store_errors(resource):
        try:
            return await asyncio.wait_for(reading, backstop)
        except asyncio.TimeoutError:
            raise UnavailableError("the backstop cancelled the list", reason="timeout") from None
        except UnsupportedQueryError as error:
            # The start-up check keeps parsed queries from getting here; if one ever does, the
            # client learns which parameter the store cannot answer, not a 500.
            raise unsupported(error) from error


@contextlib.contextmanager
def _store_errors(resource: Resource) -> Iterator[None]:
    """Make the store's failures within the block the client's ``UnavailableError``, saying what to do.

    The backend's own (``fetch`` raises ``UnavailableError``) and what its store's client raises in
    an enrichment hook, mapped by ``ListingBackend.unavailable``: a statement out of time, such as
    SQLite's guard interrupting it, is a 503 like a slow list, never a 500 (docs: enrichment, "Errors").

    Raises:
        UnavailableError: ``reason="timeout"`` with the resource's timeout in the message, or the
            store's failure.
    """
    try:
        yield
    except UnavailableError as error:
        raise _for_client(resource, error) from error
    except ListingError:
        raise  # the library's own: a bad query, a configuration
    except Exception as error:
        mapped = resource.backend.unavailable(error)
        if mapped is None:
            raise
        raise _for_client(resource, mapped) from error


def _for_client(resource: Resource, error: UnavailableError) -> UnavailableError:
    if error.reason == "timeout":
        detail = (
            f"listing {resource.name} took longer than {resource.timeout or 0:g} s; narrow the filters or try again"
        )
    else:
        detail = f"listing {resource.name} failed: {error}; try again"
    return UnavailableError(detail, reason=error.reason)


def raw_query(connection: ASGIConnection[Any, Any, Any, Any] | None) -> str:
    """The request's query string, decoded (undecodable bytes replaced); empty without a request."""
    raw: bytes = b"" if connection is None else connection.scope.get("query_string", b"")
    return raw.decode("utf-8", "replace")


def query_items(connection: ASGIConnection[Any, Any, Any, Any]) -> list[tuple[str, str]]:
    """The request's query parameters as ``(name, value)`` pairs in request order, blanks kept (all of them)."""
    return parse_qsl(raw_query(connection), keep_blank_values=True, errors="replace")
