"""``ListingPlugin``: mounts each resource's list route, prepares every resource's backend at start-up."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from litestar import Litestar
from litestar.openapi.spec import Operation
from litestar.plugins import InitPlugin, ReceiveRoutePlugin
from litestar.routes import HTTPRoute

from litestar_listing.backends.relational.databases import SQLITE
from litestar_listing.core.errors import ConfigurationError
from litestar_listing.plugin.admission import Admission
from litestar_listing.plugin.binding import STATE_KEY, Binding, ListingState, unregistered
from litestar_listing.plugin.budget import client_of
from litestar_listing.plugin.exceptions import exception_handlers
from litestar_listing.plugin.handlers import facet_handler, head_as_get, head_handler, list_handler
from litestar_listing.plugin.indexes import indexed_search, log_missing, trigram_tables
from litestar_listing.plugin.indexes import logger as index_logger
from litestar_listing.plugin.openapi import SharedSchemas, with_shared_schemas
from litestar_listing.plugin.policies import RowPolicies, RowPolicy
from litestar_listing.plugin.prepared import prepare
from litestar_listing.plugin.problems import ErrorShapes
from litestar_listing.plugin.reach import check_paths
from litestar_listing.plugin.route_options import RouteOptions, check_routes, resolve_routes
from litestar_listing.plugin.routes import ListingProvide, ListingRouteHandler, is_listing_placeholder, served_resources

if TYPE_CHECKING:
    from litestar.config.app import AppConfig
    from litestar.connection import ASGIConnection
    from litestar.handlers import HTTPRouteHandler
    from litestar.routes import BaseRoute

    from litestar_listing.backends.relational.indexes import Catalog
    from litestar_listing.plugin.budget import CostBudget
    from litestar_listing.plugin.resource import Resource

__all__ = ("ListingPlugin", "listing_resources")


class ListingPlugin(InitPlugin, ReceiveRoutePlugin):
    """Serve ``GET {path_prefix}/<resource>/`` for every resource (docs: resources, "ListingPlugin").

    Several plugins may serve one application, e.g. one per API version (``path_prefix="/api/v2"``),
    even with the same resources: operation ids stay unique (see ``RouteOptions.operation_id``) and
    the OpenAPI components they share are written once.

    Every resource the application lists, mounted here or served by its own handlers
    (``listing_route``, ``provide_page``, ``provide_query``, ``list_resource``), must be given to
    the plugin: its backend is prepared (on SQLite, the functions search and the case-insensitive
    operators need) and its declaration, admission and row policies checked when the application
    is built. The plugin is a declaration too: given to several applications, each gets row
    policies, admission and OpenAPI state of its own (``plugin.binding``).

    Args:
        resources: The listed collections; resource names must be unique.
        path_prefix: The path before every resource name (default ``/api/v1``).
        max_concurrent_lists: Admission control: at most this many list actions of these resources
            in their stores at once, e.g. the database pool's size; the others wait in order, and a
            resource's ``timeout`` starts when a list is admitted. None (the default): no limit.
        queue_timeout: Seconds a list may wait to be admitted; past it, a 503 with ``Retry-After``.
        max_expensive_lists: With ``max_concurrent_lists``: how many of its places lists costing
            ``expensive_cost`` or more may hold; the others are left to cheaper lists, which never
            wait for expensive ones (docs: admission, "Lanes"). Default: a quarter, at least 1.
        expensive_cost: The cost (docs: admission, "The cost of a list") from which a list is expensive.
        client_share: Most expensive lists one client may have admitted or waiting at once; its others
            wait for them.
        budget: Cost units each client may spend per window, in a store of the application
            (``CostBudget``); past them a 429 with ``Retry-After``. None (the default): no budget.
        client: Who a request's client is, for ``client_share`` and ``budget``: default ``client_of``,
            the signed-in user or else the client's address (docs: admission, "Who a client is").
        policies: Row policies, at most one per model (``RowPolicy``): they restrict that model's
            rows wherever any resource reaches them (docs: scoping, "Row policies: scoping that
            follows every path").
        routes: ``{resource name: RouteOptions}``: a mounted resource's path, operation id, guards,
            ``opt``, security, tags and ``include_in_schema``; resources not named get the defaults.
        unmounted: Resources served only by the application's own handlers: prepared and checked
            like ``resources``, sharing their admission and row policies, but no route is mounted for them.
        check_indexes: When the application starts, read each database's indexes and log a warning
            for each index the resources need that none serves (docs: indexes, "The start-up check").

    Raises:
        ConfigurationError: ``max_concurrent_lists`` below 1, ``queue_timeout`` or ``expensive_cost``
            not positive, ``max_expensive_lists`` not between 1 and ``max_concurrent_lists``;
            ``routes`` naming no resource or two resources at one path; when the application is built,
            a resource whose declaration does not match its models (fail at start-up, not per
            request), two routes declaring one ``operation_id``, one ``Resource`` served by two plugins
            of one application of which one has row policies, ``max_concurrent_lists`` or a budget, or a handler
            listing a resource that no ``ListingPlugin`` of its application was given (the message says how).
    """

    __slots__ = (
        "budget",
        "check_indexes",
        "client",
        "client_share",
        "expensive_cost",
        "max_concurrent_lists",
        "max_expensive_lists",
        "mounted",
        "path_prefix",
        "policies",
        "queue_timeout",
        "resources",
        "routes",
    )

    def __init__(
        self,
        resources: Sequence[Resource],
        *,
        path_prefix: str = "/api/v1",
        max_concurrent_lists: int | None = None,
        queue_timeout: float = 30.0,
        max_expensive_lists: int | None = None,
        expensive_cost: float = 15.0,
        client_share: int = 1,
        budget: CostBudget | None = None,
        client: Callable[[ASGIConnection[Any, Any, Any, Any]], str] = client_of,
        policies: Sequence[RowPolicy] = (),
        routes: Mapping[str, RouteOptions] | None = None,
        unmounted: Sequence[Resource] = (),
        check_indexes: bool = False,
    ) -> None:
        names = [resource.name for resource in (*resources, *unmounted)]
        duplicated = sorted({name for name in names if names.count(name) > 1})
        if duplicated:
            msg = f"resource names must be unique; repeated: {duplicated}"
            raise ConfigurationError(msg)
        self.resources = (*resources, *unmounted)
        """Every resource of the plugin, mounted first."""
        self.mounted = tuple(resources)
        """The resources whose list route the plugin mounts."""
        self.path_prefix = path_prefix
        self.routes: Mapping[str, RouteOptions] = dict(routes or {})
        check_routes(self.mounted, path_prefix, self.routes)
        self.max_concurrent_lists = max_concurrent_lists
        self.queue_timeout = queue_timeout
        self.max_expensive_lists = max_expensive_lists
        self.expensive_cost = expensive_cost
        self.client_share = client_share
        self.budget = budget
        self.client = client
        if expensive_cost <= 0:
            msg = f"expensive_cost must be > 0, not {expensive_cost}"
            raise ConfigurationError(msg)
        self._admission()  # checks the other options, as each application's will
        self.check_indexes = check_indexes
        self.policies = tuple(policies)
        """The declared row policies; each application gets its own ``RowPolicies`` of them."""
        RowPolicies(self.policies)  # one per model

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        """Bind each resource to the application, register its GET and HEAD handlers, prepare its backend.

        What the application derives from the plugin's resources is its own (``plugin.binding``): a
        ``Binding`` per resource with the application's row policies (checked against every
        resource's paths) and admission, kept in ``app_config.state[STATE_KEY]`` (a
        ``ListingState``), which the lists of any handler find through their request. A backend may
        carry ``type_encoders`` (e.g. Beanie's ``{ObjectId: str}``) for values its items hold; the
        application's own encoders win. The OpenAPI configuration is replaced by a copy whose
        ``components/schemas`` also hold the schemas the list operations share (with an earlier
        ``ListingPlugin``'s). Operation ids are made unique among the application's listing plugins
        (``route_options.resolve_routes``), and error responses documented in the format the
        application writes them (``ErrorShapes.detect``: Litestar's, or problem details with
        Litestar's ``ProblemDetailsPlugin``). The library's errors get exception handlers
        (``plugin.exceptions``): a bad query is answered as the route answers a ``ValidationException``
        (400), an unavailable store as a ``ServiceUnavailableException`` (503); handlers the
        application registers for the library's errors themselves win.

        Raises:
            ConfigurationError: See the class.
        """
        app_config.exception_handlers = {**exception_handlers(), **app_config.exception_handlers}
        if head_as_get not in app_config.middleware:
            app_config.middleware.insert(0, head_as_get)  # first: HEAD is its GET, for every middleware
        plugins = [plugin for plugin in app_config.plugins if isinstance(plugin, ListingPlugin)]
        served = resolve_routes(plugins, self)
        state = ListingState.of(app_config.state)
        if state is None:
            state = ListingState(SharedSchemas(), ErrorShapes.detect(app_config.plugins))
            app_config.state[STATE_KEY] = state
        for resource in self.resources:
            prepare(resource)
            resource.backend.prepare()
            encoders = resource.backend.type_encoders
            if encoders:
                app_config.type_encoders = {**encoders, **(app_config.type_encoders or {})}
        policies = RowPolicies(self.policies)
        check_paths(self.resources, policies)  # no relation path reaches a scoped model without a policy
        admission = self._admission()
        bindings = {
            resource: state.bind(
                Binding(resource, policies, admission, state, self.budget, self.client, self.expensive_cost)
            )
            for resource in self.resources
        }
        for resource in self.mounted:
            route = served[resource.name]
            app_config.route_handlers.append(list_handler(bindings[resource], route))
            app_config.route_handlers.append(head_handler(route))
            if resource.facet_fields:
                facets = route.facets()
                app_config.route_handlers.append(facet_handler(bindings[resource], facets))
                app_config.route_handlers.append(head_handler(facets))
        state.routed.update(self.mounted)
        app_config.on_startup.append(self.check_started)
        app_config.on_startup.append(self.read_indexes)
        if self.check_indexes:
            app_config.on_startup.append(self.log_missing_indexes)
        if app_config.openapi_config is not None:
            app_config.openapi_config = with_shared_schemas(app_config.openapi_config, state.shared_schemas)
        return app_config

    def _admission(self) -> Admission | None:
        """A new ``Admission`` of the plugin's options (one per application), None without ``max_concurrent_lists``.

        Raises:
            ConfigurationError: An option is out of its range (``Admission``).
        """
        if self.max_concurrent_lists is None:
            return None
        return Admission(
            self.max_concurrent_lists,
            self.queue_timeout,
            expensive_limit=self.max_expensive_lists,
            expensive_cost=self.expensive_cost,
            client_share=self.client_share,
        )

    async def read_indexes(self, app: Litestar) -> None:
        """Find, when the application starts, the indexes its resources' searches and text matches read.

        A start-up hook of the application (after ``check_started``): each resource's binding in this
        application keeps what ``plugin.indexes.trigram_tables`` (SQLite's trigram tables; docs:
        indexes, "Trigram indexes on SQLite") and ``plugin.indexes.indexed_search`` (docs: indexes,
        "Search from indexes") find. A database that cannot be read is a warning on the
        ``litestar_listing.indexes`` logger, and its lists read every row, with the same answers:
        this never stops the application.
        """
        state = ListingState.of(app.state)
        if state is None:
            return
        for resource in self.resources:
            binding = state.bindings.get(resource)
            catalog_of = getattr(resource.backend, "index_catalog", None)
            catalog: Catalog | None = None if binding is None or catalog_of is None else catalog_of(pooled=False)
            if binding is None or catalog is None:
                continue
            try:
                binding.trigram_tables = await trigram_tables(resource, catalog)
                binding.indexed_search = await indexed_search(resource, catalog)
            except Exception as error:  # noqa: BLE001 - the lists still answer, reading every row
                index_logger.warning("the indexes of %r could not be read: %s", resource.name, error)
            finally:
                # Read on a connection of its own on SQLite (``pooled=False``); elsewhere on the
                # application's pool, which it keeps.
                if catalog.database is SQLITE and catalog.release is not None:
                    await catalog.release()

    async def log_missing_indexes(self) -> None:
        """The start-up check of ``check_indexes``: a warning per missing index (``plugin.indexes.log_missing``)."""
        await log_missing(self.resources)

    def check_started(self, app: Litestar) -> None:
        """Check, when the application starts, that it gives every resource's backend what its lists need.

        A start-up hook of the application, added by ``on_app_init``: it runs after the application's
        lifespan context managers and the start-up hooks before it (advanced-alchemy's plugin has put
        its session maker in the state, the application's own hook has started a Piccolo pool, or
        called ``init_beanie``), and asks each backend (``ListingBackend.check_started``), so that
        what the application forgot stops its start instead of failing every list (docs: in your
        app, "Start-up checks").

        Raises:
            ConfigurationError: Naming the resource, what its backend lacks and how to give it.
        """
        state = ListingState.of(app.state)
        routed = set() if state is None else state.routed
        for resource in self.resources:
            _check_started(resource, app, routed=resource in routed)

    def receive_route(self, route: BaseRoute) -> None:
        """Check and document the application's own handlers that list a resource.

        A handler using ``provide_page`` or ``provide_query`` with the default ``operation_class``
        gets its resource's operation in this application (``Binding.operation_class``; of one
        resource only: with several, the handler chooses), and so does one declaring
        ``listing_operation(resource)``.

        Raises:
            ConfigurationError: The handler lists a resource that the application's ``ListingPlugin`` plugins
                were not given.
        """
        if not isinstance(route, HTTPRoute):
            return
        for handler in route.route_handlers:
            served = served_resources(handler)
            if served:
                _document(handler, served, route.path)


def _document(handler: HTTPRouteHandler, served: Sequence[Resource], path: str) -> None:
    """Check that ``handler``'s application serves ``served``, and give it its resource's operation.

    The resources it lists with no session of its own (``listing_route``, ``provide_page``) are
    noted for the start-up check (``ListingState.routed``).

    Raises:
        ConfigurationError: A resource of ``served`` has no binding in the handler's application.
    """
    app = handler.ownership_layers[0]
    state = ListingState.of(app.state) if isinstance(app, Litestar) else None
    bindings: list[Binding] = []
    for resource in served:
        binding = None if state is None else state.bindings.get(resource)
        if binding is None:
            raise unregistered(resource, f"the route {handler} ({path})")
        bindings.append(binding)
    assert state is not None  # noqa: S101 - served resources have bindings
    state.routed.update(resource for resource in served if resource in _listed_by(handler))
    operation = handler.operation_class
    placeholder = is_listing_placeholder(operation)
    if placeholder is not None:
        handler.operation_class = next(each for each in bindings if each.resource is placeholder).operation_class()
    elif len(bindings) == 1 and operation is Operation:
        handler.operation_class = bindings[0].operation_class()


def _listed_by(handler: HTTPRouteHandler) -> set[Resource]:
    """The resources ``handler`` or its dependencies list by themselves: ``listing_route``, ``provide_page``."""
    listed = {handler.resource} if isinstance(handler, ListingRouteHandler) else set()
    listed.update(
        provider.resource
        for provider in handler.resolve_dependencies().values()
        if isinstance(provider, ListingProvide) and provider.lists
    )
    return listed


def _check_started(resource: Resource, app: Litestar, *, routed: bool) -> None:
    """``resource``'s backend's start-up check, its error naming the resource.

    Raises:
        ConfigurationError: The backend's, prefixed with the resource's name.
    """
    try:
        resource.backend.check_started(app, routed=routed)
    except ConfigurationError as error:
        msg = f"resource {resource.name!r}: {error}"
        raise ConfigurationError(msg) from error


def listing_resources(app: Litestar) -> list[Resource]:
    """Every resource of ``app``'s ``ListingPlugin``s, mounted or not, once each, in plugin order (docs: indexes)."""
    found: dict[int, Resource] = {}
    for plugin in app.plugins:
        if isinstance(plugin, ListingPlugin):
            for resource in plugin.resources:
                found.setdefault(id(resource), resource)
    return list(found.values())
