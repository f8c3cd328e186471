"""The Piccolo backend (extra ``piccolo``): statements compiled to Piccolo QueryStrings, run on its engines."""

from __future__ import annotations

try:
    import piccolo  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised only without the extra
    from litestar.exceptions import MissingDependencyException

    raise MissingDependencyException("piccolo", extra="piccolo") from error

from litestar_listing.backends.piccolo.backend import FoldingConnection, PiccoloBackend, prepare_engine
from litestar_listing.backends.piccolo.introspection import Tables

__all__ = ("FoldingConnection", "PiccoloBackend", "Tables", "prepare_engine")
