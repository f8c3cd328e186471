"""Enrichment: running a resource's ``enrich`` hook over a page, and the row policies the hook may apply.

(docs: enrichment; scoping, "Enrichment and computed values")
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

from litestar_listing.core.errors import ConfigurationError

if TYPE_CHECKING:
    from litestar_listing.backends.base import Page
    from litestar_listing.core.query import Policy
    from litestar_listing.plugin.resource import EnrichContext, Resource

__all__ = ("enrich_page", "request_policies")


async def enrich_page(resource: Resource, page: Page, context: EnrichContext) -> None:
    """Run ``resource.enrich`` once over the page's items, when it has any.

    Raises:
        ConfigurationError: The hook added, removed or replaced items (it may only change their fields).
    """
    if resource.enrich is None or not page.items:
        return
    before = [id(item) for item in page.items]
    result = resource.enrich(page.items, context)
    if inspect.isawaitable(result):
        await result
    if [id(item) for item in page.items] != before:
        msg = f"resource {resource.name!r}: enrich may add fields to items, not add, remove or replace items"
        raise ConfigurationError(msg)


def request_policies(context: EnrichContext) -> dict[str, Policy]:
    """The row policies of an enrichment's request for every model that has one, by model name.

    The enrichment applies ``policies.get(<model name>)`` to the statements it runs itself, with
    ``policy_condition`` of ``backends.sqlalchemy`` or ``backends.piccolo``, or ``policy_filter`` of
    ``backends.beanie`` (docs: scoping, "Enrichment and computed values"); ``context.query.policies``
    holds only the models the listed one reaches.

    Returns:
        Empty when the resource is not served by a ``ListingPlugin`` with policies, or has no request.
    """
    policies = context.policies
    if not policies or context.request is None:
        return {}
    return policies.for_request(context.request)
