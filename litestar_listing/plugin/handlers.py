"""Route handlers for resources.

No ``from __future__ import annotations`` here: Litestar reads these annotations at runtime.
"""

from typing import Any

from litestar import Request, Response, get, head
from litestar.enums import MediaType
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.spec import Operation

from litestar_listing.plugin.openapi import SharedSchemas, list_operation_class
from litestar_listing.plugin.problems import ErrorShapes
from litestar_listing.plugin.resource import Resource
from litestar_listing.plugin.route_options import RouteOptions, ServedRoute, route_path

__all__ = ("head_handler", "list_handler")


def _served(resource: Resource, path_prefix: str, route: ServedRoute | None) -> ServedRoute:
    """``route``, or the route of ``resource`` under ``path_prefix`` with the defaults of a lone plugin."""
    if route is not None:
        return route
    options = RouteOptions()
    return ServedRoute(
        route_path(path_prefix, resource, options), f"list_{resource.name}", f"listing:{resource.name}", options
    )


def list_handler(
    resource: Resource,
    path_prefix: str,
    shared: SharedSchemas,
    *,
    route: ServedRoute | None = None,
    errors: ErrorShapes | None = None,
) -> HTTPRouteHandler:
    """A ``GET {path_prefix}/<name>/`` handler answering ``resource``'s list action (spec §4.1).

    Its OpenAPI operation refers to schemas collected in ``shared``.

    Args:
        resource: The resource; built here.
        path_prefix: The path before the resource's name; ignored when ``route`` is given.
        shared: Where the operation's shared schemas are collected.
        route: The resolved route (``routes.resolve_routes``): path, operation id, name, guards,
            ``opt``, security, tags and ``include_in_schema``. None: ``{path_prefix}/<name>/``,
            ``list_<name>``, no options.
        errors: How the application writes errors, for OpenAPI (``ErrorShapes.detect``).
    """
    resource.build()
    served = _served(resource, path_prefix, route)
    options = served.options

    async def list_items(request: Request[Any, Any, Any]) -> Any:
        envelope, headers = await resource.list_with_headers(request)
        return Response(envelope, headers=headers) if headers else envelope

    list_items.__annotations__ = {"request": Request, "return": resource.envelope}
    list_items.__name__ = f"list_{resource.name}"
    return get(
        served.path,
        name=served.name,
        operation_id=served.operation_id,
        summary=f"List {resource.name}",
        description=resource.description or None,
        tags=[resource.name] if options.tags is None else list(options.tags),
        guards=list(options.guards) or None,
        opt=dict(options.opt) or None,
        security=None if options.security is None else list(options.security),
        include_in_schema=options.include_in_schema,
        # Out of the schema: no operation, so no component it alone would refer to.
        operation_class=list_operation_class(resource, shared, errors=errors, guarded=bool(options.guards))
        if options.include_in_schema
        else Operation,
    )(list_items)


def head_handler(resource: Resource, path_prefix: str, *, route: ServedRoute | None = None) -> HTTPRouteHandler:
    """A ``HEAD {path_prefix}/<name>/`` handler: the list action's status and headers, without a body.

    It runs the same list as ``GET`` (validation, scoping, admission, the store), so a ``HEAD`` answers
    what the ``GET`` would: 200 with the same extension headers (``X-Total-Mode``, ``X-Next-Cursor``,
    ``Link``), or the same 4xx/503. Left out of OpenAPI, which documents the ``GET``. Note that
    Litestar's authentication backends skip ``HEAD`` by default (``exclude_http_methods``), so a scoped
    resource then sees an anonymous request.

    Args:
        resource: The resource; built here.
        path_prefix: The path before the resource's name; ignored when ``route`` is given.
        route: As for ``list_handler``: the same path, guards, ``opt`` and security; the route name
            gains ``:head``.
    """
    resource.build()
    served = _served(resource, path_prefix, route)
    options = served.options

    async def head_items(request: Request[Any, Any, Any]) -> Response[None]:
        _, headers = await resource.list_with_headers(request)
        return Response(content=None, headers=headers, media_type=MediaType.JSON)

    head_items.__name__ = f"head_{resource.name}"
    return head(
        served.path,
        name=f"{served.name}:head",
        guards=list(options.guards) or None,
        opt=dict(options.opt) or None,
        security=None if options.security is None else list(options.security),
        include_in_schema=False,
    )(head_items)
