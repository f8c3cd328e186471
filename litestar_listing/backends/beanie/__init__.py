"""The Beanie backend (extra ``beanie``): MongoDB documents listed through aggregation pipelines."""

from __future__ import annotations

try:
    import beanie  # noqa: F401
except ImportError as error:  # pragma: no cover - run in a subprocess by tests/unit/test_optional_dependencies.py
    from litestar_listing.backends._extras import MissingExtraError

    raise MissingExtraError(error.name or "beanie", extra="beanie") from error

from litestar_listing.backends.beanie.backend import BeanieBackend, policy_filter
from litestar_listing.backends.beanie.compiler import MINIMUM_MONGODB, link_id
from litestar_listing.backends.beanie.introspection import Documents, object_id

__all__ = ("MINIMUM_MONGODB", "BeanieBackend", "Documents", "link_id", "object_id", "policy_filter")
