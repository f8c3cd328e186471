"""Scoping (spec §4.4.10): the rules a resource's forced filters come from, per request.

A ``ScopeRule`` reads the request (usually ``request.user``) and returns field -> value equalities;
``Resource.forced_filters`` turns them into the forced filters the engine ANDs outside the client's
filters (DESIGN.md, "Forced filters"). ``tenant_scope`` and ``owner_scope`` are the presets.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException

__all__ = ("ScopeRule", "owner_scope", "tenant_scope")


@dataclass(frozen=True, slots=True)
class ScopeRule:
    """A scope rule: where ``Resource(scopes=...)`` gets the forced filters of each request.

    Attributes:
        fields: The field paths it may constrain (checked against the model at start-up).
        build: ``connection -> {path: value}``; a list/tuple value means membership. Returning an
            empty mapping applies nothing (for example for a platform administrator). It may raise
            ``NotAuthorizedException``.
    """

    fields: tuple[str, ...]
    build: Callable[[ASGIConnection[Any, Any, Any, Any]], Mapping[str, object]]


def _user(connection: ASGIConnection[Any, Any, Any, Any]) -> Any:
    # request.user raises when no authentication middleware is installed; the scope does not.
    return connection.scope.get("user")


def tenant_scope(
    field: str,
    *,
    company_attribute: str = "company_id",
    admin_attribute: str = "is_platform_admin",
    anonymous: Literal["deny", "unscoped"] = "deny",
) -> ScopeRule:
    """Restrict the list to the authenticated user's company unless the user is a platform admin.

    Args:
        field: The listed model's company path (``"company_id"``, ``"carrier"``).
        company_attribute: The attribute of ``request.user`` holding the company identifier.
        admin_attribute: The attribute of ``request.user`` that is true for platform administrators.
        anonymous: ``"deny"`` answers 401 without a user; ``"unscoped"`` lists everything (public data).

    Returns:
        The forced filter (spec §4.4.10, "Tenant scoping").
    """

    def build(connection: ASGIConnection[Any, Any, Any, Any]) -> Mapping[str, object]:
        user = _user(connection)
        if user is None:
            if anonymous == "unscoped":
                return {}
            raise NotAuthorizedException("authentication is required to list this resource")
        if getattr(user, admin_attribute, False):
            return {}
        return {field: getattr(user, company_attribute)}

    return ScopeRule((field,), build)


def owner_scope(field: str, *, user_attribute: str = "id") -> ScopeRule:
    """Restrict the list to records owned by the authenticated user, through a ``<field>_id`` alias.

    Args:
        field: The owner path on the listed model, e.g. ``"user_id"``.
        user_attribute: The attribute of ``request.user`` holding its identifier.

    Returns:
        The forced filter (spec §4.4.10, per-user scoping); a request without a user gets a 401.
    """

    def build(connection: ASGIConnection[Any, Any, Any, Any]) -> Mapping[str, object]:
        user = _user(connection)
        if user is None:
            raise NotAuthorizedException("authentication is required to list this resource")
        return {field: getattr(user, user_attribute)}

    return ScopeRule((field,), build)
