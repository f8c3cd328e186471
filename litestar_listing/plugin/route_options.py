"""Route options: where and how ``ListingPlugin`` mounts a resource's list route, and its operation id.

Declaration only (``RouteOptions``); the plugin resolves the defaults (``resolve_routes``), so several
plugins (API versions) in one application get distinct operation ids and route names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.schema import closest

if TYPE_CHECKING:
    from litestar.openapi.spec import SecurityRequirement
    from litestar.types import Guard

    from litestar_listing.plugin.resource import Resource

__all__ = ("RouteOptions", "RoutedPlugin", "ServedRoute", "check_routes", "resolve_routes", "route_path")


@dataclass(frozen=True, slots=True)
class RouteOptions:
    """How one resource's automatic list route is mounted: ``ListingPlugin(routes={"<name>": RouteOptions(...)})``.

    The resource's ``HEAD`` route has the same path and ``opt`` and is never in OpenAPI; a ``HEAD``
    request is answered by the ``GET`` of the same URL, so the ``GET``'s guards decide it (docs:
    design, "HEAD").

    Attributes:
        path: The path after the plugin's ``path_prefix``, e.g. ``"departures"`` or
            ``"reports/flights"`` (leading and trailing ``/`` ignored; no path parameters). None: the
            resource's name. The route is ``{path_prefix}/{path}/``.
        operation_id: The OpenAPI ``operationId``. None: ``list_<name>`` (each run of characters other
            than ASCII letters and digits an ``_``: ``list_watched_flights``), or, when an earlier
            ``ListingPlugin`` of the application (or an explicit ``operation_id``) already uses it,
            ``list_<name>_<path_prefix as a slug>`` (``list_flights_api_v2``), numbered if needed.
        guards: Litestar guards, run before the list action: ``(connection, handler) -> None``,
            raising (e.g. ``PermissionDeniedException``, a 403) to refuse the request.
        opt: Arbitrary values for guards and middleware, as the ``opt`` of a Litestar handler.
        security: OpenAPI security requirements of the operation, e.g. ``[{"BearerToken": []}]``.
            None: those of the application and routers.
        tags: OpenAPI tags. None: ``[<resource name>]``.
        include_in_schema: False leaves the route out of OpenAPI (it still serves).
    """

    path: str | None = None
    operation_id: str | None = None
    guards: Sequence[Guard] = ()
    opt: Mapping[str, Any] = field(default_factory=dict)
    security: Sequence[SecurityRequirement] | None = None
    tags: Sequence[str] | None = None
    include_in_schema: bool = True


@dataclass(frozen=True, slots=True)
class ServedRoute:
    """A resource's route with every default resolved (``resolve_routes``).

    Attributes:
        path: The full path of the list route, ``{path_prefix}/{path}/``.
        operation_id: The OpenAPI ``operationId``, unique in the application.
        name: The Litestar route name (``app.route_reverse``): ``listing:`` and the operation id
            without its ``list_`` (``listing:flights``, ``listing:flights_api_v2``); ``HEAD`` adds ``:head``.
        options: The declared options.
    """

    path: str
    operation_id: str
    name: str
    options: RouteOptions

    def facets(self) -> ServedRoute:
        """The route of the resource's facet endpoint (docs: facets): ``<path>facets/``, ``<operation_id>_facets``.

        Its name is ``<name>:facets``; its options are the list's (guards, ``opt``, security, tags).
        """
        return ServedRoute(f"{self.path}facets/", f"{self.operation_id}_facets", f"{self.name}:facets", self.options)


_SLUG = re.compile(r"[^0-9A-Za-z]+")


def route_path(path_prefix: str, resource: Resource, options: RouteOptions) -> str:
    """``{path_prefix}/{path}/`` of ``resource`` (``RouteOptions.path``, else the resource's name).

    Raises:
        ConfigurationError: The path holds a path parameter (``{...}``): the list action reads none.
    """
    path = resource.name if options.path is None else options.path
    if "{" in path or "}" in path:
        msg = f"resource {resource.name!r}: route path {path!r} has a path parameter; a list route takes none"
        raise ConfigurationError(msg)
    joined = "/".join(part.strip("/") for part in (path_prefix, path) if part.strip("/"))
    return f"/{joined}/" if joined else "/"


def check_routes(resources: Sequence[Resource], path_prefix: str, routes: Mapping[str, RouteOptions]) -> None:
    """The configuration check of one plugin's ``routes``.

    Raises:
        ConfigurationError: ``routes`` names no resource of the plugin (with a did-you-mean), an
            entry is not a ``RouteOptions``, a path holds a path parameter, or two resources share
            a path.
    """
    names = [resource.name for resource in resources]
    declared: Mapping[str, object] = routes  # untyped callers may pass anything
    for name, options in declared.items():
        if name not in names:
            hint = closest(name, names)
            msg = f"routes names {name!r}, which is no resource of this plugin" + (
                f" (did you mean {' or '.join(hint)}?)" if hint else ""
            )
            raise ConfigurationError(msg)
        if not isinstance(options, RouteOptions):
            msg = f"routes[{name!r}] must be a RouteOptions, not {type(options).__name__}"
            raise ConfigurationError(msg)
    paths: dict[str, str] = {}
    for resource in resources:
        path = route_path(path_prefix, resource, routes.get(resource.name, RouteOptions()))
        # A resource with facets also answers at <path>facets/ (docs: facets).
        for served in (path, *((f"{path}facets/",) if resource.facet_fields else ())):
            if served.rstrip("/") in paths:
                msg = f"resources {paths[served.rstrip('/')]!r} and {resource.name!r} are both routed at {served}"
                raise ConfigurationError(msg)
            paths[served.rstrip("/")] = resource.name


class RoutedPlugin(Protocol):
    """What ``resolve_routes`` reads of a plugin: the resources it mounts, path prefix and route options."""

    mounted: tuple[Resource, ...]
    path_prefix: str
    routes: Mapping[str, RouteOptions]


def resolve_routes(plugins: Sequence[RoutedPlugin], target: RoutedPlugin) -> dict[str, ServedRoute]:
    """The served routes of ``target``'s resources, by resource name, with operation ids unique across ``plugins``.

    Explicit ``operation_id``s are reserved first, in every plugin; then each plugin, in order,
    takes ``list_<name>`` for each resource, or ``list_<name>_<prefix slug>`` (then ``..._2``, ...)
    when that id is taken. The first plugin's ids are thus those of an application with one plugin.

    Args:
        plugins: The application's listing plugins in their order (``AppConfig.plugins``); ``target``
            is added at the end when missing.
        target: The plugin whose routes are wanted.

    Raises:
        ConfigurationError: Two routes declare the same ``operation_id``.
    """
    ordered = [*plugins] if any(plugin is target for plugin in plugins) else [*plugins, target]
    taken: dict[str, str] = {}
    for plugin in ordered:
        for name, options in plugin.routes.items():
            if options.operation_id is None:
                continue
            if options.operation_id in taken:
                msg = (
                    f"operation_id {options.operation_id!r} is declared for both {taken[options.operation_id]} "
                    f"and resource {name!r} at {plugin.path_prefix!r}; operation ids must be unique"
                )
                raise ConfigurationError(msg)
            taken[options.operation_id] = f"resource {name!r} at {plugin.path_prefix!r}"
    for plugin in ordered:
        served: dict[str, ServedRoute] = {}
        for resource in plugin.mounted:
            options = plugin.routes.get(resource.name, RouteOptions())
            operation_id = options.operation_id or _free_id(resource.name, plugin.path_prefix, taken)
            taken.setdefault(operation_id, resource.name)
            name = f"listing:{operation_id.removeprefix('list_')}"
            path = route_path(plugin.path_prefix, resource, options)
            served[resource.name] = ServedRoute(path, operation_id, name, options)
        if plugin is target:
            return served
    raise AssertionError  # pragma: no cover - target is in ordered


def _free_id(name: str, path_prefix: str, taken: Mapping[str, str]) -> str:
    """``list_<name>``, else ``list_<name>_<prefix slug>``, else that numbered from 2: the first not in ``taken``."""
    plain = f"list_{_SLUG.sub('_', name).strip('_')}"  # an identifier: generators name functions after it
    if plain not in taken:
        return plain
    slug = _SLUG.sub("_", path_prefix).strip("_")
    base = f"{plain}_{slug}" if slug else plain
    candidate, number = base, 2
    while candidate in taken:
        candidate, number = f"{base}_{number}", number + 1
    return candidate
