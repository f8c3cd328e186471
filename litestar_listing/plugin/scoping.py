"""Scoping: the rules a resource's forced filters come from, per request (docs: scoping).

A ``ScopeRule`` reads the request (usually ``request.user``) and returns field -> value equalities;
``binding.forced_filters`` turns them into the forced filters the engine ANDs outside the client's
filters (docs: query language, "Forced filters"). ``tenant_scope`` and ``owner_scope`` are the presets;
``bearer_challenge`` gives the 401 they raise the challenge an application's scheme needs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from litestar import Request, Response
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException
from litestar.exceptions.responses import create_exception_response

from litestar_listing.core.errors import ConfigurationError

__all__ = ("ScopeRule", "UserSource", "bearer_challenge", "owner_scope", "tenant_scope")

UserSource: TypeAlias = Literal["user", "auth"] | Callable[[ASGIConnection[Any, Any, Any, Any]], object]
"""Where a preset finds the user: ``"user"`` (``request.user``, what the authentication middleware
returned, e.g. the value of a ``JWTAuth`` ``retrieve_user_handler``), ``"auth"`` (``request.auth``,
e.g. JWTAuth's ``Token``), or a function ``connection -> user`` (None means anonymous)."""


@dataclass(frozen=True, slots=True)
class ScopeRule:
    """A scope rule: where ``Resource(scopes=...)`` gets the forced filters of each request.

    Attributes:
        fields: The field paths it may constrain (checked against the model at start-up).
        build: ``connection -> {path: value}``; a list/tuple value means membership, and an empty
            one matches no row (a user of no company sees nothing). Returning an empty mapping applies
            nothing (for example for a platform administrator). It may raise
            ``NotAuthorizedException`` (401) or ``PermissionDeniedException`` (403) (docs: scoping,
            "Writing a scope rule").
    """

    fields: tuple[str, ...]
    build: Callable[[ASGIConnection[Any, Any, Any, Any]], Mapping[str, object]]


_MISSING = object()


def _user_reader(source: UserSource) -> Callable[[ASGIConnection[Any, Any, Any, Any]], object]:
    """The function that reads the user of a connection from ``source`` (see ``UserSource``).

    Raises:
        ConfigurationError: ``source`` is neither ``"user"``, ``"auth"`` nor a callable.
    """
    if callable(source):
        return source
    if source in ("user", "auth"):
        # request.user raises when no authentication middleware is installed; the scope does not.
        return lambda connection: connection.scope.get(source)
    msg = f"user= must be 'user', 'auth' or a function of the request returning the user, not {source!r}"
    raise ConfigurationError(msg)


def _check_name(argument: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        msg = f"{argument} must be a non-empty attribute or key name, not {value!r}"
        raise ConfigurationError(msg)


def _read_claim(user: object, name: str) -> object:
    """``user[name]`` for a mapping (JWT claims, a dict from ``retrieve_user_handler``), else ``user.name``.

    Returns:
        The value, or ``_MISSING`` when the user has no such key or attribute.
    """
    if isinstance(user, Mapping):
        return user.get(name, _MISSING)
    return getattr(user, name, _MISSING)


def _scoped_value(user: object, name: str) -> object:
    value = _read_claim(user, name)
    if value is _MISSING:
        # Authenticated, but nothing says which rows are this user's: refuse rather than guess.
        msg = f"the authenticated user has no {name!r} to scope this list by"
        raise PermissionDeniedException(msg)
    return value


def _is_admin(user: object, admin_attribute: str | None) -> bool:
    if admin_attribute is None:
        return False
    value = _read_claim(user, admin_attribute)
    return value is not _MISSING and bool(value)


def _check_common(field: str, attribute: tuple[str, str], admin_attribute: str | None) -> None:
    _check_name("field", field)
    _check_name(*attribute)
    if admin_attribute is not None:
        _check_name("admin_attribute", admin_attribute)


def tenant_scope(
    field: str,
    *,
    company_attribute: str = "company_id",
    admin_attribute: str | None = "is_platform_admin",
    anonymous: Literal["deny", "unscoped"] = "deny",
    user: UserSource = "user",
) -> ScopeRule:
    """Restrict the list to the authenticated user's company unless the user is a platform admin.

    The user is read from ``user`` (``request.user`` by default) and may be an object (attributes)
    or a mapping (keys), such as the dict a ``JWTAuth`` ``retrieve_user_handler`` returns.

    Args:
        field: The listed model's company path (``"company_id"``, ``"carrier"``).
        company_attribute: The attribute or key of the user holding the company identifier.
        admin_attribute: The attribute or key that is true for platform administrators, who get no
            forced filter; a user without it is not one. None: no bypass.
        anonymous: ``"deny"`` answers 401 without a user; ``"unscoped"`` lists everything (public data).
        user: Where the user comes from (``UserSource``).

    Returns:
        The scope rule (docs: scoping, "The presets"). A user without ``company_attribute`` is
        answered 403 (``PermissionDeniedException``); a value of None matches no row.

    Raises:
        ConfigurationError: An empty name, an unknown ``anonymous`` or ``user``.
    """
    _check_common(field, ("company_attribute", company_attribute), admin_attribute)
    if anonymous not in ("deny", "unscoped"):
        msg = f"anonymous must be 'deny' or 'unscoped', not {anonymous!r}"
        raise ConfigurationError(msg)
    read_user = _user_reader(user)

    def build(connection: ASGIConnection[Any, Any, Any, Any]) -> Mapping[str, object]:
        current = read_user(connection)
        if current is None:
            if anonymous == "unscoped":
                return {}
            raise NotAuthorizedException("authentication is required to list this resource")
        if _is_admin(current, admin_attribute):
            return {}
        return {field: _scoped_value(current, company_attribute)}

    return ScopeRule((field,), build)


def owner_scope(
    field: str,
    *,
    user_attribute: str = "id",
    admin_attribute: str | None = "is_platform_admin",
    user: UserSource = "user",
) -> ScopeRule:
    """Restrict the list to records owned by the authenticated user, unless the user is a platform admin.

    Args:
        field: The owner path on the listed model, e.g. ``"user_id"`` (on Beanie, a link's
            ``<link>_id`` alias).
        user_attribute: The attribute or key of the user holding its identifier.
        admin_attribute: As in ``tenant_scope``: true for platform administrators, who see every
            record; None: no bypass.
        user: Where the user comes from (``UserSource``).

    Returns:
        The scope rule (docs: scoping, "The presets"); a request without a user gets a 401, a
        user without ``user_attribute`` a 403.

    Raises:
        ConfigurationError: An empty name or an unknown ``user``.
    """
    _check_common(field, ("user_attribute", user_attribute), admin_attribute)
    read_user = _user_reader(user)

    def build(connection: ASGIConnection[Any, Any, Any, Any]) -> Mapping[str, object]:
        current = read_user(connection)
        if current is None:
            raise NotAuthorizedException("authentication is required to list this resource")
        if _is_admin(current, admin_attribute):
            return {}
        return {field: _scoped_value(current, user_attribute)}

    return ScopeRule((field,), build)


def bearer_challenge(
    realm: str,
) -> Callable[[Request[Any, Any, Any], NotAuthorizedException], Response[Any]]:
    """An exception handler that gives every 401 a ``WWW-Authenticate: Bearer`` challenge.

    A 401 must say how to authenticate (RFC 9110, section 11.6.1), and the scopes, the row policies
    and Litestar's own ``JWTAuth`` raise ``NotAuthorizedException`` without the header, as they cannot
    know the scheme. Register it for the whole application (docs: scoping, "The 401 and its challenge")::

        Litestar(..., exception_handlers={NotAuthorizedException: bearer_challenge("tickets")})

    The answer is Litestar's own error response with ``WWW-Authenticate: Bearer realm="<realm>"``,
    and ``, error="invalid_token"`` when the request sent an ``Authorization`` header that was
    refused (RFC 6750, section 3); headers the exception carries are kept, and win.

    Args:
        realm: The protection space's name, sent as a quoted string.

    Raises:
        ConfigurationError: ``realm`` is empty or holds a quote, a backslash or a control character.
    """
    if not realm or any(character in '"\\' or not character.isprintable() for character in realm):
        msg = f"bearer_challenge needs a realm of printable characters without quotes or backslashes, not {realm!r}"
        raise ConfigurationError(msg)

    def challenge(request: Request[Any, Any, Any], exc: NotAuthorizedException) -> Response[Any]:
        header = f'Bearer realm="{realm}"'
        if "authorization" in request.headers:
            header += ', error="invalid_token"'
        headers = {"WWW-Authenticate": header, **(exc.headers or {})}
        return create_exception_response(request, NotAuthorizedException(exc.detail, headers=headers, extra=exc.extra))

    return challenge
