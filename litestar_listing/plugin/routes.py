"""A resource's list behind the application's own handlers: a route factory, an OpenAPI operation, dependencies.

No ``from __future__ import annotations`` here: Litestar reads these annotations at runtime.
"""

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from litestar import Litestar, Request
from litestar.di import Provide
from litestar.enums import HttpMethod
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.spec import Operation

from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.parsing import QueryString
from litestar_listing.core.query import ListQuery
from litestar_listing.plugin.action import list_action, raw_query
from litestar_listing.plugin.binding import binding_of
from litestar_listing.plugin.envelope import ListResult
from litestar_listing.plugin.prepared import prepare
from litestar_listing.plugin.resource import Resource

__all__ = (
    "ListingProvide",
    "ListingRouteHandler",
    "is_listing_placeholder",
    "listing_operation",
    "listing_route",
    "provide_page",
    "provide_query",
)


def listing_operation(resource: Resource) -> type[Operation]:
    """An ``Operation`` class documenting ``resource``'s list action, for a route decorator's ``operation_class``.

    The operation gains what the mounted route documents (docs: in your app): ``page``, ``count``,
    ``search``, ``order_by`` (and ``cursor``) and every exposed filter with its operators, each
    with its type and bounds; the 400 (every bad parameter in ``extra``), the 401 of a scoped
    resource and the 503 with ``Retry-After``; the bounds in the description and the extension
    headers of the 200. Parameters the handler declares itself are kept, before these.

    ``listing_route`` and the handlers using ``provide_page`` or ``provide_query`` get it without
    asking; pass it to a handler that calls ``list_resource`` itself::

        @get("/reports/projects", operation_class=listing_operation(projects))
        async def report(request: Request) -> ...: ...

    Args:
        resource: A resource given to the application's ``ListingPlugin`` (mounted or ``unmounted``).

    Returns:
        A placeholder ``Operation`` subclass, which the ``ListingPlugin`` replaces, when the handler is
        registered, by the resource's operation in that application (``Binding.operation_class``: the
        parameters computed when the OpenAPI document is built, their schemas shared with the
        application's other list operations in ``components/schemas``).

    Raises:
        ConfigurationError: When the application is built, its ``ListingPlugin`` plugins were not given
            ``resource``; when the document is built, the handler was registered where no
            ``ListingPlugin`` could replace the placeholder.
    """

    @dataclass
    class ListingOperation(Operation):
        def __post_init__(self) -> None:
            msg = (
                f"listing_operation({resource.name!r}) documents a handler of an application without a "
                f"ListingPlugin: give the application a ListingPlugin serving {resource.name!r}"
            )
            raise ConfigurationError(msg)

    ListingOperation.__name__ = ListingOperation.__qualname__ = f"{resource.name.title()}ListingOperation"
    ListingOperation.listing_resource = resource  # type: ignore[attr-defined]
    return ListingOperation


def is_listing_placeholder(operation_class: type[Operation]) -> Resource | None:
    """The resource a ``listing_operation`` placeholder documents; None for any other ``Operation``."""
    resource = getattr(operation_class, "listing_resource", None)
    return resource if isinstance(resource, Resource) else None


class ListingRouteHandler(HTTPRouteHandler):
    """The ``GET`` handler ``listing_route`` makes: a resource's list action at the application's own path.

    Placed in a ``Controller``'s body, it takes the controller as its first argument, as the
    controller's methods do. Registering it in an application whose ``ListingPlugin`` was not
    given its resource stops the start with a ``ConfigurationError`` saying how to give it.
    """

    __slots__ = ("resource",)

    def __init__(self, resource: Resource, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.resource = resource
        """The listed resource."""

    def __deepcopy__(self, memo: dict[int, Any]) -> "ListingRouteHandler":
        """A copy sharing the resource (its backend, its engine): Litestar copies a controller's handlers."""
        return _copy_sharing(self, self.resource, memo)

    def __set_name__(self, owner: type, name: str) -> None:
        """Accept the controller instance Litestar binds to the handlers in a ``Controller``'s body."""
        listed = self.fn

        async def method(controller: Any, request: Request[Any, Any, Any]) -> Any:
            return await listed(request=request)

        method.__annotations__ = {"controller": Any, **listed.__annotations__}
        method.__name__ = method.__qualname__ = name
        method.__doc__ = listed.__doc__
        self._fn = method

    def on_registration(self, app: Litestar) -> None:
        """Check, at start-up, that the resource was given to a ``ListingPlugin`` (its backend prepared).

        Raises:
            ConfigurationError: It was not.
        """
        super().on_registration(app)
        binding_of(self.resource, None, app, used_by=f"the route {self}", log=False)


CopiedT = TypeVar("CopiedT")


def _copy_sharing(original: CopiedT, resource: Resource, memo: dict[int, Any]) -> CopiedT:
    """A deep copy of the slotted ``original`` that shares ``resource`` (a declaration, holding its backend)."""
    memo[id(resource)] = resource
    cls = type(original)
    clone = cls.__new__(cls)
    memo[id(original)] = clone
    names = {name for klass in cls.__mro__ for name in getattr(klass, "__slots__", ())}
    for name in sorted(names):
        if hasattr(original, name):
            setattr(clone, name, copy.deepcopy(getattr(original, name), memo))
    return clone


def listing_route(
    resource: Resource,
    path: str | Sequence[str] | None = None,
    *,
    load: Sequence[str] | None = None,
    **kwargs: Any,
) -> ListingRouteHandler:
    """A ``GET`` handler answering ``resource``'s list action at ``path``, with Litestar's route options.

    The handler answers exactly as the route the plugin mounts: the envelope (typed as the
    resource's envelope type in OpenAPI), the extension headers, a 400 listing every bad parameter,
    401 from a scope without a user, 503 with ``Retry-After``. Its OpenAPI operation is
    ``listing_operation(resource)``. Use it in an application's or a ``Router``'s
    ``route_handlers``, or as an attribute of a ``Controller``::

        class ProjectController(Controller):
            path = "/teams/{team_id:int}/projects"
            guards = [member_only]
            list_projects = listing_route(projects, "/", tags=["projects"])

    Args:
        resource: The listed resource; give it to the application's ``ListingPlugin`` too
            (``unmounted=[resource]`` to serve it only here).
        path: The route's path (or paths), relative to its router or controller; None: ``"/"``.
        load: Relations eager-loaded by this route instead of ``resource.load`` (docs: eager loading).
        **kwargs: Any option of Litestar's ``get`` route decorator: ``guards``, ``dependencies``,
            ``opt``, ``security``, ``tags``, ``name``, ``operation_id``, ``summary``, ``description``,
            ``cache``, ``middleware``, ``include_in_schema``... ``operation_class`` defaults to
            ``listing_operation(resource)``; a handler of another class is refused.

    Returns:
        A ``ListingRouteHandler`` (an ``HTTPRouteHandler``); its handler name is ``list_<name>``.

    Raises:
        ConfigurationError: At once, the resource's declaration does not match its models
            (``plugin.prepared.prepare``); when the application is built, the resource was given to no
            ``ListingPlugin``.
    """
    envelope_type = prepare(resource).envelope

    async def list_items(request: Request[Any, Any, Any]) -> Any:
        binding = binding_of(resource, request, used_by=f"the listing_route of {resource.name!r}")
        result = await list_action(binding, request, None, load=load, session=None, primary=None)
        return result.response() if result.headers else result.envelope

    list_items.__annotations__ = {"request": Request, "return": envelope_type}
    list_items.__name__ = list_items.__qualname__ = f"list_{resource.name.replace('-', '_')}"
    list_items.__doc__ = resource.description or f"List {resource.name}."
    kwargs.setdefault("operation_class", listing_operation(resource))
    kwargs.setdefault("summary", f"List {resource.name}")
    handler = ListingRouteHandler(resource, path, http_method=HttpMethod.GET, **kwargs)
    handler(list_items)
    return handler


class ListingProvide(Provide):
    """A ``Provide`` of a resource's query or page; the ``ListingPlugin`` documents the handlers that use it.

    Attributes:
        resource: The resource it parses or lists.
    """

    __slots__ = ("lists", "resource", "validated")

    def __init__(self, resource: Resource, dependency: Any, *, validated: bool = True, lists: bool = False) -> None:
        super().__init__(dependency)
        self.resource = resource
        self.validated = validated
        """False: its value cannot pass Litestar's validation; it must be taken as ``SkipValidation[...]``."""
        self.lists = lists
        """True: it lists the resource (``provide_page``), with no session but the backend's own."""

    def __deepcopy__(self, memo: dict[int, Any]) -> "ListingProvide":
        """A copy sharing the resource: Litestar copies a controller method's dependencies with the method."""
        return _copy_sharing(self, self.resource, memo)


def provide_query(resource: Resource) -> ListingProvide:
    """A dependency giving a handler the request's validated ``ListQuery`` for ``resource``.

    The query carries the forced filters of the resource's scopes and the application's row
    policies; nothing is fetched (``resource.backend.fetch(query, context)`` lists it). Bad
    parameters answer the 400 of the list action before the handler runs. A handler using it
    documents the resource's parameters and errors (``listing_operation``) unless it sets its own
    ``operation_class``::

        @get("/projects/query", dependencies={"list_query": provide_query(projects)})
        async def explain(list_query: SkipValidation[ListQuery]) -> dict[str, int]: ...

    ``SkipValidation`` (``litestar.params``) because Litestar would otherwise convert the value to
    its annotation, which msgspec cannot do for a ``ListQuery``; ``query`` is one of Litestar's
    reserved parameter names.

    Args:
        resource: A resource given to the application's ``ListingPlugin``.

    Returns:
        A ``ListingProvide`` for a route's, controller's, router's or the application's ``dependencies``.

    Raises:
        ConfigurationError: When the application is built, ``resource`` was given to no
            ``ListingPlugin`` (at the first request, when the application has none), or a handler
            takes the query under an annotation Litestar validates.
    """

    async def provide_list_query(request: Request[Any, Any, Any]) -> ListQuery:
        binding = binding_of(resource, request, used_by="a provide_query dependency")
        return binding.parse(QueryString.read(raw_query(request), resource.limits), request)

    return ListingProvide(resource, provide_list_query, validated=False)


def provide_page(resource: Resource, *, load: Sequence[str] | None = None) -> ListingProvide:
    """A dependency giving a handler the answered list action of the request: a ``ListResult``.

    Everything the mounted route does happens before the handler runs: validation (400), scoping
    (401), admission and the store (503), enrichment; the handler shapes the answer, e.g. its own
    response model built from ``result.items`` and ``result.pagination``. A handler using it
    documents the resource's parameters and errors (``listing_operation``) unless it sets its own
    ``operation_class``::

        @get("/projects/summary", dependencies={"result": provide_page(projects)})
        async def summary(result: NamedDependency[ListResult]) -> ProjectSummary: ...

    Args:
        resource: A resource given to the application's ``ListingPlugin``.
        load: Relations eager-loaded instead of ``resource.load`` (docs: eager loading).

    Returns:
        A ``ListingProvide`` for a route's, controller's, router's or the application's ``dependencies``.

    Raises:
        ConfigurationError: When the application is built, ``resource`` was given to no
            ``ListingPlugin`` (at the first request, when the application has none).
    """

    async def provide_list_result(request: Request[Any, Any, Any]) -> ListResult:
        binding = binding_of(resource, request, used_by="a provide_page dependency")
        return await list_action(binding, request, None, load=load, session=None, primary=None)

    return ListingProvide(resource, provide_list_result, lists=True)


def served_resources(handler: HTTPRouteHandler) -> list[Resource]:
    """The resources ``handler`` lists: its own (``listing_route``, ``listing_operation``) and its dependencies'.

    A ``ListingProvide`` counts when the handler, or a dependency it uses, takes it by name.
    Call it once the handler is registered (its dependencies resolved).
    """
    found: list[Resource] = []
    if isinstance(handler, ListingRouteHandler):
        found.append(handler.resource)
    documented = is_listing_placeholder(handler.operation_class)
    if documented is not None:
        found.append(documented)
    providers = handler.resolve_dependencies()
    wanted = set(handler.parsed_fn_signature.parameters)
    seen: set[str] = set()
    while wanted - seen:
        key = (wanted - seen).pop()
        seen.add(key)
        provider = providers.get(key)
        if provider is None:
            continue
        if isinstance(provider, ListingProvide):
            found.append(provider.resource)
            if not provider.validated:
                _check_unvalidated(handler, key, providers)
        signature = getattr(provider, "parsed_fn_signature", None)
        if signature is not None:
            wanted.update(signature.parameters)
    unique: list[Resource] = []
    for resource in found:
        if all(resource is not other for other in unique):
            unique.append(resource)
    return unique


def _check_unvalidated(handler: HTTPRouteHandler, key: str, providers: Mapping[str, Provide]) -> None:
    """Check that whatever takes dependency ``key`` skips Litestar's validation of it.

    Raises:
        ConfigurationError: The handler or one of its dependencies takes it under a validated annotation.
    """
    signatures = [handler.parsed_fn_signature]
    signatures.extend(
        signature
        for provider in providers.values()
        if (signature := getattr(provider, "parsed_fn_signature", None)) is not None
    )
    for signature in signatures:
        parameter = signature.parameters.get(key)
        if parameter is None or parameter.annotation is Any:
            continue
        kwarg = parameter.kwarg_definition
        if any(type(item).__name__ == "SkipValidationMarker" for item in parameter.metadata) or getattr(
            kwarg, "skip_validation", False
        ):
            continue
        msg = (
            f"{handler} takes {key!r} (a provide_query dependency) as {parameter.annotation!r}, which Litestar "
            f"would validate and cannot: annotate it {key}: SkipValidation[ListQuery] (from litestar.params)"
        )
        raise ConfigurationError(msg)
