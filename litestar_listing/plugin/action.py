"""The list action (spec §4): admission, deadline, fetch, enrichment, envelope and extension headers.

It raises only the library's errors (``InvalidQueryError``, ``UnavailableError``,
``ConfigurationError``); the ``ListingPlugin``'s exception handlers (``plugin.exceptions``) answer
them over HTTP.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import msgspec
from litestar.connection import ASGIConnection

from litestar_listing.backends.base import ListContext, Page
from litestar_listing.core.errors import ConfigurationError, UnavailableError, UnsupportedQueryError
from litestar_listing.core.parsing import QueryString
from litestar_listing.core.query import ListQuery
from litestar_listing.plugin.envelope import pagination
from litestar_listing.plugin.exceptions import unsupported
from litestar_listing.plugin.keyset import cursor_past_total, next_page_headers
from litestar_listing.plugin.policies import check_load as check_policed_load
from litestar_listing.plugin.prepared import check_load

if TYPE_CHECKING:
    from litestar_listing.plugin.binding import Binding
    from litestar_listing.plugin.policies import RowPolicies
    from litestar_listing.plugin.resource import Resource

__all__ = ("Enrich", "EnrichContext", "list_action", "raw_query")


@dataclass(frozen=True, slots=True)
class EnrichContext:
    """What an enrichment hook gets besides the page items (spec §4.6).

    Attributes:
        request: The current request.
        resource: The listed resource.
        list_context: The backend call's context (``resource.backend.session(list_context)`` gives
            the SQLAlchemy session of the request).
        query: The query that produced the page.
        policies: The row policies of the application serving the list (``request_policies`` resolves
            them for the request); None: none.
    """

    request: ASGIConnection[Any, Any, Any, Any] | None
    resource: Resource
    list_context: ListContext
    query: ListQuery
    policies: RowPolicies | None = None


Enrich = Callable[[list[dict[str, Any]], EnrichContext], Awaitable[None] | None]
"""``(items, context) -> None``, sync or async: adds fields to the page's items (spec §4.6)."""

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
) -> tuple[msgspec.Struct, dict[str, str]]:
    """The list of ``connection`` as ``binding``'s application serves it: parse, admit, fetch, enrich, wrap.

    Args:
        binding: The listed resource in the application serving it (its row policies and admission).
        connection: The request (query parameters and forced filters are read from it), or None.
        params: Query parameters to use instead of the request's.
        load: Relations to eager-load instead of ``resource.load`` (spec §4.5).
        session: A session or connection for the backend instead of the request's.
        primary: Read from the primary (True) or a replica (False); None follows ``resource.primary``.

    Returns:
        The envelope of spec §2.1 and the extension headers: ``X-Next-Cursor`` and ``Link``
        (``keyset``, when a next page exists), ``X-Total-Mode`` (``total_mode="estimated"``).

    Raises:
        InvalidQueryError: Bad query parameters, a cursor past the list's end, or a parameter the
            store cannot answer (400).
        UnavailableError: No admission within the queue timeout (``reason="busy"``), the store did
            not answer within ``resource.timeout`` (``"timeout"``) or at all (``"connection"``) (503).
        ConfigurationError: Forced filters without ``connection``, a ``load`` that is no relation
            or reaches an unguarded scoped model, or an enrichment that replaced items.
    """
    resource = binding.resource
    if params is None:
        read = QueryString.read(raw_query(connection), resource.limits)
        query = binding.parse(read, connection)
        params = read.pairs
    else:
        query = binding.parse(params, connection)
    if load is not None:
        try:
            check_load(resource.field_map.graph, load)
        except ConfigurationError as error:
            msg = f"resource {resource.name!r}: {error}"
            raise ConfigurationError(msg) from error
        check_policed_load(resource, binding.policies, load)  # the start-up check of row policies, per call
    primary = resource.primary if primary is None else primary
    admission = binding.admission
    if admission is None:
        return await _list_admitted(binding, connection, query, params, load, session, primary=primary)
    async with admission.admitted(f"listing {resource.name}"):
        return await _list_admitted(binding, connection, query, params, load, session, primary=primary)


async def _list_admitted(
    binding: Binding,
    connection: ASGIConnection[Any, Any, Any, Any] | None,
    query: ListQuery,
    params: Sequence[tuple[str, str]],
    load: Sequence[str] | None,
    session: Any,
    *,
    primary: bool,
) -> tuple[msgspec.Struct, dict[str, str]]:
    resource = binding.resource
    # The timeout starts now: time spent waiting for admission is bounded by its own queue_timeout.
    context = ListContext(
        request=connection,
        session=session,
        load=tuple(resource.load if load is None else load),
        deadline=None if resource.timeout is None else time.monotonic() + resource.timeout,
        keyset=resource.keyset,
        total_mode=resource.total_mode if may_estimate(resource, query) else "exact",
        exact_total_below=resource.exact_total_below,
        primary=primary,
    )
    page = await _fetch(resource, query, context)
    window = query.window
    if query.after is not None and window.offset + len(page.items) > page.total:
        if page.total_mode == "estimated":  # the planner may be short: the count decides
            page = await _fetch(resource, query, replace(context, total_mode="exact"))
        if window.offset + len(page.items) > page.total:
            raise cursor_past_total(page.total)
    await _enrich(resource, page, EnrichContext(connection, resource, context, query, binding.policies))
    headers: dict[str, str] = {}
    if resource.total_mode == "estimated":
        headers["X-Total-Mode"] = page.total_mode
    if resource.keyset:
        headers.update(next_page_headers(query, page, connection, params))
    envelope = resource.envelope(
        data=page.items,
        pagination=pagination(window.page, window.count, page.total),
        message=resource.prepared.message,
        status="success",
    )
    return envelope, headers


def may_estimate(resource: Resource, query: ListQuery) -> bool:
    """Whether ``query``'s total may be the planner's estimate: only when no row of the table is hidden from it.

    The planner's statistics describe the whole table. Under a scope (forced filters), a row policy
    or a base list query that leaves rows out, an estimate would depend on rows the caller may not
    see (another tenant's, soft-deleted ones): such a list is counted exactly whatever
    ``Resource.total_mode`` says, and ``X-Total-Mode`` says ``exact`` (docs: extensions, "Estimated
    totals").
    """
    return not (query.forced_filters or query.policies or resource.backend.narrows_rows)


async def _fetch(resource: Resource, query: ListQuery, context: ListContext) -> Page:
    """The backend's page, its errors made the client's.

    Raises:
        UnavailableError: The store timed out (``reason="timeout"``) or failed; the message says
            what to do.
        InvalidQueryError: The store cannot answer a parameter.
    """
    # The stores stop their own statements at ``timeout`` (PostgreSQL, MongoDB, the SQLite
    # guard); cancelling the call a little later is the backstop for everything else.
    backstop = None if resource.timeout is None else resource.timeout + _BACKSTOP_GRACE
    too_slow = f"listing {resource.name} took longer than {resource.timeout or 0:g} s; narrow the filters or try again"
    try:
        return await asyncio.wait_for(resource.backend.fetch(query, context), backstop)
    except asyncio.TimeoutError:
        raise UnavailableError(too_slow, reason="timeout") from None
    except UnavailableError as error:
        detail = too_slow if error.reason == "timeout" else f"listing {resource.name} failed: {error}; try again"
        raise UnavailableError(detail, reason=error.reason) from error
    except UnsupportedQueryError as error:
        # The start-up check keeps parsed queries from getting here; if one ever does, the
        # client learns which parameter the store cannot answer, not a 500.
        raise unsupported(error) from error


async def _enrich(resource: Resource, page: Page, context: EnrichContext) -> None:
    if resource.enrich is None or not page.items:
        return
    before = [id(item) for item in page.items]
    result = resource.enrich(page.items, context)
    if inspect.isawaitable(result):
        await result
    if [id(item) for item in page.items] != before:
        msg = f"resource {resource.name!r}: enrich may add fields to items, not add, remove or replace items"
        raise ConfigurationError(msg)


def raw_query(connection: ASGIConnection[Any, Any, Any, Any] | None) -> str:
    """The request's query string, decoded (undecodable bytes replaced); empty without a request."""
    raw: bytes = b"" if connection is None else connection.scope.get("query_string", b"")
    return raw.decode("utf-8", "replace")
