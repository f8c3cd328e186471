"""The facet action: parse, price, admit, count under a deadline, wrap in the facet envelope (docs: facets).

``count_facets`` is its entry point for code; the route the ``ListingPlugin`` mounts at
``<list route>facets/`` for a resource with ``facet_fields`` runs ``facet_action`` with the
resource's binding. Everything a list obeys, its counts obey: the scopes, the row policies, the
admission, the budget, the ceiling and the timeout.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
from litestar import Response

from litestar_listing.backends.base import FacetBackend, ListContext
from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.parsing import QueryString
from litestar_listing.plugin.action import admitted_to_store, in_store, raw_query
from litestar_listing.plugin.binding import binding_of
from litestar_listing.plugin.exceptions import logged
from litestar_listing.plugin.prepared import prepare

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from litestar import Litestar
    from litestar.connection import ASGIConnection

    from litestar_listing.core.facets import FacetPage
    from litestar_listing.plugin.binding import Binding
    from litestar_listing.plugin.resource import Resource

__all__ = ("FacetResult", "count_facets", "facet_action")


@dataclass(frozen=True, slots=True)
class FacetResult:
    """One answered facet request: what ``count_facets`` returns.

    Attributes:
        envelope: The body the mounted route answers (``envelope.facets_envelope_type``).
        page: The backend's answer: the total and each facet's counts.
        headers: The budget's ``RateLimit-*`` and the ``X-Listing-*`` headers of ``cost_headers``, as
            for a list (docs: admission); empty otherwise.
    """

    envelope: msgspec.Struct
    page: FacetPage
    headers: Mapping[str, str]

    def response(self) -> Response[Any]:
        """The envelope with its headers, as the mounted route answers it."""
        return Response(self.envelope, headers=dict(self.headers))


async def count_facets(
    resource: Resource,
    connection: ASGIConnection[Any, Any, Any, Any] | None,
    params: Sequence[tuple[str, str]] | None = None,
    *,
    app: Litestar | None = None,
    session: Any = None,
    primary: bool | None = None,
) -> FacetResult:
    """The facet request of ``resource`` for ``connection``, as the route the ``ListingPlugin`` mounts answers it.

    Args:
        resource: A resource with ``facet_fields``, given to the application's ``ListingPlugin``.
        connection: The request (its query parameters and forced filters), or None.
        params: Query parameters to use instead of the request's.
        app: The application whose ``ListingPlugin`` serves the resource, without a request.
        session: A session or connection for the backend instead of the request's.
        primary: Read from the primary (True) or a replica (False); None follows ``resource.primary``.

    Raises:
        InvalidQueryError: Bad parameters, or a request over the resource's ``max_cost`` (400).
        UnavailableError: No admission in time, or the store did not answer in time or at all (503).
        ConfigurationError: As ``list_resource``; or the resource has no ``facet_fields``.
        NotAuthorizedException, PermissionDeniedException: A scope or the listed model's row policy
            refuses the request (401, 403).
    """
    binding = binding_of(resource, connection, app, used_by="a call of count_facets")
    return await facet_action(binding, connection, params, session=session, primary=primary)


async def facet_action(
    binding: Binding,
    connection: ASGIConnection[Any, Any, Any, Any] | None,
    params: Sequence[tuple[str, str]] | None = None,
    *,
    session: Any = None,
    primary: bool | None = None,
) -> FacetResult:
    """The facet request of ``connection`` as ``binding``'s application serves it (``count_facets``).

    Raises:
        As ``count_facets``; a ``ConfigurationError`` is logged (``exceptions.logged``).
    """
    try:
        return await _count(binding, connection, params, session=session, primary=primary)
    except ConfigurationError as error:
        logged(error)
        raise


async def _count(
    binding: Binding,
    connection: ASGIConnection[Any, Any, Any, Any] | None,
    params: Sequence[tuple[str, str]] | None,
    *,
    session: Any,
    primary: bool | None,
) -> FacetResult:
    resource = binding.resource
    backend = resource.backend
    if not resource.facet_fields or not isinstance(backend, FacetBackend):
        msg = f"resource {resource.name!r} has no facet_fields: it answers no facet request"
        raise ConfigurationError(msg)
    read = QueryString.read(raw_query(connection), resource.limits) if params is None else params
    query, cost = binding.parse_facets_priced(read, connection)
    headers: dict[str, str] = {}
    async with admitted_to_store(binding, connection, cost, headers, f"counting facets of {resource.name}") as admitted:
        context = ListContext(
            request=connection,
            session=session,
            deadline=None if resource.timeout is None else time.monotonic() + resource.timeout,
            primary=resource.primary if primary is None else primary,
            # An expensive request runs on one core of the database (docs: admission, "One core per expensive list").
            parallel=admitted.lane == "cheap",
        )
        page = await in_store(resource, backend.facet_counts(query, context))
    prepared = prepare(resource)
    assert prepared.facets_envelope is not None  # noqa: S101 - a resource with facet_fields has one
    envelope = prepared.facets_envelope(
        data=[
            {"facet": counts.facet.name, "values": counts.values, "distinct": counts.distinct} for counts in page.facets
        ],
        total=page.total,
        message=f"Counted {resource.name}.",
        status="success",
    )
    return FacetResult(envelope=envelope, page=page, headers=headers)
