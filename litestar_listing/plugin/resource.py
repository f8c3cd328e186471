"""``Resource``: the declaration of one listed collection, and its list action's entry points."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

import msgspec
from litestar import Litestar
from litestar.connection import ASGIConnection

from litestar_listing.backends.base import ListingBackend, TotalMode, offered_operators
from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.operators import Operator
from litestar_listing.core.parsing import Limits, QueryParser, QueryString, forced_filter
from litestar_listing.core.query import Combine, Filter, ListQuery
from litestar_listing.core.schema import ALL_FIELDS, FieldMap
from litestar_listing.plugin.action import Enrich, EnrichContext, list_action, raw_query
from litestar_listing.plugin.binding import binding_of
from litestar_listing.plugin.prepared import Prepared, prepare
from litestar_listing.plugin.scoping import ScopeRule

if TYPE_CHECKING:
    from litestar_listing.plugin.binding import Binding

__all__ = ("EnrichContext", "Resource", "query_items")


@dataclass(frozen=True, eq=False)
class Resource:
    """A collection listed at ``{path_prefix}/<name>/`` (spec §4.1): a frozen declaration.

    What the declaration alone gives (field map, parser, envelope type, every check) is ``prepared``
    (``plugin.prepared``), the same in every application. What an application derives from it (its
    row policies, admission and OpenAPI operation) is the resource's ``Binding`` in that application
    (``plugin.binding``), made by the application's ``ListingPlugin``: one resource may serve several
    applications, each with its own. The list action is ``plugin.action``. Two resources are equal
    only when they are the same object; ``dataclasses.replace`` copies one.

    Attributes:
        name: The path segment and the name in OpenAPI, e.g. ``"flights"``.
        backend: The store, e.g. ``SQLAlchemyBackend(Flight, config=...)``.
        filter_fields: Filterable paths; ``"*"`` is every own non-private column, ``"rel__*"`` every
            column of a relation; relation paths only when listed (DESIGN.md, "Exposure").
        order_fields: Orderable paths, the same way; computed aliases are always orderable.
        search_fields: Searchable text paths (spec §4.2); empty means ``search`` is a 400.
        default_order: Terms like ``"-time_hour"`` used without ``order_by`` (spec §4.3.1); the
            primary key is appended as the final tie-breaker.
        combine: ``"and"`` (default) or ``"or"``: how client filters combine (spec §4.4.1-2).
        scopes: Server-side scoping (spec §4.4.10), e.g. ``tenant_scope("company_id")``: each
            ``ScopeRule`` gives, per request, forced filters the client cannot override.
        enrich: ``(items, context) -> None`` (sync or async), run once over the page items to add
            derived fields; it may not add or remove items (spec §4.6).
        enrich_fields: Names and types of the fields ``enrich`` adds, for OpenAPI.
        load: Relations eager-loaded with the items of the list action (spec §4.5), e.g.
            ``("airline",)``; ``Resource.list(load=...)`` overrides it per call.
        limits: Request bounds (spec §8, DESIGN.md "Limits").
        timeout: Seconds the list action may spend in the store (page, total and eager loading
            together); past it the statement is cancelled and the client gets a 503. None: no limit.
        ignore_unknown_filters: Drop unknown filter names instead of answering 400. ``None`` (the
            default) follows the store: a 400 for relational resources, ignored for document-store
            resources (spec §4.4.9, §7.1), which may opt into the 400 with ``False``.
        raw_filters: Document-store resources only: raw store keys containing ``.`` or ``$``
            (e.g. ``"meta.color"``) that clients may filter on by equality; their values are passed
            as text (spec §4.4.9). Keys naming operators (``$where``, ``$expr``...) are refused.
        max_depth: The most relations a path may cross.
        public_paths: Relation paths (or relation prefixes, ``"watches"``) that may reach a model
            another resource scopes although that model has no row policy: every row of it can be
            filtered, searched, ordered on or loaded through them (DESIGN.md, "Row policies").
        keyset: Offer keyset continuation, an extension of spec §4.7: every response carries the
            opaque token of the next page in ``X-Next-Cursor`` (and a ``Link: <...>; rel="next"``),
            and ``cursor=<token>`` (instead of ``page``) continues after the previous page's last
            item, at the cost of the first page whatever the depth. The token is bound to the
            filters, search, order and page size; the envelope is unchanged, ``pagination.page``
            counting on from the page the token came from. ``cursor`` stays a filter name on
            resources without it. The backend must have ``Capabilities.keyset``.
        total_mode: ``"exact"`` (spec §2.2, the default) or ``"estimated"``: where the backend can
            (``"estimated"`` in ``Capabilities.total_modes``, PostgreSQL), a total the planner estimates at
            ``exact_total_below`` rows or more is reported as that estimate, without counting; the
            ``X-Total-Mode`` header says ``estimated`` or ``exact``. An extension of spec §2.2.
        exact_total_below: With ``total_mode="estimated"``, estimates under this many rows are
            counted exactly.
        primary: Read every list from the primary, never from the backend's read replicas (data that
            must be current to the last commit, e.g. an account's own recent orders); ``list(primary=...)``
            decides per call. Without replicas it changes nothing (docs: "Scaling out").
        item: The item type shown in OpenAPI; derived from the model when None.
        message: The envelope's ``message`` text (spec §2.1).
        description: The endpoint's description in OpenAPI.
    """

    name: str
    backend: ListingBackend
    filter_fields: Sequence[str] = (ALL_FIELDS,)
    order_fields: Sequence[str] = (ALL_FIELDS,)
    search_fields: Sequence[str] = ()
    default_order: Sequence[str] = ()
    combine: Combine | str = Combine.AND
    scopes: Sequence[ScopeRule] = ()
    enrich: Enrich | None = None
    enrich_fields: Mapping[str, Any] = field(default_factory=dict)
    load: Sequence[str] = ()
    limits: Limits = field(default_factory=Limits)
    timeout: float | None = 5.0
    ignore_unknown_filters: bool | None = None
    raw_filters: Sequence[str] = ()
    max_depth: int = 3
    public_paths: Sequence[str] = ()
    keyset: bool = False
    total_mode: TotalMode = "exact"
    exact_total_below: int = 10_000
    primary: bool = False
    item: Any = None
    message: str = ""
    description: str = ""

    @cached_property
    def prepared(self) -> Prepared:
        """The declaration checked and resolved against the models (``plugin.prepared.prepare``), once.

        Raises:
            ConfigurationError: See ``prepare``.
        """
        return prepare(self)

    def build(self) -> Prepared:
        """Check the declaration now (at start-up) rather than at the first list; idempotent.

        Returns:
            ``prepared``.

        Raises:
            ConfigurationError: See ``plugin.prepared.prepare``.
        """
        return self.prepared

    @property
    def field_map(self) -> FieldMap:
        """The resolved exposure policy."""
        return self.prepared.field_map

    @property
    def parser(self) -> QueryParser:
        """The query parser."""
        return self.prepared.parser

    @property
    def envelope(self) -> type[msgspec.Struct]:
        """The response type of the list endpoint (spec §2.1)."""
        return self.prepared.envelope

    @property
    def operators(self) -> Mapping[str, Operator]:
        """The operators this resource's filters offer: exactly those its backend declares (spec §4.4.7)."""
        return offered_operators(self.backend)

    def forced_filters(self, connection: ASGIConnection[Any, Any, Any, Any] | None) -> list[Filter]:
        """The forced filters of ``connection``: each of ``scopes`` built for this request.

        Returns:
            One equality (or membership) ``Filter`` per path a rule constrains, for
            ``ListQuery.forced_filters`` (spec §4.4.10).

        Raises:
            ConfigurationError: The resource has scopes but no connection was given: a
                list without its request would be unscoped (spec §4.4.10).
        """
        if connection is None:
            if self.scopes:
                msg = f"resource {self.name!r} has scopes (forced filters): list or parse it with the request"
                raise ConfigurationError(msg)
            return []
        return [
            forced_filter(self.field_map, name, value)
            for rule in self.scopes
            for name, value in rule.build(connection).items()
        ]

    def parse(
        self,
        params: Sequence[tuple[str, str]] | QueryString,
        connection: ASGIConnection[Any, Any, Any, Any] | None = None,
        *,
        app: Litestar | None = None,
    ) -> ListQuery:
        """Parse query parameters into a ``ListQuery`` with the forced filters and row policies of ``connection``.

        ``params`` are pairs, or the ``QueryString`` read from a request within ``limits``. The row
        policies are those of the application serving the resource (``binding``).

        Raises:
            InvalidQueryError: Every bad parameter at once (the plugin answers 400).
            ConfigurationError: Neither ``connection`` nor ``app`` names an application whose
                ``ListingPlugin`` serves the resource, or the resource has forced filters (or reaches a
                model with a row policy) and ``connection`` is None.
        """
        return self.binding(connection, app).parse(params, connection)

    def binding(self, connection: ASGIConnection[Any, Any, Any, Any] | None, app: Litestar | None = None) -> Binding:
        """The resource as ``app`` serves it, else as the application of ``connection`` does (``plugin.binding``).

        Raises:
            ConfigurationError: Neither names an application, or its ``ListingPlugin`` plugins were not given
                the resource; the message says how to give it.
        """
        return binding_of(self, connection, app)

    async def list(
        self,
        connection: ASGIConnection[Any, Any, Any, Any] | None,
        params: Sequence[tuple[str, str]] | None = None,
        *,
        app: Litestar | None = None,
        load: Sequence[str] | None = None,
        session: Any = None,
        primary: bool | None = None,
    ) -> msgspec.Struct:
        """The list action: parse, fetch the page and total, enrich, wrap in the envelope.

        Args:
            connection: The request (query parameters and forced filters are read from it).
            params: Query parameters to use instead of the request's.
            app: The application whose ``ListingPlugin`` serves the resource, for a list without a
                request (a background job); None: the request's.
            load: Relations to eager-load for this call, instead of ``self.load`` (spec §4.5).
            session: A session or connection for the backend instead of the request's.
            primary: Read from the primary (True) or let the backend pick a replica (False) for this
                call; None follows ``self.primary``.

        Returns:
            The envelope of spec §2.1 (``data``, ``pagination``, ``message``, ``status``).

        Raises:
            InvalidQueryError: Bad query parameters; the plugin answers 400, one ``extra`` entry each.
            UnavailableError: The store did not answer within ``timeout``, or is unreachable, or no
                list could be admitted in time; the plugin answers 503 with ``Retry-After``.
            ConfigurationError: No application serving the resource is known (``binding``), or the
                resource has forced filters and ``connection`` is None.
        """
        binding = self.binding(connection, app)
        envelope, _ = await list_action(binding, connection, params, load=load, session=session, primary=primary)
        return envelope

    async def list_with_headers(
        self,
        connection: ASGIConnection[Any, Any, Any, Any] | None,
        params: Sequence[tuple[str, str]] | None = None,
        *,
        app: Litestar | None = None,
        load: Sequence[str] | None = None,
        session: Any = None,
        primary: bool | None = None,
    ) -> tuple[msgspec.Struct, dict[str, str]]:
        """``list``, with the response headers of the extensions the resource opts into.

        Returns:
            The envelope and the headers: ``X-Next-Cursor`` and ``Link`` (``keyset``, when a next
            page exists) and ``X-Total-Mode`` (``total_mode="estimated"``).

        Raises:
            InvalidQueryError, UnavailableError, ConfigurationError: As ``list``.
        """
        binding = self.binding(connection, app)
        return await list_action(binding, connection, params, load=load, session=session, primary=primary)


def query_items(connection: ASGIConnection[Any, Any, Any, Any]) -> list[tuple[str, str]]:
    """The request's query parameters as ``(name, value)`` pairs in request order, blanks kept (all of them)."""
    return parse_qsl(raw_query(connection), keep_blank_values=True, errors="replace")
