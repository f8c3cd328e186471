"""The Litestar glue: resources, the plugin, the list action, scope rules, row policies and the response envelope."""

from litestar_listing.plugin.action import list_resource, parse_query
from litestar_listing.plugin.budget import CostBudget, client_of
from litestar_listing.plugin.enrichment import request_policies
from litestar_listing.plugin.envelope import ListResult, Pagination
from litestar_listing.plugin.facets import FacetResult, count_facets
from litestar_listing.plugin.plugin import ListingPlugin
from litestar_listing.plugin.policies import RowPolicy
from litestar_listing.plugin.resource import EnrichContext, Resource
from litestar_listing.plugin.route_options import RouteOptions
from litestar_listing.plugin.routes import (
    ListingProvide,
    ListingRouteHandler,
    listing_operation,
    listing_route,
    provide_page,
    provide_query,
)
from litestar_listing.plugin.scoping import ScopeRule, UserSource, bearer_challenge, owner_scope, tenant_scope

__all__ = (
    "CostBudget",
    "EnrichContext",
    "FacetResult",
    "ListResult",
    "ListingPlugin",
    "ListingProvide",
    "ListingRouteHandler",
    "Pagination",
    "Resource",
    "RouteOptions",
    "RowPolicy",
    "ScopeRule",
    "UserSource",
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
