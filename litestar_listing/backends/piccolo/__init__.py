"""The Piccolo backend (extra ``piccolo``): statements compiled to Piccolo QueryStrings, run on its engines."""

from __future__ import annotations

try:
    import piccolo  # noqa: F401
except ImportError as error:  # pragma: no cover - run in a subprocess by tests/unit/test_optional_dependencies.py
    from litestar_listing.backends._extras import MissingExtraError

    raise MissingExtraError(error.name or "piccolo", extra="piccolo") from error

from litestar_listing.backends.piccolo.backend import PiccoloBackend
from litestar_listing.backends.piccolo.introspection import Tables
from litestar_listing.backends.piccolo.policies import policy_condition
from litestar_listing.backends.piccolo.sqlite import FoldingConnection, prepare_engine

__all__ = ("FoldingConnection", "PiccoloBackend", "Tables", "policy_condition", "prepare_engine")
