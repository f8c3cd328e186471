"""litestar-listing: one listing interface (paging, search, ordering, filtering) for Litestar.

The names of ``__all__`` load on first use (PEP 562): ``import litestar_listing.core`` or
``litestar_listing.backends.memory`` loads neither Litestar nor an ORM, and
``from litestar_listing import ListingPlugin`` loads the plugin (docs: design, "Importing the
package"). Backends that need an optional extra live in their own subpackages, e.g.
``litestar_listing.backends.sqlalchemy.SQLAlchemyBackend``.
"""

import importlib
import typing

if typing.TYPE_CHECKING:
    from litestar_listing.backends.base import Capabilities, Computed, ListContext, ListingBackend, Page, TotalMode
    from litestar_listing.backends.memory import MemoryBackend
    from litestar_listing.core.errors import (
        ConfigurationError,
        InvalidQueryError,
        ListingError,
        ParameterError,
        UnavailableError,
        UnsupportedQueryError,
    )
    from litestar_listing.core.operators import OPERATORS, Operator
    from litestar_listing.core.parsing import Limits, QueryParser
    from litestar_listing.core.query import (
        Combine,
        FieldPath,
        Filter,
        FilterSyntax,
        ListQuery,
        OrderTerm,
        Policy,
        RawFilter,
        Search,
        Window,
    )
    from litestar_listing.core.schema import ALL_FIELDS, FieldMap, ValueType
    from litestar_listing.plugin import (
        EnrichContext,
        ListingPlugin,
        ListResult,
        Pagination,
        Resource,
        RouteOptions,
        RowPolicy,
        ScopeRule,
        UserSource,
        list_resource,
        listing_operation,
        listing_route,
        owner_scope,
        parse_query,
        provide_page,
        provide_query,
        request_policies,
        tenant_scope,
    )

__all__ = (
    "ALL_FIELDS",
    "OPERATORS",
    "Capabilities",
    "Combine",
    "Computed",
    "ConfigurationError",
    "EnrichContext",
    "FieldMap",
    "FieldPath",
    "Filter",
    "FilterSyntax",
    "InvalidQueryError",
    "Limits",
    "ListContext",
    "ListQuery",
    "ListResult",
    "ListingBackend",
    "ListingError",
    "ListingPlugin",
    "MemoryBackend",
    "Operator",
    "OrderTerm",
    "Page",
    "Pagination",
    "ParameterError",
    "Policy",
    "QueryParser",
    "RawFilter",
    "Resource",
    "RouteOptions",
    "RowPolicy",
    "ScopeRule",
    "Search",
    "TotalMode",
    "UnavailableError",
    "UnsupportedQueryError",
    "UserSource",
    "ValueType",
    "Window",
    "list_resource",
    "listing_operation",
    "listing_route",
    "owner_scope",
    "parse_query",
    "provide_page",
    "provide_query",
    "request_policies",
    "tenant_scope",
)

_LOADED_FROM: dict[str, tuple[str, ...]] = {
    "litestar_listing.backends.base": (
        "Capabilities",
        "Computed",
        "ListContext",
        "ListingBackend",
        "Page",
        "TotalMode",
    ),
    "litestar_listing.backends.memory": ("MemoryBackend",),
    "litestar_listing.core.errors": (
        "ConfigurationError",
        "InvalidQueryError",
        "ListingError",
        "ParameterError",
        "UnavailableError",
        "UnsupportedQueryError",
    ),
    "litestar_listing.core.operators": ("OPERATORS", "Operator"),
    "litestar_listing.core.parsing": ("Limits", "QueryParser"),
    "litestar_listing.core.query": (
        "Combine",
        "FieldPath",
        "Filter",
        "FilterSyntax",
        "ListQuery",
        "OrderTerm",
        "Policy",
        "RawFilter",
        "Search",
        "Window",
    ),
    "litestar_listing.core.schema": ("ALL_FIELDS", "FieldMap", "ValueType"),
    "litestar_listing.plugin": (
        "EnrichContext",
        "ListResult",
        "ListingPlugin",
        "Pagination",
        "Resource",
        "RouteOptions",
        "RowPolicy",
        "ScopeRule",
        "UserSource",
        "list_resource",
        "listing_operation",
        "listing_route",
        "owner_scope",
        "parse_query",
        "provide_page",
        "provide_query",
        "request_policies",
        "tenant_scope",
    ),
}
"""The module each name of ``__all__`` is loaded from, as the ``TYPE_CHECKING`` imports above say."""

_MODULE_OF = {name: module for module, names in _LOADED_FROM.items() for name in names}

_SUBPACKAGES = frozenset({"backends", "core", "plugin"})
"""Subpackages reachable as attributes without importing them first, as when the package imported them all."""


def __getattr__(name: str) -> object:
    """Load ``name`` of ``__all__`` (or a subpackage) from its module on first use, then keep it here.

    Raises:
        AttributeError: ``name`` is not a public name of the package.
    """
    module = _MODULE_OF.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def __dir__() -> list[str]:
    """The package's names: those loaded so far and every name of ``__all__``."""
    return sorted({*globals(), *__all__})
