"""litestar-listing: one listing interface (paging, search, ordering, filtering) for Litestar.

Backends that need an optional extra live in their own subpackages, e.g.
``litestar_listing.backends.sqlalchemy.SQLAlchemyBackend``.
"""

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
