"""Route handlers for resources.

No ``from __future__ import annotations`` here: Litestar reads these annotations at runtime.
"""

from typing import Any

from litestar import Request, Response, get, head
from litestar.enums import MediaType
from litestar.handlers import HTTPRouteHandler

from litestar_listing.plugin.openapi import SharedSchemas, list_operation_class
from litestar_listing.plugin.resource import Resource

__all__ = ("head_handler", "list_handler")


def list_handler(resource: Resource, path_prefix: str, shared: SharedSchemas) -> HTTPRouteHandler:
    """A ``GET {path_prefix}/<name>/`` handler answering ``resource``'s list action (spec §4.1).

    Its OpenAPI operation refers to schemas collected in ``shared``.
    """
    resource.build()

    async def list_items(request: Request[Any, Any, Any]) -> Any:
        envelope, headers = await resource.list_with_headers(request)
        return Response(envelope, headers=headers) if headers else envelope

    list_items.__annotations__ = {"request": Request, "return": resource.envelope}
    list_items.__name__ = f"list_{resource.name}"
    return get(
        f"{path_prefix.rstrip('/')}/{resource.name}/",
        name=f"listing:{resource.name}",
        operation_id=f"list_{resource.name}",
        summary=f"List {resource.name}",
        description=resource.description or None,
        tags=[resource.name],
        operation_class=list_operation_class(resource, shared),
    )(list_items)


def head_handler(resource: Resource, path_prefix: str) -> HTTPRouteHandler:
    """A ``HEAD {path_prefix}/<name>/`` handler: the list action's status and headers, without a body.

    It runs the same list as ``GET`` (validation, scoping, admission, the store), so a ``HEAD`` answers
    what the ``GET`` would: 200 with the same extension headers (``X-Total-Mode``, ``X-Next-Cursor``,
    ``Link``), or the same 4xx/503. Left out of OpenAPI, which documents the ``GET``. Note that
    Litestar's authentication backends skip ``HEAD`` by default (``exclude_http_methods``), so a scoped
    resource then sees an anonymous request.
    """
    resource.build()

    async def head_items(request: Request[Any, Any, Any]) -> Response[None]:
        _, headers = await resource.list_with_headers(request)
        return Response(content=None, headers=headers, media_type=MediaType.JSON)

    head_items.__name__ = f"head_{resource.name}"
    return head(
        f"{path_prefix.rstrip('/')}/{resource.name}/",
        name=f"listing:{resource.name}:head",
        include_in_schema=False,
    )(head_items)
