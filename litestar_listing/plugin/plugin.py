"""``ListingPlugin``: mounts each resource's list route, prepares every resource's backend at start-up."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from litestar.openapi.spec import Operation
from litestar.plugins import InitPlugin, ReceiveRoutePlugin
from litestar.routes import HTTPRoute

from litestar_listing.core.errors import ConfigurationError
from litestar_listing.plugin.admission import Admission
from litestar_listing.plugin.exceptions import exception_handlers
from litestar_listing.plugin.handlers import head_handler, list_handler
from litestar_listing.plugin.openapi import SharedSchemas, list_operation_class, with_shared_schemas
from litestar_listing.plugin.policies import RowPolicies, RowPolicy, check_paths
from litestar_listing.plugin.problems import ErrorShapes
from litestar_listing.plugin.resource import bind
from litestar_listing.plugin.route_options import RouteOptions, check_routes, resolve_routes
from litestar_listing.plugin.routes import listing_operation, served_resources, unregistered

if TYPE_CHECKING:
    from litestar.config.app import AppConfig
    from litestar.routes import BaseRoute

    from litestar_listing.plugin.resource import Resource

__all__ = ("ListingPlugin",)


class ListingPlugin(InitPlugin, ReceiveRoutePlugin):
    """Serve ``GET {path_prefix}/<resource>/`` for every resource (spec §4.1, §9.1).

    Several plugins may serve one application, e.g. one per API version (``path_prefix="/api/v2"``),
    even with the same resources: operation ids stay unique (see ``RouteOptions.operation_id``) and
    the OpenAPI components they share are written once.

    Every resource the application lists, mounted here or served by its own handlers
    (``listing_route``, ``provide_page``, ``provide_query``, ``resource.list``), must be given to
    the plugin: its backend is prepared (on SQLite, the functions search and the case-insensitive
    operators need) and its declaration, admission and row policies checked when the application
    is built.

    Args:
        resources: The listed collections; resource names must be unique.
        path_prefix: The path before every resource name (spec §9.1: ``/api/v1``).
        max_concurrent_lists: Admission control: at most this many list actions of these resources
            in their stores at once, e.g. the database pool's size; the others wait in order, and a
            resource's ``timeout`` starts when a list is admitted. None (the default): no limit.
        queue_timeout: Seconds a list may wait to be admitted; past it, a 503 with ``Retry-After``.
        policies: Row policies, at most one per model (``RowPolicy``): they restrict that model's
            rows wherever any resource reaches them (DESIGN.md, "Row policies").
        routes: ``{resource name: RouteOptions}``: a mounted resource's path, operation id, guards,
            ``opt``, security, tags and ``include_in_schema``; resources not named get the defaults.
        unmounted: Resources served only by the application's own handlers: prepared and checked
            like ``resources``, sharing their admission and row policies, but no route is mounted for them.

    Raises:
        ConfigurationError: ``max_concurrent_lists`` below 1 or ``queue_timeout`` not positive;
            ``routes`` naming no resource or two resources at one path; when the application is built,
            a resource whose declaration does not match its models (fail at start-up, not per
            request), two routes declaring one ``operation_id``, one ``Resource`` served by two plugins
            of which one has row policies or ``max_concurrent_lists``, or a handler listing a resource
            that no ``ListingPlugin`` was given (the message says how).
    """

    __slots__ = (
        "_errors",
        "_operations",
        "admission",
        "mounted",
        "path_prefix",
        "policies",
        "resources",
        "routes",
        "shared_schemas",
    )

    def __init__(
        self,
        resources: Sequence[Resource],
        *,
        path_prefix: str = "/api/v1",
        max_concurrent_lists: int | None = None,
        queue_timeout: float = 30.0,
        policies: Sequence[RowPolicy] = (),
        routes: Mapping[str, RouteOptions] | None = None,
        unmounted: Sequence[Resource] = (),
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
        self._operations: dict[str, type[Operation]] = {}
        self.path_prefix = path_prefix
        self.routes: Mapping[str, RouteOptions] = dict(routes or {})
        check_routes(self.mounted, path_prefix, self.routes)
        self._errors: ErrorShapes | None = None
        self.shared_schemas = SharedSchemas()
        self.admission = None if max_concurrent_lists is None else Admission(max_concurrent_lists, queue_timeout)
        # Row policies (issue 15): carried by every resource's queries, checked at start-up.
        self.policies = RowPolicies(policies)
        for resource in self.resources:
            bind(resource, self)

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        """Register the GET and HEAD handlers of each resource, prepare its backend, add its type encoders.

        A backend may carry ``type_encoders`` (e.g. Beanie's ``{ObjectId: str}``) for values its
        items hold; the application's own encoders win. The OpenAPI configuration is replaced by a
        copy whose ``components/schemas`` also hold the schemas the list operations share (with an
        earlier ``ListingPlugin``'s). Operation ids are made unique among the application's listing
        plugins (``route_options.resolve_routes``), and error responses documented in the format the
        application writes them (``ErrorShapes.detect``: Litestar's, or problem details with
        Litestar's ``ProblemDetailsPlugin``). The library's errors get exception handlers
        (``plugin.exceptions``): a bad query is answered as the route answers a ``ValidationException``
        (400), an unavailable store as a ``ServiceUnavailableException`` (503); handlers the
        application registers for the library's errors themselves win.

        Raises:
            ConfigurationError: See the class.
        """
        app_config.exception_handlers = {**exception_handlers(), **app_config.exception_handlers}
        plugins = [plugin for plugin in app_config.plugins if isinstance(plugin, ListingPlugin)]
        _check_shared_resources(plugins)
        served = resolve_routes(plugins, self)
        self._errors = errors = ErrorShapes.detect(app_config.plugins)
        self._operations.clear()
        # Fresh per application, unless an earlier plugin of this one already shares some.
        self.shared_schemas = SharedSchemas.of_application(app_config.openapi_config, SharedSchemas())
        for resource in self.mounted:
            route = served[resource.name]
            app_config.route_handlers.append(
                list_handler(resource, self.path_prefix, self.shared_schemas, route=route, errors=errors)
            )
            app_config.route_handlers.append(head_handler(resource, self.path_prefix, route=route))
        for resource in self.resources:
            resource.build()
            resource.backend.prepare()
            encoders = getattr(resource.backend, "type_encoders", None)
            if encoders:
                app_config.type_encoders = {**encoders, **(app_config.type_encoders or {})}
        check_paths(self.resources, self.policies)  # row policies (issue 15): no unguarded path
        if app_config.openapi_config is not None:
            app_config.openapi_config = with_shared_schemas(app_config.openapi_config, self.shared_schemas)
        return app_config

    def receive_route(self, route: BaseRoute) -> None:
        """Check and document the application's own handlers that list a resource (issue 16).

        A handler using ``provide_page`` or ``provide_query`` with the default ``operation_class``
        gets ``listing_operation`` of its resource (of one resource only: with several, the handler
        chooses).

        Raises:
            ConfigurationError: The handler lists a resource that no ``ListingPlugin`` was given.
        """
        if not isinstance(route, HTTPRoute):
            return
        for handler in route.route_handlers:
            served = served_resources(handler)
            for resource in served:
                if resource.plugin is None:
                    raise unregistered(resource, f"the route {handler} ({route.path})")
            if len(served) == 1 and handler.operation_class is Operation:
                handler.operation_class = listing_operation(served[0])

    def operation_class(self, resource: Resource) -> type[Operation]:
        """The ``Operation`` class documenting ``resource``'s list action, its schemas shared through this plugin.

        Built once per resource, when the OpenAPI document first asks (``routes.listing_operation``).
        """
        operation = self._operations.get(resource.name)
        if operation is None:
            operation = self._operations[resource.name] = list_operation_class(
                resource, self.shared_schemas, errors=self._errors
            )
        return operation


def _check_shared_resources(plugins: Sequence[ListingPlugin]) -> None:
    """Refuse one ``Resource`` object served by two plugins of an application when either has row policies or admission.

    A resource is bound to one plugin (``resource.bind``), whose row policies and admission its lists
    use; a resource several plugins (API versions) serve without either is fine.

    Raises:
        ConfigurationError: Naming the resource and the fix (one ``Resource`` per plugin).
    """
    seen: dict[int, ListingPlugin] = {}
    for plugin in plugins:
        for resource in plugin.resources:
            other = seen.setdefault(id(resource), plugin)
            if other is plugin:
                continue
            if any(each.admission is not None or each.policies for each in (other, plugin)):
                msg = (
                    f"resource {resource.name!r} is served by two ListingPlugins, one with row policies or "
                    "max_concurrent_lists, which apply to the resource's lists: give each plugin its own Resource "
                    "(dataclasses.replace(resource) copies one)"
                )
                raise ConfigurationError(msg)
