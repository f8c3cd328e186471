"""The SQLAlchemy backend (extra ``sqlalchemy``): async sessions through advanced-alchemy."""

from __future__ import annotations

try:
    import advanced_alchemy  # noqa: F401
    import sqlalchemy  # noqa: F401
except ImportError as error:  # pragma: no cover - run in a subprocess by tests/unit/test_optional_dependencies.py
    from litestar_listing.backends._extras import MissingExtraError

    raise MissingExtraError(error.name or "sqlalchemy", extra="sqlalchemy") from error

from litestar_listing.backends.sqlalchemy.backend import SQLAlchemyBackend
from litestar_listing.backends.sqlalchemy.introspection import model_graph
from litestar_listing.backends.sqlalchemy.policies import policy_condition
from litestar_listing.backends.sqlalchemy.sqlite import prepare_engine, read_engine

__all__ = ("SQLAlchemyBackend", "model_graph", "policy_condition", "prepare_engine", "read_engine")
