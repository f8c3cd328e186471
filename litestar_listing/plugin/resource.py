"""``Resource``: one listed collection, its exposure policy, scoping, enrichment and list action."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode

import msgspec
from litestar.connection import ASGIConnection
from litestar.exceptions import ServiceUnavailableException, ValidationException

from litestar_listing.backends.base import (
    TOTAL_MODES,
    ListContext,
    ListingBackend,
    Page,
    TotalMode,
    check_contract,
    offered_operators,
)
from litestar_listing.core.cursor import CURSOR_PARAMETER, CursorToken, fingerprint, value_text
from litestar_listing.core.errors import (
    ConfigurationError,
    InvalidQueryError,
    ParameterError,
    UnavailableError,
    UnsupportedQueryError,
)
from litestar_listing.core.operators import Operator
from litestar_listing.core.parsing import Limits, QueryParser, QueryString, forced_filter, is_raw_key
from litestar_listing.core.query import LOOKUP_SEP, Combine, FieldPath, Filter, FilterSyntax, ListQuery
from litestar_listing.core.schema import ALL_FIELDS, FieldMap, ModelGraph, closest
from litestar_listing.plugin.admission import Admission
from litestar_listing.plugin.envelope import envelope_type, item_type, pagination
from litestar_listing.plugin.policies import RowPolicies
from litestar_listing.plugin.policies import check_load as check_policed_load
from litestar_listing.plugin.scoping import ScopeRule

if TYPE_CHECKING:
    from litestar_listing.plugin.plugin import ListingPlugin

__all__ = ("EnrichContext", "Resource", "query_items")


@dataclass(frozen=True, slots=True)
class EnrichContext:
    """What an enrichment hook gets besides the page items (spec §4.6).

    Attributes:
        request: The current request.
        resource: The listed resource.
        list_context: The backend call's context (``resource.backend.session(list_context)`` gives
            the SQLAlchemy session of the request).
        query: The query that produced the page.
    """

    request: ASGIConnection[Any, Any, Any, Any] | None
    resource: Resource
    list_context: ListContext
    query: ListQuery


_BACKSTOP_GRACE = 0.5
"""Seconds after ``Resource.timeout`` at which the call itself is cancelled, if the store did not stop."""

Enrich = Callable[[list[dict[str, Any]], EnrichContext], Awaitable[None] | None]


@dataclass
class Resource:
    """A collection listed at ``{path_prefix}/<name>/`` (spec §4.1).

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
    admission: Admission | None = field(default=None, init=False, repr=False, compare=False)
    """Set by ``ListingPlugin(max_concurrent_lists=...)``: lists wait here for their turn."""
    row_policies: RowPolicies | None = field(default=None, init=False, repr=False, compare=False)
    """Set by ``ListingPlugin(policies=...)``: the row policies each request's query carries (issue 15)."""
    plugin: ListingPlugin | None = field(default=None, init=False, repr=False, compare=False)
    """Set by the ``ListingPlugin`` the resource was given to (mounted or not): its backend is prepared and
    checked when the application starts, and its OpenAPI schemas are written there (issue 16)."""
    _field_map: FieldMap | None = field(default=None, init=False, repr=False)
    _parser: QueryParser | None = field(default=None, init=False, repr=False)
    _envelope: type[msgspec.Struct] | None = field(default=None, init=False, repr=False)

    def build(self) -> None:
        """Resolve the exposure policy against the models; idempotent.

        Raises:
            ConfigurationError: The backend breaks its contract (``backends.base.check_contract``),
                a path does not exist, is private, is too deep, a forced filter names a missing
                field, a ``load`` name is no relation, ``combine`` is not ``and``/``or``, a
                document-store resource exposes a relation filter, or a raw filter key is not allowed.
        """
        if self._field_map is not None:
            return
        check_contract(self.backend)
        try:
            combine = Combine(self.combine)
        except ValueError:
            msg = f"resource {self.name!r}: combine must be 'and' or 'or', not {self.combine!r}"
            raise ConfigurationError(msg) from None
        try:
            field_map = FieldMap.build(
                self.backend.model_graph(),
                filter_fields=self.filter_fields,
                order_fields=self.order_fields,
                search_fields=self.search_fields,
                default_order=self.default_order,
                computed=self.backend.computed_fields(),
                max_depth=self.max_depth,
            )
            for forced in self.scopes:
                for name in forced.fields:
                    field_map.field_at(FieldPath.parse(name))
            check_load(field_map.graph, self.load)
            syntax = self.backend.capabilities.filter_syntax
            if syntax is FilterSyntax.DOCUMENT:
                _check_document_filters(field_map)
            _check_raw_keys(self.raw_filters, allowed=self.backend.capabilities.raw_filters)
            if self.keyset and not self.backend.capabilities.keyset:
                msg = f"keyset=True needs a backend with keyset continuation; {type(self.backend).__name__} has none"
                raise ConfigurationError(msg)
            if self.total_mode not in TOTAL_MODES:
                msg = f"total_mode must be one of {', '.join(map(repr, TOTAL_MODES))}, not {self.total_mode!r}"
                raise ConfigurationError(msg)
        except ConfigurationError as error:
            msg = f"resource {self.name!r}: {error}"
            raise ConfigurationError(msg) from error
        self._field_map = field_map
        ignore_unknown = self.ignore_unknown_filters
        if ignore_unknown is None:
            ignore_unknown = syntax is FilterSyntax.DOCUMENT
        self._parser = QueryParser(
            field_map,
            combine,
            self.limits,
            ignore_unknown,
            syntax=syntax,
            raw_keys=frozenset(self.raw_filters),
            keyset=self.keyset,
            operators=self.operators,
        )
        # The item type is named after the listed model, singular (``Flight``); its module tells two
        # resources of one model apart.
        item = self.item or item_type(
            field_map.graph.root,
            field_map.graph,
            computed=field_map.computed,
            load=tuple(self.load),
            extra=self.enrich_fields,
            module=f"{__name__}.{self.name.replace('-', '_')}",
        )
        self._envelope = envelope_type(f"{_type_name(self.name)}List", item)
        if not self.message:
            self.message = f"Listed {self.name}."

    @property
    def field_map(self) -> FieldMap:
        """The resolved exposure policy (after ``build``)."""
        self.build()
        assert self._field_map is not None  # noqa: S101 - set by build()
        return self._field_map

    @property
    def operators(self) -> Mapping[str, Operator]:
        """The operators this resource's filters offer: exactly those its backend declares (spec §4.4.7)."""
        return offered_operators(self.backend)

    @property
    def parser(self) -> QueryParser:
        """The query parser (after ``build``)."""
        self.build()
        assert self._parser is not None  # noqa: S101 - set by build()
        return self._parser

    @property
    def envelope(self) -> type[msgspec.Struct]:
        """The response type of the list endpoint (spec §2.1)."""
        self.build()
        assert self._envelope is not None  # noqa: S101 - set by build()
        return self._envelope

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
    ) -> ListQuery:
        """Parse query parameters into a ``ListQuery`` with the forced filters of ``connection``.

        ``params`` are pairs, or the ``QueryString`` read from a request within ``limits``.

        Raises:
            ValidationException: Litestar's 400, one ``extra`` entry per bad parameter.
            ConfigurationError: The resource has forced filters and ``connection`` is None.
        """
        try:
            query = self.parser.parse(params, self.forced_filters(connection))
        except InvalidQueryError as error:
            raise _bad_request(error) from None
        # Row policies (issue 15): every model the query may reach, restricted for this request.
        if self.row_policies:
            query = self.row_policies.apply(query, self.field_map.graph, connection)
        return query

    async def list(
        self,
        connection: ASGIConnection[Any, Any, Any, Any] | None,
        params: Sequence[tuple[str, str]] | None = None,
        *,
        load: Sequence[str] | None = None,
        session: Any = None,
        primary: bool | None = None,
    ) -> msgspec.Struct:
        """The list action: parse, fetch the page and total, enrich, wrap in the envelope.

        Args:
            connection: The request (query parameters and forced filters are read from it).
            params: Query parameters to use instead of the request's.
            load: Relations to eager-load for this call, instead of ``self.load`` (spec §4.5).
            session: A session or connection for the backend instead of the request's.
            primary: Read from the primary (True) or let the backend pick a replica (False) for this
                call; None follows ``self.primary``.

        Returns:
            The envelope of spec §2.1 (``data``, ``pagination``, ``message``, ``status``).

        Raises:
            ValidationException: Bad query parameters (400).
            ConfigurationError: The resource has forced filters and ``connection`` is None.
            ServiceUnavailableException: The store did not answer within ``timeout``, or is
                unreachable, or has no free connection (503, with ``Retry-After``).
        """
        envelope, _headers = await self.list_with_headers(
            connection, params, load=load, session=session, primary=primary
        )
        return envelope

    async def list_with_headers(
        self,
        connection: ASGIConnection[Any, Any, Any, Any] | None,
        params: Sequence[tuple[str, str]] | None = None,
        *,
        load: Sequence[str] | None = None,
        session: Any = None,
        primary: bool | None = None,
    ) -> tuple[msgspec.Struct, dict[str, str]]:
        """``list``, with the response headers of the extensions the resource opts into.

        Returns:
            The envelope and the headers: ``X-Next-Cursor`` and ``Link`` (``keyset``, when a next
            page exists) and ``X-Total-Mode`` (``total_mode="estimated"``).

        Raises:
            ValidationException: Bad query parameters (400).
            ConfigurationError: The resource has forced filters and ``connection`` is None.
            ServiceUnavailableException: The store did not answer in time or at all (503).
        """
        if params is None:
            read = QueryString.read(_raw_query(connection), self.limits)
            query = self.parse(read, connection)
            params = read.pairs
        else:
            query = self.parse(params, connection)
        primary = self.primary if primary is None else primary
        if self.admission is None:
            return await self._list_admitted(connection, query, params, load, session, primary=primary)
        try:
            async with self.admission.admitted():
                return await self._list_admitted(connection, query, params, load, session, primary=primary)
        except UnavailableError as error:  # only admission raises it here: _fetch maps the backends' own
            detail = f"listing {self.name} is not possible now: {error}; try again"
            raise ServiceUnavailableException(detail=detail, headers={"Retry-After": "1"}) from error

    async def _list_admitted(
        self,
        connection: ASGIConnection[Any, Any, Any, Any] | None,
        query: ListQuery,
        params: Sequence[tuple[str, str]],
        load: Sequence[str] | None,
        session: Any,
        *,
        primary: bool,
    ) -> tuple[msgspec.Struct, dict[str, str]]:
        if load is not None:
            try:
                check_load(self.field_map.graph, load)
            except ConfigurationError as error:
                msg = f"resource {self.name!r}: {error}"
                raise ConfigurationError(msg) from error
            check_policed_load(self, load)  # row policies (issue 15): the start-up check, per call
        # The timeout starts now: time spent waiting for admission is bounded by its own queue_timeout.
        context = ListContext(
            request=connection,
            session=session,
            load=tuple(self.load if load is None else load),
            deadline=None if self.timeout is None else time.monotonic() + self.timeout,
            keyset=self.keyset,
            total_mode=self.total_mode,
            exact_total_below=self.exact_total_below,
            primary=primary,
        )
        page = await self._fetch(query, context)
        window = query.window
        if query.after is not None and window.offset + len(page.items) > page.total:
            if page.total_mode == "estimated":  # the planner may be short: the count decides
                page = await self._fetch(query, replace(context, total_mode="exact"))
            if window.offset + len(page.items) > page.total:
                _refuse_cursor(page.total)
        await self._enrich(page, EnrichContext(connection, self, context, query))
        headers: dict[str, str] = {}
        if self.total_mode == "estimated":
            headers["X-Total-Mode"] = page.total_mode
        more = page.total_mode == "estimated" or window.offset + len(page.items) < page.total
        if self.keyset and page.last_key is not None and len(page.items) == window.count and more:
            token = CursorToken(
                page=window.page + 1,
                count=window.count,
                fingerprint=fingerprint(query),
                values=tuple(value_text(value) for value in page.last_key),
            ).encode()
            headers["X-Next-Cursor"] = token
            if connection is not None:
                headers["Link"] = f'<{_next_url(connection, params, token)}>; rel="next"'
        envelope = self.envelope(
            data=page.items,
            pagination=pagination(window.page, window.count, page.total),
            message=self.message,
            status="success",
        )
        return envelope, headers

    async def _fetch(self, query: ListQuery, context: ListContext) -> Page:
        # The stores stop their own statements at ``timeout`` (PostgreSQL, MongoDB, the SQLite
        # guard); cancelling the call a little later is the backstop for everything else.
        backstop = None if self.timeout is None else self.timeout + _BACKSTOP_GRACE
        too_slow = f"listing {self.name} took longer than {self.timeout or 0:g} s; narrow the filters or try again"
        try:
            return await asyncio.wait_for(self.backend.fetch(query, context), backstop)
        except asyncio.TimeoutError:
            raise ServiceUnavailableException(detail=too_slow, headers={"Retry-After": "1"}) from None
        except UnavailableError as error:
            detail = too_slow if error.reason == "timeout" else f"listing {self.name} failed: {error}; try again"
            raise ServiceUnavailableException(detail=detail, headers={"Retry-After": "1"}) from error
        except UnsupportedQueryError as error:
            # The start-up check keeps parsed queries from getting here; if one ever does, the
            # client learns which parameter the store cannot answer, not a 500.
            message = f"cannot be answered by this resource's store ({error})"
            raise _bad_request(InvalidQueryError([ParameterError(error.key, message)])) from error

    async def _enrich(self, page: Page, context: EnrichContext) -> None:
        if self.enrich is None or not page.items:
            return
        before = [id(item) for item in page.items]
        result = self.enrich(page.items, context)
        if inspect.isawaitable(result):
            await result
        if [id(item) for item in page.items] != before:
            msg = f"resource {self.name!r}: enrich may add fields to items, not add, remove or replace items"
            raise ConfigurationError(msg)


def check_load(graph: ModelGraph, load: Sequence[str]) -> None:
    """Check that each ``load`` name is a relation path of ``graph``'s listed model (spec §4.5).

    Raises:
        ConfigurationError: A step is no relation; the message names it and the closest relations.
    """
    for path in load:
        entity = graph.root_entity
        for step in path.split(LOOKUP_SEP):
            relation = entity.relations.get(step)
            if relation is None:
                hint = closest(step, entity.relations)
                known = (
                    f"did you mean {' or '.join(map(repr, hint))}?" if hint else f"it has {sorted(entity.relations)}"
                )
                msg = f"load {path!r}: {entity.name} has no relation {step!r}; {known}"
                raise ConfigurationError(msg)
            entity = graph.entities[relation.target]


def _refuse_cursor(total: int) -> None:
    """The 400 of a cursor whose page number does not fit the list's count: forged, or the list shrank.

    Raises:
        ValidationException: Always, on ``cursor``.
    """
    message = f"a cursor of this list: its page lies past the {total} items the list has now; start from page=1"
    raise _bad_request(InvalidQueryError([ParameterError(CURSOR_PARAMETER, message)]))


def _bad_request(error: InvalidQueryError) -> ValidationException:
    """Litestar's 400 for ``error``: one ``extra`` entry ``{key, message, source}`` per problem."""
    extra = [{"key": item.key, "message": item.message, "source": "query"} for item in error.errors]
    return ValidationException(detail=str(error), extra=extra)


def _next_url(connection: ASGIConnection[Any, Any, Any, Any], params: Sequence[tuple[str, str]], token: str) -> str:
    """The request's URL with ``page`` and ``cursor`` replaced by ``cursor=<token>``."""
    kept = [(key, value) for key, value in params if key not in {"page", CURSOR_PARAMETER}]
    query = urlencode([*kept, (CURSOR_PARAMETER, token)])
    # The path as the client sent it (trailing slash included, spec §4.1), not Litestar's normalised
    # one; some servers leave the query string in raw_path.
    raw_path = (connection.scope.get("raw_path") or connection.scope["path"].encode()).split(b"?", 1)[0]
    return str(connection.url.with_replacements(path=raw_path.decode("latin-1"), query=query))


def query_items(connection: ASGIConnection[Any, Any, Any, Any]) -> list[tuple[str, str]]:
    """The request's query parameters as ``(name, value)`` pairs in request order, blanks kept (all of them)."""
    return parse_qsl(_raw_query(connection), keep_blank_values=True, errors="replace")


def _raw_query(connection: ASGIConnection[Any, Any, Any, Any] | None) -> str:
    raw: bytes = b"" if connection is None else connection.scope.get("query_string", b"")
    return raw.decode("utf-8", "replace")


_DBREF_KEYS = frozenset({"$id", "$ref", "$db"})


def _check_document_filters(field_map: FieldMap) -> None:
    for name, exposed in field_map.filterable.items():
        if exposed.hops:
            msg = (
                f"filter path {name!r} crosses a relation; document-store resources filter the model's own "
                "fields and references only (spec §4.4.6, §4.4.9)"
            )
            raise ConfigurationError(msg)


def _check_raw_keys(keys: Sequence[str], *, allowed: bool) -> None:
    """Raw keys are dotted field paths; ``$`` only as a DBRef's ``$id``/``$ref``/``$db`` (DESIGN.md)."""
    if keys and not allowed:
        msg = "raw_filters are for document-store backends only (spec §4.4.9)"
        raise ConfigurationError(msg)
    for key in keys:
        segments = key.split(".")
        if not is_raw_key(key) or not all(segments):
            msg = f"raw filter {key!r} must be a dotted field path containing '.' or '$', like 'meta.color'"
            raise ConfigurationError(msg)
        if segments[0].startswith("$") or any(s.startswith("$") and s not in _DBREF_KEYS for s in segments):
            msg = (
                f"raw filter {key!r} names a store operator; a query string must never reach operators such as "
                "$where, $expr or $function (DESIGN.md, 'Document store'). Only $id, $ref and $db of a reference "
                "may follow a field name."
            )
            raise ConfigurationError(msg)


def _type_name(name: str) -> str:
    return "".join(part.title() for part in name.replace("-", "_").split("_"))
