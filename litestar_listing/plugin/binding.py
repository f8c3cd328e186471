"""What an application derives from the resources its ``ListingPlugin`` plugins serve: a ``Binding`` each.

A ``Resource`` is a declaration, shared freely between applications (two versions of an API, a
test suite's applications, workers that build several). Its row policies, admission and OpenAPI
operation belong to the application that serves it: ``ListingPlugin.on_app_init`` makes them, and
keeps them in the application's state under ``STATE_KEY`` (``ListingState``), as advanced-alchemy
keeps its engine there. A list finds them through its request's application (docs: design,
"Binding").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from litestar.openapi.spec import Operation

from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.parsing import QueryString, forced_filter
from litestar_listing.plugin.budget import client_of
from litestar_listing.plugin.exceptions import logged
from litestar_listing.plugin.openapi import SharedSchemas, list_operation_class
from litestar_listing.plugin.prepared import prepare

if TYPE_CHECKING:
    from litestar import Litestar
    from litestar.connection import ASGIConnection
    from litestar.datastructures import State

    from litestar_listing.backends.base import IndexedSearch, TrigramTable
    from litestar_listing.core.cost import Cost
    from litestar_listing.core.facets import FacetQuery
    from litestar_listing.core.query import Filter, ListQuery
    from litestar_listing.plugin.admission import Admission
    from litestar_listing.plugin.budget import CostBudget
    from litestar_listing.plugin.policies import RowPolicies
    from litestar_listing.plugin.problems import ErrorShapes
    from litestar_listing.plugin.resource import Resource

__all__ = ("STATE_KEY", "Binding", "ListingState", "binding_of", "forced_filters", "unregistered")

STATE_KEY = "litestar_listing"
"""The key of an application's ``ListingState`` in ``app.state``."""


class Binding:
    """One resource as one application serves it.

    Args:
        resource: The declaration.
        policies: The application's row policies (those of the ``ListingPlugin`` given the resource).
        admission: Where its lists wait for their turn (the plugin's ``max_concurrent_lists``), or None.
        state: The application's ``ListingState``, for the OpenAPI operation's shared schemas.
        budget: The cost each client may spend per window (the plugin's ``budget``), or None.
        client: Who a request's client is, for admission's shares and the budget (the plugin's ``client``).
        expensive_cost: The cost from which a list is expensive (the plugin's ``expensive_cost``), its
            lane when there is no ``admission`` to place it.

    Attributes:
        trigram_tables: The SQLite trigram tables its lists' text matches read first, found in the
            application's database when it starts (``plugin.indexes.trigram_tables``; docs: indexes,
            "Trigram indexes on SQLite"); empty until then, and on other databases.
        indexed_search: The searchable paths an index of the listed table serves, and the table's
            size, found when the application starts (``plugin.indexes.indexed_search``; docs:
            indexes, "Search from indexes"); None until then, or where no path is served.
    """

    __slots__ = (
        "_operation",
        "admission",
        "budget",
        "client",
        "expensive_cost",
        "indexed_search",
        "policies",
        "resource",
        "state",
        "trigram_tables",
    )

    def __init__(
        self,
        resource: Resource,
        policies: RowPolicies,
        admission: Admission | None,
        state: ListingState,
        budget: CostBudget | None = None,
        client: Callable[[ASGIConnection[Any, Any, Any, Any]], str] = client_of,
        expensive_cost: float = 15.0,
    ) -> None:
        self.resource = resource
        self.policies = policies
        self.admission = admission
        self.state = state
        self.budget = budget
        self.client = client
        self.expensive_cost = expensive_cost
        # Read when the application starts (``ListingPlugin.read_indexes``).
        self.trigram_tables: frozenset[TrigramTable] = frozenset()
        self.indexed_search: IndexedSearch | None = None
        self._operation: type[Operation] | None = None

    @property
    def restricted(self) -> bool:
        """Whether the application gives its lists row policies, admission or a budget: it is not one of many alike."""
        return bool(self.policies) or self.admission is not None or self.budget is not None

    def parse(
        self, params: Sequence[tuple[str, str]] | QueryString, connection: ASGIConnection[Any, Any, Any, Any] | None
    ) -> ListQuery:
        """Parse query parameters into a ``ListQuery`` with the forced filters and row policies of ``connection``.

        ``params`` are pairs, or the ``QueryString`` read from a request within the resource's ``limits``.

        Raises:
            InvalidQueryError: Every bad parameter at once, or a list over the resource's ``max_cost``
                (the plugin answers 400).
            ConfigurationError: The resource has forced filters, or a model it reaches a row policy,
                and ``connection`` is None: the list would not be restricted.
            NotAuthorizedException, PermissionDeniedException: A scope or the listed model's policy
                refuses the request (401, 403).
        """
        return self.parse_priced(params, connection)[0]

    def parse_priced(
        self, params: Sequence[tuple[str, str]] | QueryString, connection: ASGIConnection[Any, Any, Any, Any] | None
    ) -> tuple[ListQuery, Cost]:
        """``parse``, and the list's cost (``Prepared.price``).

        Raises:
            As ``parse``.
        """
        resource = self.resource
        prepared = prepare(resource)
        query, cost = prepared.parse_priced(params, forced_filters(resource, connection))
        if self.policies:
            query = self.policies.apply(query, prepared.field_map.graph, connection)
        return query, cost

    def parse_facets_priced(
        self, params: Sequence[tuple[str, str]] | QueryString, connection: ASGIConnection[Any, Any, Any, Any] | None
    ) -> tuple[FacetQuery, Cost]:
        """A facet request's query and cost (``Prepared.parse_facets_priced``), with ``connection``'s restrictions.

        The forced filters and row policies of ``connection``, as ``parse_priced`` gives a list's (docs: facets).

        Raises:
            As ``parse``.
        """
        resource = self.resource
        prepared = prepare(resource)
        query, cost = prepared.parse_facets_priced(params, forced_filters(resource, connection))
        if self.policies:
            query = replace(query, query=self.policies.apply(query.query, prepared.field_map.graph, connection))
        return query, cost

    def operation_class(self) -> type[Operation]:
        """The ``Operation`` class documenting the list action in this application, built on first use.

        Its schemas are shared through the application's ``ListingState.shared_schemas``, its error
        responses written as the application writes errors.
        """
        if self._operation is None:
            self._operation = list_operation_class(
                self.resource,
                self.state.shared_schemas,
                self.policies,
                errors=self.state.errors,
                budget=self.budget is not None,
            )
        return self._operation


class ListingState:
    """What one application derives from its ``ListingPlugin`` plugins, kept in ``app.state[STATE_KEY]``.

    Attributes:
        bindings: Each resource of the application's plugins (mounted or not) and its ``Binding``.
        shared_schemas: The schemas the application's list operations share (``components/schemas``).
        errors: How the application writes errors (``ErrorShapes.detect``), for OpenAPI.
        routed: The resources a route lists with no session of its own (the mounted route,
            ``listing_route``, ``provide_page``), for the backends' start-up checks.
    """

    __slots__ = ("bindings", "errors", "routed", "shared_schemas")

    def __init__(self, shared_schemas: SharedSchemas, errors: ErrorShapes) -> None:
        self.bindings: dict[Resource, Binding] = {}
        self.shared_schemas = shared_schemas
        self.errors = errors
        self.routed: set[Resource] = set()

    @classmethod
    def of(cls, state: State) -> ListingState | None:
        """The ``ListingState`` kept in an application's ``state``, or None when no ``ListingPlugin`` made one."""
        found = state.get(STATE_KEY)
        return found if isinstance(found, ListingState) else None

    def bind(self, binding: Binding) -> Binding:
        """Add ``binding``; the binding of a resource another plugin of the application already serves stays.

        Returns:
            The resource's binding in this application.

        Raises:
            ConfigurationError: The resource is already served by another plugin of the application, and
                either plugin has row policies, ``max_concurrent_lists`` or a ``budget``: its lists could not
                tell which apply.
        """
        resource = binding.resource
        kept = self.bindings.setdefault(resource, binding)
        if kept is not binding and (kept.restricted or binding.restricted):
            msg = (
                f"resource {resource.name!r} is served by two ListingPlugins of one application, one with row "
                "policies, max_concurrent_lists or a budget, which apply to the resource's lists: give each plugin "
                "its own Resource (dataclasses.replace(resource) copies one)"
            )
            raise ConfigurationError(msg)
        return kept


def unregistered(resource: Resource, used_by: str) -> ConfigurationError:
    """The error of a resource listed from ``used_by`` in an application whose ``ListingPlugin`` lacks it.

    Returns:
        A ``ConfigurationError`` whose message says how to give the resource to the plugin.
    """
    name = resource.name
    msg = (
        f"resource {name!r} is listed by {used_by} but the application's ListingPlugin was not given it, so its "
        "backend was never prepared (on SQLite, search and the case-insensitive operators need the functions it "
        "registers), its declaration never checked, and the application's row policies and admission do not reach "
        f"it. Give it to the application's ListingPlugin: ListingPlugin([...], unmounted=[{name}]) for a resource "
        f"served only by your own handlers, or ListingPlugin([..., {name}]) to also mount its own list route."
    )
    return ConfigurationError(msg)


def binding_of(
    resource: Resource,
    connection: ASGIConnection[Any, Any, Any, Any] | None,
    app: Litestar | None = None,
    *,
    used_by: str,
    log: bool = True,
) -> Binding:
    """``resource``'s ``Binding`` in ``app``, else in the application of ``connection``.

    ``log``: log the error (``exceptions.logged``), as for a list; False for a check made while the
    application is built, whose error stops it.

    Raises:
        ConfigurationError: Neither names an application (list with the request, or pass ``app=``), or
            the application's ``ListingPlugin`` plugins were not given the resource (``unregistered``).
    """
    if app is None and connection is not None:
        app = connection.scope.get("litestar_app")
    if app is None:
        msg = (
            f"resource {resource.name!r} was listed without a request or an application: pass the request, or "
            "app=<the Litestar application whose ListingPlugin serves it>, so that its row policies and "
            "admission apply"
        )
        error = ConfigurationError(msg)
        raise logged(error) if log else error
    state = ListingState.of(app.state)
    binding = None if state is None else state.bindings.get(resource)
    if binding is None:
        error = unregistered(resource, used_by)
        raise logged(error) if log else error
    return binding


def forced_filters(resource: Resource, connection: ASGIConnection[Any, Any, Any, Any] | None) -> list[Filter]:
    """The forced filters of ``connection``: each of ``resource.scopes`` built for this request.

    Returns:
        One equality (or membership) ``Filter`` per path a rule constrains, for
        ``ListQuery.forced_filters`` (docs: query language, "Forced filters").

    Raises:
        ConfigurationError: The resource has scopes but no connection was given: a list without its
            request would be unscoped.
        NotAuthorizedException, PermissionDeniedException: A scope refuses the request (401, 403).
    """
    if connection is None:
        if resource.scopes:
            msg = f"resource {resource.name!r} has scopes (forced filters): list or parse it with the request"
            raise ConfigurationError(msg)
        return []
    field_map = prepare(resource).field_map
    return [
        forced_filter(field_map, name, value)
        for rule in resource.scopes
        for name, value in rule.build(connection).items()
    ]
