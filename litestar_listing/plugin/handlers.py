"""The route handlers a ``ListingPlugin`` mounts for a resource: ``GET`` and ``HEAD`` of its list and of its facets.

No ``from __future__ import annotations`` here: Litestar reads these annotations at runtime.
"""

from typing import Any

from litestar import Request, get
from litestar.enums import HttpMethod
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.spec import Operation
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from litestar.utils.scope.state import CONNECTION_STATE_KEY

from litestar_listing.plugin.action import list_action
from litestar_listing.plugin.binding import Binding
from litestar_listing.plugin.facets import facet_action
from litestar_listing.plugin.openapi import facet_operation_class, list_operation_class
from litestar_listing.plugin.prepared import prepare
from litestar_listing.plugin.route_options import ServedRoute

__all__ = ("ListingHeadHandler", "facet_handler", "get_without_body", "head_as_get", "head_handler", "list_handler")


def list_handler(binding: Binding, route: ServedRoute) -> HTTPRouteHandler:
    """The ``GET`` handler at ``route`` answering the list action of ``binding``'s resource (docs: resources).

    Its OpenAPI operation refers to the schemas the application's list operations share
    (``ListingState.shared_schemas``).

    Args:
        binding: The resource as the application serves it.
        route: The resolved route (``route_options.resolve_routes``): path, operation id, name, guards,
            ``opt``, security, tags and ``include_in_schema``.
    """
    resource = binding.resource

    async def list_items(request: Request[Any, Any, Any]) -> Any:
        result = await list_action(binding, request, None, load=None, session=None, primary=None)
        return result.response() if result.headers else result.envelope

    list_items.__annotations__ = {"request": Request, "return": prepare(resource).envelope}
    list_items.__name__ = f"list_{resource.name}"
    return _routed(binding, route, list_items, f"List {resource.name}", list_operation_class)


def facet_handler(binding: Binding, route: ServedRoute) -> HTTPRouteHandler:
    """The ``GET`` handler at ``route`` (``ServedRoute.facets``) answering the facet action of ``binding``'s resource.

    Docs: facets. Its OpenAPI operation is ``facet_operation_class``'s; its guards, ``opt``, security
    and tags are the list route's.
    """
    resource = binding.resource

    async def count_items(request: Request[Any, Any, Any]) -> Any:
        result = await facet_action(binding, request, None)
        return result.response() if result.headers else result.envelope

    count_items.__annotations__ = {"request": Request, "return": prepare(resource).facets_envelope}
    count_items.__name__ = f"count_{resource.name}_facets"
    return _routed(binding, route, count_items, f"Count the facets of {resource.name}", facet_operation_class)


def _routed(binding: Binding, route: ServedRoute, answer: Any, summary: str, documented: Any) -> HTTPRouteHandler:
    """``answer`` as the ``GET`` handler of ``route``, with its options, documented by ``documented(...)``'s operation.

    Out of the schema (``include_in_schema=False``), no operation: no component it alone would refer to.
    """
    resource, options, state = binding.resource, route.options, binding.state
    return get(
        route.path,
        name=route.name,
        operation_id=route.operation_id,
        summary=summary,
        description=resource.description or None,
        tags=[resource.name] if options.tags is None else list(options.tags),
        guards=list(options.guards) or None,
        opt=dict(options.opt) or None,
        security=None if options.security is None else list(options.security),
        include_in_schema=options.include_in_schema,
        operation_class=documented(
            resource,
            state.shared_schemas,
            binding.policies,
            errors=state.errors,
            guarded=bool(options.guards),
            budget=binding.budget is not None,
        )
        if options.include_in_schema
        else Operation,
    )(answer)


async def get_without_body(scope: Scope, receive: Receive, send: Send) -> None:
    """Answer the ``HEAD`` request of ``scope`` with the application's ``GET`` of the same URL, its body dropped.

    The request becomes that ``GET`` (``scope`` is changed in place, so what the application keeps in
    it, a database session for example, is seen by its ``before_send`` hooks) and goes through the
    application again (``Litestar.asgi_handler``): its routing, its middleware (authentication
    included, whatever a middleware's ``exclude_http_methods`` says of ``HEAD``), guards,
    dependencies, exception handlers and the list action itself. Every message it sends passes
    through unchanged but for its body: the status and every header, ``Content-Length`` included (or
    absent, for a streamed body), are the ``GET``'s (docs: design, "HEAD").
    """
    app = scope["litestar_app"]
    as_get: Any = scope
    # The router strips ``root_path`` from the path it routes and keeps the rest in ``path``.
    as_get.update(method=HttpMethod.GET.value, path=scope.get("root_path", "") + scope["path"], path_params={})
    for key in ("route_handler", "path_template"):
        as_get.pop(key, None)
    as_get.get("state", {}).pop(CONNECTION_STATE_KEY, None)  # what Litestar derived for the HEAD request

    async def without_body(message: Message) -> None:
        if message["type"] == "http.response.body":
            if message.get("more_body", False):
                return
            message = {"type": "http.response.body", "body": b"", "more_body": False}
        await send(message)

    await app.asgi_handler(as_get, receive, without_body)


class ListingHeadHandler(HTTPRouteHandler):
    """The ``HEAD`` handler of a mounted resource (``head_handler``); ``head_as_get`` answers its requests."""

    __slots__ = ()


def head_as_get(app: ASGIApp) -> ASGIApp:
    """The application's first middleware: a ``HEAD`` of a listing route is answered by its ``GET`` without a body.

    Any other request goes on to ``app`` untouched. First of the application's middleware, so that no
    other runs for the ``HEAD`` request itself: each runs once, for the ``GET``.
    """

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") == HttpMethod.HEAD.value and isinstance(scope.get("route_handler"), ListingHeadHandler):
            await get_without_body(scope, receive, send)
        else:
            await app(scope, receive, send)

    return middleware


def head_handler(route: ServedRoute) -> HTTPRouteHandler:
    """The ``HEAD`` handler at ``route``: the ``GET`` of the same request, for the same caller, without its body.

    ``HEAD`` is answered by running the ``GET`` (``head_as_get``, the middleware the ``ListingPlugin``
    puts first), so that the application's authentication, guards and scopes see it exactly as they
    see that ``GET``: Litestar's authentication middleware skip ``HEAD`` by default
    (``exclude_http_methods``), so a handler of its own would run unauthenticated. The route carries
    no guards itself (the ``GET``'s run) and is left out of OpenAPI, which documents the ``GET``; its
    ``opt`` is the ``GET``'s, for middleware that read it.
    """
    options = route.options

    async def head_items() -> ASGIApp:
        # Reached only when another middleware was put before ``head_as_get``: the same answer, later.
        return get_without_body

    head_items.__name__ = f"head_{route.operation_id.removeprefix('list_')}"
    handler = ListingHeadHandler(
        route.path,
        http_method=HttpMethod.HEAD,
        name=f"{route.name}:head",
        opt=dict(options.opt) or None,
        include_in_schema=False,
    )
    handler(head_items)
    return handler
