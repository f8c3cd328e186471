"""Applications serving resources to tests that list without HTTP: ``list_resource(resource, None, app=...)``."""

from __future__ import annotations

import functools
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
