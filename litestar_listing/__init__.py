"""litestar-listing: one listing interface (paging, search, ordering, filtering) for Litestar.

The names of ``__all__`` load on first use (PEP 562): ``import litestar_listing.core`` or
``litestar_listing.backends.memory`` loads neither Litestar nor an ORM, and
``from litestar_listing import ListingPlugin`` loads the plugin (docs: design, "Importing the
package"). Backends that need an optional extra live in their own subpackages, e.g.
``litestar_listing.backends.sqlalchemy.SQLAlchemyBackend``.
"""

import functools
import importlib
import typing

if typing.TYPE_CHECKING:
    from litestar_listing.backends.base import Capabilities, Computed, ListContext, ListingBackend, Page, TotalMode
    from litestar_listing.backends.memory import MemoryBackend
    from litestar_listing.core.cost import Cost, CostModel
    from litestar_listing.core.errors import (
        ConfigurationError,
        InvalidQueryError,
        ListingError,
        ParameterError,
        RateLimitedError,
        UnavailableError,
        UnsupportedQueryError,
    )
    from litestar_listing.core.facets import FacetMode, FacetPage, FacetQuery
    from litestar_listing.core.operators import OPERATORS, Operator
    from litestar_listing.core.parsing import Limits, QueryParser
    from litestar_listing.core.parts import PARTS, Part
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
        CostBudget,
        EnrichContext,
        FacetResult,
        ListingPlugin,
        ListResult,
        Pagination,
        Resource,
        RouteOptions,
        RowPolicy,
        ScopeRule,
        UserSource,
        bearer_challenge,
        client_of,
        count_facets,
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
    "PARTS",
    "Capabilities",
    "Combine",
    "Computed",
    "ConfigurationError",
    "Cost",
    "CostBudget",
    "CostModel",
    "EnrichContext",
    "FacetMode",
    "FacetPage",
    "FacetQuery",
    "FacetResult",
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
    "Part",
    "Policy",
    "QueryParser",
    "RateLimitedError",
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
    "bearer_challenge",
    "client_of",
    "count_facets",
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

_SUBPACKAGES = frozenset({"backends", "core", "plugin"})
"""Subpackages reachable as attributes without importing them first, as when the package imported them all."""


@functools.cache
def _loaded_from() -> dict[str, str]:
    """The module each name of ``__all__`` is loaded from: the ``TYPE_CHECKING`` imports above, read once.

    Those imports are what type checkers and IDEs read; reading the same lines here keeps one list of
    where each name lives.
    """
    import ast  # only for the first lazy name: the package root stays light
    import pathlib

    tree = ast.parse(pathlib.Path(__file__).read_text(encoding="utf-8"))
    return {
        alias.name: str(statement.module)
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "typing.TYPE_CHECKING"
        for statement in node.body
        if isinstance(statement, ast.ImportFrom)
        for alias in statement.names
    }


def __getattr__(name: str) -> object:
    """Load ``name`` of ``__all__`` (or a subpackage) from its module on first use, then keep it here.

    Raises:
        AttributeError: ``name`` is not a public name of the package.
    """
    module = _loaded_from().get(name) if name in __all__ else None
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
