"""What the tests' applications share: serving resources without HTTP, and a user named by a header.

``list_resource(resource, None, app=serving(resource))`` lists without a request;
``user_from_header(users)`` is the middleware of the applications whose tests send ``x-user``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from litestar import Litestar

from litestar_listing import ListingPlugin, Resource


def serving(*resources: Resource, **options: Any) -> Litestar:
    """An application whose ``ListingPlugin`` serves ``resources`` without mounting them (``options``: the plugin's)."""
    return Litestar(plugins=[ListingPlugin([], unmounted=resources, **options)])


@functools.lru_cache(maxsize=256)
def served(resource: Resource) -> Litestar:
    """``serving(resource)``, made once per resource: for tests that list one resource many times."""
    return serving(resource)


def user_from_header(users: Mapping[str, object] | Callable[[str], object]) -> Callable[[Any], Any]:
    """A middleware setting ``scope["user"]`` of each HTTP request to the user its ``x-user`` header names.

    It stands for an authentication middleware, which sets the user before ``request.user`` is read.

    Args:
        users: The users by name (a name it lacks, or no header, gives None), or a function of the
            name (``""`` without the header).
    """
    user_named = users.get if isinstance(users, Mapping) else users

    def middleware(app: Any) -> Any:
        async def wrapped(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                scope["user"] = user_named(dict(scope["headers"]).get(b"x-user", b"").decode())
            await app(scope, receive, send)

        return wrapped

    return middleware
