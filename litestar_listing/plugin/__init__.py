"""The Litestar glue: resources, the plugin, forced-filter presets and the response envelope."""

from litestar_listing.plugin.envelope import Pagination
from litestar_listing.plugin.forced import ForcedFilter, owner_scope, tenant_scope
from litestar_listing.plugin.plugin import ListingPlugin
from litestar_listing.plugin.resource import EnrichContext, Resource

__all__ = (
    "EnrichContext",
    "ForcedFilter",
    "ListingPlugin",
    "Pagination",
    "Resource",
    "owner_scope",
    "tenant_scope",
)
