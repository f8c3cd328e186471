"""``Resource``: the declaration of one listed collection, and ``EnrichContext``, what its enrichment gets.

Declarations only: nothing here calls a backend, reads a request or checks a model. What the
declaration gives is ``plugin.prepared``; the list action, ``plugin.action`` (docs: design, "The
plugin's layers").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from litestar_listing.core.cost import CostModel
from litestar_listing.core.parsing import Limits
from litestar_listing.core.query import Combine
from litestar_listing.core.schema import ALL_FIELDS

if TYPE_CHECKING:
    from litestar.connection import ASGIConnection

    from litestar_listing.backends.base import ListContext, ListingBackend, TotalMode
    from litestar_listing.core.query import ListQuery
    from litestar_listing.plugin.policies import RowPolicies
    from litestar_listing.plugin.scoping import ScopeRule

__all__ = ("Enrich", "EnrichContext", "Resource")


@dataclass(frozen=True, eq=False)
class Resource:
    """A collection listed at ``{path_prefix}/<name>/`` (docs: resources): a frozen declaration.

    What the declaration alone gives (field map, parser, envelope type, every check) is
    ``plugin.prepared.prepare(resource)``, the same in every application. What an application
    derives from it (its row policies, admission and OpenAPI operation) is the resource's
    ``Binding`` in that application (``plugin.binding``), made by the application's
    ``ListingPlugin``: one resource may serve several applications, each with its own (docs:
    design, "Binding"). The list action is ``list_resource`` (``plugin.action``). Two resources are
    equal only when they are the same object; ``dataclasses.replace`` copies one.

    Attributes:
        name: The path segment and the name in OpenAPI, e.g. ``"flights"``.
        backend: The store, e.g. ``SQLAlchemyBackend(Flight, config=...)``.
        filter_fields: Filterable paths; ``"*"`` is every own non-private column, ``"rel__*"`` every
            column of a relation; relation paths only when listed (docs: query language,
            "Relation paths").
        order_fields: Orderable paths, the same way; computed aliases are always orderable.
        search_fields: Searchable text paths (docs: query language, "Search"); empty means
            ``search`` is a 400.
        default_order: Terms like ``"-time_hour"`` used without ``order_by`` (docs: query language,
            "Ordering"); the primary key is appended as the final tie-breaker.
        indexed_orders: Orderings besides ``default_order`` that clients ask often, each written
            as terms (``[("-dep_delay",)]``): the index advisor recommends an index that each walks
            (docs: indexes, "What the advisor recommends"). They change no answer.
        combine: ``"and"`` (default) or ``"or"``: how client filters combine (docs: query language,
            "Filters and operators").
        scopes: Server-side scoping (docs: scoping), e.g. ``tenant_scope("company_id")``: each
            ``ScopeRule`` gives, per request, forced filters the client cannot override.
        enrich: ``(items, context) -> None`` (sync or async), run once over the page items to add
            derived fields; it may not add or remove items (docs: enrichment).
        enrich_fields: Names and types of the fields ``enrich`` adds, for OpenAPI.
        load: Relations eager-loaded with the items of the list action (docs: eager loading), e.g.
            ``("airline",)``; ``list_resource(..., load=...)`` overrides it per call.
        limits: Request bounds (docs: query language, "Limits").
        timeout: Seconds the list action may spend in the store (page, total and eager loading
            together); past it the statement is cancelled and the client gets a 503. None: no limit.
        ignore_unknown_filters: Drop unknown filter names instead of answering 400. ``None`` (the
            default) follows the store: a 400 for relational resources, ignored for document-store
            resources (docs: query language, "Document-store resources"), which may opt into the
            400 with ``False``.
        raw_filters: Document-store resources only: raw store keys containing ``.`` or ``$``
            (e.g. ``"meta.color"``) that clients may filter on by equality; their values are passed
            as text (docs: query language, "Document-store resources"). Keys naming operators
            (``$where``, ``$expr``...) are refused.
        max_depth: The most relations a path may cross.
        facet_fields: The paths whose values ``GET /<name>/facets/`` counts (docs: facets): fields,
            relation paths (to-many ones too), declared JSON keys and parts of dates
            (``time_hour__month``); empty: no facet endpoint. The backend must have
            ``Capabilities.facets``.
        json_keys: The keys of JSON fields clients may filter and order on (and search, when text
            and named in ``search_fields``), by the JSON field's path, with their types:
            ``{"specs": {"seats": int, "engine_type": str, "dims": {"width": float}, "tags": list[str]}}``
            (docs: query language, "Keys of JSON documents"). A JSON field is never filtered whole.
            The backend must have ``Capabilities.json_keys``.
        public_paths: Relation paths (or relation prefixes, ``"watches"``) that may reach a model
            another resource scopes although that model has no row policy: every row of it can be
            filtered, searched, ordered on or loaded through them (docs: scoping, "The start-up check").
        keyset: Offer keyset continuation (docs: extensions, "Keyset continuation"):
            every response that has a next page carries the opaque token of the next page in
            ``X-Next-Cursor`` (and a ``Link: <...>; rel="next"``), and ``cursor=<token>`` (instead of
            ``page``) continues after the previous page's last item, at the cost of the first page
            whatever the depth. The token is bound to the filters, search, order and page size; the
            envelope is unchanged, ``pagination.page`` counting on from the page the token came
            from. ``cursor`` stays a filter name on resources without it. The backend must have
            ``Capabilities.keyset``.
        total_mode: ``"exact"`` (the default) or ``"estimated"``: where the backend can
            (``"estimated"`` in ``Capabilities.total_modes``, PostgreSQL), a total the planner
            estimates at ``exact_total_below`` rows or more is reported as that estimate, without
            counting; the ``X-Total-Mode`` header says ``estimated`` or ``exact`` (docs: extensions,
            "Estimated totals").
        exact_total_below: With ``total_mode="estimated"``, estimates under this many rows are
            counted exactly.
        primary: Read every list from the primary, never from the backend's read replicas (data that
            must be current to the last commit, e.g. an account's own recent orders);
            ``list_resource(..., primary=...)`` decides per call. Without replicas it changes
            nothing (docs: scaling, "Which node answers").
        cost: The weights that price its lists before they run (docs: admission, "The cost of a
            list"): the price decides the admission lane, what ``max_cost`` compares and what a
            ``CostBudget`` charges.
        max_cost: The ceiling: a list priced above it is a 400 naming the parameters that cost
            most (docs: admission, "The ceiling"). None: no ceiling.
        cost_headers: Answer each list with its cost, lane and wait in ``X-Listing-Cost``,
            ``X-Listing-Lane`` and ``X-Listing-Wait`` (docs: admission, "Observing costs").
        item: The item type shown in OpenAPI; derived from the model when None.
        message: The envelope's ``message`` text (docs: query language, "The envelope and
            pagination"); ``""`` becomes ``"Listed <name>."``.
        description: The endpoint's description in OpenAPI.
    """

    name: str
    backend: ListingBackend
    filter_fields: Sequence[str] = (ALL_FIELDS,)
    order_fields: Sequence[str] = (ALL_FIELDS,)
    search_fields: Sequence[str] = ()
    default_order: Sequence[str] = ()
    indexed_orders: Sequence[Sequence[str]] = ()
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
    facet_fields: Sequence[str] = ()
    json_keys: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    public_paths: Sequence[str] = ()
    keyset: bool = False
    total_mode: TotalMode = "exact"
    exact_total_below: int = 10_000
    primary: bool = False
    cost: CostModel = field(default_factory=CostModel)
    max_cost: float | None = None
    cost_headers: bool = False
    item: Any = None
    message: str = ""
    description: str = ""


@dataclass(frozen=True, slots=True)
class EnrichContext:
    """What an enrichment hook gets besides the page items (docs: enrichment).

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
"""``(items, context) -> None``, sync or async: adds fields to the page's items (docs: enrichment)."""
